"""Where the book's models stand against ALBERT's (book/scale.md): ``values`` gives the
page's keys, ``write_scale_parts`` its tables and figures."""
from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .. import paper
from ..engine.store import config_hash, read_json
from ..model.config import preset
from ..model.params import closed_form, useful_flops
from ..profiles import PROFILES, ResolvedProfile, resolve
from ..studies import conditions as C
from ..studies import confirm_analysis as D
from ..studies import count_rungs
from ..studies import ladder as L
from ..studies import long_pilot as P
from ..studies.confirm_analysis import NotComplete
from ..studies.decisions import signed
from .figures import FIGURE_WIDTH_IN, FONT_PT, WIDTH_IN
from .ledger import PAPER_MASKED, training_compute
from .template import fill, pipe, write_parts
from .text import times, tokens_per_run

PILOT = "64x"  # the long pilot's column
RUNG_NAMES = {"unigram": "unigram rung", "left bigram": "left-bigram rung",
              "two-sided": "two-sided count rung"}


def scale_numbers(profile: ResolvedProfile) -> dict:
    """Parameters, tokens and training FLOPs of a base run and of the paper's ALBERT-base."""
    base = C.base(profile)
    theirs = preset("albert-base")
    steps = 125_000
    return {"params": float(sum(closed_form(base.model).values())),
            "paper_params": float(sum(closed_form(theirs).values())),
            "tokens": float(tokens_per_run(base)),
            "paper_tokens": float(steps * paper.PAPER_BATCH * paper.PAPER_SEQ),
            "flops": float(training_compute(profile)),
            "paper_flops": float(useful_flops(theirs, paper.PAPER_BATCH, paper.PAPER_SEQ,
                                              PAPER_MASKED) * steps),
            "steps": int(base.max_steps), "paper_steps": steps}


def _count(x: float) -> str:
    """'5.5 million', '262 billion': a count in words a reader can compare."""
    for factor, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"),
                         (1e3, "thousand")):
        if x >= factor:
            return f"{x / factor:.3g} {word}"
    return f"{x:.3g}"


def two_sided_sentence(yardsticks: dict | None) -> str:
    """``scale-two-sided.md`` filled; "" where the rung is not stored."""
    if not yardsticks:
        return ""
    r = yardsticks["rung"]
    return fill("scale-two-sided.md", {"loss": f"{r['two_sided_loss_at_mask']:.3f}",
                                       "accuracy": f"{100 * r['two_sided_at_mask']:.1f}%"})


def rung_levels() -> dict:
    """{name: nats} of the three count rungs stored for the common held-out set."""
    return count_rungs.levels(count_rungs.stored_or_fail(resolve(D.PILOT_PROFILE).evaluation))


def standing(frames: dict | None = None, pilot: pd.DataFrame | None = None) -> pd.DataFrame:
    """Each arm's mean held-out cross-entropy at [MASK] per budget (NaN where not trained)."""
    frames = L.rung_frames() if frames is None else frames
    out = pd.DataFrame({rung: frame.groupby("condition")[D.CE].mean()
                        for rung, frame in frames.items()}).reindex(L.ARMS)
    runs = (pd.Series(dtype=float) if pilot is None
            else pilot.set_index("condition")[P.CE])
    out[PILOT] = runs.reindex(out.index).astype(float)
    out.index.name = "arm"
    return out


def below(table: pd.DataFrame, level: float) -> dict:
    """{budget: 'k of n'}: how many of a budget's arms score below ``level``."""
    return {budget: f"{int((table[budget].dropna() < level).sum())} of "
                    f"{len(table[budget].dropna())}" for budget in table.columns}


def standing_table(table: pd.DataFrame, levels: dict) -> str:
    """Markdown: each arm's cross-entropy at each budget, the count rungs above them."""
    heads = [f"{b} (pilot, one seed)" if b == PILOT else b for b in table.columns]
    rows = [[f"*{RUNG_NAMES[n]}*"] + [f"*{level:.3f}*"] * len(heads)
            for n, level in levels.items()]
    rows += [[arm] + ["–" if not np.isfinite(v) else f"{v:.3f}" for v in row]
             for arm, row in table.iterrows()]
    return pipe(["model or count rung"] + heads, rows) + "\n"


def standing_figure(table: pd.DataFrame, levels: dict):
    """Each arm's cross-entropy against the budget (log scale), the rungs as lines."""
    steps = {**L.RUNGS, PILOT: P.STEPS}
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.6), dpi=100)
    for k, (arm, row) in enumerate(table.iterrows()):
        shown = row.dropna()
        # BERT-style black, as in the book's other figures; red (C3) is the rungs' alone
        colour = "black" if str(arm).startswith("BERT-style") else "C9" if k == 3 else f"C{k}"
        ax.plot([steps[b] for b in shown.index], shown.to_numpy(),
                "-" if len(shown) > 3 else ":", marker="o", ms=3, lw=1.1, color=colour,
                label=textwrap.fill(str(arm), 24))
    for (name, level), ls in zip(levels.items(), (":", "--", "-.")):
        ax.axhline(level, color="tab:red", lw=0.9, ls=ls)
        ax.text(steps[PILOT], level, RUNG_NAMES[name], fontsize=FONT_PT,
                color="tab:red", va="bottom", ha="right")
    ax.set_xscale("log")
    ax.set_xticks(list(steps.values()), [f"{b}\n{s:,}" for b, s in steps.items()],
                  fontsize=FONT_PT)
    ax.minorticks_off()
    ax.set_xlabel("budget and training steps (log scale)", fontsize=FONT_PT)
    ax.set_ylabel("held-out cross-entropy at [MASK] (nats)", fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    ax.legend(fontsize=FONT_PT, frameon=False, loc="center left", bbox_to_anchor=(1.02, 0.5))
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()  # the legend beside the panel, next to the lines it names
    return fig


def downstream_values() -> dict:
    """The confirmatory models' sentiment probes against the controls ({} without them)."""
    frame = D.confirmatory_frame()
    examples = resolve(D.PILOT_PROFILE).evaluation.task_examples
    key = config_hash({"name": "downstream-sentiment", "arguments": ["sentiment",
                                                                     str(examples)]})
    # the controls' key is the task and its examples alone: any profile's copy is the same
    found = [read_json(resolve(p).results / "baselines" / f"downstream-sentiment-{key}.json")
             for p in PROFILES]
    s = next((f["result"] for f in found if f is not None), None)
    if s is None or "sentiment_probe_accuracy" not in frame:
        return {}
    probe = frame.groupby("condition")["sentiment_probe_accuracy"].mean().dropna()
    low, high = f"{100 * probe.min():.1f}%", f"{100 * probe.max():.1f}%"
    return {"scale_probe_range": low if low == high else f"{low} to {high}",
            "scale_bag_of_words": f"{100 * s['bag_of_words_accuracy']:.1f}%",
            "scale_majority": f"{100 * s['majority_accuracy']:.1f}%",
            "scale_sentiment_examples": f"{s['test_examples']:,}"}


def pilot_runs(store=None) -> pd.DataFrame | None:
    """``long_pilot.frame``, or None before both arms are stored with their evaluations."""
    try:
        return P.frame(store)
    except NotComplete:
        return None


def pilot_rungs() -> dict:
    """The count rungs on the pilot curve's own held-out sequences."""
    return count_rungs.levels_on(resolve(D.PILOT_PROFILE).evaluation,
                                 P.CURVE_EXAMPLES)


def millions(tokens: float) -> str:
    """'88.5M', '5.53M', '354M': three significant digits, as the introduction rounds."""
    return f"{float(f'{tokens / 1e6:.3g}'):g}M"


def tokens_at(steps: int) -> int:
    """The pilot's tokens after ``steps`` (steps x batch x length, as every page counts)."""
    config = P.configs()[P.ARMS[0]]
    return tokens_per_run(config) // config.max_steps * int(steps)


def counted_curve(runs: pd.DataFrame) -> pd.DataFrame:
    """``long_pilot.curves`` with tokens counted by ``tokens_at``."""
    curve = P.curves(runs)
    return curve.assign(tokens=[tokens_at(step) for step in curve["step"]])


def crossings_table(curve: pd.DataFrame, rungs: dict) -> str:
    """Markdown: per arm, the tokens at which its curve first scores below each rung."""
    cross = P.crossings(curve, rungs)
    return pipe(["arm"] + [f"the {RUNG_NAMES[n]} ({rungs[n]:.3f} nats)" for n in rungs],
                [[arm] + [f"{millions(t)} tokens" if np.isfinite(t) else "never"
                          for t in part.set_index("rung")["tokens"].reindex(list(rungs))]
                 for arm, part in cross.groupby("arm", sort=False)]) + "\n"


def drops_table(drops: pd.DataFrame) -> str:
    """Markdown: each sudden drop (``long_pilot.sudden_drops``), or that there is none."""
    if not len(drops):
        return "No sudden drop appears.\n"
    return pipe(["arm", "by", "fall below the earlier low", "during warm-up"],
                [[r["arm"], f"{millions(r['tokens'])} tokens", f"{r['fall']:.3f} nats",
                  "yes" if r["warm-up"] else "no"] for _, r in drops.iterrows()]) + "\n"


def costs_table(curve: pd.DataFrame) -> str:
    """Markdown: all shared minus BERT-style at each budget's steps of the 64x run."""
    at = P.cost_along(curve).set_index("step")
    return pipe(["after the steps of", "steps", "tokens", "cost (nats)"],
                [[name, f"{step:,}", millions(at.loc[step, "tokens"]),
                  f"{at.loc[step, 'cost']:+.3f}"]
                 for name, step in P.MARKS.items() if step in at.index]) + "\n"


def paper_cost() -> dict:
    """The paper's Table 4 figure for the pilot's comparison (E = 768) and its scale."""
    key = (768, "all"), (768, "none")
    shared, bert = (paper.TABLE4_AVG[k] for k in key)
    small, large = (paper.TABLE4_PARAMS[k] for k in key)
    scale = paper.EXPERIMENT_SCALE["asymmetry"]
    steps = scale.models[0][2]
    ours = tokens_per_run(P.configs()[P.ARMS[0]])
    return {"pilot_paper_shared": f"{shared:.1f}", "pilot_paper_bert": f"{bert:.1f}",
            "pilot_paper_cost": f"{bert - shared:.1f}", "pilot_paper_steps": f"{steps:,}",
            "pilot_paper_params": f"{small}M and {large}M",
            "pilot_paper_tokens": f"{scale.tokens(steps) / 1e9:,.0f}B",
            "pilot_paper_times": times(scale.tokens(steps) / ours),
            "pilot_tokens_counted": millions(ours)}


def pilot_values(runs: pd.DataFrame | None) -> dict:
    """The long pilot's keys: its design, and its results once both arms are stored."""
    out = {"pilot_steps": f"{P.STEPS:,}", "pilot_multiple": str(P.MULTIPLE),
           "pilot_curve_every": f"{P.CURVE_EVERY:,}",
           "pilot_curve_sequences": f"{P.CURVE_EXAMPLES:,}",
           "pilot_drop_nats": f"{P.DROP_NATS}", "pilot_drop_ratio": f"{P.DROP_RATIO:g}",
           "pilot_drop_window": str(P.DROP_WINDOW),
           "pilot_blind_steps": f"{(P.DROP_WINDOW + 1) * P.CURVE_EVERY:,}",
           "pilot_warmup_steps": f"{P.WARMUP_STEPS:,}"}
    if runs is None:
        return out
    ce = runs.set_index("condition")[P.CE].astype(float)
    shared, bert = P.ARMS
    curve = counted_curve(runs)
    cost = P.cost_along(curve)
    peak = cost.loc[cost["cost"].idxmax()]
    drops = P.sudden_drops(curve)
    first = drops.groupby("arm")["step"].min() if len(drops) else pd.Series(dtype=float)
    between = len(first) == 2 and first.min() <= peak["step"] <= first.max()
    out.update({
        "pilot_tokens": millions(tokens_at(P.STEPS)),
        "pilot_ce_shared": f"{ce[shared]:.3f}", "pilot_ce_bert": f"{ce[bert]:.3f}",
        "pilot_sharing_64x": signed(ce[shared] - ce[bert], 3),
        "pilot_peak_cost": f"{peak['cost']:+.3f}", "pilot_peak_steps": f"{peak['step']:,.0f}",
        "pilot_peak_where": ("between the two arms' sudden drops" if between else
                             "not between the two arms' sudden drops"), **paper_cost()})
    return out


def pilot_figure(curve: pd.DataFrame, rungs: dict):
    """Both arms' held-out curves against tokens above, the sharing cost below."""
    cost = P.cost_along(curve)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(FIGURE_WIDTH_IN, 6.2), dpi=100,
                                      sharex=True, height_ratios=(3, 2))
    for (arm, part), colour in zip(curve.groupby("arm", sort=False), ("tab:blue", "black")):
        top.plot(part["tokens"], part["ce"], color=colour, lw=1.4, label=arm)
    for (name, level), style in zip(rungs.items(), (":", "--", "-.")):
        top.axhline(level, color="tab:red", lw=0.9, ls=style, label=f"the {RUNG_NAMES[name]}")
    top.set_ylabel("held-out nats at [MASK]", fontsize=FONT_PT)
    top.legend(fontsize=FONT_PT, frameon=False, loc="upper right")
    bottom.plot(cost["tokens"], cost["cost"], color="black", lw=1.4)
    bottom.axhline(0, color="0.4", lw=0.8)
    tokens = curve.drop_duplicates("step").set_index("step")["tokens"]
    for name, step in P.MARKS.items():
        if step in tokens.index:
            for ax in (top, bottom):
                ax.axvline(tokens[step], color="0.75", lw=0.8, zorder=0)
            # the budget's name above the top panel, steps on an axis of tokens
            top.text(tokens[step], 1.0, f"{name} steps", fontsize=FONT_PT,
                     transform=top.get_xaxis_transform(), ha="center",
                     va="bottom", color="0.35")
    bottom.set_ylabel("all shared minus\nBERT-style (nats)", fontsize=FONT_PT)
    bottom.set_xlabel("tokens, steps x batch x length (log scale)", fontsize=FONT_PT)
    bottom.set_xscale("log")
    for ax in (top, bottom):
        ax.tick_params(labelsize=FONT_PT)
        ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


def values(frames: dict | None, pilot: pd.DataFrame | None) -> dict:
    """The scale page's keys from the ladder's frames and the long pilot's runs."""
    out = pilot_values(pilot)
    if frames is None:
        return out
    try:
        stored = count_rungs.stored_or_fail(resolve(D.PILOT_PROFILE).evaluation)
    except FileNotFoundError:
        return out
    levels, table = count_rungs.levels(stored), standing(frames, pilot)
    for name, level in levels.items():
        key = name.replace(" ", "_").replace("-", "_")
        out[f"scale_rung_{key}"] = f"{level:.3f}"
        out.update({f"scale_below_{key}_{budget}": text
                    for budget, text in below(table, level).items()})
    best = table.idxmin()
    out.update({f"scale_best_{b}": f"{best[b]}, {table.loc[best[b], b]:.3f}"
                for b in table.columns})
    n = scale_numbers(resolve(D.PILOT_PROFILE))
    ratio = n["paper_flops"] / (n["flops"] * L.RUNGS["16x"] / L.RUNGS["4x"])
    out.update({"scale_16x_less_compute": times(ratio),
                "scale_params": f"{n['params'] / 1e6:.2f}M",
                "scale_paper_params": f"{n['paper_params'] / 1e6:.0f}M"})
    try:
        out.update(downstream_values())
    except NotComplete:
        pass
    return out


def write_scale_parts(generated: Path, store=None, frames: dict | None = None) -> list:
    """The scale page's tables and figures into ``generated`` (empty before stored)."""
    runs = pilot_runs()
    parts = {"scale-standing.md": "", "pilot-crossings.md": "", "pilot-drops.md": "",
             "pilot-costs.md": "", "scale-standing.png": None, "pilot.png": None}
    try:
        frames = L.rung_frames(store) if frames is None else frames
        table, levels = standing(frames, runs), rung_levels()
        parts.update({"scale-standing.md": standing_table(table, levels),
                      "scale-standing.png": standing_figure(table, levels)})
    except (FileNotFoundError, NotComplete):
        pass
    if runs is not None:
        curve, rungs = counted_curve(runs), pilot_rungs()
        parts.update({"pilot-crossings.md": crossings_table(curve, rungs),
                      "pilot-drops.md": drops_table(P.sudden_drops(curve)),
                      "pilot-costs.md": costs_table(curve),
                      "pilot.png": pilot_figure(curve, rungs)})
    return write_parts(generated, parts, dpi=100)

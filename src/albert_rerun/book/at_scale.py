"""Where the book's models stand, and what that lets a verdict say about ALBERT
(book/scale.md): numbers, tables and a figure from the stored results; the page's
sentences live in the page.

- ``standing``: every arm's held-out cross-entropy at [MASK] at each budget (1x, 4x,
  16x: the compute ladder; 64x: the long pilot's two arms, one seed each) against the
  three count rungs on the same targets (``count_rungs.levels``);
- ``values``: the page's keys (``budgets.values`` hands them to ``book.values``);
- ``standing_table``, ``standing_figure``, ``moving_table``: its tables and figure,
  written by ``write_scale_parts``; ``two_sided_sentence``: the two-sided rung for the
  gate's description (how_to_read).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .text import times
from ..studies.decisions import interval_text, signed
from .headline_figures import FIGURE_WIDTH_IN, FONT_PT

PILOT = "64x"  # the long pilot's column
RUNG_NAMES = {"unigram": "unigram rung", "left bigram": "left-bigram rung",
              "two-sided": "two-sided count rung"}


def two_sided_sentence(yardsticks: dict | None) -> str:
    """The two-sided count rung for the gate's description of the rungs ("" where it is
    not stored for the held-out set)."""
    if not yardsticks:
        return ""
    r = yardsticks["rung"]
    return (f"A third rung, the two-sided count rung, fills each gap from both of its "
            f"neighbours, as a masked model can: {r['two_sided_loss_at_mask']:.3f} nats "
            f"and {100 * r['two_sided_at_mask']:.1f}% accuracy at [MASK]. It is a reading "
            f"of where the models stand ({{doc}}`scale`), not a gate.")


def standing(store=None) -> pd.DataFrame:
    """One row per arm, one column per budget: the mean over seeds of the held-out
    cross-entropy at [MASK] (nats), NaN where an arm did not train that long. 1x and
    16x from the ladder's store, 4x from the confirmatory store, 64x the long pilot's
    (once both arms are stored)."""
    from ..studies import confirm_design as D
    from ..studies import ladder as L
    from ..studies import long_pilot
    from ..studies.confirm_design import NotComplete
    frames = L.rung_frames(store)
    out = pd.DataFrame({rung: frame.groupby("condition")[D.CE].mean()
                        for rung, frame in frames.items()}).reindex(L.ARMS)
    try:
        pilot = long_pilot.frame().set_index("condition")[long_pilot.CE]
    except NotComplete:
        pilot = pd.Series(dtype=float)
    out[PILOT] = pilot.reindex(out.index).astype(float)
    out.index.name = "arm"
    return out


def count_rungs_record() -> dict:
    """The stored count rungs of the whole held-out set every model is scored on (the
    ``cpu`` profile's evaluation, the ladder's and the confirmatory's)."""
    from ..profiles import resolve
    from ..studies import confirm_design as D
    from ..studies import count_rungs
    stored = count_rungs.stored(resolve(D.PILOT_PROFILE).evaluation)
    if not stored:
        raise FileNotFoundError("no count rungs are stored (data/results/yardsticks/)")
    return stored


def rung_levels() -> dict:
    """{name: nats} of the three count rungs (``count_rungs_record``)."""
    from ..studies import count_rungs
    return count_rungs.levels(count_rungs_record())


def below(table: pd.DataFrame, level: float) -> dict:
    """{budget: 'k of n'}: how many of a budget's arms score below ``level``."""
    out = {}
    for budget in table.columns:
        values = table[budget].dropna()
        out[budget] = f"{int((values < level).sum())} of {len(values)}"
    return out


def standing_table(table: pd.DataFrame, levels: dict) -> str:
    """Markdown: each arm's cross-entropy at each budget, the count rungs above them."""
    heads = [f"{b} (pilot, one seed)" if b == PILOT else b for b in table.columns]
    lines = ["| model or count rung | " + " | ".join(heads) + " |",
             "|---|" + "---|" * len(heads)]
    for name, level in levels.items():
        lines.append(f"| *{RUNG_NAMES[name]}* | " + " | ".join(
            f"*{level:.3f}*" for _ in heads) + " |")
    for arm, row in table.iterrows():
        lines.append(f"| {arm} | " + " | ".join(
            "–" if not np.isfinite(v) else f"{v:.3f}" for v in row) + " |")
    return "\n".join(lines) + "\n"


def standing_figure(table: pd.DataFrame, levels: dict):
    """Each arm's cross-entropy against the budget (log scale), the rungs as lines."""
    import matplotlib.pyplot as plt

    from ..studies import ladder as L
    from ..studies import long_pilot
    steps = {**L.RUNGS, PILOT: long_pilot.STEPS}
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 6.0), dpi=100)
    for arm, row in table.iterrows():
        shown = row.dropna()
        style = "-" if len(shown) > 3 else ":"
        ax.plot([steps[b] for b in shown.index], shown.to_numpy(), style, marker="o",
                ms=3, lw=1.1, label=arm)
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
    fig.legend(fontsize=FONT_PT, frameon=False, loc="lower center", ncol=1)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    fig.tight_layout(rect=(0, 0.3, 1, 1))  # the legend's room below the panel
    return fig


# -- the 4x differences along training (exploratory) ---------------------------------------

def seed_curves(frame: pd.DataFrame, spec) -> pd.DataFrame:
    """A cross-entropy decision's paired difference along training, one row per seed and
    one column per share of the schedule (matched as ``confirm_analysis.
    curve_differences`` matches them, whose means these are)."""
    from ..studies.confirm_analysis import schedule_points
    a, b = schedule_points(frame, spec.a), schedule_points(frame, spec.b)
    keys = sorted(set(a) & set(b))
    series = pd.Series({k: a[k][1] - b[k][1] for k in keys})
    return series.unstack() if len(series) else pd.DataFrame()


def moving(frame: pd.DataFrame, margins: dict) -> pd.DataFrame:
    """Per registered cross-entropy decision of the confirmatory runs (4x), its paired
    difference A minus B at the first curve point and at the end, and its change over
    the last quarter of training with a 95% t-interval over seeds; "moving": whether
    that interval excludes 0. Each turned so that positive is the paper's direction."""
    from ..stats.inference import mean_interval
    from ..studies import confirm_design as D
    from .ladder_trend import PAPER_WORDS
    rows = []
    for spec in [s for s in D.PRIMARY if s.kind == "ce"]:
        curves = spec.paper_sign * seed_curves(frame, spec)
        first, last = min(curves.columns), max(curves.columns)
        quarter = min(curves.columns, key=lambda s: abs(s - 0.75))
        q = mean_interval((curves[last] - curves[quarter]).dropna().to_numpy())
        rows.append({"decision": PAPER_WORDS[spec.key].removeprefix("up means "),
                     "margin": margins[spec.margin],
                     "first": curves[first].mean(), "end": curves[last].mean(),
                     "change": q.mean, "low": q.low, "high": q.high,
                     "moving": bool(q.low > 0 or q.high < 0)})
    return pd.DataFrame(rows)


def moving_table(table: pd.DataFrame) -> str:
    lines = ["| difference (positive: the paper's way) | margin | at 1/8 of training | at the end | last "
             "quarter, 95% interval |", "|---|---|---|---|---|"]
    for _, r in table.iterrows():
        lines.append(f"| {r['decision']} | ±{r['margin']:.3f} | {signed(r['first'], 3)} | "
                     f"{signed(r['end'], 3)} | "
                     f"{interval_text(r['change'], r['low'], r['high'], 'nats')} |")
    return "\n".join(lines) + "\n"


def curve_subset() -> dict:
    """How many held-out sequences the confirmatory runs' curves score
    (``scale_curve_sequences``) of the held-out set's (``scale_heldout_sequences``): the
    curves' "at the end" differs from a headline, which scores them all."""
    from ..studies import confirm_analysis as A
    from ..studies.ladder_curves import curve_sequences
    frame = A.confirmatory_frame()
    whole = {int(n) for n in frame["mlm_sequences"]}
    if len(whole) != 1:
        raise ValueError(f"the runs score different held-out sets: {whole}")
    return {"scale_curve_sequences": f"{curve_sequences(frame):,}",
            "scale_heldout_sequences": f"{whole.pop():,}"}


def confirmatory_moving() -> pd.DataFrame:
    from ..studies import confirm_analysis as A
    from ..studies import confirm_design as D
    return moving(A.confirmatory_frame(), D.margin_values(A.rungs()))


# -- downstream: frozen features against a bag of words ------------------------------------

def stored_sentiment(examples: int) -> dict | None:
    """The sentiment controls (``baselines.downstream_controls``) on the test split that
    ``examples`` selects, as a profile's store holds them: their key is the task and
    ``examples`` alone (``decisions.stored_baseline``), so any profile's copy is the
    same result. None where no profile has stored them; nothing is computed."""
    from ..engine.store import config_hash, read_json
    from ..profiles import PROFILES, resolve
    name = "downstream-sentiment"
    key = config_hash({"name": name, "arguments": ["sentiment", str(examples)]})
    for profile in PROFILES:
        stored = read_json(resolve(profile).results / "baselines" / f"{name}-{key}.json")
        if stored is not None:
            return stored["result"]
    return None


def _percent_range(values) -> str:
    low, high = f"{100 * min(values):.1f}%", f"{100 * max(values):.1f}%"
    return low if low == high else f"{low} to {high}"


def downstream_values() -> dict:
    """The confirmatory (4x) models' sentiment probes against the bag of words."""
    from ..profiles import resolve
    from ..studies import confirm_analysis as A
    from ..studies import confirm_design as D
    s = stored_sentiment(resolve(D.PILOT_PROFILE).evaluation.task_examples)
    frame = A.confirmatory_frame()
    if s is None or "sentiment_probe_accuracy" not in frame:
        return {}
    probe = frame.groupby("condition")["sentiment_probe_accuracy"].mean().dropna()
    return {"scale_probe_range": _percent_range(probe),
            "scale_bag_of_words": f"{100 * s['bag_of_words_accuracy']:.1f}%",
            "scale_majority": f"{100 * s['majority_accuracy']:.1f}%",
            "scale_sentiment_examples": f"{s['test_examples']:,}"}


def values() -> dict:
    """The scale page's keys: where the models stand at each budget, the count rungs, the
    scale against ALBERT-base, the 4x curves and the downstream probes; the long pilot's
    (``pilot_page.values``)."""
    from ..profiles import resolve
    from ..studies import confirm_design as D
    from ..studies import ladder as L
    from . import pilot_page
    from .scale import scale_numbers
    from ..studies.confirm_design import NotComplete
    out = {}
    try:
        levels = rung_levels()
        table = standing()
    except (FileNotFoundError, NotComplete):
        return pilot_page.values()
    stored = count_rungs_record()
    out["scale_two_sided_accuracy"] = f"{100 * stored['rung']['two_sided_at_mask']:.1f}%"
    for name, level in levels.items():
        key = name.replace(" ", "_").replace("-", "_")
        out[f"scale_rung_{key}"] = f"{level:.3f}"
        for budget, text in below(table, level).items():
            out[f"scale_below_{key}_{budget}"] = text
    best = table.idxmin()
    for budget in table.columns:
        out[f"scale_best_{budget}"] = f"{best[budget]}, {table.loc[best[budget], budget]:.3f}"
    n = scale_numbers(resolve(D.PILOT_PROFILE))
    ratio = n["paper_flops"] / (n["flops"] * L.RUNGS["16x"] / L.RUNGS["4x"])
    out.update({"scale_16x_less_compute": times(ratio),
                "scale_params": f"{n['params'] / 1e6:.2f}M",
                "scale_paper_params": f"{n['paper_params'] / 1e6:.0f}M"})
    try:
        m = confirmatory_moving()
        still = list(m.loc[~m["moving"], "decision"])
        out.update({"scale_moving": f"{int(m['moving'].sum())} of {len(m)}",
                    "scale_not_moving": "; ".join(still) or "none"})
        out.update(curve_subset())
        out.update(downstream_values())
    except NotComplete:
        pass
    return {**out, **pilot_page.values()}


def write_scale_parts(generated: Path) -> list:
    """The scale page's tables and figure into ``generated``: scale-standing.md,
    scale-moving.md, scale-standing.png, and the long pilot's (``pilot_page``)."""
    import matplotlib.pyplot as plt

    from ..studies.confirm_design import NotComplete
    from . import pilot_page
    from .figure_text import png
    figure = generated / "scale-standing.png"
    try:  # a results store without the runs (the tests' smoke book): empty parts
        table, levels = standing(), rung_levels()
        parts = {"scale-standing.md": standing_table(table, levels),
                 "scale-moving.md": moving_table(confirmatory_moving())}
    except (FileNotFoundError, NotComplete):
        table, parts = None, {"scale-standing.md": "", "scale-moving.md": ""}
    for name, text in parts.items():
        (generated / name).write_text(text)
    if table is None:
        pilot_page.placeholder(figure)
    else:
        fig = standing_figure(table, levels)
        figure.write_bytes(png(fig))
        plt.close(fig)
    return [generated / n for n in parts] + [figure] + pilot_page.write_parts(generated)

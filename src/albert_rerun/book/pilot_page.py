"""The long pilot to 64x on the scale page (book/scale.md): where each arm's curve first
scores below each count rung, whether its loss drops suddenly, and how the sharing cost
moves along training, with one figure of both curves. Exploratory: one seed an arm, no
interval. Numbers, tables and the figure; the sentences are the page's.

Nothing of the pilot's results is read until both arms are stored with their
evaluations (``long_pilot.frame`` refuses before).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .headline_figures import FIGURE_WIDTH_IN, FONT_PT

RUNG_NAMES = {"unigram": "the unigram rung", "left bigram": "the left-bigram rung",
              "two-sided": "the two-sided count rung"}


@dataclass
class PilotFacts:
    progress: list  # [(arm, step reached, steps)]
    runs: pd.DataFrame | None = None  # ``long_pilot.frame``, once complete
    rungs: dict = field(default_factory=dict)  # {name: nats} on the curve's sequences


def gather(store=None) -> PilotFacts:
    """The pilot's progress, and its runs and the count rungs once both arms are stored;
    the rungs scored on the curve's own held-out sequences (``count_rungs.levels_on``),
    so that a crossing compares a curve with a rung on the same targets."""
    from ..profiles import resolve
    from ..studies import confirm_design, count_rungs, long_pilot
    from ..studies.confirm_design import NotComplete
    facts = PilotFacts(progress=long_pilot.progress(store))
    try:
        facts.runs = long_pilot.frame(store)
    except NotComplete:
        return facts
    facts.rungs = count_rungs.levels_on(resolve(confirm_design.PILOT_PROFILE).evaluation,
                                        long_pilot.CURVE_EXAMPLES)
    return facts


def _millions(tokens: float) -> str:
    """'88.5M', '5.53M', '354M': three significant digits, as the introduction rounds."""
    return f"{float(f'{tokens / 1e6:.3g}'):g}M"


def tokens_at(steps: int) -> int:
    """The pilot's tokens after ``steps``, counted as every page counts a run's tokens
    (``chapters.text.tokens_per_run``: steps x batch x sequence length), not as trained
    (the curves' own counts, a few percent fewer)."""
    from .text import tokens_per_run
    from ..studies import long_pilot
    config = long_pilot.configs()[long_pilot.ARMS[0]]
    return tokens_per_run(config) // config.max_steps * int(steps)  # a step's, times steps


def counted_curve(runs: pd.DataFrame) -> pd.DataFrame:
    """``long_pilot.curves`` with each point's tokens counted as ``tokens_at`` counts
    them, so that the page's tables, figure and sentences use one count."""
    from ..studies import long_pilot
    curve = long_pilot.curves(runs)
    return curve.assign(tokens=[tokens_at(step) for step in curve["step"]])


def crossings_table(facts: PilotFacts) -> str:
    """Markdown: per arm, the tokens at which its curve first scores below each rung."""
    from ..studies import long_pilot
    cross = long_pilot.crossings(counted_curve(facts.runs), facts.rungs)
    names = list(facts.rungs)
    lines = ["| arm | " + " | ".join(f"{RUNG_NAMES[n]} ({facts.rungs[n]:.3f} nats)"
                                     for n in names) + " |", "|---|" + "---|" * len(names)]
    for arm, part in cross.groupby("arm", sort=False):
        by = part.set_index("rung")["tokens"]
        lines.append(f"| {arm} | " + " | ".join(
            _millions(by[n]) + " tokens" if np.isfinite(by[n]) else "never" for n in names)
            + " |")
    return "\n".join(lines) + "\n"


def drops_table(drops: pd.DataFrame) -> str:
    """Markdown: each sudden drop (``long_pilot.sudden_drops``), or that there is none."""
    if not len(drops):
        return "No sudden drop appears.\n"
    lines = ["| arm | by | fall below the earlier low | during warm-up |",
             "|---|---|---|---|"]
    lines += [f"| {r['arm']} | {_millions(r['tokens'])} tokens | {r['fall']:.3f} nats | "
              f"{'yes' if r['warm-up'] else 'no'} |" for _, r in drops.iterrows()]
    return "\n".join(lines) + "\n"


def costs_table(curve: pd.DataFrame) -> str:
    """Markdown: all shared minus BERT-style on the curve's sequences, at each budget's
    steps of the one 64x schedule."""
    from ..studies import long_pilot
    at = long_pilot.cost_along(curve).set_index("step")
    lines = ["| after the steps of | steps | tokens | cost (nats) |", "|---|---|---|---|"]
    lines += [f"| {name} | {step:,} | {_millions(at.loc[step, 'tokens'])} | "
              f"{at.loc[step, 'cost']:+.3f} |"
              for name, step in long_pilot.MARKS.items() if step in at.index]
    return "\n".join(lines) + "\n"


def paper_cost() -> dict:
    """The paper's own figure for the pilot's comparison (all shared against not shared
    at E = H), from Table 4 at E = 768, in its units, and the scale between them."""
    from .. import paper
    from .text import times, tokens_per_run
    from ..studies import long_pilot
    key = (768, "all"), (768, "none")
    shared, bert = (paper.TABLE4_AVG[k] for k in key)
    small, large = (paper.TABLE4_PARAMS[k] for k in key)
    scale = paper.EXPERIMENT_SCALE["asymmetry"]
    steps = scale.models[0][2]
    ours = tokens_per_run(long_pilot.configs()[long_pilot.ARMS[0]])
    return {"pilot_paper_shared": f"{shared:.1f}", "pilot_paper_bert": f"{bert:.1f}",
            "pilot_paper_cost": f"{bert - shared:.1f}", "pilot_paper_steps": f"{steps:,}",
            "pilot_paper_params": f"{small}M and {large}M",
            "pilot_paper_tokens": f"{scale.tokens(steps) / 1e9:,.0f}B",
            "pilot_paper_times": times(scale.tokens(steps) / ours),
            "pilot_tokens_counted": _millions(ours)}


def values(store=None) -> dict:
    """The scale page's keys on the long pilot ({} before both arms are stored)."""
    from ..studies import long_pilot
    facts = gather(store)
    out = {"pilot_steps": f"{long_pilot.STEPS:,}", "pilot_multiple": str(long_pilot.MULTIPLE),
           "pilot_curve_every": f"{long_pilot.CURVE_EVERY:,}",
           "pilot_curve_sequences": f"{long_pilot.CURVE_EXAMPLES:,}",
           "pilot_drop_nats": f"{long_pilot.DROP_NATS}",
           "pilot_drop_ratio": f"{long_pilot.DROP_RATIO:g}",
           "pilot_drop_window": str(long_pilot.DROP_WINDOW),
           "pilot_blind_steps": f"{(long_pilot.DROP_WINDOW + 1) * long_pilot.CURVE_EVERY:,}",
           "pilot_warmup_steps": f"{long_pilot.WARMUP_STEPS:,}"}
    if facts.runs is None:
        return out
    runs = facts.runs.set_index("condition")
    curve = counted_curve(facts.runs)
    shared, bert = long_pilot.ARMS
    cost = long_pilot.cost_along(curve)
    peak = cost.loc[cost["cost"].idxmax()]
    drops = long_pilot.sudden_drops(curve)
    first = drops.groupby("arm")["step"].min() if len(drops) else pd.Series(dtype=float)
    between = len(first) == 2 and first.min() <= peak["step"] <= first.max()
    out.update({
        "pilot_tokens": _millions(tokens_at(long_pilot.STEPS)),
        "pilot_ce_shared": f"{float(runs.loc[shared, long_pilot.CE]):.3f}",
        "pilot_ce_bert": f"{float(runs.loc[bert, long_pilot.CE]):.3f}",
        "pilot_warmup_tokens": _millions(tokens_at(long_pilot.WARMUP_STEPS)),
        "pilot_peak_cost": f"{peak['cost']:+.3f}", "pilot_peak_steps": f"{peak['step']:,.0f}",
        "pilot_peak_tokens": _millions(peak["tokens"]),
        "pilot_peak_where": ("between the two arms' sudden drops" if between else
                             "not between the two arms' sudden drops")})
    out.update(paper_cost())
    return out


PARTS = ("pilot-crossings.md", "pilot-drops.md", "pilot-costs.md")
NOT_STORED = "(not stored)"  # a key's or a figure's text before


def placeholder(path: Path) -> Path:
    """A small figure that says its results are not stored, at ``path``: a page's
    figure directive always finds its image (a results store without the runs, such as
    the tests' smoke book)."""
    import matplotlib.pyplot as plt

    from .figure_text import png
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 1.0), dpi=100)
    ax.text(0.5, 0.5, NOT_STORED, ha="center", va="center", fontsize=FONT_PT)
    ax.set_axis_off()
    path.write_bytes(png(fig))
    plt.close(fig)
    return path


def figure(facts: PilotFacts):
    """Both arms' held-out curves against tokens (log scale) with the rungs as lines
    above, and the sharing cost along training below, the ladder's budgets marked."""
    import matplotlib.pyplot as plt

    from ..studies import long_pilot
    curve = counted_curve(facts.runs)
    cost = long_pilot.cost_along(curve)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(FIGURE_WIDTH_IN, 6.2), dpi=100,
                                      sharex=True, height_ratios=(3, 2))
    for (arm, part), colour in zip(curve.groupby("arm", sort=False), ("tab:blue", "black")):
        top.plot(part["tokens"], part["ce"], color=colour, lw=1.4, label=arm)
    for (name, level), style in zip(facts.rungs.items(), (":", "--", "-.")):
        top.axhline(level, color="tab:red", lw=0.9, ls=style, label=RUNG_NAMES[name])
    top.set_ylabel("held-out nats at [MASK]", fontsize=FONT_PT)
    top.legend(fontsize=FONT_PT, frameon=False, loc="upper right")
    bottom.plot(cost["tokens"], cost["cost"], color="black", lw=1.4)
    bottom.axhline(0, color="0.4", lw=0.8)
    tokens = curve.drop_duplicates("step").set_index("step")["tokens"]
    for name, step in long_pilot.MARKS.items():
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
        for spine in ("top", "right"):
            ax.spines[spine].set_visible(False)
    fig.tight_layout()
    return fig


def write_parts(generated: Path, store=None) -> list:
    """pilot-crossings.md, pilot-drops.md, pilot-costs.md and pilot.png into
    ``generated``: empty tables and a placeholder figure before both arms are stored."""
    import matplotlib.pyplot as plt

    from ..studies import long_pilot
    from .figure_text import png
    facts = gather(store)
    if facts.runs is None:
        for name in PARTS:
            (generated / name).write_text("")
        return [generated / name for name in PARTS] + [placeholder(generated / "pilot.png")]
    curve = counted_curve(facts.runs)
    parts = {"pilot-crossings.md": crossings_table(facts),
             "pilot-drops.md": drops_table(long_pilot.sudden_drops(curve)),
             "pilot-costs.md": costs_table(curve)}
    for name, text in parts.items():
        (generated / name).write_text(text)
    fig = figure(facts)
    (generated / "pilot.png").write_bytes(png(fig, dpi=100))
    plt.close(fig)
    return [generated / name for name in parts] + [generated / "pilot.png"]

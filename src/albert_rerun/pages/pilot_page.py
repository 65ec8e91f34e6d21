"""The long pilot to 64x on the scale page (issue #38, §2): where each arm passes the
count rungs, whether its loss drops suddenly, and how the sharing cost moves over
training, with one figure of both curves. Exploratory: one seed an arm, no interval.

Nothing of the pilot's results is read until both arms are stored with their
evaluations (``long_pilot.frame`` refuses before); until then the page gives each arm's
steps only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .headline_figures import FIGURE_WIDTH_IN, FONT_PT
from .headlines import term

RUNG_NAMES = {"unigram": "the unigram rung", "left bigram": "the left-bigram rung",
              "two-sided": "the two-sided count rung"}


@dataclass
class PilotFacts:
    progress: list  # [(arm, step reached, steps)]
    runs: pd.DataFrame | None = None  # ``long_pilot.frame``, once complete
    rungs: dict = field(default_factory=dict)  # {name: held-out nats at [MASK]}
    two_sided: dict | None = None  # the stored two-sided rung (for ``standing``)


def gather(store=None) -> PilotFacts:
    """The pilot's progress, and its runs and the rungs once both arms are stored."""
    from ..profiles import resolve
    from ..studies import confirm_design, count_rungs, long_pilot
    from ..studies.confirm_design import NotComplete
    facts = PilotFacts(progress=long_pilot.progress(store))
    try:
        facts.runs = long_pilot.frame(store)
    except NotComplete:
        return facts
    stored = count_rungs.stored(resolve(confirm_design.PILOT_PROFILE).evaluation)
    if stored:
        facts.rungs = count_rungs.levels(stored)
        facts.two_sided = stored["rung"]
    return facts


def _millions(tokens: float) -> str:
    return f"{tokens / 1e6:,.0f}M" if tokens >= 1e7 else f"{tokens / 1e6:,.1f}M"


def text(facts: PilotFacts) -> str:
    """The page's section on the pilot, in short sentences, from its stored runs."""
    from ..studies import long_pilot
    lines = [f"Beside the ladder, one seed each of the two arms of the sharing cost at "
             f"E = H = 64 trains to 64 times the `cpu` profile's steps ({long_pilot.STEPS:,}). It is "
             f"exploratory: one seed gives no interval. Its held-out curve has a point "
             f"every {long_pilot.CURVE_EVERY:,} steps, on {long_pilot.CURVE_EXAMPLES:,} of "
             f"the held-out sequences.", ""]
    if facts.runs is None:
        steps = "; ".join(f"{arm}, step {reached:,} of {total:,}"
                          for arm, reached, total in facts.progress)
        return "\n".join(lines + [f"It is still training. At its last stored checkpoints: "
                                  f"{steps}. Its results are shown only once both arms "
                                  f"are stored."]) + "\n"
    curve = long_pilot.curves(facts.runs)
    runs = facts.runs.set_index("condition")
    lines += [f"Both arms are stored: {_millions(float(runs['tokens'].max()))} tokens "
              f"each. The pilot counts tokens seen, padding left out. On the whole "
              f"held-out set they end at:", ""]
    lines += [f"- {arm}: {float(r[long_pilot.CE]):.3f} nats at `[MASK]`"
              + (f", {_standing(float(r[long_pilot.CE]), facts)}" if facts.two_sided else "")
              + "." for arm, r in runs.iterrows()]
    last = curve.groupby("arm", sort=False).last()
    offset = [float(last.loc[arm, "ce"] - runs.loc[arm, long_pilot.CE]) for arm in last.index]
    if facts.rungs:
        lines += ["", f"Where each curve first scores below a rung. The curve is read on "
                  f"{long_pilot.CURVE_EXAMPLES:,} held-out sequences, the rungs on all of "
                  f"them. At the end, the curve's subset scores "
                  f"{min(offset):+.3f} to {max(offset):+.3f} nats against the whole set. "
                  f"That offset was measured at the end only; earlier, its size and sign "
                  f"are unknown. Curve points are {long_pilot.CURVE_EVERY:,} steps apart:",
                  ""]
        cross = long_pilot.crossings(curve, facts.rungs)
        for arm, part in cross.groupby("arm", sort=False):
            said = [f"{RUNG_NAMES[r['rung']]} at {_millions(r['tokens'])} tokens"
                    if np.isfinite(r["tokens"]) else f"never {RUNG_NAMES[r['rung']]}"
                    for _, r in part.iterrows()]
            lines.append(f"- {arm}: " + "; ".join(said) + ".")
    drops = long_pilot.sudden_drops(curve)
    last = curve.iloc[curve["step"].idxmax()]  # tokens a step, as trained
    warm_tokens = float(last["tokens"]) / float(last["step"]) * long_pilot.WARMUP_STEPS
    lines += ["", _drops_sentence(drops), "", f"This schedule warms its learning rate up "
              f"for {long_pilot.WARMUP_STEPS:,} steps (about {_millions(warm_tokens)} "
              f"tokens). One schedule cannot tell a drop caused by the learning rate from "
              f"one caused by training itself."]
    cost = long_pilot.cost_along(curve)
    at = cost.set_index("step")
    marks = [f"{step:,} steps ({name}'s length): {at.loc[step, 'cost']:+.3f}"
             for name, step in long_pilot.MARKS.items() if step in at.index]
    lines += ["", f"The sharing cost here is all shared minus BERT-style, in nats on the "
              f"curve's sequences. After as many steps as each ladder rung trains, it is:",
              ""] + [f"- {m};" for m in marks[:-1]] + [f"- {marks[-1]}.", ""]
    peak = cost.loc[cost["cost"].idxmax()]
    where = (f"The largest cost, {peak['cost']:+.3f} nats, comes at {peak['step']:,.0f} "
             f"steps ({_millions(peak['tokens'])} tokens)")
    first = drops.groupby("arm")["step"].min() if len(drops) else pd.Series(dtype=float)
    if len(first) == 2 and first.min() <= peak["step"] <= first.max():
        where += (", between the two arms' sudden drops. One arm has left its plateau and "
                  "the other not yet, in one seed: a delay, not a settled cost")
    shared, bert = long_pilot.ARMS  # the cost: all shared minus BERT-style
    end = float(runs.loc[shared, long_pilot.CE] - runs.loc[bert, long_pilot.CE])
    lines += [where + ".", "", "Before the end these are points along one 64x schedule, "
              "before its learning rate has decayed. They are not ladder runs. At the end, "
              f"on the whole held-out set, the cost is {end:+.3f} nats. One seed neither "
              "confirms nor bounds the confirmatory 4x estimate.", "", _paper_cost()]
    return "\n".join(lines) + "\n"


def _paper_cost() -> str:
    """The paper's own figure for the pilot's comparison (all shared against not shared
    at E = H), from Table 4 at E = 768, in its units, with the scale between them: only
    the signs compare (a skeptical reader)."""
    from .. import paper
    from ..chapters.text import times, tokens_per_run
    from ..studies import long_pilot
    key = (768, "all"), (768, "none")
    shared, bert = (paper.TABLE4_AVG[k] for k in key)
    small, large = (paper.TABLE4_PARAMS[k] for k in key)
    scale = paper.EXPERIMENT_SCALE["asymmetry"]
    steps = scale.models[0][2]
    ours = tokens_per_run(long_pilot.configs()[long_pilot.ARMS[0]])
    return (f"The paper measures this cost at E = H = 768 in downstream points, not nats "
            f"(Table 4: the average of five fine-tuned tasks, ALBERT-base after {steps:,} "
            f"steps). There all shared averages "
            f"{shared:.1f} and not shared {bert:.1f}: sharing costs {bert - shared:.1f} "
            f"points. Only the signs compare: both say sharing every layer costs. Each of "
            f"the paper's cells is one run, of {small}M and {large}M parameters trained on "
            f"{scale.tokens(steps) / 1e9:,.0f}B tokens. That is "
            f"{times(scale.tokens(steps) / ours)} a pilot run's {_millions(ours)}, both "
            f"counted as steps x batch x length.")


def _standing(ce: float, facts: PilotFacts) -> str:
    from ..studies.count_rungs import standing
    return standing(ce, facts.two_sided)


def _drops_sentence(drops: pd.DataFrame) -> str:
    from ..studies import long_pilot
    blind = (long_pilot.DROP_WINDOW + 1) * long_pilot.CURVE_EVERY  # no earlier point judged
    rule = (f"The rule was fixed before the curves were read. Over one curve interval the "
            f"loss must reach a new low, at least {long_pilot.DROP_NATS} nats under every "
            f"earlier point. That fall must be {long_pilot.DROP_RATIO:g} times the median "
            f"fall of the {long_pilot.DROP_WINDOW} intervals before it. The first "
            f"{blind:,} steps cannot be judged.")
    if not len(drops):
        return f"No sudden drop appears. {rule}"
    said = "; ".join(f"{r['arm']} by {_millions(r['tokens'])} tokens, {r['fall']:.3f} nats"
                     + (" (during warm-up)" if r["warm-up"] else "")
                     for _, r in drops.iterrows())
    return f"A sudden drop appears: {said}. {rule}"


def figure(facts: PilotFacts):
    """Both arms' held-out curves against tokens (log scale) with the rungs as lines
    above, and the sharing cost along training below, the ladder's budgets marked."""
    import matplotlib.pyplot as plt

    from ..studies import long_pilot
    curve = long_pilot.curves(facts.runs)
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
            # the rung's name above the top panel (a cold reader: "5k 21k 86k 345k"
            # floated between the panels, steps on an axis of tokens)
            top.text(tokens[step], 1.0, f"{name} steps", fontsize=FONT_PT,
                     transform=top.get_xaxis_transform(), ha="center",
                     va="bottom", color="0.35")
    bottom.set_ylabel("all shared minus\nBERT-style (nats)", fontsize=FONT_PT)
    bottom.set_xlabel("tokens seen (log scale)", fontsize=FONT_PT)
    bottom.set_xscale("log")
    for ax in (top, bottom):
        ax.tick_params(labelsize=FONT_PT)
        for spine in ("top", "right"):
            ax.spines[spine].set_visible(False)
    fig.tight_layout()
    return fig


def section(facts: PilotFacts, figure_path: str = "_generated/pilot.png") -> str:
    """The section's Markdown: its text, and the figure once the pilot is stored."""
    from ..studies.long_pilot import CURVE_EXAMPLES, MARKS
    body = text(facts)
    marks = ", ".join(f"{name} ({step:,})" for name, step in MARKS.items())
    if facts.runs is None:
        return body
    return body + (f"\n```{{figure}} {figure_path}\n:name: fig-long-pilot\n:alt: the long "
                   f"pilot's two held-out curves against tokens, and the sharing cost\n\n"
                   f"The long pilot (exploratory, one seed an arm). Above: each arm's "
                   f"held-out cross-entropy at [MASK] against tokens seen, on "
                   f"{CURVE_EXAMPLES:,} held-out sequences, with the count "
                   f"{term('rung', 'rungs')} (on all of them) as red lines. Below: all "
                   f"shared minus BERT-style along training. Grey lines mark the steps "
                   f"of each budget, {marks}: points along one 64x schedule, not ladder "
                   f"runs.\n```\n")

"""The ladder page's descriptions added after its result was read (book/ladder.md,
amendment 10): when each 16x arm's held-out curve first scored below the left-bigram
count rung, where the 16x arms stand against the two-sided count rung, and how far 16x
lies from ALBERT's compute. None is a registered test."""
from __future__ import annotations

import numpy as np

from ..pages.at_scale import past_two_sided
from ..pages.ladder_trend import AMENDMENT_10
from ..studies import ladder as L
from ..studies import ladder_curves


def _share(value: float) -> str:
    return "not by the end" if not np.isfinite(value) else f"{value:.0%}"


def passes_table(table) -> str:
    """A Markdown table: each arm, and per seed the share of its training at which its
    16x curve first scored below the rung (``ladder_curves.passes``)."""
    seeds = sorted(table["seed"].unique())
    lines = ["| arm | " + " | ".join(f"seed {s}" for s in seeds) + " |",
             "|---|" + "---|" * len(seeds)]
    for arm in [a for a in L.ARMS if a in set(table["condition"])]:
        part = table[table["condition"] == arm].set_index("seed")["first below"]
        lines.append(f"| {arm} | " + " | ".join(_share(part.get(s, np.nan)) for s in seeds)
                     + " |")
    return "\n".join(lines)


def after_text(store=None) -> str:
    """The section, in Markdown."""
    from ..studies import confirm_design
    frame = L.rung_frame("16x", store)
    table = ladder_curves.first_below(frame, ladder_curves.rung_level())
    curve = frame.iloc[0]["curve"]
    steps = L.configs("16x")[confirm_design.BERT].max_steps
    return "\n".join([
        f"**After the result: leaving the loss plateau** (descriptive, {AMENDMENT_10}). "
        "Every model starts on a plateau, near the unigram rung, and leaves it at some "
        "point in training. Where one arm leaves it later than the other in every seed, "
        "part of a 16x difference may be that delay, which the ladder cannot tell from a "
        f"lasting cost. Each 16x run's held-out curve has {len(curve)} points, evenly "
        f"spaced, on {curve[0]['examples']} of the held-out sequences. The table gives "
        "the share of training at which each run's curve first scored below the "
        "left-bigram count rung. For the wide arm that share is of its "
        f"{L.wide_steps('16x'):,} steps, which take as long as its partner's {steps:,}.",
        "", passes_table(table), "",
        past_two_sided(store, frame).strip()
        + " How far 16x lies from ALBERT's compute: {doc}`scale`."])

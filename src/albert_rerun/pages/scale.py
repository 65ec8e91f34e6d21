"""The scale of the book's runs against the paper's, computed once from the configs:
parameters, tokens and training FLOPs of one base run of a profile and of ALBERT-base
(``scale_numbers``), in short sentences with how far the models got (``scale_text``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..stats.inference import PAST, level_percent
from ..chapters.text import times, tokens_per_run
from .headlines import term


def scale_numbers(profile: ResolvedProfile) -> dict:
    """Parameters, tokens and training FLOPs of one base run of ``profile`` and of the
    paper's ALBERT-base at 125,000 steps (batch 4,096 x 512), counted the same way."""
    from ..model.config import preset
    from ..model.params import closed_form, useful_flops
    from ..studies import conditions as C
    from .. import paper
    from .ledger import PAPER_MASKED, training_compute
    base = C.base(profile)
    ours_tokens = tokens_per_run(base)
    theirs = preset("albert-base")
    steps = 125_000
    return {"params": float(sum(closed_form(base.model).values())),
            "paper_params": float(sum(closed_form(theirs).values())),
            "tokens": float(ours_tokens),
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


def _flops(x: float) -> str:
    """'$9.0 \\times 10^{12}$' FLOPs, in the page's maths."""
    exponent = int(np.floor(np.log10(x)))
    return f"${x / 10 ** exponent:.1f} \\times 10^{{{exponent}}}$"


def stage_summary(family: pd.DataFrame) -> str:
    """'the weakest arm of each comparison from 19% to 35% of the way from the unigram to
    the bigram rung (none past the bigram rung)' over a family's judged and
    gated model decisions; a level below 0 (worse than the unigram rung) is said so."""
    levels = family["weakest_level"].dropna()
    if not len(levels):
        return "no trained model compared"
    past = int((family["stage"] == PAST).sum())
    beyond = f"({'none' if not past else past} past the bigram rung)"
    if levels.max() < 0:  # a level below 0 is worse than the unigram rung
        return f"the weakest arm of each comparison still below the unigram rung {beyond}"
    low = ("below the unigram rung" if levels.min() < 0 else level_percent(levels.min()))
    return (f"the weakest arm of each comparison from {low} to "
            f"{level_percent(levels.max())} of the way from the unigram to the bigram "
            f"rung {beyond}")


def scale_text(profiles: list, families: dict | None = None) -> str:
    """The scale in short sentences: the paper's ALBERT-base in parameters, steps, tokens
    and training FLOPs, one base run of each profile against it; and how far the models
    got in each profile."""
    parts = []
    for profile in profiles:
        n = scale_numbers(resolve(profile))
        parts.append(f"A base run at `{profile}` has {n['params'] / 1e6:.2f}M parameters, "
                     f"{n['steps']:,} steps, {_count(n['tokens'])} tokens and "
                     f"{_flops(n['flops'])} FLOPs: "
                     f"{times(n['paper_params'] / n['params'])} fewer parameters, "
                     f"{times(n['paper_tokens'] / n['tokens'])} fewer tokens and "
                     f"{times(n['paper_flops'] / n['flops'])} less compute than the "
                     f"paper.")
    n = scale_numbers(resolve(profiles[0]))
    first = (f"Our base runs against the paper's ALBERT-base: it has "
             f"{n['paper_params'] / 1e6:.0f}M parameters, {n['paper_steps']:,} steps, "
             f"{_count(n['paper_tokens'])} tokens and {_flops(n['paper_flops'])} FLOPs. "
             + " ".join(parts))
    if not families:
        return first
    second = "How far the models got, " + " ".join(
        f"{'at' if not k else 'At'} `{p}`: {stage_summary(f)}."
        for k, (p, f) in enumerate(families.items())) + \
        f" They are all {term('stage', 'early in training')}: a verdict here is about " \
        "how fast small models begin to learn, not about trained ones."
    return first + " " + second

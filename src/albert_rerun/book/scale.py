"""The scale of the book's runs against the paper's, computed once from the configs:
parameters, tokens and training FLOPs of one base run of a profile and of ALBERT-base
(``scale_numbers``); the sentences are book/scale.md's.
"""
from __future__ import annotations

from ..profiles import ResolvedProfile
from .text import tokens_per_run


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

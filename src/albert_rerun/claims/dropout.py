"""Claim 5 (chapter 5): no dropout against dropout 0.1 (Table 8), and the
no-overfitting premise."""
from __future__ import annotations

from . import conditions as C
from . import paper
from .decisions import CE, Chapter, ce_decision, levels, load_runs, margins
from .downstream import downstream
from .text import (context_reading, metrics_table, passes_over_data, passes_sentence,
                   scale_gap, scale_short, summary)


def dropout(profile: str, seeds=None, device="auto", train_missing=False,
            present: bool = True) -> Chapter:
    """Claim 5: no dropout against dropout 0.1, and the no-overfitting premise."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    runs = load_runs(profile, C.dropout(profile), seeds, device, train_missing)
    runs["overfitting gap"] = runs[CE] - runs["train_mlm_loss_at_mask"]
    chapter = Chapter("dropout", runs, dropout_decisions(runs, m))
    chapter.tables["runs"] = metrics_table(runs, {
        "training CE at [MASK]": summary(runs, "train_mlm_loss_at_mask"),
        "gap (held-out minus training)": summary(runs, "overfitting gap")})
    chapter.tables["runs"]["paper Avg (xxlarge)"] = [paper.TABLE8_AVG["without dropout"],
                                                     paper.TABLE8_AVG["with dropout"]]
    b = C.base(profile)
    chapter.texts.update(scale_gap=scale_gap(runs, b), scale_short=scale_short(runs, b),
                         context=context_reading(runs, profile),
                         passes=passes_sentence(passes_over_data(runs, b)))
    return downstream(chapter, profile) if present else chapter


def dropout_decisions(runs, m: dict) -> list:
    p = paper.TABLE8_AVG
    return [ce_decision(runs, "dropout/ce", "dropout", "no dropout minus dropout 0.1",
                        "no dropout", "dropout 0.1", m["ce"], -1,
                        f"{p['without dropout'] - p['with dropout']:+.1f} Avg (xxlarge)"),
            ce_decision(runs, "dropout/premise", "dropout",
                        "overfitting gap, no dropout minus dropout 0.1", "no dropout",
                        "dropout 0.1", m["ce"], 0, "no overfitting (argued)",
                        metric="overfitting gap")]

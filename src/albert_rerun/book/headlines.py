"""Each chapter's headline decision, and a decision's values in one sign convention.

A measured chapter's question is answered by one decision of the family (``HEADLINES``;
``EXTRA``: the primary decisions that are no chapter's headline). ``answer`` gives a
judged row's first-screen values, turned so that positive is the paper's direction
(``paper_positive``); the chapters write the sentences around them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..studies.decisions import interval_text, signed, unit_digits

GLOSSARY = "how_to_read"  # book/how_to_read.md: the glossary and the shared rules
PILOT = "cpu-long"  # the pilot: the cpu sizes trained 4x longer, seeds 0-2


@dataclass(frozen=True)
class Headline:
    """The one decision that answers a chapter's question."""

    key: str  # the decision of the family that answers it
    confirmatory: bool = False  # a pre-registered test of it was trained


HEADLINES = {"asymmetry": Headline("asymmetry/attention-ffn/small-E", True),
             "sop_nsp": Headline("sop_nsp/sop-pairs/sop-nsp", True),
             "dropout": Headline("dropout/ce", True),
             "wall_clock": Headline("wall_clock/equal-time", True),
             "transitions": Headline("transitions/oscillation-l2"),
             "embedding_sweep": Headline("embedding/all-shared")}
# the primary decisions that are not a chapter's headline, each with its chapter
EXTRA = {"confirm/sharing-cost": ("asymmetry", Headline("confirm/sharing-cost"))}
EXTRA_NAMES = {"confirm/sharing-cost": "the cost of sharing every layer"}


def term(word: str, text: str | None = None) -> str:
    """A MyST link to ``word`` in the glossary (``{term}`` role), shown as ``text``."""
    return f"{{term}}`{text} <{word}>`" if text else f"{{term}}`{word}`"


CHAPTERS = {"asymmetry": "03_asymmetry", "sop_nsp": "04_sop_nsp", "dropout": "05_dropout",
            "wall_clock": "06_wall_clock", "transitions": "07_transitions",
            "embedding_sweep": "08_embedding_size"}


# -- one sign on the findings pages ------------------------------------------------------

def turned_label(label: str) -> str:
    """'A minus B, rest' as 'B minus A, rest': the words of a difference taken the
    other way round (a label without ' minus ' is returned as it is)."""
    head, comma, rest = label.partition(", ")
    a, minus, b = head.partition(" minus ")
    return f"{b} minus {a}{comma}{rest}" if minus else label


def paper_positive(row):
    """A decision's row (a judged family's, or a dict) with its difference turned so
    that positive is the paper's direction: where the paper's sign is -1 the estimate
    and interval are negated, the label turned and the paper's sign set to +1. p-values,
    verdicts and stage do not depend on the sign and stay; a row whose paper says "no
    difference" (sign 0) or already on the paper's sign is returned unchanged (a copy)."""
    row = row.copy()
    if int(row.get("paper_sign", 0) or 0) >= 0:
        return row
    row["estimate"], row["low"], row["high"] = (-float(row["estimate"]), -float(row["high"]),
                                                -float(row["low"]))
    row["paper_sign"] = 1
    if "label" in row:
        row["label"] = turned_label(str(row["label"]))
    return row


def toward_paper(d):
    """A ``stats.inference.Decision`` turned like ``paper_positive``: positive is the
    paper's direction."""
    from dataclasses import replace
    if d.paper_sign >= 0:
        return d
    return replace(d, estimate=-d.estimate, low=-d.high, high=-d.low, paper_sign=1,
                   label=turned_label(d.label))


def difference(estimate, low, high, unit: str) -> str:
    """'+0.022 nats [+0.017, +0.027]': an estimate, its unit, its 95% interval ('(one
    seed: no interval)' where it is not finite)."""
    if not (np.isfinite(float(low)) and np.isfinite(float(high))):
        return f"{signed(float(estimate), unit_digits(unit))} {unit} (one seed: no interval)"
    number, _, bounds = interval_text(estimate, low, high, unit).partition(" ")
    return f"{number} {unit} {bounds}"


def answer(row, premise: str = "") -> dict:
    """A chapter's first-screen values from one judged row, turned so that positive is
    the paper's direction (``paper_positive``): 'reading' (the plain reading's head),
    'why' (its reason, '' if none), 'difference' ('+0.022 nats [+0.017, +0.027]'),
    'margin' ('±0.027 nats'), 'seeds' ('11'), 'holm_only' ('' or 'after Holm's
    adjustment': said where the reading shows no difference yet the unadjusted 95%
    interval excludes 0, so that the label never contradicts the interval beside it)."""
    from .plain import UNDECIDED, NO_DIFFERENCE, HOLDS, row_reading
    row = paper_positive(row)
    reading = row_reading(row, premise)
    head, _, why = reading.partition(": ")  # the reason goes into the page's sentence
    d = unit_digits(row["unit"])
    low, high = float(row["low"]), float(row["high"])
    excludes = low > 0 or high < 0
    holm_only = (excludes and head in (UNDECIDED, NO_DIFFERENCE)
                 or (int(row["paper_sign"]) == 0 and reading == HOLDS and excludes))
    return {"reading": head, "why": why,
            "difference": difference(row["estimate"], low, high, row["unit"]),
            "margin": f"±{float(row['margin']):.{d}f} {row['unit']}",
            "seeds": str(int(row["n_seeds"])),
            "holm_only": "after Holm's adjustment" if holm_only else ""}


def one_label(a: dict) -> str:
    """An ``answer``'s one label for a table or line: its plain reading, the reason where
    it has one, and 'after Holm (the interval excludes 0 before)' where it shows no
    difference though the unadjusted interval excludes 0."""
    return (a["reading"] + (f": {a['why']}" if a["why"] else "")
            + (" after Holm (the interval excludes 0 before)" if a["holm_only"] else ""))

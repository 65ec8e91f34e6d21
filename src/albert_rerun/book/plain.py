"""Plain readings: one short phrase for a decision, from one rule.

A registered verdict ("reproduced", "equivalent", "inconclusive", ...) is kept as
registered. Beside it a reader gets one plain reading from a small fixed vocabulary
(the constants below), defined on the how-to-read page. ``plain_reading`` maps a decision's
numbers to it:

- "on the paper's side" or "on the other side" means the difference test rejects no
  difference, after Holm's adjustment where the decision is in a family, with the
  estimate on that side;
- "inside the margin" means the equivalence test (TOST) shows the difference smaller
  than the margin, after the same Holm adjustment as the difference test, so that both
  halves of a reading are judged at one level; a row without the test's p-value falls
  back to its whole 95% interval lying inside the margin;
- where the paper says there is no difference, it holds when the difference is inside
  the margin;
- a failed measured premise (for example "neither model orders cue-free pairs") makes a
  decision not testable, whatever its numbers say.
"""
from __future__ import annotations

import math

from ..studies.decisions import interval_text as _interval

HOLDS = "holds here"
TINY = "holds here, but tiny"
REVERSED = "reversed here"
REVERSED_TINY = "reversed here, but tiny"
NO_DIFFERENCE = "no difference here"
UNDECIDED = "undecided"
NOT_TESTABLE = "not testable here"
DIFFERS = "does not hold here"  # the paper says no difference; the data show one
# the vocabulary, defined in book/how_to_read.md's table
READING_WORDS = (HOLDS, TINY, REVERSED, REVERSED_TINY, NO_DIFFERENCE, DIFFERS, UNDECIDED,
                 NOT_TESTABLE)

def plain_reading(estimate: float, low: float, high: float, margin: float,
                  paper_sign: int, p_difference: float, alpha: float = 0.05,
                  premise: str = "", p_equivalence: float | None = None) -> str:
    """The plain reading of one decision. ``p_difference`` and ``p_equivalence``: the
    difference test's and the TOST's p, Holm-adjusted where the decision is in a family
    (no ``p_equivalence``: "inside the margin" is the whole 95% interval inside it);
    ``premise``: why the comparison is not testable ("" when its premises hold). "Shown"
    means p < ``alpha``."""
    if premise:
        return f"{NOT_TESTABLE}: {premise}"
    if paper_sign not in (-1, 0, 1):
        raise ValueError(f"paper_sign must be -1, 0 or +1, got {paper_sign!r}")
    values = (estimate, low, high, margin, p_difference)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v)
           for v in values):
        raise ValueError(f"the numbers must be real, got {values!r}")
    if not low <= estimate <= high or margin < 0:
        raise ValueError(f"need low <= estimate <= high and a margin >= 0, got {values!r}")
    if p_equivalence is None or (isinstance(p_equivalence, float)
                                 and math.isnan(p_equivalence)):
        inside = -margin <= low and high <= margin
    else:
        inside = p_equivalence < alpha
    if paper_sign == 0:  # the paper says no difference: it holds inside the margin
        return HOLDS if inside else DIFFERS if p_difference < alpha else UNDECIDED
    if not p_difference < alpha or estimate == 0:
        return NO_DIFFERENCE if inside else UNDECIDED
    if (estimate > 0) == (paper_sign > 0):
        return TINY if inside else HOLDS
    return REVERSED_TINY if inside else REVERSED


def _first(row, *names):
    """The first of ``row``'s ``names`` that holds a number (not None or NaN), as a float;
    None where none does."""
    for name in names:
        value = row.get(name)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            return float(value)
    return None


def _text(value) -> str:
    return value if isinstance(value, str) else ""


def row_reading(row, premise: str = "") -> str:
    """The plain reading of one row of a judged family (a profile's or the confirmatory
    one): a gated row is not testable, with its gate's reason; a row carrying a failed
    premise (``premise``, else its ``premise`` column) is not testable, with it; else
    ``plain_reading`` of its numbers at the family's Holm-adjusted difference and
    equivalence tests (the raw ones where the row is outside the family)."""
    from ..stats.inference import GATED
    if row["stage"] == GATED:
        reason = _text(row.get("gate_reason")) or "a model compared does not read context"
        return f"{NOT_TESTABLE}: {reason}"
    premise = premise or _text(row.get("premise"))
    p = _first(row, "p_difference_holm", "p_difference")
    if p is None:  # no p stored: the verdict's own call (a difference shown where it
        # reads reproduced or contradicted)
        p = 0.0 if row.get("verdict_holm") in ("reproduced", "contradicted") else 1.0
    low, high = float(row["low"]), float(row["high"])
    if not (math.isfinite(low) and math.isfinite(high)):  # one seed: no interval
        return f"{NOT_TESTABLE}: {premise or 'one seed, no interval'}"
    p_eq = _first(row, "p_equivalence_holm", "p_equivalence")
    return plain_reading(float(row["estimate"]), low, high, float(row["margin"]),
                         int(row["paper_sign"]), float(p), premise=premise,
                         p_equivalence=p_eq)


def paper_positive(row) -> tuple:
    """(estimate, low, high) of a decision turned so that a positive difference is the
    paper's direction (the cost it claims, the advantage it claims); a claim of no
    difference (paper sign 0) as it is."""
    sign = -1.0 if int(row.get("paper_sign", 0) or 0) < 0 else 1.0
    ends = sorted((sign * float(row["low"]), sign * float(row["high"])))
    return sign * float(row["estimate"]), ends[0], ends[1]


def size(row) -> str:
    """'+0.147 [+0.097, +0.197] nats', paper-positive; one seed: no interval."""
    estimate, low, high = paper_positive(row)
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{_interval(estimate, estimate, estimate, row['unit']).split()[0]} " \
               f"{row['unit']} (one seed, no interval)"
    return f"{_interval(estimate, low, high, row['unit'])} {row['unit']}"

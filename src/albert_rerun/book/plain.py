"""A findings page's plain reading (the how-to-read page's vocabulary) and its one sign:
positive is the paper's direction; a claim of no difference keeps its own."""
from __future__ import annotations

import math

from ..studies.decisions import signed, unit_digits

HOLDS = "holds here"
TINY = "holds here, but tiny"
REVERSED = "reversed here"
REVERSED_TINY = "reversed here, but tiny"
NO_DIFFERENCE = "no difference here"
UNDECIDED = "undecided"
NOT_TESTABLE = "not testable here"
DIFFERS = "does not hold here"  # the paper says no difference; the data show one
READING_WORDS = (HOLDS, TINY, REVERSED, REVERSED_TINY, NO_DIFFERENCE, DIFFERS, UNDECIDED,
                 NOT_TESTABLE)
# why a reading of no difference sits beside an unadjusted interval that excludes 0
HOLM_NOTE = "0 excluded only before Holm's adjustment"
# why a reading of a difference sits beside a 95% interval inside the margin
INSIDE_NOTE = "too small to matter by its interval, though not after Holm's adjustment"
# why "undecided" sits beside a 95% interval inside the margin
INSIDE_HOLM_NOTE = "inside the margin only before Holm's adjustment"


def plain_reading(estimate: float, low: float, high: float, margin: float,
                  paper_sign: int, p_difference: float, alpha: float = 0.05,
                  premise: str = "", p_equivalence: float | None = None) -> str:
    """The plain reading of one decision from its (Holm-adjusted) p-values."""
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


def _number(row, *names):
    for name in names:
        value = row.get(name)
        if value is not None and not (isinstance(value, float) and math.isnan(value)):
            return float(value)
    return None


def row_reading(row, premise: str = "") -> str:
    """A judged row's plain reading ('not testable here: <reason>' where gated)."""
    from ..stats.inference import GATED
    if row["stage"] == GATED:
        reason = row.get("gate_reason")
        reason = reason if isinstance(reason, str) and reason else \
            "a model compared does not read context"
        return f"{NOT_TESTABLE}: {reason}"
    if not premise and isinstance(row.get("premise"), str):
        premise = row.get("premise")
    p = _number(row, "p_difference_holm", "p_difference")
    if p is None:  # no p stored: the verdict's own call
        p = 0.0 if row.get("verdict_holm") in ("reproduced", "contradicted") else 1.0
    low, high = float(row["low"]), float(row["high"])
    if not (math.isfinite(low) and math.isfinite(high)):  # one seed: no interval
        return f"{NOT_TESTABLE}: {premise or 'one seed, no interval'}"
    return plain_reading(float(row["estimate"]), low, high, float(row["margin"]),
                         int(row["paper_sign"]), float(p), premise=premise,
                         p_equivalence=_number(row, "p_equivalence_holm", "p_equivalence"))


def turned_label(label: str) -> str:
    """'[what: ]A minus B[ (note)][, rest]' as '[what: ]B minus A[ (note)][, rest]' (a
    label without ' minus ' as it is). A parenthesis of over three words is a note on the
    whole label; a shorter one, such as '(all shared)', belongs to its term."""
    head, comma, rest = label.partition(", ")
    what, colon, head = head.rpartition(": ")
    a, minus, b = head.partition(" minus ")
    term, paren, note = b.partition(" (")
    if paren and len(note.split()) > 3:
        b, note = term, paren + note
    else:
        note = ""
    return f"{what}{colon}{b} minus {a}{note}{comma}{rest}" if minus else label


def paper_positive(row):
    """A copy of a row (or dict) with positive the paper's direction."""
    row = row.copy()
    if int(row.get("paper_sign", 0) or 0) >= 0:
        return row
    row["estimate"], row["low"], row["high"] = (-float(row["estimate"]), -float(row["high"]),
                                                -float(row["low"]))
    row["paper_sign"] = 1
    if "label" in row:
        row["label"] = turned_label(str(row["label"]))
    return row


def telling_digits(ends, margin: float, unit: str) -> int:
    """The fewest decimals, from the unit's own, at which each of ``ends`` shows on its true
    side of 0 and of the margin, so that no label disagrees with the numbers beside it
    (an interval inside the margin must not print an end equal to it)."""
    digits = unit_digits(unit)
    bounds = (0.0, float(margin), -float(margin))
    for digits in range(digits, digits + 3):
        shown = [(round(e, digits), round(b, digits), e > b) for e in map(float, ends)
                 for b in bounds if e != b and math.isfinite(e)]
        if all(e != b and (e > b) == above for e, b, above in shown):
            return digits
    return digits


def difference(estimate, low, high, unit: str, unit_first: bool = True,
               digits: int | None = None, margin: float | None = None) -> str:
    """'+0.022 nats [+0.017, +0.027]' (``unit_first``) or '+0.022 [+0.017, +0.027] nats';
    ``digits``: decimals other than the unit's; ``margin``: those ``telling_digits`` picks."""
    if not (math.isfinite(float(low)) and math.isfinite(float(high))):
        return f"{signed(float(estimate), unit_digits(unit))} {unit} (one seed: no interval)"
    if margin is not None:
        digits = telling_digits((low, high), margin, unit)
    number, low, high = (signed(float(x), unit_digits(unit) if digits is None else digits)
                         for x in (estimate, low, high))
    return f"{number} {unit} [{low}, {high}]" if unit_first else f"{number} [{low}, {high}] {unit}"


def size(row) -> str:
    """'+0.147 [+0.097, +0.197] nats', paper-positive."""
    r = paper_positive(row)
    return difference(r["estimate"], r["low"], r["high"], r["unit"], False,
                      margin=r["margin"] if "margin" in r else None)


def chapter_runs(profile, conditions, seeds=None, device="auto", train_missing=False):
    """(profile, seeds, rungs, margins, runs) of ``conditions`` (a dict or a function)."""
    from ..profiles import resolve
    from ..studies import conditions as C
    from ..studies.decisions import levels, load_runs, margins
    profile = resolve(profile)  # a notebook passes the name
    seeds = seeds or C.default_seeds(profile)
    rungs = levels(profile)
    found = conditions(profile) if callable(conditions) else conditions
    return profile, seeds, rungs, margins(rungs), load_runs(profile, found, seeds, device,
                                                            train_missing)

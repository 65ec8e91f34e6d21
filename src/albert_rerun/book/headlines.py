"""Each chapter's headline decision, and a judged row's first-screen values, paper-positive."""
from __future__ import annotations

from dataclasses import dataclass

from .plain import (DIFFERS, HOLDS, HOLM_NOTE, INSIDE_HOLM_NOTE, INSIDE_NOTE,  # noqa: F401
                    NO_DIFFERENCE, REVERSED, UNDECIDED, difference, paper_positive,
                    row_reading, telling_digits, turned_label)


@dataclass(frozen=True)
class Headline:
    """The one decision that answers a chapter's question."""

    key: str  # the decision of the family that answers it


HEADLINES = {"asymmetry": Headline("asymmetry/attention-ffn/small-E"),
             "sop_nsp": Headline("sop_nsp/sop-pairs/sop-nsp"),
             "dropout": Headline("dropout/ce"),
             "wall_clock": Headline("wall_clock/equal-time"),
             "transitions": Headline("transitions/oscillation-l2"),
             "embedding_sweep": Headline("embedding/all-shared")}
# the primary decisions that are not a chapter's headline: (their chapter, their name)
EXTRA = {"confirm/sharing-cost": ("asymmetry", "the cost of sharing every layer")}


def holm_only(row, head: str) -> bool:
    """Whether a reading of no difference sits beside an unadjusted interval excluding 0."""
    excludes = float(row["low"]) > 0 or float(row["high"]) < 0
    return excludes and (head in (UNDECIDED, NO_DIFFERENCE)
                         or int(row["paper_sign"]) == 0 and head == HOLDS)


def inside_note(row, head: str) -> str:
    """Why a reading sits beside a 95% interval inside the margin (its TOST fell short
    after Holm's adjustment); '' elsewhere."""
    margin = float(row["margin"])
    if not -margin <= float(row["low"]) <= float(row["high"]) <= margin:
        return ""
    if head == UNDECIDED:
        return INSIDE_HOLM_NOTE
    shown = head == DIFFERS or head in (HOLDS, REVERSED) and int(row["paper_sign"]) != 0
    return INSIDE_NOTE if shown else ""


def answer(row, premise: str = "") -> dict:
    """A judged row's first-screen values, paper-positive; a row's ``note`` is its why
    where no premise fails."""
    row = paper_positive(row)
    head, _, why = row_reading(row, premise).partition(": ")
    note = row.get("note")
    d = telling_digits((row["low"], row["high"]), row["margin"], row["unit"])
    return {"reading": head, "why": why or (note if isinstance(note, str) else ""),
            "difference": difference(row["estimate"], row["low"], row["high"], row["unit"],
                                     digits=d),
            "margin": f"±{float(row['margin']):.{d}f} {row['unit']}",
            "seeds": str(int(row["n_seeds"])),
            "holm_only": HOLM_NOTE if holm_only(row, head) else inside_note(row, head)}


def one_label(a: dict) -> str:
    """An ``answer``'s one label: reading, reason, and the Holm note where it applies."""
    return (a["reading"] + (f": {a['why']}" if a["why"] else "")
            + (f" ({a['holm_only']})" if a["holm_only"] else ""))

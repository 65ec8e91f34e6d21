"""The introduction's first screen as values (``book/intro.md`` writes the sentences).

One line per claim of the paper: its plain reading (``plain.row_reading``), its size
with the 95% interval in one sign convention, positive where the paper's direction is
(``paper_positive``), and, for the book as a whole, which measured claims hold, go the
other way or stay open; then the scale of the runs against ALBERT-base. Where the
confirmatory test decided a claim (chapters 3 to 6) its row is the one shown; the other
claims show the published profile's. ``values`` is a ``book.values`` provider.
"""
from __future__ import annotations

import math

from ..profiles import ResolvedProfile, resolve
from . import plain as PL
from .headlines import EXTRA, HEADLINES

# the introduction's claim names: its {{ intro_<name>_... }} keys, the decision behind
# each (a chapter's headline, or an ``EXTRA`` key) and a short name for the lists
LINES = {"asymmetry": ("asymmetry", "the asymmetry"),
         "sharing": ("confirm/sharing-cost", "sharing's cost"),
         "sop": ("sop_nsp", "SOP vs NSP"),
         "dropout": ("dropout", "dropout"),
         "equal_time": ("wall_clock", "equal time"),
         "transitions": ("transitions", "transitions"),
         "embedding": ("embedding_sweep", "a small E")}
HOLD = (PL.HOLDS, PL.TINY)
AGAINST = (PL.REVERSED, PL.REVERSED_TINY, PL.DIFFERS)


def reading(row) -> str:
    """The plain reading, with why in a few words where its label could seem to
    disagree with the interval beside it: 'undecided (after Holm's adjustment)' for an
    interval that excludes 0, which way an undecided estimate leans, a failed premise's
    first clause."""
    text = PL.row_reading(row)
    head, _, reason = text.partition(": ")
    if head == PL.NOT_TESTABLE:
        return f"{head} ({reason.split(', so ')[0].split('. ')[0].split(' (')[0]})"
    if head != PL.UNDECIDED:
        return head
    estimate, low, high = PL.paper_positive(row)
    if low > 0 or high < 0:
        return f"{head} (after Holm's adjustment)"
    if int(row.get("paper_sign", 0) or 0) and estimate:
        side = "the paper's side" if estimate > 0 else "the other side"
        return f"{head}, leaning to {side}"
    return head


def rows(profile: ResolvedProfile) -> dict:
    """{line name: the row shown}: the confirmatory row where the test is judged (its
    first registered decision of the claim, or an ``EXTRA`` key), else the profile's
    family's; a line with neither is left out."""
    from .confirmatory import confirmatory_extras, confirmatory_rows
    from ..studies.decisions import MissingRuns
    from .ledger import book_family
    confirmed = {**confirmatory_rows(), **confirmatory_extras()}
    try:
        family = book_family(profile)
    except MissingRuns:  # nothing stored at this profile yet
        family = None
    out = {}
    for name, (source, _) in LINES.items():
        if source in confirmed:
            out[name] = confirmed[source]
        else:
            key = HEADLINES[source].key if source in HEADLINES else source
            if family is not None and key in family.index:
                out[name] = family.loc[key]
    return out


def below_margin(row) -> str:
    """'interval under the margin at 4x, not shown after Holm' where a row's whole 95%
    interval lies inside its margin
    (a difference shown, but smaller than the margin counts), else ''; 'at 4x' for a
    confirmatory row (the compute ladder's 4x budget)."""
    if row is None or not math.isfinite(float(row.get("margin", math.nan))):
        return ""
    _, low, high = PL.paper_positive(row)
    margin = float(row["margin"])
    if not (math.isfinite(low) and math.isfinite(high)) or not -margin <= low <= high <= margin:
        return ""
    if "stage" in row and "tiny" in PL.row_reading(row):  # shown inside: the label says so
        return ""
    return "interval under the margin" + (" at 4x" if "holm_tests" in row else "") + \
        ", not shown after Holm"


def values(profile: ResolvedProfile | str) -> dict:
    """The introduction's keys: ``intro_<line>_reading`` and ``intro_<line>_size`` for
    each line of ``LINES`` (a line without a result reads 'not run yet'); the lists
    ``intro_hold``, ``intro_against``, ``intro_open`` of the measured claims; the
    source of chapters 3 to 6 (``intro_source``); and the scale (``scale_values``)."""
    profile = resolve(profile)
    found = rows(profile)
    out, lists = {}, {"hold": [], "against": [], "open": []}
    for name, (_, short) in LINES.items():
        row = found.get(name)
        out[f"intro_{name}_reading"] = reading(row) if row is not None else "not run yet"
        out[f"intro_{name}_size"] = PL.size(row) if row is not None else "no result yet"
        head = PL.row_reading(row).partition(": ")[0] if row is not None else ""
        part = "hold" if head in HOLD else "against" if head in AGAINST else "open"
        lists[part].append(short + (f" ({below_margin(row)})"
                                    if part != "open" and below_margin(row) else ""))
    for part, names in lists.items():
        out[f"intro_{part}"] = "; ".join(names) or "none"
    seeds = {int(r["n_seeds"]) for n, r in found.items()
             if n in ("asymmetry", "sop", "dropout", "equal_time") and "holm_tests" in r}
    out["intro_source"] = (f"the pre-registered test, {max(seeds)} fresh seeds" if seeds
                           else f"the `{profile.name}` profile, exploratory")
    return {**out, **exact_values(), **scale_values()}


def exact_values() -> dict:
    """The exact claims (chapters 1 and 2, counted, no seeds): 'holds exactly' where
    every count the paper prints is matched, else which share is; the embedding share
    of BERT-base."""
    from .exact import embedding_share, sharing_reductions
    one, two = embedding_share().texts, sharing_reductions().texts

    def reading(matched: int, total: int) -> str:
        return ("holds exactly" if matched == total else
                f"holds; {matched} of the {total} printed counts match")
    return {"intro_share_reading": reading(one["table3_matched"], one["table3_rows"]),
            "intro_embedding_share": f"{one['bert_embedding_share']:.1f}%",
            "intro_reductions_reading": reading(two["counts_matched"], two["counts_total"]),
            "intro_reduction_all": f"{two['reduction_all']:.0f}%"}


def scale_values() -> dict:
    """The runs' size and length against ALBERT-base's: parameters of the base model
    (the `cpu` sizes, which every budget of the compute ladder keeps), and the steps and
    tokens of the longest budget (16x), each with its ratio to the paper's."""
    from .text import times
    from ..studies.ladder import RUNGS
    from .scale import _count, scale_numbers
    n = scale_numbers(resolve("cpu"))
    tokens = n["tokens"] * RUNGS["16x"] / n["steps"]
    return {"intro_params": f"{n['params'] / 1e6:.2f} million",
            "intro_params_times": times(n["paper_params"] / n["params"]),
            "intro_paper_params": f"{n['paper_params'] / 1e6:.0f} million",
            "intro_steps_16x": f"{RUNGS['16x']:,}",
            "intro_tokens_16x": _count(tokens),
            "intro_tokens_times": times(n["paper_tokens"] / tokens),
            "intro_paper_tokens": _count(n["paper_tokens"])}

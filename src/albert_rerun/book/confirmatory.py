"""The confirmatory verdicts as a reader meets them: each claim's first registered
primary decision judged on the fresh seeds (``confirmatory_rows``), once every
confirmatory run is stored and nothing before; turned to the chapter's sign
(``in_chapter_sign``); with what a reader must know beside it (``confirm_caveats``,
``sop_words``); as one more family beside the profiles'
(``with_confirmatory``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..studies.decisions import capital, interval_text
from .headlines import EXTRA, HEADLINES, term

CONFIRMATORY = "confirmatory"  # its name where it stands beside the profiles


def _p(value: float) -> str:
    """'= 0.022' or '< 0.001': ``confirm_report._p``'s value after 'p' in a sentence."""
    from ..studies.confirm_report import _p as p_value
    return "< 0.001" if value < 0.001 else f"= {p_value(value)}"


def confirmatory_rows(store=None) -> dict:
    """{claim: its first registered primary decision's row}, judged on the confirmatory
    seeds, once every confirmatory run is stored; {} before (nothing is computed). Each
    row also carries ``holm_tests`` (the primary family's) and ``caveat`` (what a reader
    must know beside its verdict, from ``confirm_caveats``)."""
    from ..studies import confirm_analysis, confirm_design, confirm_report
    if not confirm_analysis.complete(store):
        return {}
    families = confirm_analysis.confirmatory_families(store)
    primary = families["primary"]
    caveats = confirm_caveats(store, families)
    out = {}
    for spec in confirm_design.PRIMARY:
        if spec.claim not in out:
            row = primary.loc[spec.key].copy()
            row["holm_tests"] = confirm_report.holm_tests(primary)
            row["caveat"] = caveats.get(spec.claim, "")
            row["caveat_short"] = caveats.get(f"{spec.claim}_short", "")
            row["premise"] = caveats.get(f"{spec.claim}_premise", "")
            if spec.claim == "wall_clock" and caveats.get("budget_only"):
                row["label"] = str(row["label"]).replace("equal time", "fixed step budget")
            out[spec.claim] = row
    return out


def confirmatory_extras(store=None) -> dict:
    """{key: row} of the primary decisions in ``EXTRA`` (not a chapter's headline),
    judged once the design is complete; {} before."""
    from ..studies import confirm_analysis, confirm_report
    if not confirm_analysis.complete(store):
        return {}
    primary = confirm_analysis.confirmatory_families(store)["primary"]
    out = {}
    for key in EXTRA:
        if key in primary.index:
            row = primary.loc[key].copy()
            row["holm_tests"] = confirm_report.holm_tests(primary)
            out[key] = row
    return out


CUE_FREE_WORDS = (f"probes on {term('cue-free pairs')}, which hold no "
                  f"{term('segment-cut cue')}")


def confirm_caveats(store=None, families: dict | None = None) -> dict:
    """{claim: its confirmatory caveat}, once the design is complete ({} before: nothing
    is read): the SOP decision reads cue-free pairs; the equal-time one is a fixed step
    budget of ALBERT and BERT as configured, with the seeds' measured seconds ratio, the
    side a ratio below 1 favours (amendment 5.2; a reviewer: it shortchanges the wide
    model) and the learning-rate check's words where 5e-3 was not within the margin of
    the best rate (amendment 1.1). ``budget_only``: the claims whose median ratio lies
    outside 0.9 to 1.1, so that their label says "fixed step budget". ``families``: the
    judged families where the caller has them
    (``confirm_analysis.confirmatory_families``)."""
    from ..studies import confirm_analysis, confirm_design, confirm_report
    if not confirm_analysis.complete(store):
        return {}
    families = families or confirm_analysis.confirmatory_families(store)
    out = {"sop_nsp": CUE_FREE_WORDS, "budget_only": False}
    record = confirm_design.equal_time_record(store)
    try:
        frame = confirm_analysis.confirmatory_frame(store=store)
        ratios = confirm_analysis.time_ratios(frame)
    except confirm_design.NotComplete:  # no measurement or runs stored (a test's store)
        frame, ratios = pd.DataFrame(), pd.DataFrame()
    out.update(sop_words(frame, families))
    if record is not None and len(ratios):
        column = ratios["wide / BERT-style seconds"].astype(float)
        median, flagged = round(float(column.median()), 2), int(ratios["flagged"].sum())
        # amendment 5.2: a median outside 0.9-1.1 makes it a fixed step budget's
        # comparison (read on the median as shown, so that text and rule agree)
        out["budget_only"] = bool(np.isfinite(median) and not 0.9 <= median <= 1.1)
        budget = ". So this compares a fixed step budget, not equal time" \
            if out["budget_only"] else ""
        words = confirm_report.lr_check_words(store) or ""
        size = _embedding_size_words(families)
        # short sentences, each a fact (issue #41: this caveat was one sentence of over
        # a hundred words); all of it, as amendments 6.5 and 8.2 ask
        out["wall_clock"] = (
            f"the wide model (E 32, all shared, H 128) trained a fixed "
            f"{record['steps']:,} steps. That count was timed for {term('equal time')} "
            f"with the BERT-style model (E = H = 64) on one machine. The wide runs' "
            f"measured seconds were a median {median:.2f} of the BERT-style runs' "
            f"({column.min():.2f} to {column.max():.2f}; {flagged} of {len(ratios)} seeds "
            f"outside 0.9 to 1.1). Both step counts were fixed, so a ratio below 1 gives "
            f"the wide model less time, which favours \"contradicted\"{budget}"
            + (f". {capital(words)}" if words else "")
            + (f". {size}" if size else ""))
        out["wall_clock_short"] = (
            f"{'a fixed step budget' if out['budget_only'] else 'equal time'}: seconds "
            f"ratio median {median:.2f}, {flagged} of {len(ratios)} seeds outside 0.9 to "
            f"1.1" + (f"; {words}" if words else ""))
    return out


def _embedding_size_words(families: dict) -> str:
    """The equal-time comparison's confound (amendment 1.2), read from the secondary
    decision ``explore/embedding-size`` of the judged ``families``: what E 32 against
    E 64 alone is worth in the not-shared model, and its share of the equal-time gap;
    '' where not judged."""
    secondary, primary = families.get("secondary"), families["primary"]
    if secondary is None or "explore/embedding-size" not in secondary.index:
        return ""
    size, gap = secondary.loc["explore/embedding-size"], primary.loc["confirm/equal-time"]
    share = abs(float(size["estimate"])) / abs(float(gap["estimate"]))
    # in this gap's sign: what keeping E 32 costs (registered as E 64 minus E 32; a
    # reviewer: the registered sign read backwards beside the gap)
    cost = interval_text(-size["estimate"], -size["high"], -size["low"], "nats")
    text = (f"The wide model also keeps E 32 against the BERT-style model's 64. In the "
            f"not-shared H 64 model, E 32 costs {cost} nats against E 64 (secondary, "
            f"exploratory): {share:.0%} of this gap")
    if "confirm/sharing-cost" in primary.index:
        sharing = primary.loc["confirm/sharing-cost"]
        text += (f". Sharing every layer at E = H = 64 costs "
                 f"{interval_text(sharing['estimate'], sharing['low'], sharing['high'], 'nats')}"
                 f" nats")
    return text + (". These effects were measured in other models and need not add. So "
                   "this is a reading of the gap, not a test of it")


def sop_words(frame: pd.DataFrame, families: dict | None = None) -> dict:
    """The SOP decision's caveat from its runs (two reviewers: "inconclusive" hid that
    neither model orders cue-free pairs): the SOP-trained arm's cue-free probe against
    the majority label (amendment 1.4's reading) and, where that interval holds 0, the
    secondary decision on the original pairs, which keep the cut cue, from the judged
    ``families`` (judged here where not given). ``sop_nsp_premise``: "neither model
    orders cue-free pairs" where neither arm's probe nor the SOP-trained model's own
    head is above the majority label (the plain reading's failed premise,
    ``plain.row_reading``). {} where the runs do not carry the cue-free evaluation."""
    from ..studies import confirm_analysis, confirm_design
    albert = frame[frame["condition"] == confirm_design.ALBERT] if len(frame) else frame
    nsp = frame[frame["condition"] == confirm_design.NSP] if len(frame) else frame
    above = confirm_analysis.above_majority(albert, "sop_cuefree_accuracy_probe")
    if above is None:
        return {}
    gain = interval_text(above.mean, above.low, above.high, "points")
    pairs = CUE_FREE_WORDS
    if not above.low <= 0 <= above.high:
        return {"sop_nsp": f"{pairs}. There the SOP-trained model's probe is {gain} "
                           f"points above the majority label",
                "sop_nsp_short": f"cue-free pairs; the SOP-trained probe {gain} points "
                                 f"above the majority label"}
    # what was measured, no more (a reviewer: a frozen-encoder probe is not the model,
    # and amendment 1.4's reading was registered for "equivalent" or "contradicted");
    # the model's own SOP head, scored on the same pairs, answers the first point
    own = (confirm_analysis.above_majority(albert, "sop_cuefree_accuracy_head")
           if "sop_accuracy_head" in albert else None)
    other = confirm_analysis.above_majority(nsp, "sop_cuefree_accuracy_probe")
    head = albert.get("sop_cuefree_accuracy_head")
    out = {}
    if own is not None and own.low <= 0:  # the head, too, no better than the majority
        text = (f"{pairs}. On them neither the SOP-trained model's frozen-encoder probe "
                f"nor its own SOP head orders the pairs better than the majority label. "
                f"Against that label the probe scores {gain} points, the head "
                f"{interval_text(own.mean, own.low, own.high, 'points')}. The head "
                f"scores {100 * head.mean():.1f}% here and "
                f"{100 * albert['sop_accuracy_head'].mean():.1f}% on the original pairs "
                f"(descriptive)")
        if other is not None:  # the premise's other half, shown (a skeptical review)
            text += (f". The NSP-trained model's probe scores "
                     f"{interval_text(other.mean, other.low, other.high, 'points')} points "
                     f"against the same label")
        if other is None or other.low <= 0:  # the NSP-trained probe, too
            # checked after the verdicts were seen, not registered: say so where it is read
            out["sop_nsp_premise"] = ("neither model orders cue-free pairs (a check made "
                                      "after the results)")
    else:
        text = (f"{pairs}. On them the frozen-encoder probe of the SOP-trained model "
                f"finds no sentence order: it scores {gain} points against the majority "
                f"label")
        if own is not None:  # the head reads more than the probe: say so
            text += (f". The model's own SOP head scores "
                     f"{interval_text(own.mean, own.low, own.high, 'points')} points "
                     f"above it")
    secondary = (families or confirm_analysis.confirmatory_families())["secondary"]
    if "explore/sop-cut-pairs" in secondary.index:
        cut = secondary.loc["explore/sop-cut-pairs"]
        text += (f". On the original pairs, which keep the cue, the SOP-trained probe "
                 f"beats the NSP-trained one by "
                 f"{interval_text(cut['estimate'], cut['low'], cut['high'], 'points')} "
                 f"points (secondary, exploratory)")
    short = f"on cue-free pairs; the SOP-trained probe minus the majority label: {gain}"
    if own is not None:
        short += (f", its own SOP head's: "
                  f"{interval_text(own.mean, own.low, own.high, 'points')}")
    return {"sop_nsp": text, "sop_nsp_short": short + " points", **out}


def in_chapter_sign(claim: str, row):
    """A confirmatory row as its chapter reads it: where the registration took the
    difference the other way round (``confirm_report.REVERSED``), the same comparison with
    the opposite sign (estimate and interval negated, the paper's sign too); verdicts,
    p-values and stage are the same either way. ``registered_label`` keeps the
    registration's words; a row already turned is returned as it is."""
    from ..studies.confirm_report import REVERSED
    row = row.copy()
    if "registered_label" in row.index:
        return row
    row["registered_label"] = row["label"]
    if claim in REVERSED:
        row["estimate"], row["low"], row["high"] = (
            -float(row["estimate"]), -float(row["high"]), -float(row["low"]))
        row["paper_sign"] = -int(row["paper_sign"])
        row["label"] = turned_label(claim, str(row["label"]))
    return row


def turned_label(claim: str, label: str) -> str:
    """A registered label in its chapter's words where the chapter reads the
    difference the other way round (``confirm_report.REVERSED``): the turned words,
    then whatever followed the first comma ('..., E 32')."""
    from ..studies.confirm_report import REVERSED
    rest = label.partition(", ")[2]
    return REVERSED[claim] + (f", {rest}" if rest else "")


def confirmatory_family(store=None) -> pd.DataFrame:
    """The confirmatory results as one more family beside the profiles' (for the
    results table and the figures), indexed by each claim's headline key, in the
    chapters' sign; empty before the design is complete."""
    rows = []
    for claim, row in confirmatory_rows(store).items():
        row = in_chapter_sign(claim, row)
        row.name = HEADLINES[claim].key
        rows.append(row)
    for key, row in confirmatory_extras(store).items():
        row.name = key
        rows.append(row)
    return pd.DataFrame(rows)


def with_confirmatory(families: dict, store=None) -> dict:
    """``families`` with the confirmatory family first where it is judged."""
    family = confirmatory_family(store)
    return {CONFIRMATORY: family, **families} if len(family) else dict(families)


def confirmatory_secondary(store=None, claims=("transitions", "embedding_sweep")) -> dict:
    """{claim: [rows]} of the registered secondary decisions of the claims that have no
    primary one (chapters 7 and 8), judged on the confirmatory seeds with Holm's
    adjustment over the secondary family: exploratory by registration; {} before the
    design is complete."""
    from ..studies import confirm_analysis, confirm_design
    if not confirm_analysis.complete(store):
        return {}
    secondary = confirm_analysis.confirmatory_families(store)["secondary"]
    primary_claims = {s.claim for s in confirm_design.PRIMARY}
    out = {}
    for spec in confirm_design.SECONDARY:
        if spec.claim not in primary_claims and spec.claim in claims:
            out.setdefault(spec.claim, []).append(secondary.loc[spec.key])
    return out

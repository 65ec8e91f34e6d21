"""What a reader meets first: each chapter's bottom line, the book's results table and
the scale of its runs against the paper's, in plain words (issue #26).

Everything here reads a profile's decision family (``ledger.book_family``); the words
follow the numbers (``direction``), never the other way round. A chapter glues its
``bottom_line`` right under its title; the introduction and the ledger show
``results_table`` and ``scale_text`` first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..studies.decisions import interval_text, unit_digits
from ..stats.inference import EARLY, GATED, NO_MODEL, PAST
from ..chapters.text import times, tokens_per_run

GLOSSARY = "how_to_read"  # book/how_to_read.md: the glossary and the shared rules
PILOT = "cpu-long"  # the pilot: the cpu sizes trained 4x longer, seeds 0-2


@dataclass(frozen=True)
class Headline:
    """The one decision that answers a chapter's question, and how to say its result."""

    question: str  # the reader's question, answered by the box
    paper: str  # the paper's claim with its number (quoted from the paper)
    key: str  # the decision of the family that answers it
    lower: str  # what a difference below 0 (interval excluding 0) means, in words
    higher: str  # the same above 0
    confirmatory: bool = False  # a pre-registered test of it is training (issue #25)


HEADLINES = {
    "asymmetry": Headline(
        "Does sharing attention cost less than sharing the feed-forward block (FFN)?",
        "at E = 128, sharing only attention changes the downstream average by +0.1 "
        "points, sharing only the FFN by -1.4: attention sharing is nearly free "
        "(Table 4; E = 128 is the paper's smaller embedding size, as our E = 32 is ours)",
        "asymmetry/attention-ffn/small-E",
        "attention-shared predicts [MASK] better: sharing attention costs less",
        "FFN-shared predicts [MASK] better: sharing the FFN costs less", True),
    "sop_nsp": Headline(
        "Does sentence-order prediction (SOP) beat next-sentence prediction (NSP)?",
        "on the sentence-order task an SOP-trained model scores 86.5%, an NSP-trained "
        "one 52.0% (chance): +34.5 points (Table 5)",
        "sop_nsp/sop-pairs/sop-nsp",
        "the NSP-trained model's probe orders the held-out pairs better",
        "the SOP-trained model's probe orders the held-out pairs better (pairs that keep "
        "the segment-cut cue, and a frozen-encoder probe where the paper scores the "
        "models' own heads; on whole-sentence pairs the pilot's models are at chance: "
        "the chapter's last sections)", True),
    "dropout": Headline(
        "Does dropout hurt?",
        "removing dropout raises ALBERT-xxlarge's downstream average by +0.3 points "
        "(Table 8)",
        "dropout/ce",
        "without dropout the model predicts [MASK] better: dropout hurts",
        "with dropout the model predicts [MASK] better: dropout helps", True),
    "wall_clock": Headline(
        "Does a wide ALBERT beat BERT in the same training time?",
        "ALBERT-xxlarge beats BERT-large by +1.5 points of downstream average at equal "
        "training time (Table 6)",
        "wall_clock/equal-time",
        "the wide ALBERT-style model predicts [MASK] better",
        "the BERT-style model predicts [MASK] better (read it with the chapter's "
        "equal-time section: the wide runs did not take the BERT-style runs' time, and "
        "their learning rate came from a sweep whose rates had all yet to leave the "
        "early loss plateau)", True),
    "transitions": Headline(
        "Are layer-to-layer transitions smoother under sharing?",
        "ALBERT's transitions are much smoother than BERT's (Figure 1, no numbers)",
        "transitions/oscillation-l2",
        "the ALBERT-style model's L2 curve oscillates more",
        "the BERT-style model's L2 curve oscillates more: ALBERT-style is smoother"),
    "embedding_sweep": Headline(
        "With all layers shared, is a small embedding size E best?",
        "all-shared ALBERT-base is +0.3 points better at E = 128 than at E = 768 "
        "(Table 3)",
        "embedding/all-shared",
        "the small E predicts [MASK] better",
        "the large E predicts [MASK] better"),
}

def _table4(e: int, scheme: str) -> float:
    from ..paper import TABLE4_AVG
    return TABLE4_AVG[(e, scheme)]


# the primary decisions that are not a chapter's headline (the confirmatory family's
# second decision of claim 3; a reviewer: the clearest reproduction was missing from the
# introduction), each with the chapter it belongs to
EXTRA = {
    "confirm/sharing-cost": ("asymmetry", Headline(
        "Does sharing every layer cost accuracy?",
        f"at E = 768, all shared {_table4(768, 'all')} against not shared "
        f"{_table4(768, 'none')} downstream average: "
        f"{_table4(768, 'all') - _table4(768, 'none'):+.1f} points (Table 4)",
        "confirm/sharing-cost",
        "the all-shared model predicts [MASK] better",
        "the not-shared model predicts [MASK] better: sharing every layer costs")),
}
EXTRA_NAMES = {"confirm/sharing-cost": "the cost of sharing every layer"}


# verdict -> plain words, for a reader who has not read the rules yet
PLAIN = {"reproduced": "reproduced: the paper's direction, shown",
         "contradicted": "contradicted: the other direction, shown",
         "equivalent": "equivalent: any difference is smaller than the margin",
         "inconclusive": "inconclusive: the data cannot tell",
         "not testable at this scale": "not testable: a model compared does not yet "
                                       "read context"}


def term(word: str, text: str | None = None) -> str:
    """A MyST link to ``word`` in the glossary (``{term}`` role), shown as ``text``."""
    return f"{{term}}`{text} <{word}>`" if text else f"{{term}}`{word}`"


def direction(row, headline: Headline) -> str:
    """What the interval says, in words: a direction where it excludes 0, else whether
    it stays within the margin."""
    low, high, margin = float(row["low"]), float(row["high"]), float(row["margin"])
    if not (np.isfinite(low) and np.isfinite(high)):
        return "one seed only, so no direction can be shown"
    inside = -margin < low and high < margin
    if low > 0 or high < 0:
        words = headline.higher if low > 0 else headline.lower
        if inside and row.get("verdict_holm") in ("reproduced", "contradicted"):
            # the TOST failed at Holm's level: the interval's place, not a claim
            # (a reviewer: "by less than the margin" beside "Holm withheld that claim")
            return words + ", its 95% interval inside the margin"
        if inside:
            return words + ", by less than the margin"
        # the interval is unadjusted: where Holm's verdict does not follow it, say so
        # (review: "dropout hurts" stood beside "inconclusive")
        if row.get("verdict_holm") == "inconclusive":
            return "at 5% before Holm's adjustment only, " + words
        return words
    if inside:
        return "no difference larger than the margin"
    # a reviewer: "the interval is wide" was said of [-1.5, +2.1] against a margin of 2,
    # and hid that the asymmetry's estimate leans against the paper
    sign, paper = int(np.sign(float(row["estimate"]))), int(row.get("paper_sign", 0) or 0)
    lean = ("" if sign == 0 or paper == 0 else
            "; the estimate leans to the paper's side" if sign == paper else
            "; the estimate leans against the paper's direction")
    return f"no clear difference (the interval holds 0{lean})"


def stage_words(row) -> str:
    """How far the models got: 'early in training (the weakest model 34% of the way from
    the unigram to the bigram rung)'."""
    stage, level = row["stage"], row.get("weakest_level", np.nan)
    if stage == GATED:
        return f"not testable ({row.get('gate_reason') or 'a model does not read context'})"
    if stage == EARLY:
        return (f"early in training (the weakest model {level:.0%} of the way from the "
                f"unigram to the bigram rung)")
    if stage == PAST:
        return "past the bigram rung"
    if stage == NO_MODEL:
        return "a check of the test sets (no trained model)"
    return str(stage)


def short_stage(row) -> str:
    """'early training: weakest arm at 72%': the stage part of a judged row's
    ``verdict_staged`` (the list on the first screen carries each verdict's stage, as
    the boxes do), else ``stage_words``."""
    staged = row.get("verdict_staged", "")
    if isinstance(staged, str) and ", " in staged:
        return staged.partition(", ")[2]
    return stage_words(row)


def book_verdict(row) -> str:
    """The book's verdict: Holm-adjusted, 'not testable at this scale' where gated."""
    return "not testable at this scale" if row["stage"] == GATED else row["verdict_holm"]


def raw_note(row) -> str:
    """'at 5% before Holm: reproduced' where the raw verdict differs from Holm's in a
    judged decision of the family, else ''."""
    holm, raw = row["verdict_holm"], row["verdict"]
    if row["stage"] == GATED or holm == raw or not row.get("in_family", True):
        return ""
    return f"at 5% before Holm: {raw}"


def verdict_of(row) -> str:
    """The Holm-adjusted verdict (the book's), raw at 5% beside it where they differ."""
    note = raw_note(row)
    return f"{book_verdict(row)} ({note})" if note else book_verdict(row)


def unit_text(unit: str, link: bool = False) -> str:
    """The unit, 'nats' linked to the glossary where ``link``."""
    return term("nats") if link and unit == "nats" else unit


def numbers(row, link: bool = False) -> str:
    """'-0.002 nats [-0.025, +0.021], margin ±0.011': the estimate, its 95% interval
    and the margin, all to the unit's decimals; with one seed, no interval (never
    '[-inf, +inf]'). ``link``: the unit and 'margin' link to the glossary."""
    unit, d = row["unit"], unit_digits(row["unit"])
    margin = (term("margin") if link else "margin") + f" ±{float(row['margin']):.{d}f}"
    if not (np.isfinite(float(row["low"])) and np.isfinite(float(row["high"]))):
        return (f"{float(row['estimate']):+.{d}f} {unit_text(unit, link)} (one seed: no "
                f"interval), {margin}")
    text = interval_text(row["estimate"], row["low"], row["high"], unit)
    estimate, _, interval = text.partition(" ")
    return f"{estimate} {unit_text(unit, link)} {interval}, {margin}"


def result_sentence(row, headline: Headline) -> str:
    """Ours in one sentence: the words, the numbers, the verdict and the stage."""
    return (f"{row['label']}: {direction(row, headline)}, {numbers(row)}. "
            f"Verdict: **{verdict_of(row)}**; {stage_words(row)}.")


def profile_name(profile: str, link: bool = False, exploratory: bool = False) -> str:
    """'`cpu`', or '`cpu-long` (pilot, exploratory)', 'pilot' linked where ``link``;
    '`cpu` (exploratory)' where ``exploratory`` (beside a confirmatory result)."""
    pilot = term("pilot") if link else "pilot"
    if profile == PILOT:
        return f"`{profile}` ({pilot}, exploratory)"
    return f"`{profile}` (exploratory)" if exploratory else f"`{profile}`"


def bottom_line(claim: str, families: dict, confirmed=None) -> str:
    """The chapter's bottom-line box (MyST, for ``{glue:md}``): the question, the paper's
    claim with its number, ours at each profile with stored results in one sentence with
    the verdict and the stage; the confirmatory result first once it is judged
    (``confirmed``: its row, turned to the chapter's sign by ``in_chapter_sign``)."""
    h = HEADLINES[claim]
    units = [f.loc[h.key, "unit"] for f in families.values() if h.key in f.index]
    lines = [f"**The question.** {h.question}", "",
             f"**The paper.** {h.paper[0].upper()}{h.paper[1:]}.", "",
             reading_line(units[0] if units else "nats"), ""]
    if confirmed is not None:  # judged once, on fresh seeds: it leads, the pilot beside
        confirmed = in_chapter_sign(claim, confirmed)
        lines += [f"**Ours, {term('confirmatory')}** (pre-registered, "
                  f"{int(confirmed['n_seeds'])} fresh seeds). "
                  f"{confirmed_sentence(confirmed, claim)}", ""]
    for profile, family in families.items():
        if h.key in family.index:
            lines += [f"**Ours, {profile_name(profile, True, confirmed is not None)}.** "
                      f"{result_sentence(family.loc[h.key], h)}", ""]
        else:
            lines += [f"**Ours, {profile_name(profile)}.** Not measured at this profile.", ""]
    return "\n".join(lines).rstrip()


# what the headline measures, by its unit (a reviewer: chapters 4 and 7 were told "nats")
METRIC = {"nats": f"{term('cross-entropy at [MASK]')} is in {term('nats')}, lower is "
                  f"better",
          "points": f"a {term('probe')}'s accuracy is in percentage points, higher is better",
          "ranges": "the oscillation of a layer-to-layer curve is in multiples of its "
                    "range, lower is smoother"}


def reading_line(unit: str) -> str:
    """The box's one line on how to read it, each term linked where the page first uses
    it, the metric's words chosen by the headline's ``unit``."""
    metric = METRIC.get(unit, f"the difference is in {unit}")
    return (f"*Reading ours:* {metric}; a difference comes with its 95% interval and a "
            f"{term('margin')}, the smallest difference that would matter; the verdict is "
            f"{term('Holm')}-adjusted; the {term('stage')} says how far the models got "
            f"between the {term('rung', 'rungs')}. The rules: {{doc}}`../{GLOSSARY}` and "
            f"\"How this is judged\" below.")


def box(question: str, paper: str, ours: str, verdict: str, stage: str) -> str:
    """A bottom-line box for a chapter without a decision family (the exact claims, the
    recipe): the same five lines, from the chapter's own figures."""
    return "\n".join([f"**The question.** {question}", "", f"**The paper.** {paper}", "",
                      f"**Ours.** {ours}", "", f"**Verdict: {verdict}.** {stage}"])


# -- the results table -------------------------------------------------------------------

CHAPTERS = {"asymmetry": "03_asymmetry", "sop_nsp": "04_sop_nsp", "dropout": "05_dropout",
            "wall_clock": "06_wall_clock", "transitions": "07_transitions",
            "embedding_sweep": "08_embedding_size"}


def chapter_link(chapters: str, stem: str) -> str:
    """'{doc}`chapter 3 <chapters/03_asymmetry>`': a short link, not the chapter's title."""
    return f"{{doc}}`chapter {int(stem[:2])} <{chapters}{stem}>`"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def exact_rows(chapters: str = "") -> list:
    """The exact claims' rows of ``results_table``: their figures glued from chapters 1
    and 2 (``{glue:text}`` across pages, from ``chapters``)."""
    one, two = f"{chapters}01_embedding_share", f"{chapters}02_sharing_reductions"

    def g(doc, key, fmt="s"):
        return f"{{glue:text}}`{doc}.ipynb::{key}:{fmt}`"
    return [
        "| How large a share of BERT-base are the embeddings, and what does factorizing "
        "them save? | not printed (21.8%, computed from BERT-base's layout); Table 3's counts | "
        f"{g(one, 'bert_embedding_share', '.1f')}%; {g(one, 'table3_matched', 'd')} of "
        f"{g(one, 'table3_rows', 'd')} counts matched | **{g(one, 'embedding_share_verdict')}** "
        f"(exact, by counting) | {chapter_link(chapters, '01_embedding_share')} |",
        "| How many parameters does sharing remove? | Tables 1 and 4's counts | "
        f"{g(two, 'counts_matched', 'd')} of {g(two, 'counts_total', 'd')} counts matched | "
        f"**{g(two, 'sharing_verdict')}** (exact, by counting) | "
        f"{chapter_link(chapters, '02_sharing_reductions')} |"]


def results_table(families: dict, chapters: str = "", exact_rows: list | None = None) -> str:
    """The book's answers as one Markdown table of five columns: the question, the
    paper, ours (words and numbers, each profile), the verdict (the book's profile first),
    the chapter. ``chapters``: the path prefix of the chapters' documents from the page
    that shows it ("chapters/" from the introduction, "" from the ledger)."""
    rows = ["| question | the paper | ours | verdict | chapter |", "|---|---|---|---|---|"]
    rows += list(exact_rows or [])
    confirmed = CONFIRMATORY in families
    extra = {c: (k, h) for k, (c, h) in EXTRA.items()}
    for claim, h in HEADLINES.items():
        mine = _result_rows(claim, h, families, chapters, confirmed)
        if claim in extra and confirmed and extra[claim][0] in families[CONFIRMATORY].index:
            mine += _result_rows(claim, extra[claim][1], {CONFIRMATORY: families[
                CONFIRMATORY]}, chapters, confirmed)
        if mine and claim == "wall_clock":
            mine.append(throughput_row(chapters))
        rows += mine
    return "\n".join(rows)


def _result_rows(claim: str, h: Headline, families: dict, chapters: str,
                 confirmed: bool) -> list:
    """``results_table``'s row of one headline ([] where no family measured it): the
    confirmatory result with its comparison's words (a reviewer: the sign flipped
    unlabelled between pages), then each profile's, marked exploratory beside it."""
    ours, verdicts = [], []
    for profile, family in families.items():
        if h.key not in family.index:
            continue
        row = family.loc[h.key]
        if profile == CONFIRMATORY:
            words = confirmatory_headline(claim) if claim in HEADLINES and \
                h is HEADLINES[claim] else h
            registered = row.get("registered_label", "")
            turned = (" (registered the other way round)"
                      if isinstance(registered, str) and registered
                      and registered != row["label"] else "")
            name = (f"{profile} ({int(row['n_seeds'])} fresh seeds), "
                    f"{row['label']}{turned}")
        else:
            name, words = (f"{profile} (exploratory)" if confirmed else profile), h
        short = row.get("caveat_short", "") if profile == CONFIRMATORY else ""
        ours.append(f"{name}: {direction(row, words)}, {numbers(row)}"
                    + (f" ({short})" if isinstance(short, str) and short else ""))
        verdicts.append(f"{profile}: **{verdict_of(row)}**")
    if not ours:
        return []
    return ["| " + " | ".join(_cell(x) for x in (
        h.question, h.paper, "; ".join(ours), "; ".join(verdicts),
        chapter_link(chapters, CHAPTERS[claim]))) + " |"]


def throughput_row(chapters: str = "") -> str:
    """The throughput ranking's row (chapter 6's measurement, outside the family): the
    paper's Table 2 speedups, our rank correlation and verdict glued from chapter 6."""
    from .. import paper
    speed = paper.TABLE2_SPEEDUP
    doc = f"{chapters}06_wall_clock.ipynb"
    return ("| Does sharing make training faster? | data throughput against BERT-large: "
            f"ALBERT-base {speed['albert-base']}x, BERT-base {speed['bert-base']}x, "
            f"ALBERT-xxlarge {speed['albert-xxlarge']}x (Table 2) | "
            f"rank correlation with the paper's order of the six Table 1 models (1 = the "
            f"same order), on one CPU: {{glue:text}}`{doc}::throughput_rho_first:.2f` by "
            f"the pre-specified method, {{glue:text}}`{doc}::throughput_rho:.2f` by the "
            f"whole-step method chosen after it | "
            f"**{{glue:text}}`{doc}::throughput_short:s`** (a measurement, no seeds) | "
            f"{chapter_link(chapters, '06_wall_clock')} |")


# -- the book's answers in a few lines ---------------------------------------------------

NAMES = {"asymmetry": "attention vs FFN sharing", "sop_nsp": "SOP vs NSP",
         "dropout": "dropout",
         "wall_clock": "a wide ALBERT vs BERT at an equal-time step budget",
         "transitions": "smoother transitions", "embedding_sweep": "a small E under sharing"}
# what a reader must know beside a claim's verdict (a reviewer: the before-Holm
# "reproduced" of SOP hid the cue; "equal time" was a step budget whose seconds differed)
CAVEATS = {"sop_nsp": "on pairs that keep the segment-cut cue, which a bag of words also "
                      "reads",
           "wall_clock": "the runs' seconds did not match, and the wide model's learning "
                         "rate came from a sweep whose rates had all yet to leave the early "
                         "loss plateau"}
GROUPS = {"reproduced": "Reproduced", "contradicted": "Contradicted",
          "equivalent": "Equivalent (any difference is smaller than the margin)",
          "inconclusive": "Inconclusive (the data cannot tell)",
          "not testable at this scale": "Not testable here"}


def side_note(row, numbered: bool = True) -> str:
    """'a small effect on the paper's side, +0.004 nats [...]' where an equivalent
    verdict's interval excludes 0 (amendment 1.5: "equivalent" is read first), else ''."""
    low, high = float(row["low"]), float(row["high"])
    equivalent = "equivalent" in (book_verdict(row), row.get("verdict"))
    if not equivalent or row["stage"] == GATED or not (low > 0 or high < 0):
        return ""
    side = "the paper's" if np.sign(low if low > 0 else high) == row["paper_sign"] \
        else "the other"
    if not numbered:  # the estimate stands beside it already
        inside = -float(row["margin"]) < low and high < float(row["margin"])
        return f"a small effect on {side} side" + (
            ": the whole interval lies inside the margin" if inside else "")
    return f"a small effect on {side} side, {numbers(row)}"


def _p(value: float) -> str:
    """'= 0.022' or '< 0.001': ``confirm._p``'s value after 'p' in a sentence."""
    from ..studies.confirm import _p as p_value
    return "< 0.001" if value < 0.001 else f"= {p_value(value)}"


def holm_note(row) -> str:
    """Why the verdict after Holm differs from an "equivalent" at 5% (the registered rule
    reads the TOST first, and Holm's adjustment can undo it): the tests' p-values before
    and after, and what the reader may conclude; '' where there is nothing to explain.
    A reviewer: "reproduced (at 5% before Holm: equivalent)" read as if Holm had made
    the paper more right."""
    if row["stage"] == GATED or row.get("verdict") != "equivalent" \
            or row["verdict_holm"] == "equivalent":
        return ""
    d = unit_digits(row["unit"]) + 1
    low, high, margin = float(row["low"]), float(row["high"]), float(row["margin"])
    tost = (f"the equivalence test ({term('TOST')}) passes at 5% "
            f"(p {_p(float(row['p_equivalence']))}) but not at the stricter level of "
            f"{term('Holm')}'s adjustment (p {_p(float(row['p_equivalence_holm']))})")
    if row["verdict_holm"] == "inconclusive":
        return (f"{tost}, and the difference test does not pass (p "
                f"{_p(float(row['p_difference_holm']))} after Holm): any difference is "
                f"probably small, but it is not shown to lie inside the "
                f"±{margin:.{d}f} margin")
    inside = -margin < low and high < margin
    where = (f"the whole 95% interval, [{low:+.{d}f}, {high:+.{d}f}], lies inside"
             if inside else f"the 95% interval, [{low:+.{d}f}, {high:+.{d}f}], reaches past")
    side = "the paper's side" if row["verdict_holm"] == "reproduced" else "the other side"
    return (f"{tost}, while the difference test passes there too (p "
            f"{_p(float(row['p_difference_holm']))}). So after Holm the verdict is "
            f"\"{row['verdict_holm']}\": a real effect on {side}, and a small one: "
            f"{where} the ±{margin:.{d}f} margin. "
            f"Holm's adjustment did not make the effect larger; it withheld only the "
            f"claim that it is smaller than the margin")


def glance_item(claim: str, row, chapters: str = "", lead: str = "", beside: str = "",
                caveat: str | None = None) -> tuple:
    """(group, text) of one measured claim in ``at_a_glance``: its name and chapter,
    ``lead`` (where the verdict comes from), the raw verdict where Holm's differs, an
    equivalent effect's side where its interval excludes 0, a gated one's reason, the
    claim's caveat (``caveat``, else the profile's ``CAVEATS``: they describe the
    profile's runs), and last ``beside`` (another source's verdict)."""
    group = book_verdict(row)
    numbered = bool(lead) and "[" in lead  # the lead gives the numbers already
    lean = ""
    if group == "inconclusive" and numbered:
        words = direction(row, HEADLINES[claim])
        lean = words.partition("; ")[2].rstrip(")") if "leans" in words else ""
    notes = [x for x in (lead, raw_note(row), side_note(row, not numbered), lean) if x]
    if row["stage"] == GATED:
        notes.append(row.get("gate_reason") or "a model compared does not read context")
    caveat = CAVEATS.get(claim, "") if caveat is None else caveat
    if caveat and group != "not testable at this scale":
        notes.append(caveat)
    if beside:
        notes.append(beside)
    link = chapter_link(chapters, CHAPTERS[claim])
    return group, f"{NAMES[claim]} ({'; '.join([link] + notes)})"


CONFIRMATORY = "confirmatory"  # its name where it stands beside the profiles


def confirmatory_rows(store=None) -> dict:
    """{claim: its first registered primary decision's row}, judged on the confirmatory
    seeds, once every confirmatory run is stored; {} before (nothing is computed). Each
    row also carries ``holm_tests`` (the primary family's) and ``caveat`` (what a reader
    must know beside its verdict, from ``confirm_caveats``)."""
    from ..studies import confirm
    if not confirm.complete(store):
        return {}
    families = confirm.confirmatory_families(store)
    primary = families["primary"]
    caveats = confirm_caveats(store, families)
    out = {}
    for spec in confirm.PRIMARY:
        if spec.claim not in out:
            row = primary.loc[spec.key].copy()
            row["holm_tests"] = confirm.holm_tests(primary)
            row["caveat"] = caveats.get(spec.claim, "")
            row["caveat_short"] = caveats.get(f"{spec.claim}_short", "")
            if spec.claim == "wall_clock" and caveats.get("budget_only"):
                row["label"] = str(row["label"]).replace("equal time", "fixed step budget")
            out[spec.claim] = row
    return out


def confirmatory_extras(store=None) -> dict:
    """{key: row} of the primary decisions in ``EXTRA`` (not a chapter's headline),
    judged once the design is complete; {} before."""
    from ..studies import confirm
    if not confirm.complete(store):
        return {}
    primary = confirm.confirmatory_families(store)["primary"]
    out = {}
    for key in EXTRA:
        if key in primary.index:
            row = primary.loc[key].copy()
            row["holm_tests"] = confirm.holm_tests(primary)
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
    judged families where the caller has them (``confirm.confirmatory_families``)."""
    from ..studies import confirm
    if not confirm.complete(store):
        return {}
    families = families or confirm.confirmatory_families(store)
    out = {"sop_nsp": CUE_FREE_WORDS, "budget_only": False}
    record = confirm.equal_time_record(store)
    try:
        frame = confirm.confirmatory_frame(store=store)
        ratios = confirm.time_ratios(frame)
    except confirm.NotComplete:  # no measurement or runs stored (a test's store)
        frame, ratios = pd.DataFrame(), pd.DataFrame()
    out.update(sop_words(frame, families))
    if record is not None and len(ratios):
        column = ratios["wide / BERT-style seconds"].astype(float)
        median, flagged = round(float(column.median()), 2), int(ratios["flagged"].sum())
        # amendment 5.2: a median outside 0.9-1.1 makes it a fixed step budget's
        # comparison (read on the median as shown, so that text and rule agree)
        out["budget_only"] = bool(np.isfinite(median) and not 0.9 <= median <= 1.1)
        budget = "; so this compares a fixed step budget, not equal time" \
            if out["budget_only"] else ""
        words = confirm.lr_check_words(store) or ""
        size = _embedding_size_words(families)
        out["wall_clock"] = (
            f"the wide model (E 32, all shared, H 128) trained a fixed "
            f"{record['steps']:,} steps, timed for {term('equal time')} with the "
            f"BERT-style model (E = H = 64) on one machine; its measured seconds were a "
            f"median {median:.2f} of the BERT-style model's ({column.min():.2f} to "
            f"{column.max():.2f}; {flagged} of {len(ratios)} seeds outside 0.9 to 1.1), "
            f"and a ratio below 1 gives the wide model less time (in seconds; the step "
            f"counts were fixed), which favours \"contradicted\"{budget}"
            + (f"; {words}" if words else "")
            + (f"; {size}" if size else ""))
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
    text = (f"the wide model also keeps E 32 against the BERT-style model's 64; measured in "
            f"the not-shared H 64 model, E 32 costs {cost} nats against E 64 (secondary, "
            f"exploratory; {share:.0%} of this gap)")
    if "confirm/sharing-cost" in primary.index:
        sharing = primary.loc["confirm/sharing-cost"]
        text += (f", and sharing every layer at E = H = 64 costs "
                 f"{interval_text(sharing['estimate'], sharing['low'], sharing['high'], 'nats')}"
                 f" nats")
    return text + (": effects measured in other models, which need not add, so this is a "
                   "reading of the gap, not a test of it")


def sop_words(frame: pd.DataFrame, families: dict | None = None) -> dict:
    """The SOP decision's caveat from its runs (two reviewers: "inconclusive" hid that
    neither model orders cue-free pairs): the SOP-trained arm's cue-free probe against
    the majority label (amendment 1.4's reading) and, where that interval holds 0, the
    secondary decision on the original pairs, which keep the cut cue, from the judged
    ``families`` (judged here where not given). {} where the runs do not carry the
    cue-free evaluation."""
    from ..studies import confirm
    albert = frame[frame["condition"] == confirm.ALBERT] if len(frame) else frame
    above = confirm.above_majority(albert, "sop_cuefree_accuracy_probe")
    if above is None:
        return {}
    gain = interval_text(above.mean, above.low, above.high, "points")
    pairs = CUE_FREE_WORDS
    if not above.low <= 0 <= above.high:
        return {"sop_nsp": f"{pairs}; the SOP-trained model's probe there is {gain} "
                           f"points above the majority label",
                "sop_nsp_short": f"cue-free pairs; the SOP-trained probe {gain} points "
                                 f"above the majority label"}
    # what was measured, no more (a reviewer: a frozen-encoder probe is not the model,
    # and amendment 1.4's reading was registered for "equivalent" or "contradicted");
    # the model's own SOP head, scored on the same pairs, answers the first point
    own = (confirm.above_majority(albert, "sop_cuefree_accuracy_head")
           if "sop_accuracy_head" in albert else None)
    head = albert.get("sop_cuefree_accuracy_head")
    if own is not None and own.low <= 0:  # the head, too, no better than the majority
        text = (f"{pairs}. On them neither the SOP-trained model's frozen-encoder probe "
                f"nor its own SOP head orders the pairs better than the majority label: "
                f"the probe scores {gain} points against it, the head "
                f"{interval_text(own.mean, own.low, own.high, 'points')} (descriptive; "
                f"the head scores {100 * head.mean():.1f}% here and "
                f"{100 * albert['sop_accuracy_head'].mean():.1f}% on the original pairs)")
    else:
        text = (f"{pairs}. On them the frozen-encoder probe of the SOP-trained model "
                f"finds no sentence order: it scores {gain} points against the majority "
                f"label")
        if own is not None:  # the head reads more than the probe: say so
            text += (f", while the model's own SOP head scores "
                     f"{interval_text(own.mean, own.low, own.high, 'points')} points "
                     f"above it")
    secondary = (families or confirm.confirmatory_families())["secondary"]
    if "explore/sop-cut-pairs" in secondary.index:
        cut = secondary.loc["explore/sop-cut-pairs"]
        text += (f"; on the original pairs, which keep the cue (secondary, exploratory), "
                 f"the SOP-trained probe beats the NSP-trained one by "
                 f"{interval_text(cut['estimate'], cut['low'], cut['high'], 'points')} "
                 f"points")
    short = f"on cue-free pairs; the SOP-trained probe minus the majority label: {gain}"
    if own is not None:
        short += (f", its own SOP head's: "
                  f"{interval_text(own.mean, own.low, own.high, 'points')}")
    return {"sop_nsp": text, "sop_nsp_short": short + " points"}


def in_chapter_sign(claim: str, row):
    """A confirmatory row as its chapter reads it: where the registration took the
    difference the other way round (``confirm.REVERSED``), the same comparison with the
    opposite sign (estimate and interval negated, the paper's sign too); verdicts,
    p-values and stage are the same either way. ``registered_label`` keeps the
    registration's words; a row already turned is returned as it is."""
    from ..studies.confirm import REVERSED
    row = row.copy()
    if "registered_label" in row.index:
        return row
    row["registered_label"] = row["label"]
    if claim in REVERSED:
        row["estimate"], row["low"], row["high"] = (
            -float(row["estimate"]), -float(row["high"]), -float(row["low"]))
        row["paper_sign"] = -int(row["paper_sign"])
        rest = str(row["label"]).partition(", ")[2]
        row["label"] = REVERSED[claim] + (f", {rest}" if rest else "")
    return row


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


def confirmatory_headline(claim: str) -> Headline:
    """The claim's headline without the parenthetical of its words that describes the
    profile's runs (chapter 4: pairs that keep the cut cue; chapter 6: the runs'
    seconds and learning rate); the confirmatory result carries its own caveat
    (``confirm_caveats``) instead."""
    h = HEADLINES[claim]
    return replace(h, **{k: re.sub(r" \((read it with|pairs that keep) .*\)$", "",
                                   getattr(h, k)) for k in ("lower", "higher")})


def confirmed_sentence(row, claim: str) -> str:
    """The confirmatory result in one sentence, in the chapter's sign (its direction
    words, numbers, Holm verdict and stage), the registration's own words where it took
    the difference the other way round, an equivalent effect's side and the claim's
    caveat."""
    row = in_chapter_sign(claim, row)
    text = result_sentence(row, confirmatory_headline(claim))
    if row["registered_label"] != row["label"]:
        text += (f" (Registered as {row['registered_label']}: the same comparison, the "
                 f"opposite sign.)")
    for note in (holm_note(row), row.get("caveat", "")):
        if note:
            text += f" {note[0].upper()}{note[1:]}."
    return text


def at_a_glance(families: dict, chapters: str = "", confirm_line: str = "",
                confirmed: dict | None = None, extras: dict | None = None) -> str:
    """The answers in a few lines, for the first screen of the introduction and the
    ledger (issue #26: "which claims are reproduced?" and "how big and how long?"):
    the exact claims' verdicts (glued from chapters 1 and 2), each measured claim under
    its Holm verdict at the book's profile (the first of ``families``), the throughput
    ranking (glued from chapter 6), the scale in one sentence and the confirmatory
    test's progress (``confirm_line``). ``extras``: the other primary decisions
    (``confirmatory_extras``), each an item of its own."""
    profile = next(iter(families))
    family = families[profile]
    one, two = f"{chapters}01_embedding_share", f"{chapters}02_sharing_reductions"
    six = f"{chapters}06_wall_clock"
    if confirmed:
        judged = family[family["in_family"]] if "in_family" in family else family.iloc[:0]
        n = int(judged["n_seeds"].max()) if len(judged) else 0
        lines = [f"**In short.** Chapters 3 to 6 are judged by the pre-registered "
                 f"{term('confirmatory')} test "
                 f"({int(next(iter(confirmed.values()))['n_seeds'])} fresh seeds); "
                 f"chapters 7 and 8 by the `{profile}` {term('profile')}"
                 + (f" ({n} seeds, exploratory)" if n else " (exploratory)")
                 + f"; chapters 1 and 2 by exact counts. The {term('pilot')} `{PILOT}` "
                 f"is in the table below.", ""]
    else:
        lines = [f"**In short**, at `{profile}` (the published {term('profile')}; the "
                 f"{term('pilot')} `{PILOT}` is in the table below):", ""]
    lines.append(f"- **By counting** (exact): the embedding share, "
                 f"**{{glue:text}}`{one}.ipynb::embedding_share_verdict:s`** "
                 f"({chapter_link(chapters, '01_embedding_share')}); what sharing removes, "
                 f"**{{glue:text}}`{two}.ipynb::sharing_verdict:s`** "
                 f"({chapter_link(chapters, '02_sharing_reductions')}).")
    groups = {g: [] for g in GROUPS}
    confirmed = confirmed or {}
    for claim, h in HEADLINES.items():
        if claim in confirmed:  # the pre-registered test decides; the profile beside it
            row = in_chapter_sign(claim, confirmed[claim])
            lead = (f"confirmatory, {int(row['n_seeds'])} fresh seeds: {numbers(row)}, "
                    f"{short_stage(row)}")
            beside = (f"`{profile}` (exploratory): {verdict_of(family.loc[h.key])}"
                      if h.key in family.index else "")
            # the box carries the whole caveat; the list the short one, but equal time
            # keeps its whole caveat here too (amendment 6.5)
            short = row.get("caveat_short", "") if claim != "wall_clock" else ""
            group, item = glance_item(claim, row, chapters, lead, beside,
                                      caveat=short if isinstance(short, str) and short
                                      else row.get("caveat", ""))
            groups.setdefault(group, []).append(item)
        elif h.key in family.index:
            group, item = glance_item(claim, family.loc[h.key], chapters)
            groups.setdefault(group, []).append(item)
        for key, (owner, _) in EXTRA.items():
            if owner == claim and key in (extras or {}):
                row = extras[key]
                name = f"{EXTRA_NAMES[key]} ({chapter_link(chapters, CHAPTERS[claim])}"
                groups.setdefault(book_verdict(row), []).append(
                    f"{name}; confirmatory, {int(row['n_seeds'])} fresh seeds; "
                    f"{row['label']}: {numbers(row)}, {short_stage(row)})")
    judged = family[family["in_family"]] if "in_family" in family else family.iloc[:0]
    seeds = int(judged["n_seeds"].max()) if len(judged) else 0
    why = (f"{seeds} seeds per condition, Holm's adjustment over the profile's "
           f"{2 * len(judged)} tests: its strictest step asks p < {holm_of(family):.2g}"
           if len(judged) else "")
    if confirmed:  # the verdicts of chapters 3 to 6 come from the confirmatory family
        first = next(iter(confirmed.values()))
        tests = max(1, int(first.get("holm_tests", 2 * len(confirmed))))
        why = (f"the confirmatory test's over its {tests} primary tests, strictest step "
               f"p < {0.05 / tests:.2g}"
               + (f"; `{profile}`'s over its {2 * len(judged)} tests, strictest step "
                  f"p < {holm_of(family):.2g}" if len(judged) else ""))
    why = f" ({why})" if why else ""
    lines.append(f"- **Measured**, each claim's headline comparison after "
                 f"{term('Holm')}'s adjustment{why}:")
    for group, items in groups.items():
        if items or group in ("reproduced", "contradicted"):
            lines.append(f"  - {GROUPS.get(group, group.capitalize())}: "
                         f"{'; '.join(items) if items else 'none'}.")
    lines.append(f"- **Throughput ranking** ({chapter_link(chapters, '06_wall_clock')}, "
                 f"a measurement): {{glue:text}}`{six}.ipynb::throughput_short:s`.")
    n = scale_numbers(profile)
    if confirmed:  # the headline verdicts' runs first (a reviewer: the cpu scale stood
        # beside the confirmatory verdicts, whose runs are the pilot's size)
        c = scale_numbers(PILOT)
        seeds = int(next(iter(confirmed.values()))["n_seeds"])
        lines.append(f"- **Scale of the confirmatory runs**: one has {c['params'] / 1e6:.2f}M "
                     f"parameters and trains {c['steps']:,} steps on {_count(c['tokens'])} "
                     f"tokens ({times(c['paper_tokens'] / c['tokens'])} fewer than "
                     f"ALBERT-base's {_count(c['paper_tokens'])}), with "
                     f"{times(c['paper_flops'] / c['flops'])} less compute; "
                     f"{seeds} seeds per condition.")
    where = f" at `{profile}`" if confirmed else ""
    lines.append(f"- **Scale**{where}: one base run here has {n['params'] / 1e6:.2f}M "
                 f"parameters "
                 f"({times(n['paper_params'] / n['params'])} fewer than ALBERT-base's "
                 f"{n['paper_params'] / 1e6:.0f}M) and trains on {_count(n['tokens'])} "
                 f"tokens ({times(n['paper_tokens'] / n['tokens'])} fewer than the "
                 f"paper's {_count(n['paper_tokens'])}), with "
                 f"{times(n['paper_flops'] / n['flops'])} less compute; every model is "
                 f"{term('stage', 'early in training')}.")
    if confirm_line:
        lines.append(f"- {confirm_line}")
    return "\n".join(lines)


def confirm_line(store=None, book: str = "") -> str:
    """The confirmatory test's line: its progress, or where its verdicts are once it is
    complete (``confirm.status_text`` per chapter; the pre-registration page, linked
    through ``book``, the path from the page to the book's folder: "" from the
    introduction, "../" from a chapter)."""
    from ..studies.confirm import complete, progress
    table = progress(store)
    head = (f"**{term('confirmatory', 'Confirmatory')} test** of chapters 3 to 6 "
            f"(pre-registered, fresh seeds)")
    if complete(store):  # judged once; the verdicts above lead with it (a reader met
        # them twice, the second time in the registration's signs)
        return (head + ", judged after Holm's adjustment over its primary family: the "
                "verdicts above lead with it. Every decision with its interval and both "
                "tests' p-values, and the secondary (exploratory) decisions: "
                f"{{doc}}`{book}preregistration`.")
    return (head + f": {int(table['trained'].sum())} of {int(table['of'].sum())} runs "
            f"trained, {int(table['evaluated'].sum())} evaluated; it is judged once, when "
            f"all are.")


# -- the scale, computed once --------------------------------------------------------------

def scale_numbers(profile: str) -> dict:
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
    """'the weakest models 19-35% of the way from the unigram to the bigram rung; none
    past it' over a family's judged and gated model decisions."""
    levels = family["weakest_level"].dropna()
    if not len(levels):
        return "no trained model compared"
    past = int((family["stage"] == PAST).sum())
    return (f"the weakest model of each comparison {levels.clip(lower=0).min():.0%} to "
            f"{levels.max():.0%} of the way from the unigram to the bigram rung "
            f"({'none' if not past else past} past it)")


def scale_text(profiles: list, families: dict | None = None) -> str:
    """The scale in two sentences: one base run of each profile against the paper's
    ALBERT-base in parameters, tokens and training FLOPs; and how far the models got."""
    parts = []
    for profile in profiles:
        n = scale_numbers(profile)
        parts.append(f"`{profile}` {n['params'] / 1e6:.2f}M parameters, {n['steps']:,} "
                     f"steps, {_count(n['tokens'])} tokens, {_flops(n['flops'])} FLOPs "
                     f"({times(n['paper_params'] / n['params'])} fewer parameters, "
                     f"{times(n['paper_tokens'] / n['tokens'])} fewer tokens and "
                     f"{times(n['paper_flops'] / n['flops'])} less compute than the "
                     f"paper)")
    n = scale_numbers(profiles[0])
    first = (f"One base run of ours against the paper's ALBERT-base "
             f"({n['paper_params'] / 1e6:.0f}M parameters, {n['paper_steps']:,} steps, "
             f"{_count(n['paper_tokens'])} tokens, {_flops(n['paper_flops'])} FLOPs): "
             + "; ".join(parts) + ".")
    if not families:
        return first
    second = "How far the models got: " + "; ".join(
        f"`{p}`: {stage_summary(f)}" for p, f in families.items()) + \
        f". They are all {term('stage', 'early in training')}: a verdict here is about " \
        "how fast small models begin to learn, not about trained ones."
    return first + " " + second


def worked_example(family: pd.DataFrame, claim: str = "asymmetry") -> str:
    """One verdict read step by step, from the family's own numbers (the glossary's
    worked example)."""
    h = HEADLINES[claim]
    row = family.loc[h.key]
    holm = verdict_of(row)
    margin = float(row["margin"])
    inside = -margin < row["low"] and row["high"] < margin
    return "\n".join([
        f"Take {row['label']} ({{doc}}`chapters/{CHAPTERS[claim]}`). The row reads "
        f"{numbers(row)}.", "",
        f"1. **The gate and the stage.** Every model compared reads context, so the "
        f"decision is judged; its stage is {stage_words(row)}.",
        f"2. **The difference.** {interval_text(row['estimate'], row['low'], row['high'], row['unit'])}"
        f" {row['unit']} is the mean over {int(row['n_seeds'])} seeds of the per-seed "
        f"difference, with its 95% interval. The paper's side is "
        f"{ {-1: 'below 0', 0: 'about 0', 1: 'above 0'}[int(row['paper_sign'])] }. "
        f"The interval {'spans' if row['low'] <= 0 <= row['high'] else 'excludes'} 0.",
        f"3. **The margin.** ±{margin:.3g} {row['unit']} is the smallest difference that "
        f"would matter. The interval {'lies within' if inside else 'reaches past'} it.",
        f"4. **The verdict**, after Holm's adjustment over the profile's judged "
        f"decisions: **{holm}**. In words: {direction(row, h)}.",
    ]) if row["stage"] != GATED else ""


# -- the box's small figure ---------------------------------------------------------------

FIGURE_WIDTH_IN = 5.0  # drawn at 100 dpi: 500 px, shown at its own size, under the column
FONT_PT = 10  # 10 pt at 100 dpi: 14 px on the page


def headline_figure(claim: str, families: dict):
    """The headline decision at each profile: its difference in margins with the 95%
    interval (cut at the edge with an arrow), the margin as a grey band, 0 as a line, and
    the paper's side shaded in words. Returns the matplotlib figure."""
    import matplotlib.pyplot as plt
    h = HEADLINES[claim]
    rows = [(p, f.loc[h.key]) for p, f in families.items() if h.key in f.index]
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 0.55 * len(rows) + 0.9), dpi=100)
    # the axis holds every interval (and the margin), up to 12 margins; an interval
    # past it is cut with an arrow
    ends = [abs(float(r[k]) / float(r["margin"])) for _, r in rows for k in ("low", "high")
            if np.isfinite(float(r[k]))]
    limit = float(min(12, max(2, np.ceil(max(ends, default=0) * 1.05))))
    ax.axvspan(-1, 1, color="0.88", zorder=0, label="within the margin")
    ax.axvline(0, color="0.4", lw=0.8)
    for y, (profile, row) in enumerate(reversed(rows)):
        m = float(row["margin"])
        est, low, high = (float(row[k]) / m for k in ("estimate", "low", "high"))
        lo, hi = max(low, -limit), min(high, limit)
        ax.plot([lo, hi], [y, y], color="black", lw=1.6)
        for end, cut, sign in ((lo, low < -limit, -1), (hi, high > limit, 1)):
            if cut:
                ax.annotate("", (end + 0.25 * sign, y), (end, y),
                            arrowprops={"arrowstyle": "->", "lw": 1.2})
        ax.plot([min(max(est, -limit), limit)], [y], "o", color="black")
    ax.set_yticks(range(len(rows)), [p for p, _ in reversed(rows)], fontsize=FONT_PT)
    ax.set_xlim(-limit - 0.4, limit + 0.4)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    side = {-1: "paper's side: left", 1: "paper's side: right", 0: "paper: about 0"}
    ax.set_xlabel(f"difference in margins ({side[int(rows[0][1]['paper_sign'])]})",
                  fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    fig.tight_layout()
    return fig


def bottom_line_glue(claim: str, profile: str, seeds=None, device: str = "auto") -> dict:
    """{glue key: object} a chapter glues for its bottom-line box: ``bottom_line`` (the
    box's text, as Markdown for ``{glue:md}``) and ``bottom_figure`` (its small figure,
    as a PNG image, the figure closed so that the cell shows nothing else)."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, Markdown

    from .figure_text import png
    from .ledger import published_families
    families = published_families(profile, seeds, device)
    from ..studies.confirm import status_text
    confirmed = confirmatory_rows().get(claim)
    fig = headline_figure(claim, with_confirmatory(families))
    image = png(fig, dpi=100)
    plt.close(fig)
    return {"bottom_line": Markdown(bottom_line(claim, families, confirmed)),
            "bottom_figure": Image(data=image, format="png"),
            # the pre-registered test's progress, or its verdicts once complete (issue #25)
            "confirm_status": Markdown(status_text(claim) or "")}


SHORT = {"asymmetry": "3. attention vs FFN", "sop_nsp": "4. SOP vs NSP",
         "dropout": "5. dropout", "wall_clock": "6. wide ALBERT vs BERT",
         "transitions": "7. transitions", "embedding_sweep": "8. small E"}
VERDICT_COLOURS = {"reproduced": "tab:green", "contradicted": "tab:red",
                   "equivalent": "tab:blue", "inconclusive": "0.45",
                   "not testable at this scale": "0.75"}
PROFILE_MARKERS = {"smoke": "^", "cpu": "o", "cpu-long": "D", "gpu": "s",
                   "confirmatory": "*"}


def headline_forest(families: dict):
    """The introduction's picture: each chapter's headline decision at each profile, in
    margins, coloured by its Holm verdict, drawn 660 px wide with 10 pt text, so that it
    reads at the text column's width. The paper's side is the arrow at the row's label.
    Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    rows = []
    for claim, h in HEADLINES.items():
        for profile, family in families.items():
            if h.key in family.index:
                rows.append((claim, profile, family.loc[h.key]))
    fig, ax = plt.subplots(figsize=(6.6, 0.32 * len(rows) + 1.6), dpi=100)
    estimates = [abs(float(r["estimate"]) / float(r["margin"])) for _, _, r in rows]
    limit = float(min(15, max(3, np.ceil(max(estimates, default=0)) + 1)))
    ax.axvspan(-1, 1, color="0.88", zorder=0)
    ax.axvline(0, color="0.4", lw=0.8)
    labels = []
    for y, (claim, profile, row) in enumerate(rows):
        m = float(row["margin"])
        est, low, high = (float(row[k]) / m for k in ("estimate", "low", "high"))
        colour = VERDICT_COLOURS[book_verdict(row)]
        lo, hi = max(low, -limit), min(high, limit)
        ax.plot([lo, hi], [y, y], color=colour, lw=2)
        for end, cut, sign in ((lo, low < -limit, -1), (hi, high > limit, 1)):
            if cut:
                ax.annotate("", (end + 0.06 * limit * sign, y), (end, y),
                            arrowprops={"arrowstyle": "->", "lw": 1.2, "color": colour})
        marker = PROFILE_MARKERS.get(profile, "o")
        ax.plot([min(max(est, -limit), limit)], [y], marker, color=colour,
                markeredgecolor="black", markersize=13 if marker == "*" else 7)
        side = {-1: "paper < 0", 1: "paper > 0", 0: "paper = 0"}[int(row["paper_sign"])]
        labels.append(f"{SHORT[claim]}, {profile}; {side}")
    ax.set_yticks(range(len(rows)), labels, fontsize=FONT_PT)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlim(-1.1 * limit, 1.1 * limit)
    ax.set_xlabel("difference in margins (grey: within the margin)", fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    handles = [Line2D([], [], color=c, lw=2, label=v.split(" at")[0])
               for v, c in VERDICT_COLOURS.items()]
    handles += [Line2D([], [], ls="", marker=PROFILE_MARKERS.get(p, "o"), color="white",
                       markeredgecolor="black", label=p) for p in families]
    fig.legend(handles=handles, loc="lower center", ncol=4, fontsize=FONT_PT,
               frameon=False)
    fig.tight_layout(rect=(0, 0.14, 1, 1))
    return fig


def chapter_glue(claim: str, chapter, family: pd.DataFrame, prefix: str, profile: str,
                 seeds=None, device: str = "auto") -> dict:
    """Everything a measured chapter's page glues, in one place: each decision's verdict
    sentence (under its key, '/' as '_'), the margins' rule and the chapter's own texts
    (under ``prefix``), and its bottom line (``bottom_line_glue``)."""
    from ..chapters.text import margins_text, verdict_sentence
    out = {f"{prefix}{key}": text for key, text in margins_text(profile).items()}
    out.update({d.key.replace("/", "_"): verdict_sentence(d, family)
                for d in chapter.decisions})
    out.update({f"{prefix}{key}": text for key, text in chapter.texts.items()})
    out.update(bottom_line_glue(claim, profile, seeds, device))
    return out


# -- the ledger's page ---------------------------------------------------------------------

def ledger_glue(families: dict, profile: str, n_seeds: int) -> dict:
    """Everything the ledger's page glues: the answers first (``results_table`` and
    ``scale_text``), the verdict counts, the profiles shown, the fine-tuning grid, the
    power sentence, the seeds, the hours of pretraining and the fine-tuning repeats."""
    from IPython.display import Markdown

    from ..profiles import PROFILES
    from . import ledger
    from ..stats import power
    from ..chapters.downstream import finetune_repeat_text, finetune_repeats
    from ..chapters.text import finetune_grid_text
    family, profiles = families[profile], list(families)
    judged = power.power_table(family[family["in_family"]], alpha="holm")
    return {
        "ledger_results": Markdown(at_a_glance(families, "", confirm_line(book="../"),
                                               confirmatory_rows(),
                                               confirmatory_extras()) + "\n\n"
                                   + results_table(with_confirmatory(families), "",
                                                   exact_rows()) + "\n\n"
                                   + scale_text(profiles, families)),
        "ledger_counts": ledger.verdict_counts(family),
        "ledger_profiles": ", ".join(profiles),  # glue:text shows backticks raw
        "ft_grid": finetune_grid_text(profile),
        "ledger_power": power.power_sentence(judged[judged["unit"] == "nats"],
                                             "cross-entropy decisions"),
        "ledger_seeds": str(PROFILES["cpu"].default_seeds),
        "ledger_sd_uncertainty": power.sd_uncertainty(n_seeds),
        "ledger_hours": f"{ledger.training_hours(profile):.1f}",
        "ft_repeats": finetune_repeat_text(finetune_repeats(profiles))
        or "No model was fine-tuned at two profiles."}


def profile_sections(families: dict, current: str) -> list:
    """What the ledger shows of the profiles beside the book's: each one's counts and
    table, the decisions whose verdict or stage changes between two of them, and a
    profile still training with no decision complete yet, its runs so far."""
    from IPython.display import Markdown

    from ..studies import conditions as C
    from . import ledger
    profiles, out = list(families), []
    for other in profiles[1:]:
        progress = (f" ({ledger.stretch_progress(other)})" if other in C.STRETCH_PROFILES
                    else "")
        out += [Markdown(f"**{other}**{progress}: {ledger.verdict_counts(families[other])}"),
                ledger.ledger_table(families[other])]
    for before, after in zip(profiles, profiles[1:]):
        out.append(Markdown(f"Changes between `{before}` and `{after}`: "
                            f"{ledger.changes_text(families, before, after)}"))
        moved = ledger.changes(families, before, after)
        if len(moved):
            out.append(moved)
    for other in C.STRETCH_PROFILES:  # a stretch profile with no decision complete yet
        if current != "smoke" and other not in profiles:
            out += [Markdown(f"**{other}**, training in stretches: "
                             f"{ledger.stretch_progress(other)}; no decision has all its "
                             f"runs yet. The runs evaluated so far:"),
                    ledger.stretch_summary(other)]
    return out


def holm_of(family) -> float:
    """Holm's first-step alpha of a whole family (its judged decisions, two tests each)."""
    from ..stats.power import holm_alpha
    return holm_alpha(family)


def power_for(family, keys):
    """The power table of some decisions of ``family`` (a chapter's) at the whole
    family's Holm first-step alpha, its sentence naming the family's tests."""
    from ..stats import power
    table = power.power_table(family.loc[list(keys)], alpha=holm_of(family))
    table.attrs["tests"] = 2 * int(family["in_family"].sum())
    return table


def power_sections(families: dict) -> list:
    """Each other profile's power reading: its sentence and its table."""
    from IPython.display import Markdown

    from ..stats import power
    out = []
    for other in list(families)[1:]:
        detect = power.power_table(families[other][families[other]["in_family"]],
                                   alpha="holm")
        nats = detect[detect["unit"] == "nats"] if len(detect) else detect
        out.append(Markdown(f"**{other}**: "
                            f"{power.power_sentence(nats, 'cross-entropy decisions')}"))
        if len(detect):
            out.append(detect.round(4))
    return out

"""Each chapter's headline question, and the words for a decision's result (issue #26).

A measured chapter's question is answered by one decision of the family (``HEADLINES``;
``EXTRA``: the primary decisions that are no chapter's headline). The words follow the
numbers (``direction``), never the other way round: ``numbers`` gives the estimate, its
interval and the margin, ``interval_note`` where an unadjusted interval lies when the
plain reading shows no difference, ``stage_words`` how far the models got,
``result_sentence`` all of them in short sentences. The boxes (``chapter_box``) and the
first screen (``first_screen``) are written with these words.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..studies.decisions import capital, interval_text, signed, unit_digits
from ..stats.inference import EARLY, GATED, NO_MODEL, PAST, level_percent

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
        "(Table 4). E = 128 is the paper's smaller embedding size, as our E = 32 is ours",
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
    """How far the models got: 'early in training (the weakest arm 34% of the way from
    the unigram to the bigram rung)', in the words of the table cells and bullets."""
    stage, level = row["stage"], row.get("weakest_level", np.nan)
    if stage == GATED:
        return f"not testable ({row.get('gate_reason') or 'a model does not read context'})"
    if stage == EARLY:
        return (f"early in training (the weakest arm {level_percent(level)} of the way "
                f"from the unigram to the bigram rung)")
    if stage == PAST:
        return "past the bigram rung"
    if stage == NO_MODEL:
        return "a check of the test sets (no trained model)"
    return str(stage)


def book_verdict(row) -> str:
    """The book's verdict: Holm-adjusted, 'not testable at this scale' where gated."""
    return "not testable at this scale" if row["stage"] == GATED else row["verdict_holm"]


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


def shown_direction(row, headline: Headline) -> str:
    """The comparison's words (``headline.lower`` or ``higher``) where the plain reading
    says an effect is shown (after Holm's adjustment), else '': a first screen never sets
    "dropout hurts" beside "undecided" (the plain reading says what an interval that
    crosses the margin means)."""
    from .plain import DIFFERS, HOLDS, REVERSED, REVERSED_TINY, TINY, row_reading
    low, high = float(row["low"]), float(row["high"])
    if row_reading(row) not in (HOLDS, TINY, REVERSED, REVERSED_TINY, DIFFERS) \
            or not (low > 0 or high < 0) or int(row.get("paper_sign", 0) or 0) == 0:
        return ""
    return headline.higher if low > 0 else headline.lower


def result_sentence(row, headline: Headline, confirmatory: bool = False) -> str:
    """Ours in short sentences: the plain reading with the verdict word beside it in
    small type (``plain.reading_with_word``: linked to the registration where
    ``confirmatory``), the comparison with its words and numbers, the stage, and for a
    contradicted verdict the registration's promised note on scale."""
    from .plain import SCALE_NOTE, reading_with_word, row_reading
    words = shown_direction(row, headline)
    text = (f"{capital(reading_with_word(row, confirmatory))}. "
            f"{capital(str(row['label']))}: {words + ', ' if words else ''}"
            f"{numbers(row)}.")
    if confirmatory and not words:  # the interval's place, by the chapters' own words
        note = interval_note(float(row["estimate"]), float(row["low"]), float(row["high"]),
                             float(row["margin"]), int(row.get("paper_sign", 0) or 0),
                             row_reading(row))
        text += f" {note}" if note else ""
    if row["stage"] != GATED:  # a gated row's reason is its reading already
        text += f" Stage: {stage_words(row)}."
    if book_verdict(row) == "contradicted":
        text += f" {SCALE_NOTE}"
    return text


def profile_name(profile: str, link: bool = False, exploratory: bool = False) -> str:
    """'`cpu`', or '`cpu-long` (pilot, exploratory)', 'pilot' linked where ``link``;
    '`cpu` (exploratory)' where ``exploratory`` (beside a confirmatory result)."""
    pilot = term("pilot") if link else "pilot"
    if profile == PILOT:
        return f"`{profile}` ({pilot}, exploratory)"
    return f"`{profile}` (exploratory)" if exploratory else f"`{profile}`"


# -- the chapters ------------------------------------------------------------------------

CHAPTERS = {"asymmetry": "03_asymmetry", "sop_nsp": "04_sop_nsp", "dropout": "05_dropout",
            "wall_clock": "06_wall_clock", "transitions": "07_transitions",
            "embedding_sweep": "08_embedding_size"}


def interval_note(estimate: float, low: float, high: float, margin: float,
                  paper_sign: int, reading: str) -> str:
    """Where the unadjusted 95% interval lies, in one sentence, where the plain reading
    shows no difference ("undecided", "no difference here", or "holds here" of a paper
    that says there is none): on which side of 0 it excludes 0 and whether it lies inside
    the margin, or, holding 0 and reaching past the margin, which way the estimate
    leans. Never a verdict: '' otherwise. (Reviews: "undecided" beside an interval that
    excludes 0 read as no effect; a box never said which way the asymmetry leans.)"""
    from .plain import HOLDS, NO_DIFFERENCE, UNDECIDED
    if reading not in (UNDECIDED, NO_DIFFERENCE) and not (paper_sign == 0
                                                          and reading == HOLDS):
        return ""
    if not (np.isfinite(low) and np.isfinite(high)):
        return ""
    inside = -margin < low and high < margin
    head = "Its 95% interval, not adjusted,"
    if low > 0 or high < 0:
        side = 1 if low > 0 else -1
        where = (("above 0" if side > 0 else "below 0") if paper_sign == 0 else
                 "on the paper's side" if side == paper_sign else
                 "on the other side from the paper's")
        return f"{head} excludes 0 {where}" + (" and lies inside the margin." if inside
                                                else ".")
    if reading != UNDECIDED:  # holding 0, a shown "no difference" says it all
        return ""
    if inside:
        return f"{head} lies inside the margin."
    if paper_sign == 0 or estimate == 0:
        return f"{head} holds 0 and reaches past the margin."
    lean = ("toward the paper's side" if np.sign(estimate) == paper_sign
            else "against the paper's direction")
    return f"{head} holds 0 and reaches past the margin; the estimate leans {lean}."


def decision_text(d, family=None) -> str:
    """One decision (a ``stats.inference.Decision``) for a chapter's prose, in short
    sentences read by the one rule (``plain``): its plain reading, its difference with
    the 95% interval and the margin, and how far its models got. The reading is after
    Holm's adjustment where ``family`` judges the decision (the list's lead-in says so
    once), else at 5% and marked so. The
    registered verdict words stay in the chapter's verdict table, next to the prose. Plain
    text: a page glues it with ``{glue:text}``, which shows Markdown as typed."""
    from .plain import NOT_TESTABLE, plain_reading, row_reading
    shown = numbers({"estimate": d.estimate, "low": d.low, "high": d.high,
                    "margin": d.margin, "unit": d.unit})
    judged = (family is not None and d.key in family.index
              and bool(family.loc[d.key, "in_family"]))
    if d.stage == GATED:
        reason = d.gate_reason or "a model compared does not read context"
        return f"{NOT_TESTABLE}: {reason}. Measured: {shown}."
    if judged:  # the default, said once where the list begins
        reading, where = row_reading(family.loc[d.key]), ""
    else:
        reading = plain_reading(d.estimate, d.low, d.high, d.margin, d.paper_sign,
                                d.p_difference, p_equivalence=d.p_equivalence)
        where = (" (at 5%, a check of the test sets outside Holm's family)"
                 if d.stage == NO_MODEL else " (at 5%, outside Holm's family)")
    text = f"{reading}{where}: {shown}."
    note = interval_note(d.estimate, d.low, d.high, d.margin, d.paper_sign, reading)
    text += f" {note}" if note else ""
    if d.stage == EARLY:
        text += (f" Early training: the weakest arm is {level_percent(d.weakest_level)} of the "
                 f"way from the unigram to the bigram rung.")
    elif d.stage == PAST:
        text += " Every arm is past the bigram rung."
    return text


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


def reading_head(reading: str) -> str:
    """A plain reading without its reason: 'not testable here: neither model ...' ->
    'not testable here' (the reason goes into the page's sentence)."""
    return reading.partition(": ")[0]


def reading_reason(reading: str) -> str:
    """The reason after a plain reading's head ('' where there is none)."""
    return reading.partition(": ")[2]


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
    d = unit_digits(row["unit"])
    low, high = float(row["low"]), float(row["high"])
    excludes = low > 0 or high < 0
    holm_only = (excludes and reading_head(reading) in (UNDECIDED, NO_DIFFERENCE)
                 or (int(row["paper_sign"]) == 0 and reading == HOLDS and excludes))
    return {"reading": reading_head(reading), "why": reading_reason(reading),
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

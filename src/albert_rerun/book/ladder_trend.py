"""Each primary decision against compute (issue #38, §4): the compute ladder's rungs
(book/ladder.md) as a chapter's first figure, its one sentence on which way the effect
moves as training grows, and the introduction's "as training grows" column.

What is shown follows the ladder's stopping rule. Until every run of the 1x and 16x
rungs is stored, ``ladder.trend_family`` computes nothing, so a figure shows only what
was public before the ladder trained: the 4x rung (the confirmatory seeds, as stored)
and the committed forecast for 16x; the sentence gives the 16x rung's progress in
counts. Once the store is complete, the same calls show the three rungs, the fitted
line, its reading after Holm and the forecast against the measurement.

Each decision is drawn in its chapter's sign (``confirmatory.in_chapter_sign``): the
chapters of ``confirm_report.REVERSED`` read their headline the other way round from the
registration.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..studies.decisions import agree, capital, interval_text, signed, unit_digits
from .headline_figures import FIGURE_WIDTH_IN, FONT_PT

READING_WORDS = {"moves toward the paper's sign": "It moves toward the paper's sign",
                 "moves away from the paper's sign": "It moves away from the paper's sign",
                 "no trend shown": "No trend is shown (not evidence of no trend)"}


# Each decision's two arms in words, A and B of its registered difference A minus B: a
# moving decision is also said in plain words, which arm does better as training grows
# (a cold reader: "toward the paper's sign" alone asks the reader to work it out).
ARMS_IN_WORDS = {"confirm/asymmetry": ("the FFN-shared model", "the attention-shared one"),
                 "confirm/sharing-cost": ("the all-shared model", "the not-shared one"),
                 "confirm/sop": ("the SOP-trained model's probe", "the NSP-trained model's"),
                 "confirm/dropout": ("the model with dropout", "the one without"),
                 "confirm/equal-time": ("the wide all-shared model",
                                        "the BERT-style model at equal time")}
HIGHER_IS_BETTER = ("points",)  # units of accuracy; the rest are losses (nats)
EQUAL_TIME_KEY = "confirm/equal-time"  # the decision whose arms are timed
SOP_KEY = "confirm/sop"  # the decision whose premise is order learned


def _step(r, step: str, sign: int) -> str:
    """'with', 'against' or 'none': whether a step's own slope interval (``1x-4x`` or
    ``4x-16x``) excludes 0 on the side of the whole slope's sign, on the other, or not."""
    low, high = r[f"{step} low"], r[f"{step} high"]
    if low > 0 or high < 0:
        return "with" if (low > 0) == (sign > 0) else "against"
    return "none"


HOLM_ALPHA = 0.05  # the slope test's level, after Holm's adjustment
NO_CHANGE_WORDS = "no change shown over either step or overall"


def plain_words(key: str, unit: str, r) -> str:
    """'as training grows, the all-shared model does worse relative to the not-shared
    one': which arm gains, from the sign of the slope (registered sign, A minus B) of a
    ``trend_family`` row ``r``, whatever side of zero the difference is on; and over
    which steps, from each step's own slope interval, since a slope leans more than half
    on the 1x-to-4x step (section 3; amendment 10): 'as training grows' only where
    both steps show it. Where Holm's adjusted p is 0.05 or more and neither step's
    interval excludes 0, no change is shown at all (``NO_CHANGE_WORDS``); the whole
    slope's words are said only where Holm's test shows it."""
    first, second = ARMS_IN_WORDS[key]
    p = r.get("p holm")
    if p is not None and np.isfinite(p) and p >= HOLM_ALPHA and not (
            excludes_zero(r, "1x-4x") or excludes_zero(r, "4x-16x")):
        return NO_CHANGE_WORDS  # no trend after Holm, and no step alone shows one
    sign = 1 if r["slope"] > 0 else -1
    how = "worse" if (sign > 0) != (unit in HIGHER_IS_BETTER) else "better"
    early, late = _step(r, "1x-4x", sign), _step(r, "4x-16x", sign)
    moved = f"{first} does {how} relative to {second}"
    back = "the difference moves back"
    if early == "with" and late == "with":
        return f"as training grows, {moved}, in both steps (1x to 4x, 4x to 16x)"
    if early == "with":
        return (f"from 1x to 4x, {moved}; from 4x to 16x, "
                + (back if late == "against" else "no further change is shown"))
    if late == "with":
        return (f"from 4x to 16x, {moved}; from 1x to 4x, "
                + (back if early == "against" else "no change is shown"))
    if p is not None and np.isfinite(p) and p >= HOLM_ALPHA:
        return "no trend shown overall after Holm's adjustment"  # a step may move back
    return f"over 1x to 16x as a whole, {moved}; neither step alone shows it"


@dataclass(frozen=True)
class Trend:
    """One primary decision on the ladder, in its chapter's sign (``sign`` -1 where the
    chapter reads the registration's difference the other way round)."""

    key: str
    claim: str
    label: str
    unit: str
    paper_sign: int
    sign: int
    four: tuple  # (mean, low, high, seeds) of the 4x rung
    forecast: dict | None  # the committed forecast (estimate, low, high), registered sign
    runs: int  # the 16x rung's planned runs
    trained: int
    evaluated: int
    table: dict | None  # ``ladder.trend_family``'s row, once the store is complete
    gap: dict | None = None  # {rung: (mean, low, high)} of the overfitting gap's
    # difference, for ``ladder.GAP_DECISIONS`` once the store is complete
    registered_label: str = ""  # the registration's words, where the chapter turns them
    power: tuple | None = None  # ``planned_power``'s (power, if twice the SD, slope (a))
    passes: dict | None = None  # ``ladder_curves.delay`` at 16x, once complete
    ratios: list | None = None  # equal time's 16x [(seed, ratio, machines, flagged)]
    order: str | None = None  # SOP's: the first rung where order is learned, "" if none;
    # None before the result (or for another decision)

    def turned(self, value: float) -> float:
        return self.sign * float(value)

    def interval(self, estimate: float, low: float, high: float) -> tuple:
        """An estimate and its interval in the chapter's sign (ends swapped when turned)."""
        ends = sorted((self.turned(low), self.turned(high)))
        return self.turned(estimate), ends[0], ends[1]


def _chapter_sign(spec) -> tuple:
    """(sign, label): -1 and the chapter's words where the chapter turns its headline."""
    from ..studies.confirm_design import PRIMARY
    from ..studies.confirm_report import REVERSED
    from .confirmatory import turned_label
    first = next(s for s in PRIMARY if s.claim == spec.claim)
    if spec.key == first.key and spec.claim in REVERSED:
        return -1, turned_label(spec.claim, spec.label)
    return 1, spec.label


# each decision's paper's direction in a few words: the label of a difference drawn with
# the paper's direction positive (``gather``'s ``paper_signs``)
PAPER_WORDS = {"confirm/asymmetry": "up means FFN sharing costs more than attention sharing",
               "confirm/sharing-cost": "up means sharing every layer costs",
               "confirm/sop": "up means SOP orders cue-free pairs better than NSP",
               "confirm/dropout": "up means dropout hurts",
               "confirm/equal-time": "up means the wide all-shared model wins at equal time"}


def gather(store=None, confirm_store=None, chapter_signs: bool = True,
           tables: dict | None = None, paper_signs: bool = False) -> dict:
    """{decision key: Trend} of the ladder's five decisions, from the stored runs: the 4x
    rung (the confirmatory store's, where all its runs are stored) and the forecast
    always; the analysis only once ``trend_family`` computes it (the stopping rule), else
    None. ``store``, ``confirm_store``: the ladder's and the confirmatory results
    folders (default: this checkout's, or $ALBERT_RERUN_RESULTS's). ``chapter_signs``:
    each decision in its chapter's sign (False: the registration's, as the ladder page
    reads them). ``tables``: ``ladder.result_tables``' tables, when the caller
    has them. ``paper_signs``: each decision with the paper's direction positive
    (``PAPER_WORDS``), as the findings pages read them, whatever ``chapter_signs``."""
    from ..engine.store import read_json, results_dir
    from ..stats.inference import mean_interval
    from ..studies import confirm_analysis, confirm_design, ladder
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder import result_tables
    given = store
    store = store or results_dir(ladder.STORE)
    confirm_store = confirm_store or results_dir(confirm_design.STORE)
    forecast = (read_json(store / ladder.FORECAST) or {}).get("forecast", {})
    powers = planned_power(store)
    progress = ladder.progress(store)
    runs, trained, evaluated = ladder_counts(progress, "16x")
    try:
        tables = result_tables(given)[0] if tables is None else tables
    except NotComplete:
        if ladder.settled(progress):
            raise  # every run is stored: the analysis must compute, not fall silent
        tables = None
    table = None if tables is None else tables["trend"]
    gaps = {} if tables is None else {
        key: {rung: (row["gap difference"], row["low"], row["high"])
              for rung, row in part.set_index("rung").iterrows()}
        for key, part in tables["gap differences"].groupby("key")}
    passes, ratios, order = None, None, None
    if tables is not None:  # amendment 10: descriptive, read once the result is stored
        from ..studies import ladder_curves
        passes = ladder_curves.passes("16x", given)
        r = tables["time ratios"]
        ratios = [(int(x["seed"]), float(x["wide / BERT-style seconds"]), x["machines"],
                   bool(x["flagged"])) for _, x in r[r["rung"] == "16x"].iterrows()]
        order = ladder.first_rung_learning_order(tables["sop"]) or ""
    frames = ({"4x": ladder.rung_frame("4x", confirm_store)}
              if confirm_analysis.complete(confirm_store) else {})
    out = {}
    for spec in ladder.DECISIONS:
        d = ladder.differences(frames, spec).get("4x")
        i = mean_interval(d) if d is not None else None
        four = (i.mean, i.low, i.high, i.n) if i is not None else (np.nan,) * 3 + (0,)
        sign, label = ((spec.paper_sign, PAPER_WORDS[spec.key]) if paper_signs else
                       _chapter_sign(spec) if chapter_signs else (1, spec.label))
        out[spec.key] = Trend(
            spec.key, spec.claim, label, spec.unit, sign * spec.paper_sign, sign, four,
            forecast.get(spec.key), runs, trained, evaluated,
            None if table is None else table.loc[spec.key].to_dict(), gaps.get(spec.key),
            spec.label if sign == -1 else "", powers.get(spec.key),
            None if passes is None else ladder_curves.delay(passes, spec),
            ratios if spec.key == EQUAL_TIME_KEY else None,
            order if spec.key == SOP_KEY else None)
    return out


def ladder_counts(ladder, rung: str) -> tuple:
    """(runs, trained, evaluated) of one ladder rung of ``ladder.progress``' table."""
    if ladder is None or not len(ladder):
        return 0, 0, 0
    part = ladder[ladder["rung"] == rung]
    return int(part["of"].sum()), int(part["trained"].sum()), int(part["evaluated"].sum())


def _number(value: float, unit: str) -> str:
    return signed(value, unit_digits(unit))


def _interval(t: Trend, estimate: float, low: float, high: float) -> str:
    """'+0.260 nats [+0.129, +0.391]' in the chapter's sign."""
    number, _, bounds = interval_text(*t.interval(estimate, low, high), t.unit).partition(" ")
    return f"{number} {t.unit} {bounds}"


def excludes_zero(row, name: str) -> bool:
    """Whether a ``trend_family`` row's interval ``name low``..``name high`` excludes 0."""
    return bool(row[f"{name} low"] > 0 or row[f"{name} high"] < 0)


def excluded_before_holm_only(row) -> bool:
    """A slope whose unadjusted interval excludes 0 while Holm's test shows no trend:
    the chapters say so in words, the ladder page marks it with a dagger."""
    from ..studies.ladder import NO_TREND
    return row["reading"] == NO_TREND and excludes_zero(row, "slope")


def no_slope(r) -> str:
    """Where a ``trend_family`` row has too few paired seeds for a slope (amendment 5):
    'fewer than 3 paired seeds at 16x', else ''."""
    from ..studies.ladder import MIN_SEEDS_TO_ANALYSE
    rungs = r.get("too few seeds at")
    if not isinstance(rungs, str) or not rungs:
        return ""
    return f"fewer than {MIN_SEEDS_TO_ANALYSE} paired seeds at {rungs}"


def planned_power(store=None) -> dict:
    """{decision key: (power, power if the 16x SD is twice the 4x, slope (a))}: section
    6's planned power for slope (a) with the planned 16x seeds, from the committed
    design (amendment 7); {} where no design is stored."""
    from ..studies import ladder as L
    design = L.stored_design(store) or {}
    n = len(L.SEEDS["16x"])
    return {key: (plan.get(f"power (a) at {n}"),
                  plan.get(f"power (a), 16x SD twice the 4x, at {n}"), plan.get("slope (a)"))
            for key, plan in design.get("plan", {}).items()}


def percent(share: float) -> str:
    """A planned power in words: '73%', or 'over 99%' where it rounds to 100%
    (amendment 8)."""
    return "over 99%" if share >= 0.995 else f"{share:.0%}"


def tag(key: str) -> str:
    """A decision's short name, from its registered key: 'confirm/sharing-cost' ->
    'sharing cost'. The ladder page's lists and tables and each figure panel's title
    name a decision by it (the full names hold commas, which would not parse in a
    list)."""
    return key.split("/")[-1].replace("-", " ").replace("sop", "SOP")


def miss_side(r) -> str:
    """'' where the 16x mean lies inside its forecast's interval (or none is tested),
    else the side it missed on, in words that hold in either sign (amendments 7 and 8):
    "in the paper's direction" where the 16x mean lies beyond the interval in the
    direction of the paper's sign, "in the other direction" otherwise ("the paper's
    side" names the effect's sign, so it is not used here)."""
    if no_slope(r) or not np.isfinite(r.get("forecast", np.nan)) or r["forecast covers"]:
        return ""
    beyond = 1 if r["16x mean"] > r["forecast high"] else -1
    return ("in the paper's direction" if beyond * r["paper_sign"] > 0
            else "in the other direction")


def sentence(t: Trend, ladder_doc: str = "../ladder") -> str:
    """The first screen's one sentence (or two) on which way the effect moves as
    training grows: the registered reading with its slope once the ladder is complete;
    before, that it is not known yet, the 16x rung's progress in counts, and the
    committed forecast."""
    from ..studies.ladder import AWAY, NO_TREND, TOWARD
    if t.table is None:
        return box_line([t], ladder_doc).removeprefix("**As training grows.** ")
    ladder = f"{{doc}}`compute ladder <{ladder_doc}>`"
    r = t.table
    if no_slope(r):  # amendment 5: diverged or non-finite runs left too few seeds
        return (f"Not computed on the {ladder}: {no_slope(r)}, after diverged or "
                f"non-finite runs were left out. Which way it moves is not known.")
    slope = _interval(t, r["slope"], r["slope low"], r["slope high"])
    words = READING_WORDS.get(r["reading"], r["reading"])
    text = (f"{words} on the {ladder} (Holm's p = {r['p holm']:.3f}): {slope} per "
            f"doubling of compute, from 1x to 16x.")
    means = ", ".join(f"{rung} {_number(t.turned(r[f'{rung} mean']), t.unit)}"
                      for rung in ("1x", "4x", "16x"))
    if r["reading"] in (TOWARD, AWAY):  # amendments 9 and 10: words, then the means
        text += f" In plain words: {plain_words(t.key, t.unit, r)}."
    text += f" The means at each budget: {means} {t.unit}."
    if excluded_before_holm_only(r):
        text += " That interval excludes 0 only before Holm's adjustment."
    on_side = all(r[f"{rung} mean"] * r["paper_sign"] > 0 for rung in ("1x", "4x", "16x"))
    if r["reading"] == TOWARD and not on_side:  # section 3's caution, where it can bite
        text += " Moving toward the paper's sign is not the same as reaching its side."
    if r["reading"] == NO_TREND and t.power and t.power[0] is not None:  # amendment 7
        text += (f" The ladder was planned with {percent(t.power[0])} power to show a "
                 f"slope as large as slope (a), {_number(t.turned(t.power[2]), t.unit)} "
                 f"{t.unit} per doubling (section 6 of the {ladder}); smaller trends "
                 f"could still go unseen.")
    # section 3: each segment's own slope beside it (a segment is half the change over
    # its two doublings), and every rung's sign
    text += (f" Per doubling, 1x to 4x: {_interval(t, r['1x-4x'], r['1x-4x low'], r['1x-4x high'])}"
             f"; 4x to 16x: {_interval(t, r['4x-16x'], r['4x-16x low'], r['4x-16x high'])}.")
    if np.isfinite(r.get("forecast", np.nan)):
        if r["forecast covers"]:
            text += " The 16x mean is inside its forecast's interval (not contradicted)."
        else:
            text += (f" The 16x mean lies beyond its forecast's interval, {miss_side(r)}: "
                     f"the forecast was "
                     f"{_interval(t, r['forecast'], r['forecast low'], r['forecast high'])}.")
    if t.gap:  # section 2: read beside the gap, more compute being more passes
        gaps = ", ".join(f"{rung} {_number(t.turned(t.gap[rung][0]), t.unit)}"
                         if rung in t.gap else f"{rung} –" for rung in ("1x", "4x", "16x"))
        text += (f" Beside it, the same difference in overfitting gap (held-out minus "
                 f"training): {gaps} {t.unit}.")
    if t.passes and t.passes["apart"]:
        text += " " + delay_words(t)
    if t.ratios:
        text += " " + ratio_words(t.ratios)
    if t.sign == -1:
        text += (f" The {{doc}}`ladder page <{ladder_doc}>` prints this difference with the "
                 f"opposite sign ({t.registered_label}).")
    return text


AMENDMENT_10 = "{ref}`amendment 10 <ladder-amendment-10>`"


def _passed(name: str, r: dict) -> str:
    """'the one without first did at 50% to 62% of its training': when an arm's curve
    first scored below the count rung (``ladder_curves.arm_range``), in words."""
    if r["never"] == r["seeds"]:
        return f"{name} did not score below it by the end, in any of its {r['seeds']} seeds"
    span = (f"{r['low']:.0%}" if round(r["low"], 2) == round(r["high"], 2)
            else f"{r['low']:.0%} to {r['high']:.0%}")
    rest = (f" in {r['seeds'] - r['never']} of {r['seeds']} seeds, and not by the end in "
            f"the rest" if r["never"] else "")
    return f"{name} first did at {span} of its training{rest}"


def delay_words(t: Trend) -> str:
    """Where one arm left the loss plateau later than the other in every 16x seed
    (``ladder_curves.delay``): when each arm first scored below the left-bigram count
    rung, and what that may mean (amendment 10, descriptive)."""
    first, second = ARMS_IN_WORDS[t.key]
    return (f"Each 16x run's held-out curve was read against the left-bigram count rung. "
            f"{capital(_passed(first, t.passes['a']))}. "
            f"{capital(_passed(second, t.passes['b']))}. So part of the 16x difference "
            f"may be a delay in leaving the loss plateau, which the ladder cannot tell "
            f"from a lasting cost (descriptive, {AMENDMENT_10}).")


def _machine(names: str) -> str:
    """A record's machine kinds, trademark marks and 'Processor' dropped."""
    return names.replace("(R)", "").replace(" Processor", "").strip()


def ratio_words(ratios: list) -> str:
    """Equal time's 16x seeds: each wide arm's training seconds over its BERT-style
    partner's, with the machine kinds (amendment 10: both reviewers asked for it beside
    the words "at equal time")."""
    shown = "; ".join(f"{seed}: {ratio:.2f} ({_machine(machines)})"
                      for seed, ratio, machines, _ in ratios)
    flagged = sum(flag for *_, flag in ratios)
    return (f"At 16x the wide arm trained for this share of its partner's seconds, by "
            f"seed: {shown}. A run resumed on another machine names the one it finished "
            f"on. {flagged} of {len(ratios)} lie outside 0.9 to 1.1; below 1 favours "
            f"BERT-style.")


def _forecast_words(t: Trend, named: bool) -> str:
    """One decision's forecast in a sentence, and on which side of the 4x mean (the
    confirmatory runs) it lands."""
    f = t.forecast
    name = f"*{capital(t.label)}:* f" if named else "F"
    text = f"{name}orecast {_interval(t, f['estimate'], f['low'], f['high'])}"
    if not np.isfinite(t.four[0]):
        return text + "."
    further = t.turned(f["estimate"]) - t.turned(t.four[0])
    side = ("further toward the paper's side" if further * t.paper_sign > 0
            else "further from the paper's side")
    # a t-interval, as the ladder's fit reads it (a cold reader met two intervals for the
    # 4x SOP result: the box's registered one is the wider of a t and a bootstrap)
    return text + (f", {side} than at 4x ({_interval(t, *t.four[:3])}, the confirmatory "
                   f"runs' t-interval).")


def box_line(trends: list, ladder_doc: str = "../ladder", first_words: str = "") -> str:
    """The chapter box's line "As training grows" for the chapter's ladder decisions
    (``claim_trends``): before the ladder is complete, the 16x rung's progress once and
    each decision's forecast; after, each decision's ``sentence``, named where the
    chapter has more than one. ``first_words``: what the reader must know before them
    (chapter 4: the 4x premise that fails), right after the line's head."""
    if not trends:
        return ""
    head = "**As training grows.**" + (f" {first_words}" if first_words else "")
    if all(t.table is None for t in trends):
        first = trends[0]
        ladder = f"{{doc}}`compute ladder <{ladder_doc}>`"
        text = (f"{head} Which way it moves is not known yet. The slope test waits for "
                f"the {ladder}'s 16x budget: {first.trained} of its {first.runs} runs "
                f"{agree(first.trained, 'is', 'are')} stored.")
        shown = [t for t in trends if t.forecast]
        if shown:
            text += (" A {term}`forecast` carries the line through the 1x and 4x means to "
                     "16x. It is an extrapolation, not a test.")
        for t in shown:
            text += " " + _forecast_words(t, len(trends) > 1)
        return text
    if len(trends) == 1:  # named, so that its numbers have a difference to be of
        t = trends[0]
        return f"{head} *{capital(t.label)}:* {sentence(t, ladder_doc)}"
    # a list, one decision an item: a paragraph of two read as one long run (a cold reader)
    return head + "\n\n" + "\n".join(f"- *{capital(t.label)}:* {sentence(t, ladder_doc)}"
                                     for t in trends)


def cell(t: Trend) -> str:
    """The introduction's "as training grows" cell: the reading and Holm's p once the
    ladder is complete (the slope, with each step's beside it as section 3 asks, is in
    the chapter), else its progress and the forecast, in a few words."""
    if t.table is None:
        f = t.forecast
        if f and np.isfinite(t.four[0]):
            return (f"not known yet (16x: {t.trained} of {t.runs} runs). 4x "
                    f"{_number(t.turned(t.four[0]), t.unit)} → forecast "
                    f"{_number(t.turned(f['estimate']), t.unit)} {t.unit}, extrapolated")
        return f"not known yet (16x: {t.trained} of {t.runs} runs)"
    r = t.table
    if no_slope(r):
        return reading_words(r)
    means = " → ".join(_number(t.turned(r[f"{rung} mean"]), t.unit)
                       for rung in ("1x", "4x", "16x"))
    return f"{reading_words(r)}; 1x → 4x → 16x: {means} {t.unit}"


# a slope's registered reading in the findings pages' words (one label a result)
PLAIN = {"moves toward the paper's sign": "moves toward the paper",
         "moves away from the paper's sign": "moves away from the paper",
         "no trend shown": "no trend shown", "not computed": "not computed"}


def plain_label(r) -> str:
    """'moves toward the paper': a ``trend_family`` row's reading in plain words, with
    why where it could seem to disagree with its unadjusted interval ('no trend shown
    after Holm's adjustment' where that interval excludes 0)."""
    label = PLAIN.get(r["reading"], r["reading"])
    if not no_slope(r) and excluded_before_holm_only(r):
        label += " after Holm's adjustment"
    return label


def reading_words(r) -> str:
    """"no trend shown (Holm's p = 1.000; not evidence of none)": a reading, its p after
    Holm, and the registered caution where no trend is shown."""
    from ..studies.ladder import NO_TREND
    if no_slope(r):
        return f"{r['reading']} ({no_slope(r)})"
    caution = "; not evidence of none" if r["reading"] == NO_TREND else ""
    return f"{r['reading']} (Holm's p = {r['p holm']:.3f}{caution})"


def claim_trends(trends: dict, claim: str) -> list:
    """The claim's ladder decisions, its headline first."""
    return [t for t in trends.values() if t.claim == claim]


def figure(trends: list):
    """The decisions of one chapter against compute, one panel a row: each rung's mean
    paired difference with its 95% interval (the 4x rung always; 1x and 16x once the
    ladder is complete, with the fitted line), the forecast for 16x with its 95%
    prediction interval, zero, and the paper's side shaded. Returns the figure."""
    import matplotlib.pyplot as plt

    from ..studies.ladder import RUNGS, X
    # the complete ladder's panels carry a three-line title (name, reading, slope)
    complete = any(t.table is not None for t in trends)
    fig, axes = plt.subplots(len(trends), 1, squeeze=False, dpi=100,
                             figsize=(FIGURE_WIDTH_IN,
                                      (2.5 if complete else 2.2) * len(trends) + 1.2))
    for ax, t in zip(axes[:, 0], trends):
        _panel(ax, t, X, RUNGS)
    for ax in axes[:-1, 0]:  # the panels share their x axis: its label once, at the foot
        ax.set_xlabel("")
    seen = {}  # one legend for the panels, each entry once
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    # the legend's room in inches (a line of text each entry), whatever the panels
    legend_in = 0.2 + 0.22 * len(seen) if seen else 0
    share = legend_in / fig.get_figheight()
    # the complete ladder's legend heads the figure, beside the panels read first (a
    # cold reader); before, at the foot, as the chapters' committed notebooks glue it
    if seen:
        fig.legend(list(seen.values()), list(seen.keys()),
                   loc="upper center" if complete else "lower center",
                   ncol=1, fontsize=FONT_PT, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - share) if complete else (0, share, 1, 1))
    return fig


def _panel(ax, t: Trend, X: dict, RUNGS: dict) -> None:
    points = {"4x": t.four[:3]}
    if t.table is not None:
        points = {r: (t.table[f"{r} mean"], t.table[f"{r} low"], t.table[f"{r} high"])
                  for r in RUNGS}
    values = []
    for rung, (m, lo, hi) in points.items():
        m, lo, hi = t.interval(m, lo, hi)
        if not np.isfinite(m):
            continue
        values += [lo, hi]
        ax.errorbar([X[rung]], [m], yerr=[[m - lo], [hi - m]], fmt="o", color="black",
                    capsize=3, lw=1.6, label=("mean over a budget's seeds, 95% interval"
                                              if t.table is not None else
                                              "mean over a rung's seeds, 95% interval"))
    if t.table is not None and not no_slope(t.table):
        ns = np.array([t.table[f"{r} seeds"] for r in RUNGS], dtype=float)
        ms = np.array([t.turned(t.table[f"{r} mean"]) for r in RUNGS])
        xs = np.array([X[r] for r in RUNGS])
        b = t.turned(t.table["slope"])
        a = float((ns * ms).sum() / ns.sum() - b * (ns * xs).sum() / ns.sum())
        ax.plot([xs[0], xs[-1]], [a + b * xs[0], a + b * xs[-1]], "--", color="black",
                lw=1, label="fitted slope (least squares through every seed)")
    if t.forecast:
        f, lo, hi = t.interval(t.forecast["estimate"], t.forecast["low"], t.forecast["high"])
        values += [lo, hi]
        x = X["16x"] + (0.15 if t.table is not None else 0)
        ax.errorbar([x], [f], yerr=[[f - lo], [hi - f]], fmt="D", color="tab:orange",
                    capsize=3, lw=1.6, label="forecast for 16x, 95% prediction interval")
        if t.table is not None and np.isfinite(t.table["1x mean"]):  # 1x through 4x, on
            ax.plot([X["1x"], x], [t.turned(t.table["1x mean"]), f], ":",
                    color="tab:orange", lw=1.2, label="the forecast's line, 1x through 4x")
    finite = [v for v in values if np.isfinite(v)] or [-1.0, 1.0]
    low, high = min(0.0, *finite), max(0.0, *finite)
    pad = 0.15 * (high - low) or 1.0
    # each side of zero keeps at least a quarter of the axis, so both stay readable
    low, high = min(low - pad, -0.4 * (high - low)), max(high + pad, 0.4 * (high - low))
    ax.set_ylim(low, high)
    ax.axhline(0, color="0.4", lw=0.8)
    span = (0, high) if t.paper_sign > 0 else (low, 0) if t.paper_sign < 0 else None
    if span is not None:
        ax.axhspan(*span, color="tab:green", alpha=0.13, zorder=0)
        ax.text(5.45, span[0] + 0.5 * (span[1] - span[0]), "paper's\nside",
                fontsize=FONT_PT, color="tab:green", va="center", ha="right")
    ax.set_xlim(-0.9, 5.5)
    ticks = dict(zip(RUNGS, RUNGS))
    if t.table is None:
        ticks.update({"4x": "4x (confirmatory)", "16x": "16x (forecast)"})
    ax.set_xticks([X[r] for r in RUNGS], list(ticks.values()), fontsize=FONT_PT)
    # the complete ladder's words (amendments 7 and 8); before, the chapters' figure as
    # committed in their notebooks (nbval compares the glued image)
    ax.set_xlabel("training budget: steps, times the 1x budget's (log scale)"
                  if t.table is not None
                  else "training budget, times the cpu profile's steps (log scale)",
                  fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    ax.set_ylabel(t.unit, fontsize=FONT_PT)
    title = t.label if t.table is None else f"{tag(t.key)}: {t.label}"
    if t.table is not None:  # the reading beside its line, so no line reads as a trend
        title += f"\n{plain_label(t.table)}" + (
            "" if no_slope(t.table) else f" (Holm's p = {t.table['p holm']:.3f})")
        if not no_slope(t.table):  # and the slope it reads (a cold reader)
            r = t.table
            title += f"\nslope {_interval(t, r['slope'], r['slope low'], r['slope high'])}"
            title += " per doubling"
    ax.set_title(title, fontsize=FONT_PT, loc="left")
    notes = {}
    if t.table is None:  # the stopping rule: 1x and 16x wait for the whole ladder
        notes["1x"] = "1x: shown\nwhen 16x\nis stored"
        if not t.forecast:
            notes["16x"] = f"16x: {t.trained}\nof {t.runs}\nruns stored"
    if not np.isfinite(t.four[0]) and t.table is None:
        notes["4x"] = "4x: not\nstored\nhere"
    for rung, note in notes.items():
        ax.text(X[rung], 0.5, note, fontsize=FONT_PT, ha="center", va="center",
                color="0.35", transform=ax.get_xaxis_transform(),
                bbox={"facecolor": "white", "edgecolor": "0.8", "boxstyle": "round"})
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)

"""The ladder page's result (book/ladder.md, right after its progress): the registered
analysis and the tables beside it, in the registered sign, once every run is stored, and
"" before (the stopping rule, section 4). The tables come from
``studies.ladder_result.result_tables``: the result as ``ladder.store_result`` stored it
once, or computed now where it is not stored yet, which the page then says."""
from __future__ import annotations

import math
from pathlib import Path

from ..studies import ladder as L
from ..pages.ladder_trend import (excluded_before_holm_only, excludes_zero, miss_side,
                                  no_slope, percent, plain_words, planned_power, tag)
from ..studies.decisions import agree, interval_text, signed, unit_digits
from .ladder_after import after_text
from .preregistration import write_figure

NOT_EVIDENCE = "(not evidence of no trend)"
AMENDMENT = "{{ref}}`amendment {0} <ladder-amendment-{0}>`"  # a dropdown on the ladder page


def _cell(row, name: str, unit: str) -> str:
    """'+0.012 [-0.004, +0.028]': a table row's ``name``, ``name low``, ``name high``
    ('+0.100, no interval (no spread)' where the seeds agree exactly, amendment 5)."""
    if not math.isfinite(row[f"{name} low"]):
        point = interval_text(row[name], row[name], row[name], unit).split(" [")[0]
        return f"{point}, no interval (no spread)"
    return interval_text(row[name], row[f"{name} low"], row[f"{name} high"], unit)


def _rung(row, rung: str) -> str:
    """A rung's mean and 95% t-interval, with its seeds where a diverged run left fewer
    than planned."""
    seeds = int(row[f"{rung} seeds"])
    if not math.isfinite(row[f"{rung} mean"]):  # fewer than two seeds left
        return f"– (n = {seeds})"
    text = interval_text(row[f"{rung} mean"], row[f"{rung} low"], row[f"{rung} high"],
                         row["unit"])
    return text + (f" (n = {seeds})" if seeds < len(L.SEEDS[rung]) else "")


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _name(row) -> str:
    """'**asymmetry**': a table row's short name; ``decisions_key`` gives each its
    difference, unit and the paper's sign once (a cold reader found all four packed in
    every table's first cell)."""
    return f"**{tag(row.name)}**"


def decisions_key(table) -> str:
    """The five decisions once, by the short names the tables below use: the difference
    (first arm minus second), its unit and the paper's sign."""
    lines = ["| decision | difference, A minus B | unit | the paper's sign |",
             "|---|---|---|---|"]
    for _, row in table.iterrows():
        sign = {1: "+", -1: "−"}.get(int(row["paper_sign"]), "0")
        lines.append(f"| {_name(row)} | {row['decision']} | {row['unit']} | {sign} |")
    return "\n".join(lines) + "\n"


def turned_chapters() -> str:
    """'{doc}`chapter 3 <...>` and {doc}`chapter 5 <...>`': the chapters that read a
    ladder decision the other way round (``confirm_report.REVERSED``)."""
    from ..pages.ledger import CLAIM_TITLES
    from ..studies.confirm_report import REVERSED
    links = [f"{{doc}}`chapter {CLAIM_TITLES[c][0]} <chapters/{CLAIM_TITLES[c][2]}>`"
             for c in REVERSED]
    return ", ".join(links[:-1]) + " and " + links[-1] if len(links) > 1 else links[0]


def _moving(row) -> str:
    """'- sharing cost *moves toward the paper's sign*: as training grows, the all-shared
    model does worse relative to the not-shared one. Its slope is +0.128 [+0.092,
    +0.164] nats per doubling (Holm's p = 0.008); from 4x to 16x alone, +0.267 [+0.210,
    +0.324].': a moving decision as a list item, in plain words first (a cold reader),
    then its slope and its later step's own slope per doubling, so a reader sees whether
    that step excludes 0 (amendment 7: the first step was partly seen before)."""
    return (f"- {tag(row.name)} *{row['reading']}*: "
            f"{plain_words(row.name, row['unit'], row)}. Its slope is "
            f"{_cell(row, 'slope', row['unit'])} {row['unit']} per doubling (Holm's p = "
            f"{_p(row['p holm'])}); from 4x to 16x alone, "
            f"{_cell(row, '4x-16x', row['unit'])}.")


def readings_sentence(table, powers: dict | None = None) -> str:
    """The five readings after Holm, each moving decision named with its slope, with the
    registered caution that "no trend shown" is not evidence of no trend; a list where
    any moved (the decisions' names hold commas). ``powers`` (``planned_power``): each
    "no trend shown" named with its planned power, which says how little that reading
    may mean (a cold reader)."""
    def names(reading) -> list:
        return [tag(key) for key, row in table.iterrows() if row["reading"] == reading]

    def powered(key) -> str:
        if powers is None:
            return tag(key)
        power = powers.get(key)
        if not power or not _has_power(power):
            return f"{tag(key)} (no planned power)"
        return f"{tag(key)} (planned power {percent(power[0])})"
    if not names(L.TOWARD) and not names(L.AWAY) and not names(L.NOT_COMPUTED):
        return (f"After Holm's adjustment, no trend is shown for any of the {len(table)} "
                f"slopes. That is not evidence that there is none.")
    items = [_moving(row) for reading in (L.TOWARD, L.AWAY)
             for _, row in table.iterrows() if row["reading"] == reading]
    if names(L.NOT_COMPUTED):
        items.append(f"- *{L.NOT_COMPUTED}*, fewer than {L.MIN_SEEDS_TO_ANALYSE} seeds "
                     f"with both arms left at a rung ({AMENDMENT.format(5)}; it counts as "
                     f"p = 1 in Holm's family, which makes the other tests slightly "
                     f"stricter): "
                     f"{'; '.join(names(L.NOT_COMPUTED))}")
    if names(L.NO_TREND):
        items.append(f"- *{L.NO_TREND}* {NOT_EVIDENCE}: " + "; ".join(
            powered(key) for key, row in table.iterrows() if row["reading"] == L.NO_TREND))
    return f"After Holm's adjustment over the {len(table)} slopes:\n\n" + "\n".join(items)


MISSED = {"in the paper's direction": "toward", "in the other direction": "away"}


def forecast_groups(table) -> dict:
    """{"held", "toward", "away", "not tested": decision names}: where each 16x mean
    lies against its forecast's 95% interval, a miss by its side of the paper's sign
    (``ladder_trend.miss_side``, amendment 7); a decision without a slope (amendment 5)
    is not tested."""
    out = {"held": [], "toward": [], "away": [], "not tested": []}
    for _, row in table.iterrows():
        group = ("not tested" if no_slope(row) else MISSED.get(miss_side(row), "held"))
        out[group].append(tag(row.name))
    return out


def forecast_sentence(table) -> str:
    """The forecast against the 16x mean, decisions named (descriptive, section 5): a
    list, since the decisions' names hold commas."""
    if "forecast covers" not in table or table["forecast covers"].isna().all():
        return "No forecast is stored, so none is tested."
    groups = forecast_groups(table)
    words = {"held": "held: the 16x mean lies inside its 95% interval",
             "toward": "missed: the 16x mean lies beyond the interval, in the paper's "
                       "direction",
             "away": "missed: the 16x mean lies beyond the interval, in the other "
                     "direction",
             "not tested": "not tested: too few seeds left at 16x"}
    items = [f"- *{words[g]}*: {'; '.join(names)}" for g, names in groups.items() if names]
    return "The forecast for 16x:\n\n" + "\n".join(items)


def _has_power(power: tuple) -> bool:
    """Whether a ``planned_power`` entry holds a power (SOP's has no slope (a))."""
    return power[0] is not None and math.isfinite(power[0])


def _power(power: tuple | None, unit: str = "nats") -> str:
    """'73% (22%) at +0.058': the planned power, with the 16x SD twice the 4x one in
    brackets, at slope (a) (amendments 7 and 8)."""
    if not power:
        return "no design stored"
    if not _has_power(power):
        return "– (no slope (a))"
    return f"{percent(power[0])} ({percent(power[1])}) at {signed(power[2], unit_digits(unit))}"


def trend_table(table, powers: dict) -> str:
    """Each decision's rung means with their 95% t-intervals, its slope per doubling of
    compute with its interval (a dagger where that interval excludes 0 but Holm's test
    does not reject), its p before and after Holm, the degrees of freedom, the
    registered reading and the planned power (amendment 7, ``planned_power``), each in a
    column of its own."""
    lines = ["| decision | " + " | ".join(
        f"{rung} ({len(L.SEEDS[rung])} seeds planned)" for rung in L.RUNGS)
        + " | slope per doubling of compute | p | Holm's p | df | reading | planned power "
        f"at slope (a), {len(L.SEEDS['16x'])} seeds at 16x (if the 16x SD is twice the "
        f"4x) |",
        "|---" * (len(L.RUNGS) + 7) + "|"]
    for _, row in table.iterrows():
        rungs = " | ".join(_rung(row, r) for r in L.RUNGS)
        if no_slope(row):  # amendment 5
            lines.append(f"| {_name(row)} | {rungs} | no slope: {no_slope(row)} | 1 "
                         f"({AMENDMENT.format(5)}) | {_p(row['p holm'])} | – | "
                         f"**{row['reading']}** | {_power(powers.get(row.name), row['unit'])} |")
            continue
        dagger = "†" if excluded_before_holm_only(row) else ""
        lines.append(f"| {_name(row)} | {rungs} | {_cell(row, 'slope', row['unit'])}{dagger} "
                     f"| {_p(row['p'])} | {_p(row['p holm'])} | {row['slope df']:.0f} | "
                     f"**{row['reading']}** | {_power(powers.get(row.name), row['unit'])} |")
    return "\n".join(lines) + "\n"


def steps_text(table) -> str:
    """What each slope leans on (section 3): the slope of each step, 1x to 4x and 4x to
    16x, and the curvature, each with its interval (descriptive), and which effects
    bend."""
    from ..stats.trend import slope_weights
    weights = slope_weights([L.X[r] for r in L.RUNGS], [len(L.SEEDS[r]) for r in L.RUNGS])
    # slope = -w_1x (m4x - m1x) + w_16x (m16x - m4x) = the two steps' slopes per
    # doubling, weighted: the first step's weight is -w_1x times its doublings
    first = -weights[0] * (L.X["4x"] - L.X["1x"])
    lines = ["**Each step's own slope** (section 3 of the registration below). The "
             "ladder has two steps, 1x to 4x and 4x to 16x. The 4x runs had been "
             "analysed before this registration, and the fitted slope gives the "
             f"1x-to-4x step {first:.0%} of its weight. So each step's own slope per "
             "doubling is shown: only the 4x-to-16x step was unseen. The "
             "curvature is m(16x) − 2 m(4x) + m(1x), where m is a rung's mean. It is "
             "negative when the 4x mean sits above the straight line from 1x to 16x.", "",
             "| decision | 1x to 4x, per doubling | 4x to 16x, per doubling | curvature |",
             "|---|---|---|---|"]
    for _, row in table.iterrows():
        if no_slope(row):
            lines.append(f"| {_name(row)} | – | – | – |")
            continue
        lines.append(f"| {_name(row)} | {_cell(row, '1x-4x', row['unit'])} | "
                     f"{_cell(row, '4x-16x', row['unit'])} | "
                     f"{_cell(row, 'curvature', row['unit'])} |")
    computed = [row for _, row in table.iterrows() if not no_slope(row)]
    bent = [tag(row.name) for row in computed if excludes_zero(row, "curvature")]
    lines += ["", (f"The curvature's interval excludes 0 for {len(bent)} of "
                   f"{len(computed)}: {'; '.join(bent)}. There the two steps differ: the "
                   f"effect bends between the rungs (descriptive, not adjusted)."
                   if bent else "No curvature's interval excludes 0.")]
    return "\n".join(lines) + "\n"


def gap_differences_text(differences, table, split=None) -> str:
    """The overfitting gap's paired difference beside each slope in nats (section 2,
    amendments 4 and 7), then ``split_text`` where the split is stored."""
    lines = ["**The overfitting gap beside the slopes in nats** (section 2 of the "
             "registration, and amendment 7). More compute is also more passes over the "
             "same training split. The overfitting gap is held-out minus training "
             "cross-entropy at `[MASK]`. A model that fits its repeated training text "
             "better than new text has a larger gap. The table gives the difference in "
             "that gap, A minus B, in nats, at each rung.", "",
             "| decision | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for key, part in differences.groupby("key", sort=False):
        by = part.set_index("rung")
        cells = [interval_text(by.loc[r, "gap difference"], by.loc[r, "low"],
                               by.loc[r, "high"], "nats") if r in by.index else "–"
                 for r in L.RUNGS]  # "–": fewer than two seeds left at that rung
        lines.append(f"| **{tag(key)}** | " + " | ".join(cells) + " |")
    if split is not None:
        lines += ["", split_text(split, table)]
    return "\n".join(lines) + "\n"


WORDS = {"training part": "training-split part", "gap part": "gap part"}


def split_reading(row) -> str:
    """Amendment 7's reading of one split: nothing unless the change's interval excludes
    0; then which parts' intervals exclude 0."""
    if not math.isfinite(row["change"]):
        return "not split: too few seeds at a rung"
    if not math.isfinite(row["change low"]):  # no spread: no interval (amendment 8)
        return "not read: no spread"
    if not row["read"]:
        return "not read: the change's interval includes 0"
    parts = [WORDS[name] for name in ("training part", "gap part")
             if excludes_zero(row, name)]
    return {0: "neither part's interval excludes 0",
            1: f"only the {parts[0]}'s interval excludes 0" if parts else "",
            2: "both parts' intervals exclude 0"}[len(parts)]


def split_text(split, table) -> str:
    """Each decision's change from 1x to 16x and its training and gap parts, with their
    intervals and amendment 7's reading and cautions."""
    lines = ["**Where each change from 1x to 16x lies** (amendment 7, descriptive). For "
             "each seed, a held-out difference is its training-split difference plus its "
             "gap difference. So the change of a mean from 1x to 16x splits exactly into "
             "a training-split part and a gap part. Each has a 95% interval, with the "
             "fewer seeds of the two rungs less one as df, as for the slopes. The "
             "reading says which "
             "parts' intervals exclude 0. It says so only where the change's own "
             "interval excludes 0. Each number is rounded on its own, so the parts may "
             "miss their sum in the last digit. SOP is in points and has no gap.", "",
             "| decision | change, 1x to 16x (nats) | training-split part | gap part | "
             "reading |",
             "|---|---|---|---|---|"]
    for key, row in split.iterrows():
        if not math.isfinite(row["change"]):
            lines.append(f"| **{tag(key)}** | – | – | – | {split_reading(row)} |")
            continue
        cells = " | ".join(_cell(row, name, "nats")
                           for name in ("change", "training part", "gap part"))
        lines.append(f"| **{tag(key)}** | {cells} | {split_reading(row)} |")
    lines += ["", "Four cautions. A seed's training and held-out cross-entropies move "
              "together, so the training-split part is measured about as roughly as the "
              "change, and the gap part far more precisely. So \"only the gap part's "
              "interval excludes 0\" does not mean that the gap part is most of the "
              f"change ({AMENDMENT.format(8)}). A part whose interval includes 0 is not "
              "shown to be 0. The gap is not pure overfitting: held-out and training text "
              "differ before any text is repeated. And on the ladder, repetition and "
              "compute grow together, so the split cannot tell them apart."]
    return "\n".join(lines)


def curvature_is_miss(row) -> bool:
    """Whether the 16x mean minus the forecast equals the curvature m(16x) - 2 m(4x) +
    m(1x): so where the forecast came from the 1x and 4x runs shown (amendment 7)."""
    return abs(row["16x mean"] - row["forecast"] - row["curvature"]) < 1e-9


def forecast_record_text(store=None) -> str:
    """Where the stored forecast's recorded commit reads '+dirty' (tracked files differed
    while it was computed): that commit, the commit that stored the forecast, and the
    files between them, from git; "" for a clean record or in a shallow clone."""
    from ..engine.store import read_json, results_dir
    from ..studies.confirm_design import _git
    record = read_json((store or results_dir(L.STORE)) / L.FORECAST) or {}
    commit = record.get("provenance", {}).get("git_commit", "")
    path = f"data/results/{L.STORE}/{L.FORECAST}"
    added = _git("log", "--format=%H", "--diff-filter=A", "--", path).stdout.split()
    if not commit.endswith("+dirty") or not added:
        return ""
    head = commit.removesuffix("+dirty")
    changed = _git("diff", "--name-only", head, added[-1]).stdout.split()
    between = ("only the forecast itself" if changed == [path] else
               f"{len(changed)} {agree(len(changed), 'file', 'files')}")
    return (f"The forecast's record names commit `{head[:7]}`, marked dirty: some tracked "
            f"files differed from it while the forecast was computed. The commit that "
            f"stored the forecast, `{added[-1][:7]}`, adds {between} to `{head[:7]}`. Git "
            f"cannot show what the uncommitted tree held; that commit's message says "
            f"what it was.")


def forecast_text(table) -> str:
    """The committed forecast against the 16x measurement (section 5), descriptive."""
    if "forecast" not in table or table["forecast"].isna().all():
        return "No forecast is stored, so none is tested.\n"
    lines = ["| decision | forecast, 95% prediction interval | 16x mean, 95% interval | "
             "16x mean inside the forecast's interval? | SD of the difference over 16x "
             "seeds, assumed → measured |", "|---|---|---|---|---|"]
    fewer = []
    for _, row in table.iterrows():
        forecast = interval_text(row["forecast"], row["forecast low"],
                                 row["forecast high"], row["unit"])
        digits = 1 if row["unit"] == "points" else 3
        if no_slope(row):
            lines.append(f"| {_name(row)} | {forecast} | {_rung(row, '16x')} | not tested: "
                         f"{no_slope(row)} | {row['forecast sd']:.{digits}f} → – |")
            continue
        if row["16x seeds"] < len(L.SEEDS["16x"]):
            fewer.append(tag(row.name))
        lines.append(f"| {_name(row)} | {forecast} | {_rung(row, '16x')} | "
                     f"{'yes' if row['forecast covers'] else '**no**'} | "
                     f"{row['forecast sd']:.{digits}f} → {row['16x sd']:.{digits}f} |")
    groups = forecast_groups(table)
    tested = len(table) - len(groups["not tested"])
    notes = ["Inside means that the forecast is not contradicted, not that it is "
             "confirmed."]
    missed = [row for _, row in table.iterrows() if miss_side(row)]
    if missed and all(curvature_is_miss(row) for row in missed):  # amendments 5 to 7
        notes.append("The 16x mean minus the forecast is the curvature in the table "
                     "above, since the forecast is the line from the 1x mean through the "
                     "4x mean. For a miss, the forecast's interval judges it with the SD "
                     "it assumed and {term}`Welch's degrees of freedom <forecast>`. The "
                     "curvature's interval uses the measured SDs and the fewest seeds "
                     "less one. So the two can disagree.")
    elif missed:
        notes.append("The forecast came from 1x runs other than those shown here, so a "
                     "miss is not the curvature in the table above.")
    notes.append("The last column is for context only: four seeds measure an SD too "
                 "roughly to judge it.")
    if fewer:
        notes.append(f"The forecast's interval assumed {len(L.SEEDS['16x'])} seeds at 16x. "
                     f"Fewer were left for {'; '.join(fewer)} (n shown), so there it is a "
                     f"little too narrow.")
    if groups["not tested"]:
        notes.append("A decision without a slope has its forecast shown, not tested: its "
                     f"16x mean rests on fewer than 3 seeds ({AMENDMENT.format(6)}).")
    notes.append(f"By chance alone, a 95% interval misses 1 time in 20, so {tested} "
                 f"forecasts would miss {0.05 * tested:.2f} times on average. The five "
                 f"forecasts share arms, so they are not independent.")
    return "\n".join(lines + ["", " ".join(notes)]) + "\n"


def gaps_table(gaps) -> str:
    """Each arm's held-out minus training cross-entropy at [MASK], per rung."""
    lines = ["| arm | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for arm, part in gaps.groupby("arm", sort=False):
        by = part.set_index("rung")
        cells = [interval_text(by.loc[r, "gap"], by.loc[r, "low"], by.loc[r, "high"], "nats")
                 if r in by.index else "–" for r in L.RUNGS]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def grown_sentence(gaps) -> str:
    """Which arms' gap is larger at 16x than at 1x, the two intervals apart."""
    grown = []
    for arm, part in gaps.groupby("arm", sort=False):
        by = part.set_index("rung")
        if {"1x", "16x"} <= set(by.index) and by.loc["16x", "low"] > by.loc["1x", "high"]:
            grown.append(arm)
    names = "; ".join(f"*{arm}*" for arm in grown)
    return (f"\nThe gap is larger at 16x than at 1x, with the two intervals apart, for "
            f"{len(grown)} {agree(len(grown), 'arm', 'arms')}: {names}.\n" if grown else
            "\nNo arm's gap at 16x lies above its 1x interval.\n")


def sop_text(sop) -> str:
    """The SOP-trained model's cue-free probe and head against the majority label, per
    rung, and the first rung at which order counts as learned (the probe's rule)."""
    def cell(row, name: str) -> str:
        if not math.isfinite(row[f"{name} mean"]):
            return "not stored"
        return interval_text(row[f"{name} mean"], row[f"{name} low"], row[f"{name} high"],
                             "points")
    lines = ["**SOP at each rung** (section 3 of the registration), on the cue-free pairs, for the SOP-trained "
             "ALBERT-style arm. The probe is a classifier fitted on the frozen model's "
             "features; the head is the SOP classifier trained with the model. Each is "
             "shown in accuracy points above the majority label (always guessing the "
             "commoner answer). Below 0, it does worse than that guess.", "",
             "| rung | probe minus majority | head minus majority | order learned? |",
             "|---|---|---|---|"]
    for rung, row in sop.iterrows():
        lines.append(f"| {rung} | {cell(row, 'probe')} | {cell(row, 'head')} | "
                     f"{'yes' if row['order learned'] else 'not shown'} |")
    first = L.first_rung_learning_order(sop)
    if first:
        last = (f"Order counts as learned first at {first}: there the probe's interval "
                f"lies wholly above 0.")
    elif sop["probe mean"].isna().any():
        last = ("Order is not shown to be learned at any rung where the probe is "
                "stored; where it is not, nothing is known.")
    else:
        last = ("Order is not shown to be learned at any rung: the probe's interval "
                "never lies wholly above 0. That is not evidence that it is not learned "
                f"({AMENDMENT.format(7)}).")
    return "\n".join(lines + ["", last]) + "\n"


def time_text(ratios) -> str:
    """Equal time at every rung: each seed's ratio of the wide run's training seconds to
    the BERT-style run's, those outside 0.9 to 1.1 in bold, with the machine kinds."""
    column = "wide / BERT-style seconds"
    lines = ["**Equal time at each rung**: the ratio of each seed's wide to BERT-style "
             "training seconds. Below 1, the wide model trained for less time than "
             "BERT-style, which favours BERT-style. A ratio outside 0.9 to 1.1 is in "
             "bold.", "",
             "| rung | seed: ratio | machines |", "|---|---|---|"]
    for rung, part in ratios.groupby("rung", sort=False):
        kinds = sorted(set(part["machines"]))
        cells = ", ".join(  # each seed's machines where the rung ran on more than one kind
            f"{r.seed}: " + (f"**{r.ratio:.2f}**" if r.flagged else f"{r.ratio:.2f}")
            + (f" ({r.machines})" if len(kinds) > 1 else "")
            for r in part.rename(columns={column: "ratio"}).itertuples())
        lines.append(f"| {rung} | {cells} | {kinds[0] if len(kinds) == 1 else 'by seed'} |")
    flagged = int(ratios["flagged"].sum())
    lines += ["", f"{flagged} of {len(ratios)} seeds fall outside 0.9 to 1.1. The wide "
              f"arm's steps were fixed before any run, as in the first registration, so a "
              f"flagged seed stays in. Its ratio shows how far equal steps drifted from "
              f"equal time on its machine. A run resumed on another machine names the "
              f"one it finished on ({AMENDMENT.format(11)})."]
    return "\n".join(lines) + "\n"


NUMBER_NAMES = {"mlm_loss_at_mask": "held-out cross-entropy at `[MASK]`",
                "train_mlm_loss_at_mask": "training cross-entropy at `[MASK]`"}


def diverged_text(store=None, nonfinite=None) -> str:
    """The diverged runs by rung, arm and seed, and the decisions each leaves; then the
    runs with a stored number that is not finite (``nonfinite``, amendment 5)."""
    from ..engine.store import config_hash
    from ..studies import conditions as C
    failed = L.diverged(store)
    odd = [] if nonfinite is None else list(nonfinite.itertuples())
    if odd:
        lines = ["", "Runs with a stored number that is not finite, kept out of their "
                 f"arm's decisions and gaps ({AMENDMENT.format(6)}):", ""]
        for r in odd:
            left = [s.label for s in L.DECISIONS if r.arm in (s.a, s.b)]
            names = " and ".join(NUMBER_NAMES.get(n, n) for n in r.number.split(", "))
            lines.append(f"- {r.rung}, {r.arm}, seed {r.seed}: its {names} "
                         f"{agree(r.number.count(',') + 1, 'is', 'are')} not finite. It is "
                         f"dropped from {'; '.join(left)}, and from every table.")
        odd = lines
    if not failed:
        return "\n".join(["No run diverged."] + odd) + "\n"
    lines = ["Diverged runs, kept out of their arm's decisions (section 4):", ""]
    for rung in ("1x", "16x"):
        for arm, config in L.configs(rung).items():
            for seed in L.SEEDS[rung]:
                key = config_hash(C.seeded(config, seed).to_dict())
                if key in failed:
                    left = [s.label for s in L.DECISIONS if arm in (s.a, s.b)]
                    lines.append(f"- {rung}, {arm}, seed {seed} ({failed[key]}). It is "
                                 f"dropped from {'; '.join(left)}.")
    return "\n".join(lines + odd) + "\n"


def provenance_text(store=None) -> str:
    """Whether every ladder run trained from a clean checkout descending from the
    registration with its training code, and every 16x run from the forecast's commit."""
    from ..engine.store import results_dir
    from ..studies.confirm_design import _git
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        return "Provenance: not checked here, in a shallow clone.\n"
    problems = L.provenance_problems(L.stored_runs(store or results_dir(L.STORE)))
    if not problems:
        return ("Provenance: every stored ladder run trained from a clean checkout that "
                "descends from the registration, with its training code, and every 16x "
                "run from the forecast's commit.\n")
    return (f"Provenance: {len(problems)} {agree(len(problems), 'problem', 'problems')}. "
            + "; ".join(problems[:3]) + ("; …" if len(problems) > 3 else "") + "\n")


RESULT_FIGURE = """```{figure} _generated/ladder-trends.png
:alt: the five decisions' paired differences at 1x, 4x and 16x, with the fitted slopes and the forecasts

The five decisions against compute, in the registered sign (A minus B). Each black point
is a rung's mean over its seeds, with its 95% interval. The dashed line is the fitted
slope, and it need not pass through the means: it is the least-squares line through
every seed's difference, so a rung weighs by its seeds. The orange diamond is the
committed forecast for 16x, with its 95% prediction interval, drawn just right of 16x
so that both show. It lies on the dotted line from the 1x mean through the 4x mean.
Green marks the paper's side.
```
"""


def results_text(store=None, generated: Path | None = None) -> str:
    """Once every run of the ladder is stored: the registered analysis (sections 3 to 5)
    and the tables beside it, in the registered sign, and (with ``generated``) its
    figure; before, "" (no estimate before the store is complete, the stopping rule)."""
    from ..pages import ladder_trend
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder_result import result_tables
    from ..studies.ladder_result import NOT_STORED
    from ..studies.ladder_power import pilot_wide_config
    try:
        tables, stored = result_tables(store)
    except NotComplete as error:
        return f"**The result**: {NOT_STORED}.\n" if NOT_STORED in str(error) else ""
    table = tables["trend"]
    dagger = (" † marks a slope whose interval excludes 0 only before Holm's adjustment."
              if any(excluded_before_holm_only(row) for _, row in table.iterrows()
                     if not no_slope(row)) else "")
    where = (f"*The analysis was computed once, by {stored['trigger']}, at commit "
             f"`{stored['provenance']['git_commit'][:7]}`, and is read from "
             f"`data/results/ladder/{L.RESULT}`"
             + (" (an early end, by an amendment's decision)" if stored.get("early_end")
                else "") + ".*")
    powers = planned_power(store)  # the committed design's, read once for both
    lines = [f"**The result.** {readings_sentence(table, powers)}", "",
             forecast_sentence(table), "",
             f"Each row is the first arm minus the second, as its name says. Two "
             f"chapters print their differences with the sign turned, to match their headlines: "
             f"{turned_chapters()}. A slope is the change per doubling of compute; 1x to "
             f"16x is four doublings. Intervals are 95% and not adjusted.{dagger} "
             f"A rung's interval is the t-interval over its seeds. For SOP at 4x, "
             f"{{doc}}`chapter 4 <chapters/04_sop_nsp>` gives a wider one: the first "
             f"registration takes the wider of that t-interval and a bootstrap over "
             f"seeds and test pairs ({AMENDMENT.format(10)}). "
             f"Holm's p is the "
             f"p-value after that adjustment over the five slopes; a trend is shown where "
             f"it is below 0.05. The slope test's degrees of freedom (df) are the fewest "
             f"seeds of any rung, less one (section 3 of the registration below). That "
             f"rule is conservative: a slope of zero is rejected at most 5% of the time, so each "
             f"interval covers at least 95%. The planned power is section 6's chance "
             f"of showing a trend if the true slope were slope (a) ({AMENDMENT.format(7)}). "
             f"Slope (a) is the line from the `cpu` profile's earlier 1x runs (seeds 0 "
             f"to 2, not this rung's) to the 4x mean; equal time's comes from a wide "
             f"arm of {pilot_wide_config().max_steps:,} steps there, not the ladder's "
             f"{L.wide_steps('1x'):,}. Each power is at Holm's first step, so it is a "
             f"lower bound ({AMENDMENT.format(8)}). Where the power is low, "
             f"\"no trend shown\" says little.", "",
             "The tables name each decision by a short name:", "", decisions_key(table), "",
             trend_table(table, powers), "",
             "A slope toward the paper's sign does not mean that the effect reaches the "
             "paper's side. A slope is a straight line through three points: it says which "
             "way the effect travels from 1x to 16x, not where it would be at ALBERT's "
             "compute.", "", steps_text(table), "",
             gap_differences_text(tables["gap differences"], table,
                                  tables.get("gap split")), "",
             "**The forecast, then its test** (section 5).", "", forecast_text(table),
             forecast_record_text(store)]
    if generated is not None:
        trends = ladder_trend.gather(store, chapter_signs=False, tables=tables)
        write_figure(ladder_trend.figure(list(trends.values())),
                     generated / "ladder-trends.png")
        lines += ["", RESULT_FIGURE]
    lines += ["", "**Each arm's overfitting gap**, held-out minus training cross-entropy "
              "at `[MASK]` (nats):", "", gaps_table(tables["gaps"]),
              grown_sentence(tables["gaps"]), "",
              sop_text(tables["sop"]), "", time_text(tables["time ratios"]), "",
              after_text(store), "",
              diverged_text(store, tables.get("non-finite")), "", provenance_text(store),
              "", where]
    return "\n".join(lines)

"""The ladder page's result (book/ladder.md, right after its progress): the registered
analysis and the tables beside it, in the registered sign, once every run is stored, and
"" before (the stopping rule, section 4). The tables come from
``studies.ladder_result.result_tables``: the result as ``ladder.store_result`` stored it
once, or computed now where it is not stored yet, which the page then says."""
from __future__ import annotations

import math
from pathlib import Path

from ..studies import ladder as L
from ..studies.decisions import agree, interval_text
from .preregistration import write_figure

NOT_EVIDENCE = "(not evidence of no trend)"


def _cell(row, name: str, unit: str) -> str:
    """'+0.012 [-0.004, +0.028]': a table row's ``name``, ``name low``, ``name high``."""
    return interval_text(row[name], row[f"{name} low"], row[f"{name} high"], unit)


def _rung(row, rung: str) -> str:
    """A rung's mean and 95% t-interval, with its seeds where a diverged run left fewer
    than planned."""
    text = interval_text(row[f"{rung} mean"], row[f"{rung} low"], row[f"{rung} high"],
                         row["unit"])
    seeds = int(row[f"{rung} seeds"])
    return text + (f" (n = {seeds})" if seeds < len(L.SEEDS[rung]) else "")


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _name(row) -> str:
    return f"{row['decision']} ({row['unit']})"


def _excludes_zero(row, name: str) -> bool:
    return bool(row[f"{name} low"] > 0 or row[f"{name} high"] < 0)


def turned_chapters() -> str:
    """'{doc}`chapter 3 <...>` and {doc}`chapter 5 <...>`': the chapters that read a
    ladder decision the other way round (``confirm_report.REVERSED``)."""
    from ..pages.ledger import CLAIM_TITLES
    from ..studies.confirm_report import REVERSED
    links = [f"{{doc}}`chapter {CLAIM_TITLES[c][0]} <chapters/{CLAIM_TITLES[c][2]}>`"
             for c in REVERSED]
    return ", ".join(links[:-1]) + " and " + links[-1] if len(links) > 1 else links[0]


def readings_sentence(table) -> str:
    """The five readings after Holm, counted in words, with the registered caution that
    "no trend shown" is not evidence of no trend."""
    counts = table["reading"].value_counts()
    moved = [f"{counts[r]} {agree(int(counts[r]), 'moves', 'move')} {where}"
             for r, where in ((L.TOWARD, "toward the paper's sign"),
                              (L.AWAY, "away from the paper's sign")) if r in counts]
    none = int(counts.get(L.NO_TREND, 0))
    if not moved:
        return (f"After Holm's adjustment, no trend is shown for any of the {len(table)} "
                f"slopes. That is not evidence that there is none.")
    text = f"After Holm's adjustment over the {len(table)} slopes, " + " and ".join(moved)
    return text + (f"; no trend is shown for {none} {NOT_EVIDENCE}." if none else ".")


def trend_table(table) -> str:
    """Each decision's rung means with their 95% t-intervals, its slope per doubling of
    compute with its interval (a dagger where that interval excludes 0 but Holm's test
    does not reject), its p before and after Holm with the degrees of freedom, and the
    registered reading."""
    lines = ["| decision, A minus B (unit) | " + " | ".join(
        f"{rung} ({len(L.SEEDS[rung])} seeds)" for rung in L.RUNGS)
        + " | slope per doubling | p → Holm's p (df) | reading |",
        "|---" * (len(L.RUNGS) + 4) + "|"]
    for _, row in table.iterrows():
        dagger = "†" if _excludes_zero(row, "slope") and row["reading"] == L.NO_TREND else ""
        lines.append(f"| {_name(row)} | " + " | ".join(_rung(row, r) for r in L.RUNGS)
                     + f" | {_cell(row, 'slope', row['unit'])}{dagger} | {_p(row['p'])} → "
                     f"{_p(row['p holm'])} ({row['slope df']:.0f}) | **{row['reading']}** |")
    return "\n".join(lines) + "\n"


def steps_text(table) -> str:
    """What each slope leans on (section 3): the slope of each step, 1x to 4x and 4x to
    16x, and the curvature, each with its interval (descriptive), and which effects
    bend."""
    lines = ["**Each step's own slope** (section 3). A slope leans on both steps of the "
             "ladder, a little over half of it on the first, which was partly seen before "
             "the registration. So each step's slope per doubling stands beside it. The "
             "curvature is m(16x) − 2 m(4x) + m(1x), where m is a rung's mean. It is "
             "negative when the 4x mean sits above the straight line from 1x to 16x.", "",
             "| decision | 1x to 4x, per doubling | 4x to 16x, per doubling | curvature |",
             "|---|---|---|---|"]
    for _, row in table.iterrows():
        lines.append(f"| {_name(row)} | {_cell(row, '1x-4x', row['unit'])} | "
                     f"{_cell(row, '4x-16x', row['unit'])} | "
                     f"{_cell(row, 'curvature', row['unit'])} |")
    bent = [row["decision"] for _, row in table.iterrows() if _excludes_zero(row, "curvature")]
    lines += ["", (f"The curvature's interval excludes 0 for {len(bent)} of "
                   f"{len(table)}: {'; '.join(bent)}. A straight line fits "
                   f"{agree(len(bent), 'that effect', 'those effects')} poorly."
                   if bent else "No curvature's interval excludes 0.")]
    return "\n".join(lines) + "\n"


def gap_differences_text(differences, table) -> str:
    """The overfitting gap's paired difference beside the dropout and sharing-cost
    slopes (section 2)."""
    lines = ["**The overfitting gap beside two slopes** (section 2). More compute is also "
             "more passes over the same training split. A model that fits its repeated "
             "training data better than held-out data has a larger gap: held-out minus "
             "training cross-entropy at `[MASK]`. So the dropout and sharing-cost slopes "
             "stand beside the difference in that gap, A minus B, in nats:", "",
             "| decision | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for key, part in differences.groupby("key", sort=False):
        by = part.set_index("rung")
        cells = [interval_text(by.loc[r, "gap difference"], by.loc[r, "low"],
                               by.loc[r, "high"], "nats") for r in L.RUNGS]
        lines.append(f"| {table.loc[key, 'decision']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def forecast_text(table) -> str:
    """The committed forecast against the 16x measurement (section 5), descriptive."""
    if "forecast" not in table or table["forecast"].isna().all():
        return "No forecast is stored, so none is tested.\n"
    lines = ["| decision | forecast, 95% prediction interval | 16x mean, 95% interval | "
             "16x mean inside the forecast's interval? | 16x SD, assumed → measured |",
             "|---|---|---|---|---|"]
    below, above = [], []
    for _, row in table.iterrows():
        forecast = interval_text(row["forecast"], row["forecast low"],
                                 row["forecast high"], row["unit"])
        if not row["forecast covers"]:
            (below if row["16x mean"] < row["forecast low"] else above).append(row["decision"])
        digits = 1 if row["unit"] == "points" else 3
        lines.append(f"| {_name(row)} | {forecast} | {_rung(row, '16x')} | "
                     f"{'yes' if row['forecast covers'] else '**no**'} | "
                     f"{row['forecast sd']:.{digits}f} → {row['16x sd']:.{digits}f} |")
    inside = int(table["forecast covers"].sum())
    lines += ["", f"The 16x mean lies inside its forecast's interval for {inside} of "
              f"{len(table)} decisions. Inside means the forecast is not contradicted, not "
              f"that it is confirmed."]
    for words, names in (("below", below), ("above", above)):
        if names:
            lines[-1] += f" The 16x mean lies {words} the interval for {'; '.join(names)}."
    lines[-1] += (" A miss says that the line bent between 4x and 16x, or that the 16x "
                  "spread is larger than the forecast assumed (the last column). Five 95% "
                  "intervals miss 0.25 times on average by chance alone.")
    return "\n".join(lines) + "\n"


def gaps_table(gaps) -> str:
    """Each arm's held-out minus training cross-entropy at [MASK], per rung."""
    lines = ["| arm | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for arm, part in gaps.groupby("arm", sort=False):
        by = part.set_index("rung")
        cells = [interval_text(by.loc[r, "gap"], by.loc[r, "low"], by.loc[r, "high"], "nats")
                 if r in by.index else "–" for r in L.RUNGS]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sop_text(sop) -> str:
    """The SOP-trained model's cue-free probe and head against the majority label, per
    rung, and the first rung at which order counts as learned (the probe's rule)."""
    def cell(row, name: str) -> str:
        if not math.isfinite(row[f"{name} mean"]):
            return "not stored"
        return interval_text(row[f"{name} mean"], row[f"{name} low"], row[f"{name} high"],
                             "points")
    lines = ["**SOP at each rung** (section 3), on the cue-free pairs, for the SOP-trained "
             "ALBERT-style arm. The probe is a classifier fitted on the frozen model's "
             "features; the head is the SOP classifier trained with the model. Each is "
             "shown in accuracy points above the majority label (always guessing the "
             "commoner answer).", "",
             "| rung | probe minus majority | head minus majority | order learned? |",
             "|---|---|---|---|"]
    for rung, row in sop.iterrows():
        lines.append(f"| {rung} | {cell(row, 'probe')} | {cell(row, 'head')} | "
                     f"{'yes' if row['order learned'] else 'no'} |")
    first = L.first_rung_learning_order(sop)
    if first:
        last = (f"Order counts as learned first at {first}: there the probe's interval "
                f"lies wholly above 0.")
    elif sop["probe mean"].isna().any():
        last = ("Order counts as learned at no rung where the probe is stored; where it "
                "is not, nothing is known.")
    else:
        last = ("Order counts as learned at no rung: the probe's interval never lies "
                "wholly above 0.")
    return "\n".join(lines + ["", last]) + "\n"


def time_text(ratios) -> str:
    """Equal time at every rung: each seed's ratio of the wide run's training seconds to
    the BERT-style run's, those outside 0.9 to 1.1 in bold, with the machine kinds."""
    column = "wide / BERT-style seconds"
    lines = ["**Equal time at each rung**: the ratio of each seed's wide to BERT-style "
             "training seconds. A ratio outside 0.9 to 1.1 is in bold.", "",
             "| rung | seed: ratio | machines |", "|---|---|---|"]
    for rung, part in ratios.groupby("rung", sort=False):
        cells = ", ".join(f"{r.seed}: **{r.ratio:.2f}**" if r.flagged
                          else f"{r.seed}: {r.ratio:.2f}"
                          for r in part.rename(columns={column: "ratio"}).itertuples())
        lines.append(f"| {rung} | {cells} | {', '.join(sorted(set(part['machines'])))} |")
    flagged = int(ratios["flagged"].sum())
    lines += ["", f"{flagged} of {len(ratios)} seeds fall outside 0.9 to 1.1."]
    return "\n".join(lines) + "\n"


def diverged_text(store=None) -> str:
    """The diverged runs by rung, arm and seed, and the decisions each leaves."""
    from ..engine.store import config_hash
    from ..studies import conditions as C
    failed = L.diverged(store)
    if not failed:
        return "No run diverged.\n"
    lines = ["Diverged runs, kept out of their arm's decisions (section 4):", ""]
    for rung in ("1x", "16x"):
        for arm, config in L.configs(rung).items():
            for seed in L.SEEDS[rung]:
                key = config_hash(C.seeded(config, seed).to_dict())
                if key in failed:
                    left = [s.label for s in L.DECISIONS if arm in (s.a, s.b)]
                    lines.append(f"- {rung}, {arm}, seed {seed}: {failed[key]}. It leaves "
                                 f"{'; '.join(left)}.")
    return "\n".join(lines) + "\n"


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
is a rung's mean over its seeds with its 95% interval. The dashed line is the fitted
slope: a least-squares line through every seed's difference, so a rung weighs by its
seeds and the line need not pass through the means. The orange diamond is the committed
forecast for 16x with its 95% prediction interval, on the dotted line from the 1x mean
through the 4x mean. Green marks the paper's side.
```
"""


def results_text(store=None, generated: Path | None = None) -> str:
    """Once every run of the ladder is stored: the registered analysis (sections 3 to 5)
    and the tables beside it, in the registered sign, and (with ``generated``) its
    figure; before, "" (no estimate before the store is complete, the stopping rule)."""
    from ..pages import ladder_trend
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder_result import result_tables
    try:
        tables, provenance = result_tables(store)
    except NotComplete:
        return ""
    table = tables["trend"]
    where = (f"It was computed once, when the last run was stored, at commit "
             f"`{provenance['git_commit'][:7]}` (`data/results/ladder/{L.RESULT}`)."
             if provenance else
             f"It is computed from the stored runs and not stored yet: `python -m "
             f"albert_rerun.studies.ladder result` stores it, once.")
    lines = [f"**The result.** {readings_sentence(table)} {where}", "",
             f"Each row is the first arm minus the second, as its name says. Two "
             f"chapters print theirs with the sign turned, to match their headlines: "
             f"{turned_chapters()}. Intervals are 95% and not adjusted. † marks a slope whose "
             f"interval excludes 0 only before Holm's adjustment. Holm's p is the p-value "
             f"after that adjustment over the five slopes; a trend is shown where it is "
             f"below 0.05, with the degrees of freedom of section 3.", "",
             trend_table(table), "",
             "A slope toward the paper's sign does not mean that the effect reaches the "
             "paper's side. A slope is a straight line through three points: it says which "
             "way the effect travels from 1x to 16x, not where it would be at ALBERT's "
             "compute.", "", steps_text(table), "",
             gap_differences_text(tables["gap differences"], table), "",
             "**The forecast, then its test** (section 5).", "", forecast_text(table)]
    if generated is not None:
        trends = ladder_trend.gather(store, chapter_signs=False, tables=tables)
        write_figure(ladder_trend.figure(list(trends.values())),
                     generated / "ladder-trends.png")
        lines += ["", RESULT_FIGURE]
    lines += ["", "**Each arm's overfitting gap**, held-out minus training cross-entropy "
              "at `[MASK]` (nats):", "", gaps_table(tables["gaps"]), "",
              sop_text(tables["sop"]), "", time_text(tables["time ratios"]), "",
              diverged_text(store), "", provenance_text(store)]
    return "\n".join(lines)

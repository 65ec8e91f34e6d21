"""The generated parts of book/ladder.md: the registration record, the progress (counts
only), and the power table the seed counts were chosen on (from the stored design)."""
from __future__ import annotations

import math
from pathlib import Path

from ..studies import ladder as L
from ..studies.decisions import agree, interval_text
from .preregistration import write_figure

RECORD = L.RECORD
MAX = L.MAX_16X


def record_text(root: Path) -> str:
    from .preregistration import record_text as line
    return line(root, RECORD, ", and no ladder run may train")


def progress_text(store=None) -> str:
    """Runs stored per rung: counts, never an estimate."""
    table = L.progress(store)
    if bool((table["evaluated"] == table["of"]).all()):
        lead = ("**Progress**: every run of the 1x and 16x rungs is stored and evaluated. "
                "The result below was computed from them, once.")
    else:
        lead = ("**Progress**: counts only. No ladder estimate is computed before every "
                "run of both trained rungs is stored. Two things are shown before that "
                "(amendment 1): the registered forecast of the 16x rung (section 5) and "
                "the 4x rung, which is the confirmatory study's.")
    lines = [lead, "", "| rung | runs | trained | evaluated |", "|---|---|---|---|"]
    for rung, part in table.groupby("rung", sort=False):
        lines.append(f"| {rung} ({L.RUNGS[rung]:,} steps, {len(L.SEEDS[rung])} seeds) | "
                     f"{int(part['of'].sum())} | {int(part['trained'].sum())} | "
                     f"{int(part['evaluated'].sum())} |")
    lines.append(f"| 4x ({L.RUNGS['4x']:,} steps) | the confirmatory store, complete | | |")
    costs = costs_text(store)
    return "\n".join(lines) + "\n" + (f"\n{costs}" if costs else "")


def rungs_text() -> str:
    """The rungs: steps, tokens a run, passes over the training split, seeds, source."""
    from ..studies import long_pilot
    from ..data.corpus import tokenize_split
    from ..data.tokenizer import Tokenizer
    base = L.configs("4x")[L.confirm_design.ALBERT]
    per_step = base.batch_size * base.max_seq_length
    corpus = len(tokenize_split("train", Tokenizer()).tokens)
    source = {"1x": "trained for this study", "4x": "the confirmatory store, as stored",
              "16x": "trained for this study"}
    lines = ["| rung | steps | tokens a run | passes over the training split | seeds | "
             "source |", "|---|---|---|---|---|---|"]
    rows = [(rung, steps, L.SEEDS[rung], source[rung]) for rung, steps in L.RUNGS.items()]
    rows.append(("long pilot (64x)", long_pilot.STEPS, (long_pilot.SEED,),
                 "exploratory, outside the family"))
    for name, steps, seeds, where in rows:
        tokens = steps * per_step
        seed_text = (f"{seeds[0]} to {seeds[-1]} ({len(seeds)})" if len(seeds) > 1
                     else f"{seeds[0]} (1)")
        lines.append(f"| {name} | {steps:,} | about {tokens / 1e6:.1f}M | "
                     f"{tokens / corpus:.1f} | {seed_text} | {where} |")
    return "\n".join(lines) + (f"\n\nThe training split holds {corpus / 1e6:.2f}M tokens, so "
                               f"the upper rungs see it many times over.\n")


def _number(value, digits: int) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.{digits}f}"


def _power(value) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{100 * value:.0f}%"


def power_text(design: dict | None) -> str:
    """The power table and the budget's choice, from the stored design."""
    if design is None:
        return "**Not yet designed**: `python -m albert_rerun.studies.ladder design`.\n"
    b = design["budget"]
    n16, needed = int(b["16x seeds"]), b["needed"]
    strict = int(b["strict affordable"])
    lines = [f"| decision | 1x mean (SD) | 4x mean (SD) | slope (a) | slope (b) | power (a) "
             f"at {strict} / {n16} / {needed} 16x seeds | power (a), 16x SD twice the 4x, "
             f"at {n16} | power (a), 11 seeds at 1x, at {n16} | power (b) at {n16} / "
             f"{needed} |", "|---|---|---|---|---|---|---|---|---|"]
    for key in [spec.key for spec in L.DECISIONS]:
        row = design["plan"][key]
        digits = 1 if row["unit"] == "points" else 3
        sd = lambda v: "–" if v is None else f"{v:.{digits + (0 if digits == 1 else 1)}f}"
        one = (f"{_number(row['1x mean'], digits)} ({sd(row['1x SD'])})"
               if row["1x seeds"] else f"not measured ({sd(row['1x SD'])}, the 4x SD)")
        lines.append(
            f"| `{key}` ({row['unit']}) | {one} | {_number(row['4x mean'], digits)} "
            f"({sd(row['4x SD'])}) | {_number(row['slope (a)'], digits + 1)} | "
            f"{_number(row['slope (b)'], digits + 1)} | "
            f"{_power(row.get(f'power (a) at {strict}'))} / "
            f"{_power(row[f'power (a) at {n16}'])} / {_power(row.get(f'power (a) at {needed}'))} | "
            f"{_power(row.get(f'power (a), 16x SD twice the 4x, at {n16}'))} | "
            f"{_power(row.get(f'power (a), 11 at 1x, at {n16}'))} | "
            f"{_power(row[f'power (b) at {n16}'])} / {_power(row.get(f'power (b) at {needed}'))} |")
    seen_keys = [k for k, r in design["plan"].items() if (r.get(f"power (b) at {n16}") or 0) >= 0.8]
    seen = (" and ".join(f"`{k}`" for k in seen_keys) or "none") + (" alone" if len(seen_keys) == 1 else "")
    under = " and ".join(f"`{k}`" for k in b["underpowered"]) or "none"
    lines += ["", f"Slopes are per doubling of compute, in the decision's unit. Powers are "
              f"at Holm's first step, with {int(b['1x seeds'])} seeds at 1x.", "",
              f"**The seeds.** The rule needs {needed} seeds at 16x. The budget holds "
              f"{b['affordable']}. So the ladder trains **{n16} seeds at 16x and "
              f"{int(b['1x seeds'])} at 1x**: {b['hours']:.1f} CPU-hours in all, against a "
              f"limit of {b['limit']:.1f}. The long pilot takes {b['pilot hours']:.1f} of "
              f"them, a 1x seed {b['1x hours a seed']:.2f} and a 16x seed "
              f"{b['16x hours a seed']:.1f}.", "",
              f"**How the budget was read.** At a strict {L.BUDGET_HOURS:.0f} hours the "
              f"rule would give {b['strict affordable']} seeds at 16x. Reading \"about "
              f"{L.BUDGET_HOURS:.0f}\" as up to {L.BUDGET_TOLERANCE:.0%} over is what buys "
              f"seed {b['strict affordable'] + 1}. The 1x rung keeps {int(b['1x seeds'])} "
              f"seeds, not 11, by choice: 11 would cost {b['hours with 11 at 1x']:.1f} hours, "
              f"and the column \"11 seeds at 1x\" shows the power they would buy.", "",
              f"**What the cap costs** is the gap between the power at {n16} and at "
              f"{needed} 16x seeds. Even {MAX} seeds at 16x would not give 80% at slope (a) to {under} "
              f"(SOP has no slope (a): its 1x mean was never measured). Their slopes will "
              f"most likely read \"no trend shown\". At slope (b), a change of one margin "
              f"over the ladder, {seen} {'reaches' if len(seen_keys) == 1 else 'reach'} 80% "
              f"at {n16} seeds."]
    return "\n".join(lines) + "\n"


# -- the result, once every run is stored ----------------------------------------------

def _cell(row, name: str, unit: str) -> str:
    """'+0.012 [-0.004, +0.028]': a table row's ``name``, ``name low``, ``name high``."""
    return interval_text(row[name], row[f"{name} low"], row[f"{name} high"], unit)


def _rung(row, rung: str) -> str:
    """A rung's mean and its 95% t-interval (``trend_family``'s "1x mean", "1x low"...)."""
    return interval_text(row[f"{rung} mean"], row[f"{rung} low"], row[f"{rung} high"],
                         row["unit"])


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _name(row) -> str:
    return f"{row['decision']} ({row['unit']})"


def trend_table(table) -> str:
    """Each decision's rung means with their 95% t-intervals, its slope per doubling of
    compute with its interval, Holm's p over the five slopes, and the reading."""
    seeds = {rung: int(table[f"{rung} seeds"].max()) for rung in L.RUNGS}
    lines = ["| decision (A minus B) | " + " | ".join(f"{rung} ({seeds[rung]} seeds)"
                                                     for rung in L.RUNGS)
             + " | slope per doubling | p | Holm's p | reading |",
             "|---" * (len(L.RUNGS) + 5) + "|"]
    for _, row in table.iterrows():
        rungs = " | ".join(_rung(row, rung) for rung in L.RUNGS)
        lines.append(f"| {_name(row)} | {rungs} | {_cell(row, 'slope', row['unit'])} | "
                     f"{_p(row['p'])} | {_p(row['p holm'])} | **{row['reading']}** |")
    return "\n".join(lines) + "\n"


def segments_table(table) -> str:
    """What each slope leans on (section 3): the two segments' slopes per doubling and
    the curvature, each with its interval, descriptive."""
    lines = ["| decision | 1x to 4x, per doubling | 4x to 16x, per doubling | curvature |",
             "|---|---|---|---|"]
    for _, row in table.iterrows():
        lines.append(f"| {_name(row)} | {_cell(row, '1x-4x', row['unit'])} | "
                     f"{_cell(row, '4x-16x', row['unit'])} | "
                     f"{_cell(row, 'curvature', row['unit'])} |")
    return "\n".join(lines) + "\n"


def forecast_table(table) -> str:
    """The committed forecast against the 16x measurement (section 5), descriptive."""
    if "forecast" not in table or table["forecast"].isna().all():
        return "No forecast is stored, so none is tested.\n"
    lines = ["| decision | forecast, 95% prediction interval | 16x measured, 95% "
             "t-interval | inside the forecast's interval? |", "|---|---|---|---|"]
    for _, row in table.iterrows():
        forecast = interval_text(row["forecast"], row["forecast low"],
                                 row["forecast high"], row["unit"])
        lines.append(f"| {_name(row)} | {forecast} | {_rung(row, '16x')} | "
                     f"{'yes' if row['forecast covers'] else '**no**'} |")
    inside = int(table["forecast covers"].sum())
    lines += ["", f"{inside} of {len(table)} measured means lie inside their forecast's "
              f"interval. Across five decisions, about a quarter of a miss is expected by "
              f"chance alone. A miss says that the line bent between 4x and 16x, or that "
              f"the 16x spread exceeds the assumed one."]
    return "\n".join(lines) + "\n"


def gaps_table(gaps) -> str:
    """Held-out minus training cross-entropy at [MASK], per arm and rung."""
    lines = ["| arm | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for arm, part in gaps.groupby("arm", sort=False):
        by = part.set_index("rung")
        cells = [interval_text(by.loc[r, "gap"], by.loc[r, "low"], by.loc[r, "high"], "nats")
                 if r in by.index else "–" for r in L.RUNGS]
        lines.append(f"| {arm} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def sop_table(sop) -> str:
    """The SOP-trained model's cue-free probe and head against the majority label, per
    rung, and the first rung at which order counts as learned."""

    def cell(row, name: str) -> str:
        if not math.isfinite(row[f"{name} mean"]):
            return "not stored"
        return interval_text(row[f"{name} mean"], row[f"{name} low"], row[f"{name} high"],
                             "points")
    lines = ["| rung | probe minus majority (points) | head minus majority (points) | "
             "order learned? |", "|---|---|---|---|"]
    for rung, row in sop.iterrows():
        lines.append(f"| {rung} | {cell(row, 'probe')} | {cell(row, 'head')} | "
                     f"{'yes' if row['order learned'] else 'no'} |")
    first = L.first_rung_learning_order(sop)
    lines += ["", (f"Order counts as learned first at the {first} rung: there the probe's "
                   f"interval lies wholly above zero." if first else
                   "Order counts as learned at no rung: the probe's interval never lies "
                   "wholly above zero.")]
    return "\n".join(lines) + "\n"


def time_table(ratios) -> str:
    """Equal time at every rung: the wide run's training seconds over the BERT-style
    run's, per rung (range over seeds), with the seeds outside 0.9 to 1.1 flagged."""
    column = "wide / BERT-style seconds"
    lines = ["| rung | seeds | wide over BERT-style seconds | outside 0.9 to 1.1 | "
             "machines |", "|---|---|---|---|---|"]
    for rung, part in ratios.groupby("rung", sort=False):
        flagged = part.loc[part["flagged"], "seed"].tolist()
        lines.append(f"| {rung} | {len(part)} | {part[column].min():.2f} to "
                     f"{part[column].max():.2f} | "
                     f"{', '.join(f'seed {s}' for s in flagged) or 'none'} | "
                     f"{', '.join(sorted(set(part['machines'])))} |")
    return "\n".join(lines) + "\n"


def diverged_text(store=None) -> str:
    failed = L.diverged(store)
    if not failed:
        return "No run diverged.\n"
    return ("Diverged runs, kept out of their arm's decisions (section 4):\n\n"
            + "\n".join(f"- `{key}`: {text}" for key, text in failed.items()) + "\n")


RESULT_FIGURE = """```{figure} _generated/ladder-trends.png
:alt: the five decisions' paired differences at 1x, 4x and 16x, with the fitted slopes and the forecasts

The five decisions against compute, in the registered sign (A minus B). Each point is a
rung's mean over its seeds with its 95% t-interval; the dashed line is the fitted slope;
the orange diamond is the committed forecast for 16x with its 95% prediction interval.
Green shading marks the paper's side.
```
"""


READING_VERBS = {L.TOWARD: ("moves toward the paper's sign", "move toward the paper's sign"),
                 L.AWAY: ("moves away from it", "move away from it"),
                 L.NO_TREND: ("shows no trend", "show no trend")}


def readings_sentence(table) -> str:
    """'After Holm's adjustment over the five slopes, 1 moves toward the paper's sign
    and 4 show no trend.'"""
    counts = table["reading"].value_counts()
    parts = [f"{counts[r]} {READING_VERBS[r][int(counts[r] != 1)]}" for r in READING_VERBS
             if r in counts]
    if len(parts) == 1:
        reading = READING_VERBS[counts.index[0]][int(len(table) != 1)]
        return f"After Holm's adjustment, all {len(table)} slopes {reading}."
    listed = ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"After Holm's adjustment over the {len(table)} slopes, {listed}."


def results_text(store=None, generated: Path | None = None) -> str:
    """Once every run of the ladder is stored: the registered analysis (sections 3 to 5)
    as tables, in the registered sign, and (with ``generated``) its figure; before, ""
    (no estimate before the store is complete, the stopping rule)."""
    from ..pages import ladder_trend
    from ..studies.confirm_design import NotComplete
    try:
        frames = L.rung_frames(store)
    except NotComplete:
        return ""
    table = L.trend_family(store, frames=frames)
    lines = [f"**The result**, computed once, with every run stored. "
             f"{readings_sentence(table)} Each difference is A minus B in the registered "
             f"sign, as section 3 defines it; two chapters turn theirs round to read as "
             f"their headline. Intervals are 95% and not adjusted; the reading follows "
             f"Holm's p.", "", trend_table(table), "",
             "**What each slope leans on** (section 3): each segment's own slope, and the "
             "curvature m(16x) - 2 m(4x) + m(1x).", "", segments_table(table), "",
             "**The forecast, then its test** (section 5).", "", forecast_table(table)]
    if generated is not None:
        trends = ladder_trend.gather(store, chapter_signs=False, table=table)
        write_figure(ladder_trend.figure(list(trends.values())),
                     generated / "ladder-trends.png")
        lines += ["", RESULT_FIGURE]
    lines += ["", "**Beside it, descriptive.** More compute is also more passes over the "
              "data. So the dropout and sharing-cost slopes are read with each arm's "
              "held-out minus training cross-entropy at `[MASK]` (nats, mean and 95% "
              "t-interval):", "", gaps_table(L.gaps_by_rung(store, frames=frames)), "",
              "**SOP at each rung**, on the cue-free pairs (the SOP-trained ALBERT-style "
              "arm):", "", sop_table(L.sop_by_rung(store, frames=frames)), "",
              "**Equal time at each rung**: each seed's wide over BERT-style training "
              "seconds.", "", time_table(L.time_ratios_by_rung(store, frames=frames)), "",
              diverged_text(store)]
    return "\n".join(lines)


def costs_text(store=None) -> str:
    """The hours and speed of the stored runs, from their training records alone:
    'Hours of training stored, one thread a run: 3.0 for the 48 runs of the 1x rung
    (11,024 to 25,544 tokens a second by arm), ...'."""
    costs = L.training_costs(store)
    if not len(costs):
        return ""
    parts = [f"{part['hours'].sum():.1f} for the {int(part['runs'].sum())} "
             f"{agree(int(part['runs'].sum()), 'run', 'runs')} of the {rung} rung "
             f"({part['tokens/s'].min():,.0f} to {part['tokens/s'].max():,.0f} tokens a "
             f"second by arm)" for rung, part in costs.groupby("rung", sort=False)]
    return "Hours of training stored, one thread a run: " + ", ".join(parts) + ".\n"


def write_ladder_parts(root: Path) -> list:
    """book/_generated/ladder-{record,progress,rungs,power,result}.md, and the result's
    figure once the ladder is complete."""
    from ..paths import repo_root
    generated = root / "book" / "_generated"
    generated.mkdir(parents=True, exist_ok=True)
    parts = {"record": record_text(repo_root()), "progress": progress_text(),
             "rungs": rungs_text(), "power": power_text(L.stored_design()),
             "result": results_text(generated=generated)
             or "<!-- the result: generated once every ladder run is stored -->\n"}
    paths = []
    for name, text in parts.items():
        path = generated / f"ladder-{name}.md"
        path.write_text(text)
        paths.append(path)
    return paths

"""The compute ladder as a reader meets it: the findings pages' keys (``values``, positive
the paper's direction) and the registration page's generated parts (``write_ladder_parts``,
in the registered sign, from ``book/templates/ladder-*.md``)."""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..data.corpus import tokenize_split
from ..data.tokenizer import Tokenizer
from ..engine.store import config_hash, results_dir
from ..paths import repo_root
from ..stats.trend import slope_weights
from ..studies import conditions as C
from ..studies import ladder as L
from ..studies import long_pilot
from ..studies.confirm_analysis import ALBERT, CE, NotComplete
from ..studies.decisions import interval_text, signed
from ..studies.ladder_power import pilot_wide_config
from ..studies.registration import _git
from . import ladder_trend as T
from . import scale
from .dropout import _span
from .template import KEY, NOT_STORED, fill, pipe, record_values, write_parts

# the decisions' names in the substitution keys: ladder_sharing_16x, ...
SHORT = {"confirm/asymmetry": "asymmetry", "confirm/sharing-cost": "sharing",
         "confirm/sop": "sop", "confirm/dropout": "dropout",
         "confirm/equal-time": "equal_time"}
FIGURE = "budgets-trends.png"  # in book/_generated/
# the page's table's rows (book/budgets.md): the figure's panels in the same order
TABLE_ORDER = ("confirm/sharing-cost", "confirm/dropout", "confirm/equal-time",
               "confirm/asymmetry", "confirm/sop")


@dataclass
class Ladder:
    """The ladder read once: result, budgets' runs, long pilot's (each None before stored)."""

    tables: dict | None
    stored: dict | None
    frames: dict | None
    pilot: pd.DataFrame | None


def read(store=None) -> Ladder:
    """The ladder's stored parts, each None where not stored yet."""
    try:
        tables, stored = L.result_tables(store)
    except NotComplete:
        tables = stored = None
    try:
        frames = L.rung_frames(store)
    except NotComplete:
        frames = None
    return Ladder(tables, stored, frames, scale.pilot_runs())


def turned(row, mean: str, low: str, high: str) -> tuple:
    """(mean, low, high) of a registered-sign row, positive the paper's direction."""
    sign = int(row["paper_sign"]) or 1
    ends = sorted((sign * row[low], sign * row[high]))
    return sign * row[mean], ends[0], ends[1]


def interval(row, name: str, mean: str | None = None) -> str:
    """'+0.123 [+0.067, +0.180]': a row's ``name`` (or a budget's ``mean``) turned."""
    first = name if mean is None else f"{name} mean"
    return interval_text(*turned(row, first, f"{name} low", f"{name} high"), row["unit"])


def _move(row, step: str) -> int:
    _, lo, hi = turned(row, step, f"{step} low", f"{step} high")
    return 1 if lo > 0 else -1 if hi < 0 else 0


NO_FURTHER = "no change shown (interval wide)"


def steps_phrase(row) -> str:
    """Which way each step moved the difference, from each step's own interval."""
    if T.no_slope(row):
        return "not computed: too few seeds"
    early, late = _move(row, "1x-4x"), _move(row, "4x-16x")
    word = {1: "grew toward the paper", -1: "moved away from the paper"}
    if early == late == 0:
        return "no step shows a change"
    if early == late:
        faster = (" fastest from 4x to 16x" if T.excludes_zero(row, "curvature")
                  and abs(row["4x-16x"]) > abs(row["1x-4x"]) else "")
        return f"{word[early]} at both steps,{faster}".rstrip(",")
    if late == 0:
        return f"{word[early]} 1x–4x, then {NO_FURTHER}"
    if early == 0:
        return f"no change shown 1x–4x (interval wide), then {word[late]}"
    return f"{word[early]} from 1x to 4x, then {word[late].split(' ', 1)[0]} back"


def forecast_phrase(row) -> str:
    """Where the 16x mean lies against its committed forecast's 95% interval."""
    if T.no_slope(row) or not math.isfinite(row.get("forecast", math.nan)):
        return "not tested"
    if row["forecast covers"]:
        return "inside its interval"
    m, _, _ = turned(row, "16x mean", "16x low", "16x high")
    _, lo, hi = turned(row, "forecast", "forecast low", "forecast high")
    return ("beyond it, further toward the paper" if m > hi else
            "short of it, less toward the paper")


def plateau(frame: pd.DataFrame) -> dict:
    """The 16x runs against the count rungs: sequences, level, passes, above and below."""
    sequences = L.curve_sequences(frame)
    level = L.rung_level(L.RUNG, sequences)
    means = frame.groupby("condition")[CE].mean()
    above = [a for a in L.ARMS if a in means and not means[a] < L.rung_level("two-sided")]
    arms = frame["condition"].nunique()
    return {"sequences": sequences, "level": level, "passes": L.first_below(frame, level),
            "above": above, "below": f"{arms - len(above)} of {arms}"}


def findings_values(ladder: Ladder) -> dict:
    """The ladder's keys (``values``) from its stored tables and runs."""
    tables, trend = ladder.tables, ladder.tables["trend"]
    powers = T.planned_power()
    plan = (L.stored_design() or {}).get("plan", {})
    out = {f"ladder_seeds_{r}": str(len(L.SEEDS[r])) for r in L.RUNGS}
    out.update({f"ladder_steps_{r}": f"{steps:,}" for r, steps in L.RUNGS.items()})
    for key, row in trend.iterrows():
        k, power, cpu = SHORT[key], powers.get(key), plan.get(key, {}).get("1x mean")
        out.update({f"ladder_{k}_{rung}": interval(row, rung, mean="mean") for rung in L.RUNGS})
        out.update({f"ladder_{k}_steps": steps_phrase(row), f"ladder_{k}_label": T.plain_label(row),
                    f"ladder_{k}_holm": f"{row['p holm']:.3f}",
                    f"ladder_{k}_forecast": interval(row, "forecast"),
                    f"ladder_{k}_forecast_result": forecast_phrase(row),
                    f"ladder_{k}_power": (T.percent(power[0]) if power and power[0] is not None
                                          and math.isfinite(power[0]) else "none planned"),
                    f"ladder_{k}_cpu_1x": ("not measured" if cpu is None else
                                           signed(row["paper_sign"] * cpu, 3))})
        for name, column in (("slope", "slope"), ("early", "1x-4x"), ("late", "4x-16x"),
                             ("curvature", "curvature")):
            out[f"ladder_{k}_{name}"] = "–" if T.no_slope(row) else interval(row, column)
    for key, row in tables["gap split"].iterrows():
        row = {**row, "unit": "nats", "paper_sign": trend.loc[key, "paper_sign"]}
        for column in ("change", "training part", "gap part"):
            out[f"ladder_{SHORT[key]}_{column.replace(' ', '_')}"] = interval(row, column)
    inside = sum(forecast_phrase(r) == "inside its interval" for _, r in trend.iterrows())
    sixteen = plateau(ladder.frames["16x"])
    for k, spec_key in (("dropout", "confirm/dropout"), ("equal_time", "confirm/equal-time")):
        d = L.delay(sixteen["passes"], next(s for s in L.DECISIONS if s.key == spec_key))
        out.update({f"ladder_{k}_crossing_a": _span(d["a"], counted=False),
                    f"ladder_{k}_crossing_b": _span(d["b"], counted=False),
                    f"ladder_{k}_crossing_apart": "yes" if d["apart"] else "no"})
    from .wall_clock import timing_cpus
    out.update({f"ladder_equal_time_16x_{k}": v
                for k, v in timing_cpus("16x", tables, ladder.frames["16x"]).items()})
    ratios = tables["time ratios"]
    shares = ratios[ratios["rung"] == "16x"].sort_values("seed")["wide / BERT-style seconds"]
    return {**out, "ladder_forecasts_inside": f"{inside} of {len(trend)}",
            "ladder_sop_order": L.first_rung_learning_order(tables["sop"]) or "none",
            "ladder_equal_time_16x_ratios": ", ".join(f"{x:.2f}" for x in shares),
            "ladder_crossing_sequences": f"{sixteen['sequences']:,}",
            "ladder_crossing_level": f"{sixteen['level']:.3f}",
            "ladder_16x_below_two_sided": sixteen["below"],
            "ladder_16x_above_two_sided": "; ".join(sixteen["above"]) or "none",
            "ladder_cpu_wide_steps": f"{pilot_wide_config().max_steps:,}",
            "ladder_wide_steps_1x": f"{L.wide_steps('1x'):,}",
            "ladder_cpu_seeds": str(max([r["1x seeds"] for r in plan.values()] or [0]))}


def page_keys(root: Path | None = None) -> set:
    """The keys of budgets.md and scale.md, and ``ladder_``/``pilot_`` keys anywhere."""
    return {key for page in ((root or repo_root()) / "book").glob("*.md")
            for key in KEY.findall(page.read_text())
            if page.name in ("budgets.md", "scale.md") or key.startswith(("ladder_", "pilot_"))}


def values(profile=None) -> dict:
    """The ladder's and the scale page's keys; ``NOT_STORED`` each before every run is."""
    ladder = read()
    complete = ladder.tables is not None and ladder.frames is not None
    out = findings_values(ladder) if complete else {}
    out.update(scale.values(ladder.frames, ladder.pilot))
    out.update(passes_values())
    if not (complete and "scale_rung_two_sided" in out and "pilot_ce_shared" in out):
        out.update({k: NOT_STORED for k in page_keys() - set(out)})
    return out


def trend_figure(tables: dict, store=None):
    """The five decisions against the budget, the paper's direction up in each panel."""
    trends = T.gather(store, tables=tables, paper_signs=True)
    return T.figure([trends[k] for k in TABLE_ORDER] +
                    [t for k, t in trends.items() if k not in TABLE_ORDER], compact=True)


def _cell(row, name: str, unit: str) -> str:
    """'+0.012 [-0.004, +0.028]' of a row's ``name``; 'no interval (no spread)' without."""
    if not math.isfinite(row[f"{name} low"]):
        return f"{signed(row[name], 3 if unit == 'nats' else 1)}, no interval (no spread)"
    return interval_text(row[name], row[f"{name} low"], row[f"{name} high"], unit)


def _rung(row, rung: str) -> str:
    """A budget's mean and 95% t-interval, with its seeds where fewer than planned."""
    seeds = int(row[f"{rung} seeds"])
    if not math.isfinite(row[f"{rung} mean"]):
        return f"– (n = {seeds})"
    text = interval_text(row[f"{rung} mean"], row[f"{rung} low"], row[f"{rung} high"],
                         row["unit"])
    return text + (f" (n = {seeds})" if seeds < len(L.SEEDS[rung]) else "")


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _name(key: str) -> str:
    return f"**{T.tag(key)}**"


def _power(power, unit: str) -> str:
    """'73% (22%) at +0.058': power, then with a 16x SD twice the 4x, at slope (a)."""
    if not power:
        return "no design stored"
    if power[0] is None or not math.isfinite(power[0]):
        return "– (no slope (a))"
    return (f"{T.percent(power[0])} ({T.percent(power[1])}) at "
            f"{signed(power[2], 3 if unit == 'nats' else 1)}")


def decisions_key(table) -> str:
    """The five decisions by short name: difference, unit, the paper's sign."""
    return pipe(["decision", "difference, A minus B", "unit", "the paper's sign"],
                [[_name(key), row["decision"], row["unit"],
                  {1: "+", -1: "−"}.get(int(row["paper_sign"]), "0")]
                 for key, row in table.iterrows()])


def trend_table(table, powers: dict) -> str:
    """Each decision's budgets, slope, p, Holm's p, df, reading and planned power."""
    head = (["decision"] + [f"{r} ({len(L.SEEDS[r])} seeds planned)" for r in L.RUNGS]
            + ["slope per doubling of compute", "p", "Holm's p", "df", "reading",
               f"planned power at slope (a), {len(L.SEEDS['16x'])} seeds at 16x (if the "
               f"16x SD is twice the 4x)"])
    rows = []
    for key, row in table.iterrows():
        slope = ([f"no slope: {T.no_slope(row)}", 1, "–"] if T.no_slope(row) else
                 [_cell(row, "slope", row["unit"])
                  + ("†" if T.excluded_before_holm_only(row) else ""),
                  _p(row["p"]), f"{row['slope df']:.0f}"])
        rows.append([_name(key)] + [_rung(row, r) for r in L.RUNGS] + slope[:2]
                    + [_p(row["p holm"]), slope[2], f"**{row['reading']}**",
                       _power(powers.get(key), row["unit"])])
    return pipe(head, rows)


def _cells(table, names: tuple, unit: str | None = None, empty=None) -> list:
    return [[_name(key)] + (["–"] * len(names) if empty(row) else
                            [_cell(row, n, unit or row["unit"]) for n in names])
            for key, row in table.iterrows()]


def steps_table(table) -> str:
    """Each decision's slope per step and its curvature."""
    return pipe(["decision", "1x to 4x, per doubling", "4x to 16x, per doubling",
                 "curvature"], _cells(table, ("1x-4x", "4x-16x", "curvature"),
                                      empty=T.no_slope))


def _by_rung(table, by: str, value: str) -> str:
    """One row per ``by`` (decision or arm): each budget's ``value`` and interval, nats."""
    cells = table.assign(cell=[interval_text(r[value], r["low"], r["high"], "nats")
                               for _, r in table.iterrows()])
    wide = cells.pivot(index=by, columns="rung", values="cell").reindex(
        index=list(dict.fromkeys(table[by])), columns=list(L.RUNGS)).fillna("–")
    return pipe(["decision" if by == "key" else "arm"] + list(L.RUNGS),
                [[_name(name) if by == "key" else name] + list(row)
                 for name, row in wide.iterrows()])


def split_reading(row) -> str:
    """Amendment 7's reading: which parts' intervals exclude 0, once the change's does."""
    if not math.isfinite(row["change"]):
        return "not split: too few seeds at a rung"
    if not math.isfinite(row["change low"]):  # no spread: no interval (amendment 8)
        return "not read: no spread"
    if not row["read"]:
        return "not read: the change's interval includes 0"
    parts = [name for name in ("training-split part", "gap part")
             if T.excludes_zero(row, name.replace("-split", ""))]
    return {0: "neither part's interval excludes 0",
            1: f"only the {parts[0]}'s interval excludes 0" if parts else "",
            2: "both parts' intervals exclude 0"}[len(parts)]


def split_table(split) -> str:
    """Amendment 7's split of each change into its training and gap parts."""
    rows = _cells(split, ("change", "training part", "gap part"), "nats",
                  empty=lambda row: not math.isfinite(row["change"]))
    return pipe(["decision", "change, 1x to 16x (nats)", "training-split part", "gap part",
                 "reading"], [r + [split_reading(row)]
                              for r, (_, row) in zip(rows, split.iterrows())])


def forecast_table(table) -> str:
    """Each forecast against the 16x mean, and the SD assumed against the SD measured."""
    rows = []
    for key, row in table.iterrows():
        digits = 1 if row["unit"] == "points" else 3
        inside = (f"not tested: {T.no_slope(row)}" if T.no_slope(row) else
                  "yes" if row["forecast covers"] else "**no**")
        measured = "–" if T.no_slope(row) else f"{row['16x sd']:.{digits}f}"
        rows.append([_name(key), _cell(row, "forecast", row["unit"]), _rung(row, "16x"),
                     inside, f"{row['forecast sd']:.{digits}f} → {measured}"])
    return pipe(["decision", "forecast, 95% prediction interval", "16x mean, 95% interval",
                 "16x mean inside the forecast's interval?",
                 "SD of the difference over 16x seeds, assumed → measured"], rows)


def grown(gaps) -> list:
    """The arms whose gap is larger at 16x than at 1x, the two intervals apart."""
    by = gaps.set_index(["arm", "rung"])
    return [arm for arm in dict.fromkeys(gaps["arm"])
            if {(arm, "1x"), (arm, "16x")} <= set(by.index)
            and by.loc[(arm, "16x"), "low"] > by.loc[(arm, "1x"), "high"]]


def sop_table(sop) -> str:
    """Per budget, the SOP probe and head above majority, and whether order is learned."""
    def cell(row, name: str) -> str:
        ends = [row[f"{name} {k}"] for k in ("mean", "low", "high")]
        return interval_text(*ends, "points") if math.isfinite(ends[0]) else "not stored"
    return pipe(["budget", "probe minus majority", "head minus majority", "order learned?"],
                [[rung, cell(row, "probe"), cell(row, "head"),
                  "yes" if row["order learned"] else "not shown"]
                 for rung, row in sop.iterrows()])


def time_table(ratios) -> str:
    """Per budget, each seed's wide / BERT-style seconds (flagged in bold) and machines."""
    rows = []
    for rung, part in ratios.groupby("rung", sort=False):
        kinds = sorted(set(part["machines"]))
        cells = ", ".join(
            f"{r.seed}: " + (f"**{r.ratio:.2f}**" if r.flagged else f"{r.ratio:.2f}")
            + (f" ({r.machines})" if len(kinds) > 1 else "")
            for r in part.rename(columns={"wide / BERT-style seconds": "ratio"}).itertuples())
        rows.append([rung, cells, kinds[0] if len(kinds) == 1 else "by seed"])
    return pipe(["budget", "seed: ratio", "machines"], rows)


def passes_table(table) -> str:
    """Per arm and seed, the share of training where the 16x curve first passed the rung."""
    wide = table.pivot(index="condition", columns="seed", values="first below")
    wide = wide.reindex([a for a in L.ARMS if a in wide.index])
    return pipe(["arm"] + [f"seed {s}" for s in wide.columns],
                [[arm] + [f"{x:.0%}" if math.isfinite(x) else "not by the end" for x in row]
                 for arm, row in wide.iterrows()])


def diverged_runs(store=None) -> list:
    """'16x, dropout 0.1, seed 3001': each run listed as diverged."""
    failed = L.diverged(store)
    return [f"{rung}, {arm}, seed {seed}" for rung in ("1x", "16x")
            for arm, config in L.configs(rung).items() for seed in L.SEEDS[rung]
            if config_hash(C.seeded(config, seed).to_dict()) in failed]


def forecast_record(store=None) -> dict:
    """The forecast's recorded commit, dirty mark, storing commit and what changed between."""
    from ..engine.store import read_json  # at call time: the rehearsal guards its reads
    record = read_json((store or results_dir(L.STORE)) / L.FORECAST) or {}
    commit = record.get("provenance", {}).get("git_commit", "")
    path = f"data/results/{L.STORE}/{L.FORECAST}"
    added = L.forecast_commit()
    head = commit.removesuffix("+dirty")
    changed = _git("diff", "--name-only", head, added).stdout.split() if added and head else None
    return {"forecast_commit": head[:7] or "–",
            "forecast_dirty": "marked dirty" if commit.endswith("+dirty") else "clean",
            "forecast_stored": added[:7] if added else "unknown here (a shallow clone)",
            "forecast_between": "–" if changed is None else "only the forecast itself"
                                if changed == [path] else f"{len(changed)} files"}


def provenance_problems(store=None) -> str:
    """'none', or the count and the first three problems (``ladder.provenance_problems``)."""
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        return "not checked here, in a shallow clone"
    problems = L.provenance_problems(L.stored_runs(store or results_dir(L.STORE)))
    if not problems:
        return "none"
    return f"{len(problems)}: " + "; ".join(problems[:3]) + ("; …" if len(problems) > 3 else "")


def result_values(ladder: Ladder, store=None) -> dict:
    """The keys of ``book/templates/ladder-result.md``."""
    tables, stored = ladder.tables, ladder.stored
    table = tables["trend"]
    computed = [(k, r) for k, r in table.iterrows() if not T.no_slope(r)]
    bent = [T.tag(k) for k, r in computed if T.excludes_zero(r, "curvature")]
    weights = slope_weights([L.X[r] for r in L.RUNGS], [len(L.SEEDS[r]) for r in L.RUNGS])
    tested = sum(math.isfinite(r.get("forecast", math.nan)) for _, r in computed)
    held = sum(bool(r.get("forecast covers")) for _, r in computed)
    frame = L.rung_frame("16x", store)
    sixteen = plateau(frame)
    odd = [f"{r.rung}, {r.arm}, seed {r.seed} ({r.number})"
           for r in tables.get("non-finite", pd.DataFrame()).itertuples()]
    ratios, sop = tables["time ratios"], L.first_rung_learning_order(tables["sop"])
    grew = grown(tables["gaps"])
    return {
        "decisions_key": decisions_key(table),
        "trend_table": trend_table(table, T.planned_power(store)),
        "dagger": (" † marks a slope whose interval excludes 0 only before Holm's "
                   "adjustment." if any(T.excluded_before_holm_only(r) for _, r in computed)
                   else ""),
        "pilot_wide_steps": f"{pilot_wide_config().max_steps:,}",
        "wide_steps_1x": f"{L.wide_steps('1x'):,}",
        "first_weight": f"{-weights[0] * (L.X['4x'] - L.X['1x']):.0%}",
        "bent": f"{len(bent)} of {len(computed)}" + (f": {'; '.join(bent)}" if bent else ""),
        "steps_table": steps_table(table),
        "gap_differences_table": _by_rung(tables["gap differences"], "key", "gap difference"),
        "split_table": split_table(tables["gap split"]),
        "forecasts_inside": f"{held} of {tested}", "forecasts_tested": str(tested),
        "chance_misses": f"{0.05 * tested:.2f}",
        "forecast_table": forecast_table(table), **forecast_record(store),
        "grown": f"{len(grew)} arms: " + ("; ".join(grew) or "none"),
        "gaps_table": _by_rung(tables["gaps"], "arm", "gap"),
        "sop_order": f"first at {sop}" if sop else "at no budget",
        "sop_table": sop_table(tables["sop"]),
        "flagged": f"{int(ratios['flagged'].sum())} of {len(ratios)}",
        "time_table": time_table(ratios),
        "curve_points": str(len(frame.iloc[0]["curve"])),
        "curve_sequences": f"{sixteen['sequences']:,}",
        "curve_level": f"{sixteen['level']:.3f}",
        "whole_level": f"{L.rung_level(L.RUNG):.3f}",
        "wide_steps_16x": f"{L.wide_steps('16x'):,}",
        "steps_16x": f"{L.RUNGS['16x']:,}",
        "below_two_sided": sixteen["below"],
        "above_two_sided": "; ".join(sixteen["above"]) or "none",
        "passes_table": passes_table(sixteen["passes"]),
        "diverged": "; ".join(diverged_runs(store)) or "none",
        "nonfinite": "; ".join(odd) or "none",
        "provenance": provenance_problems(store),
        "trigger": stored["trigger"], "commit": stored["provenance"]["git_commit"][:7],
        "early_end": " (an early end, by an amendment's decision)"
                     if stored.get("early_end") else ""}


def results_text(store=None) -> str:
    """The ladder page's result once the analysis is stored; '' before."""
    try:
        tables, stored = L.result_tables(store)
    except NotComplete:
        return ""
    return fill("ladder-result.md", result_values(Ladder(tables, stored, None, None), store))


def progress_values(store=None) -> dict:
    """The keys of ``ladder-progress.md``."""
    table = L.progress(store)
    counts = table.groupby("rung", sort=False)[["of", "trained", "evaluated",
                                                 "diverged"]].sum()
    failed = bool(counts["diverged"].sum())
    columns = ["runs", "trained", "evaluated"] + ["diverged"] * failed
    rows = [[f"{rung} ({L.RUNGS[rung]:,} steps, {len(L.SEEDS[rung])} seeds)"]
            + (["the confirmatory runs, complete", "", ""] + [""] * failed if rung == "4x"
               else [int(x) for x in counts.loc[rung, ["of"] + columns[1:]]])
            for rung in L.RUNGS]
    costs = L.training_costs(store)
    hours = ", ".join(f"{part['hours'].sum():.1f} for the {int(part['runs'].sum())} runs "
                      f"of the {rung} budget" for rung, part in costs.groupby("rung", sort=False))
    return {"progress_state": "complete" if L.settled(table) else "counts only",
            "progress_table": pipe(["budget"] + columns, rows), "costs": hours or "none yet"}


@functools.cache  # the split's checksum and token cache are read once a process
def _tokens() -> tuple:
    """(tokens a step, tokens in the training split): every budget trains the same shapes."""
    base = L.configs("4x")[ALBERT]
    return base.batch_size * base.max_seq_length, len(tokenize_split("train", Tokenizer()).tokens)


def passes_values() -> dict:
    """Passes over the training split at each budget and the 64x pilot: more training also
    repeats the data."""
    per_step, corpus = _tokens()
    passes = [f"{steps * per_step / corpus:.1f}"
              for steps in (*L.RUNGS.values(), long_pilot.STEPS)]
    return {"scale_passes": ", ".join(passes[:-1]) + " and " + passes[-1],
            "scale_corpus": f"{corpus / 1e6:.2f}M"}


def rungs_values() -> dict:
    """The keys of ``ladder-rungs.md``."""
    per_step, corpus = _tokens()
    rows = [(rung, steps, L.SEEDS[rung], "the confirmatory store, as stored" if rung == "4x"
             else "trained for this study") for rung, steps in L.RUNGS.items()]
    rows.append(("long pilot (64x)", long_pilot.STEPS, (long_pilot.SEED,),
                 "exploratory, outside the family"))
    return {"rungs_table": pipe(
        ["rung", "steps", "tokens a run", "passes over the training split", "seeds", "source"],
        [[name, f"{steps:,}", f"about {steps * per_step / 1e6:.1f}M",
          f"{steps * per_step / corpus:.1f}",
          f"{seeds[0]} to {seeds[-1]} ({len(seeds)})" if len(seeds) > 1 else f"{seeds[0]} (1)",
          where] for name, steps, seeds, where in rows]),
        "corpus_millions": f"{corpus / 1e6:.2f}"}


def _number(value, digits: int, form: str = "+.{}f") -> str:
    """'–' for a missing value, else ``value`` in ``form`` to ``digits``."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:{form.format(digits)}}"


def power_values(design: dict) -> dict:
    """The keys of ``ladder-power.md``."""
    b = design["budget"]
    n16, needed, strict = int(b["16x seeds"]), b["needed"], int(b["strict affordable"])
    columns = {f"power (a) at {strict} / {n16} / {needed} 16x seeds":
               [f"power (a) at {n}" for n in (strict, n16, needed)],
               f"power (a), 16x SD twice the 4x, at {n16}":
               [f"power (a), 16x SD twice the 4x, at {n16}"],
               f"power (a), {L.MAX_1X} seeds at 1x, at {n16}":
               [f"power (a), {L.MAX_1X} at 1x, at {n16}"],
               f"power (b) at {n16} / {needed}": [f"power (b) at {n}" for n in (n16, needed)]}
    rows = []
    for spec in L.DECISIONS:
        row = design["plan"][spec.key]
        digits = 1 if row["unit"] == "points" else 3
        sd = {n: _number(row[f"{n} SD"], digits + (digits != 1), ".{}f")
              for n in ("1x", "4x")}
        rows.append([
            f"`{spec.key}` ({row['unit']})",
            f"{_number(row['1x mean'], digits)} ({sd['1x']})" if row["1x seeds"]
            else f"not measured ({sd['1x']}, the 4x SD)",
            f"{_number(row['4x mean'], digits)} ({sd['4x']})",
            _number(row["slope (a)"], digits + 1), _number(row["slope (b)"], digits + 1)]
            + [" / ".join(_number(row.get(n), 0, ".{}%") for n in names)
               for names in columns.values()])
    seen = [k for k, r in design["plan"].items() if (r.get(f"power (b) at {n16}") or 0) >= 0.8]
    return {"power_table": pipe(["decision", "1x mean (SD)", "4x mean (SD)", "slope (a)",
                                 "slope (b)"] + list(columns), rows),
            "seeds_1x": str(int(b["1x seeds"])),
            "needed": str(needed), "affordable": str(b["affordable"]),
            "seeds_16x": str(n16), "hours": f"{b['hours']:.1f}", "limit": f"{b['limit']:.1f}",
            "pilot_hours": f"{b['pilot hours']:.1f}", "hours_1x": f"{b['1x hours a seed']:.2f}",
            "hours_16x": f"{b['16x hours a seed']:.1f}",
            "budget_hours": f"{L.BUDGET_HOURS:.0f}", "strict": str(strict),
            "tolerance": f"{L.BUDGET_TOLERANCE:.0%}", "strict_next": str(strict + 1),
            "max_1x": str(L.MAX_1X), "hours_max_1x": f"{b['hours with 11 at 1x']:.1f}",
            "max_16x": str(L.MAX_16X),
            "underpowered": " and ".join(f"`{k}`" for k in b["underpowered"]) or "none",
            "seen": (" and ".join(f"`{k}`" for k in seen) or "none")
                    + (" alone reaches" if len(seen) == 1 else " reach")}


def write_ladder_parts(root: Path) -> list:
    """book/_generated/ladder-*.md and the findings page's figure (placeholder before)."""
    try:
        figure = trend_figure(L.result_tables()[0])
    except NotComplete:
        figure = None
    return write_parts(root / "book" / "_generated", {
        FIGURE: figure,
        "ladder-record.md": fill("ladder-record.md", record_values(repo_root() / L.RECORD)),
        "ladder-progress.md": fill("ladder-progress.md", progress_values()),
        "ladder-rungs.md": fill("ladder-rungs.md", rungs_values()),
        "ladder-power.md": fill("ladder-power.md", power_values(L.stored_design())),
        "ladder-result.md": results_text()
        or "<!-- the result: generated once every ladder run is stored -->\n"})

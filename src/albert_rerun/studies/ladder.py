"""The compute ladder (registered on book/ladder.md): the confirmatory primary decisions
at 1x, 4x (the confirmatory store) and 16x the cpu profile's training. The 16x means are
forecast and committed before any 16x run; the analysis is stored once
(``store_result``) and read back (``result_tables``). Training:
``scripts/train_stretch.sh ladder H``, from a clean checkout."""
from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, replace

import numpy as np
import pandas as pd

from ..engine import provenance
from ..engine.config import untrained
from ..engine.store import atomic_write_json, config_hash, read_json, results_dir
from ..paths import repo_root
from ..profiles import resolve
from ..stats.inference import mean_interval
from ..stats.trend import contrast, extrapolate, slope
from . import conditions as C
from . import confirm, confirm_analysis as A
from . import count_rungs
from . import registration as R
from .confirm_analysis import NotComplete

STORE = "ladder"  # data/results/ladder/
RUNGS = {"1x": 5400, "4x": 21600, "16x": 86400}
X = {rung: math.log2(steps / RUNGS["1x"]) for rung, steps in RUNGS.items()}  # 0, 2, 4
ARMS = (A.ALBERT, A.ATTENTION, A.FFN, A.BERT, A.ALL64, A.NSP, A.DROPOUT, A.WIDE)
DECISIONS = A.PRIMARY
SEEDS = {"1x": tuple(range(2000, 2006)), "4x": A.CONFIRM_SEEDS,
         "16x": tuple(range(3000, 3004))}
POWER, MIN_16X, MAX_16X = 0.8, 3, 8
MIN_1X, MAX_1X = 6, 11
# "about 55 CPU-hours" for the whole ladder and the long pilot, read as at most 5% over
BUDGET_HOURS, BUDGET_TOLERANCE = 55.0, 0.05
# files of the ladder's store: DIVERGED holds {hash: failure text}, runs never replaced
FORECAST, DIVERGED, DESIGN, RESULT = ("forecast.json", "diverged.json", "design.json",
                                      "result.json")
PAGE = "book/ladder.md"
RECORD = "data/ladder-registration.json"  # {"commit", "date", "sha256", "page"}

ALPHA = 0.05
MIN_SEEDS_TO_ANALYSE = 3
TOWARD, AWAY, NO_TREND = ("moves toward the paper's sign", "moves away from the paper's sign",
                          "no trend shown")
NOT_COMPUTED = "not computed"
CHECKED = (A.CE, "train_mlm_loss_at_mask")


def trend_reading(estimate: float, p_holm: float, paper_sign: int) -> str:
    """The registered reading of a slope: toward the paper's sign, away from it, or no
    trend shown (Holm-adjusted p at or above ALPHA, or no slope)."""
    if not p_holm < ALPHA or not estimate or not np.isfinite(estimate):
        return NO_TREND
    return TOWARD if np.sign(estimate) == paper_sign else AWAY


def too_few(d: dict, rungs) -> list:
    """The rungs where ``d`` has fewer than MIN_SEEDS_TO_ANALYSE paired differences."""
    return [r for r in rungs if len(d.get(r, ())) < MIN_SEEDS_TO_ANALYSE]


def differences(frames: dict, spec) -> dict:
    """{rung: the finite per-seed paired differences of ``spec``} where it is measured."""
    out = {}
    for rung, frame in frames.items():
        try:
            d = A.per_seed(spec, A.with_changes(frame) if spec.kind == "change" else frame)
        except KeyError:  # a metric the rung's store does not hold
            continue
        d = d.to_numpy(dtype=float)
        if np.isfinite(d).any():
            out[rung] = d[np.isfinite(d)]
    return out


def nonfinite_runs(frames: dict) -> pd.DataFrame:
    """One row per run (rung, arm, seed) with a non-finite number of CHECKED, and which."""
    rows = [(rung, r["condition"], int(r["seed"]), ", ".join(bad))
            for rung, frame in frames.items() for _, r in frame.iterrows()
            if (bad := [c for c in CHECKED if c in frame and not np.isfinite(float(r[c]))])]
    return pd.DataFrame(rows, columns=["rung", "arm", "seed", "number"])


def without_runs(frames: dict, runs: pd.DataFrame) -> dict:
    """``frames`` less the rows of ``runs`` (rung, arm, seed), as a diverged run is."""
    def kept(rung, frame):
        gone = set(zip(*runs.loc[runs["rung"] == rung, ["arm", "seed"]].to_numpy().T))
        keep = [(c, int(s)) not in gone for c, s in zip(frame["condition"], frame["seed"])]
        return frame[keep].reset_index(drop=True) if gone else frame
    return {rung: kept(rung, frame) for rung, frame in frames.items()}


def first_rung_learning_order(table: pd.DataFrame) -> str | None:
    """The first rung at which order counts as learned (``sop_by_rung``), or None."""
    return next((rung for rung, ok in table["order learned"].items() if ok), None)


def _committed_store(name: str):
    return repo_root() / "data" / "results" / name


def wide_steps(rung: str) -> int:
    """The wide model's steps at a rung: the registered equal-time ratio times its steps."""
    record = (A.equal_time_record(results_dir(A.STORE))
              or A.equal_time_record(_committed_store(A.STORE)))
    if record is None:
        raise NotComplete("the confirmatory equal-time measurement is not stored")
    if rung == "4x":
        return int(record["steps"])
    return round(RUNGS[rung] * record["steps"] / record["bert_steps"])


def configs(rung: str) -> dict:
    """{arm: config without seed}: the confirmatory configs on the rung's schedule."""
    if rung not in RUNGS:
        raise ValueError(f"rung must be one of {tuple(RUNGS)}, got {rung!r}")
    registered = A.conditions(wide_steps("4x"))
    if rung == "4x":
        return {arm: registered[arm] for arm in ARMS}
    return {arm: C.with_steps(registered[arm], wide_steps(rung) if arm == A.WIDE
                              else RUNGS[rung]) for arm in ARMS}


def planned(rung: str) -> list:
    """A rung's runs, seed-major, each seed with the ALBERT-style arm's random-init control."""
    if rung == "4x":
        raise ValueError("the 4x rung is the confirmatory store: nothing to train")
    out = []
    for seed in SEEDS[rung]:
        seeded = {arm: C.seeded(c, seed) for arm, c in configs(rung).items()}
        out += list(seeded.values()) + [untrained(seeded[A.ALBERT])]
    return out


def rung_frame(rung: str, store=None, seeds=None) -> pd.DataFrame:
    """One row per (arm, seed) of a rung (``confirm_analysis.load``; diverged: no row)."""
    if rung == "4x":
        frame = A.confirmatory_frame(store=store or _committed_store(A.STORE))
        frame = frame[frame["condition"].isin(ARMS)].reset_index(drop=True)
    else:
        frame = A.load(store or results_dir(STORE), configs(rung), seeds or SEEDS[rung],
                       require=False)
    steps = {arm: c.max_steps for arm, c in configs(rung).items()}
    wrong = frame[frame["steps"] != frame["condition"].map(steps)] if len(frame) else frame
    if len(wrong):  # a record stored under a rung's config but trained for other steps
        raise ValueError(f"{rung} rung: runs not trained for their config's steps: "
                         f"{wrong[['condition', 'seed', 'steps']].to_dict('records')}")
    return frame


def run_states(rung: str, store=None, seeds=None) -> pd.DataFrame:
    """``confirm_analysis.run_states`` of a trained rung's ``seeds`` (default: all)."""
    store = store or results_dir(STORE)
    return A.run_states(store, configs(rung), seeds or SEEDS[rung], diverged(store))


def progress(store=None) -> pd.DataFrame:
    """Runs trained, evaluated and listed as diverged per rung and arm (no estimate)."""
    parts = [run_states(rung, store).groupby("arm", sort=False)[
        ["trained", "evaluated", "diverged"]].sum().astype(int).reset_index().assign(
        rung=rung, of=len(SEEDS[rung])) for rung in ("1x", "16x")]
    return pd.concat(parts, ignore_index=True)[
        ["rung", "arm", "trained", "evaluated", "diverged", "of"]]


def settled(table: pd.DataFrame) -> bool:
    """Whether every run of ``progress``' table is evaluated or listed as diverged."""
    return bool((table["evaluated"] + table["diverged"] == table["of"]).all())


def diverged(store=None) -> dict:
    """{hash: failure text} of the runs that diverged: left out, never replaced."""
    return read_json((store or results_dir(STORE)) / DIVERGED) or {}


def rung_complete(rung: str, store=None, seeds=None) -> bool:
    """Whether every run of the rung's ``seeds`` is evaluated or listed as diverged."""
    states = run_states(rung, store, seeds)
    return bool((states["evaluated"] | states["diverged"]).all())


def complete_prefix(rung: str, store=None) -> tuple:
    """The longest run of whole seeds from the rung's first, for an early end."""
    from itertools import takewhile
    return tuple(takewhile(lambda seed: rung_complete(rung, store, (seed,)), SEEDS[rung]))


def stored_design(store=None) -> dict | None:
    """The power plan and seed counts stored before the registration (``ladder_power``)."""
    return read_json((store or _committed_store(STORE)) / DESIGN)


def forecast(store=None) -> dict:
    """Each decision's 16x mean forecast from the 1x and 4x rungs with its 95% prediction
    interval; NotComplete until the 1x rung is complete."""
    if not rung_complete("1x", store):
        raise NotComplete("the 1x rung is not complete: no forecast before it is")
    frames = {"1x": rung_frame("1x", store), "4x": rung_frame("4x")}
    out = {}
    for spec in DECISIONS:
        d = differences(frames, spec)
        f = extrapolate(d["1x"], d["4x"], X["1x"], X["4x"], X["16x"], len(SEEDS["16x"]))
        out[spec.key] = {**{k: v for k, v in asdict(f).items() if k != "x"}, "unit": spec.unit}
    return {"forecast": out, "provenance": provenance.record()}


def store_forecast(store=None) -> dict:
    """``forecast``, stored once."""
    store = store or results_dir(STORE)
    if read_json(store / FORECAST) is not None:
        raise FileExistsError(f"{store / FORECAST} exists: the forecast is made once")
    out = forecast(store)
    atomic_write_json(store / FORECAST, out)
    return out


def forecast_commit() -> str | None:
    """The commit that added the forecast file, or None before it is committed."""
    out = R._git("log", "--diff-filter=A", "--format=%H", "--",
                 f"data/results/{STORE}/{FORECAST}").stdout.split()
    return out[-1] if out else None


def _analysed_seeds(store, early_end: bool) -> dict:
    """Each trained rung's seeds: all, or with ``early_end`` a long enough ``complete_prefix``."""
    out = {}
    for rung in ("1x", "16x"):
        out[rung] = SEEDS[rung] if rung_complete(rung, store) else (
            complete_prefix(rung, store) if early_end else ())
        if len(out[rung]) < MIN_SEEDS_TO_ANALYSE:
            raise NotComplete(f"the {rung} rung is not complete: no estimate before every "
                              f"run of the ladder is stored")
    return out


def _frames(store, early_end: bool, frames: dict | None) -> dict:
    """``frames`` if given, else ``rung_frames``; the stopping rule is checked either way."""
    if frames is None:
        return rung_frames(store, early_end)
    _analysed_seeds(store, early_end)
    return frames


def rung_frames(store=None, early_end: bool = False, clean: bool = True) -> dict:
    """{rung: ``rung_frame``} once the analysis may run; ``clean``: less ``nonfinite_runs``."""
    seeds = _analysed_seeds(store, early_end)
    frames = {rung: rung_frame(rung, None if rung == "4x" else store, seeds.get(rung))
              for rung in RUNGS}
    return without_runs(frames, nonfinite_runs(frames)) if clean else frames


def _interval(i, prefix: str = "") -> dict:
    """{prefix + "mean"/"low"/"high"} of an ``Interval`` (NaN for None)."""
    return {f"{prefix}{k}": getattr(i, k) if i else math.nan for k in ("mean", "low", "high")}


def _ci(values):
    """The mean's 95% t-interval of two or more values, else None."""
    return mean_interval(values) if values is not None and len(values) >= 2 else None


def excludes_zero(row, name: str) -> bool:
    """Whether a row's interval of ``name`` (``name low`` to ``name high``) excludes 0."""
    return bool(row[f"{name} low"] > 0 or row[f"{name} high"] < 0)


def _ends(c, name: str) -> dict:
    """{name, name low, name high}: a contrast's estimate and interval (NaN for None)."""
    return {f"{name}{end}": getattr(c, k) if c else np.nan
            for end, k in (("", "estimate"), (" low", "low"), (" high", "high"))}


SEGMENTS = {"1x-4x": {0.0: -0.5, 2.0: 0.5}, "4x-16x": {2.0: -0.5, 4.0: 0.5},
            "curvature": {0.0: 1.0, 2.0: -2.0, 4.0: 1.0}}  # weights on the rungs' X


def trend_family(store=None, early_end: bool = False, frames: dict | None = None
                 ) -> pd.DataFrame:
    """The registered analysis per primary decision: each rung's mean difference and 95%
    interval, the slope per doubling, its p before and after Holm, the reading; descriptive:
    segments, curvature, forecast. Too few seeds at a rung: no slope, p = 1 (amendment 5)."""
    from statsmodels.stats.multitest import multipletests

    frames = _frames(store, early_end, frames)
    predicted = (read_json((store or results_dir(STORE)) / FORECAST) or {}).get("forecast", {})
    rows = []
    for spec in DECISIONS:
        d = differences(frames, spec)
        row = {"key": spec.key, "decision": spec.label, "unit": spec.unit,
               "paper_sign": spec.paper_sign, "too few seeds at": ", ".join(too_few(d, RUNGS))}
        for rung in RUNGS:
            enough = len(d.get(rung, ())) >= 2
            row.update({**_interval(_ci(d.get(rung)), f"{rung} "),
                        f"{rung} seeds": len(d.get(rung, ())),
                        f"{rung} sd": float(np.std(d[rung], ddof=1)) if enough else math.nan})
        f = predicted.get(spec.key)
        if f:
            row.update({"forecast": f["estimate"], "forecast low": f["low"],
                        "forecast high": f["high"], "forecast sd": f["assumed_sd"],
                        "forecast covers": f["low"] <= row["16x mean"] <= f["high"]})
        if row["too few seeds at"]:
            rows.append({**row, "p": 1.0})
            continue
        groups = {X[r]: d[r] for r in RUNGS}  # X: log2 of compute, so a slope per doubling
        s = slope(groups)
        row.update({**_ends(s, "slope"), "slope df": s.df, "p": s.p})
        for name, weights in SEGMENTS.items():
            row.update(_ends(contrast(groups, weights), name))
        rows.append(row)
    table = pd.DataFrame(rows).set_index("key")
    table["p holm"] = multipletests(table["p"].to_numpy(), alpha=ALPHA, method="holm")[1]
    table["reading"] = [NOT_COMPUTED if r["too few seeds at"] else
                        trend_reading(r["slope"], r["p holm"], r["paper_sign"])
                        for _, r in table.iterrows()]
    return table


# the overfitting gap (amendments 4 and 7): descriptive, for every decision in nats
GAP, TRAIN = "overfit_gap", "train_mlm_loss_at_mask"
GAP_SPECS = tuple(s for s in DECISIONS if s.metric == A.CE and s.kind == "ce")
GAP_DECISIONS = tuple(spec.key for spec in GAP_SPECS)
PARTS = {"change": A.CE, "gap part": GAP, "training part": TRAIN}


def _with_gap(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the overfitting gap, held-out minus training cross-entropy."""
    return frame.assign(**{GAP: frame[A.CE] - frame[TRAIN]})


def _paired(spec, frame: pd.DataFrame, metric: str) -> np.ndarray:
    """The decision's per-seed difference A minus B of ``metric``."""
    return A.per_seed(replace(spec, metric=metric), frame).to_numpy(float)


def _interval_rows(groups: dict, names: tuple, value: str) -> pd.DataFrame:
    """A row per group ({(name, ...): values}) of two or more values: ``names``, the mean
    as ``value``, its 95% t-interval and seeds."""
    return pd.DataFrame([{**dict(zip(names, k)), value: i.mean, "low": i.low,
                          "high": i.high, "seeds": i.n}
                         for k, v in groups.items() if (i := _ci(v))])


def gaps_by_rung(store=None, early_end: bool = False, frames: dict | None = None
                 ) -> pd.DataFrame:
    """Per rung and arm: the overfitting gap (held-out minus training), mean and interval."""
    return _interval_rows({(rung, arm): part[GAP].astype(float)
                           for rung, frame in _frames(store, early_end, frames).items()
                           for arm, part in _with_gap(frame).groupby("condition", sort=False)},
                          ("rung", "arm"), "gap")


def gap_differences(store=None, early_end: bool = False, frames: dict | None = None
                    ) -> pd.DataFrame:
    """Per rung and decision: the gap's paired difference A minus B, mean and 95% interval."""
    return _interval_rows({(spec.key, rung): _paired(spec, _with_gap(frame), GAP)
                           for rung, frame in _frames(store, early_end, frames).items()
                           for spec in GAP_SPECS}, ("key", "rung"), "gap difference")


def gap_split(store=None, early_end: bool = False, frames: dict | None = None
              ) -> pd.DataFrame:
    """Per decision in nats (amendment 7): the 1x-to-16x change of its mean difference and
    its gap and training parts with 95% intervals; "read": the change's excludes 0. NaN
    with fewer than MIN_SEEDS_TO_ANALYSE seeds at 1x or 16x."""
    frames = _frames(store, early_end, frames)
    gapped = {r: _with_gap(frames[r]) for r in ("1x", "16x")}
    rows = []
    for spec in GAP_SPECS:
        values = {name: {r: _paired(spec, frame, metric) for r, frame in gapped.items()}
                  for name, metric in PARTS.items()}
        seeds = {r: len(values["change"][r]) for r in ("1x", "16x")}
        row = {"key": spec.key, "1x seeds": seeds["1x"], "16x seeds": seeds["16x"]}
        enough = min(seeds.values()) >= MIN_SEEDS_TO_ANALYSE
        for name, by in values.items():
            groups = {X[r]: by[r] for r in seeds}
            row.update(_ends(contrast(groups, {X["1x"]: -1.0, X["16x"]: 1.0}) if enough
                             else None, name))
        row["read"] = excludes_zero(row, "change")
        rows.append(row)
    return pd.DataFrame(rows).set_index("key")


def time_ratios_by_rung(store=None, early_end: bool = False, frames: dict | None = None
                        ) -> pd.DataFrame:
    """Per rung and seed: ``confirm_analysis.time_ratios``."""
    parts = [A.time_ratios(frame).assign(rung=rung)
             for rung, frame in _frames(store, early_end, frames).items()]
    return pd.concat(parts, ignore_index=True)


def sop_by_rung(store=None, early_end: bool = False, frames: dict | None = None
                ) -> pd.DataFrame:
    """Per rung: the SOP model's cue-free probe and head minus the majority label (points,
    95% t-intervals); order is learned where the probe's interval lies above zero."""
    rows = []
    for rung, frame in _frames(store, early_end, frames).items():
        albert = frame[frame["condition"] == A.ALBERT]
        row = {"rung": rung}
        for name in ("probe", "head"):
            row.update(_interval(A.above_majority(albert, f"sop_cuefree_accuracy_{name}"),
                                 f"{name} "))
        row["order learned"] = bool(row["probe low"] > 0)
        rows.append(row)
    return pd.DataFrame(rows).set_index("rung")


def compute_result(store=None, early_end: bool = False) -> dict:
    """{name: table}: the registered analysis and the tables beside it, computed now."""
    raw = rung_frames(store, early_end, clean=False)
    odd = nonfinite_runs(raw)
    frames = without_runs(raw, odd)
    return {name: function(store, early_end, frames) for name, function in (
        ("trend", trend_family), ("gaps", gaps_by_rung), ("gap differences", gap_differences),
        ("gap split", gap_split), ("sop", sop_by_rung), ("time ratios", time_ratios_by_rung),
        ("non-finite", lambda *_: odd))}


def store_result(store=None, trigger: str = "by hand", early_end: bool = False) -> str:
    """``compute_result`` once, from a clean checkout, stored in ``RESULT``; its path."""
    path = (store or results_dir(STORE)) / RESULT
    if path.exists():
        raise FileExistsError(f"{path} exists: the analysis is computed once")
    made = provenance.record()
    if made["git_commit"].endswith("+dirty"):
        raise NotComplete("the analysis is stored from a clean checkout: commit first")
    tables = compute_result(store, early_end)
    atomic_write_json(path, {
        "tables": {name: json.loads(table.to_json(orient="split", double_precision=15))
                   for name, table in tables.items()},
        "trigger": trigger, "early_end": early_end, "provenance": made})
    return str(path)


INDEX = {"trend": "key", "sop": "rung", "gap split": "key"}  # the tables indexed by a column


def _numbers(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each column JSON stored as numbers and nulls read back as floats."""
    def numeric(column: pd.Series) -> bool:
        return column.dtype == object and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in column.dropna())
    return table.astype({c: float for c in table if numeric(table[c])} if len(table) else {})


def result_tables(store=None) -> tuple:
    """({name: table} as ``compute_result`` gave them, the stored record less its
    tables), read back from ``RESULT``; NotComplete until the result is stored."""
    store = store or results_dir(STORE)
    stored = read_json(store / RESULT)
    if stored is None:
        _analysed_seeds(store, False)  # NotComplete before every run is stored
        raise NotComplete("every run is stored, but the analysis is not: `python -m "
                          "albert_rerun.studies.ladder result` computes and stores it, once")
    tables = {name: _numbers(pd.DataFrame(**split).rename_axis(INDEX.get(name)))
              for name, split in stored["tables"].items()}
    return tables, {k: v for k, v in stored.items() if k != "tables"}


def trained_runs(store=None) -> pd.DataFrame:
    """The stored 1x and 16x runs' training records (``A.training_records``)."""
    runs = [({"rung": rung, "condition": arm, "seed": seed}, C.seeded(config, seed))
            for rung in ("1x", "16x") for arm, config in configs(rung).items()
            for seed in SEEDS[rung]]
    return pd.DataFrame(A.training_records(store or results_dir(STORE), runs),
                        columns=["rung"] + A.RUN_COLUMNS)


def training_costs(store=None) -> pd.DataFrame:
    """Per trained rung and arm: ``confirm_analysis.training_costs``."""
    parts = [A.training_costs(part).assign(rung=rung)
             for rung, part in trained_runs(store).groupby("rung", sort=False)]
    if not parts:
        return pd.DataFrame(columns=["rung", "condition", "runs", "hours", "tokens/s"])
    out = pd.concat(parts, ignore_index=True)
    return out[["rung"] + [c for c in out.columns if c != "rung"]]


def registration() -> dict | None:
    """The stored registration record, or None before it."""
    return R.record(RECORD)


def registration_problem() -> str:
    """Why this checkout may not train ladder runs ("" if it may)."""
    return R.problem(registration(), RECORD, PAGE)


def stored_runs(store=None) -> list:
    """Every stored ladder pretraining run's JSON (the committed store by default)."""
    store = store or _committed_store(STORE)
    return [json.loads(p.read_text()) for p in sorted((store / "pretrain").glob("*.json"))]


def provenance_problems(runs, record: dict | None = None) -> list:
    """The registration's checks and every 16x run's descent from the forecast's commit."""
    record = record or registration()
    out = R.provenance_problems(runs, record)
    if record is None:
        return out
    committed = forecast_commit()
    for run in runs:
        if run["config"]["max_steps"] in (RUNGS["16x"], wide_steps("16x")):
            commit = run["provenance"]["git_commit"].removesuffix("+dirty")
            if committed is None or not R.descends(commit, committed):
                out.append(f"{run['hash']}: a 16x run not descending from the forecast's "
                           f"commit")
    return out


# Leaving the loss plateau (amendment 10, descriptive): a 16x difference can be a delay.
RUNG = "left bigram"  # the count rung whose passing marks leaving the plateau


def rung_level(name: str = RUNG, sequences: int | None = None) -> float:
    """A count rung (nats) on the ``cpu`` profile's first ``sequences`` held-out sequences,
    or as stored for the whole set (``sequences`` None)."""
    evaluation = resolve(A.PILOT_PROFILE).evaluation
    if sequences is not None:
        return float(count_rungs.levels_on(evaluation, sequences)[name])
    return float(count_rungs.levels(count_rungs.stored_or_fail(evaluation))[name])


def curve_sequences(frame: pd.DataFrame) -> int:
    """The held-out sequences every run's curve of ``frame`` scores (one number)."""
    counts = {int(p["examples"]) for curve in frame["curve"] for p in curve}
    if len(counts) != 1:
        raise ValueError(f"the curves score different numbers of sequences: {counts}")
    return counts.pop()


def first_below(frame: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per run: condition, seed, steps, and its first point under ``level`` as a share of steps."""
    rows = [(run["condition"], int(run["seed"]), int(run["steps"]),
             next((p["step"] / run["steps"] for p in run["curve"] if p[A.CE] < level), np.nan))
            for _, run in frame.iterrows()]
    return pd.DataFrame(rows, columns=["condition", "seed", "steps", "first below"])


def passes(rung: str = "16x", store=None, level: float | None = None) -> pd.DataFrame:
    """``first_below`` for every run of a rung, at the left-bigram rung on its curves."""
    frame = rung_frame(rung, store)
    level = rung_level(RUNG, curve_sequences(frame)) if level is None else level
    return first_below(frame, level)


def arm_range(table: pd.DataFrame, arm: str) -> dict:
    """An arm's first passes over its seeds: low, high, never passed, and seeds."""
    part = table[table["condition"] == arm]
    passed = part["first below"].dropna()
    return {"low": passed.min() if len(passed) else np.nan,
            "high": passed.max() if len(passed) else np.nan,
            "never": int(part["first below"].isna().sum()), "seeds": len(part)}


def delay(table: pd.DataFrame, spec) -> dict | None:
    """A decision's two arms' ``arm_range`` ("a", "b"), "apart": whether one arm passed
    later in every seed (never: after the end), "later": that arm; None unless in nats."""
    if spec.metric != A.CE:
        return None

    def seeds(arm) -> pd.Series:  # a never as past the end
        return table.loc[table["condition"] == arm, "first below"].fillna(np.inf)
    a, b = seeds(spec.a), seeds(spec.b)
    later = (spec.a if a.min() > b.max() else spec.b if b.min() > a.max() else None) \
        if len(a) and len(b) else None
    return {"a": arm_range(table, spec.a), "b": arm_range(table, spec.b),
            "apart": later is not None, "later": later}


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train and evaluate the 1x rung, then, once the forecast is committed, the 16x."""
    problem = registration_problem()
    if problem:
        raise NotComplete(f"no ladder run trains before the registration: {problem}")
    store = results_dir(STORE)
    rungs = ["1x"]
    if rung_complete("1x", store):
        if forecast_commit() is not None:
            rungs.append("16x")
        else:
            print("[ladder] 1x complete: store and commit the forecast (its `forecast` "
                  "command) before any 16x run", flush=True)
    done, deadline = 0, None if hours is None else time.time() + hours * 3600
    for rung in rungs:  # one deadline for both rungs
        runs = [c for c in planned(rung) if config_hash(c.to_dict()) not in diverged(store)]
        left = None if deadline is None else (deadline - time.time()) / 3600
        done += confirm.stretch(runs, STORE, f"ladder {rung}", left, fill, workers, device,
                                failed=record_divergence)
    if "16x" in rungs:
        store_when_complete(store)
    return done


def store_when_complete(store) -> None:
    """Once every run is stored, ``store_result``; a failure is left to ``ladder result``."""
    if not rung_complete("16x", store) or (store / RESULT).exists():
        return
    try:
        store_result(store, "the training stretch that stored the last run")
        print(f"[ladder] every run is stored: the analysis is in {RESULT}", flush=True)
    except Exception as error:  # noqa: BLE001 - the runs are committed either way
        print(f"[ladder] the analysis was not stored ({type(error).__name__}): run "
              f"`python -m albert_rerun.studies.ladder result`", flush=True)


def record_divergence(key: str, text: str) -> None:
    """List a run whose training diverged (any other failure resumes from a checkpoint)."""
    if "diverged" not in text:
        return
    store = results_dir(STORE)
    atomic_write_json(store / DIVERGED, {**diverged(store), key: text})


def main(argv=None) -> int:
    from .training import add_stretch_arguments, run_stretch
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    add_stretch_arguments(sub.add_parser("train", help="train and evaluate the missing "
                                         "rung runs"))
    sub.add_parser("progress", help="runs stored per rung and arm (no estimate)")
    sub.add_parser("forecast", help="once the 1x rung is complete: store the forecast")
    result = sub.add_parser("result", help="once every run is stored: compute and store "
                            "the registered analysis (once)")
    result.add_argument("--early-end", action="store_true", help="an amendment's early end")
    args = parser.parse_args(argv)
    if args.command == "progress":
        print(progress().to_string(index=False))
        return 0
    if args.command == "train":
        return run_stretch(parser, args, train)
    return A.print_unless_incomplete({
        "forecast": store_forecast,
        "result": lambda: store_result(early_end=getattr(args, "early_end", False))
    }[args.command])


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

"""The compute ladder: the confirmatory decisions at 1x, 4x and 16x the cpu profile's
training, registered on book/ladder.md before any of its runs trains.

- ``RUNGS``: steps per rung; ``X``: log2 of compute over the 1x rung's (same model at
  every rung); ``ARMS``: the primary family's, the wide model's steps the registered
  equal-time ratio times the rung's (``wide_steps``); ``SEEDS``: fresh at 1x and 16x,
  the 4x rung the confirmatory store as stored (counts: ``ladder_power``);
- ``trend_family``: per primary decision, each rung's estimate, the slope against ``X``
  (``trend.slope``) and Holm over the five; nothing before every run is stored
  (``NotComplete``, the stopping rule);
- ``forecast``: once the 1x rung is complete and before any 16x run, each decision's
  16x mean from the 1x and 4x rungs (``trend.extrapolate``), committed before 16x trains;
- ``store_result``: once every run is stored, ``compute_result`` once, kept in ``RESULT``
  (the stretch that stores the last run does it; ``ladder result`` by hand);
  ``result_tables`` reads it back, never computing it anew (``ladder report`` prints
  it); ``training_costs`` and ``ladder costs``: what the runs took, from their training
  records alone, shown while the ladder trains.

Training (``ladder train --hours H --fill`` or ``scripts/train_stretch.sh ladder H``,
from a clean checkout) goes rung by rung, seed by seed, with a blinded log.
"""
from __future__ import annotations

import argparse
import math
import time
from dataclasses import replace

import numpy as np
import pandas as pd

from ..engine.store import atomic_write_json, config_hash, read_json, results_dir
from . import conditions as C
from . import confirm, confirm_analysis
from .confirm_analysis import NotComplete

STORE = "ladder"  # data/results/ladder/
RUNGS = {"1x": 5400, "4x": 21600, "16x": 86400}
X = {rung: math.log2(steps / RUNGS["1x"]) for rung, steps in RUNGS.items()}  # 0, 2, 4
ARMS = (confirm_analysis.ALBERT, confirm_analysis.ATTENTION, confirm_analysis.FFN,
        confirm_analysis.BERT, confirm_analysis.ALL64, confirm_analysis.NSP, confirm_analysis.DROPOUT,
        confirm_analysis.WIDE)
DECISIONS = confirm_analysis.PRIMARY
# the seeds (power_plan and budget decide the counts; book/ladder.md gives the table)
SEEDS = {"1x": tuple(range(2000, 2006)), "4x": confirm_analysis.CONFIRM_SEEDS,
         "16x": tuple(range(3000, 3004))}
POWER, MIN_16X, MAX_16X = 0.8, 3, 8
MIN_1X, MAX_1X = 6, 11
# the whole ladder, the long pilot included (one thread a run, at the confirmatory runs'
# ms a step): "about 55 CPU-hours", read as at most 5% over
BUDGET_HOURS, BUDGET_TOLERANCE = 55.0, 0.05
FORECAST = "forecast.json"  # in the ladder's store
DIVERGED = "diverged.json"  # {hash: the failure's text}: runs kept out, never replaced
PAGE = "book/ladder.md"
RECORD = "data/ladder-registration.json"  # {"commit", "date", "sha256", "page"}
PILOT_SD_NOTE = ("the cpu profile stored no cue-free evaluation, so the 1x SD of the SOP "
                 "decision is the 4x one")


# -- the readings and what enters them (sections 3 and 4, amendments 5 and 6) -----------

ALPHA = 0.05
MIN_SEEDS_TO_ANALYSE = 3
TOWARD, AWAY, NO_TREND = ("moves toward the paper's sign", "moves away from the paper's sign",
                          "no trend shown")
NOT_COMPUTED = "not computed"


def trend_reading(estimate: float, p_holm: float, paper_sign: int) -> str:
    """The registered reading of a slope: toward the paper's sign, away from it, or no
    trend shown (Holm-adjusted p at or above ALPHA, or no slope)."""
    if not p_holm < ALPHA or not estimate or not np.isfinite(estimate):
        return NO_TREND
    return TOWARD if np.sign(estimate) == paper_sign else AWAY


def too_few(d: dict, rungs) -> list:
    """The rungs of ``rungs`` where ``d`` ({rung: paired differences}) has fewer than
    MIN_SEEDS_TO_ANALYSE values: a decision with any gets no slope."""
    return [r for r in rungs if len(d.get(r, ())) < MIN_SEEDS_TO_ANALYSE]


def differences(frames: dict, spec) -> dict:
    """{rung: per-seed paired differences of ``spec``, finite ones only} of the rungs in
    ``frames`` that hold the decision's metric (a rung with none is left out)."""
    out = {}
    for rung, frame in frames.items():
        if spec.kind == "change":  # the transition measures, for the decisions of change
            frame = confirm_analysis.with_changes(frame)
        try:
            d = confirm_analysis.per_seed(spec, frame)
        except KeyError:  # a metric the rung's store does not hold
            continue
        d = d.to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        if len(d):
            out[rung] = d
    return out


# the stored numbers of every arm that enter the ladder's tables (``rung_frame``'s
# columns); the cue-free accuracies are strings of 0 and 1, finite by construction
CHECKED = (confirm_analysis.CE, "train_mlm_loss_at_mask")


def nonfinite_runs(frames: dict) -> pd.DataFrame:
    """One row per stored run (rung, arm, seed) with a number of CHECKED that is NaN or
    infinite, and which ("number", joined by ", ")."""
    rows = []
    for rung, frame in frames.items():
        columns = [c for c in CHECKED if c in frame]
        for _, r in frame.iterrows():
            bad = [c for c in columns if not np.isfinite(float(r[c]))]
            if bad:
                rows.append({"rung": rung, "arm": r["condition"], "seed": int(r["seed"]),
                             "number": ", ".join(bad)})
    return pd.DataFrame(rows, columns=["rung", "arm", "seed", "number"])


def without_runs(frames: dict, runs: pd.DataFrame) -> dict:
    """``frames`` less the rows of ``runs`` (rung, arm, seed): out of every table, as a
    diverged run, which has no row, is."""
    out = {}
    for rung, frame in frames.items():
        drop = runs[runs["rung"] == rung]
        gone = set(zip(drop["arm"], drop["seed"]))
        keep = [(c, int(s)) not in gone for c, s in zip(frame["condition"], frame["seed"])]
        out[rung] = frame[keep].reset_index(drop=True) if gone else frame
    return out


def first_rung_learning_order(table: pd.DataFrame) -> str | None:
    """The first rung at which order counts as learned (``sop_by_rung``), or None."""
    learned = [rung for rung, ok in table["order learned"].items() if ok]
    return learned[0] if learned else None


# -- the design -------------------------------------------------------------------------------

def registered_timing() -> dict:
    """The confirmatory equal-time measurement (wide steps against 21,600)."""
    record = confirm_analysis.equal_time_record(results_dir(confirm_analysis.STORE))
    if record is None:
        record = read_json(_committed_store(confirm_analysis.STORE) / "choices" /
                           f"{confirm_analysis.EQUAL_TIME}.json")
    if record is None:
        raise NotComplete("the confirmatory equal-time measurement is not stored")
    return record


def _committed_store(name: str):
    from ..paths import repo_root
    return repo_root() / "data" / "results" / name


def wide_steps(rung: str) -> int:
    """The wide model's steps at a rung: the registered ratio (10,453 / 21,600) times the
    rung's steps."""
    record = registered_timing()
    if rung == "4x":
        return int(record["steps"])
    return round(RUNGS[rung] * record["steps"] / record["bert_steps"])


def configs(rung: str) -> dict:
    """{arm: config without seed} at a rung: the confirmatory configs (4x), or the same on
    a schedule of the rung's steps (warm-up and curve scaled, ``conditions.with_steps``)."""
    if rung not in RUNGS:
        raise ValueError(f"rung must be one of {tuple(RUNGS)}, got {rung!r}")
    registered = confirm_analysis.conditions(wide_steps("4x"))
    if rung == "4x":
        return {arm: registered[arm] for arm in ARMS}
    return {arm: C.with_steps(registered[arm], wide_steps(rung)
                              if arm == confirm_analysis.WIDE else RUNGS[rung]) for arm in ARMS}


def planned(rung: str) -> list:
    """A rung's runs, seed-major: every arm of a seed, then the ALBERT-style arm's
    random-init control (what ``confirm_analysis.load`` reads beside it), then the next
    seed."""
    from ..engine.config import untrained
    if rung == "4x":
        raise ValueError("the 4x rung is the confirmatory store: nothing to train")
    out = []
    for seed in SEEDS[rung]:
        seeded = {arm: C.seeded(c, seed) for arm, c in configs(rung).items()}
        out += list(seeded.values()) + [untrained(seeded[confirm_analysis.ALBERT])]
    return out


def rung_frame(rung: str, store=None, seeds=None) -> pd.DataFrame:
    """One row per (arm, seed) of a rung, as ``confirm_analysis.load`` gives them
    (``seeds``: default all; a diverged run has no row)."""
    if rung == "4x":
        frame = confirm_analysis.confirmatory_frame(
            store=_committed_store(confirm_analysis.STORE) if store is None else store)
        frame = frame[frame["condition"].isin(ARMS)].reset_index(drop=True)
    else:
        frame = confirm_analysis.load(store or results_dir(STORE), configs(rung),
                                      seeds or SEEDS[rung], require=False)
    steps = {arm: c.max_steps for arm, c in configs(rung).items()}
    wrong = frame[frame["steps"] != frame["condition"].map(steps)] if len(frame) else frame
    if len(wrong):  # a record stored under a rung's config but trained for other steps
        raise ValueError(f"{rung} rung: runs not trained for their config's steps: "
                         f"{wrong[['condition', 'seed', 'steps']].to_dict('records')}")
    return frame


def run_states(rung: str, store=None, seeds=None) -> pd.DataFrame:
    """One row per run of a trained rung's ``seeds`` (default: all), seed-major: its arm,
    seed, and whether it is trained, evaluated, or listed as diverged."""
    store = store or results_dir(STORE)
    evaluations = confirm_analysis._evaluation_configs()
    listed = diverged(store)
    rows = []
    for seed in seeds or SEEDS[rung]:
        for arm, config in configs(rung).items():
            seeded = C.seeded(config, seed)
            run, complete = confirm_analysis._stored(store, arm, seeded, evaluations)
            rows.append({"arm": arm, "seed": seed, "trained": run is not None,
                         "evaluated": complete, "diverged": not complete and
                         config_hash(seeded.to_dict()) in listed})
    return pd.DataFrame(rows)


def progress(store=None) -> pd.DataFrame:
    """Runs trained, evaluated and listed as diverged per rung and arm: counts only, no
    estimate."""
    parts = [run_states(rung, store).groupby("arm", sort=False)[
        ["trained", "evaluated", "diverged"]].sum().astype(int).reset_index().assign(
        rung=rung, of=len(SEEDS[rung])) for rung in ("1x", "16x")]
    return pd.concat(parts, ignore_index=True)[
        ["rung", "arm", "trained", "evaluated", "diverged", "of"]]


def settled(table: pd.DataFrame) -> bool:
    """Whether every run of ``progress``' table is evaluated or listed as diverged."""
    return bool((table["evaluated"] + table["diverged"] == table["of"]).all())


def diverged(store=None) -> dict:
    """{hash: failure text} of the runs that diverged (non-finite training loss): each
    is listed once, kept out of its arm's decisions, and never retrained on another
    seed."""
    return read_json((store or results_dir(STORE)) / DIVERGED) or {}


def rung_complete(rung: str, store=None, seeds=None) -> bool:
    """Whether every run of the rung's ``seeds`` (default: all) is stored with its
    evaluations or listed as diverged."""
    states = run_states(rung, store, seeds)
    return bool((states["evaluated"] | states["diverged"]).all())


def complete_prefix(rung: str, store=None) -> tuple:
    """The longest run of whole seeds from the rung's first, for an early end."""
    seeds = []
    for seed in SEEDS[rung]:
        if not rung_complete(rung, store, (seed,)):
            break
        seeds.append(seed)
    return tuple(seeds)


DESIGN = "design.json"  # in the ladder's store: the power plan and budget (ladder_power)


def stored_design(store=None) -> dict | None:
    """The stored power plan and seed counts (``ladder_power.store_design``)."""
    return read_json((store or _committed_store(STORE)) / DESIGN)


# -- the forecast -----------------------------------------------------------------------------

def forecast(store=None) -> dict:
    """Each decision's 16x rung mean forecast from the 1x and 4x rungs (the line in X,
    ``trend.extrapolate``), with its 95% prediction interval for the mean of the 16x
    seeds; NotComplete until the 1x rung is complete."""
    from ..engine.provenance import record
    from ..stats.trend import extrapolate
    if not rung_complete("1x", store):
        raise NotComplete("the 1x rung is not complete: no forecast before it is")
    frames = {"1x": rung_frame("1x", store), "4x": rung_frame("4x")}
    out = {}
    for spec in DECISIONS:
        d = differences(frames, spec)
        f = extrapolate(d["1x"], d["4x"], X["1x"], X["4x"], X["16x"], len(SEEDS["16x"]))
        out[spec.key] = {"estimate": f.estimate, "low": f.low, "high": f.high,
                         "se": f.se, "df": f.df, "assumed_sd": f.assumed_sd,
                         "n": f.n, "unit": spec.unit}
    return {"forecast": out, "provenance": record()}


def store_forecast(store=None) -> dict:
    store = store or results_dir(STORE)
    if read_json(store / FORECAST) is not None:
        raise FileExistsError(f"{store / FORECAST} exists: the forecast is made once")
    out = forecast(store)
    atomic_write_json(store / FORECAST, out)
    return out


def forecast_committed() -> bool:
    """Whether the forecast file is in this checkout's committed history (HEAD)."""
    return confirm_analysis._git("cat-file", "-e",
                               f"HEAD:data/results/{STORE}/{FORECAST}").returncode == 0


# -- the analysis -----------------------------------------------------------------------------

def _analysed_seeds(store, early_end: bool) -> dict:
    """The seeds each trained rung is analysed on: all of them once complete; with
    ``early_end`` (an amendment's decision, on counts alone), the longest run of whole
    seeds from the first, if it has MIN_SEEDS_TO_ANALYSE or more."""
    out = {}
    for rung in ("1x", "16x"):
        if rung_complete(rung, store):
            out[rung] = SEEDS[rung]
            continue
        prefix = complete_prefix(rung, store) if early_end else ()
        if len(prefix) < MIN_SEEDS_TO_ANALYSE:
            raise NotComplete(f"the {rung} rung is not complete: no estimate before every "
                              f"run of the ladder is stored")
        out[rung] = prefix
    return out


def _frames(store, early_end: bool, frames: dict | None) -> dict:
    """``frames`` if given, else ``rung_frames``; the stopping rule is checked either way."""
    if frames is None:
        return rung_frames(store, early_end)
    _analysed_seeds(store, early_end)
    return frames


def rung_frames(store=None, early_end: bool = False, clean: bool = True) -> dict:
    """{rung: ``rung_frame``} of the three rungs, once the analysis may run (NotComplete
    before): the 1x and 16x rungs from the ladder's ``store``, the 4x rung always from
    the confirmatory store as committed (a ladder store holds no 4x run); ``clean``:
    without the runs of ``nonfinite_runs`` (amendments 5 and 6)."""
    seeds = _analysed_seeds(store, early_end)
    frames = {rung: rung_frame(rung, None if rung == "4x" else store, seeds.get(rung))
              for rung in RUNGS}
    return without_runs(frames, nonfinite_runs(frames)) if clean else frames


def trend_family(store=None, early_end: bool = False, frames: dict | None = None
                 ) -> pd.DataFrame:
    """The registered analysis, once every run of the three rungs is stored: per primary
    decision, each rung's mean paired difference and 95% t-interval, the slope per
    doubling of compute with its interval (``trend.slope``), its p before and after
    Holm's adjustment over the five slopes (statsmodels) and the reading; beside them,
    descriptive, the two segments' slopes, the curvature m(16x) - 2 m(4x) + m(1x) and
    the forecast against the 16x measurement (``frames``: ``rung_frames``', if known).
    A decision with fewer than MIN_SEEDS_TO_ANALYSE finite paired differences at a rung
    gets no slope and p = 1 in Holm's family (amendment 5), and reads NOT_COMPUTED."""
    from statsmodels.stats.multitest import multipletests

    from ..stats.inference import mean_interval
    from ..stats.trend import contrast, slope
    frames = _frames(store, early_end, frames)
    predicted = (read_json((store or results_dir(STORE)) / FORECAST) or {}).get("forecast", {})
    rows = []
    for spec in DECISIONS:
        d = differences(frames, spec)
        row = {"key": spec.key, "decision": spec.label, "unit": spec.unit,
               "paper_sign": spec.paper_sign, "too few seeds at": ", ".join(too_few(d, RUNGS))}
        for rung in RUNGS:  # a rung's mean where it has two seeds or more
            i = mean_interval(d[rung]) if len(d.get(rung, ())) >= 2 else None
            row.update({f"{rung} mean": i.mean if i else math.nan, f"{rung} low": i.low
                        if i else math.nan, f"{rung} high": i.high if i else math.nan,
                        f"{rung} seeds": len(d.get(rung, ())),
                        f"{rung} sd": float(np.std(d[rung], ddof=1)) if i else math.nan})
        f = predicted.get(spec.key)
        if f:
            row.update({"forecast": f["estimate"], "forecast low": f["low"],
                        "forecast high": f["high"], "forecast sd": f["assumed_sd"],
                        "forecast covers": f["low"] <= row["16x mean"] <= f["high"]})
        if row["too few seeds at"]:  # amendment 5: no slope, p = 1 in Holm's family
            rows.append({**row, "p": 1.0})
            continue
        # X is log2 of compute over the 1x rung's (1x 0, 4x 2, 16x 4): the slope is per
        # doubling of compute
        groups = {X[r]: d[r] for r in RUNGS}
        s = slope(groups)
        row.update({"slope": s.estimate, "slope low": s.low, "slope high": s.high,
                    "slope df": s.df, "p": s.p})
        for name, weights in (("1x-4x", {0.0: -0.5, 2.0: 0.5}), ("4x-16x", {2.0: -0.5, 4.0: 0.5}),
                              ("curvature", {0.0: 1.0, 2.0: -2.0, 4.0: 1.0})):
            c = contrast(groups, weights)
            row.update({f"{name}": c.estimate, f"{name} low": c.low, f"{name} high": c.high})
        rows.append(row)
    table = pd.DataFrame(rows).set_index("key")
    table["p holm"] = multipletests(table["p"].to_numpy(), alpha=ALPHA, method="holm")[1]
    table["reading"] = [NOT_COMPUTED if r["too few seeds at"] else
                        trend_reading(r["slope"], r["p holm"], r["paper_sign"])
                        for _, r in table.iterrows()]
    return table


# the overfitting gap (section 2, amendments 4 and 7), descriptive and outside Holm's
# family; the registered names below check the stopping rule and call these

GAP, TRAIN = "overfit_gap", "train_mlm_loss_at_mask"


def gap_decisions(decisions) -> tuple:
    """The decisions measured as held-out cross-entropy at [MASK], whose difference splits
    into a training and a gap difference (amendment 7: every decision in nats)."""
    return tuple(s for s in decisions if s.metric == confirm_analysis.CE and s.kind == "ce")


def _with_gap(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{GAP: frame[confirm_analysis.CE] - frame[TRAIN]})


def gaps_by_rung(store=None, early_end: bool = False, frames: dict | None = None
                 ) -> pd.DataFrame:
    """Per rung and arm: the overfitting gap, held-out minus training cross-entropy at
    [MASK] (16x sees the training split about 13 times), mean and 95% t-interval."""
    from ..stats.inference import mean_interval
    rows = []
    for rung, frame in _frames(store, early_end, frames).items():
        for arm, part in _with_gap(frame).groupby("condition", sort=False):
            if len(part) >= 2:
                i = mean_interval(part[GAP].astype(float))
                rows.append({"rung": rung, "arm": arm, "gap": i.mean, "low": i.low,
                             "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows)


def _paired(spec, frame: pd.DataFrame, metric: str) -> np.ndarray:
    """The decision's per-seed difference A minus B of ``metric``."""
    return confirm_analysis.per_seed(replace(spec, metric=metric), frame).to_numpy(float)


# the decisions read with the gap beside them: section 2's two, and since amendment 7
# every decision in nats
GAP_DECISIONS = tuple(spec.key for spec in gap_decisions(DECISIONS))


def gap_differences(store=None, early_end: bool = False, frames: dict | None = None
                    ) -> pd.DataFrame:
    """Beside the slopes in nats (section 2, amendment 7): per rung and decision, the
    paired difference A minus B of the gap, mean and 95% t-interval (a rung with fewer
    than two seeds left is left out)."""
    from ..stats.inference import mean_interval
    rows = []
    for rung, frame in _frames(store, early_end, frames).items():
        frame = _with_gap(frame)
        for spec in gap_decisions(DECISIONS):
            d = _paired(spec, frame, GAP)
            if len(d) >= 2:  # diverged runs may leave fewer than two seeds
                i = mean_interval(d)
                rows.append({"key": spec.key, "rung": rung, "gap difference": i.mean,
                             "low": i.low, "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows)


PARTS = {"change": confirm_analysis.CE, "gap part": GAP, "training part": TRAIN}


def gap_split(store=None, early_end: bool = False, frames: dict | None = None
              ) -> pd.DataFrame:
    """Per decision in nats (amendment 7): the change of its mean paired difference from
    1x to 16x, m(16x) - m(1x), and its two exact parts, each with its 95% interval
    (``trend.contrast``: the unequal-spread standard error, the fewest seeds less one as
    df); "read": whether the change's interval excludes 0, the only case in which its
    parts are read. A decision with fewer than MIN_SEEDS_TO_ANALYSE seeds at 1x or 16x
    is not split (NaN), as it gets no slope (amendment 5)."""
    from ..stats.trend import contrast
    frames = _frames(store, early_end, frames)
    gapped = {r: _with_gap(frames[r]) for r in ("1x", "16x")}
    rows = []
    for spec in gap_decisions(DECISIONS):
        values = {name: {r: _paired(spec, frame, metric) for r, frame in gapped.items()}
                  for name, metric in PARTS.items()}
        seeds = {r: len(values["change"][r]) for r in ("1x", "16x")}
        row = {"key": spec.key, "1x seeds": seeds["1x"], "16x seeds": seeds["16x"]}
        for name, by in values.items():
            c = (contrast({X["1x"]: by["1x"], X["16x"]: by["16x"]},
                          {X["1x"]: -1.0, X["16x"]: 1.0})
                 if min(seeds.values()) >= MIN_SEEDS_TO_ANALYSE else None)
            row.update({name: c.estimate if c else np.nan, f"{name} low": c.low if c else np.nan,
                        f"{name} high": c.high if c else np.nan})
        row["read"] = bool(row["change low"] > 0 or row["change high"] < 0)
        rows.append(row)
    return pd.DataFrame(rows).set_index("key")


def time_ratios_by_rung(store=None, early_end: bool = False, frames: dict | None = None
                        ) -> pd.DataFrame:
    """Per rung and seed: wide over BERT-style training seconds, their machines, and
    whether the ratio is outside 0.9-1.1 (``confirm_analysis.time_ratios``)."""
    parts = [confirm_analysis.time_ratios(frame).assign(rung=rung)
             for rung, frame in _frames(store, early_end, frames).items()]
    return pd.concat(parts, ignore_index=True)


def sop_by_rung(store=None, early_end: bool = False, frames: dict | None = None
                ) -> pd.DataFrame:
    """Per rung: the SOP-trained model's cue-free probe and head minus the majority label
    in points, with 95% t-intervals (``above_majority``); order counts as learned where
    the probe's interval lies above zero (one criterion: three chances, not six)."""
    rows = []
    for rung, frame in _frames(store, early_end, frames).items():
        albert = frame[frame["condition"] == confirm_analysis.ALBERT]
        row = {"rung": rung}
        for name, column in (("probe", "sop_cuefree_accuracy_probe"),
                             ("head", "sop_cuefree_accuracy_head")):
            i = confirm_analysis.above_majority(albert, column)
            row.update({f"{name} mean": i.mean if i else math.nan,
                        f"{name} low": i.low if i else math.nan,
                        f"{name} high": i.high if i else math.nan})
        row["order learned"] = bool(row["probe low"] > 0)
        rows.append(row)
    return pd.DataFrame(rows).set_index("rung")


RESULT = "result.json"  # in the ladder's store: the analysis as computed, once


def compute_result(store=None, early_end: bool = False) -> dict:
    """{name: table}: the registered analysis and the tables beside it, computed now
    (NotComplete before every run is stored)."""
    raw = rung_frames(store, early_end, clean=False)
    odd = nonfinite_runs(raw)
    frames = without_runs(raw, odd)
    return {name: function(store, early_end, frames) for name, function in (
        ("trend", trend_family), ("gaps", gaps_by_rung), ("gap differences", gap_differences),
        ("gap split", gap_split), ("sop", sop_by_rung), ("time ratios", time_ratios_by_rung),
        ("non-finite", lambda *_: odd))}


def store_result(store=None, trigger: str = "by hand", early_end: bool = False) -> str:
    """Once every run is stored: ``compute_result`` once, from a clean checkout, stored in
    ``RESULT`` with its provenance and ``trigger`` (what computed it), so the book reports
    the analysis as computed (section 4); its path. FileExistsError if stored already."""
    import json

    from ..engine.provenance import record
    path = (store or results_dir(STORE)) / RESULT
    if path.exists():
        raise FileExistsError(f"{path} exists: the analysis is computed once")
    provenance = record()
    if provenance["git_commit"].endswith("+dirty"):
        raise NotComplete("the analysis is stored from a clean checkout: commit first")
    tables = compute_result(store, early_end)
    atomic_write_json(path, {
        "tables": {name: json.loads(table.to_json(orient="split", double_precision=15))
                   for name, table in tables.items()},
        "trigger": trigger, "early_end": early_end, "provenance": provenance})
    return str(path)


# -- the stored result as the book reads it, and the training costs ---------------------------

INDEX = {"trend": "key", "sop": "rung", "gap split": "key"}  # the tables indexed by a column


class NotStored(NotComplete):
    """Every run is stored, but the analysis is not yet (``store_result``)."""


def _numbers(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each column that JSON stored as numbers and nulls (a column NaN in
    every row reloads as None) read back as floats, so that NaN tests work on it."""
    out = table.copy()
    if not len(out):  # an empty table keeps its columns' types (no value says them)
        return out
    for column in out.columns:
        values = [v for v in out[column] if v is not None]
        if out[column].dtype == object and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out[column] = out[column].astype(float)
    return out


def result_tables(store=None) -> tuple:
    """({name: table} as ``ladder.compute_result`` gave them, the stored record less its
    tables): read from the store where ``ladder.store_result`` put them. NotComplete
    before every run is stored (the stopping rule), and after, until the result is
    stored: nothing is shown that was not computed once and kept."""
    store = store or results_dir(STORE)
    stored = read_json(store / RESULT)
    if stored is None:
        _analysed_seeds(store, False)  # NotComplete before every run is stored
        raise NotStored("every run is stored, but the analysis is not: `python -m "
                        "albert_rerun.studies.ladder result` computes and stores it, once")
    tables = {}
    for name, split in stored["tables"].items():
        table = pd.DataFrame(**split)
        table.index.name = INDEX.get(name)
        tables[name] = _numbers(table)
    return tables, {k: v for k, v in stored.items() if k != "tables"}


def trained_runs(store=None) -> pd.DataFrame:
    """The stored 1x and 16x runs' training records alone, one row per (rung, arm, seed):
    steps, training seconds, tokens and machine. No evaluation or loss is read, so this
    is shown while the ladder trains (``confirm_analysis.trained_runs``' rule)."""
    from ..engine.store import stored_pretrain
    from .decisions import _machine
    store = store or results_dir(STORE)
    rows = []
    for rung in ("1x", "16x"):
        for arm, config in configs(rung).items():
            for seed in SEEDS[rung]:
                run = stored_pretrain(store, C.seeded(config, seed))
                if run is not None:
                    rows.append({"rung": rung, "condition": arm, "seed": seed,
                                 **{k: run["metrics"][k] for k in
                                    ("steps", "train_seconds", "tokens")},
                                 "machine": _machine(run)})
    return pd.DataFrame(rows, columns=["rung"] + confirm_analysis.RUN_COLUMNS)


def training_costs(store=None) -> pd.DataFrame:
    """Per trained rung and arm: runs, steps a run, milliseconds a step, tokens a second
    and hours (``confirm_analysis.training_costs``), from the training records alone."""
    runs = trained_runs(store)
    parts = [confirm_analysis.training_costs(part).assign(rung=rung)
             for rung, part in runs.groupby("rung", sort=False)]
    if not parts:
        return pd.DataFrame(columns=["rung", "condition", "runs", "hours", "tokens/s"])
    out = pd.concat(parts, ignore_index=True)
    return out[["rung"] + [c for c in out.columns if c != "rung"]]



def report(store=None) -> str:
    """The result as text: every table of ``result_tables`` and the training costs."""
    tables, stored = result_tables(store)
    where = (f"stored by {stored['trigger']} at commit {stored['provenance']['git_commit']}"
             + (", an early end" if stored.get("early_end") else ""))
    parts = [(f"The result ({where})", None)] + list(tables.items()) + [
        ("training", training_costs(store))]
    with pd.option_context("display.width", 200, "display.max_columns", None):
        return "\n\n".join(title if table is None else f"{title}\n{table.to_string()}"
                             for title, table in parts)


def costs(store=None) -> str:
    """What the stored 1x and 16x runs cost, from their training records alone (no loss,
    no evaluation, so it is shown while the ladder trains): per rung and arm, runs, ms a
    step, tokens a second and hours; then each seed's equal-time seconds ratio per rung,
    the check of amendment 1.2 of the first registration."""
    runs = trained_runs(store)
    table = training_costs(store)
    ratios = [confirm_analysis.time_ratios(part).assign(rung=rung)
              for rung, part in runs.groupby("rung", sort=False)]
    ratios = pd.concat(ratios, ignore_index=True) if ratios else pd.DataFrame()
    lines = [f"{len(runs)} runs stored, {table['hours'].sum():.2f} hours of training "
             f"(one thread each)"]
    with pd.option_context("display.width", 200, "display.max_columns", None,
                           "display.float_format", "{:.2f}".format):
        lines += [table.to_string(index=False)]
        if len(ratios):
            lines += ["", "wide / BERT-style training seconds, per seed",
                      ratios[["rung"] + [c for c in ratios.columns if c != "rung"]]
                      .to_string(index=False)]
    return "\n".join(lines)


def registration() -> dict | None:
    """The stored registration record, or None before it."""
    from ..paths import repo_root
    return read_json(repo_root() / RECORD)


def registration_problem() -> str:
    """Why this checkout may not train ladder runs ("" if it may): no record, a record
    not in the committed history, or a HEAD that does not descend from the registration
    commit, or a registered text that changed."""
    from ..paths import repo_root
    record = registration()
    if record is None:
        return f"{RECORD} is not stored"
    if confirm_analysis._git("cat-file", "-e", f"HEAD:{RECORD}").returncode != 0:
        return f"{RECORD} is not committed"
    head = confirm_analysis._git("rev-parse", "HEAD").stdout.strip()
    if not confirm_analysis.descends(head, record["commit"]):
        return f"HEAD {head[:7]} does not descend from {record['commit'][:7]}"
    if confirm_analysis.registered_digest((repo_root() / PAGE).read_text()) != \
            record["sha256"]:
        return f"the registered text of {PAGE} changed"
    return ""


def stored_runs(store=None) -> list:
    """Every stored ladder pretraining run's JSON (the committed store by default)."""
    import json
    store = store or _committed_store(STORE)
    return [json.loads(p.read_text()) for p in sorted((store / "pretrain").glob("*.json"))]


def forecast_commit() -> str | None:
    """The commit that added the forecast file, or None before it is committed."""
    out = confirm_analysis._git("log", "--diff-filter=A", "--format=%H", "--",
                              f"data/results/{STORE}/{FORECAST}").stdout.split()
    return out[-1] if out else None


def provenance_problems(runs, record: dict | None = None) -> list:
    """The first registration's checks (clean tree, descends from the registration
    commit, the same training code as it) against this registration, and for every 16x
    run, descent from the forecast's commit; as text (none: [])."""
    record = record or registration()
    if record is None:
        return [f"{run['hash']}: stored before the registration" for run in runs]
    out = confirm_analysis.run_provenance_problems(runs, record["commit"])
    committed = forecast_commit()
    for run in runs:
        if run["config"]["max_steps"] in (RUNGS["16x"], wide_steps("16x")):
            commit = run["provenance"]["git_commit"].removesuffix("+dirty")
            if committed is None or not confirm_analysis.descends(commit, committed):
                out.append(f"{run['hash']}: a 16x run not descending from the forecast's "
                           f"commit")
    return out



# -- leaving the loss plateau (amendment 10, descriptive) --------------------------------------
# A 16x difference can be a delay: one arm leaves the plateau every model starts on later.
# A rung is scored on a curve's own sequences (``count_rungs.levels_on``): on all 4,096 it
# sits on other targets (easier by 0.35 nats for the left bigram) and marks crossings late.

RUNG = "left bigram"  # the count rung whose passing marks leaving the plateau


def rung_level(name: str = RUNG, sequences: int | None = None) -> float:
    """A count rung's held-out cross-entropy at [MASK] (nats) on the ``cpu`` profile's
    evaluation, which every ladder run is scored on: on the first ``sequences`` of its
    held-out sequences (a curve's own, ``count_rungs.levels_on``), or as stored for the
    whole set (``sequences`` None)."""
    from ..profiles import resolve
    from .count_rungs import levels, levels_on, stored
    evaluation = resolve(confirm_analysis.PILOT_PROFILE).evaluation
    if sequences is not None:
        return float(levels_on(evaluation, sequences)[name])
    record = stored(evaluation)
    if not record:
        raise FileNotFoundError("no count rungs are stored (data/results/yardsticks/)")
    return float(levels(record)[name])


def curve_sequences(frame: pd.DataFrame) -> int:
    """The held-out sequences every run's curve of ``frame`` scores (one number: runs
    whose curves score different sets cannot share a rung)."""
    counts = {int(p["examples"]) for curve in frame["curve"] for p in curve}
    if len(counts) != 1:
        raise ValueError(f"the curves score different numbers of sequences: {counts}")
    return counts.pop()


def first_below(frame: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per run of ``frame`` (``ladder.rung_frame``): its condition, seed, steps,
    and the first curve point whose held-out cross-entropy at [MASK] is under ``level``,
    as a share of the run's steps (NaN where no point is). A share, since the wide arm
    of equal time trains fewer steps in the same time as its partner."""
    rows = []
    for _, run in frame.iterrows():
        steps = [p["step"] for p in run["curve"] if p[confirm_analysis.CE] < level]
        rows.append({"condition": run["condition"], "seed": int(run["seed"]),
                     "steps": int(run["steps"]),
                     "first below": steps[0] / run["steps"] if steps else np.nan})
    return pd.DataFrame(rows, columns=["condition", "seed", "steps", "first below"])


def passes(rung: str = "16x", store=None, level: float | None = None) -> pd.DataFrame:
    """``first_below`` for every run of a complete ladder rung, at the left-bigram rung
    scored on the runs' curve sequences unless ``level`` is given."""
    frame = rung_frame(rung, store)
    level = rung_level(RUNG, curve_sequences(frame)) if level is None else level
    return first_below(frame, level)


def arm_range(table: pd.DataFrame, arm: str) -> dict:
    """An arm's first passes under the rung over its seeds, as shares of training: low,
    high (NaN if no seed passed), the seeds that never passed, and the seeds."""
    part = table[table["condition"] == arm]
    passed = part["first below"].dropna()
    return {"low": passed.min() if len(passed) else np.nan,
            "high": passed.max() if len(passed) else np.nan,
            "never": int(part["first below"].isna().sum()), "seeds": len(part)}


def delay(table: pd.DataFrame, spec) -> dict | None:
    """A decision's two arms, ``arm_range`` each ({"a": ..., "b": ...}), "apart": whether
    one arm passed later than the other in every seed (its earliest pass later than the
    other's latest, a seed that never passed counting as after the end), and
    "later": that arm's name; None for a decision not in nats (a probe's accuracy is
    not what the curves measure)."""
    if spec.metric != confirm_analysis.CE:
        return None

    def seeds(arm) -> pd.Series:  # a never as past the end
        return table.loc[table["condition"] == arm, "first below"].fillna(np.inf)
    a, b = seeds(spec.a), seeds(spec.b)
    later = (spec.a if a.min() > b.max() else spec.b if b.min() > a.max() else None) \
        if len(a) and len(b) else None
    return {"a": arm_range(table, spec.a), "b": arm_range(table, spec.b),
            "apart": later is not None, "later": later}


# -- training ---------------------------------------------------------------------------------

def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train and evaluate the 1x rung, seed by seed; then, once the forecast is committed,
    the 16x rung. Blinded: the log shows steps, seconds and tokens a second."""
    from ..data.files import verify_inputs
    from .training import _train, default_workers
    verify_inputs()
    problem = registration_problem()
    if problem:
        raise NotComplete(f"no ladder run trains before the registration: {problem}")
    store = results_dir(STORE)
    workers = workers or default_workers()
    finish_by = None if hours is None else time.time() + hours * 3600
    rungs = ["1x"]
    if rung_complete("1x", store):
        if forecast_committed():
            rungs.append("16x")
        else:
            print("[ladder] 1x complete: store and commit the forecast (its `forecast` "
                  "command) before any 16x run", flush=True)
    done = 0
    for rung in rungs:
        runs = [c for c in planned(rung) if config_hash(c.to_dict()) not in diverged(store)]
        done += _train(runs, store, device, workers, False, False, float("inf"),
                       f"ladder {rung}", finish_by, fill and finish_by is not None,
                       blinded=True, failed=record_divergence)
        done += confirm.evaluate_trained(runs, STORE, device, workers)
    if "16x" in rungs:
        store_when_complete(store)
    return done


def store_when_complete(store) -> None:
    """After a stretch: once every run is stored, ``store_result`` from this clean
    checkout, in a blind line; a failure is said and left to ``ladder result``, so the
    stretch still commits its runs."""
    if not rung_complete("16x", store) or (store / RESULT).exists():
        return
    try:
        store_result(store, "the training stretch that stored the last run")
        print(f"[ladder] every run is stored: the analysis is in {RESULT}", flush=True)
    except Exception as error:  # noqa: BLE001 - the runs are committed either way
        print(f"[ladder] the analysis was not stored ({type(error).__name__}): run "
              f"`python -m albert_rerun.studies.ladder result`", flush=True)


def record_divergence(key: str, text: str) -> None:
    """List a run whose training diverged (``engine.pretrain`` raises "the run
    diverged"); any other failure is left to resume from its checkpoint."""
    if "diverged" not in text:
        return
    store = results_dir(STORE)
    listed = diverged(store)
    listed[key] = text
    atomic_write_json(store / DIVERGED, listed)


def main(argv=None) -> int:
    from .training import add_stretch_arguments, run_stretch
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("train", help="train and evaluate the missing rung runs")
    add_stretch_arguments(go)
    sub.add_parser("progress", help="runs stored per rung and arm (no estimate)")
    sub.add_parser("forecast", help="once the 1x rung is complete: store the forecast")
    result = sub.add_parser("result", help="once every run is stored: compute and store "
                            "the registered analysis (once)")
    result.add_argument("--early-end", action="store_true", help="an amendment's early end")
    sub.add_parser("report", help="every table of the stored result, and the costs")
    sub.add_parser("costs", help="the training costs alone, shown while the ladder trains")
    args = parser.parse_args(argv)
    if args.command in ("report", "costs"):
        return confirm_analysis.print_unless_incomplete(
            costs if args.command == "costs" else report)
    if args.command == "progress":
        print(progress().to_string(index=False))
        return 0
    if args.command == "forecast":
        return confirm_analysis.print_unless_incomplete(store_forecast)
    if args.command == "result":
        return confirm_analysis.print_unless_incomplete(
            lambda: store_result(early_end=args.early_end))
    return run_stretch(parser, args, train)


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

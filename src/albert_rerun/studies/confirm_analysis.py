"""The confirmatory replication's analysis (book/preregistration.md): its stored runs in,
the registered decisions out.

``load`` reads one row per condition and seed from a store; ``confirmatory_frame`` the
confirmatory runs, only once every run, evaluation and control of the design
(``confirm_design``) is stored (``NotComplete`` before: the stopping rule);
``pilot_frame`` the pilot's. ``family`` is the registered analysis, the same function
for the pilot and the confirmatory seeds: each decision's per-seed paired difference
(``per_seed``) judged by ``decisions``, Holm-adjusted over its family. ``progress``
counts what is stored, and shows nothing else; ``trained_runs``, ``training_costs`` and
``time_ratios`` read the training records alone.
"""
from __future__ import annotations

import pandas as pd

from ..engine.store import config_hash, results_dir
from ..profiles import resolve
from . import conditions as C
from .confirm_design import (BERT, CE, CONDITIONS, CONFIRM_SEEDS, CUE_FREE_ARMS,
                             PILOT_PROFILE, PILOT_SEEDS, PRIMARY, SECONDARY, STORE,
                             TRANSITION_ARMS, WIDE, NotComplete, Spec, conditions,
                             equal_time_record, lr_check, margin_values, pilot_conditions)


# -- the analysis -----------------------------------------------------------------------------

def with_changes(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with the transition measures (``transitions.add_roughness``) and each
    one's change from its random-init control (``change_<measure>``), where present."""
    from ..stats.curves import add_roughness
    if "transition_angle" not in frame:
        return frame
    frame = add_roughness(frame.copy())
    for measure in ("oscillation_angle", "oscillation_l2"):
        if f"control_{measure}" in frame:
            frame[f"change_{measure}"] = frame[measure] - frame[f"control_{measure}"]
    return frame


def per_seed(spec: Spec, frame: pd.DataFrame) -> pd.Series:
    """The decision's per-seed paired difference a - b (points for accuracies)."""
    metric = f"change_{spec.metric}" if spec.kind == "change" else spec.metric

    def values(name):
        part = frame[frame["condition"] == name].set_index("seed")[metric]
        if spec.kind == "accuracy":
            part = part.dropna().map(lambda s: 100 * sum(c == "1" for c in s) / len(s))
        return part.astype(float)

    a, b = values(spec.a), values(spec.b)
    seeds = sorted(set(a.dropna().index) & set(b.dropna().index))
    return (a.loc[seeds] - b.loc[seeds]).rename(spec.key)


def decide(spec: Spec, frame: pd.DataFrame, margins: dict):
    """The decision (``stats.Decision``) of one spec on a frame of runs."""
    from .decisions import accuracy_decision, ce_decision
    margin = margins[spec.margin]
    if spec.kind == "accuracy":
        return accuracy_decision(frame, spec.key, spec.claim, spec.label, spec.a, spec.b,
                                 spec.metric, margin, spec.paper_sign, spec.paper)
    metric = f"change_{spec.metric}" if spec.kind == "change" else spec.metric
    return ce_decision(frame, spec.key, spec.claim, spec.label, spec.a, spec.b, margin,
                       spec.paper_sign, spec.paper, metric=metric, unit=spec.unit)


def family(frame: pd.DataFrame, rungs: dict, specs=PRIMARY) -> pd.DataFrame:
    """The registered analysis: each spec's decision, gated by its arms' levels, with
    Holm's adjustment over ``specs`` alone (``stats.holm``: two tests a decision)."""
    from .decisions import gated
    from ..stats.inference import holm
    frame = with_changes(frame)
    margins = margin_values(rungs)
    return holm(gated([decide(s, frame, margins) for s in specs], frame, rungs))


def schedule_points(frame: pd.DataFrame, condition: str, metric: str = CE) -> dict:
    """{(seed, share of its run's schedule): (step, metric)} over one condition's
    learning curves, each point matched to the nearest eighth of its run's steps, so
    that arms of different steps (the equal-time ones) meet at equal shares of their
    time: the pairing ``curve_differences``, the chapters' difference panels
    (``pages.figures.curve_differences``) and the scale page's per-seed curves share."""
    out = {}
    for _, row in frame[frame["condition"] == condition].iterrows():
        for point in row["curve"]:
            share = round(8 * point["step"] / row["steps"]) / 8
            out[(row["seed"], share)] = (point["step"], point[metric])
    return out


def curve_differences(frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """A cross-entropy decision's paired difference along training: at each curve point
    (every eighth of a run's schedule, on the curve's held-out sequences, a subset of the
    evaluation's), the mean over seeds of a - b with its 95% t-interval. Points are
    matched by their share of the schedule, so the equal-time arms (of different steps)
    meet at equal shares of their time. Points before the end come before the learning
    rate has decayed."""
    from ..stats.inference import mean_interval
    if spec.kind != "ce":
        raise ValueError(f"{spec.key} is not a cross-entropy decision: no curve")

    a, b = schedule_points(frame, spec.a), schedule_points(frame, spec.b)
    rows = []
    for share in sorted({k[1] for k in a} & {k[1] for k in b}):
        d = [a[k][1] - b[k][1] for k in a if k[1] == share and k in b]
        i = mean_interval(d)
        rows.append({"share of training": share, "mean": i.mean, "low": i.low,
                     "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows)


# -- the runs ---------------------------------------------------------------------------------

def _evaluation_configs():
    from ..profiles import eval_config
    return (eval_config(PILOT_PROFILE), cue_free_config())


def cue_free_config():
    from ..engine.evaluate import CueFreeEval
    from ..profiles import SIZES
    return CueFreeEval(max_seq_length=SIZES[PILOT_PROFILE].seq)


def _needed(name: str, seeded, evaluations) -> list:
    """(config, evaluation) pairs a stored run of condition ``name`` needs: the common
    evaluation; the cue-free one for the SOP and NSP arms; its control's for the
    transition arms."""
    from ..engine.config import untrained
    needed = [(seeded, evaluations[0])]
    if name in CUE_FREE_ARMS:
        needed.append((seeded, evaluations[1]))
    if name in TRANSITION_ARMS:
        needed.append((untrained(seeded), evaluations[0]))
    return needed


def _stored(store, name: str, seeded, evaluations) -> tuple:
    """(the stored run or None, whether it is stored with every evaluation it needs)."""
    from ..engine.store import stored_eval, stored_pretrain
    run = stored_pretrain(store, seeded)
    return run, run is not None and all(
        stored_eval(store, config_hash(c.to_dict()), e) is not None
        for c, e in _needed(name, seeded, evaluations))


def load(store, configs: dict, seeds, require: bool = True) -> pd.DataFrame:
    """One row per (condition, seed) of ``store``: pretraining figures, both evaluations
    (the common held-out sets and the cue-free pairs) and, for the transition arms, the
    random-init control's. ``require``: NotComplete names what is missing."""
    from ..engine.config import untrained
    from .decisions import CONTROL_METRICS, _evaluations, _machine
    evaluations = _evaluation_configs()
    missing, rows = [], []
    for name, config in configs.items():
        for seed in seeds:
            seeded = C.seeded(config, seed)
            run, complete = _stored(store, name, seeded, evaluations)
            if not complete:
                missing.append(f"{name!r} seed {seed}")
                continue
            row = {"condition": name, "seed": seed, "hash": run["hash"], **run["metrics"],
                   "curve": run["curve"], "machine": _machine(run),
                   "commit": run["provenance"]["git_commit"],
                   **_evaluations(store, run["hash"], evaluations)}
            if name in TRANSITION_ARMS:
                control = _evaluations(store, config_hash(untrained(seeded).to_dict()),
                                       evaluations[:1])
                row.update({f"control_{k}": v for k, v in control.items()
                            if k in CONTROL_METRICS})
            rows.append(row)
    if missing and require:
        raise NotComplete(f"{len(missing)} of {len(configs) * len(seeds)} runs are not "
                          f"stored with their evaluations: {', '.join(missing)}")
    return pd.DataFrame(rows)


def pilot_frame() -> pd.DataFrame:
    """The pilot's runs: cpu-long's seeds 0-2 of the nine conditions (from the results
    folder, else the committed one: the tests' temporary store holds none)."""
    return load(C._timing_store(resolve(PILOT_PROFILE)), pilot_conditions(), PILOT_SEEDS)


def confirmatory_frame(seeds=CONFIRM_SEEDS, store=None) -> pd.DataFrame:
    """The confirmatory runs of ``seeds``, only once every one of them is stored (the
    stopping rule): NotComplete before. ``seeds`` other than all of them: only the
    longest complete run of seeds from the first (amendment 1, an early end)."""
    if tuple(seeds) != CONFIRM_SEEDS[:len(seeds)]:
        raise ValueError(f"an early end analyses seeds {CONFIRM_SEEDS[0]} to k in order, "
                         f"not {tuple(seeds)}")
    record = equal_time_record(store)
    if record is None:
        raise NotComplete("the equal-time measurement is not stored yet: no confirmatory "
                          "run has started")
    return load(store or results_dir(STORE), conditions(record["steps"]), seeds)


def time_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Amendment 1's check of equal time: per seed, the wide run's training seconds over
    the BERT-style run's, their machines, and whether the ratio is outside 0.9-1.1."""
    rows = []
    for seed, part in frame.groupby("seed"):
        runs = part.set_index("condition")
        if not {WIDE, BERT} <= set(runs.index):
            continue
        ratio = runs.loc[WIDE, "train_seconds"] / runs.loc[BERT, "train_seconds"]
        rows.append({"seed": seed, "wide / BERT-style seconds": ratio,
                     "machines": " / ".join(dict.fromkeys(runs.loc[[WIDE, BERT], "machine"])),
                     "flagged": not 0.9 <= ratio <= 1.1})
    return pd.DataFrame(rows)


RUN_COLUMNS = ["condition", "seed", "steps", "train_seconds", "tokens", "machine"]


def trained_runs(store=None) -> pd.DataFrame:
    """The stored confirmatory runs' training records alone, one row per (condition,
    seed): steps, training seconds, tokens and machine. No evaluation or loss is read,
    so this is shown while the design is incomplete."""
    from .decisions import _machine
    store = store or results_dir(STORE)
    record = equal_time_record(store)
    if record is None:
        return pd.DataFrame(columns=RUN_COLUMNS)
    from ..engine.store import stored_pretrain
    rows = []
    for name, config in conditions(record["steps"]).items():
        for seed in CONFIRM_SEEDS:
            run = stored_pretrain(store, C.seeded(config, seed))
            if run is not None:
                rows.append({"condition": name, "seed": seed,
                             **{k: run["metrics"][k] for k in
                                ("steps", "train_seconds", "tokens")},
                             "machine": _machine(run)})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def training_costs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per condition of ``trained_runs``: runs, steps a run, milliseconds a step, tokens a
    second and hours of training (one worker of one thread each)."""
    rows = []
    for name, part in runs.groupby("condition", sort=False):
        seconds, steps = part["train_seconds"].sum(), part["steps"].sum()
        rows.append({"condition": name, "runs": len(part),
                     "steps a run": int(part["steps"].median()),
                     "ms a step": 1000 * seconds / steps,
                     "tokens/s": part["tokens"].sum() / seconds,
                     "hours": seconds / 3600,
                     "machines": ", ".join(sorted(set(part["machine"])))})
    return pd.DataFrame(rows, columns=["condition", "runs", "steps a run", "ms a step",
                                       "tokens/s", "hours", "machines"])


def lr_check_scores(store=None) -> dict | None:
    """{rate: held-out cross-entropy at [MASK]} of amendment 1's learning-rate check, once
    its three runs are stored and evaluated (None before, or before the equal-time
    measurement fixes their steps)."""
    from .decisions import _evaluations
    record = equal_time_record(store)
    if record is None:
        return None
    store = store or results_dir(STORE)
    evaluations = _evaluation_configs()
    scores = {}
    for rate, config in lr_check(record["steps"]).items():
        run, complete = _stored(store, WIDE, config, evaluations)
        if not complete:
            return None
        scores[rate] = float(_evaluations(store, run["hash"], evaluations[:1])[CE])
    return scores


def rungs() -> dict:
    from .decisions import levels
    return levels(resolve(PILOT_PROFILE))


_JUDGED: dict = {}  # (store, its files' fingerprint) -> the judged families


def _fingerprint(store) -> tuple:
    """Every file of ``store`` with its size and modification time: a store that gains,
    loses or rewrites a file has another fingerprint."""
    from pathlib import Path
    root = Path(store)
    if not root.is_dir():
        return ()
    return tuple(sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns)
                        for p in root.rglob("*") if p.is_file()))


def confirmatory_families(store=None) -> dict:
    """{"primary", "secondary"}: the two families on the confirmatory seeds; NotComplete
    until every run is stored. Judged once per process for a store as it stands (the
    pages call this a dozen times while a book builds; a changed store is judged
    again), and each caller gets its own copies."""
    path = store or results_dir(STORE)
    key = (str(path), _fingerprint(path))
    if key not in _JUDGED:
        _JUDGED.clear()
        _JUDGED[key] = both_families(confirmatory_frame(store=store), rungs())
    return {name: frame.copy() for name, frame in _JUDGED[key].items()}


def both_families(frame: pd.DataFrame, r: dict) -> dict:
    """{"primary", "secondary"}: each registered family judged on ``frame``."""
    return {"primary": family(frame, r, PRIMARY), "secondary": family(frame, r, SECONDARY)}


def above_majority(runs: pd.DataFrame, accuracy: str):
    """The runs' cue-free SOP accuracy (column ``accuracy``: the probe's or the head's)
    minus the majority label's, in points, as a mean with its 95% t-interval over
    seeds; None where the runs do not all carry it."""
    from ..stats.inference import mean_interval
    if not len(runs) or accuracy not in runs or runs[accuracy].isna().any():
        return None
    return mean_interval(100 * (runs[accuracy] - runs["sop_cuefree_majority"]))


def progress(store=None) -> pd.DataFrame:
    """How many of each condition's seeds are trained and evaluated: counts only, no
    estimate (what the book shows until the design is complete)."""
    store = store or results_dir(STORE)
    record = equal_time_record(store)
    configs = conditions(record["steps"] if record else None)
    evaluations = _evaluation_configs()
    rows = []
    for name in CONDITIONS:
        trained = evaluated = 0
        for seed in CONFIRM_SEEDS if name in configs else ():
            run, complete = _stored(store, name, C.seeded(configs[name], seed), evaluations)
            trained += run is not None
            evaluated += complete
        rows.append({"condition": name, "trained": trained, "evaluated": evaluated,
                     "of": len(CONFIRM_SEEDS)})
    return pd.DataFrame(rows).set_index("condition")


def complete(store=None) -> bool:
    table = progress(store)
    return bool((table["evaluated"] == table["of"]).all())

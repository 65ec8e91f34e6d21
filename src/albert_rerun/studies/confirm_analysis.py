"""The confirmatory replication's registered design and analysis (book/preregistration.md).
Its runs are read only once every one is stored (``NotComplete`` before: the stopping
rule); ``family`` judges a frame of runs, the pilot's or the fresh seeds'."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..engine.store import config_hash, read_json, results_dir
from ..profiles import resolve
from ..stats.power import holm_tests  # noqa: F401 (read from here by confirm and the book)
from . import conditions as C
from .decisions import margins as margin_values  # the registered margins are the chapters'
from .decisions import store_fingerprint

STORE = "confirm"  # data/results/confirm/
PILOT_PROFILE = "cpu-long"  # the sizes, and the pilot's store
PILOT_SEEDS = (0, 1, 2)
FIRST_SEED = 1000  # no stored run uses a seed at or above 1000 (a test checks it)
ALPHA, POWER, MIN_SEEDS, MAX_SEEDS = 0.05, 0.8, 10, 12
CONFIRM_SEEDS = tuple(range(FIRST_SEED, FIRST_SEED + 11))
WIDE_LEARNING_RATE = 5e-3
EQUAL_TIME = "equal-time"
# amendment 1's learning-rate check of the wide model, on a seed no comparison uses
LR_CHECK_SEED, LR_CHECK_RATES = 100, (2.5e-3, 5e-3, 1e-2)

ALBERT = "ALBERT-style (all shared, E 32)"
NONE32 = "not shared, E 32"
ATTENTION = "attention-shared, E 32"
FFN = "FFN-shared, E 32"
BERT = "BERT-style (not shared, E = H = 64)"
ALL64 = "all shared, E 64"
NSP = "NSP-trained"
DROPOUT = "dropout 0.1"
WIDE = "wide all-shared (H 128), equal time"
CONDITIONS = (ALBERT, NONE32, ATTENTION, FFN, BERT, ALL64, NSP, DROPOUT, WIDE)
# the arms with a random-init control, and those scored on cue-free pairs
TRANSITION_ARMS = (ALBERT, NONE32)
CUE_FREE_ARMS = (ALBERT, NSP)
CE = "mlm_loss_at_mask"


class NotComplete(LookupError):
    """The confirmatory store does not yet hold every run the design names."""


def print_unless_incomplete(compute) -> int:
    """Print ``compute()`` (exit 0), or the stopping rule's refusal on stderr (exit 1)."""
    import sys
    from ..cli import one_line
    try:
        print(compute())
    except NotComplete as error:
        print(one_line(error), file=sys.stderr)
        return 1
    return 0


def conditions(wide_steps: int | None) -> dict:
    """{name: config without seed} at cpu-long's sizes; the wide arm only given its steps."""
    p = resolve(PILOT_PROFILE)
    b = C.base(p)
    H = b.model.hidden_size
    out = {ALBERT: b, NONE32: b.replace_model(sharing="none"),
           ATTENTION: b.replace_model(sharing="attention"),
           FFN: b.replace_model(sharing="ffn"), BERT: C.bert_style(p),
           ALL64: b.replace_model(embedding_size=H, sharing="all"),
           NSP: b.replace(objective="nsp"), DROPOUT: C.dropout(p)["dropout 0.1"]}
    if wide_steps is not None:
        out[WIDE] = C.wide_albert(p, wide_steps, WIDE_LEARNING_RATE)
    return out


def equal_time_record(store=None) -> dict | None:
    """The stored equal-time measurement of ``store`` (default: the confirmatory one)."""
    return read_json((store or results_dir(STORE)) / "choices" / f"{EQUAL_TIME}.json")


def stored_conditions(store) -> dict:
    """``conditions`` at the equal-time steps stored in ``store`` (no wide arm before)."""
    record = equal_time_record(store)
    return conditions(record["steps"] if record else None)


def pilot_conditions() -> dict:
    """The pilot's configs: cpu-long's, its wide model at its stored equal-time steps."""
    return stored_conditions(C._timing_store(resolve(PILOT_PROFILE)))


def lr_check(wide_steps: int) -> dict:
    """{rate: config}: amendment 1's learning-rate check of the wide model."""
    pilot = resolve(PILOT_PROFILE)
    return {rate: C.wide_albert(pilot, wide_steps, rate).replace(seed=LR_CHECK_SEED)
            for rate in LR_CHECK_RATES}


def planned(wide_steps: int, seeds=CONFIRM_SEEDS) -> list:
    """Every confirmatory run, seed-major: all conditions of a seed, then its two
    transition controls; the learning-rate check after the first seed."""
    from ..engine.config import untrained
    configs = conditions(wide_steps)
    out = []
    for k, seed in enumerate(seeds):
        out += [C.seeded(configs[name], seed) for name in CONDITIONS]
        out += [untrained(C.seeded(configs[name], seed)) for name in TRANSITION_ARMS]
        if k == 0:
            out += list(lr_check(wide_steps).values())
    return out


@dataclass(frozen=True)
class Spec:
    """One registered decision: metric(a) minus metric(b), paired by seed."""

    key: str
    claim: str
    label: str
    a: str
    b: str
    paper_sign: int  # +1 / -1 the paper's sign of a - b; 0: the paper says no difference
    margin: str  # a key of ``margin_values``
    kind: str  # "ce", "accuracy" or "change" (trained minus its random-init control)
    metric: str = CE
    paper: str = ""

    @property
    def unit(self) -> str:
        """The unit of the paired difference."""
        return {"accuracy": "points", "change": "share of range"}.get(self.kind, "nats")


PRIMARY = (
    Spec("confirm/asymmetry", "asymmetry", "FFN-shared minus attention-shared, E 32",
         FFN, ATTENTION, +1, "small", "ce",
         paper="Table 4, E = 128: attention-shared 81.7, FFN-shared 80.2 Avg"),
    Spec("confirm/sharing-cost", "asymmetry", "all shared minus not shared, E = H = 64",
         ALL64, BERT, +1, "ce", "ce",
         paper="Table 4, E = 768: all shared 79.8, not shared 82.3 Avg"),
    Spec("confirm/sop", "sop_nsp",
         "SOP probe on cue-free pairs, SOP-trained minus NSP-trained", ALBERT, NSP, +1,
         "pairs", "accuracy", metric="sop_cuefree_probe_correct",
         paper="Table 5: SOP accuracy 86.5 (SOP-trained) vs 52.0 (NSP-trained)"),
    Spec("confirm/dropout", "dropout", "dropout 0.1 minus no dropout", DROPOUT, ALBERT,
         +1, "ce", "ce", paper="Table 8: 90.4 with dropout, 90.7 without (Avg)"),
    Spec("confirm/equal-time", "wall_clock",
         "wide all-shared (H 128) minus BERT-style, equal time", WIDE, BERT, -1, "ce", "ce",
         paper="Table 6: ALBERT-xxlarge 88.7 vs BERT-large 87.2 Avg, 32 h vs 34 h"),
)

SECONDARY = (
    Spec("explore/sharing-cost-E32", "asymmetry", "all shared minus not shared, E 32",
         ALBERT, NONE32, +1, "small", "ce",
         paper="Table 4, E = 128: all shared 80.1, not shared 81.6 Avg"),
    Spec("explore/attention-free", "asymmetry", "attention-shared minus not shared, E 32",
         ATTENTION, NONE32, 0, "small", "ce",
         paper="Table 4, E = 128: attention-shared 81.7, not shared 81.6 Avg"),
    Spec("explore/ffn-cost", "asymmetry", "FFN-shared minus not shared, E 32", FFN, NONE32,
         +1, "small", "ce", paper="Table 4, E = 128: FFN-shared 80.2, not shared 81.6 Avg"),
    Spec("explore/sop-cut-pairs", "sop_nsp",
         "SOP probe on the original pairs (with the cut cue), SOP- minus NSP-trained",
         ALBERT, NSP, +1, "pairs", "accuracy", metric="sop_probe_correct",
         paper="Table 5: 86.5 vs 52.0"),
    Spec("explore/nsp-cue-free", "sop_nsp",
         "NSP probe on cue-free pairs, NSP-trained minus SOP-trained", NSP, ALBERT, +1,
         "pairs", "accuracy", metric="nsp_cuefree_probe_correct",
         paper="Table 5: NSP accuracy 90.5 (NSP-trained) vs 78.9 (SOP-trained)"),
    Spec("explore/transitions-angle", "transitions",
         "angle oscillation, trained minus init: not shared minus all shared, E 32",
         NONE32, ALBERT, +1, "oscillation", "change", metric="oscillation_angle",
         paper="Figure 1: ALBERT's transitions smoother (no numbers)"),
    Spec("explore/transitions-l2", "transitions",
         "L2 oscillation, trained minus init: not shared minus all shared, E 32",
         NONE32, ALBERT, +1, "oscillation", "change", metric="oscillation_l2",
         paper="Figure 1: ALBERT's transitions smoother (no numbers)"),
    Spec("explore/embedding-size", "embedding_sweep",
         "not shared: E = H = 64 minus E 32 (E 64 has 8000 x 32 more embedding weights)",
         BERT, NONE32, -1, "ce", "ce",
         paper="Table 3, not shared: E = 768 82.3 vs E = 128 81.7 Avg"),
)

def holm_alpha(specs=PRIMARY, alpha: float = ALPHA) -> float:
    """Holm's first-step alpha: two tests per decision (difference and TOST)."""
    return alpha / (2 * len(specs))


# the registered differences a chapter's headline reads the other way round
REVERSED = {"asymmetry": "attention-shared minus FFN-shared",
            "dropout": "no dropout minus dropout 0.1"}
PAGE = "book/preregistration.md"  # the registration, and its record
RECORD = "data/preregistration.json"


def with_changes(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with the transition measures and each one's change from its random-init
    control (``change_<measure>``), where present."""
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
    """{(seed, share of its run's schedule, to the nearest eighth): (step, metric)} over
    one condition's curves, so that arms of different steps meet at equal shares."""
    out = {}
    for _, row in frame[frame["condition"] == condition].iterrows():
        for point in row["curve"]:
            share = round(8 * point["step"] / row["steps"]) / 8
            out[(row["seed"], share)] = (point["step"], point[metric])
    return out


def paired_along(frame: pd.DataFrame, a: str, b: str, metric: str = CE) -> pd.DataFrame:
    """``a`` minus ``b`` along training, paired by seed at equal shares of each run's
    schedule (``schedule_points``): share, step (``a``'s), mean, low, high, seeds."""
    from ..stats.inference import mean_interval
    frame = frame[frame["curve"].map(lambda c: isinstance(c, list))]
    left, right = schedule_points(frame, a, metric), schedule_points(frame, b, metric)
    rows = []
    for share in sorted({k[1] for k in left} & {k[1] for k in right}):
        keys = [k for k in left if k[1] == share and k in right]
        i = mean_interval([left[k][1] - right[k][1] for k in keys])
        rows.append({"share": share, "step": left[keys[0]][0], "mean": i.mean, "low": i.low,
                     "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows, columns=["share", "step", "mean", "low", "high", "seeds"])


def curve_differences(frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """A cross-entropy decision's paired difference along training, with its 95%
    t-interval (``paired_along``)."""
    if spec.kind != "ce":
        raise ValueError(f"{spec.key} is not a cross-entropy decision: no curve")
    return paired_along(frame, spec.a, spec.b).drop(columns="step").rename(
        columns={"share": "share of training"})


def _evaluation_configs():
    """(the common held-out sets' evaluation, the cue-free pairs' at the pilot's length)."""
    from ..engine.evaluate import CueFreeEval
    from ..profiles import SIZES, eval_config
    return (eval_config(PILOT_PROFILE), CueFreeEval(max_seq_length=SIZES[PILOT_PROFILE].seq))


def _needed(name: str, seeded, evaluations) -> list:
    """(config, evaluation) pairs a stored run of condition ``name`` needs."""
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
    """One row per (condition, seed) of ``store``: pretraining, evaluations and controls'
    metrics; with ``require``, NotComplete names what is missing."""
    from .decisions import _control_metrics, run_row
    evaluations, missing, rows = _evaluation_configs(), [], []
    for name, config in configs.items():
        for seed in seeds:
            seeded = C.seeded(config, seed)
            run, complete = _stored(store, name, seeded, evaluations)
            if not complete:
                missing.append(f"{name!r} seed {seed}")
                continue
            row = run_row(store, run, evaluations, {"condition": name, "seed": seed})
            if name in TRANSITION_ARMS:
                row.update(_control_metrics(store, seeded, evaluations[:1]))
            rows.append(row)
    if missing and require:
        raise NotComplete(f"{len(missing)} of {len(configs) * len(seeds)} runs are not "
                          f"stored with their evaluations: {', '.join(missing)}")
    return pd.DataFrame(rows)


def pilot_frame() -> pd.DataFrame:
    """The pilot's runs: cpu-long's seeds 0-2 of the nine conditions."""
    return load(C._timing_store(resolve(PILOT_PROFILE)), pilot_conditions(), PILOT_SEEDS)


def confirmatory_frame(seeds=CONFIRM_SEEDS, store=None) -> pd.DataFrame:
    """The confirmatory runs of ``seeds`` (the first k, for an early end), only once
    every one of them is stored: NotComplete before."""
    if tuple(seeds) != CONFIRM_SEEDS[:len(seeds)]:
        raise ValueError(f"an early end analyses seeds {CONFIRM_SEEDS[0]} to k in order, "
                         f"not {tuple(seeds)}")
    record = equal_time_record(store)
    if record is None:
        raise NotComplete("the equal-time measurement is not stored yet: no confirmatory "
                          "run has started")
    return load(store or results_dir(STORE), conditions(record["steps"]), seeds)


FAIR = (0.9, 1.1)  # amendment 1: a wide arm's share of its partner's seconds read as equal


def time_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Amendment 1's check of equal time: per seed, wide over BERT-style training
    seconds, their machines, and whether the ratio is outside 0.9-1.1."""
    rows = []
    for seed, part in frame.groupby("seed"):
        runs = part.set_index("condition")
        if not {WIDE, BERT} <= set(runs.index):
            continue
        ratio = runs.loc[WIDE, "train_seconds"] / runs.loc[BERT, "train_seconds"]
        rows.append({"seed": seed, "wide / BERT-style seconds": ratio,
                     "machines": " / ".join(dict.fromkeys(runs.loc[[WIDE, BERT], "machine"])),
                     "flagged": not FAIR[0] <= ratio <= FAIR[1]})
    return pd.DataFrame(rows)


RUN_COLUMNS = ["condition", "seed", "steps", "train_seconds", "tokens", "machine"]


def training_records(store, runs) -> list:
    """One row per stored run of ``runs`` ((labels, config) pairs): its labels, steps,
    training seconds, tokens and machine. No evaluation or loss is read."""
    from ..engine.store import stored_pretrain
    from .decisions import _machine
    rows = []
    for labels, config in runs:
        run = stored_pretrain(store, config)
        if run is not None:
            rows.append({**labels, **{k: run["metrics"][k] for k in
                                      ("steps", "train_seconds", "tokens")},
                         "machine": _machine(run)})
    return rows


def trained_runs(store=None) -> pd.DataFrame:
    """The stored confirmatory runs' training records, shown while the design is incomplete."""
    store = store or results_dir(STORE)
    configs = stored_conditions(store).items() if equal_time_record(store) else ()
    runs = [({"condition": name, "seed": seed}, C.seeded(config, seed))
            for name, config in configs for seed in CONFIRM_SEEDS]
    return pd.DataFrame(training_records(store, runs), columns=RUN_COLUMNS)


def training_costs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per condition of ``trained_runs``: its runs' costs (hours: one thread each)."""
    g = runs.groupby("condition", sort=False)
    seconds = g["train_seconds"].sum()
    return pd.DataFrame({"runs": g.size(), "steps a run": g["steps"].median().astype(int),
                         "ms a step": 1000 * seconds / g["steps"].sum(),
                         "tokens/s": g["tokens"].sum() / seconds, "hours": seconds / 3600,
                         "machines": g["machine"].agg(lambda m: ", ".join(sorted(set(m))))}
                        ).reset_index()


def lr_check_scores(store=None) -> dict | None:
    """{rate: held-out cross-entropy at [MASK]} of the learning-rate check; None before."""
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
    """The pilot profile's count rungs (``decisions.levels``)."""
    from .decisions import levels
    return levels(resolve(PILOT_PROFILE))


_JUDGED: dict = {}  # (store, its files' fingerprint) -> the judged families


def confirmatory_families(store=None) -> dict:
    """{"primary", "secondary"} judged on the confirmatory seeds once per state of the store
    (each caller gets copies); NotComplete until every run is stored."""
    path = store or results_dir(STORE)
    key = (str(path), store_fingerprint(path))
    if key not in _JUDGED:
        _JUDGED.clear()
        _JUDGED[key] = both_families(confirmatory_frame(store=store), rungs())
    return {name: frame.copy() for name, frame in _JUDGED[key].items()}


def both_families(frame: pd.DataFrame, r: dict) -> dict:
    """{"primary", "secondary"}: each registered family judged on ``frame``."""
    return {"primary": family(frame, r, PRIMARY), "secondary": family(frame, r, SECONDARY)}


def above_majority(runs: pd.DataFrame, accuracy: str):
    """The runs' cue-free SOP accuracy (``accuracy``: the probe's or the head's) minus
    the majority label's, in points, with its 95% t-interval; None if not all carry it."""
    from ..stats.inference import mean_interval
    if not len(runs) or accuracy not in runs or runs[accuracy].isna().any():
        return None
    return mean_interval(100 * (runs[accuracy] - runs["sop_cuefree_majority"]))


def run_states(store, configs: dict, seeds, listed=()) -> pd.DataFrame:
    """One row per run of ``configs`` at ``seeds``, seed-major: arm, seed, and whether it
    is trained, evaluated, or (its hash in ``listed``) diverged."""
    evaluations, rows = _evaluation_configs(), []
    for seed in seeds:
        for arm, config in configs.items():
            seeded = C.seeded(config, seed)
            run, complete = _stored(store, arm, seeded, evaluations)
            rows.append({"arm": arm, "seed": seed, "trained": run is not None,
                         "evaluated": complete, "diverged": not complete and
                         config_hash(seeded.to_dict()) in listed})
    return pd.DataFrame(rows, columns=["arm", "seed", "trained", "evaluated", "diverged"])


def progress(store=None) -> pd.DataFrame:
    """How many of each condition's seeds are trained and evaluated (no estimate)."""
    store = store or results_dir(STORE)
    states = run_states(store, stored_conditions(store), CONFIRM_SEEDS)
    table = states.groupby("arm")[["trained", "evaluated"]].sum().astype(int)
    table = table.reindex(CONDITIONS, fill_value=0).assign(of=len(CONFIRM_SEEDS))
    return table.rename_axis("condition")


def complete(store=None) -> bool:
    """Whether every confirmatory run is evaluated."""
    table = progress(store)
    return bool((table["evaluated"] == table["of"]).all())

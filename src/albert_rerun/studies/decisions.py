"""The decision machinery every claim shares: ``load_runs`` reads stored runs into a
frame; ``ce_decision``, ``accuracy_decision`` and ``gain_decision`` judge a frame (so
tests can feed synthetic runs); ``gated`` stages each decision by its arms' cross-entropy
(``stats.gate``). The margins were fixed before any result (reasons: the methods page).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from . import conditions as C
from .. import paper
from ..profiles import ResolvedProfile
from ..stats.inference import (Decision, arm_level, bootstrap, correct_matrix, decision,
                                paired_t)


CE = "mlm_loss_at_mask"
T_METHOD = "paired t over seeds"
B_METHOD = "bootstrap over seeds and items, or paired t if wider"


class MissingRuns(LookupError):
    """Stored runs a chapter needs are absent; the message names each one."""


def margins(levels: dict) -> dict:
    """The margins of practical equivalence given the held-out set's rungs."""
    return {"ce": 0.05 * levels["distance"], "small": 0.02 * levels["distance"], "pairs": 2.0,
            "chance": 2 * (paper.TABLE5["nsp"][2] - 50), "downstream": 1.0, "roughness": 0.02,
            "oscillation": 0.25, "angle": 1.0}


def levels(profile: ResolvedProfile) -> dict:
    """The rungs and reads-context line of the profile's common held-out MLM set."""
    from .baselines import reference_levels
    return reference_levels(profile.evaluation)


CONTROL_METRICS = ("sentiment_accuracy", "sentiment_correct", "sentiment_probe_accuracy",
                   "sentiment_probe_correct", "genre_probe_accuracy", "genre_probe_correct",
                   CE, "transition_l2", "transition_angle", "sop_accuracy_probe",
                   "nsp_accuracy_probe", "sop_probe_correct", "nsp_probe_correct")


def _evaluations(store, key: str, configs) -> dict:
    """The metrics of every stored evaluation of run ``key`` under ``configs``."""
    from ..engine.store import stored_eval
    out = {}
    for config in configs:
        stored = stored_eval(store, key, config)
        out.update(stored["metrics"] if stored else {})
    return out


def _control_metrics(store, config, configs) -> dict:
    """The random-init control's CONTROL_METRICS of ``config``, as ``control_<name>``."""
    from ..engine.config import untrained
    from ..engine.store import config_hash
    control = _evaluations(store, config_hash(untrained(config).to_dict()), configs)
    return {f"control_{k}": v for k, v in control.items() if k in CONTROL_METRICS}


def load_runs(profile: ResolvedProfile, conditions: dict, seeds, device: str = "auto",
              train_missing: bool = False, controls: bool = True) -> pd.DataFrame:
    """One row per (condition, seed): pretraining figures, evaluation metrics and the
    random-init control's. Missing runs (or, with ``controls``, unevaluated controls)
    are trained here with ``train_missing``, else MissingRuns names them: no estimate is
    computed before all its seeds are stored."""
    from ..engine.config import untrained
    from ..engine.store import config_hash, stored_eval, stored_pretrain
    from .training import CONTROL_SEEDS
    store, evaluation = profile.results, profile.evaluation
    both = (evaluation, profile.finetune_config())
    seeded = [(name, seed, C.seeded(config, seed)) for name, config in conditions.items()
              for seed in seeds]

    def scored(config) -> bool:
        return stored_eval(store, config_hash(config.to_dict()), evaluation) is not None

    # a run counts as missing until its control is evaluated too: a decision subtracts it
    missing = [(name, seed, config) for name, seed, config in seeded
               if stored_pretrain(store, config) is None or not scored(config)
               or (controls and seed < CONTROL_SEEDS and not scored(untrained(config)))]
    if missing and train_missing:
        _train_and_evaluate(profile, [c for _, _, c in missing], device, controls)
    elif missing:
        names = ", ".join(f"{name!r} seed {seed} ({config_hash(c.to_dict())})"
                          for name, seed, c in missing)
        raise MissingRuns(f"{len(missing)} stored runs missing at profile "
                          f"{profile.name!r}: {names}; train them with `python -m "
                          f"albert_rerun.studies --profile {profile.name}`")
    rows = []
    for name, seed, config in seeded:
        run = stored_pretrain(store, config)
        rows.append({**run_row(store, run, both, {"condition": name, "seed": seed},
                               {"wall_seconds": run["wall_seconds"]}),
                     **(_control_metrics(store, config, both) if controls else {})})
    frame = pd.DataFrame(rows)
    for column in ("sentiment_accuracy", "sentiment_correct", "control_sentiment_accuracy",
                   "control_sentiment_correct"):  # fine-tuned: the base runs only
        if column not in frame:
            frame[column] = np.nan
    return frame


def store_fingerprint(root) -> tuple:
    """Every file under ``root`` as (path, size, mtime), checkpoints and logs left out
    (no decision reads them; a run training beside a build rewrites its checkpoint)."""
    import os
    state = []
    for folder, folders, files in os.walk(root):
        folders[:] = [f for f in folders if f not in ("checkpoints", "logs")]
        for name in files:
            path = os.path.join(folder, name)
            try:
                stat = os.stat(path)
            except FileNotFoundError:  # a temporary file renamed meanwhile
                continue
            state.append((path, stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(state))


def run_row(store, run: dict, evaluations, labels: dict, extra: dict | None = None) -> dict:
    """A stored run's frame row: ``labels``, training figures, ``extra``, evaluation metrics."""
    return {**labels, "hash": run["hash"], **run["metrics"], "curve": run["curve"],
            "machine": _machine(run), "commit": run["provenance"]["git_commit"],
            **(extra or {}), **_evaluations(store, run["hash"], evaluations)}


def _machine(run: dict) -> str:
    """The GPU, else the CPU, a run trained on."""
    machine = run["provenance"]["machine"]
    return machine.get("gpu") or machine.get("cpu", "unknown")


def _train_and_evaluate(profile: ResolvedProfile, configs: list, device: str,
                        controls: bool) -> None:
    """Train and evaluate missing runs and their controls in this process."""
    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import resolve_device, run
    from .training import CONTROL_SEEDS
    store, evaluation = profile.results, profile.evaluation
    target = resolve_device(device)
    todo = list(configs)
    if controls:
        todo += C.controls([c for c in configs if c.seed < CONTROL_SEEDS])
    for config in todo:
        evaluate_stored(store, run(config, store, device, quiet=True), evaluation, target)


def stored_baseline(profile: ResolvedProfile, name: str, function, *arguments) -> dict:
    """A baseline's result from the profile's results/baselines/, computed once."""
    from ..engine.provenance import record
    from ..engine.store import atomic_write_json, config_hash, read_json
    key = config_hash({"name": name, "arguments": [str(a) for a in arguments]})
    path = profile.results / "baselines" / f"{name}-{key}.json"
    stored = read_json(path)
    if stored is None:
        atomic_write_json(path, {"result": function(*arguments), "provenance": record()})
        stored = read_json(path)  # as every later read sees it (JSON: keys sorted)
    return stored["result"]


def available(runs: pd.DataFrame, *conditions) -> bool:
    """Whether every one of ``conditions`` has runs in the frame."""
    return set(conditions) <= set(runs["condition"])


def pair_of(frame: pd.DataFrame, metric: str, a, b):
    """metric(a) and metric(b) over the seeds both conditions have, in seed order."""
    x = frame[frame["condition"] == a].set_index("seed")[metric]
    y = frame[frame["condition"] == b].set_index("seed")[metric]
    seeds = sorted(set(x.index) & set(y.index))
    if not seeds:
        raise ValueError(f"conditions {a!r} and {b!r} share no seed")
    return x.loc[seeds].tolist(), y.loc[seeds].tolist()


def _arms(a, b, arms) -> tuple:
    """The compared conditions: ``arms`` if given, else a and b."""
    return tuple(arms) if arms is not None else tuple(
        dict.fromkeys(x for x in (a, b) if x is not None))


def ce_decision(frame, key, claim, label, a, b, margin, paper_sign, paper_text="",
                metric: str = CE, unit: str | None = None, arms=None) -> Decision:
    """Cross-entropy (or another per-seed metric, in ``unit``) of a minus b, paired t
    over seeds; its arms are a and b unless ``arms``."""
    x, y = pair_of(frame, metric, a, b)
    unit = ("nats" if metric == CE else "") if unit is None else unit
    return replace(decision(key, claim, label, paired_t(x, y, margin), margin, paper_sign,
                            unit, T_METHOD, paper_text), arms=_arms(a, b, arms))


def accuracy_decision(frame, key, claim, label, a, b, correct: str, margin, paper_sign,
                      paper_text="", b_correct: str | None = None,
                      offset: float = 0.0, arms=None) -> Decision:
    """Accuracy points of a minus b on one test set, paired by seed and item
    (``conservative``); ``b`` None compares a with ``offset`` (a fraction)."""
    x = frame[frame["condition"] == a].set_index("seed")[correct]
    if b is None:
        seeds = sorted(x.index)
        A = correct_matrix(x.loc[seeds])
        numbers = conservative(bootstrap(100 * A, None, margin, offset=100 * offset),
                               paired_t(100 * A.mean(1) - 100 * offset, None, margin))
    else:
        y = frame[frame["condition"] == b].set_index("seed")[b_correct or correct]
        seeds = sorted(set(x.index) & set(y.dropna().index))
        if not seeds:
            raise ValueError(f"conditions {a!r} and {b!r} share no seed")
        numbers = conservative(bootstrap(100 * correct_matrix(x.loc[seeds]),
                                         100 * correct_matrix(y.loc[seeds]), margin),
                               paired_t(100 * correct_matrix(x.loc[seeds]).mean(1),
                                        100 * correct_matrix(y.loc[seeds]).mean(1), margin))
    return replace(decision(key, claim, label, numbers, margin, paper_sign, "points",
                            B_METHOD, paper_text), arms=_arms(a, b, arms))


def conservative(boot: dict, t: dict) -> dict:
    """The more cautious of the item-and-seed bootstrap and the seed-level paired t (with
    3 seeds the bootstrap alone is anti-conservative): the wider interval, larger p."""
    if t["n"] < 2:  # one seed: the bootstrap over items stands
        return boot
    return {"estimate": boot["estimate"], "low": min(boot["low"], t["low"]),
            "high": max(boot["high"], t["high"]), "n": boot["n"],
            "p_difference": max(boot["p_difference"], t["p_difference"]),
            "p_equivalence": max(boot["p_equivalence"], t["p_equivalence"])}


def gain_decision(runs: pd.DataFrame, key: str, claim: str, label: str, correct: str,
                  margin: float) -> Decision:
    """Pretrained minus its random-init control on one downstream measure."""
    part = runs.dropna(subset=[correct, f"control_{correct}"])
    frame = pd.concat([part.assign(condition="pretrained"), part.assign(
        condition="random init", **{correct: part[f"control_{correct}"]})])
    return accuracy_decision(frame, key, claim, label, "pretrained", "random init", correct,
                             margin, +1, "pretraining helps (implicit in every Avg)",
                             arms=tuple(dict.fromkeys(part["condition"])))  # the trained arm


def arm_levels(runs: pd.DataFrame, arms, rungs: dict) -> list:
    """Each arm's ``stats.ArmLevel``: its mean cross-entropy at [MASK] against ``rungs``."""
    out = []
    for arm in arms:
        values = runs.loc[runs["condition"] == arm, CE].dropna()
        if values.empty:
            raise ValueError(f"arm {arm!r} has no run with {CE} in the frame")
        out.append(arm_level(str(arm), float(values.mean()), rungs))
    return out


def gated(decisions, runs: pd.DataFrame, rungs: dict, untestable: dict | None = None) -> list:
    """The decisions, each with the gate and stage of its arms (``stats.gate``);
    ``untestable`` ({key: reason}) gates those decisions whatever their arms."""
    untestable = untestable or {}
    return [d.with_gate(arm_levels(runs, d.arms, rungs), untestable.get(d.key, ""))
            for d in decisions]


@dataclass
class Chapter:
    """What a chapter shows: its runs, tables, decisions and glued sentences."""

    claim: str
    runs: pd.DataFrame
    decisions: list
    tables: dict = field(default_factory=dict)
    texts: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)


def unit_digits(unit: str) -> int:
    """The decimals a number in ``unit`` is shown to."""
    return 3 if unit.startswith("nats") else 1 if unit == "points" else 2


def signed(x: float, digits: int) -> str:
    """'+0.132', '-0.013', and '0.000' for what rounds to zero (never '-0.000')."""
    text = f"{x:+.{digits}f}"
    return text[1:] if float(text) == 0 else text


def interval_text(estimate, low, high, unit="") -> str:
    """'+0.012 [-0.003, +0.027]': an estimate and its interval, to ``unit_digits``."""
    digits = unit_digits(unit)
    return f"{signed(estimate, digits)} [{signed(low, digits)}, {signed(high, digits)}]"

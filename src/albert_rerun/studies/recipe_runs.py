"""The recipe search's stored runs (chapter 0), read as engine v1 stored them: the
candidates' and the grid's names, the reference levels of a held-out set, the curves'
crossings and the grid's tables.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import repo_root
from ..profiles import ResolvedProfile
from ..stats.cache import cached

_OWN = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


CE = "mlm_loss_at_mask"

# -- the search as engine v1 defined it, as far as needed to name its results -------------

SEARCH_SHAPE = "H128-L4-B32-T64"  # the candidates' size: H, layers, batch, sequence length
CANDIDATES = {  # name: (optimizer, learning rate, init std, positions, vocabulary, steps)
    "adamw-1e-3": ("adamw", 1e-3, 0.02, "normal", 8000, 600),
    "lamb-5e-3": ("lamb", 5e-3, 0.02, "normal", 8000, 600),
    "adamw-1e-3-init-0.05": ("adamw", 1e-3, 0.05, "normal", 8000, 600),
    "adamw-1e-3-sinusoidal": ("adamw", 1e-3, 0.02, "sinusoidal", 8000, 600),
    "adamw-2e-3-long": ("adamw", 2e-3, 0.02, "normal", 8000, 2400),
    "lamb-5e-3-init-0.05-sinusoidal-long": ("lamb", 5e-3, 0.05, "sinusoidal", 8000, 2400),
    "lamb-5e-3-init-0.05-sinusoidal-v4000-long": ("lamb", 5e-3, 0.05, "sinusoidal", 4000,
                                                  2400),
    "lamb-5e-3-init-0.05-sinusoidal-6000": ("lamb", 5e-3, 0.05, "sinusoidal", 8000, 6000),
}
CHOSEN = "lamb-5e-3-init-0.05-sinusoidal-long"  # the candidate trained on both machines
OPTIMIZER_PAIR = ("adamw-1e-3", "lamb-5e-3")  # one knob apart, equal steps
VOCABULARY_PAIR = (CHOSEN, "lamb-5e-3-init-0.05-sinusoidal-v4000-long")
CPU_BUDGET = 300.0  # seconds of training on this CPU that every grid schedule was sized to
GRID = [  # (shape, optimizer, learning rate), seed 0
    ("H128-L4-B16-T64", "lamb", 5e-3), ("H128-L4-B8-T64", "lamb", 5e-3),
    ("H128-L4-B16-T64", "lamb", 1e-2), ("H128-L4-B8-T64", "lamb", 2.5e-3),
    ("H128-L4-B32-T64", "lamb", 1e-2), ("H128-L2-B16-T64", "lamb", 5e-3),
    ("H64-L4-B16-T64", "lamb", 5e-3), ("H128-L4-B8-T64", "lamb", 1e-2),
    ("H128-L4-B16-T64", "lamb", 2.5e-3), ("H128-L2-B8-T64", "lamb", 5e-3),
    ("H128-L2-B16-T64", "lamb", 1e-2), ("H64-L4-B16-T64", "lamb", 1e-2),
    ("H128-L4-B32-T32", "lamb", 5e-3), ("H128-L4-B16-T32", "lamb", 5e-3),
    ("H128-L4-B32-T64", "lamb", 5e-3), ("H256-L4-B8-T64", "lamb", 5e-3),
    ("H128-L4-B16-T64", "adamw", 2e-3), ("H64-L4-B32-T64", "lamb", 5e-3),
    ("H128-L2-B8-T64", "lamb", 1e-2), ("H128-L4-B8-T64", "adamw", 1e-3),
]
FOLLOW_UP = [  # the second round: (shape, optimizer, learning rate, seed)
    ("H128-L2-B16-T64", "lamb", 1e-2, 1), ("H128-L2-B16-T64", "lamb", 1e-2, 2),
    ("H128-L2-B16-T64", "lamb", 5e-3, 1), ("H128-L2-B16-T64", "lamb", 5e-3, 2),
    ("H64-L4-B16-T64", "lamb", 5e-3, 1), ("H64-L4-B16-T64", "lamb", 5e-3, 2),
    ("H128-L2-B32-T64", "lamb", 1e-2, 0), ("H128-L2-B16-T64", "lamb", 2e-2, 0),
    ("H64-L2-B16-T64", "lamb", 5e-3, 0), ("H64-L4-B8-T64", "lamb", 5e-3, 0),
    ("H128-L2-B16-T64", "adamw", 2e-3, 0),
]
# what shapes a run's training, in both engines' schemas: a profile trains a grid
# candidate when these agree (evaluation sizes and curve spacing may differ)
TRAINING_FIELDS = ("model", "objective", "max_seq_length", "batch_size", "max_predictions",
                   "optimizer", "learning_rate", "warmup_steps", "max_steps", "weight_decay",
                   "train_documents")


def results_root() -> Path:
    """The committed data/results/ of this checkout (never $ALBERT_RERUN_RESULTS, which
    points tests and smoke runs at a temporary store)."""
    return repo_root() / "data" / "results"


def stored_runs(folder: Path) -> list:
    """The stored runs in ``folder``: its JSON files holding a config, metrics and a
    curve, in file-name order (calibration and throughput records are skipped)."""
    runs = []
    for path in sorted(Path(folder).glob("*.json")):
        result = json.loads(path.read_text())
        if {"config", "metrics", "curve"} <= set(result):
            runs.append(result)
    return runs


def shape_of(config: dict) -> str:
    m = config["model"]
    return (f"H{m['hidden_size']}-L{m['num_hidden_layers']}-B{config['batch_size']}"
            f"-T{config['max_seq_length']}")


def grid_name(shape: str, optimizer: str, learning_rate: float, seed: int = 0) -> str:
    name = f"{shape}-{optimizer}-{learning_rate:g}"
    return f"{name}-seed{seed}" if seed else name


def family(name: str) -> str:
    """A grid run's candidate: its name without the seed."""
    return re.sub(r"-seed\d+$", "", name)


def run_name(config: dict) -> str:
    """A stored run's name in the search: its candidate's, else its grid entry's."""
    m = config["model"]
    key = (config["optimizer"], config["learning_rate"], m["initializer_range"],
           m["position_init"], m["vocab_size"], config["max_steps"])
    if shape_of(config) == SEARCH_SHAPE:
        for name, candidate in CANDIDATES.items():
            if key == candidate:
                return name
    return grid_name(shape_of(config), config["optimizer"], config["learning_rate"],
                     config["seed"])


def planned_grid() -> list:
    """The names of every grid run the search planned, in its order."""
    return [grid_name(*entry) for entry in GRID + FOLLOW_UP]


def diverged_runs(logs) -> dict:
    """{run name: log file} of the runs a session log reports FAILED with a non-finite
    loss (a diverged run stores no result)."""
    found = {}
    for log in logs:
        for line in Path(log).read_text().splitlines():
            failed = re.match(r"^(\S+): FAILED (.*)$", line)
            if failed and ("nan" in failed.group(2).lower() or "diverged" in failed.group(2)):
                found[failed.group(1)] = Path(log).name
    return found


# -- reference levels of a held-out set ---------------------------------------------------

def context_free(input_ids, mlm_labels, mask_id: int) -> dict:
    """What a predictor that reads no context scores on a masked set: the targets it gets
    by copying the token shown (those the 80/10/10 rule leaves unchanged, and random
    replacements that happen to be right) or, where [MASK] is shown, by guessing the
    set's most frequent target (``plateau``); the share of that piece among all targets
    (``unigram``) and among those shown as [MASK] (``top_share``)."""
    ids, labels = np.asarray(input_ids), np.asarray(mlm_labels)
    selected = labels != -100
    targets, shown = labels[selected], ids[selected]
    at_mask = shown == mask_id
    top = int(np.bincount(targets[at_mask]).argmax())
    return {"plateau": float(((shown == targets) | (at_mask & (targets == top))).mean()),
            "unigram": float((targets == top).mean()),
            "top_share": float((targets[at_mask] == top).mean()), "top": top,
            "all_targets": int(len(targets))}


def legacy_reference_levels(config: dict) -> dict:
    """The reference levels of the held-out MLM set an engine-v1 run (its stored config
    dict) was scored on, rebuilt by v1's definition (train.HeldOut at be70d44): the first
    ``eval_examples`` pairs of the run's own objective, built from the validation split at
    seed 12345 and masked by the numpy reference at seed 54321, up to ``max_predictions``
    a sequence. The current data modules build SOP and NSP pairs as v1 did; v1's 'none'
    (one segment, no pair) is not rebuilt. Context-free levels (``context_free``), the
    count-based rungs (``baselines.mask_rungs``) and ``reads_context``, the cross-entropy
    two standard errors below the unigram rung. Computed once per set, kept on disk."""
    if config["objective"] == "none":
        raise ValueError("engine v1's 'none' held-out set (one segment a sequence) is not "
                         "what the current create_instances builds for 'none'")
    from .baselines import CODE_DIGEST
    return _legacy_levels(config["model"]["vocab_size"], config["objective"],
                          config["max_seq_length"], config["max_predictions"],
                          config["eval_examples"], CODE_DIGEST + _OWN)


@functools.lru_cache(maxsize=None)
@cached
def _legacy_levels(vocab: int, objective: str, length: int, predictions: int,
                   examples: int, source: str) -> dict:
    """``source``: the digests of this module and of the rungs' (``baselines``), which
    the disk cache (``stats.cache``) does not see."""
    from ..data.corpus import create_instances, tokenize_split
    from ..data.masking import MaskingConfig, mask_batch, tokenizer_arrays
    from ..data.tokenizer import Tokenizer
    from .baselines import mask_rungs

    tokenizer = Tokenizer(vocab_size=vocab)
    instances = create_instances(tokenize_split("validation", tokenizer), tokenizer,
                                 objective, length, seed=12345, limit=examples)
    rows = np.arange(min(examples, len(instances)))
    ids, labels = mask_batch(instances, rows, tokenizer_arrays(tokenizer),
                             MaskingConfig(max_predictions=predictions),
                             np.random.default_rng(54321))
    rungs = mask_rungs(ids, labels, tokenize_split("train", tokenizer).tokens,
                       tokenizer.vocab_size, tokenizer.mask_id)
    return {**context_free(ids, labels, tokenizer.mask_id), "rungs": rungs,
            "sequences": len(rows), "objective": objective,
            "reads_context": rungs["unigram_loss_at_mask"] - 2 * rungs["unigram_loss_se"]}


def common_levels(profile: ResolvedProfile) -> dict:
    """The levels of the claims' common held-out MLM set of ``profile`` (in-order pairs,
    the same for every objective): baselines.reference_levels with the context-free
    levels beside them."""
    from ..engine.evaluate import mlm_set
    from .baselines import reference_levels

    e = profile.evaluation
    data = mlm_set(e.max_seq_length, e.max_predictions, e.mlm_sequences, e.vocab_size)
    return {**context_free(data["input_ids"].numpy(), data["mlm_labels"].numpy(),
                           data["mask_id"]),
            **reference_levels(e), "sequences": len(data["input_ids"]), "objective": "none"}


# -- curves ---------------------------------------------------------------------------------

def crossing(curve: list, level: float, metric: str = CE, below: bool = True):
    """The first curve point whose ``metric`` is below ``level`` (above it, with
    ``below=False``), or None; points that do not record the metric are skipped."""
    for point in curve:
        value = point.get(metric)
        if value is not None and (value < level if below else value > level):
            return point
    return None


def curve_difference(a: list, b: list, metric: str = CE) -> float:
    """The largest absolute difference of two curves at the steps both scored."""
    x, y = ({p["step"]: p[metric] for p in curve if metric in p} for curve in (a, b))
    common = sorted(set(x) & set(y))
    if not common:
        raise ValueError(f"the two curves share no step that records {metric}")
    return float(max(abs(x[s] - y[s]) for s in common))


def _seconds(point) -> float:
    return np.nan if point is None else float(point["seconds"])


def candidate_table(runs: dict) -> pd.DataFrame:
    """One row per candidate ({name: result}), each against its own held-out set's
    levels: final metrics and when its curve crosses each level (seconds of training)."""
    rows = []
    for name, result in runs.items():
        own, curve, m = legacy_reference_levels(result["config"]), result["curve"], \
            result["metrics"]
        plateau = crossing(curve, own["plateau"], "mlm_accuracy", below=False)
        rows.append({
            "candidate": name, "vocabulary": result["config"]["model"]["vocab_size"],
            "steps": m["steps"], "train seconds": m["train_seconds"],
            "tokens/s": m["tokens_per_second"], "final MLM acc %": 100 * m["mlm_accuracy"],
            "at [MASK] %": 100 * m["mlm_accuracy_at_mask"] if "mlm_accuracy_at_mask" in m
            else np.nan,
            "left unigram level at s": _seconds(crossing(curve, 1.5 * own["unigram"],
                                                         "mlm_accuracy", below=False)),
            "left plateau at step": np.nan if plateau is None else plateau["step"],
            "left plateau at s": _seconds(plateau),
            "loss at [MASK]": m.get(CE, np.nan),
            "reads context at s": _seconds(crossing(curve, own["reads_context"])),
            "passes bigram loss at s": _seconds(crossing(
                curve, own["rungs"]["bigram_loss_at_mask"]))})
    return pd.DataFrame(rows).set_index("candidate")


def rounded(table: pd.DataFrame) -> pd.DataFrame:
    """A table for display: seconds and counts as integers, the rest to 1 to 3 decimals."""
    out = table.copy()
    for column in out.columns:
        if column.endswith((" s", "seconds", "tokens/s", "step")):
            out[column] = out[column].round().astype("Int64")
        elif out[column].dtype.kind == "f":
            out[column] = out[column].round(3 if "loss" in column else 1)
    return out


# -- the grid -------------------------------------------------------------------------------

def grid_frame(device_runs: dict, step_seconds: dict) -> pd.DataFrame:
    """One row per grid run ({name: result}): when its cross-entropy at [MASK] goes below
    its own held-out set's reads-context threshold, in steps and in this CPU's minutes
    (step x this CPU's measured seconds per step of its shape)."""
    rows = []
    for name, result in device_runs.items():
        config = result["config"]
        level = legacy_reference_levels(config)["reads_context"]
        hit = crossing(result["curve"], level)
        seconds = step_seconds[shape_of(config)]
        rows.append({"candidate": family(name), "seed": config["seed"],
                     "layers": config["model"]["num_hidden_layers"],
                     "schedule steps": config["max_steps"], "s/step here": seconds,
                     "reads context at step": None if hit is None else hit["step"],
                     "at minute here": np.nan if hit is None else hit["step"] * seconds / 60,
                     "loss at [MASK]": result["metrics"][CE], "threshold": level})
    return pd.DataFrame(rows)


def minute_interval(minutes: pd.Series) -> str | None:
    """The 95% t-interval of a candidate's crossing minute over seeds, where every seed
    crossed and there are at least two."""
    from ..stats.inference import mean_interval
    if len(minutes) < 2 or minutes.isna().any():
        return None
    i = mean_interval(minutes.to_numpy())
    return f"{i.low:.1f} to {i.high:.1f}"


def grid_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per grid candidate: its seeds, how many read context within the budget,
    the mean and latest crossing minute, its mean final loss; fastest first."""
    grouped = frame.groupby("candidate", sort=False)
    table = grouped.agg(
        seeds=("seed", "count"), layers=("layers", "first"), steps=("schedule steps", "first"),
        read=("reads context at step", lambda s: int(s.notna().sum())),
        minute=("at minute here", "mean"), latest=("at minute here", "max"),
        loss=("loss at [MASK]", "mean"), threshold=("threshold", "first"))
    table["reads within budget"] = table["read"] == table["seeds"]
    table["95% interval (minutes)"] = grouped["at minute here"].agg(minute_interval)
    return table.sort_values("minute", kind="stable")


# -- the whole search -------------------------------------------------------------------------

@dataclass
class Search:
    """The stored search and what the chapter shows of it."""

    candidates: dict  # name: result (recipe/, this CPU)
    device: dict  # name: result (recipe-grid/cuda/)
    confirmations: dict  # name: result (recipe-grid/cpu/)
    step_seconds: dict  # shape: this CPU's seconds per training step
    diverged: dict  # name: session log
    transfer: tuple | None  # (the v1 cpu base run again here, the stored v1 run)
    levels: dict  # title: levels of a held-out set
    grid: pd.DataFrame | None = None  # one row per grid candidate (grid_table)
    tables: dict = field(default_factory=dict)  # for display
    values: dict = field(default_factory=dict)  # numbers and short phrases, glued

    def summary(self) -> dict:
        """How much of the search is stored, as counts."""
        grid = [n for n in self.device if n in planned_grid()]
        return {"candidates": f"{len(self.candidates)} of {len(CANDIDATES)}",
                "grid runs": f"{len(grid)} of {len(planned_grid())}",
                "diverged": len(self.diverged), "again on this CPU": len(self.confirmations),
                "transfer check": bool(self.transfer)}


# the held-out sets' names as the page shows them; the engines behind them: the changelog
RECIPE_SET = "recipe search"
CPU_V1_SET = "cpu-v1 runs (search's engine)"
COMMON_SET = "claims' common set (cpu profile)"

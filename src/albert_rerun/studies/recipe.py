"""The recipe search behind the profiles, read from its stored results.

A naive post-LN tiny ALBERT stays on the unigram plateau for many minutes on a 2-core
CPU. Before any claim was sized, a search measured which knobs leave it fastest: eight
candidates at one size (optimizer, learning rate, initialization, positions, vocabulary,
schedule), then a grid of shapes (batch, width, depth, sequence length) on schedules
sized to five minutes of this CPU, trained side by side on a lent GPU, with checks
between the two machines. It chose the recipe the cpu profile trains.

The search ran with engine v1 (commit be70d44 and its RunConfig schema; ``make recipe``
in a checkout of that commit reruns it). Its results are historical facts: this module
finds them by scanning the stored JSON files, whose ``config`` field describes each run
(no hash is recomputed with today's schema), and computes what the recipe chapter shows.
The reference levels of the held-out sets those runs were scored on are rebuilt by
engine v1's definition (``legacy_reference_levels``); the claims' common held-out set
has its own (``common_levels``).

The stores, under data/results/: ``recipe/`` (the candidates, on this CPU),
``recipe-grid/cuda/`` (the grid and the chosen candidate, on an H200, with the session
logs), ``recipe-grid/cpu/`` (two grid candidates again on this CPU),
``recipe-grid/step-seconds.json`` (this CPU's seconds per step of every shape),
``transfer/cpu/`` (engine v1's cpu base run, seed 0, again on this CPU) and ``cpu-v1/``
(the 48 cpu runs engine v1 trained with the chosen recipe as their base; no claim reads
them).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..paths import repo_root

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


_LEGACY: dict = {}


def legacy_reference_levels(config: dict) -> dict:
    """The reference levels of the held-out MLM set an engine-v1 run (its stored config
    dict) was scored on, rebuilt by v1's definition (train.HeldOut at be70d44): the first
    ``eval_examples`` pairs of the run's own objective, built from the validation split at
    seed 12345 and masked by the numpy reference at seed 54321, up to ``max_predictions``
    a sequence. The current data modules build SOP and NSP pairs as v1 did; v1's 'none'
    (one segment, no pair) is not rebuilt. Context-free levels (``context_free``), the
    count-based rungs (``baselines.mask_rungs``) and ``reads_context``, the cross-entropy
    two standard errors below the unigram rung. Computed once per set in a process."""
    from ..data.corpus import create_instances, tokenize_split
    from ..data.masking import MaskingConfig, mask_batch, tokenizer_arrays
    from ..data.tokenizer import Tokenizer
    from .baselines import mask_rungs

    vocab, objective = config["model"]["vocab_size"], config["objective"]
    key = (vocab, objective, config["max_seq_length"], config["max_predictions"],
           config["eval_examples"])
    if objective == "none":
        raise ValueError("engine v1's 'none' held-out set (one segment a sequence) is not "
                         "what the current create_instances builds for 'none'")
    if key not in _LEGACY:
        tokenizer = Tokenizer(vocab_size=vocab)
        instances = create_instances(tokenize_split("validation", tokenizer), tokenizer,
                                     objective, config["max_seq_length"], seed=12345,
                                     limit=config["eval_examples"])
        rows = np.arange(min(config["eval_examples"], len(instances)))
        ids, labels = mask_batch(instances, rows, tokenizer_arrays(tokenizer),
                                 MaskingConfig(max_predictions=config["max_predictions"]),
                                 np.random.default_rng(54321))
        rungs = mask_rungs(ids, labels, tokenize_split("train", tokenizer).tokens,
                           tokenizer.vocab_size, tokenizer.mask_id)
        _LEGACY[key] = {**context_free(ids, labels, tokenizer.mask_id), "rungs": rungs,
                        "sequences": len(rows), "objective": objective,
                        "reads_context": rungs["unigram_loss_at_mask"]
                        - 2 * rungs["unigram_loss_se"]}
    return _LEGACY[key]


def common_levels(profile: str = "cpu") -> dict:
    """The levels of the claims' common held-out MLM set of ``profile`` (in-order pairs,
    the same for every objective): baselines.reference_levels with the context-free
    levels beside them."""
    from ..engine.evaluate import mlm_set
    from ..profiles import eval_config
    from .baselines import reference_levels

    e = eval_config(profile)
    data = mlm_set(e.max_seq_length, e.max_predictions, e.mlm_sequences, e.vocab_size)
    return {**context_free(data["input_ids"].numpy(), data["mlm_labels"].numpy(),
                           data["mask_id"]),
            **reference_levels(e), "sequences": len(data["input_ids"]), "objective": "none"}


def levels_table(sets: dict) -> pd.DataFrame:
    """The levels of each held-out set ({column title: levels}), one row per level."""
    kinds = {"sop": "SOP pairs", "nsp": "NSP pairs", "none": "in-order pairs"}
    rows = {
        "held-out sequences": lambda v: f"{v['sequences']:,} {kinds[v['objective']]}",
        "targets (of them shown as [MASK])": lambda v: (f"{v['all_targets']:,} "
                                                        f"({v['rungs']['targets']:,})"),
        "context-free accuracy, all targets %": lambda v: f"{100 * v['plateau']:.1f}",
        "unigram accuracy at [MASK] %": lambda v: f"{100 * v['rungs']['unigram_at_mask']:.1f}",
        "left-bigram accuracy at [MASK] %": lambda v: f"{100 * v['rungs']['bigram_at_mask']:.1f}",
        "unigram cross-entropy at [MASK] (SE)": lambda v: (
            f"{v['rungs']['unigram_loss_at_mask']:.3f} ({v['rungs']['unigram_loss_se']:.3f})"),
        "left-bigram cross-entropy at [MASK]": lambda v: (
            f"{v['rungs']['bigram_loss_at_mask']:.3f}"),
        "reads-context threshold (nats)": lambda v: f"{v['reads_context']:.3f}",
    }
    return pd.DataFrame({title: {row: get(levels) for row, get in rows.items()}
                         for title, levels in sets.items()})


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


def grid_factors(table: pd.DataFrame) -> pd.DataFrame:
    """For each value of each grid factor (width, layers, batch, sequence length): the
    candidates tried and those that read context within the budget on every seed."""
    parts = table.index.str.extract(r"^H(\d+)-L(\d+)-B(\d+)-T(\d+)-(\w+)-").astype(
        {k: int for k in range(4)})
    parts.columns = ["width H", "layers", "batch", "sequence length", "optimizer"]
    parts["reads"] = table["reads within budget"].to_numpy()
    rows = []
    for factor in parts.columns[:-1]:
        for value, group in parts.groupby(factor):
            rows.append({"factor": factor, "value": value, "candidates": len(group),
                         "read context within the budget": int(group["reads"].sum())})
    return pd.DataFrame(rows).set_index(["factor", "value"])


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
    texts: dict = field(default_factory=dict)

    def summary(self) -> str:
        grid = [n for n in self.device if n in planned_grid()]
        return (f"{len(self.candidates)} of {len(CANDIDATES)} candidates; {len(grid)} of "
                f"{len(planned_grid())} planned grid runs stored, {len(self.diverged)} "
                f"diverged; {len(self.confirmations)} grid runs again on this CPU; "
                f"transfer check {'stored' if self.transfer else 'missing'}")


# the held-out sets' names as the page shows them; the engines behind them: the changelog
RECIPE_SET = "recipe search"
CPU_V1_SET = "cpu-v1 runs (search's engine)"
COMMON_SET = "claims' common set (cpu profile)"


def load(root: Path | None = None, profile_config=None) -> Search:
    """Read every stored result of the search under ``root`` (default: the committed
    data/results/) and compute the chapter's tables and sentences; ``profile_config``
    (default: the cpu profile's base PretrainConfig) is checked against the grid."""
    from ..profiles import pretraining_config
    root = Path(root or results_root())
    order = {name: k for k, name in enumerate([*CANDIDATES, *planned_grid()])}
    named = {}
    for folder in ("recipe", "recipe-grid/cuda", "recipe-grid/cpu"):
        runs = ((run_name(r["config"]), r) for r in stored_runs(root / folder))
        named[folder] = dict(sorted(runs, key=lambda item: order.get(item[0], len(order))))
    if CHOSEN not in named["recipe"]:
        raise LookupError(f"the chosen candidate {CHOSEN} is not stored in {root / 'recipe'}")
    timing = json.loads((root / "recipe-grid" / "step-seconds.json").read_text())
    replicas, book = stored_runs(root / "transfer" / "cpu"), stored_runs(root / "cpu-v1")
    transfer = next(((r, s) for r in replicas for s in book if s["config"] == r["config"]),
                    None)
    levels = {RECIPE_SET: legacy_reference_levels(named["recipe"][CHOSEN]["config"])}
    if transfer:
        levels[CPU_V1_SET] = legacy_reference_levels(transfer[1]["config"])
    levels[COMMON_SET] = common_levels("cpu")
    search = Search(named["recipe"], named["recipe-grid/cuda"], named["recipe-grid/cpu"],
                    timing["step_seconds"],
                    diverged_runs(sorted((root / "recipe-grid" / "cuda").glob("session-*.log"))),
                    transfer, levels)
    search.texts["grid_threads"] = timing["threads"]
    search.texts["v1_book_runs"] = len(book)
    describe(search, profile_config or pretraining_config("cpu"))
    return search


def describe(search: Search, profile_config) -> None:
    """Fill ``search.tables`` and ``search.texts`` (the chapter's glued values)."""
    search.texts.update(level_texts(search.levels))
    table = candidate_table(search.candidates)
    search.tables["candidates"] = rounded(table)
    vocabulary = profile_config.model.vocab_size
    search.texts.update(candidate_texts(search.candidates, table, vocabulary))
    search.tables["vocabulary"], search.texts["vocabulary_verdict"] = vocabulary_comparison(
        search.candidates, table, vocabulary)
    grid = [n for n in planned_grid() if n in search.device]
    search.grid = grid_table(grid_frame({n: search.device[n] for n in grid},
                                        search.step_seconds))
    search.tables["grid"] = search.grid.rename(columns={
        "read": "seeds that read context", "minute": "reads context at minute (mean)",
        "latest": "latest seed's minute", "loss": "final loss at [MASK] (mean)"}).round(3)
    search.tables["grid_factors"] = grid_factors(search.grid)
    search.texts.update(grid_texts(search, search.grid, profile_config))


def level_texts(levels: dict) -> dict:
    """The glued levels: the search's set, the claims' common set, the cpu-v1 runs'."""
    recipe, common = levels[RECIPE_SET], levels[COMMON_SET]
    texts = {"plateau_accuracy": 100 * recipe["plateau"],
             "top_piece_share": 100 * recipe["top_share"],
             "unigram_accuracy": 100 * recipe["unigram"],
             "unigram_exit": 150 * recipe["unigram"],
             "rung_bigram": 100 * recipe["rungs"]["bigram_at_mask"],
             "rung_left_visible": 100 * recipe["rungs"]["left_visible"],
             "rung_unigram_loss": recipe["rungs"]["unigram_loss_at_mask"],
             "rung_bigram_loss": recipe["rungs"]["bigram_loss_at_mask"],
             "rung_loss_se": recipe["rungs"]["unigram_loss_se"],
             "reads_context_loss": recipe["reads_context"],
             "recipe_sequences": recipe["sequences"],
             "common_plateau_accuracy": 100 * common["plateau"],
             "common_rung_unigram": 100 * common["rungs"]["unigram_at_mask"],
             "common_rung_bigram": 100 * common["rungs"]["bigram_at_mask"],
             "common_rung_unigram_loss": common["rungs"]["unigram_loss_at_mask"],
             "common_rung_bigram_loss": common["rungs"]["bigram_loss_at_mask"],
             "common_reads_context_loss": common["reads_context"],
             "common_sequences": common["sequences"]}
    if CPU_V1_SET in levels:
        texts["v1_book_plateau_accuracy"] = 100 * levels[CPU_V1_SET]["plateau"]
        texts["v1_book_sequences"] = levels[CPU_V1_SET]["sequences"]
    return texts


def candidate_texts(runs: dict, table: pd.DataFrame, vocabulary: int) -> dict:
    """The candidates' sentences (``vocabulary``: the profiles'): which leaves the plateau
    first, the optimizer, the best run, and when each long run reads context."""
    config = runs[CHOSEN]["config"]
    m = config["model"]
    texts = {"search_size": (f"H = {m['hidden_size']}, {m['num_hidden_layers']} shared layers, "
                             f"E = {m['embedding_size']}, batch {config['batch_size']} x "
                             f"{config['max_seq_length']}"),
             "candidates_measured": f"{len(runs)} of {len(CANDIDATES)}"}
    left = table.dropna(subset=["left plateau at s"])
    if len(left):
        best = left["left plateau at s"].idxmin()
        own = legacy_reference_levels(runs[best]["config"])
        step = int(left.loc[best, "left plateau at step"])
        crossing_text = (f"is the first to cross the context-free line, after {step:,} steps "
                         f"({left.loc[best, 'left plateau at s'] / 60:.1f} minutes)")
        point = next(p for p in runs[best]["curve"] if p["step"] == step)
        margin = point["mlm_accuracy"] - own["plateau"]
        noise = np.sqrt(own["plateau"] * (1 - own["plateau"]) / own["all_targets"])
        if margin < 2 * noise:
            crossing_text += (f", by {100 * margin:.2f} points, within two standard errors "
                              f"({100 * noise:.1f} points each) of its {own['all_targets']:,} "
                              f"targets")
        texts["recipe_verdict"] = f"{best} leaves the plateau first"
    else:
        best = table["final MLM acc %"].idxmax()
        crossing_text = "does not cross the context-free line in any run"
        texts["recipe_verdict"] = f"no candidate left the plateau; best curve: {best}"
    uses = "the profiles use its optimizer, learning rate, initialization and positions"
    if runs[best]["config"]["model"]["vocab_size"] != vocabulary:
        uses += (f" with {vocabulary:,} pieces, the vocabulary the wider grid was measured "
                 f"with")
    texts["recipe_sentence"] = f"By the accuracy rule, {best} {crossing_text}; {uses}."
    fastest = table["left unigram level at s"].idxmin()
    texts["unigram_fastest"] = fastest
    texts["unigram_fastest_s"] = round(float(table.loc[fastest, "left unigram level at s"]))
    a, b = OPTIMIZER_PAIR
    if {a, b} <= set(table.index):
        texts["optimizer_choice"] = ("AdamW" if table.loc[a, "final MLM acc %"]
                                     > table.loc[b, "final MLM acc %"] else "LAMB")
    else:
        texts["optimizer_choice"] = "not decided (a candidate of the pair is missing)"
    same = table[table["vocabulary"] == vocabulary]
    best_run = same["final MLM acc %"].idxmax()
    best_metrics = runs[best_run]["metrics"]
    texts.update(best_run=best_run, best_steps=best_metrics["steps"],
                 best_minutes=best_metrics["train_seconds"] / 60,
                 best_accuracy=100 * best_metrics["mlm_accuracy"],
                 best_at_mask=float(same["at [MASK] %"].max()))
    reached = [n for n, r in runs.items()
               if crossing(r["curve"], legacy_reference_levels(r["config"])["rungs"]
                           ["bigram_at_mask"], "mlm_accuracy_at_mask", below=False)]
    texts["bigram_reading"] = (f"Past the bigram rung: {', '.join(reached)}." if reached
                               else "No run reaches the bigram rung.")
    texts["longest_reading"] = longest_reading(runs)
    texts["loss_reading"] = loss_reading(runs)
    texts["context_verdict"] = context_verdict(table)
    return texts


def vocabulary_comparison(runs: dict, table: pd.DataFrame, vocabulary: int):
    """The chosen recipe at two vocabulary sizes, each against its own rungs: a table and
    its verdict (sooner to read context, else more of its unigram-to-bigram gap closed,
    with whether one seed can tell that apart)."""
    pair = [n for n in VOCABULARY_PAIR if n in runs and CE in runs[n]["metrics"]]
    rows = []
    for name in pair:
        own, m = legacy_reference_levels(runs[name]["config"]), runs[name]["metrics"]
        r = own["rungs"]
        rows.append({"vocabulary": runs[name]["config"]["model"]["vocab_size"],
                     "candidate": name, "steps": m["steps"],
                     "tokens/s": round(m["tokens_per_second"]),
                     "unigram loss": r["unigram_loss_at_mask"],
                     "left-bigram loss": r["bigram_loss_at_mask"], "loss at [MASK]": m[CE],
                     "gap closed %": 100 * (r["unigram_loss_at_mask"] - m[CE])
                     / (r["unigram_loss_at_mask"] - r["bigram_loss_at_mask"]),
                     "gap SE %": 100 * r["unigram_loss_se"]
                     / (r["unigram_loss_at_mask"] - r["bigram_loss_at_mask"]),
                     "at [MASK] %": 100 * m["mlm_accuracy_at_mask"],
                     "unigram rung %": 100 * r["unigram_at_mask"],
                     "bigram rung %": 100 * r["bigram_at_mask"],
                     "reads context at s": table.loc[name, "reads context at s"]})
    if len(rows) < 2:
        return pd.DataFrame(rows), "the vocabulary candidate is not measured yet"
    frame = pd.DataFrame(rows).set_index("vocabulary")
    large, small = frame.index.max(), frame.index.min()
    read, gaps = frame["reads context at s"], frame["gap closed %"]
    if read.notna().any() and read.nunique(dropna=False) > 1:
        winner = read.idxmin() if read.notna().all() else read.dropna().index[0]
        how = f"reads context sooner ({read[winner] / 60:.1f} minutes)"
    else:
        winner = gaps.idxmax()
        how = "closes more of its gap" + (" (neither reads context)" if read.isna().all()
                                            else "")
    verdict = (f"with {small:,} pieces the recipe closes {gaps[small]:.0f}% of its "
               f"unigram-to-bigram gap in {frame.loc[small, 'steps']:,} steps, against "
               f"{gaps[large]:.0f}% with {large:,}; the {winner:,}-piece vocabulary {how}")
    if read.isna().all():  # compared by the gap: is the difference more than noise?
        noise = float(np.hypot(*frame["gap SE %"]))
        difference = gaps[small] - gaps[large]
        if abs(difference) < 2 * noise:
            verdict += (f", but by {abs(difference):.1f} points of gap, within two standard "
                        f"errors of the difference (one is {noise:.0f} points, from the "
                        f"sampling noise of a mean loss over the held-out targets): one seed "
                        f"cannot tell them apart")
    if winner != vocabulary:  # a deviation from the rule above, said as one
        verdict += (f". Deviation from the rule: the rule picks the {winner:,}-piece "
                    f"vocabulary, but the profiles keep {vocabulary:,} pieces. The reason: "
                    f"the wider grid below and every claim's runs are trained with "
                    f"{vocabulary:,} pieces, and following the rule would retrain all of "
                    f"them; {vocabulary:,} is also nearer the "
                    f"paper's 30,000. The claims compare conditions at one vocabulary, so "
                    f"the deviation moves every arm of a comparison together, not one "
                    f"against another")
    return rounded(frame.drop(columns="gap SE %")), verdict


def longest_reading(runs: dict) -> str:
    """The longest schedule's accuracy at [MASK] halfway and at its end."""
    longest = max(runs, key=lambda n: runs[n]["metrics"]["steps"])
    points = [p for p in runs[longest]["curve"] if "mlm_accuracy_at_mask" in p]
    if len(points) < 2:
        return ""
    half, last = points[len(points) // 2 - 1], points[-1]
    return (f"The longest schedule, {longest}, scores {100 * half['mlm_accuracy_at_mask']:.1f}% "
            f"at [MASK] after {half['step']:,} steps and "
            f"{100 * last['mlm_accuracy_at_mask']:.1f}% after {last['step']:,}.")


def loss_reading(runs: dict) -> str:
    """When each long run's cross-entropy at [MASK] reads context and passes the left
    bigram, in words."""
    words = []
    for name, result in runs.items():
        if CE not in result["metrics"] or result["metrics"]["steps"] < 2400:
            continue
        own, curve = legacy_reference_levels(result["config"]), result["curve"]
        hits = [crossing(curve, own["reads_context"]),
                crossing(curve, own["rungs"]["bigram_loss_at_mask"])]
        if hits == [None, None]:
            joined = "neither reads context nor passes the left-bigram rung"
        else:
            joined = " and ".join(
                f"{label} after {hit['step']:,} steps ({hit['seconds'] / 60:.1f} minutes)"
                if hit else f"never {label}"
                for label, hit in zip(("reads context", "passes the left-bigram rung"), hits))
        last = curve[-1]
        words.append(f"{name} {joined} ({last[CE]:.3f} nats after {last['step']:,} steps)")
    if not words:
        return "No stored run records its cross-entropy at [MASK] yet."
    return "In cross-entropy at [MASK], " + "; ".join(words) + "."


def context_verdict(table: pd.DataFrame) -> str:
    readers = table["reads context at s"].dropna()
    if not len(readers):
        return ("By this rule no run reads context, however long its schedule: a post-LN "
                "ALBERT of this size learns to copy the visible tokens and nothing measurable "
                "from context.")
    text = (f"The earliest any run reads context by this rule is {readers.idxmin()}, after "
            f"{readers.min() / 60:.1f} minutes of training.")
    if readers.min() > CPU_BUDGET:
        text += (f" In its first {CPU_BUDGET / 60:.0f} minutes, a post-LN ALBERT of this size "
                 f"learns to copy the visible tokens and nothing measurable from context.")
    return text


def grid_texts(search: Search, table: pd.DataFrame, profile_config) -> dict:
    """The grid's sentences: which candidates read context within the budget, whether
    the profile trains the fastest four-layer one, and the checks between machines."""
    layers = profile_config.model.num_hidden_layers
    search_width = int(SEARCH_SHAPE.split("-")[0][1:])
    readers = table[table["reads within budget"]]
    deep = readers[readers["layers"] == layers]
    texts = {"grid_budget_minutes": CPU_BUDGET / 60,
             "grid_runs": f"{int(table['seeds'].sum())} runs of {len(table)} candidates"}
    if len(readers):
        fastest = readers["minute"].idxmin()
        n = readers.loc[fastest, "seeds"]
        verdict = (f"{len(readers)} of {len(table)} candidates read context within the budget "
                   f"on every seed; the fastest is {fastest} (at an estimated "
                   f"{readers.loc[fastest, 'minute']:.1f} minutes here, "
                   + ("one seed)" if n == 1 else f"on average over {n} seeds)"))
        if len(deep):
            d = deep.loc[deep["minute"].idxmin()]
            verdict += (f", and the fastest with {layers} layers is {d.name} "
                        f"({d['minute']:.1f} estimated minutes on average over {d['seeds']} "
                        f"seeds, 95% interval {d['95% interval (minutes)'] or 'undefined'}, "
                        f"{d['latest']:.1f} for its slowest seed)")
        else:
            verdict += f"; none with {layers} layers does"
    else:
        verdict = "no grid candidate reads context within the budget"
    wide = table[table.index.str.startswith(f"H{search_width}-L{layers}-")]
    if len(wide) and not wide["reads within budget"].any():
        verdict += (f"; no candidate at the candidates' width and depth (H = {search_width}, "
                    f"{layers} layers) does, at any batch size or learning rate tried")
    texts["grid_verdict"] = verdict
    texts["diverged_reading"] = (f"Diverged (loss not finite): {', '.join(search.diverged)}."
                                 if search.diverged else "No run diverged.")
    missing = [n for n in planned_grid() if n not in search.device and n not in search.diverged]
    texts["missing_reading"] = (f"Planned but neither stored nor reported diverged: "
                                f"{', '.join(missing)}." if missing else
                                "Every planned grid run is stored or reported diverged.")
    texts["profile_recipe"] = profile_recipe(search, deep, profile_config)
    texts["transfer_reading"] = transfer_reading(search)
    texts["confirm_reading"] = confirm_reading(search)
    texts["profile_transfer"] = profile_transfer(search)
    return texts


def trains_candidate(profile_config, candidate_config: dict) -> bool:
    """Whether a profile's PretrainConfig trains a stored v1 run's recipe: equal on every
    one of TRAINING_FIELDS (the model's fields compared where both schemas have them)."""
    mine = profile_config.to_dict()
    for name in TRAINING_FIELDS:
        if name == "model":
            shared = set(mine["model"]) & set(candidate_config["model"])
            if any(mine["model"][k] != candidate_config["model"][k] for k in shared):
                return False
        elif mine[name] != candidate_config[name]:
            return False
    return True


def profile_recipe(search: Search, deep: pd.DataFrame, profile_config) -> str:
    c = profile_config
    size = (f"H = {c.model.hidden_size}, {c.model.num_hidden_layers} layers, batch "
            f"{c.batch_size} x {c.max_seq_length}")
    if len(deep):
        fastest = deep["minute"].idxmin()
        if trains_candidate(c, search.device[fastest]["config"]):
            return (f"The cpu profile trains the grid's fastest {c.model.num_hidden_layers}-layer "
                    f"candidate, {fastest} ({size}), on its {CPU_BUDGET / 60:.0f}-minute "
                    f"schedule: {c.max_steps:,} steps, "
                    f"{c.max_steps * c.batch_size * c.max_seq_length:,} tokens.")
    return (f"The cpu profile does not train the grid's fastest "
            f"{c.model.num_hidden_layers}-layer candidate: it trains {size} for "
            f"{c.max_steps:,} steps.")


def transfer_reading(search: Search) -> str:
    """The chosen candidate on this CPU against the same config on the GPU."""
    here, there = search.candidates.get(CHOSEN), search.device.get(CHOSEN)
    if here is None or there is None:
        return "The chosen recipe has not been trained on both machines."
    se = legacy_reference_levels(here["config"])["rungs"]["unigram_loss_se"]
    gap = curve_difference(here["curve"], there["curve"])
    return (f"The chosen recipe ends at {here['metrics'][CE]:.3f} nats at [MASK] on this CPU "
            f"and {there['metrics'][CE]:.3f} on the GPU (bf16 autocast there); along the "
            f"curve the two differ by at most {gap:.3f} nats, against a standard error of "
            f"{se:.3f} for the held-out set.")


def confirm_reading(search: Search) -> str:
    """The grid runs trained again on this CPU: their crossing measured here against the
    estimate from the GPU run, and their real step time against the measured one."""
    words = []
    for name, here in search.confirmations.items():
        if name not in search.device:
            continue
        config, m = here["config"], here["metrics"]
        seconds = search.step_seconds[shape_of(config)]
        level = legacy_reference_levels(config)["reads_context"]
        hit_here, hit_there = (crossing(r["curve"], level) for r in (here,
                                                                       search.device[name]))
        estimate = (f"estimated {hit_there['step'] * seconds / 60:.1f} from the GPU run"
                    if hit_there else "not at all on the GPU")
        overhead = m["train_seconds"] / (config["max_steps"] * seconds)
        words.append(
            f"{name} reads context here after {hit_here['seconds'] / 60:.1f} minutes of "
            f"training (step {hit_here['step']:,}; {estimate}) and ends at {m[CE]:.3f} nats "
            f"({m['train_seconds'] / 60:.1f} minutes for the whole schedule, {overhead:.2f} "
            f"times the measured step time)" if hit_here else
            f"{name} does not read context here within its schedule (it ends at "
            f"{m[CE]:.3f} nats)")
    if not words:
        return "No grid candidate has been trained on this CPU."
    return "Trained again on this CPU, " + "; ".join(words) + "."


def _machine(result: dict) -> str:
    return result["provenance"]["machine"].get("gpu") or "this CPU"


def profile_transfer(search: Search) -> str:
    """Engine v1's cpu base run, seed 0, trained again on this CPU, against the stored run
    of cpu-v1 (the cpu runs engine v1 trained, which no claim reads) with the same config."""
    if search.transfer is None:
        return ""
    replica, stored = search.transfer
    if _machine(replica) == _machine(stored):
        return ""
    a, b = replica["metrics"], stored["metrics"]
    book = legacy_reference_levels(stored["config"])
    curve_set = legacy_reference_levels({**replica["config"],
                                         "eval_examples": replica["curve"][0]["examples"]})
    hit = crossing(replica["curve"], curve_set["reads_context"])
    return (
        f"The search's engine also trained {search.texts['v1_book_runs']} cpu runs with "
        f"this recipe as their base (data/results/cpu-v1/; no claim reads them). Their "
        f"base run's seed 0, trained on {_machine(stored)} and again on this CPU "
        f"(data/results/transfer/cpu/), ends at {a[CE]:.3f} nats at [MASK] here against "
        f"{b[CE]:.3f} there, on those runs' held-out set of {book['sequences']} SOP pairs "
        f"(reads-context threshold {book['reads_context']:.3f}); their curve points differ by "
        f"at most {curve_difference(replica['curve'], stored['curve']):.3f}. MLM accuracy "
        f"{100 * a['mlm_accuracy']:.2f}% against {100 * b['mlm_accuracy']:.2f}%, SOP accuracy "
        f"of its head {100 * a['sop_accuracy_head']:.1f}% against "
        f"{100 * b['sop_accuracy_head']:.1f}%. "
        + (f"On the {curve_set['sequences']} sequences its curve scores it goes below their "
           f"threshold ({curve_set['reads_context']:.3f}) at step {hit['step']:,}, after "
           f"{hit['seconds'] / 60:.1f} minutes of training. " if hit else
           f"On the {curve_set['sequences']} sequences its curve scores it does not go below "
           f"their threshold ({curve_set['reads_context']:.3f}). ")
        + f"Its whole run took {replica['wall_seconds'] / 60:.1f} minutes here, "
        f"{a['train_seconds'] / 60:.1f} of them training ({a['tokens_per_second']:,.0f} "
        f"tokens/s on {replica['provenance']['machine']['torch_threads']} threads).")


# -- figures ----------------------------------------------------------------------------------

def plot_candidates(search: Search):
    """Three panels: MLM accuracy against training seconds (dashed: the context-free
    accuracy), accuracy at [MASK] against steps and cross-entropy at [MASK] against
    seconds (dashed: unigram rung, dotted: left-bigram rung, band: two standard errors),
    the last two for the candidates with the chosen one's vocabulary; one color a candidate."""
    import matplotlib.pyplot as plt
    levels = search.levels[RECIPE_SET]
    r = levels["rungs"]
    # one panel a row: side by side, at the text column's width, they were unreadable
    fig, axes = plt.subplots(3, 1, figsize=(6.6, 11))
    vocabulary = search.candidates[CHOSEN]["config"]["model"]["vocab_size"]
    for k, (name, result) in enumerate(search.candidates.items()):
        curve, style = pd.DataFrame(result["curve"]), {"marker": ".", "color": f"C{k}"}
        axes[0].plot(curve["seconds"], 100 * curve["mlm_accuracy"], label=name, **style)
        if result["config"]["model"]["vocab_size"] != vocabulary:
            continue
        if "mlm_accuracy_at_mask" in curve:
            axes[1].plot(curve["step"], 100 * curve["mlm_accuracy_at_mask"], **style)
        if CE in curve:
            axes[2].plot(curve["seconds"], curve[CE], **style)
    axes[0].axhline(100 * levels["plateau"], color="gray", ls="--")
    axes[1].axhline(100 * r["unigram_at_mask"], color="gray", ls="--")
    axes[1].axhline(100 * r["bigram_at_mask"], color="gray", ls=":")
    axes[2].axhline(r["unigram_loss_at_mask"], color="gray", ls="--")
    axes[2].axhspan(levels["reads_context"], r["unigram_loss_at_mask"]
                    + 2 * r["unigram_loss_se"], color="gray", alpha=0.15)
    axes[2].axhline(r["bigram_loss_at_mask"], color="gray", ls=":")
    axes[0].set(xlabel="training seconds (this CPU)", ylabel="held-out MLM accuracy (%)")
    axes[1].set(xlabel="training steps", ylabel="accuracy at [MASK] (%)")
    axes[2].set(xlabel="training seconds (this CPU)", ylabel="cross-entropy at [MASK] (nats)",
                ylim=(r["bigram_loss_at_mask"] - 0.4, r["unigram_loss_at_mask"] + 0.8))
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=2,
               fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def plot_grid(search: Search):
    """The grid runs of seed 0 at the candidates' sequence length, their cross-entropy at
    [MASK] against the minute of this CPU each step corresponds to; gray, the candidates
    that do not read context within the budget; dashed, the reads-context threshold."""
    import matplotlib.pyplot as plt
    table, threshold = search.grid, search.levels[RECIPE_SET]["reads_context"]
    length = int(SEARCH_SHAPE.split("-T")[1])
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in planned_grid():
        result = search.device.get(name)
        if result is None or result["config"]["seed"] or \
                result["config"]["max_seq_length"] != length:
            continue
        curve = pd.DataFrame(result["curve"])
        minutes = curve["step"] * search.step_seconds[shape_of(result["config"])] / 60
        if table.loc[family(name), "reads within budget"]:
            ax.plot(minutes, curve[CE], marker=".", label=family(name))
        else:
            ax.plot(minutes, curve[CE], color="0.75", lw=1)
    ax.axhline(threshold, color="gray", ls="--")
    ax.set(xlabel="minutes of training on this CPU (step x measured step time)",
           ylabel="cross-entropy at [MASK] (nats)", ylim=(threshold - 0.2, threshold + 0.35))
    ax.legend(fontsize=8, loc="upper right")
    return fig

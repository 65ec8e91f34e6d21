"""The recipe search behind the profiles (chapter 0), read from its stored results. It
ran with engine v1 (commit be70d44): its runs are found by their ``config`` field, and
their held-out sets' levels are rebuilt by v1's definition (``legacy_reference_levels``).
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
from ..stats.cache import cached

_OWN = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]
CE = "mlm_loss_at_mask"

SEARCH_SHAPE = "H128-L4-B32-T64"  # the candidates' size: H, layers, batch, sequence length
CHOSEN = "lamb-5e-3-init-0.05-sinusoidal-long"  # the candidate trained on both machines
OPTIMIZER_PAIR = ("adamw-1e-3", "lamb-5e-3")  # one knob apart, equal steps
CPU_BUDGET = 300.0  # seconds of training on this CPU that every grid schedule was sized to
# {name: (optimizer, learning rate, init std, positions, vocabulary, steps)} and the
# grid's two rounds, [(shape, optimizer, learning rate, seed)]
_PLAN = json.loads((repo_root() / "data/results/recipe-grid/plan.json").read_text())
CANDIDATES = {name: tuple(entry) for name, entry in _PLAN["candidates"].items()}
GRID = [tuple(entry) for entry in _PLAN["grid"] + _PLAN["follow_up"]]
# what shapes a run's training in both engines' schemas (``trains_candidate``)
TRAINING_FIELDS = ("model", "objective", "max_seq_length", "batch_size", "max_predictions",
                   "optimizer", "learning_rate", "warmup_steps", "max_steps", "weight_decay",
                   "train_documents")


def results_root() -> Path:
    """The committed data/results/ of this checkout (never $ALBERT_RERUN_RESULTS)."""
    return repo_root() / "data" / "results"


def stored_runs(folder: Path) -> list:
    """The JSON files in ``folder`` that hold a config, metrics and a curve, by name."""
    results = (json.loads(path.read_text()) for path in sorted(Path(folder).glob("*.json")))
    return [r for r in results if {"config", "metrics", "curve"} <= set(r)]


def shape_of(config: dict) -> str:
    """A v1 config's shape, e.g. H128-L4-B32-T64."""
    m = config["model"]
    return (f"H{m['hidden_size']}-L{m['num_hidden_layers']}-B{config['batch_size']}"
            f"-T{config['max_seq_length']}")


def grid_name(shape: str, optimizer: str, learning_rate: float, seed: int = 0) -> str:
    """A grid run's name."""
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
    found = [name for name, candidate in CANDIDATES.items() if candidate == key]
    if found and shape_of(config) == SEARCH_SHAPE:
        return found[0]
    return grid_name(shape_of(config), config["optimizer"], config["learning_rate"],
                     config["seed"])


def planned_grid() -> list:
    """The names of every grid run the search planned, in its order."""
    return [grid_name(*entry) for entry in GRID]


def diverged_runs(logs) -> dict:
    """{run name: log file} of the runs a session log reports diverged (no result stored)."""
    found = {}
    for log in logs:
        for line in Path(log).read_text().splitlines():
            failed = re.match(r"^(\S+): FAILED (.*)$", line)
            if failed and ("nan" in failed.group(2).lower() or "diverged" in failed.group(2)):
                found[failed.group(1)] = Path(log).name
    return found


def context_free(input_ids, mlm_labels, mask_id: int) -> dict:
    """What copying the token shown and guessing the top target at [MASK] scores
    (``plateau``); that piece's share of all targets and of those at [MASK]."""
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
    """The levels of the held-out set an engine-v1 run was scored on, rebuilt as v1 built
    it: ``context_free``, the count rungs and ``reads_context``, 2 SE below unigram."""
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
    """``source``: the code's digests, which the disk cache does not see."""
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


def levels_table(v: dict) -> pd.DataFrame:
    """The levels of the search's held-out set, one row per level."""
    r = v["rungs"]
    pairs = {"sop": "SOP pairs", "nsp": "NSP pairs"}[v["objective"]]
    return pd.DataFrame({"recipe search": {
        "held-out sequences": f"{v['sequences']:,} {pairs}",
        "targets (of them shown as [MASK])": f"{v['all_targets']:,} ({r['targets']:,})",
        "context-free accuracy, all targets %": f"{100 * v['plateau']:.1f}",
        "unigram accuracy at [MASK] %": f"{100 * r['unigram_at_mask']:.1f}",
        "left-bigram accuracy at [MASK] %": f"{100 * r['bigram_at_mask']:.1f}",
        "unigram cross-entropy at [MASK] (SE)":
        f"{r['unigram_loss_at_mask']:.3f} ({r['unigram_loss_se']:.3f})",
        "left-bigram cross-entropy at [MASK]": f"{r['bigram_loss_at_mask']:.3f}",
        "reads-context threshold (nats)": f"{v['reads_context']:.3f}"}})


def crossing(curve: list, level: float, metric: str = CE, below: bool = True):
    """The first curve point whose ``metric`` is below ``level`` (above: not ``below``)."""
    return next((p for p in curve if p.get(metric) is not None
                 and (p[metric] < level if below else p[metric] > level)), None)


def curve_difference(a: list, b: list, metric: str = CE) -> float:
    """The largest absolute difference of two curves at the steps both scored."""
    x, y = ({p["step"]: p[metric] for p in curve if metric in p} for curve in (a, b))
    common = sorted(set(x) & set(y))
    if not common:
        raise ValueError(f"the two curves share no step that records {metric}")
    return float(max(abs(x[s] - y[s]) for s in common))


def _seconds(point) -> float:
    """A curve point's seconds (NaN for no point)."""
    return np.nan if point is None else float(point["seconds"])


def candidate_table(runs: dict) -> pd.DataFrame:
    """One row per candidate: final metrics and when it crosses each of its own levels."""
    rows = []
    for name, result in runs.items():
        own, curve, m = (legacy_reference_levels(result["config"]), result["curve"],
                         result["metrics"])
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


def grid_frame(device_runs: dict, step_seconds: dict) -> pd.DataFrame:
    """One row per grid run: when it reads context, in steps and in this CPU's minutes."""
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


def grid_table(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per grid candidate, fastest first: its seeds and when they read context (a
    95% t-interval where 2+ seeds all crossed)."""
    from ..stats.inference import mean_interval
    grouped = frame.groupby("candidate", sort=False)
    table = grouped.agg(
        seeds=("seed", "count"), layers=("layers", "first"), steps=("schedule steps", "first"),
        read=("reads context at step", lambda s: int(s.notna().sum())),
        minute=("at minute here", "mean"), latest=("at minute here", "max"),
        loss=("loss at [MASK]", "mean"), threshold=("threshold", "first"))
    table["reads within budget"] = table["read"] == table["seeds"]
    table["95% interval (minutes)"] = grouped["at minute here"].agg(
        lambda m: None if len(m) < 2 or m.isna().any()
        else "{0.low:.1f} to {0.high:.1f}".format(mean_interval(m.to_numpy())))
    return table.sort_values("minute", kind="stable")


@dataclass
class Search:
    """The stored search and what the chapter shows of it."""

    candidates: dict  # name: result (recipe/, this CPU)
    device: dict  # name: result (recipe-grid/cuda/)
    confirmations: dict  # name: result (recipe-grid/cpu/)
    step_seconds: dict  # shape: this CPU's seconds per training step
    diverged: dict  # name: session log
    levels: dict  # the levels of the search's held-out set (legacy_reference_levels)
    grid: pd.DataFrame | None = None  # one row per grid candidate (grid_table)
    tables: dict = field(default_factory=dict)  # for display
    values: dict = field(default_factory=dict)  # numbers and short phrases, glued

    def summary(self) -> dict:
        """How much of the search is stored, as counts."""
        grid = planned_grid()
        return {"candidates": f"{len(self.candidates)} of {len(CANDIDATES)}",
                "grid runs": f"{sum(n in grid for n in self.device)} of {len(grid)}",
                "diverged": len(self.diverged), "again on this CPU": len(self.confirmations)}


def load() -> Search:
    """The committed search, its tables and values; the cpu profile checked against it."""
    from ..profiles import resolve
    cpu, root = resolve("cpu"), results_root()
    order = {name: k for k, name in enumerate([*CANDIDATES, *planned_grid()])}
    named = {}
    for folder in ("recipe", "recipe-grid/cuda", "recipe-grid/cpu"):
        runs = ((run_name(r["config"]), r) for r in stored_runs(root / folder))
        named[folder] = dict(sorted(runs, key=lambda item: order.get(item[0], len(order))))
    if CHOSEN not in named["recipe"]:
        raise LookupError(f"the chosen candidate {CHOSEN} is not stored in {root / 'recipe'}")
    timing = json.loads((root / "recipe-grid" / "step-seconds.json").read_text())
    levels = legacy_reference_levels(named["recipe"][CHOSEN]["config"])
    search = Search(named["recipe"], named["recipe-grid/cuda"], named["recipe-grid/cpu"],
                    timing["step_seconds"],
                    diverged_runs(sorted((root / "recipe-grid" / "cuda").glob("session-*.log"))),
                    levels)
    profile_config = cpu.pretraining_config()
    search.values.update(grid_threads=timing["threads"], **level_values(levels))
    table, vocabulary = candidate_table(search.candidates), profile_config.model.vocab_size
    search.tables["candidates"] = rounded(table)
    search.values.update(candidate_values(search.candidates, table, vocabulary))
    search.tables["long runs"] = long_runs(search.candidates)
    search.grid = grid_table(grid_frame({n: search.device[n] for n in planned_grid()
                                         if n in search.device}, search.step_seconds))
    search.tables["grid"] = search.grid.rename(columns={
        "read": "seeds that read context", "minute": "reads context at minute (mean)",
        "latest": "latest seed's minute", "loss": "final loss at [MASK] (mean)"}).round(3)
    search.values.update(grid_values(search, search.grid, profile_config))
    search.tables["again here"] = again_here(search)
    search.values.update(transfer_values(search))
    # numpy scalars as Python numbers: glue formats those ("{glue:text}`key:.1f`")
    search.values = {k: v.item() if isinstance(v, np.generic) else v
                     for k, v in search.values.items()}
    return search


def level_values(recipe: dict) -> dict:
    """The levels of the search's held-out set, in percent and nats."""
    r = recipe["rungs"]
    return {"plateau_accuracy": 100 * recipe["plateau"],
            "top_piece_share": 100 * recipe["top_share"],
            "unigram_accuracy": 100 * recipe["unigram"], "unigram_exit": 150 * recipe["unigram"],
            "rung_bigram": 100 * r["bigram_at_mask"], "rung_left_visible": 100 * r["left_visible"],
            "rung_unigram_loss": r["unigram_loss_at_mask"],
            "rung_bigram_loss": r["bigram_loss_at_mask"], "rung_loss_se": r["unigram_loss_se"],
            "reads_context_loss": recipe["reads_context"], "recipe_sequences": recipe["sequences"]}


def candidate_values(runs: dict, table: pd.DataFrame, vocabulary: int) -> dict:
    """The candidates' results, as glued values (``vocabulary``: the profiles')."""
    config, m = runs[CHOSEN]["config"], runs[CHOSEN]["config"]["model"]
    out = {"search_size": (f"H = {m['hidden_size']}, {m['num_hidden_layers']} shared "
                           f"layers, E = {m['embedding_size']}, batch "
                           f"{config['batch_size']} x {config['max_seq_length']}"),
           "candidates_measured": f"{len(runs)} of {len(CANDIDATES)}",
           "vocabulary_kept": vocabulary}
    left = table.dropna(subset=["left plateau at s"])
    first = left["left plateau at s"].idxmin()
    own = legacy_reference_levels(runs[first]["config"])
    step = int(left.loc[first, "left plateau at step"])
    point = next(p for p in runs[first]["curve"] if p["step"] == step)
    noise = np.sqrt(own["plateau"] * (1 - own["plateau"]) / own["all_targets"])
    out.update(plateau_first=first,
               plateau_first_minutes=left.loc[first, "left plateau at s"] / 60,
               plateau_margin=100 * (point["mlm_accuracy"] - own["plateau"]),
               plateau_noise=100 * noise,
               plateau_first_vocabulary=runs[first]["config"]["model"]["vocab_size"])
    fastest = table["left unigram level at s"].idxmin()
    out.update(unigram_fastest=fastest, unigram_fastest_s=round(float(
        table.loc[fastest, "left unigram level at s"])))
    a, b = OPTIMIZER_PAIR
    acc = table["final MLM acc %"]
    out["optimizer_choice"] = "AdamW" if acc[a] > acc[b] else "LAMB"
    same = table[table["vocabulary"] == vocabulary]
    best = same["final MLM acc %"].idxmax()
    metrics = runs[best]["metrics"]
    out.update(best_run=best,
               best_minutes=metrics["train_seconds"] / 60,
               best_accuracy=100 * metrics["mlm_accuracy"],
               best_at_mask=float(same["at [MASK] %"].max()))
    reached = [n for n, r in runs.items()
               if crossing(r["curve"], legacy_reference_levels(r["config"])["rungs"]
                           ["bigram_at_mask"], "mlm_accuracy_at_mask", below=False)]
    out["bigram_reached"] = ", ".join(reached) or "none"
    readers = table["reads context at s"].dropna()
    out.update(earliest_reader=readers.idxmin() if len(readers) else "none",
               earliest_reader_minutes=readers.min() / 60 if len(readers) else np.nan,
               budget_minutes=CPU_BUDGET / 60)
    return out


def long_runs(runs: dict) -> pd.DataFrame:
    """The candidates of 2,400 steps or more that record cross-entropy at [MASK]: when
    each reads context and passes the left-bigram rung, and where it ends."""
    rows = []
    for name, result in runs.items():
        if CE not in result["metrics"] or result["metrics"]["steps"] < 2400:
            continue
        own, curve = legacy_reference_levels(result["config"]), result["curve"]
        row = {"candidate": name}
        for label, level in (("reads context", own["reads_context"]),
                             ("passes left bigram", own["rungs"]["bigram_loss_at_mask"])):
            hit = crossing(curve, level)
            row[f"{label} at step"] = hit["step"] if hit else "never"
            row[f"{label} at minute"] = round(hit["seconds"] / 60, 1) if hit else "never"
        row.update({"steps": curve[-1]["step"], "final loss at [MASK]": round(curve[-1][CE], 3)})
        rows.append(row)
    return pd.DataFrame(rows).set_index("candidate").astype(object)


def grid_values(search: Search, table: pd.DataFrame, profile_config) -> dict:
    """The grid's results and what the profile trains, as glued values."""
    c, width = profile_config, int(SEARCH_SHAPE.split("-")[0][1:])
    layers = c.model.num_hidden_layers
    readers = table[table["reads within budget"]]
    deep = readers[readers["layers"] == layers]
    d = deep.loc[deep["minute"].idxmin()]
    wide = table[table.index.str.startswith(f"H{width}-L{layers}-")]
    missing = [n for n in planned_grid() if n not in search.device and n not in search.diverged]
    return {"grid_budget_minutes": CPU_BUDGET / 60, "grid_runs": int(table["seeds"].sum()),
            "grid_candidates": len(table), "grid_readers": len(readers),
            "grid_fastest": readers["minute"].idxmin(),
            "grid_fastest_minute": readers["minute"].min(),
            "grid_fastest_seeds": int(readers.loc[readers["minute"].idxmin(), "seeds"]),
            "profile_layers": layers, "deep_fastest": d.name, "deep_minute": d["minute"],
            "deep_seeds": int(d["seeds"]), "deep_interval": d["95% interval (minutes)"],
            "deep_latest": d["latest"], "search_width": width,
            "wide_readers": int(wide["reads within budget"].sum()),
            "diverged": ", ".join(search.diverged) or "none",
            "missing": ", ".join(missing) or "none",
            "profile_trains_fastest": trains_candidate(c, search.device[d.name]["config"]),
            "profile_size": (f"H = {c.model.hidden_size}, {layers} layers, batch "
                             f"{c.batch_size} x {c.max_seq_length}"),
            "profile_steps": c.max_steps,
            "profile_tokens": c.max_steps * c.batch_size * c.max_seq_length}


def trains_candidate(profile_config, candidate_config: dict) -> bool:
    """Whether a profile's PretrainConfig trains a stored v1 run's recipe: equal on
    TRAINING_FIELDS (the model's fields where both schemas have them)."""
    mine, theirs = profile_config.to_dict(), candidate_config
    shared = set(mine["model"]) & set(theirs["model"])
    return (all(mine["model"][k] == theirs["model"][k] for k in shared)
            and all(mine[name] == theirs[name] for name in TRAINING_FIELDS if name != "model"))


def again_here(search: Search) -> pd.DataFrame:
    """The grid runs trained again on this CPU: when each reads context here against the
    estimate from its GPU run, its final loss, its time over the step time's."""
    rows = []
    for name, here in search.confirmations.items():
        if name not in search.device:
            continue
        config, m = here["config"], here["metrics"]
        seconds = search.step_seconds[shape_of(config)]
        level = legacy_reference_levels(config)["reads_context"]
        hit = crossing(here["curve"], level)
        there = crossing(search.device[name]["curve"], level)
        rows.append({"candidate": name,
                     "reads context here at minute": round(hit["seconds"] / 60, 1) if hit
                     else None, "at step": hit["step"] if hit else None,
                     "estimated minute from the GPU run":
                     round(there["step"] * seconds / 60, 1) if there else None,
                     "final loss at [MASK]": round(m[CE], 3),
                     "schedule minutes": round(m["train_seconds"] / 60, 1),
                     "x measured step time": round(m["train_seconds"]
                                                   / (config["max_steps"] * seconds), 2)})
    return pd.DataFrame(rows).set_index("candidate").astype(object)


def transfer_values(search: Search) -> dict:
    """The first check between machines: the chosen candidate on this CPU and on the GPU."""
    here, there = search.candidates[CHOSEN], search.device[CHOSEN]
    return {"chosen_here": here["metrics"][CE], "chosen_there": there["metrics"][CE],
            "chosen_gap": curve_difference(here["curve"], there["curve"]),
            "chosen_se": legacy_reference_levels(here["config"])["rungs"]["unigram_loss_se"]}


def plot_candidates(search: Search):
    """MLM accuracy against seconds, accuracy at [MASK] against steps and cross-entropy at
    [MASK] against seconds (the last two at the chosen vocabulary), with the levels."""
    import matplotlib.pyplot as plt
    levels, r = search.levels, search.levels["rungs"]
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
    # the key beside the top panel, in its empty lower right: one colour per candidate
    axes[0].legend(loc="lower right", fontsize=9, title="candidates (every panel)",
                   title_fontsize=9, frameon=False)
    fig.tight_layout()
    return fig


def plot_grid(search: Search):
    """The grid runs of seed 0 at the candidates' length: cross-entropy at [MASK] against
    this CPU's minutes, gray where a candidate does not read context within the budget."""
    import matplotlib.pyplot as plt
    table, threshold = search.grid, search.levels["reads_context"]
    length = int(SEARCH_SHAPE.split("-T")[1])
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in [n for n in planned_grid() if n in search.device]:
        config = search.device[name]["config"]
        if config["seed"] or config["max_seq_length"] != length:
            continue
        curve = pd.DataFrame(search.device[name]["curve"])
        minutes = curve["step"] * search.step_seconds[shape_of(config)] / 60
        if table.loc[family(name), "reads within budget"]:
            ax.plot(minutes, curve[CE], marker=".", label=family(name))
        else:
            ax.plot(minutes, curve[CE], color="0.75", lw=1)
    ax.axhline(threshold, color="gray", ls="--")
    ax.set(xlabel="minutes of training on this CPU (step x measured step time)",
           ylabel="cross-entropy at [MASK] (nats)", ylim=(threshold - 0.2, threshold + 0.35))
    ax.legend(fontsize=8, loc="upper right")
    return fig

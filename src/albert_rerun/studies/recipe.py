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
(no hash is recomputed with today's schema), and computes the numbers and tables the recipe chapter shows; its sentences are in
notebooks/00_recipe.md.
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
from pathlib import Path
import pandas as pd

import numpy as np

from .recipe_runs import (CANDIDATES, CE, CHOSEN, COMMON_SET, CPU_BUDGET, CPU_V1_SET,
                          OPTIMIZER_PAIR, RECIPE_SET, SEARCH_SHAPE, TRAINING_FIELDS,
                          VOCABULARY_PAIR, Search, candidate_table, common_levels, crossing,
                          curve_difference, diverged_runs, family, grid_frame,
                          grid_table, legacy_reference_levels, planned_grid, results_root,
                          rounded, run_name, shape_of, stored_runs)


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


def load(root: Path | None = None, profile_config=None) -> Search:
    """Read every stored result of the search under ``root`` (default: the committed
    data/results/) and compute the chapter's tables and sentences; ``profile_config``
    (default: the cpu profile's base PretrainConfig) is checked against the grid."""
    from ..profiles import resolve
    cpu = resolve("cpu")
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
    levels[COMMON_SET] = common_levels(cpu)
    search = Search(named["recipe"], named["recipe-grid/cuda"], named["recipe-grid/cpu"],
                    timing["step_seconds"],
                    diverged_runs(sorted((root / "recipe-grid" / "cuda").glob("session-*.log"))),
                    transfer, levels)
    search.values["grid_threads"] = timing["threads"]
    search.values["v1_book_runs"] = len(book)
    describe(search, profile_config or cpu.pretraining_config())
    # numpy scalars as Python numbers: glue formats those ("{glue:text}`key:.1f`")
    search.values = {k: v.item() if isinstance(v, np.generic) else v
                     for k, v in search.values.items()}
    return search


def describe(search: Search, profile_config) -> None:
    """Fill ``search.tables`` and ``search.values`` (the chapter's glued values)."""
    search.values.update(level_values(search.levels))
    table = candidate_table(search.candidates)
    search.tables["candidates"] = rounded(table)
    vocabulary = profile_config.model.vocab_size
    search.values.update(candidate_values(search.candidates, table, vocabulary))
    search.tables["long runs"] = long_runs(search.candidates)
    search.tables["vocabulary"], vocab = vocabulary_comparison(search.candidates, table,
                                                               vocabulary)
    search.values.update(vocab)
    grid = [n for n in planned_grid() if n in search.device]
    search.grid = grid_table(grid_frame({n: search.device[n] for n in grid},
                                        search.step_seconds))
    search.tables["grid"] = search.grid.rename(columns={
        "read": "seeds that read context", "minute": "reads context at minute (mean)",
        "latest": "latest seed's minute", "loss": "final loss at [MASK] (mean)"}).round(3)
    search.values.update(grid_values(search, search.grid, profile_config))
    search.tables["again here"] = again_here(search)
    search.values.update(transfer_values(search))


def level_values(levels: dict) -> dict:
    """The levels of the search's set, the claims' common set and the cpu-v1 runs' set,
    in percent and nats."""
    recipe, common = levels[RECIPE_SET], levels[COMMON_SET]
    out = {"plateau_accuracy": 100 * recipe["plateau"],
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
           "common_rung_unigram_loss": common["rungs"]["unigram_loss_at_mask"],
           "common_rung_bigram_loss": common["rungs"]["bigram_loss_at_mask"],
           "common_reads_context_loss": common["reads_context"],
           "common_sequences": common["sequences"]}
    if CPU_V1_SET in levels:
        out["v1_book_plateau_accuracy"] = 100 * levels[CPU_V1_SET]["plateau"]
        out["v1_book_sequences"] = levels[CPU_V1_SET]["sequences"]
    return out


def candidate_values(runs: dict, table: pd.DataFrame, vocabulary: int) -> dict:
    """The candidates' results (``vocabulary``: the profiles'): which leaves the plateau
    first and by how much against the sampling noise of its accuracy, the optimizer of
    the pair one knob apart, the best run, the longest schedule and the earliest run to
    read context."""
    config = runs[CHOSEN]["config"]
    m = config["model"]
    out = {"search_size": (f"H = {m['hidden_size']}, {m['num_hidden_layers']} shared "
                           f"layers, E = {m['embedding_size']}, batch "
                           f"{config['batch_size']} x {config['max_seq_length']}"),
           "candidates_measured": f"{len(runs)} of {len(CANDIDATES)}"}
    left = table.dropna(subset=["left plateau at s"])
    first = left["left plateau at s"].idxmin()
    own = legacy_reference_levels(runs[first]["config"])
    step = int(left.loc[first, "left plateau at step"])
    point = next(p for p in runs[first]["curve"] if p["step"] == step)
    noise = np.sqrt(own["plateau"] * (1 - own["plateau"]) / own["all_targets"])
    out.update(plateau_first=first, plateau_first_step=step,
               plateau_first_minutes=left.loc[first, "left plateau at s"] / 60,
               plateau_margin=100 * (point["mlm_accuracy"] - own["plateau"]),
               plateau_noise=100 * noise, plateau_targets=own["all_targets"],
               plateau_first_vocabulary=runs[first]["config"]["model"]["vocab_size"])
    fastest = table["left unigram level at s"].idxmin()
    out["unigram_fastest"] = fastest
    out["unigram_fastest_s"] = round(float(table.loc[fastest, "left unigram level at s"]))
    a, b = OPTIMIZER_PAIR
    out["optimizer_choice"] = ("AdamW" if table.loc[a, "final MLM acc %"]
                               > table.loc[b, "final MLM acc %"] else "LAMB")
    same = table[table["vocabulary"] == vocabulary]
    best = same["final MLM acc %"].idxmax()
    metrics = runs[best]["metrics"]
    out.update(best_run=best, best_steps=metrics["steps"],
               best_minutes=metrics["train_seconds"] / 60,
               best_accuracy=100 * metrics["mlm_accuracy"],
               best_at_mask=float(same["at [MASK] %"].max()))
    reached = [n for n, r in runs.items()
               if crossing(r["curve"], legacy_reference_levels(r["config"])["rungs"]
                           ["bigram_at_mask"], "mlm_accuracy_at_mask", below=False)]
    out["bigram_reached"] = ", ".join(reached) or "none"
    readers = table["reads context at s"].dropna()
    out["earliest_reader"] = readers.idxmin() if len(readers) else "none"
    out["earliest_reader_minutes"] = readers.min() / 60 if len(readers) else np.nan
    out["budget_minutes"] = CPU_BUDGET / 60
    return out


def long_runs(runs: dict) -> pd.DataFrame:
    """The candidates that record cross-entropy at [MASK] and train 2,400 steps or more:
    when each reads context and passes the left-bigram rung (step and minutes), and
    where it ends."""
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


def vocabulary_comparison(runs: dict, table: pd.DataFrame, vocabulary: int):
    """The chosen recipe at two vocabulary sizes, each against its own rungs: a table and
    its values. The rule picks the vocabulary that reads context sooner, else the one
    that closes more of its unigram-to-bigram gap (``vocabulary_pick``); ``gap_noise``
    is the standard error of the difference of the two gaps, from the sampling noise of
    a mean loss over the held-out targets; ``vocabulary_kept`` the profiles' size."""
    rows = []
    for name in VOCABULARY_PAIR:
        own, m = legacy_reference_levels(runs[name]["config"]), runs[name]["metrics"]
        r = own["rungs"]
        gap = r["unigram_loss_at_mask"] - r["bigram_loss_at_mask"]
        rows.append({"vocabulary": runs[name]["config"]["model"]["vocab_size"],
                     "candidate": name, "steps": m["steps"],
                     "tokens/s": round(m["tokens_per_second"]),
                     "unigram loss": r["unigram_loss_at_mask"],
                     "left-bigram loss": r["bigram_loss_at_mask"], "loss at [MASK]": m[CE],
                     "gap closed %": 100 * (r["unigram_loss_at_mask"] - m[CE]) / gap,
                     "gap SE %": 100 * r["unigram_loss_se"] / gap,
                     "at [MASK] %": 100 * m["mlm_accuracy_at_mask"],
                     "reads context at s": table.loc[name, "reads context at s"]})
    frame = pd.DataFrame(rows).set_index("vocabulary")
    large, small = frame.index.max(), frame.index.min()
    read, gaps = frame["reads context at s"], frame["gap closed %"]
    if read.notna().any() and read.nunique(dropna=False) > 1:
        pick = read.idxmin() if read.notna().all() else read.dropna().index[0]
    else:
        pick = gaps.idxmax()
    values = {"vocabulary_small": int(small), "vocabulary_large": int(large),
              "gap_small": gaps[small], "gap_large": gaps[large],
              "gap_difference": abs(gaps[small] - gaps[large]),
              "gap_noise": float(np.hypot(*frame["gap SE %"])),
              "vocabulary_steps": int(frame.loc[small, "steps"]),
              "vocabulary_pick": int(pick), "vocabulary_kept": int(vocabulary),
              "vocabulary_readers": int(read.notna().sum())}
    return rounded(frame.drop(columns="gap SE %")), values


def grid_values(search: Search, table: pd.DataFrame, profile_config) -> dict:
    """The grid's results: how many candidates read context within the budget, the
    fastest and the fastest with the profile's depth, how many candidates at the
    candidates' width and depth read, the diverged and missing runs, and what the
    profile trains."""
    c = profile_config
    layers = c.model.num_hidden_layers
    width = int(SEARCH_SHAPE.split("-")[0][1:])
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


def again_here(search: Search) -> pd.DataFrame:
    """The grid runs trained again on this CPU: when each reads context here (minute,
    step) against the minute estimated from its GPU run, its final loss, and its whole
    schedule's time against the measured step time."""
    rows = []
    for name, here in search.confirmations.items():
        if name not in search.device:
            continue
        config, m = here["config"], here["metrics"]
        seconds = search.step_seconds[shape_of(config)]
        level = legacy_reference_levels(config)["reads_context"]
        hit, there = crossing(here["curve"], level), crossing(search.device[name]["curve"],
                                                              level)
        rows.append({"candidate": name,
                     "reads context here at minute": round(hit["seconds"] / 60, 1) if hit
                     else None, "at step": hit["step"] if hit else None,
                     "estimated minute from the GPU run": round(there["step"] * seconds / 60, 1)
                     if there else None,
                     "final loss at [MASK]": round(m[CE], 3),
                     "schedule minutes": round(m["train_seconds"] / 60, 1),
                     "x measured step time": round(m["train_seconds"]
                                                   / (config["max_steps"] * seconds), 2)})
    return pd.DataFrame(rows).set_index("candidate").astype(object)


def _machine(result: dict) -> str:
    return result["provenance"]["machine"].get("gpu") or "this CPU"


def transfer_values(search: Search) -> dict:
    """The checks between machines: the chosen candidate on this CPU and on the GPU, and
    engine v1's cpu base run (seed 0) again on this CPU against its stored run."""
    here, there = search.candidates[CHOSEN], search.device[CHOSEN]
    out = {"chosen_here": here["metrics"][CE], "chosen_there": there["metrics"][CE],
           "chosen_gap": curve_difference(here["curve"], there["curve"]),
           "chosen_se": legacy_reference_levels(here["config"])["rungs"]["unigram_loss_se"]}
    if search.transfer is None:
        return out
    replica, stored = search.transfer
    curve_set = legacy_reference_levels({**replica["config"],
                                         "eval_examples": replica["curve"][0]["examples"]})
    hit = crossing(replica["curve"], curve_set["reads_context"])
    out.update(v1_machine=_machine(stored), v1_here=replica["metrics"][CE],
               v1_there=stored["metrics"][CE],
               v1_gap=curve_difference(replica["curve"], stored["curve"]),
               v1_reads_minutes=hit["seconds"] / 60 if hit else np.nan,
               v1_wall_minutes=replica["wall_seconds"] / 60,
               v1_tokens_per_second=replica["metrics"]["tokens_per_second"],
               v1_threads=replica["provenance"]["machine"]["torch_threads"])
    return out


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

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
from pathlib import Path
import pandas as pd

from .recipe_runs import (CANDIDATES, CE, CHOSEN, COMMON_SET, CPU_V1_SET, RECIPE_SET,
                          SEARCH_SHAPE, Search, candidate_table, common_levels,
                          diverged_runs, family, grid_factors, grid_frame, grid_table,
                          legacy_reference_levels, planned_grid, results_root, rounded,
                          run_name, shape_of, stored_runs)
from .recipe_text import candidate_texts, grid_texts, level_texts, vocabulary_comparison


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
    search.texts["grid_threads"] = timing["threads"]
    search.texts["v1_book_runs"] = len(book)
    describe(search, profile_config or cpu.pretraining_config())
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

"""The chapters' figures, from the frames of the chapter modules (matplotlib).

Every figure plots the primary metric, the held-out cross-entropy at [MASK] (lower is
better), or Figure 1's layer transitions, with 95% t-intervals over seeds.
"""
from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..studies.decisions import CE
from ..stats.inference import summarize

CE_LABEL = "cross-entropy at [MASK] (nats)"


def intervals(ax, frame: pd.DataFrame, conditions, labels=None, metric: str = CE,
              offset: float = 0.0, color=None, label=None):
    """Means and 95% intervals of ``metric`` for ``conditions``, left to right."""
    table = summarize(frame[frame["condition"].isin(conditions)], metric).reindex(conditions)
    x = np.arange(len(conditions)) + offset
    finite = np.isfinite(table["low"]) & np.isfinite(table["high"])
    errors = np.where(finite, [table["mean"] - table["low"], table["high"] - table["mean"]], 0)
    ax.errorbar(x, table["mean"], yerr=errors, fmt="o", capsize=3, color=color, label=label)
    ax.set_xticks(np.arange(len(conditions)), labels or [str(c) for c in conditions])
    # room at either end, so the outer intervals do not sit on the next panel's labels
    ax.set_xlim(-0.5 + min(offset, 0), len(conditions) - 0.5 + max(offset, 0))
    return ax


def levels(ax, rungs: dict) -> None:
    """The unigram and left-bigram rungs as horizontal lines, where they are in view."""
    low, high = ax.get_ylim()
    for value, name, style in ((rungs["unigram_loss_at_mask"], "unigram", "--"),
                               (rungs["bigram_loss_at_mask"], "left bigram", ":")):
        if low <= value <= high:
            ax.axhline(value, ls=style, color="grey", lw=1)
            ax.annotate(name, (1.0, value), xycoords=("axes fraction", "data"),
                        ha="right", va="bottom", fontsize=7, color="grey")


def asymmetry(runs: pd.DataFrame, grouped: pd.DataFrame, small: int, H: int, schemes):
    # one y axis for the three panels (a cold reader compared heights across panels)
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.2), sharey=True,
                             gridspec_kw={"width_ratios": [2, 2, 1.4]})
    for ax, e in zip(axes, (small, H)):
        intervals(ax, runs, [f"E={e}, {s}" for s in schemes], list(schemes))
        ax.set(title=f"E = {e}", xlabel="shared blocks")
        # four labels under a narrow panel ran together ("noneattention"; a cold reader)
        ax.tick_params(axis="x", labelrotation=30)
    axes[0].set_ylabel(CE_LABEL)
    groups = list(dict.fromkeys(grouped["condition"]))
    intervals(axes[2], grouped, groups, [g.split("=")[1] for g in groups])
    axes[2].set(title="all shared, G groups", xlabel="G")
    fig.tight_layout()
    return fig


def by_condition(runs: pd.DataFrame, metrics: dict, conditions=None, reference: dict = None):
    """One panel per metric (column: axis label), conditions side by side; ``reference``
    maps a metric to a horizontal line (e.g. a majority share)."""
    conditions = conditions or list(dict.fromkeys(runs["condition"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.4 * len(metrics), 3.2))
    for ax, (metric, label) in zip(np.atleast_1d(axes), metrics.items()):
        intervals(ax, runs, conditions, metric=metric)
        # a title, not a y label: side by side, each panel's label ran into the
        # neighbouring panel's ticks (a cold reader)
        ax.set_title(textwrap.fill(label, 20))  # three long titles ran together
        if reference and metric in reference:
            ax.axhline(reference[metric], ls="--", color="grey", lw=1)
        ax.tick_params(axis="x", labelrotation=15)
    fig.tight_layout()
    return fig


def curves(runs: pd.DataFrame, x: str = "step", xscale: float = 1.0, xlabel: str = "step",
           conditions=None):
    """The learning curves (cross-entropy at [MASK] on the first held-out sequences):
    mean over seeds, band the seeds' range."""
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for name in conditions or dict.fromkeys(runs["condition"]):
        curves = [pd.DataFrame(c) for c in runs.loc[runs["condition"] == name, "curve"]]
        curves = [c for c in curves if not c.empty]
        if not curves:
            continue
        steps = curves[0][x].to_numpy() * xscale
        values = np.stack([c[CE].to_numpy() for c in curves])
        ax.plot(steps, values.mean(0), label=str(name))
        ax.fill_between(steps, values.min(0), values.max(0), alpha=0.2)
    ax.set(xlabel=xlabel, ylabel=CE_LABEL)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def embedding_sweep(runs: pd.DataFrame, sizes):
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for offset, (sharing, color) in zip((-0.06, 0.06), (("none", "C0"), ("all", "C1"))):
        intervals(ax, runs, [f"{sharing}, E={e}" for e in sizes], [str(e) for e in sizes],
                  offset=offset, color=color, label=f"{sharing} shared")
    ax.set(xlabel="embedding size E", ylabel=CE_LABEL)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def transitions(runs: pd.DataFrame):
    """Figure 1: L2 distance and angle per layer, trained (solid) and at initialization
    (dashed), mean over seeds."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, measure, label in zip(axes, ("l2", "angle"), ("L2 distance", "angle (degrees)")):
        for (name, color) in zip(dict.fromkeys(runs["condition"]), ("C0", "C1")):
            part = runs[runs["condition"] == name]
            for prefix, style, state in (("", "-", "trained"), ("control_", "--", "random init")):
                column = f"{prefix}transition_{measure}"
                values = [v for v in part.get(column, []) if isinstance(v, list)]
                if not values:
                    continue
                mean = np.mean(values, axis=0)
                ax.plot(np.arange(1, len(mean) + 1), mean, style, color=color,
                        label=f"{name}, {state}")
        ax.set(xlabel="layer", ylabel=label)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def sop_nsp(runs: pd.DataFrame):
    """Chapter 4's figure: the probes' accuracy on SOP and NSP pairs, each test set's
    majority share dashed, and the cross-entropy at [MASK] beside, by objective."""
    probes = ("sop_accuracy_probe", "nsp_accuracy_probe")
    return by_condition(runs, {"sop_accuracy_probe": "SOP pairs: probe accuracy",
                               "nsp_accuracy_probe": "NSP pairs: probe accuracy",
                               CE: CE_LABEL},
                        reference={t: runs[t.replace("accuracy_probe", "majority")].iloc[0]
                                   for t in probes})

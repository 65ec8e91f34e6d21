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
    """Chapter 3's figure: the cross-entropy at [MASK] by the blocks shared across
    layers, both embedding sizes in one panel (side by side at each scheme); under it,
    where the profile trains them, the models with all blocks shared within each of G
    groups, on the same y axis (a cold reader compared heights across panels). Drawn
    for the 660-px column: issue #41 found three panels side by side 200, 200 and
    140 px wide as shown."""
    rows = 2 if len(grouped) else 1
    fig, axes = plt.subplots(rows, 1, squeeze=False, sharey=True, dpi=100,
                             figsize=(6.6, 3.3 * rows + 0.2))
    top = axes[0, 0]
    for offset, e, colour in ((-0.08, small, "C0"), (0.08, H, "C1")):
        name = f"E = {e}" + (" = H" if e == H else "")
        intervals(top, runs, [f"E={e}, {s}" for s in schemes], list(schemes),
                  offset=offset, color=colour, label=name)
    top.set(title="by the blocks shared across layers, at two embedding sizes E",
            xlabel="blocks shared across layers", ylabel=textwrap.fill(CE_LABEL, 22))
    top.legend(fontsize=10)
    if rows == 2:
        bottom = axes[1, 0]
        groups = list(dict.fromkeys(grouped["condition"]))
        intervals(bottom, grouped, groups, [g.split("=")[1] for g in groups])
        bottom.set(title=f"all blocks shared within each of G groups of layers (E = {small})",
                   xlabel="number of groups G (one group: all layers share)",
                   ylabel=textwrap.fill(CE_LABEL, 22))
        bottom.yaxis.set_tick_params(labelleft=True)
    fig.tight_layout()
    return fig


def curve_differences(runs: pd.DataFrame, a: str, b: str, metric: str = CE) -> pd.DataFrame:
    """Condition ``a`` minus ``b`` along training, paired by seed: at each curve point,
    matched by its share of each run's schedule (every eighth; arms of different steps,
    such as the equal-time ones, meet at equal shares of their budgets), the mean over
    the seeds both arms have with its 95% t-interval (as
    ``studies.confirm_analysis.curve_differences`` for the confirmatory runs). Columns:
    share, step (``a``'s), mean, low, high, seeds."""
    from ..stats.inference import mean_interval
    from ..studies.confirm_analysis import schedule_points
    runs = runs[runs["curve"].map(lambda c: isinstance(c, list))]  # runs without a curve
    left, right = schedule_points(runs, a, metric), schedule_points(runs, b, metric)
    rows = []
    for share in sorted({k[1] for k in left} & {k[1] for k in right}):
        keys = [k for k in left if k[1] == share and k in right]
        interval = mean_interval([left[k][1] - right[k][1] for k in keys])
        rows.append({"share": share, "step": left[keys[0]][0], "mean": interval.mean,
                     "low": interval.low, "high": interval.high, "seeds": interval.n})
    return pd.DataFrame(rows, columns=["share", "step", "mean", "low", "high", "seeds"])


def curves(runs: pd.DataFrame, x: str = "step", xscale: float = 1.0, xlabel: str = "step",
           conditions=None, differences=None):
    """The learning curves (cross-entropy at [MASK] on the first held-out sequences):
    mean over seeds, band the seeds' range; under them, where they lie on top of each
    other, their paired difference along training (``curve_differences``: mean over
    seeds with its 95% interval, 0 dashed). ``differences``: (a, b) pairs, a minus b;
    None: with two conditions the first minus the second, with more each other one
    minus the first (the chapter's reference arm). The difference is drawn against the
    step where both arms train the same steps, else against the share of each one's
    schedule."""
    names = [n for n in (conditions or dict.fromkeys(runs["condition"]))
             if any(isinstance(c, list) and c
                    for c in runs.loc[runs["condition"] == n, "curve"])]
    if differences is None:
        differences = ([(names[0], names[1])] if len(names) == 2
                       else [(n, names[0]) for n in names[1:]])
    fig, axes = plt.subplots(2 if differences else 1, 1, squeeze=False, dpi=100,
                             figsize=(6.6, 6.2 if differences else 3.6),
                             gridspec_kw={"height_ratios": [1.2, 1] if differences else [1]})
    ax = axes[0, 0]
    colours = {}
    for name in names:
        curves = [pd.DataFrame(c) for c in runs.loc[runs["condition"] == name, "curve"]]
        curves = [c for c in curves if not c.empty]
        steps = curves[0][x].to_numpy() * xscale
        values = np.stack([c[CE].to_numpy() for c in curves])
        line, = ax.plot(steps, values.mean(0), label=str(name))
        colours[name] = line.get_color()
        ax.fill_between(steps, values.min(0), values.max(0), alpha=0.2)
    ax.set(xlabel=xlabel, ylabel=textwrap.fill(CE_LABEL, 22))
    ax.set_title("mean over seeds (band: the seeds' range)", fontsize=10)
    ax.legend(fontsize=10)
    if differences:
        _differences(axes[1, 0], runs, differences, colours, xscale if x == "step" else 1.0)
    fig.tight_layout()
    return fig


def _differences(ax, runs: pd.DataFrame, pairs, colours: dict, xscale: float) -> None:
    """``curves``' lower panel: each pair's paired difference along training."""
    steps = {n: set(runs.loc[runs["condition"] == n, "steps"]) for p in pairs for n in p}
    same = all(len(steps[a] | steps[b]) == 1 for a, b in pairs)
    for a, b in pairs:
        d = curve_differences(runs, a, b)
        where = d["step"] * xscale if same else d["share"]
        colour = colours.get(a) if len(pairs) > 1 else "C0"  # a wide arm's own colour
        ax.fill_between(where, d["low"], d["high"], color=colour, alpha=0.25, lw=0)
        ax.plot(where, d["mean"], "o-", ms=3, color=colour, label=f"{a} minus {b}")
    ax.axhline(0, color="0.4", lw=0.8, ls="--")
    ax.set_xlabel("step" if same else "share of training (each arm's own schedule)")
    ax.set_ylabel("difference (nats)")
    if len(pairs) == 1:
        ax.set_title(textwrap.fill(f"{pairs[0][0]} minus {pairs[0][1]}, paired by seed: "
                                   f"mean, 95% interval", 70), fontsize=10)
    else:
        ax.set_title("paired by seed: mean, 95% interval", fontsize=10)
        ax.legend(fontsize=10)


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
    (dashed), mean over seeds; one panel above the other, at the text column's width
    (issue #41: two panels side by side were 261 px wide as shown)."""
    fig, axes = plt.subplots(2, 1, figsize=(6.6, 6.4), dpi=100, sharex=True)
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
        ax.set(ylabel=label)
        ax.set_title(f"{label.split(' (')[0]} between each layer's input and output",
                     fontsize=10)
    axes[1].set_xlabel("layer")
    axes[1].xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    axes[0].xaxis.set_tick_params(labelbottom=True)
    if axes[0].get_lines():
        axes[0].legend(fontsize=9, ncol=2)
    fig.tight_layout()
    return fig


def sop_nsp(runs: pd.DataFrame):
    """Chapter 4's figure: the probes' accuracy on SOP and NSP pairs in one panel (each
    test set's majority share dashed, in its colour) and the cross-entropy at [MASK]
    under it, by objective; at the text column's width (issue #41: three panels side by
    side were 176 px wide as shown)."""
    conditions = list(dict.fromkeys(runs["condition"]))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.6, 6.2), dpi=100)
    for offset, pairs, colour in ((-0.08, "sop", "C0"), (0.08, "nsp", "C1")):
        intervals(top, runs, conditions, metric=f"{pairs}_accuracy_probe", offset=offset,
                  color=colour, label=f"{pairs.upper()} pairs")
        top.axhline(runs[f"{pairs}_majority"].iloc[0], ls="--", color=colour, lw=1)
    top.set(title="probe accuracy on held-out pairs (dashed: each set's majority share)",
            xlabel="pretraining objective", ylabel="probe accuracy")
    top.legend(fontsize=10)
    intervals(bottom, runs, conditions)
    bottom.set(title="cross-entropy at [MASK] on the common held-out set",
               xlabel="pretraining objective", ylabel=textwrap.fill(CE_LABEL, 22))
    for ax in (top, bottom):
        ax.title.set_fontsize(10)
    fig.tight_layout()
    return fig

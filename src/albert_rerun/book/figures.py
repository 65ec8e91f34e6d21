"""The book's figures: ``forest`` (effects in margins), the chapters' figures from their
runs, and ``png`` (legible at the text column's width, its smallest text recorded)."""
from __future__ import annotations

import io
import re
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import plain as PL
from .headlines import EXTRA, HEADLINES
from ..stats.inference import summarize
from ..studies.decisions import CE

WIDTH_IN = 6.6  # the text column: 660 px at 100 dpi
FIGURE_WIDTH_IN = 5.0  # a box's figure, shown at its own size under the column
FONT_PT = 10  # 14 px at 100 dpi
CE_LABEL = "cross-entropy at [MASK] (nats)"
CE_LABEL_WRAPPED = textwrap.fill(CE_LABEL, 22)
X_LIMIT = 15.0  # the widest an effect axis goes, in margins; past it an interval is cut
BAND_COLOUR = "0.93"  # lighter than any reading's colour, and hatched: the margin only
CLAIM_TITLES = {"asymmetry": "3. attention vs FFN", "sop_nsp": "4. SOP vs NSP",
                "dropout": "5. dropout", "wall_clock": "6. wide ALBERT vs BERT",
                "transitions": "7. transitions", "embedding_sweep": "8. small E",
                "downstream": "downstream: pretrained vs random init"}
# a colour per reading, from the Okabe-Ito palette (told apart with colour-blindness too);
# grey is "not testable" only, and the margin band lighter still
READING_COLOURS = {PL.HOLDS: "#009E73", PL.TINY: "#56B4E9", PL.NO_DIFFERENCE: "#0072B2",
                   PL.REVERSED: "#D55E00", PL.REVERSED_TINY: "#E69F00",
                   PL.DIFFERS: "#CC79A7", PL.UNDECIDED: "black", PL.NOT_TESTABLE: "0.6"}
PROFILE_MARKERS = {"smoke": "^", "cpu": "o", "cpu-long": "D", "gpu": "s",
                   "confirmatory": "*"}
# the profiles' decision of the same comparison as a confirmatory primary outside HEADLINES
PROFILE_KEYS = {"confirm/sharing-cost": "asymmetry/all-none/E=H"}

# -- legibility --------------------------------------------------------------------------

FONT_KEY = "albert-rerun:min-font-px"  # the PNG tEXt chunk of the smallest text's height
MIN_FONT_PX = 10.0  # the smallest text a reader should have to read, on the page
COLUMN_PX = 660  # the book's text column at a 1280 px window (676 px), less a margin


def _shown(text) -> bool:
    """A tick label is drawn only where its tick lies within its axis' view."""
    axes = text.axes
    if axes is None:
        return True
    for axis in (axes.xaxis, axes.yaxis):
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            if text in (tick.label1, tick.label2):
                lo, hi = sorted(axis.get_view_interval())
                return (tick.get_visible() and tick.get_loc() is not None
                        and lo <= tick.get_loc() <= hi)
    return True


def _texts(fig) -> list:
    from matplotlib.text import Text
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def min_font_px(fig) -> float:
    """The smallest visible text's height in pixels at ``fig``'s dpi (inf: none)."""
    sizes = [t.get_fontsize() for t in _texts(fig) if _shown(t)]
    return min(sizes) * fig.dpi / 72 if sizes else float("inf")


def _fit(fig, column_px: float = COLUMN_PX) -> None:
    """``fig`` no wider than ``column_px`` (its height kept) and no text under
    ``MIN_FONT_PX``, laid out again if changed."""
    changed = fig.get_figwidth() * fig.dpi > column_px
    if changed:
        fig.set_size_inches(column_px / fig.dpi, fig.get_figheight())
    smallest = MIN_FONT_PX * 72 / fig.dpi
    for text in _texts(fig):
        if text.get_fontsize() < smallest:
            text.set_fontsize(smallest)
            changed = True
    if changed and fig.get_layout_engine() is None:
        try:
            fig.set_layout_engine("constrained")
        except RuntimeError:  # a colour bar or a layout this figure cannot change
            pass
    fig.canvas.draw()


def _png_width(data: bytes) -> int:
    return int.from_bytes(data[16:20], "big")  # the IHDR chunk's width


def png(fig, dpi: float | None = None, fit: bool = True, **savefig) -> bytes:
    """``fig`` as PNG bytes (tight box, as the inline backend draws it), its smallest
    text recorded under ``FONT_KEY``; ``fit``: at the column's width with legible text,
    narrowed again while text outside the axes makes the image wider."""
    if dpi is not None:
        fig.set_dpi(dpi)
    savefig.setdefault("bbox_inches", "tight")
    fig.canvas.draw()  # lays out ticks, so that the tick labels shown are known
    width = None
    for _ in range(4 if fit else 1):
        if width is not None and width <= COLUMN_PX:
            break
        if fit:
            _fit(fig, COLUMN_PX if width is None else max(
                fig.get_figwidth() * fig.dpi * COLUMN_PX / width, 0.5 * COLUMN_PX))
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=fig.dpi,
                    metadata={FONT_KEY: f"{min_font_px(fig):.2f}"}, **savefig)
        width = _png_width(buffer.getvalue())
    return buffer.getvalue()


def register() -> bool:
    """In an IPython kernel, display every figure through ``png``; False outside one."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    from matplotlib.figure import Figure
    # the inline backend registers its formatter at the first figure: ours must come after
    plt.close(plt.figure())
    shell.display_formatter.formatters["image/png"].for_type(Figure, png)
    return True


def wrap_phrases(text: str, width: int) -> str:
    """``text`` in lines of at most ``width`` characters, broken between phrases only:
    never inside an expression ('E = H = 64', 'E 32') nor after a dangling hyphen
    ('SOP- minus NSP-trained'), whose spaces become non-breaking."""
    glued = re.sub(r"\b[EGHL](?: = \w+)+|\b[EGHL] \d+|\w+- \w+",
                   lambda m: m.group().replace(" ", "\xa0"), text)
    return textwrap.fill(glued, width, break_on_hyphens=False)


# -- effects in margins ------------------------------------------------------------------

def in_margins(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (a judged family's) with x, x_low, x_high: the paper-positive difference
    and interval in margins, and ``reading``: the plain reading's head."""
    if (rows["margin"] <= 0).any():
        raise ValueError(f"decisions {list(rows.index[rows['margin'] <= 0])} have no "
                         f"positive margin to scale by")
    sign = np.where(rows["paper_sign"].fillna(0).astype(int) < 0, -1.0, 1.0)
    out = rows.copy()
    ends = np.sort(np.stack([sign * rows["low"], sign * rows["high"]]), axis=0)
    out["x"] = sign * rows["estimate"] / rows["margin"]
    out["x_low"], out["x_high"] = ends / rows["margin"].to_numpy()
    out["reading"] = [PL.row_reading(r).partition(": ")[0] for _, r in rows.iterrows()]
    return out


def marker(source: str) -> str:
    return PROFILE_MARKERS.get(str(source).split(" ")[0], "P")


def forest(rows: pd.DataFrame, title: str = "", width: float = WIDTH_IN, beside: bool = False):
    """Effects in margins (``in_margins``): a row per distinct ``row`` (first on top), a
    marker per ``source`` in the same place in every row, coloured by plain reading,
    the margin a grey band, a cut interval an arrow head, the legend above. ``rows``: a
    judged family's rows indexed by key (``beside``: the legend right of the rows, where
    a page break cannot part them). Gids: ``source:key`` and ``.../interval``."""
    from matplotlib.lines import Line2D
    frame = in_margins(rows.infer_objects())
    labels = list(dict.fromkeys(frame["row"]))
    sources = list(dict.fromkeys(frame["source"]))
    one_each = bool((frame.groupby("row")["source"].nunique() <= 1).all())
    step = 0 if one_each else 0.75 / len(sources)
    per_row = 0.45 if one_each else 0.2 + 0.18 * len(sources)
    fig, ax = plt.subplots(figsize=(width, 1.4 + per_row * len(labels)), dpi=100,
                           layout="constrained")
    values = np.abs(frame[["x", "x_low", "x_high"]].to_numpy(dtype=float))
    limit = float(np.clip(np.ceil(1.1 * values[np.isfinite(values)].max(initial=0)), 3,
                          X_LIMIT))
    ax.axvspan(-1, 1, facecolor=BAND_COLOUR, edgecolor="0.8", hatch="///", lw=0, zorder=0,
               gid="equivalence-band")
    ax.axvline(0, color="0.4", lw=0.8, zorder=0.5)
    for key, r in frame.iterrows():
        y = labels.index(r["row"]) + (sources.index(r["source"]) - (len(sources) - 1) / 2) * step
        colour = READING_COLOURS.get(r["reading"], "black")
        lo, hi = np.clip([r["x_low"], r["x_high"]], -limit, limit)
        ax.plot([lo, hi], [y, y], color=colour, lw=2, gid=f"{r['source']}:{key}/interval")
        for end, cut, head in ((lo, r["x_low"] < -limit, "<"), (hi, r["x_high"] > limit, ">")):
            if cut:
                ax.plot(end, y, head, color=colour, markersize=6)
        shape = marker(r["source"])
        ax.plot(np.clip(r["x"], -limit, limit), y, shape, color=colour, gid=f"{r['source']}:{key}",
                markeredgecolor="black", markersize=13 if shape == "*" else 7)
    none = frame.groupby("row")["paper_sign"].apply(lambda s: (s.fillna(0) == 0).all())
    names = [str(t) + ("\n(paper: no difference)" if none[t] else "") for t in labels]
    wrap = 14 if beside else 30
    ax.set_yticks(range(len(labels)), ["\n".join(
        wrap_phrases(line, wrap) for line in n.split("\n"))
        for n in names], fontsize=FONT_PT)
    for y in range(1, len(labels)):
        ax.axhline(y - 0.5, color="0.85", lw=0.6, zorder=0)
    ax.set(ylim=(len(labels) - 0.5, -0.5), xlim=(-limit, limit))
    ax.set_xlabel(textwrap.fill("difference in margins; right of 0: the paper's direction",
                                32 if beside else 70), fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    ax.spines[["top", "right"]].set_visible(False)
    if title:
        ax.set_title(textwrap.fill(title, 70), fontsize=FONT_PT)
    handles = [Line2D([], [], color=c, lw=2, label=v) for v, c in READING_COLOURS.items()
               if v in set(frame["reading"])]
    handles += [] if one_each else [
        Line2D([], [], ls="", marker=marker(s), color="white", markeredgecolor="black",
               markersize=11 if marker(s) == "*" else 7, label=s) for s in sources]
    fig.legend(handles=handles, loc="outside right upper" if beside else "outside upper center",
               ncol=1 if beside else 3, fontsize=FONT_PT, frameon=False)
    return fig


def headline_forest(families: dict):
    """The introduction's figure: each chapter's headline and ``headlines.EXTRA``
    decision at each source of ``families``, a row per decision (``forest``)."""
    rows = []
    for claim, h in HEADLINES.items():
        title = CLAIM_TITLES[claim] + (" (star: cue-free pairs)" if claim == "sop_nsp"
                                       and "confirmatory" in families else "")
        wanted = [(h.key, title, h.key)]
        wanted += [(key, f"{title.split('.')[0]}. {name}", PROFILE_KEYS.get(key))
                   for key, (owner, name) in EXTRA.items() if owner == claim]
        for key, label, same in wanted:
            for source, f in families.items():
                found = key if key in f.index else same if same in f.index else None
                if found is not None:
                    rows.append(f.loc[found].to_frame().T.assign(row=label, source=source))
    return forest(pd.concat(rows), beside=True)


# -- the chapters' figures ----------------------------------------------------------------

def intervals(ax, frame: pd.DataFrame, conditions, labels=None, metric: str = CE,
              offset: float = 0.0, color=None, label=None):
    """Means and 95% intervals of ``metric`` for ``conditions``, left to right."""
    table = summarize(frame[frame["condition"].isin(conditions)], metric).reindex(conditions)
    x = np.arange(len(conditions)) + offset
    finite = np.isfinite(table["low"]) & np.isfinite(table["high"])
    errors = np.where(finite, [table["mean"] - table["low"], table["high"] - table["mean"]], 0)
    ax.errorbar(x, table["mean"], yerr=errors, fmt="o", capsize=3, color=color, label=label)
    ax.set_xticks(np.arange(len(conditions)), labels or [str(c) for c in conditions])
    ax.set_xlim(-0.5 + min(offset, 0), len(conditions) - 0.5 + max(offset, 0))
    return ax


def asymmetry(runs: pd.DataFrame, grouped: pd.DataFrame, small: int, H: int, schemes):
    """Chapter 3's figure: cross-entropy by sharing scheme at both E; under it, where
    trained, by the number of sharing groups G."""
    n = 2 if len(grouped) else 1
    fig, axes = plt.subplots(n, 1, squeeze=False, sharey=True, dpi=100,
                             figsize=(WIDTH_IN, 3.3 * n + 0.2), layout="constrained")
    top = axes[0, 0]
    for offset, e, colour in ((-0.08, small, "C0"), (0.08, H, "C1")):
        intervals(top, runs, [f"E={e}, {s}" for s in schemes], list(schemes), offset=offset,
                  color=colour, label=f"E = {e}" + (" = H" if e == H else ""))
    top.set(title="by the blocks shared across layers, at two embedding sizes E",
            xlabel="blocks shared across layers", ylabel=CE_LABEL_WRAPPED)
    top.legend()
    if n == 2:
        bottom = axes[1, 0]
        groups = list(dict.fromkeys(grouped["condition"]))
        intervals(bottom, grouped, groups, [g.split("=")[1] for g in groups])
        bottom.set(title=f"all blocks shared within each of G groups of layers (E = {small})",
                   xlabel="number of groups G (one group: all layers share)",
                   ylabel=CE_LABEL_WRAPPED)
        bottom.yaxis.set_tick_params(labelleft=True)
    return fig


def curves(runs: pd.DataFrame, x: str = "step", xscale: float = 1.0, xlabel: str = "step",
           conditions=None, differences=None):
    """Learning curves (mean over seeds, band their range) and under them each pair of
    ``differences`` (a minus b; None: the second minus the first, or each minus the
    first) along training, by step where both arms train the same steps, else by share."""
    names = [n for n in (conditions or dict.fromkeys(runs["condition"]))
             if any(isinstance(c, list) and c for c in runs.loc[runs["condition"] == n, "curve"])]
    if differences is None:
        differences = ([(names[0], names[1])] if len(names) == 2
                       else [(n, names[0]) for n in names[1:]])
    fig, axes = plt.subplots(2 if differences else 1, 1, squeeze=False, dpi=100,
                             figsize=(WIDTH_IN, 6.2 if differences else 3.6),
                             height_ratios=[1.2, 1] if differences else [1],
                             layout="constrained")
    ax, colours, heads, tails = axes[0, 0], {}, [], []
    for name in names:
        found = [pd.DataFrame(c) for c in runs.loc[runs["condition"] == name, "curve"]]
        found = [c for c in found if not c.empty]
        steps = found[0][x].to_numpy() * xscale
        values = np.stack([c[CE].to_numpy() for c in found])
        line, = ax.plot(steps, values.mean(0), label=str(name))
        colours[name] = line.get_color()
        ax.fill_between(steps, values.min(0), values.max(0), alpha=0.2)
        heads.append(np.nanmax(values[:, :1]))
        tails += [values[:, 1:]] if values.shape[1] > 1 else []
    title = "mean over seeds (band: the seeds' range)"
    low, high = (min(np.nanmin(t) for t in tails), max(np.nanmax(t) for t in tails)
                 ) if tails else (np.nan, np.nan)
    if max(heads, default=np.nan) > high + (high - low):  # the untrained start squashes the rest
        ax.set_ylim(top=high + 0.15 * (high - low))
        title += "\nthe first point lies above the axis"
    ax.set(xlabel=xlabel, ylabel=CE_LABEL_WRAPPED, title=title)
    ax.legend()
    if differences:
        _differences(axes[1, 0], runs, differences, colours, xscale if x == "step" else 1.0)
    return fig


def _differences(ax, runs: pd.DataFrame, pairs, colours: dict, xscale: float) -> None:
    """``curves``' lower panel: each pair's paired difference along training."""
    from ..studies.confirm_analysis import paired_along
    steps = {n: set(runs.loc[runs["condition"] == n, "steps"]) for p in pairs for n in p}
    same = all(len(steps[a] | steps[b]) == 1 for a, b in pairs)
    # each pair in the colour of the arm that tells it apart (pairs may share their first)
    own = 0 if len({a for a, _ in pairs}) == len(pairs) else 1
    for (a, b), style in zip(pairs, ("o-", "s--", "^:", "D-.") * len(pairs)):
        d = paired_along(runs, a, b)
        where = d["step"] * xscale if same else d["share"]
        colour = colours.get((a, b)[own]) if len(pairs) > 1 else "C0"
        ax.fill_between(where, d["low"], d["high"], color=colour, alpha=0.25, lw=0)
        ax.plot(where, d["mean"], style, ms=4, color=colour, label=f"{a} minus {b}")
    ax.axhline(0, color="0.4", lw=0.8, ls="--")
    ax.set(xlabel="step" if same else "share of training (each arm's own schedule)",
           ylabel="difference (nats)")
    if len(pairs) == 1:
        ax.set_title(textwrap.fill(f"{pairs[0][0]} minus {pairs[0][1]}, paired by seed: "
                                   f"mean, 95% interval", 70))
    else:
        ax.set_title("paired by seed: mean, 95% interval")
        ax.legend()


def embedding_sweep(runs: pd.DataFrame, sizes):
    """Chapter 8's figure: cross-entropy by embedding size, not shared and all shared."""
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 3.6), dpi=100, layout="constrained")
    for offset, sharing, colour in ((-0.06, "none", "C0"), (0.06, "all", "C1")):
        intervals(ax, runs, [f"{sharing}, E={e}" for e in sizes], [str(e) for e in sizes],
                  offset=offset, color=colour, label=f"{sharing} shared")
    ax.set(xlabel="embedding size E", ylabel=CE_LABEL)
    ax.legend()
    return fig


def transitions(runs: pd.DataFrame):
    """Figure 1: L2 distance and angle per layer, trained (solid) and at random init."""
    fig, axes = plt.subplots(2, 1, figsize=(WIDTH_IN, 6.4), dpi=100, sharex=True,
                             layout="constrained")
    for ax, measure_, label in zip(axes, ("l2", "angle"), ("L2 distance", "angle (degrees)")):
        for name, colour in zip(dict.fromkeys(runs["condition"]), ("C0", "C1")):
            part = runs[runs["condition"] == name]
            for prefix, style, state in (("", "-", "trained"), ("control_", "--", "random init")):
                values = [v for v in part.get(f"{prefix}transition_{measure_}", [])
                          if isinstance(v, list)]
                if values:
                    mean = np.mean(values, axis=0)
                    ax.plot(np.arange(1, len(mean) + 1), mean, style, color=colour,
                            label=f"{name}, {state}")
        ax.set(ylabel=label, title=f"{label.split(' (')[0]} between each layer's input and output")
    axes[1].set_xlabel("layer")
    axes[1].xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    axes[0].xaxis.set_tick_params(labelbottom=True)
    if axes[0].get_lines():
        axes[0].legend(ncol=2)
    return fig


def sop_nsp(runs: pd.DataFrame):
    """Chapter 4's figure: probe accuracy on SOP and NSP pairs (majority dashed), and
    under it the cross-entropy, by objective."""
    conditions = list(dict.fromkeys(runs["condition"]))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(WIDTH_IN, 6.2), dpi=100,
                                      layout="constrained")
    for offset, pairs, colour in ((-0.08, "sop", "C0"), (0.08, "nsp", "C1")):
        intervals(top, runs, conditions, metric=f"{pairs}_accuracy_probe", offset=offset,
                  color=colour, label=f"{pairs.upper()} pairs")
        top.axhline(runs[f"{pairs}_majority"].iloc[0], ls="--", color=colour, lw=1)
    top.set(title="probe accuracy on held-out pairs\n(dashed: each set's majority share)",
            xlabel="pretraining objective", ylabel="probe accuracy")
    # beside the panels: inside, the legend hid a majority line
    fig.legend(*top.get_legend_handles_labels(), loc="outside right upper", frameon=False)
    intervals(bottom, runs, conditions, color="black")  # not a pair set's colour
    bottom.set(title="cross-entropy at [MASK] on the common held-out set",
               xlabel="pretraining objective", ylabel=CE_LABEL_WRAPPED)
    return fig

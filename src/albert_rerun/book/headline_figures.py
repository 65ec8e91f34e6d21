"""The headline decisions as figures: a chapter box's small figure, the headline
decision at each profile (``headline_figure``), and the introduction's picture of every
chapter's headline at every profile, coloured by its plain reading
(``headline_forest``). Each draws the paper's direction right of 0.
"""
from __future__ import annotations

import numpy as np

from . import plain as PL
from .headlines import EXTRA, EXTRA_NAMES, HEADLINES

FIGURE_WIDTH_IN = 5.0  # drawn at 100 dpi: 500 px, shown at its own size, under the column
FONT_PT = 10  # 10 pt at 100 dpi: 14 px on the page


# what a claim's profiles measure where the confirmatory test measures something else
# (chapter 4's cue-free confirmatory SOP result beside profile numbers on pairs that
# keep the segment-cut cue)
PAIRS = {"sop_nsp": {"confirmatory": "cue-free pairs", None: "cut-cue pairs"}}


def _pairs(claim: str, profile: str) -> str:
    notes = PAIRS.get(claim, {})
    return notes.get(profile, notes.get(None, "")) if notes else ""


def headline_figure(claim: str, families: dict):
    """The headline decision at each profile: its difference in margins with the 95%
    interval (cut at the edge with an arrow), turned so that the paper's direction is
    right of 0, the margin as a grey band, 0 as a line. Returns the matplotlib figure."""
    import matplotlib.pyplot as plt
    h = HEADLINES[claim]
    rows = [(p, f.loc[h.key]) for p, f in families.items() if h.key in f.index]
    fig, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 0.55 * len(rows) + 0.9), dpi=100)
    # the axis holds every interval (and the margin), up to 12 margins; an interval
    # past it is cut with an arrow
    ends = [abs(float(r[k]) / float(r["margin"])) for _, r in rows for k in ("low", "high")
            if np.isfinite(float(r[k]))]
    limit = float(min(12, max(2, np.ceil(max(ends, default=0) * 1.05))))
    ax.axvspan(-1, 1, color="0.88", zorder=0, label="within the margin")
    ax.axvline(0, color="0.4", lw=0.8)
    for y, (profile, row) in enumerate(reversed(rows)):
        m = float(row["margin"])
        est, low, high = (x / m for x in PL.paper_positive(row))
        lo, hi = max(low, -limit), min(high, limit)
        ax.plot([lo, hi], [y, y], color="black", lw=1.6)
        for end, cut, sign in ((lo, low < -limit, -1), (hi, high > limit, 1)):
            if cut:
                ax.annotate("", (end + 0.25 * sign, y), (end, y),
                            arrowprops={"arrowstyle": "->", "lw": 1.2})
        ax.plot([min(max(est, -limit), limit)], [y], "o", color="black")
    ax.set_yticks(range(len(rows)), [p + (f"\n({_pairs(claim, p)})" if _pairs(claim, p)
                                          else "") for p, _ in reversed(rows)],
                  fontsize=FONT_PT)
    ax.set_xlim(-limit - 0.4, limit + 0.4)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    side = "paper: about 0" if int(rows[0][1]["paper_sign"]) == 0 else \
        "right of 0: the paper's direction"
    ax.set_xlabel(f"difference in margins ({side})", fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    fig.tight_layout()
    return fig


SHORT = {"asymmetry": "3. attention vs FFN", "sop_nsp": "4. SOP vs NSP",
         "dropout": "5. dropout", "wall_clock": "6. wide ALBERT vs BERT",
         "transitions": "7. transitions", "embedding_sweep": "8. small E"}
READING_COLOURS = {PL.HOLDS: "tab:green", PL.TINY: "tab:olive", PL.NO_DIFFERENCE: "tab:blue",
                   PL.REVERSED: "tab:red", PL.REVERSED_TINY: "tab:pink",
                   PL.DIFFERS: "tab:red", PL.UNDECIDED: "0.45", PL.NOT_TESTABLE: "0.75"}
PROFILE_MARKERS = {"smoke": "^", "cpu": "o", "cpu-long": "D", "gpu": "s",
                   "confirmatory": "*"}


# a confirmatory primary outside ``HEADLINES`` and the profiles' decision of the same
# comparison, drawn in its row beside the star (sharing every layer at E = H: all shared
# minus not shared, the same arms and sign at every profile)
PROFILE_KEYS = {"confirm/sharing-cost": "asymmetry/all-none/E=H"}


def _wrap(title: str) -> str:
    import textwrap
    return textwrap.fill(title, 22)


def headline_forest(families: dict):
    """The introduction's picture: each chapter's headline decision at each source of
    results (the confirmatory test, the profiles), in margins, turned so that right of 0
    is the paper's direction in every row, coloured by its plain reading, drawn 660 px
    wide with 10 pt text. One row per chapter, its sources one under another, told
    apart by their marker; the legend above the first row. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from .plain import row_reading
    chapters = []  # (title, [(profile, row)])
    for claim, h in HEADLINES.items():
        found = [(p, f.loc[h.key]) for p, f in families.items() if h.key in f.index]
        if found:
            title = SHORT[claim]
            if "confirmatory" in dict(found) and _pairs(claim, "confirmatory"):
                title += f" (star: {_pairs(claim, 'confirmatory')})"
            chapters.append((title, found))
        for key, (owner, _) in EXTRA.items():  # the other primary decisions, a row each
            same = PROFILE_KEYS.get(key)  # the profiles' decision of the same comparison
            extra = [(p, f.loc[key] if key in f.index else f.loc[same])
                     for p, f in families.items() if key in f.index or same in f.index]
            if owner == claim and extra:
                chapters.append((f"{SHORT[claim].split('.')[0]}. {EXTRA_NAMES[key]}",
                                 extra))
    # each source keeps its place within every row (the first on top)
    slots = {p: i for i, p in enumerate(families)}
    most = max(len(slots), 1)
    fig, ax = plt.subplots(figsize=(6.6, (0.18 * most + 0.2) * len(chapters) + 1.9),
                           dpi=100)
    estimates = [abs(float(r["estimate"]) / float(r["margin"]))
                 for _, found in chapters for _, r in found]
    limit = float(min(15, max(3, np.ceil(max(estimates, default=0)) + 1)))
    ax.axvspan(-1, 1, color="0.88", zorder=0)
    ax.axvline(0, color="0.4", lw=0.8)
    labels, verdicts = [], []
    step = 0.8 / most  # the sources' spacing within a row (rows 1 apart)
    for y, (title, found) in enumerate(chapters):
        if y:
            ax.axhline(y - 0.5, color="0.85", lw=0.6, zorder=0)
        for profile, row in found:
            at = y + (slots[profile] - (most - 1) / 2) * step
            m = float(row["margin"])
            sign = -1.0 if int(row.get("paper_sign", 0) or 0) < 0 else 1.0
            est = sign * float(row["estimate"]) / m
            low, high = sorted(sign * float(row[k]) / m for k in ("low", "high"))
            reading = row_reading(row).partition(": ")[0]
            verdicts.append(reading)
            colour = READING_COLOURS[reading]
            lo, hi = max(low, -limit), min(high, limit)
            ax.plot([lo, hi], [at, at], color=colour, lw=2)
            for end, cut, way in ((lo, low < -limit, -1), (hi, high > limit, 1)):
                if cut:
                    ax.annotate("", (end + 0.06 * limit * way, at), (end, at),
                                arrowprops={"arrowstyle": "->", "lw": 1.2, "color": colour})
            marker = PROFILE_MARKERS.get(profile, "o")
            ax.plot([min(max(est, -limit), limit)], [at], marker, color=colour,
                    markeredgecolor="black", markersize=13 if marker == "*" else 7)
        none = int(found[0][1].get("paper_sign", 0) or 0) == 0
        labels.append(_wrap(title) + ("\n(paper: no difference)" if none else ""))
    ax.set_yticks(range(len(chapters)), labels, fontsize=FONT_PT)
    ax.set_ylim(len(chapters) - 0.5, -0.5)
    ax.set_xlim(-1.1 * limit, 1.1 * limit)
    ax.set_xlabel("difference in margins; right of 0: the paper's direction",
                  fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    handles = [Line2D([], [], color=c, lw=2, label=v)
               for v, c in READING_COLOURS.items() if v in verdicts]
    handles += [Line2D([], [], ls="", marker=PROFILE_MARKERS.get(p, "o"), color="white",
                       markeredgecolor="black", label=p,
                       markersize=11 if PROFILE_MARKERS.get(p) == "*" else 7)
                for p in families]
    legend_rows = -(-len(handles) // 4)
    top = 1 - (0.3 * legend_rows + 0.1) / fig.get_figheight()
    fig.legend(handles=handles, loc="upper center", ncol=4, fontsize=FONT_PT,
               frameon=False, bbox_to_anchor=(0.5, 1.0))
    fig.tight_layout(rect=(0, 0, 1, top))
    return fig

"""The book's pictures of what holds: a forest plot and effects against compute.

Both take ``family``: the table ``stats.holm`` returns (index: decision key; columns
claim, label, estimate, low, high, margin, paper_sign, unit, verdict, verdict_holm),
with a ``profile`` column, one family per profile concatenated.

Effects come in different units (nats, accuracy points, degrees...), so every one is
drawn divided by its margin of practical equivalence: the band of equivalence is then
[-1, 1] for all of them, and an interval inside it means "no difference that matters".
Intervals wider than ``X_LIMIT`` margins (one seed gives an infinite one) are cut at
the edge of the plot, and the cut end is drawn as an arrow head.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats.inference import is_interim

X_LIMIT = 10.0  # the widest the effect axis goes, in margins
PROFILE_MARKERS = {"smoke": "^", "cpu": "o", "cpu-long": "D", "gpu": "s"}
# Where the paper says there is no difference: a mark no profile uses (it was a hollow
# diamond, cpu-long's marker, review).
PAPER_NONE_MARKER = "X"
VERDICT_COLOURS = {"reproduced": "tab:green", "contradicted": "tab:red",
                   "equivalent": "tab:blue", "inconclusive": "tab:gray",
                   "not testable at this scale": "0.6"}
# The competence gate's stages (stats.gate), drawn by the marker's fill: hollow, not
# testable (the interval is shown all the same, dashed); half filled, early training;
# filled, past the bigram rung (and decisions about no trained model).
STAGE_FILL = {"not testable": "none", "early training": "left",
              "past the bigram rung": "full", "no model": "bottom", "": "full"}
CHECK_COLOUR = "tab:purple"  # a check of the test sets (no trained model, no paper figure)
BAND_COLOUR = "0.88"
PAPER_COLOUR = "0.35"
# Each claim's title in words (issue #41: titles were code keys such as ``sop_nsp``)
CLAIM_TITLES = {"asymmetry": "3. attention vs FFN", "sop_nsp": "4. SOP vs NSP",
                "dropout": "5. dropout", "wall_clock": "6. wide ALBERT vs BERT",
                "transitions": "7. transitions", "embedding_sweep": "8. small E",
                "downstream": "downstream: pretrained vs random init"}
# The ledger's figures, one per group of claims, so that none has more than 12 rows nor
# 8 legend entries (issue #41: one forest of 22 rows and 14 legend entries); a claim
# not named here gets a figure of its own after these.
LEDGER_PARTS = (("asymmetry",), ("sop_nsp", "dropout"), ("wall_clock", "transitions"),
                ("embedding_sweep", "downstream"))
FONT_PT = 8  # at 100 dpi, 11 px: the smallest text of the ledger's figures
WIDTH_IN = 6.6  # drawn for the text column, 660 px at 100 dpi
REQUIRED = ("claim", "label", "estimate", "low", "high", "margin", "paper_sign",
            "verdict", "verdict_holm", "profile")


def claim_title(claim: str) -> str:
    """A claim's title in words (``CLAIM_TITLES``)."""
    return CLAIM_TITLES.get(claim, claim.replace("_", " "))


def parts(family: pd.DataFrame) -> list:
    """``family`` cut into the ledger's figures (``LEDGER_PARTS``): one frame per group
    of claims present, in that order, then one per claim the groups do not name."""
    present = list(dict.fromkeys(family["claim"]))
    groups = [[c for c in group if c in present] for group in LEDGER_PARTS]
    named = {c for group in LEDGER_PARTS for c in group}
    groups += [[c] for c in present if c not in named]
    return [family[family["claim"].isin(group)] for group in groups if group]


def scaled(family: pd.DataFrame) -> pd.DataFrame:
    """``family`` with the estimate and its interval in margins (x, x_low, x_high),
    positive the paper's direction."""
    missing = [c for c in REQUIRED if c not in family.columns]
    if missing:
        raise ValueError(f"the family lacks columns {missing} (stats.holm plus 'profile')")
    if (family["margin"] <= 0).any():
        bad = list(family.index[family["margin"] <= 0])
        raise ValueError(f"decisions {bad} have no positive margin to scale by")
    out = family.copy()
    # one sign on every panel: positive is the paper's direction (a decision whose
    # paper sign is -1 is drawn the other way round, its label turned)
    flip = family["paper_sign"].astype(int) < 0
    sign = np.where(flip, -1.0, 1.0)
    out["x"] = sign * family["estimate"] / family["margin"]
    out["x_low"] = np.where(flip, -family["high"], family["low"]) / family["margin"]
    out["x_high"] = np.where(flip, -family["low"], family["high"]) / family["margin"]
    out.loc[flip, "paper_sign"] = 1
    if "label" in out:
        from .headlines import turned_label
        out.loc[flip, "label"] = out.loc[flip, "label"].map(lambda t: turned_label(str(t)))
    return out


def _limit(frame: pd.DataFrame) -> float:
    """Half the width of the effect axis: a little past the widest finite value, at least
    2.5 margins (the band stays visible), at most X_LIMIT."""
    values = frame[["x", "x_low", "x_high"]].to_numpy(dtype=float)
    values = np.abs(values[np.isfinite(values)])
    return float(np.clip(1.15 * values.max(initial=0), 2.5, X_LIMIT))


def marker(profile: str) -> str:
    return PROFILE_MARKERS.get(profile, "D")


def _rows(frame: pd.DataFrame) -> list:
    """The decision keys in the order they first appear, grouped by claim."""
    keys = list(dict.fromkeys(frame.index))
    claims = list(dict.fromkeys(frame["claim"]))
    claim_of = frame.groupby(level=0)["claim"].first()
    return sorted(keys, key=lambda k: (claims.index(claim_of[k]), keys.index(k)))


def _offsets(profiles: list, spread: float = 0.3) -> dict:
    """Each profile's vertical offset within a row, so that profiles sit side by side."""
    if len(profiles) == 1:
        return {profiles[0]: 0.0}
    return dict(zip(profiles, np.linspace(-spread / 2, spread / 2, len(profiles))))


def _interval(ax, x, low, high, y, colour, style, gid, limit, stage: str = ""):
    """One effect with its interval on a row; cut ends get an arrow head; the marker's
    fill is the decision's stage (``STAGE_FILL``)."""
    lo, hi = np.clip([low, high], -limit, limit)
    fill = STAGE_FILL.get(stage, "full")
    ax.plot([lo, hi], [y, y], color=colour, linewidth=1.6, gid=f"{gid}/interval",
            linestyle="--" if fill == "none" else "-")
    for end, cut, head in ((lo, low < -limit, "<"), (hi, high > limit, ">")):
        if cut:
            ax.plot(end, y, head, color=colour, markersize=6)
    ax.plot(np.clip(x, -limit, limit), y, style, color=colour, markersize=7,
            markeredgecolor="black", markeredgewidth=0.6, gid=gid,
            fillstyle="full" if fill == "none" else fill,
            markerfacecolor="white" if fill == "none" else colour,
            markerfacecoloralt="white")


def _band(ax, vertical: bool = True):
    """The band of practical equivalence, +-1 margin, and the line of no difference."""
    span = ax.axvspan if vertical else ax.axhspan
    span(-1, 1, color=BAND_COLOUR, zorder=0, gid="equivalence-band")
    (ax.axvline if vertical else ax.axhline)(0, color="0.5", linewidth=0.8, zorder=0.5)


def _paper_direction(ax, sign: int, y: float, limit: float, gid: str):
    """The paper's direction, drawn in the top of a row clear of the intervals: a
    triangle near the edge on the paper's side, or a hollow diamond at zero where the
    paper says there is no difference."""
    top = y - 0.32
    if sign == 0:
        ax.plot(0, top, PAPER_NONE_MARKER, color=PAPER_COLOUR, markersize=7, gid=gid)
    else:
        ax.plot(sign * limit * 0.93, top, ">" if sign > 0 else "<", color=PAPER_COLOUR,
                markersize=7, gid=gid)


def _verdict_text(row) -> str:
    """A profile's verdict on one row, Holm's (the colour of its text and marker); the
    one at 5% on a second line where it differs; the stage is the marker's fill."""
    stage = row.get("stage", "")
    who = f"{row['profile']} (interim)" if is_interim(row) else row["profile"]
    if stage == "not testable":
        return f"{who}: not testable"
    if stage == "no model":
        return f"{who}: check,\n{row['verdict']} at 5%"
    if row["verdict"] == row["verdict_holm"]:
        return f"{who}: {row['verdict_holm']}"
    return f"{who}: {row['verdict_holm']}\n(at 5%: {row['verdict']})"


def _profile_label(frame: pd.DataFrame, profile: str) -> str:
    rows = frame[frame["profile"] == profile]
    interim = any(is_interim(r) for _, r in rows.iterrows())
    return f"{profile} profile" + (" (interim: still training)" if interim else "")


def _legend(ax, profiles: list, frame: pd.DataFrame | None = None):
    """Below the plot, at most 8 entries: the band, the profiles' markers, the paper's
    marks and a check of the test sets, those the figure draws. The verdict is written in
    its colour beside each row and the stage is the marker's fill (the caption says so):
    a key of colours and fills made 14 entries (issue #41)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    handles = [Patch(color=BAND_COLOUR, label="within ±1 margin")]
    handles += [Line2D([], [], linestyle="", marker=marker(p), color="white",
                       markeredgecolor="black",
                       label=_profile_label(frame, p) if frame is not None
                       else f"{p} profile") for p in profiles]
    stages = set(frame["stage"]) if frame is not None and "stage" in frame else {""}
    signs = set(frame["paper_sign"]) if frame is not None else {1, 0}
    if signs - {0}:
        handles.append(Line2D([], [], linestyle="", marker=">", color=PAPER_COLOUR,
                              label="paper's direction"))
    if 0 in signs:
        handles.append(Line2D([], [], linestyle="", marker=PAPER_NONE_MARKER,
                              color=PAPER_COLOUR, label="paper: no difference"))
    if "no model" in stages:
        handles.append(Line2D([], [], linestyle="-", marker="o", color=CHECK_COLOUR,
                              fillstyle="bottom", markerfacecoloralt="white",
                              markeredgecolor="black",
                              label="a check of the test sets (outside Holm)"))
    ax.figure.legend(handles=handles, loc="outside lower center", ncol=2,
                     fontsize=FONT_PT, frameon=False)


def forest(family: pd.DataFrame, ax=None):
    """Every decision's effect in margins with its 95% interval, one row per decision.

    The shaded band is practical equivalence; a triangle at the edge marks the side the
    paper predicts (a cross at 0: the paper predicts no difference); the marker's shape
    is the profile, its colour the Holm-adjusted verdict, and the text on the right,
    in the same colour, gives each profile's Holm verdict (and the one at 5% where it
    differs). Drawn for the text column (660 px); the ledger draws one per group of
    claims (``parts``), of at most 12 rows. Returns the axes; every decision's marker has
    the gid ``profile:key``."""
    import matplotlib.pyplot as plt
    frame = scaled(family)
    keys = _rows(frame)
    profiles = list(dict.fromkeys(frame["profile"]))
    if ax is None:
        per_row = 0.34 + 0.2 * max(0, len(profiles) - 1)
        _, ax = plt.subplots(figsize=(WIDTH_IN, 1.3 + per_row * len(keys)), dpi=100,
                             layout="constrained")
    limit = _limit(frame)
    offsets = _offsets(profiles)
    _band(ax)
    for y, key in enumerate(keys):
        rows = frame.loc[[key]]
        if rows.get("stage", pd.Series([""])).iloc[0] != "no model":  # no paper figure
            _paper_direction(ax, int(rows["paper_sign"].iloc[0]), y, limit, f"paper:{key}")
        lines = []
        for _, row in rows.iterrows():
            gid = f"{row['profile']}:{key}"
            check = row.get("stage", "") == "no model"  # a check of the test sets
            colour = CHECK_COLOUR if check else VERDICT_COLOURS[row["verdict_holm"]]
            _interval(ax, row["x"], row["x_low"], row["x_high"], y + offsets[row["profile"]],
                      colour, marker(row["profile"]), gid, limit, row.get("stage", ""))
            lines.append((_verdict_text(row), colour))
        _verdict_lines(ax, y, lines, key)
    labels = [_row_label(frame.loc[[k]].iloc[0]) for k in keys]
    ax.set_yticks(range(len(keys)), labels, fontsize=FONT_PT)
    ax.tick_params(axis="x", labelsize=FONT_PT)
    ax.set_ylim(len(keys) - 0.5, -0.5)  # first decision on top
    ax.set_xlim(-limit, limit)
    ax.set_xlabel("effect / margin (95% interval)", fontsize=FONT_PT + 1)
    ax.set_title(" · ".join(claim_title(c) for c in dict.fromkeys(frame["claim"])),
                 fontsize=FONT_PT + 2)
    _claim_separators(ax, frame, keys)
    _legend(ax, profiles, frame)
    return ax


def _verdict_lines(ax, y: float, lines: list, key: str) -> None:
    """Right of row ``y``: each profile's verdict text in its verdict's colour, one
    under another (the first carries the gid ``verdict:<key>`` and all the text)."""
    from matplotlib import colors
    texts = "\n".join(t for t, _ in lines)
    n = texts.count("\n") + 1
    ax.text(1.02, y, texts, transform=ax.get_yaxis_transform(), va="center",
            fontsize=FONT_PT, gid=f"verdict:{key}", color="none")
    # the same text drawn again line by line, coloured, over the invisible whole
    line = 0
    for text, colour in lines:
        shade = colors.to_rgb(colour)
        darker = tuple(0.8 * c for c in shade)  # light greys read poorly as text
        for part in text.split("\n"):
            ax.annotate(part, (1.02, y), xycoords=("axes fraction", "data"),
                        xytext=(0, FONT_PT * 1.2 * ((n - 1) / 2 - line)),
                        textcoords="offset points", va="center", fontsize=FONT_PT,
                        color=darker, annotation_clip=False)
            line += 1


def _row_label(row) -> str:
    """The row's claim, decision and margin, wrapped so that long labels do not squeeze
    the plotting area away."""
    import textwrap
    unit = f" {row['unit']}" if "unit" in row and row["unit"] else ""
    return textwrap.fill(f"{row['label']} (margin {row['margin']:.3g}{unit})", 30)


def _claim_separators(ax, frame: pd.DataFrame, keys: list):
    """A thin line between the rows of consecutive claims."""
    claims = [frame.loc[[k], "claim"].iloc[0] for k in keys]
    for y in range(1, len(keys)):
        if claims[y] != claims[y - 1]:
            ax.axhline(y - 0.5, color="0.7", linewidth=0.6)


def scale_panel(family: pd.DataFrame, compute: dict, ax=None, paper_compute=None):
    """Per claim, a panel of each decision's effect (in margins) against the training
    compute of its arms at each profile present (FLOPs, log scale): how a claim moves
    with scale. A decision sits at the training FLOPs of one run of its costlier arm (the
    family's ``train_flops`` column, which ``ledger.book_decisions`` fills; the larger of
    the two arms', not their mean), so two decisions of one profile whose arms differ in
    size sit apart. ``compute`` maps profile to FLOPs (e.g. ``conditions.step_flops`` of
    the profile's base run times its steps): the place of a decision without
    ``train_flops`` (a check of the test sets, or a family without the column).
    ``paper_compute`` ({claim: FLOPs}) marks the paper's own run on the axis (a dotted
    line, gid ``paper-compute:<claim>``); no line is extrapolated to it. ``ax``: one axes
    per claim, or None for a new figure. Returns the axes in claim order; each point has
    the gid ``profile:key``."""
    import matplotlib.pyplot as plt
    frame = scaled(family)
    own = (frame["train_flops"] if "train_flops" in frame
           else pd.Series(np.nan, index=frame.index))
    frame["flops"] = own.where(own.notna() & (own > 0), frame["profile"].map(compute))
    missing = sorted(set(frame.loc[frame["flops"].isna(), "profile"]))
    if missing:
        raise ValueError(f"no training compute given for profiles {missing}")
    claims = list(dict.fromkeys(frame["claim"]))
    if ax is None:
        # one panel a row, drawn for the text column (issue #41: two a row, 931 px wide,
        # were shown at 660 px with 7-px legends); room under each for its legend
        heights = [2.3 + 0.34 * frame.loc[frame["claim"] == c].index.nunique()
                   for c in claims]
        _, ax = plt.subplots(len(claims), 1, figsize=(WIDTH_IN, sum(heights)), dpi=100,
                             squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": heights})
    axes = list(np.ravel(ax))
    if len(axes) < len(claims):
        raise ValueError(f"{len(claims)} claims need as many axes, got {len(axes)}")
    for extra in axes[len(claims):]:
        extra.set_visible(False)
    for panel, claim in zip(axes, claims):
        _claim_panel(panel, frame[frame["claim"] == claim])
        if paper_compute and claim in paper_compute:
            _paper_compute(panel, paper_compute[claim], claim)
        panel.set_title(claim_title(claim), fontsize=FONT_PT + 2)
    return axes[:len(claims)]


def _paper_compute(ax, flops: float, claim: str):
    """The paper's own run on the compute axis: a dotted line where it falls within the
    measured range, else a note at the right edge with its FLOPs and how many times the
    largest measured run's it is (review: an axis stretched to reach it, six orders of
    magnitude past ours, drew cpu and cpu-long, four times apart, on top of each
    other)."""
    low, high = ax.get_xlim()
    if flops <= high:
        ax.axvline(flops, color=PAPER_COLOUR, linestyle=":", linewidth=1,
                   gid=f"paper-compute:{claim}")
        ax.annotate("paper", (flops, 1), xycoords=("data", "axes fraction"),
                    xytext=(-2, -2), textcoords="offset points", ha="right", va="top",
                    fontsize=FONT_PT, color=PAPER_COLOUR)
        return
    ax.annotate(f"paper: {flops:.1e} FLOPs,\n{flops / high:,.0f}x this axis' end \u2192",
                (1, 1), xycoords="axes fraction", xytext=(-2, -2), textcoords="offset points",
                ha="right", va="top", fontsize=FONT_PT, color=PAPER_COLOUR,
                gid=f"paper-compute:{claim}")


def _claim_panel(ax, frame: pd.DataFrame):
    """One claim: a line per decision through its profiles, ordered by compute (the
    ``flops`` column: where ``scale_panel`` places each row)."""
    _band(ax, vertical=False)
    limit = _limit(frame)
    for key in dict.fromkeys(frame.index):
        rows = frame.loc[[key]].sort_values("flops")
        y = np.clip(rows["x"].to_numpy(dtype=float), -limit, limit)
        line, = ax.plot(rows["flops"], y, linewidth=1, alpha=0.7,
                        label=rows["label"].iloc[0])
        for (_, row), value in zip(rows.iterrows(), y):
            low, high = np.clip([row["x_low"], row["x_high"]], -limit, limit)
            # as in the forest: the marker's fill is the stage (hollow: not testable);
            # a profile still training draws its interval dotted (its estimate interim)
            fill = STAGE_FILL.get(row.get("stage", ""), "full")
            ax.plot([row["flops"]] * 2, [low, high], color=line.get_color(), linewidth=1,
                    linestyle=":" if is_interim(row) else "-",
                    gid=f"{row['profile']}:{key}/interval")
            ax.plot(row["flops"], value, marker(row["profile"]), color=line.get_color(),
                    markeredgecolor="black", markeredgewidth=0.5,
                    fillstyle="full" if fill == "none" else fill,
                    markerfacecolor="white" if fill == "none" else line.get_color(),
                    markerfacecoloralt="white", gid=f"{row['profile']}:{key}")
            for end, raw in ((low, row["x_low"]), (high, row["x_high"]), (value, row["x"])):
                if abs(raw) > limit:  # cut at the edge: an arrow head says so, as in the forest
                    ax.plot(row["flops"], end, "^" if raw > 0 else "v",
                            color=line.get_color(), markersize=5,
                            gid=f"{row['profile']}:{key}/cut")
    ax.set_xscale("log")
    flops = frame["flops"].to_numpy(dtype=float)
    ax.set_xlim(flops.min() / 3, flops.max() * 3)  # the measured range, not the paper's
    from matplotlib.ticker import NullFormatter
    ax.xaxis.set_minor_formatter(NullFormatter())  # they printed over each other
    ax.set_ylim(-limit, limit)
    ax.set_xlabel("training FLOPs, one run of the costlier arm", fontsize=FONT_PT + 1)
    ax.set_ylabel("effect / margin", fontsize=FONT_PT + 1)
    ax.tick_params(labelsize=FONT_PT)
    # below the panel, each label wrapped to the panel's width: beside it, the legends
    # ran over the neighbouring panels (review)
    import textwrap
    handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, [textwrap.fill(t, 80) for t in labels], fontsize=FONT_PT,
              loc="upper center", bbox_to_anchor=(0.5, -0.2), frameon=False)

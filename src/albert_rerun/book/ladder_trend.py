"""Each primary decision against compute as the chapters draw it: ``gather`` (one ``Trend``
a decision), ``figure`` (the 4x budget and the forecast only before every run is stored)
and the phrases a chapter glues."""
from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from ..engine.store import results_dir
from ..stats.inference import mean_interval
from ..studies import confirm_analysis
from ..studies import ladder as L
from ..studies.confirm_analysis import PRIMARY, REVERSED, NotComplete
from ..studies.ladder import excludes_zero
from .confirmatory import turned_label
from .figures import FIGURE_WIDTH_IN, FONT_PT, WIDTH_IN
from .plain import difference

# each decision's arms A and B (registered difference A minus B) for ``plain_words``
ARMS_IN_WORDS = {"confirm/asymmetry": ("the FFN-shared model", "the attention-shared one"),
                 "confirm/sharing-cost": ("the all-shared model", "the not-shared one"),
                 "confirm/sop": ("the SOP-trained model's probe", "the NSP-trained model's"),
                 "confirm/dropout": ("the model with dropout", "the one without"),
                 "confirm/equal-time": ("the wide all-shared model",
                                        "the BERT-style model at equal time")}
HIGHER_IS_BETTER = ("points",)  # units of accuracy; the rest are losses (nats)
SOP_KEY = "confirm/sop"  # the decision whose premise is order learned


def _step(r, step: str, sign: int) -> str:
    """'with', 'against' or 'none': a step's interval beyond 0 on the slope's side or not."""
    low, high = r[f"{step} low"], r[f"{step} high"]
    if low > 0 or high < 0:
        return "with" if (low > 0) == (sign > 0) else "against"
    return "none"


NO_CHANGE_WORDS = "no change shown over either step or overall"


def plain_words(key: str, unit: str, r) -> str:
    """Which arm gains as training grows, and over which steps, from a ``trend_family`` row."""
    first, second = ARMS_IN_WORDS[key]
    p = r.get("p holm")
    no_trend = p is not None and np.isfinite(p) and p >= L.ALPHA
    if no_trend and not (excludes_zero(r, "1x-4x") or excludes_zero(r, "4x-16x")):
        return NO_CHANGE_WORDS  # no trend after Holm, and no step alone shows one
    sign = 1 if r["slope"] > 0 else -1
    how = "worse" if (sign > 0) != (unit in HIGHER_IS_BETTER) else "better"
    early, late = _step(r, "1x-4x", sign), _step(r, "4x-16x", sign)
    moved = f"{first} does {how} relative to {second}"
    back = "the difference moves back"
    if early == "with" and late == "with":
        return f"as training grows, {moved}, in both steps (1x to 4x, 4x to 16x)"
    if early == "with":
        return (f"from 1x to 4x, {moved}; from 4x to 16x, "
                + (back if late == "against" else "no further change is shown"))
    if late == "with":
        return (f"from 4x to 16x, {moved}; from 1x to 4x, "
                + (back if early == "against" else "no change is shown"))
    if no_trend:
        return "no trend shown overall after Holm's adjustment"  # a step may move back
    return f"over 1x to 16x as a whole, {moved}; neither step alone shows it"


@dataclass(frozen=True)
class Trend:
    """One primary decision on the ladder, in its chapter's sign (``sign`` -1: turned)."""

    key: str
    claim: str
    label: str
    unit: str
    paper_sign: int
    sign: int
    four: tuple  # (mean, low, high, seeds) of the 4x rung
    forecast: dict | None  # the committed forecast (estimate, low, high), registered sign
    table: dict | None  # ``ladder.trend_family``'s row, once the store is complete
    gap: dict | None = None  # {rung: (mean, low, high)} of the overfitting gap's difference
    registered_label: str = ""  # the registration's words, where the chapter turns them
    order: str | None = None  # SOP's first rung where order is learned ("" none, None n/a)

    def turned(self, value: float) -> float:
        return self.sign * float(value)

    def interval(self, estimate: float, low: float, high: float) -> tuple:
        """An estimate and its interval in the chapter's sign."""
        ends = sorted((self.turned(low), self.turned(high)))
        return self.turned(estimate), ends[0], ends[1]


def _chapter_sign(spec) -> tuple:
    first = next(s for s in PRIMARY if s.claim == spec.claim)
    if spec.key == first.key and spec.claim in REVERSED:
        return -1, turned_label(spec.claim, spec.label)
    return 1, spec.label


# each decision's label where the paper's direction is drawn positive (``paper_signs``)
PAPER_WORDS = {"confirm/asymmetry": "up means FFN sharing costs more than attention sharing",
               "confirm/sharing-cost": "up means sharing every layer costs",
               "confirm/sop": "up means SOP orders cue-free pairs better than NSP",
               "confirm/dropout": "up means dropout hurts",
               "confirm/equal-time": "up means the wide all-shared model wins at equal time"}


def gather(store=None, confirm_store=None, tables: dict | None = None,
           paper_signs: bool = False) -> dict:
    """{key: Trend} of the five decisions, chapters' sign (or ``paper_signs``: paper's up)."""
    from ..engine.store import read_json  # at call time: the rehearsal guards its reads
    given = store
    store = store or results_dir(L.STORE)
    confirm_store = confirm_store or results_dir(confirm_analysis.STORE)
    forecast = (read_json(store / L.FORECAST) or {}).get("forecast", {})
    try:
        tables = L.result_tables(given)[0] if tables is None else tables
    except NotComplete:
        if L.settled(L.progress(store)):
            raise  # every run is stored: the analysis must compute, not fall silent
        tables = None
    table = None if tables is None else tables["trend"]
    gaps = {} if tables is None else {
        key: {rung: (row["gap difference"], row["low"], row["high"])
              for rung, row in part.set_index("rung").iterrows()}
        for key, part in tables["gap differences"].groupby("key")}
    order = None if tables is None else L.first_rung_learning_order(tables["sop"]) or ""
    frames = ({"4x": L.rung_frame("4x", confirm_store)}
              if confirm_analysis.complete(confirm_store) else {})
    out = {}
    for spec in L.DECISIONS:
        d = L.differences(frames, spec).get("4x")
        i = mean_interval(d) if d is not None else None
        four = (i.mean, i.low, i.high, i.n) if i else (np.nan,) * 3 + (0,)
        sign, label = ((spec.paper_sign, PAPER_WORDS[spec.key]) if paper_signs
                       else _chapter_sign(spec))
        out[spec.key] = Trend(
            spec.key, spec.claim, label, spec.unit, sign * spec.paper_sign, sign, four,
            forecast.get(spec.key), None if table is None else table.loc[spec.key].to_dict(),
            gaps.get(spec.key), spec.label if sign == -1 else "",
            order if spec.key == SOP_KEY else None)
    return out


def excluded_before_holm_only(row) -> bool:
    """Whether the slope's unadjusted interval excludes 0 though Holm's test shows no trend."""
    return row["reading"] == L.NO_TREND and excludes_zero(row, "slope")


def no_slope(r) -> str:
    """'fewer than 3 paired seeds at 16x' where a row has no slope (amendment 5), else ''."""
    rungs = r.get("too few seeds at")
    if not isinstance(rungs, str) or not rungs:
        return ""
    return f"fewer than {L.MIN_SEEDS_TO_ANALYSE} paired seeds at {rungs}"


def planned_power(store=None) -> dict:
    """{key: (power, power with a 16x SD twice the 4x, slope (a))}; {} without a design."""
    design = L.stored_design(store) or {}
    n = len(L.SEEDS["16x"])
    return {key: (plan.get(f"power (a) at {n}"),
                  plan.get(f"power (a), 16x SD twice the 4x, at {n}"), plan.get("slope (a)"))
            for key, plan in design.get("plan", {}).items()}


def percent(share: float) -> str:
    """'73%', or 'over 99%' where it rounds to 100% (amendment 8)."""
    return "over 99%" if share >= 0.995 else f"{share:.0%}"


def tag(key: str) -> str:
    """A decision's short name from its key: 'confirm/sharing-cost' -> 'sharing cost'."""
    return key.split("/")[-1].replace("-", " ").replace("sop", "SOP")


def plain_label(r) -> str:
    """A row's reading in plain words, 'after Holm's adjustment' where that matters."""
    label = r["reading"].replace(" paper's sign", " paper")  # the findings pages' words
    if not no_slope(r) and excluded_before_holm_only(r):
        label += " after Holm's adjustment"
    return label


def claim_trends(trends: dict, claim: str) -> list:
    """The claim's ladder decisions, its headline first."""
    return [t for t in trends.values() if t.claim == claim]


# a tall figure's key in two columns: each entry short (its caption says more)
SHORT_KEYS = {"mean over a budget's seeds, 95% interval": "mean, 95% interval",
              "fitted slope (least squares through every seed)": "fitted slope",
              "the means joined (not on a line: no straight fit drawn)":
                  "means joined (no line fits)",
              "forecast for 16x, 95% prediction interval":
                  "16x forecast, 95% prediction interval",
              "the forecast's line, 1x through 4x": "forecast's line from 1x"}


def figure(trends: list, compact: bool = False):
    """A chapter's decisions against compute, a panel each, the paper's side shaded;
    ``compact``: the column's width and a short two-column key (the budgets page's five)."""
    complete = any(t.table is not None for t in trends)
    fig, axes = plt.subplots(len(trends), 1, squeeze=False, dpi=100,
                             figsize=(WIDTH_IN if compact else FIGURE_WIDTH_IN,
                                      (2.5 if complete else 2.2) * len(trends)
                                      + (0.6 if compact else 1.2)))
    for ax, t in zip(axes[:, 0], trends):
        _panel(ax, t, L.X, L.RUNGS)
    for ax in axes[:-1, 0]:  # the panels share their x axis: its label once, at the foot
        ax.set_xlabel("")
    seen = {}  # one legend for the panels, each entry once
    for ax in axes[:, 0]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    lines = -(-len(seen) // 2) if compact else len(seen)
    share = (0.2 + 0.22 * lines if seen else 0) / fig.get_figheight()  # a line an entry
    if seen:  # the complete ladder's legend at the head; before, at the foot
        fig.legend(list(seen.values()),
                   [SHORT_KEYS.get(k, k) if compact else k for k in seen],
                   loc="upper center" if complete else "lower center",
                   ncol=2 if compact else 1, fontsize=FONT_PT, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - share) if complete else (0, share, 1, 1))
    return fig


def _panel(ax, t: Trend, X: dict, RUNGS: dict) -> None:
    points = {"4x": t.four[:3]}
    if t.table is not None:
        points = {r: (t.table[f"{r} mean"], t.table[f"{r} low"], t.table[f"{r} high"])
                  for r in RUNGS}
    values, drawn = [], set()
    for rung, (m, lo, hi) in points.items():
        m, lo, hi = t.interval(m, lo, hi)
        if not np.isfinite(m):
            continue
        values += [lo, hi]
        drawn.add(rung)
        ax.errorbar([X[rung]], [m], yerr=[[m - lo], [hi - m]], fmt="o", color="black",
                    capsize=3, lw=1.6, label="mean over a budget's seeds, 95% interval")
    if t.table is not None and not no_slope(t.table):
        ns = np.array([t.table[f"{r} seeds"] for r in RUNGS], dtype=float)
        ms = np.array([t.turned(t.table[f"{r} mean"]) for r in RUNGS])
        xs = np.array([X[r] for r in RUNGS])
        if "curvature low" in t.table and excludes_zero(t.table, "curvature"):
            # the means are off one line (dropout's): a straight fit would mislead
            ax.plot(xs, ms, "-", color="0.5", lw=1, label="the means joined (not on a "
                    "line: no straight fit drawn)")
        else:
            b = t.turned(t.table["slope"])
            a = float((ns * ms).sum() / ns.sum() - b * (ns * xs).sum() / ns.sum())
            ax.plot([xs[0], xs[-1]], [a + b * xs[0], a + b * xs[-1]], "--", color="black",
                    lw=1, label="fitted slope (least squares through every seed)")
    if t.forecast:
        f, lo, hi = t.interval(t.forecast["estimate"], t.forecast["low"], t.forecast["high"])
        values += [lo, hi]
        drawn.add("16x")
        x = X["16x"] + (0.15 if t.table is not None else 0)
        ax.errorbar([x], [f], yerr=[[f - lo], [hi - f]], fmt="D", color="tab:orange",
                    capsize=3, lw=1.6, label="forecast for 16x, 95% prediction interval")
        if t.table is not None and np.isfinite(t.table["1x mean"]):  # 1x through 4x, on
            ax.plot([X["1x"], x], [t.turned(t.table["1x mean"]), f], ":",
                    color="tab:orange", lw=1.2, label="the forecast's line, 1x through 4x")
    finite = [v for v in values if np.isfinite(v)] or [-1.0, 1.0]
    low, high = min(0.0, *finite), max(0.0, *finite)
    pad = 0.15 * (high - low) or 1.0
    # each side of zero keeps at least a quarter of the axis, so both stay readable
    low, high = min(low - pad, -0.4 * (high - low)), max(high + pad, 0.4 * (high - low))
    ax.set_ylim(low, high)
    ax.axhline(0, color="0.4", lw=0.8)
    span = (0, high) if t.paper_sign > 0 else (low, 0) if t.paper_sign < 0 else None
    if span is not None:
        ax.axhspan(*span, color="tab:green", alpha=0.13, zorder=0)
        ax.text(5.45, span[0] + 0.5 * (span[1] - span[0]), "paper's\nside",
                fontsize=FONT_PT, color="tab:green", va="center", ha="right")
    ax.set_xlim(-0.9, 5.5)
    ax.set_xticks([X[r] for r in RUNGS], list(RUNGS), fontsize=FONT_PT)
    ax.set_xlabel("training budget: steps, times the 1x budget's (log scale)",
                  fontsize=FONT_PT)
    ax.tick_params(labelsize=FONT_PT)
    ax.set_ylabel(t.unit, fontsize=FONT_PT)
    # the reading beside its line, so that no line reads as a trend, and the slope it reads
    title = t.label if t.table is None else f"{tag(t.key)}: {t.label}\n{plain_label(t.table)}"
    if t.table is not None and not no_slope(t.table):
        r = t.table
        slope = difference(*t.interval(r["slope"], r["slope low"], r["slope high"]), t.unit)
        title += f" (Holm's p = {r['p holm']:.3f})\nslope {slope} per doubling"
    ax.set_title(title, fontsize=FONT_PT, loc="left")
    for rung in [r for r in RUNGS if r not in drawn]:  # the stopping rule holds it back
        ax.text(X[rung], 0.5, f"{rung}:\nnot yet\nshown", fontsize=FONT_PT, ha="center",
                va="center", color="0.35", transform=ax.get_xaxis_transform(),
                bbox={"facecolor": "white", "edgecolor": "0.8", "boxstyle": "round"})
    ax.spines[["top", "right"]].set_visible(False)

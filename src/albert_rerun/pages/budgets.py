"""The compute ladder as a reader meets it.

- ``values``: the numbers and short phrases of its findings page (book/budgets.md), of
  the introduction's lines on it and of the scale page (``at_scale.values``), a provider
  of ``book.values``. Every difference is turned so that positive is the paper's
  direction (the cost or the advantage the paper claims).
- ``write_ladder_parts``: the trend figure in that sign, and the registration page's
  generated parts (book/ladder.md: its record, progress, budgets, power and registered
  result, in the registered sign), each filled from a markdown template in
  ``book/templates/`` (``fill``): the sentences live there, this module gives numbers,
  tables and phrases of a few words.

Everything comes from the analysis as stored once (``ladder_result.result_tables``).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from ..studies import ladder as L
from ..studies.decisions import interval_text, signed
from . import ladder_trend as T

TEMPLATES = Path("book") / "templates"
KEY = re.compile(r"\{\{\s*(\w+)\s*\}\}")
# the decisions' names in the substitution keys: ladder_sharing_16x, ...
SHORT = {"confirm/asymmetry": "asymmetry", "confirm/sharing-cost": "sharing",
         "confirm/sop": "sop", "confirm/dropout": "dropout",
         "confirm/equal-time": "equal_time"}
FIGURE = "budgets-trends.png"  # in book/_generated/


def fill(name: str, values: dict, root: Path | None = None) -> str:
    """The template ``book/templates/<name>`` with each ``{{ key }}`` replaced by its
    value; a key without a value is an error, so no template sentence goes out unfilled."""
    from ..paths import repo_root
    text = ((root or repo_root()) / TEMPLATES / name).read_text()
    missing = sorted(set(KEY.findall(text)) - set(values))
    if missing:
        raise KeyError(f"{name}: no value for {missing}")
    return KEY.sub(lambda m: str(values[m.group(1)]), text)


# -- the findings, the paper's direction positive -------------------------------------------

def turned(row, mean: str, low: str, high: str) -> tuple:
    """(mean, low, high) of a registered-sign row, positive the paper's direction."""
    sign = int(row["paper_sign"]) or 1
    ends = sorted((sign * row[low], sign * row[high]))
    return sign * row[mean], ends[0], ends[1]


def interval(row, name: str, mean: str | None = None) -> str:
    """'+0.123 [+0.067, +0.180]': a row's ``name`` (or a rung's ``mean``) turned."""
    if mean is not None:
        m, lo, hi = turned(row, f"{name} mean", f"{name} low", f"{name} high")
    else:
        m, lo, hi = turned(row, name, f"{name} low", f"{name} high")
    return interval_text(m, lo, hi, row["unit"])


def _move(row, step: str) -> int:
    """+1 where a step's interval lies on the paper's side of 0, -1 on the other, 0 where
    it includes 0."""
    _, lo, hi = turned(row, step, f"{step} low", f"{step} high")
    return 1 if lo > 0 else -1 if hi < 0 else 0


def steps_phrase(row) -> str:
    """Which way each step of the ladder moved the difference, from each step's own
    interval (positive: toward the paper): 'grew from 1x to 4x, then held'."""
    if T.no_slope(row):
        return "not computed: too few seeds"
    early, late = _move(row, "1x-4x"), _move(row, "4x-16x")
    word = {1: "grew toward the paper", -1: "moved away from the paper"}
    if early == late == 0:
        return "no step shows a change"
    if early == late:
        faster = (" fastest from 4x to 16x" if T.excludes_zero(row, "curvature")
                  and abs(row["4x-16x"]) > abs(row["1x-4x"]) else "")
        return f"{word[early]} at both steps,{faster}".rstrip(",")
    if late == 0:
        return f"{word[early]} from 1x to 4x, then held"
    if early == 0:
        return f"held from 1x to 4x, then {word[late]}"
    return f"{word[early]} from 1x to 4x, then {word[late].split(' ', 1)[0]} back"


def forecast_phrase(row) -> str:
    """Where the 16x mean lies against its committed forecast's 95% interval."""
    if T.no_slope(row) or not math.isfinite(row.get("forecast", math.nan)):
        return "not tested"
    if row["forecast covers"]:
        return "inside its interval"
    m, _, _ = turned(row, "16x mean", "16x low", "16x high")
    _, lo, hi = turned(row, "forecast", "forecast low", "forecast high")
    return ("beyond it, further toward the paper" if m > hi else
            "short of it, less toward the paper")


def _range(part) -> str:
    """'75% to 88%': shares of training, low to high ('never' where none passed)."""
    if part["never"] == part["seeds"]:
        return "never"
    low, high = f"{part['low']:.0%}", f"{part['high']:.0%}"
    return low if low == high else f"{low} to {high}"


def findings_values(tables: dict, store=None) -> dict:
    """The ladder's keys (``values``) from its stored tables."""
    from ..studies import confirm_design as D
    from ..studies import ladder_curves
    trend = tables["trend"]
    powers = T.planned_power(store)
    out = {f"ladder_seeds_{r}": str(len(L.SEEDS[r])) for r in L.RUNGS}
    out.update({f"ladder_steps_{r}": f"{steps:,}" for r, steps in L.RUNGS.items()})
    for key, row in trend.iterrows():
        k = SHORT[key]
        for rung in L.RUNGS:
            out[f"ladder_{k}_{rung}"] = interval(row, rung, mean="mean")
        out[f"ladder_{k}_steps"] = steps_phrase(row)
        out[f"ladder_{k}_label"] = T.plain_label(row)
        out[f"ladder_{k}_holm"] = f"{row['p holm']:.3f}"
        out[f"ladder_{k}_forecast"] = interval(row, "forecast")
        out[f"ladder_{k}_forecast_result"] = forecast_phrase(row)
        power = powers.get(key)
        out[f"ladder_{k}_power"] = (T.percent(power[0]) if power and power[0] is not None
                                    and math.isfinite(power[0]) else "none planned")
        for name, column in (("slope", "slope"), ("early", "1x-4x"), ("late", "4x-16x")):
            out[f"ladder_{k}_{name}"] = ("–" if T.no_slope(row) else interval(row, column))
        out[f"ladder_{k}_unit"] = row["unit"]
    split = tables["gap split"]
    for key, row in split.iterrows():
        k = SHORT[key]
        row = {**row, "unit": "nats", "paper_sign": trend.loc[key, "paper_sign"]}
        for column in ("change", "training part", "gap part"):
            out[f"ladder_{k}_{column.replace(' ', '_')}"] = interval(row, column)
    inside = int(sum(forecast_phrase(r) == "inside its interval" for _, r in trend.iterrows()))
    out["ladder_forecasts_inside"] = f"{inside} of {len(trend)}"
    order = L.first_rung_learning_order(tables["sop"])
    out["ladder_sop_order"] = f"first at {order}" if order else "at no budget"
    # when each arm's 16x curve first scored below the left-bigram rung, scored on the
    # curves' own held-out sequences (ladder_curves)
    frame = L.rung_frame("16x", store)
    sequences = ladder_curves.curve_sequences(frame)
    level = ladder_curves.rung_level(ladder_curves.RUNG, sequences)
    passes = ladder_curves.first_below(frame, level)
    for k, spec_key in (("dropout", "confirm/dropout"), ("equal_time", "confirm/equal-time")):
        spec = next(s for s in L.DECISIONS if s.key == spec_key)
        d = ladder_curves.delay(passes, spec)
        out[f"ladder_{k}_crossing_a"] = _range(d["a"])
        out[f"ladder_{k}_crossing_b"] = _range(d["b"])
        out[f"ladder_{k}_crossing_apart"] = "yes" if d["apart"] else "no"
    out["ladder_crossing_sequences"] = f"{sequences:,}"
    out["ladder_crossing_level"] = f"{level:.3f}"
    whole = ladder_curves.rung_level("two-sided")
    means = frame.groupby("condition")[D.CE].mean()
    above = [arm for arm in L.ARMS if arm in means and not means[arm] < whole]
    out["ladder_16x_below_two_sided"] = f"{len(means) - len(above)} of {len(means)}"
    out["ladder_16x_above_two_sided"] = "; ".join(above) or "none"
    out["pilot_sharing_64x"] = pilot_cost()
    return out


def pilot_cost() -> str:
    """The long pilot's sharing cost at 64x on the whole held-out set (one seed, all
    shared minus BERT-style at E = H = 64: the sharing cost's arms), or '–' before both
    arms are stored."""
    from ..studies import long_pilot
    from ..studies.confirm_design import NotComplete
    try:
        runs = long_pilot.frame().set_index("condition")[long_pilot.CE]
    except NotComplete:
        return "–"
    shared, bert = long_pilot.ARMS
    return signed(float(runs[shared] - runs[bert]), 3)


def values(profile=None) -> dict:
    """Every key of the ladder's findings and the scale page (``book.values``' provider):
    the ladder's from its stored result, the scale page's from ``at_scale.values``. Before
    the result is stored, the ladder's keys read '–' (the stopping rule)."""
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder_result import result_tables
    from . import at_scale
    try:
        out = findings_values(result_tables()[0])
    except NotComplete:
        out = {}
    return {**out, **at_scale.values()}


def trend_figure(tables: dict, store=None):
    """The five decisions against the budget, the paper's direction up in every panel."""
    trends = T.gather(store, tables=tables, paper_signs=True)
    return T.figure(list(trends.values()))


def write_budgets_figure(generated: Path, store=None) -> Path | None:
    """``book/_generated/budgets-trends.png`` once the result is stored, else None."""
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder_result import result_tables
    from .figure_text import png
    import matplotlib.pyplot as plt
    try:
        tables = result_tables(store)[0]
    except NotComplete:
        return None
    fig = trend_figure(tables, store)
    path = generated / FIGURE
    path.write_bytes(png(fig))
    plt.close(fig)
    return path

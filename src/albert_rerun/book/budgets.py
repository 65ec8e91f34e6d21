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

Everything comes from the analysis as stored once (``ladder.result_tables``).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

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


NO_FURTHER = "no change shown (interval wide)"


def steps_phrase(row) -> str:
    """Which way each step of the ladder moved the difference, from each step's own
    interval (positive: toward the paper): 'grew toward the paper 1x–4x, then no change
    shown (interval wide)'. A step whose interval includes 0 shows
    no change, which is not a change held: the interval can hold a further move."""
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
        return f"{word[early]} 1x–4x, then {NO_FURTHER}"
    if early == 0:
        return f"no change shown 1x–4x (interval wide), then {word[late]}"
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
        for name, column in (("slope", "slope"), ("early", "1x-4x"), ("late", "4x-16x"),
                             ("curvature", "curvature")):
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
    out["ladder_sop_order"] = order or "none"
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
    out.update(time_ratio_values(tables["time ratios"]))
    out["ladder_crossing_sequences"] = f"{sequences:,}"
    out["ladder_crossing_level"] = f"{level:.3f}"
    whole = ladder_curves.rung_level("two-sided")
    means = frame.groupby("condition")[D.CE].mean()
    above = [arm for arm in L.ARMS if arm in means and not means[arm] < whole]
    out["ladder_16x_below_two_sided"] = f"{len(means) - len(above)} of {len(means)}"
    out["ladder_16x_above_two_sided"] = "; ".join(above) or "none"
    out["pilot_sharing_64x"] = pilot_cost()
    return out


FAIR = (0.9, 1.1)  # a wide arm's share of its partner's seconds read as equal time


def time_ratio_values(ratios) -> dict:
    """Equal time at 16x: each seed's wide arm's training seconds over its BERT-style
    partner's ('0.78, 0.68, 0.63, 0.98', by seed) and how many lie below ``FAIR``
    ('3 of 4': a share below 1 favours BERT-style)."""
    part = ratios[ratios["rung"] == "16x"].sort_values("seed")
    shares = [float(x) for x in part["wide / BERT-style seconds"]]
    below = sum(x < FAIR[0] for x in shares)
    return {"ladder_equal_time_16x_ratios": ", ".join(f"{x:.2f}" for x in shares),
            "ladder_equal_time_16x_short": f"{below} of {len(shares)}"}


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


PREFIXES = ("ladder_", "pilot_")  # keys this provider fills, on any page
OWN = ("budgets.md", "scale.md")  # pages whose every key it fills


def page_keys(root: Path | None = None) -> set:
    """The keys this provider fills that the pages of book/ use: every key of its own
    pages, and those of ``PREFIXES`` on any page (the introduction's)."""
    from ..paths import repo_root
    return {key for page in ((root or repo_root()) / "book").glob("*.md")
            for key in KEY.findall(page.read_text())
            if page.name in OWN or key.startswith(PREFIXES)}


def values(profile=None) -> dict:
    """Every key of the ladder's findings and the scale page (``book.values``' provider):
    the ladder's from its stored result, the scale page's from ``at_scale.values``. In a
    results store that lacks the runs (before the result is stored, or the tests' smoke
    store), each key a page uses that cannot be computed reads ``NOT_STORED``; with
    every run stored, a key left unfilled stays unfilled, so the build fails on it."""
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder import result_tables
    from . import at_scale
    from .pilot_page import NOT_STORED
    complete = True
    try:
        out = findings_values(result_tables()[0])
    except NotComplete:
        out, complete = {}, False
    scale = at_scale.values()
    complete = complete and "scale_moving" in scale and "pilot_ce_shared" in scale
    out.update(scale)
    if not complete:
        out.update({k: NOT_STORED for k in page_keys() - set(out)})
    return out


def trend_figure(tables: dict, store=None):
    """The five decisions against the budget, the paper's direction up in every panel."""
    trends = T.gather(store, tables=tables, paper_signs=True)
    return T.figure(list(trends.values()))


def write_budgets_figure(generated: Path, store=None) -> Path | None:
    """``book/_generated/budgets-trends.png``: a placeholder before the result is stored."""
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder import result_tables
    from .figure_text import png
    import matplotlib.pyplot as plt
    from .pilot_page import placeholder
    try:
        tables = result_tables(store)[0]
    except NotComplete:
        return placeholder(generated / FIGURE)
    fig = trend_figure(tables, store)
    path = generated / FIGURE
    path.write_bytes(png(fig))
    plt.close(fig)
    return path


# -- the registration page's generated parts (book/ladder.md), in the registered sign ---------

def _cell(row, name: str, unit: str) -> str:
    """'+0.012 [-0.004, +0.028]' of a row's ``name`` ('+0.100, no interval (no spread)'
    where the seeds agree exactly, amendment 5)."""
    if not math.isfinite(row[f"{name} low"]):
        return f"{signed(row[name], 3 if unit == 'nats' else 1)}, no interval (no spread)"
    return interval_text(row[name], row[f"{name} low"], row[f"{name} high"], unit)


def _rung(row, rung: str) -> str:
    """A rung's mean and 95% t-interval, with its seeds where fewer than planned."""
    seeds = int(row[f"{rung} seeds"])
    if not math.isfinite(row[f"{rung} mean"]):
        return f"– (n = {seeds})"
    text = interval_text(row[f"{rung} mean"], row[f"{rung} low"], row[f"{rung} high"],
                         row["unit"])
    return text + (f" (n = {seeds})" if seeds < len(L.SEEDS[rung]) else "")


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _name(key: str) -> str:
    return f"**{T.tag(key)}**"


def decisions_key(table) -> str:
    """The five decisions once, by their short names: difference, unit, paper's sign."""
    lines = ["| decision | difference, A minus B | unit | the paper's sign |",
             "|---|---|---|---|"]
    for key, row in table.iterrows():
        sign = {1: "+", -1: "−"}.get(int(row["paper_sign"]), "0")
        lines.append(f"| {_name(key)} | {row['decision']} | {row['unit']} | {sign} |")
    return "\n".join(lines)


def _power(power, unit: str) -> str:
    """'73% (22%) at +0.058': the planned power, with the 16x SD twice the 4x one in
    brackets, at slope (a) (amendments 7 and 8)."""
    if not power:
        return "no design stored"
    if power[0] is None or not math.isfinite(power[0]):
        return "– (no slope (a))"
    return (f"{T.percent(power[0])} ({T.percent(power[1])}) at "
            f"{signed(power[2], 3 if unit == 'nats' else 1)}")


def trend_table(table, powers: dict) -> str:
    """Each decision's budgets, slope, p before and after Holm, df, the registered
    reading and the planned power (a dagger: the slope's interval excludes 0 before
    Holm's adjustment only)."""
    lines = ["| decision | " + " | ".join(f"{r} ({len(L.SEEDS[r])} seeds planned)"
                                          for r in L.RUNGS)
             + " | slope per doubling of compute | p | Holm's p | df | reading | planned "
             f"power at slope (a), {len(L.SEEDS['16x'])} seeds at 16x (if the 16x SD is "
             "twice the 4x) |", "|---" * (len(L.RUNGS) + 7) + "|"]
    for key, row in table.iterrows():
        rungs = " | ".join(_rung(row, r) for r in L.RUNGS)
        power = _power(powers.get(key), row["unit"])
        if T.no_slope(row):
            lines.append(f"| {_name(key)} | {rungs} | no slope: {T.no_slope(row)} | 1 | "
                         f"{_p(row['p holm'])} | – | **{row['reading']}** | {power} |")
            continue
        dagger = "†" if T.excluded_before_holm_only(row) else ""
        lines.append(f"| {_name(key)} | {rungs} | {_cell(row, 'slope', row['unit'])}{dagger} "
                     f"| {_p(row['p'])} | {_p(row['p holm'])} | {row['slope df']:.0f} | "
                     f"**{row['reading']}** | {power} |")
    return "\n".join(lines)


def steps_table(table) -> str:
    lines = ["| decision | 1x to 4x, per doubling | 4x to 16x, per doubling | curvature |",
             "|---|---|---|---|"]
    for key, row in table.iterrows():
        cells = (["–"] * 3 if T.no_slope(row) else
                 [_cell(row, n, row["unit"]) for n in ("1x-4x", "4x-16x", "curvature")])
        lines.append(f"| {_name(key)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _by_rung(part, value: str) -> list:
    by = part.set_index("rung")
    return [interval_text(by.loc[r, value], by.loc[r, "low"], by.loc[r, "high"], "nats")
            if r in by.index else "–" for r in L.RUNGS]


def gap_differences_table(differences) -> str:
    lines = ["| decision | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for key, part in differences.groupby("key", sort=False):
        lines.append(f"| {_name(key)} | " + " | ".join(_by_rung(part, "gap difference"))
                     + " |")
    return "\n".join(lines)


def split_reading(row) -> str:
    """Amendment 7's reading of one split: nothing unless the change's interval excludes
    0; then which parts' intervals exclude 0."""
    if not math.isfinite(row["change"]):
        return "not split: too few seeds at a rung"
    if not math.isfinite(row["change low"]):  # no spread: no interval (amendment 8)
        return "not read: no spread"
    if not row["read"]:
        return "not read: the change's interval includes 0"
    parts = [name for name in ("training-split part", "gap part")
             if T.excludes_zero(row, name.replace("-split", ""))]
    return {0: "neither part's interval excludes 0",
            1: f"only the {parts[0]}'s interval excludes 0" if parts else "",
            2: "both parts' intervals exclude 0"}[len(parts)]


def split_table(split) -> str:
    lines = ["| decision | change, 1x to 16x (nats) | training-split part | gap part | "
             "reading |", "|---|---|---|---|---|"]
    for key, row in split.iterrows():
        cells = (["–"] * 3 if not math.isfinite(row["change"]) else
                 [_cell(row, n, "nats") for n in ("change", "training part", "gap part")])
        lines.append(f"| {_name(key)} | " + " | ".join(cells) + f" | {split_reading(row)} |")
    return "\n".join(lines)


def forecast_table(table) -> str:
    lines = ["| decision | forecast, 95% prediction interval | 16x mean, 95% interval | "
             "16x mean inside the forecast's interval? | SD of the difference over 16x "
             "seeds, assumed → measured |", "|---|---|---|---|---|"]
    for key, row in table.iterrows():
        digits = 1 if row["unit"] == "points" else 3
        inside = (f"not tested: {T.no_slope(row)}" if T.no_slope(row) else
                  "yes" if row["forecast covers"] else "**no**")
        measured = "–" if T.no_slope(row) else f"{row['16x sd']:.{digits}f}"
        lines.append(f"| {_name(key)} | {_cell(row, 'forecast', row['unit'])} | "
                     f"{_rung(row, '16x')} | {inside} | "
                     f"{row['forecast sd']:.{digits}f} → {measured} |")
    return "\n".join(lines)


def gaps_table(gaps) -> str:
    lines = ["| arm | " + " | ".join(L.RUNGS) + " |", "|---" * (len(L.RUNGS) + 1) + "|"]
    for arm, part in gaps.groupby("arm", sort=False):
        lines.append(f"| {arm} | " + " | ".join(_by_rung(part, "gap")) + " |")
    return "\n".join(lines)


def grown(gaps) -> list:
    """The arms whose gap is larger at 16x than at 1x, the two intervals apart."""
    out = []
    for arm, part in gaps.groupby("arm", sort=False):
        by = part.set_index("rung")
        if {"1x", "16x"} <= set(by.index) and by.loc["16x", "low"] > by.loc["1x", "high"]:
            out.append(arm)
    return out


def sop_table(sop) -> str:
    def cell(row, name: str) -> str:
        if not math.isfinite(row[f"{name} mean"]):
            return "not stored"
        return interval_text(row[f"{name} mean"], row[f"{name} low"], row[f"{name} high"],
                             "points")
    lines = ["| budget | probe minus majority | head minus majority | order learned? |",
             "|---|---|---|---|"]
    lines += [f"| {rung} | {cell(row, 'probe')} | {cell(row, 'head')} | "
              f"{'yes' if row['order learned'] else 'not shown'} |"
              for rung, row in sop.iterrows()]
    return "\n".join(lines)


def time_table(ratios) -> str:
    column = "wide / BERT-style seconds"
    lines = ["| budget | seed: ratio | machines |", "|---|---|---|"]
    for rung, part in ratios.groupby("rung", sort=False):
        kinds = sorted(set(part["machines"]))
        cells = ", ".join(
            f"{r.seed}: " + (f"**{r.ratio:.2f}**" if r.flagged else f"{r.ratio:.2f}")
            + (f" ({r.machines})" if len(kinds) > 1 else "")
            for r in part.rename(columns={column: "ratio"}).itertuples())
        lines.append(f"| {rung} | {cells} | {kinds[0] if len(kinds) == 1 else 'by seed'} |")
    return "\n".join(lines)


def passes_table(table) -> str:
    """Each arm, and per seed the share of its training at which its 16x curve first
    scored below the rung (``ladder_curves.passes``)."""
    seeds = sorted(table["seed"].unique())
    lines = ["| arm | " + " | ".join(f"seed {s}" for s in seeds) + " |",
             "|---|" + "---|" * len(seeds)]
    for arm in [a for a in L.ARMS if a in set(table["condition"])]:
        part = table[table["condition"] == arm].set_index("seed")["first below"]
        lines.append(f"| {arm} | " + " | ".join(
            "not by the end" if not np.isfinite(part.get(s, np.nan)) else
            f"{part.get(s):.0%}" for s in seeds) + " |")
    return "\n".join(lines)


def _names(items: list) -> str:
    return "; ".join(items) if items else "none"


def diverged_runs(store=None) -> list:
    """'16x, dropout 0.1, seed 3001': each run listed as diverged."""
    from ..engine.store import config_hash
    from ..studies import conditions as C
    failed = L.diverged(store)
    return [f"{rung}, {arm}, seed {seed}" for rung in ("1x", "16x")
            for arm, config in L.configs(rung).items() for seed in L.SEEDS[rung]
            if config_hash(C.seeded(config, seed).to_dict()) in failed]


def forecast_record(store=None) -> dict:
    """The stored forecast's recorded commit, whether it was dirty, the commit that
    stored it and what that commit adds to the recorded one, from git."""
    from ..engine.store import read_json, results_dir
    from ..studies.confirm_design import _git
    record = read_json((store or results_dir(L.STORE)) / L.FORECAST) or {}
    commit = record.get("provenance", {}).get("git_commit", "")
    path = f"data/results/{L.STORE}/{L.FORECAST}"
    added = _git("log", "--format=%H", "--diff-filter=A", "--", path).stdout.split()
    head = commit.removesuffix("+dirty")
    out = {"forecast_commit": head[:7] or "–",
           "forecast_dirty": "marked dirty" if commit.endswith("+dirty") else "clean",
           "forecast_stored": added[-1][:7] if added else "unknown here (a shallow clone)",
           "forecast_between": "–"}
    if added and head:
        changed = _git("diff", "--name-only", head, added[-1]).stdout.split()
        out["forecast_between"] = ("only the forecast itself" if changed == [path] else
                                   f"{len(changed)} files")
    return out


def provenance_problems(store=None) -> str:
    """'none', or the count and the first three problems (``ladder.provenance_problems``)."""
    from ..engine.store import results_dir
    from ..studies.confirm_design import _git
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        return "not checked here, in a shallow clone"
    problems = L.provenance_problems(L.stored_runs(store or results_dir(L.STORE)))
    if not problems:
        return "none"
    return f"{len(problems)}: " + "; ".join(problems[:3]) + ("; …" if len(problems) > 3 else "")


def result_values(tables: dict, stored: dict, store=None) -> dict:
    """The keys of ``book/templates/ladder-result.md``."""
    from ..stats.trend import slope_weights
    from ..studies import confirm_design as D
    from ..studies import ladder_curves
    from ..studies.ladder_power import pilot_wide_config
    table = tables["trend"]
    computed = [(k, r) for k, r in table.iterrows() if not T.no_slope(r)]
    bent = [T.tag(k) for k, r in computed if T.excludes_zero(r, "curvature")]
    weights = slope_weights([L.X[r] for r in L.RUNGS], [len(L.SEEDS[r]) for r in L.RUNGS])
    groups = {"held": 0, "tested": 0}
    for _, r in computed:
        groups["tested"] += math.isfinite(r.get("forecast", math.nan))
        groups["held"] += bool(r.get("forecast covers"))
    frame = L.rung_frame("16x", store)
    sequences = ladder_curves.curve_sequences(frame)
    level = ladder_curves.rung_level(ladder_curves.RUNG, sequences)
    whole = ladder_curves.rung_level("two-sided")
    means = frame.groupby("condition")[D.CE].mean()
    above = [arm for arm in L.ARMS if arm in means and not means[arm] < whole]
    nonfinite = tables.get("non-finite")
    odd = ([] if nonfinite is None else
           [f"{r.rung}, {r.arm}, seed {r.seed} ({r.number})" for r in nonfinite.itertuples()])
    ratios = tables["time ratios"]
    return {
        "decisions_key": decisions_key(table),
        "trend_table": trend_table(table, T.planned_power(store)),
        "dagger": (" † marks a slope whose interval excludes 0 only before Holm's "
                   "adjustment." if any(T.excluded_before_holm_only(r) for _, r in computed)
                   else ""),
        "pilot_wide_steps": f"{pilot_wide_config().max_steps:,}",
        "wide_steps_1x": f"{L.wide_steps('1x'):,}",
        "first_weight": f"{-weights[0] * (L.X['4x'] - L.X['1x']):.0%}",
        "bent": f"{len(bent)} of {len(computed)}" + (f": {'; '.join(bent)}" if bent else ""),
        "steps_table": steps_table(table),
        "gap_differences_table": gap_differences_table(tables["gap differences"]),
        "split_table": split_table(tables["gap split"]),
        "forecasts_inside": f"{groups['held']} of {groups['tested']}",
        "forecasts_tested": str(groups["tested"]),
        "chance_misses": f"{0.05 * groups['tested']:.2f}",
        "forecast_table": forecast_table(table), **forecast_record(store),
        "grown": f"{len(grown(tables['gaps']))} arms: " + _names(grown(tables["gaps"])),
        "gaps_table": gaps_table(tables["gaps"]),
        "sop_order": (f"first at {L.first_rung_learning_order(tables['sop'])}"
                      if L.first_rung_learning_order(tables["sop"]) else "at no budget"),
        "sop_table": sop_table(tables["sop"]),
        "flagged": f"{int(ratios['flagged'].sum())} of {len(ratios)}",
        "time_table": time_table(ratios),
        "curve_points": str(len(frame.iloc[0]["curve"])),
        "curve_sequences": f"{sequences:,}", "curve_level": f"{level:.3f}",
        "whole_level": f"{ladder_curves.rung_level(ladder_curves.RUNG):.3f}",
        "wide_steps_16x": f"{L.wide_steps('16x'):,}",
        "steps_16x": f"{L.configs('16x')[D.BERT].max_steps:,}",
        "below_two_sided": f"{len(means) - len(above)} of {len(means)}",
        "above_two_sided": _names(above),
        "passes_table": passes_table(ladder_curves.first_below(frame, level)),
        "diverged": _names(diverged_runs(store)), "nonfinite": _names(odd),
        "provenance": provenance_problems(store),
        "trigger": stored["trigger"], "commit": stored["provenance"]["git_commit"][:7],
        "early_end": " (an early end, by an amendment's decision)"
                     if stored.get("early_end") else ""}


def results_text(store=None) -> str:
    """The ladder page's result once the analysis is stored; before, "" (the stopping
    rule), or, once every run is stored but not yet the analysis, that it is not."""
    from ..studies.confirm_design import NotComplete
    from ..studies.ladder import NOT_STORED, result_tables
    try:
        tables, stored = result_tables(store)
    except NotComplete as error:
        return f"**The result**: {NOT_STORED}.\n" if NOT_STORED in str(error) else ""
    return fill("ladder-result.md", result_values(tables, stored, store))


def progress_values(store=None) -> dict:
    """The keys of ``ladder-progress.md``: the state, the counts, the hours."""
    from ..studies.ladder import training_costs
    table = L.progress(store)
    failed = int(table["diverged"].sum())
    head = "| budget | runs | trained | evaluated |" + (" diverged |" if failed else "")
    lines = [head, "|---" * (5 if failed else 4) + "|"]
    rows = {rung: part for rung, part in table.groupby("rung", sort=False)}
    for rung in L.RUNGS:
        label = f"{rung} ({L.RUNGS[rung]:,} steps, {len(L.SEEDS[rung])} seeds)"
        if rung == "4x":
            lines.append(f"| {label} | the confirmatory runs, complete | | |"
                         + (" |" if failed else ""))
            continue
        part = rows[rung]
        lines.append(f"| {label} | {int(part['of'].sum())} | {int(part['trained'].sum())} | "
                     f"{int(part['evaluated'].sum())} |"
                     + (f" {int(part['diverged'].sum())} |" if failed else ""))
    costs = training_costs(store)
    hours = ", ".join(f"{part['hours'].sum():.1f} for the {int(part['runs'].sum())} runs "
                      f"of the {rung} budget" for rung, part in costs.groupby("rung", sort=False))
    return {"progress_state": "complete" if L.settled(table) else "counts only",
            "progress_table": "\n".join(lines), "costs": hours or "none yet"}


def rungs_values() -> dict:
    """The keys of ``ladder-rungs.md``: steps, tokens a run, passes, seeds, source."""
    from ..data.corpus import tokenize_split
    from ..data.tokenizer import Tokenizer
    from ..studies import long_pilot
    base = L.configs("4x")[L.confirm_design.ALBERT]
    per_step = base.batch_size * base.max_seq_length
    corpus = len(tokenize_split("train", Tokenizer()).tokens)
    source = {"1x": "trained for this study", "4x": "the confirmatory store, as stored",
              "16x": "trained for this study"}
    lines = ["| rung | steps | tokens a run | passes over the training split | seeds | "
             "source |", "|---|---|---|---|---|---|"]
    rows = [(rung, steps, L.SEEDS[rung], source[rung]) for rung, steps in L.RUNGS.items()]
    rows.append(("long pilot (64x)", long_pilot.STEPS, (long_pilot.SEED,),
                 "exploratory, outside the family"))
    for name, steps, seeds, where in rows:
        tokens = steps * per_step
        seed_text = (f"{seeds[0]} to {seeds[-1]} ({len(seeds)})" if len(seeds) > 1
                     else f"{seeds[0]} (1)")
        lines.append(f"| {name} | {steps:,} | about {tokens / 1e6:.1f}M | "
                     f"{tokens / corpus:.1f} | {seed_text} | {where} |")
    return {"rungs_table": "\n".join(lines), "corpus_millions": f"{corpus / 1e6:.2f}"}


def _number(value, digits: int) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.{digits}f}"


def _percent(value) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{100 * value:.0f}%"


def power_values(design: dict) -> dict:
    """The keys of ``ladder-power.md``: the power table and the budget's choice, from
    the stored design."""
    b = design["budget"]
    n16, needed, strict = int(b["16x seeds"]), b["needed"], int(b["strict affordable"])
    lines = [f"| decision | 1x mean (SD) | 4x mean (SD) | slope (a) | slope (b) | power (a) "
             f"at {strict} / {n16} / {needed} 16x seeds | power (a), 16x SD twice the 4x, "
             f"at {n16} | power (a), {L.MAX_1X} seeds at 1x, at {n16} | power (b) at {n16} / "
             f"{needed} |", "|---|---|---|---|---|---|---|---|---|"]
    for key in [spec.key for spec in L.DECISIONS]:
        row = design["plan"][key]
        digits = 1 if row["unit"] == "points" else 3

        def sd(v):
            return "–" if v is None else f"{v:.{digits + (0 if digits == 1 else 1)}f}"
        one = (f"{_number(row['1x mean'], digits)} ({sd(row['1x SD'])})"
               if row["1x seeds"] else f"not measured ({sd(row['1x SD'])}, the 4x SD)")
        lines.append(
            f"| `{key}` ({row['unit']}) | {one} | {_number(row['4x mean'], digits)} "
            f"({sd(row['4x SD'])}) | {_number(row['slope (a)'], digits + 1)} | "
            f"{_number(row['slope (b)'], digits + 1)} | "
            f"{_percent(row.get(f'power (a) at {strict}'))} / "
            f"{_percent(row[f'power (a) at {n16}'])} / "
            f"{_percent(row.get(f'power (a) at {needed}'))} | "
            f"{_percent(row.get(f'power (a), 16x SD twice the 4x, at {n16}'))} | "
            f"{_percent(row.get(f'power (a), {L.MAX_1X} at 1x, at {n16}'))} | "
            f"{_percent(row[f'power (b) at {n16}'])} / "
            f"{_percent(row.get(f'power (b) at {needed}'))} |")
    seen = [k for k, r in design["plan"].items() if (r.get(f"power (b) at {n16}") or 0) >= 0.8]
    seen_text = ((" and ".join(f"`{k}`" for k in seen) or "none")
                 + (" alone reaches" if len(seen) == 1 else " reach"))
    return {"power_table": "\n".join(lines), "seeds_1x": str(int(b["1x seeds"])),
            "needed": str(needed), "affordable": str(b["affordable"]),
            "seeds_16x": str(n16), "hours": f"{b['hours']:.1f}", "limit": f"{b['limit']:.1f}",
            "pilot_hours": f"{b['pilot hours']:.1f}", "hours_1x": f"{b['1x hours a seed']:.2f}",
            "hours_16x": f"{b['16x hours a seed']:.1f}",
            "budget_hours": f"{L.BUDGET_HOURS:.0f}", "strict": str(strict),
            "tolerance": f"{L.BUDGET_TOLERANCE:.0%}", "strict_next": str(strict + 1),
            "max_1x": str(L.MAX_1X), "hours_max_1x": f"{b['hours with 11 at 1x']:.1f}",
            "max_16x": str(L.MAX_16X),
            "underpowered": " and ".join(f"`{k}`" for k in b["underpowered"]) or "none",
            "seen": seen_text}


def record_values(root: Path) -> dict:
    import json
    stored = json.loads((root / L.RECORD).read_text())
    return {"commit": stored["commit"][:7], "date": stored["date"],
            "sha256": stored["sha256"][:16]}


def write_ladder_parts(root: Path) -> list:
    """book/_generated/ladder-{record,progress,rungs,power,result}.md from their templates,
    and the findings page's figure once the result is stored."""
    generated = root / "book" / "_generated"
    generated.mkdir(parents=True, exist_ok=True)
    from ..paths import repo_root
    parts = {"record": fill("ladder-record.md", record_values(repo_root())),
             "progress": fill("ladder-progress.md", progress_values()),
             "rungs": fill("ladder-rungs.md", rungs_values()),
             "power": fill("ladder-power.md", power_values(L.stored_design())),
             "result": results_text()
             or "<!-- the result: generated once every ladder run is stored -->\n"}
    paths = [write_budgets_figure(generated)]
    for name, text in parts.items():
        path = generated / f"ladder-{name}.md"
        path.write_text(text)
        paths.append(path)
    return paths

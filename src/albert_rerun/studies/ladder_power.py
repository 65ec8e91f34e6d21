"""The compute ladder's power analysis and seed rule (book/ladder.md, section 6), stored
before the registration (``python -m albert_rerun.studies.ladder_power``)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..engine import provenance
from ..engine.store import atomic_write_json, results_dir
from ..profiles import resolve
from ..stats.trend import slope_power
from . import conditions as C
from . import confirm_analysis
from . import long_pilot
from .ladder import (ALPHA, ARMS, DECISIONS, DESIGN, MAX_1X, MAX_16X, MIN_1X, MIN_16X,
                     PILOT_SD_NOTE, POWER, RUNGS, STORE, X, BUDGET_HOURS,
                     BUDGET_TOLERANCE, _committed_store, differences, rung_frame,
                     wide_steps)


def pilot_wide_config():
    """The cpu profile's own equal-time wide run: the 1x pilot's wide arm."""
    return C.wall_clock(resolve("cpu"), confirm_analysis.WIDE_LEARNING_RATE)[
        "wide ALBERT-style, equal time"]


def pilot_1x_frame() -> pd.DataFrame:
    """The 1x SDs' source: the cpu profile's stored runs (seeds 0-2) of the
    confirmatory arms at 5,400 steps, its wide arm ``pilot_wide_config``."""
    base = confirm_analysis.conditions(None)
    pilot = {arm: C.with_steps(base[arm], RUNGS["1x"]) for arm in ARMS
             if arm != confirm_analysis.WIDE}
    pilot[confirm_analysis.WIDE] = pilot_wide_config()
    # the cpu store has no cue-free evaluation
    return confirm_analysis.load(_committed_store("cpu"), pilot, (0, 1, 2), require=False,
                                 cue_free=False)


def power_plan(frames: dict | None = None, margins: dict | None = None,
               seeds_16x=range(MIN_16X, MAX_16X + 1), seeds_1x: int = MIN_1X,
               simulations: int = 20000) -> pd.DataFrame:
    """Per primary decision: the 1x pilot's and the 4x rung's means and SDs, and the
    slope test's simulated power at Holm's first step at each 16x seed count for two
    true slopes: (a) through the 1x and 4x means; (b) one margin over four doublings."""
    frames = frames or {"1x": pilot_1x_frame(), "4x": rung_frame("4x")}
    margins = margins or confirm_analysis.margin_values(confirm_analysis.rungs())
    alpha = ALPHA / len(DECISIONS)
    xs = (X["1x"], X["4x"], X["16x"])
    rows = []
    for spec in DECISIONS:
        d = differences(frames, spec)
        m4, s4 = float(d["4x"].mean()), float(d["4x"].std(ddof=1))
        if "1x" in d:
            m1, s1, note = float(d["1x"].mean()), float(d["1x"].std(ddof=1)), ""
        else:
            m1, s1, note = math.nan, s4, PILOT_SD_NOTE
        sds = (s1, s4, max(s1, s4))
        slopes = {"a": (m4 - m1) / (X["4x"] - X["1x"]),
                  "b": margins[spec.margin] / (X["16x"] - X["1x"])}
        row = {"key": spec.key, "decision": spec.label, "unit": spec.unit,
               "1x mean": m1, "1x SD": s1, "1x seeds": len(d.get("1x", ())),
               "4x mean": m4, "4x SD": s4, "4x seeds": len(d["4x"]), "16x SD": sds[2],
               "slope (a)": slopes["a"], "slope (b)": slopes["b"], "note": note}
        # beside slopes (a) and (b): 11 seeds at 1x, and a 16x spread twice the 4x one
        scenarios = [(f"power ({name})", seeds_1x, sds, value)
                     for name, value in slopes.items()] + [
            (f"power (a), {MAX_1X} at 1x,", MAX_1X, sds, slopes["a"]),
            ("power (a), 16x SD twice the 4x,", seeds_1x, (s1, s4, 2 * s4), slopes["a"])]
        for name, n1, spread, value in scenarios:
            for n16 in seeds_16x:
                row[f"{name} at {n16}"] = math.nan if not math.isfinite(value) else \
                    slope_power(xs, (n1, len(d["4x"]), n16), spread, value, alpha, simulations)
        rows.append(row)
    return pd.DataFrame(rows).set_index("key")


def costs() -> dict:
    """CPU-hours at the confirmatory runs' ms a step: per arm and rung, per seed of a
    rung, and the long pilot's."""
    runs = confirm_analysis.trained_runs(_committed_store(confirm_analysis.STORE))
    ms = confirm_analysis.training_costs(runs).set_index("condition")["ms a step"]
    hours = {rung: {arm: ms[arm] * (wide_steps(rung) if arm == confirm_analysis.WIDE
                                    else RUNGS[rung]) / 3.6e6 for arm in ARMS}
             for rung in ("1x", "16x")}
    pilot = sum(ms[arm] * long_pilot.STEPS / 3.6e6 for arm in long_pilot.ARMS)
    return {"ms a step": ms.to_dict(), "per arm": hours,
            "per seed": {r: sum(h.values()) for r, h in hours.items()}, "pilot": pilot}


def budget(plan: pd.DataFrame, cost: dict | None = None) -> dict:
    """The registered seed rule: the fewest 16x seeds from MIN_16X that give POWER at
    slope (a) to every decision reaching it by MAX_16X, within the budget with MIN_1X at
    1x; then as many 1x seeds as the rest holds, MIN_1X to MAX_1X."""
    cost = cost or costs()
    limit = BUDGET_HOURS * (1 + BUDGET_TOLERANCE)
    per1, per16 = cost["per seed"]["1x"], cost["per seed"]["16x"]
    affordable = int((limit - cost["pilot"] - MIN_1X * per1) // per16)
    columns = sorted((c for c in plan if c.startswith("power (a) at ")),
                     key=lambda c: int(c.rsplit(" ", 1)[1]))
    reachable = plan[columns[-1]].ge(POWER)  # the decisions that reach POWER by MAX_16X
    enough = [int(c.rsplit(" ", 1)[1]) for c in columns
              if reachable.any() and plan.loc[reachable, c].ge(POWER).all()]
    needed = min(enough) if enough else math.inf
    n16 = max(MIN_16X, min(needed, affordable))
    n1 = int(min(MAX_1X, max(MIN_1X, (limit - cost["pilot"] - n16 * per16) // per1)))
    strict = int((BUDGET_HOURS - cost["pilot"] - MIN_1X * per1) // per16)
    return {"needed": needed, "affordable": affordable, "16x seeds": n16, "1x seeds": n1,
            "strict affordable": strict,
            "hours with 11 at 1x": cost["pilot"] + MAX_1X * per1 + n16 * per16,
            "underpowered": [k for k, ok in reachable.items() if not ok],
            "hours": cost["pilot"] + n1 * per1 + n16 * per16, "limit": limit,
            "pilot hours": cost["pilot"], "1x hours a seed": per1,
            "16x hours a seed": per16}


def design() -> dict:
    """The power plan and the budget's choice, with provenance."""
    plan = power_plan()
    return {"plan": json_records(plan), "budget": budget(plan),
            "provenance": provenance.record()}


def json_records(frame: pd.DataFrame) -> dict:
    """{key: {column: value}} with NaN and inf as None, for a JSON store."""
    def clean(v):
        if isinstance(v, (float, np.floating)):
            return float(v) if math.isfinite(v) else None
        if isinstance(v, np.integer):
            return int(v)
        return v
    return {k: {c: clean(v) for c, v in row.items()} for k, row in frame.iterrows()}


def store_design(store=None) -> dict:
    """``design``, stored in the ladder's store."""
    store = store or results_dir(STORE)
    out = design()
    out["budget"] = json_records(pd.DataFrame([out["budget"]]).astype(object))[0]
    atomic_write_json(store / DESIGN, out)
    return out


if __name__ == "__main__":
    print(store_design()["budget"])

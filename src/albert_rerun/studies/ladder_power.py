"""The compute ladder's seed rule (book/ladder.md, section 6): ``budget`` gives the seed
counts again from the stored power plan (``ladder.stored_design``)."""
from __future__ import annotations

import math

import pandas as pd

from ..profiles import resolve
from . import conditions as C
from . import confirm_analysis
from . import long_pilot
from .ladder import (ARMS, MAX_1X, MIN_1X, MIN_16X, POWER, RUNGS, BUDGET_HOURS,
                     BUDGET_TOLERANCE, _committed_store, stored_design, wide_steps)


def pilot_wide_config():
    """The cpu profile's own equal-time wide run: the 1x pilot's wide arm."""
    return C.wall_clock(resolve("cpu"), confirm_analysis.WIDE_LEARNING_RATE)[
        "wide ALBERT-style, equal time"]


def costs() -> dict:
    """CPU-hours at the confirmatory runs' ms a step: per arm and rung, seed, and pilot."""
    runs = confirm_analysis.trained_runs(_committed_store(confirm_analysis.STORE))
    ms = confirm_analysis.training_costs(runs).set_index("condition")["ms a step"]
    hours = {rung: {arm: ms[arm] * (wide_steps(rung) if arm == confirm_analysis.WIDE
                                    else RUNGS[rung]) / 3.6e6 for arm in ARMS}
             for rung in ("1x", "16x")}
    pilot = sum(ms[arm] * long_pilot.STEPS / 3.6e6 for arm in long_pilot.ARMS)
    return {"ms a step": ms.to_dict(), "per arm": hours,
            "per seed": {r: sum(h.values()) for r, h in hours.items()}, "pilot": pilot}


def budget(plan: pd.DataFrame | None = None, cost: dict | None = None) -> dict:
    """The registered seed rule: the fewest 16x seeds from MIN_16X that give POWER at
    slope (a) to every decision reaching it by MAX_16X, within the budget with MIN_1X at
    1x; then as many 1x seeds as the rest holds, MIN_1X to MAX_1X. ``plan``: one row per
    decision, by default the stored one (None read back as NaN)."""
    if plan is None:
        plan = pd.DataFrame.from_dict(stored_design()["plan"], orient="index")
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

"""Where each 16x run's held-out curve first passes the left-bigram count rung: a
description added after the ladder's result was read (book/ladder.md, amendment 10),
not a registered test.

Two reviewers of the stored result found that a large 16x difference can be a delay:
one arm leaves the loss plateau that every model starts on later than the other, so
the difference at the end depends on where 86,400 steps fall on that descent. The
ladder's tables cannot show it; the runs' held-out curves can. A 16x run stores
a curve point at every eighth of its training, on ``curve_examples`` of the common
held-out sequences (the first ones: the same for every run). ``first_below`` gives, per
run, the first curve step under a count rung's cross-entropy at ``[MASK]``, the rung
scored on the curve's own sequences (``count_rungs.levels_on``): a rung read on all
4,096 sequences sits on other targets, easier ones by 0.35 nats for the left bigram, and
would mark a crossing too late. ``delay`` reads a decision's two arms: where their
ranges of steps over seeds do not overlap, the later arm left the plateau later in every
seed, and part of the 16x difference may be that delay.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import confirm_design
from . import ladder as L

RUNG = "left bigram"  # the count rung whose passing marks leaving the plateau


def rung_level(name: str = RUNG, sequences: int | None = None) -> float:
    """A count rung's held-out cross-entropy at [MASK] (nats) on the ``cpu`` profile's
    evaluation, which every ladder run is scored on: on the first ``sequences`` of its
    held-out sequences (a curve's own, ``count_rungs.levels_on``), or as stored for the
    whole set (``sequences`` None)."""
    from ..profiles import resolve
    from .count_rungs import levels, levels_on, stored
    evaluation = resolve(confirm_design.PILOT_PROFILE).evaluation
    if sequences is not None:
        return float(levels_on(evaluation, sequences)[name])
    record = stored(evaluation)
    if not record:
        raise FileNotFoundError("no count rungs are stored (data/results/yardsticks/)")
    return float(levels(record)[name])


def curve_sequences(frame: pd.DataFrame) -> int:
    """The held-out sequences every run's curve of ``frame`` scores (one number: runs
    whose curves score different sets cannot share a rung)."""
    counts = {int(p["examples"]) for curve in frame["curve"] for p in curve}
    if len(counts) != 1:
        raise ValueError(f"the curves score different numbers of sequences: {counts}")
    return counts.pop()


def first_below(frame: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per run of ``frame`` (``ladder.rung_frame``): its condition, seed, steps,
    and the first curve point whose held-out cross-entropy at [MASK] is under ``level``,
    as a share of the run's steps (NaN where no point is). A share, since the wide arm
    of equal time trains fewer steps in the same time as its partner."""
    rows = []
    for _, run in frame.iterrows():
        steps = [p["step"] for p in run["curve"] if p[confirm_design.CE] < level]
        rows.append({"condition": run["condition"], "seed": int(run["seed"]),
                     "steps": int(run["steps"]),
                     "first below": steps[0] / run["steps"] if steps else np.nan})
    return pd.DataFrame(rows, columns=["condition", "seed", "steps", "first below"])


def passes(rung: str = "16x", store=None, level: float | None = None) -> pd.DataFrame:
    """``first_below`` for every run of a complete ladder rung, at the left-bigram rung
    scored on the runs' curve sequences unless ``level`` is given."""
    frame = L.rung_frame(rung, store)
    level = rung_level(RUNG, curve_sequences(frame)) if level is None else level
    return first_below(frame, level)


def arm_range(table: pd.DataFrame, arm: str) -> dict:
    """An arm's first passes under the rung over its seeds, as shares of training: low,
    high (NaN if no seed passed), the seeds that never passed, and the seeds."""
    part = table[table["condition"] == arm]
    passed = part["first below"].dropna()
    return {"low": passed.min() if len(passed) else np.nan,
            "high": passed.max() if len(passed) else np.nan,
            "never": int(part["first below"].isna().sum()), "seeds": len(part)}


def delay(table: pd.DataFrame, spec) -> dict | None:
    """A decision's two arms, ``arm_range`` each ({"a": ..., "b": ...}), "apart": whether
    one arm passed later than the other in every seed (its earliest pass later than the
    other's latest, a seed that never passed counting as after the end), and
    "later": that arm's name; None for a decision not in nats (a probe's accuracy is
    not what the curves measure)."""
    if spec.metric != confirm_design.CE:
        return None

    def seeds(arm) -> pd.Series:  # a never as past the end
        return table.loc[table["condition"] == arm, "first below"].fillna(np.inf)
    a, b = seeds(spec.a), seeds(spec.b)
    later = (spec.a if a.min() > b.max() else spec.b if b.min() > a.max() else None) \
        if len(a) and len(b) else None
    return {"a": arm_range(table, spec.a), "b": arm_range(table, spec.b),
            "apart": later is not None, "later": later}

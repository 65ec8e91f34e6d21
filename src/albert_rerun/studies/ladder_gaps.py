"""The overfitting gap on the compute ladder (book/ladder.md: section 2, amendments 4 and
7), descriptive and outside Holm's family:

- ``gaps_by_rung``: each arm's held-out minus training cross-entropy at [MASK] per rung;
- ``gap_differences``: that gap's paired difference A minus B, per decision in nats;
- ``gap_split``: each such decision's change from 1x to 16x, split exactly into its
  training part and its gap part (a held-out difference is the training difference plus
  the gap difference, seed by seed), each with its 95% interval.

Each takes the rungs' frames (``ladder.rung_frames``, without the runs amendment 6 drops)
and checks no stopping rule itself: ``ladder``'s functions of the same names do, and keep
the registered names.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from . import confirm_analysis, confirm_design
from .ladder_rules import MIN_SEEDS_TO_ANALYSE

GAP, TRAIN = "overfit_gap", "train_mlm_loss_at_mask"


def gap_decisions(decisions) -> tuple:
    """The decisions measured as held-out cross-entropy at [MASK], whose difference splits
    into a training and a gap difference (amendment 7: every decision in nats)."""
    return tuple(s for s in decisions if s.metric == confirm_design.CE and s.kind == "ce")


def _with_gap(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{GAP: frame[confirm_design.CE] - frame[TRAIN]})


def gaps_by_rung(frames: dict) -> pd.DataFrame:
    """Per rung and arm: the overfitting gap, held-out minus training cross-entropy at
    [MASK] (16x sees the training split about 13 times), mean and 95% t-interval."""
    from ..stats.inference import mean_interval
    rows = []
    for rung, frame in frames.items():
        for arm, part in _with_gap(frame).groupby("condition", sort=False):
            gap = part[GAP].astype(float)
            if len(gap) < 2:
                continue
            i = mean_interval(gap)
            rows.append({"rung": rung, "arm": arm, "gap": i.mean, "low": i.low,
                         "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows)


def _paired(spec, frame: pd.DataFrame, metric: str) -> np.ndarray:
    """The decision's per-seed difference A minus B of ``metric``."""
    return confirm_analysis.per_seed(replace(spec, metric=metric), frame).to_numpy(float)


def gap_differences(frames: dict, decisions) -> pd.DataFrame:
    """Per rung and decision in nats: the paired difference A minus B of the gap, mean and
    95% t-interval (a rung with fewer than two seeds left is left out)."""
    from ..stats.inference import mean_interval
    rows = []
    for rung, frame in frames.items():
        frame = _with_gap(frame)
        for spec in gap_decisions(decisions):
            d = _paired(spec, frame, GAP)
            if len(d) < 2:  # diverged runs left fewer than two seeds
                continue
            i = mean_interval(d)
            rows.append({"key": spec.key, "rung": rung, "gap difference": i.mean,
                         "low": i.low, "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows)


PARTS = {"change": confirm_design.CE, "gap part": GAP, "training part": TRAIN}


def gap_split(frames: dict, decisions, x: dict) -> pd.DataFrame:
    """Per decision in nats (amendment 7): the change of its mean paired difference from
    1x to 16x, m(16x) - m(1x), and its two exact parts, each with its 95% interval
    (``trend.contrast``: the unequal-spread standard error, the fewest seeds less one as
    df); "read": whether the change's interval excludes 0, the only case in which its
    parts are read. A decision with fewer than MIN_SEEDS_TO_ANALYSE seeds at 1x or 16x
    is not split (NaN), as it gets no slope (amendment 5)."""
    from ..stats.trend import contrast
    gapped = {r: _with_gap(frames[r]) for r in ("1x", "16x")}
    rows = []
    for spec in gap_decisions(decisions):
        values = {name: {r: _paired(spec, frame, metric) for r, frame in gapped.items()}
                  for name, metric in PARTS.items()}
        seeds = {r: len(values["change"][r]) for r in ("1x", "16x")}
        row = {"key": spec.key, "1x seeds": seeds["1x"], "16x seeds": seeds["16x"]}
        for name, by in values.items():
            c = (contrast({x["1x"]: by["1x"], x["16x"]: by["16x"]},
                          {x["1x"]: -1.0, x["16x"]: 1.0})
                 if min(seeds.values()) >= MIN_SEEDS_TO_ANALYSE else None)
            row.update({name: c.estimate if c else np.nan, f"{name} low": c.low if c else np.nan,
                        f"{name} high": c.high if c else np.nan})
        row["read"] = bool(row["change low"] > 0 or row["change high"] < 0)
        rows.append(row)
    return pd.DataFrame(rows).set_index("key")

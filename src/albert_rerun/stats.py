"""Seeds to intervals: per-condition means with 95% t-intervals, and paired differences.

With 3-5 seeds per condition, a t-interval (not a normal one) is the honest choice;
differences between conditions are paired by seed, which removes the seed-to-seed
variance the two conditions share (same data order, same masks).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as _stats


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def excludes(self, value: float = 0.0) -> bool:
        return not self.low <= value <= self.high

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}] (n={self.n})"


def mean_interval(values, confidence: float = 0.95) -> Interval:
    """Mean and two-sided t-interval; one value gives an infinitely wide interval."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all():
        raise ValueError(f"need a non-empty 1-d array of finite values, got {values!r}")
    mean = float(x.mean())
    if len(x) == 1:
        return Interval(mean, -np.inf, np.inf, 1)
    half = float(_stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return Interval(mean, mean - half, mean + half, len(x))


def paired_difference(a, b, confidence: float = 0.95) -> Interval:
    """Interval of mean(a - b) over seeds; a[i] and b[i] must share seed i."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired values need equal shapes, got {a.shape} and {b.shape}")
    return mean_interval(a - b, confidence)


def verdict(difference: Interval, paper_sign: int, margin: float = 0.0) -> str:
    """reproduced / not reproduced / inconclusive for a difference the paper signs.

    reproduced: the interval lies entirely on the paper's side of ``margin``;
    not reproduced: entirely on the other side; inconclusive: it straddles.
    """
    if paper_sign not in (-1, 1):
        raise ValueError("paper_sign must be +1 or -1")
    low, high = sorted((paper_sign * difference.low, paper_sign * difference.high))
    if low > margin:
        return "reproduced"
    if high < -margin:
        return "not reproduced"
    return "inconclusive"


def summarize(frame, metric: str, by: str = "condition", scale: float = 1.0,
              confidence: float = 0.95):
    """Per-condition mean and t-interval of ``metric`` over seeds (rows of ``frame``),
    in the order the conditions first appear; ``scale`` = 100 gives percentages."""
    import pandas as pd
    rows = []
    for name in dict.fromkeys(frame[by]):
        values = frame.loc[frame[by] == name, metric] * scale
        i = mean_interval(values.to_numpy(), confidence)
        rows.append({by: name, "mean": i.mean, "low": i.low, "high": i.high, "n": i.n})
    return pd.DataFrame(rows).set_index(by)


def paired(frame, metric: str, a, b, by: str = "condition", scale: float = 1.0,
           confidence: float = 0.95) -> Interval:
    """Interval of metric(a) - metric(b) over the seeds both conditions have."""
    def values(name):
        rows = frame[frame[by] == name]
        return rows.set_index("seed")[metric] * scale
    x, y = values(a), values(b)
    seeds = sorted(set(x.index) & set(y.index))
    if not seeds:
        raise ValueError(f"conditions {a!r} and {b!r} share no seed")
    return paired_difference(x.loc[seeds].to_numpy(), y.loc[seeds].to_numpy(), confidence)

"""How a paired difference moves with compute: a slope over rungs of independent seeds.

``slope`` fits the least-squares line through every seed's difference against ``x`` (log2
of the rung's compute); its standard error keeps each rung's spread
(``sum_j c_j^2 s_j^2 / n_j``) and its t has the fewest seeds of any rung less one df
(``df="hsu"``, conservative; Welch-Satterthwaite's, ``df="welch"``, are liberal with 11, 11
and 3 seeds: ``slope_power`` simulates it). ``extrapolate``: the registered forecast.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as st

DF_RULES = ("hsu", "welch")


@dataclass(frozen=True)
class Slope:
    """A slope per unit of x with its interval, test and degrees of freedom."""

    estimate: float
    se: float
    df: float
    low: float
    high: float
    p: float  # two-sided, of no slope
    n: tuple  # seeds per rung, in the order of x


def _satterthwaite(terms, dfs):
    """Welch-Satterthwaite df of sums of variance terms (last axis); inf where all 0."""
    denominator = (terms ** 2 / dfs).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, terms.sum(axis=-1) ** 2 / denominator, math.inf)


def _df(terms, n, rule: str):
    if rule not in DF_RULES:
        raise ValueError(f"df must be one of {DF_RULES}, got {rule!r}")
    return np.min(n, axis=-1) - 1.0 if rule == "hsu" else _satterthwaite(terms, n - 1)


def _rungs(groups: dict) -> tuple:
    if len(groups) < 2:
        raise ValueError(f"a slope needs two or more rungs, got {len(groups)}")
    xs = np.array(sorted(groups), dtype=float)
    values = [np.asarray(groups[x], dtype=float) for x in sorted(groups)]
    for x, v in zip(xs, values):
        if v.ndim != 1 or len(v) < 2 or not np.isfinite(v).all():
            # counts, not values: a blind study's message must not print its numbers
            raise ValueError(f"rung x={x:g} needs two or more finite values, got shape "
                             f"{v.shape} with {int(np.isfinite(v).sum())} finite")
    return xs, values


def contrast(groups: dict, weights: dict, confidence: float = 0.95, df: str = "hsu") -> Slope:
    """A fixed linear combination ``sum_x weights[x] * mean_x`` of independent rung means
    ({x: per-seed values}), e.g. a curvature or a segment's slope, tested as a slope is."""
    xs, values = _rungs(groups)
    c = np.array([float(weights.get(x, 0.0)) for x in xs])
    n = np.array([len(v) for v in values], dtype=float)
    means = np.array([v.mean() for v in values])
    # a rung whose seeds all agree has no spread (var would give float noise, ~1e-35)
    variances = np.array([0.0 if np.ptp(v) == 0 else v.var(ddof=1) for v in values])
    used = c != 0
    estimate = float((c * means).sum())
    terms = c[used] ** 2 * variances[used] / n[used]
    se = float(math.sqrt(terms.sum()))
    dof = float(_df(terms, n[used], df))
    seeds = tuple(int(k) for k in n)
    if se == 0:  # no spread at any rung used: no test (ladder amendment 5), not p = 0
        return Slope(estimate, 0.0, dof, math.nan, math.nan, 1.0, seeds)
    t = st.t.ppf(0.5 + confidence / 2, dof)
    p = float(2 * st.t.sf(abs(estimate) / se, dof))
    return Slope(estimate, se, dof, estimate - t * se, estimate + t * se, p, seeds)


def slope_weights(xs, ns) -> np.ndarray:
    """The slope's weights on the rung means, for seeds ``ns`` at ``xs``."""
    xs, ns = np.asarray(xs, float), np.asarray(ns, float)
    centre = float((ns * xs).sum() / ns.sum())
    return ns * (xs - centre) / float((ns * (xs - centre) ** 2).sum())


def slope(groups: dict, confidence: float = 0.95, df: str = "hsu") -> Slope:
    """The least-squares slope of the values against x over every seed of ``groups``
    ({x: the rung's per-seed values}), its standard error and the ``df`` rule's df."""
    xs, values = _rungs(groups)
    weights = slope_weights(xs, [len(v) for v in values])
    return contrast(groups, dict(zip(sorted(groups), weights)), confidence, df)


@dataclass(frozen=True)
class Forecast:
    """A rung's mean predicted from two others, with its prediction interval."""

    x: float
    estimate: float
    low: float
    high: float
    se: float
    df: float
    assumed_sd: float  # the SD assumed of the predicted rung's seeds
    n: int  # the predicted rung's seeds


def extrapolate(first, second, x_first: float, x_second: float, x: float, n: int,
                confidence: float = 0.95) -> Forecast:
    """The line through the two rungs' means carried to ``x``, with a prediction interval
    for the mean of ``n`` new seeds there: the means' variances carried by the line plus
    ``s^2 / n``, ``s`` the larger rung SD (registered), which joins that rung's term;
    Satterthwaite's df combine the two terms."""
    _, (a, b) = _rungs({0: first, 1: second})
    if x_first == x_second:
        raise ValueError("the two rungs need distinct x")
    if n < 1:
        raise ValueError(f"the predicted rung needs at least one seed, got {n}")
    k = (x - x_first) / (x_second - x_first)  # forecast = (1 - k) mean_a + k mean_b
    estimate = float((1 - k) * a.mean() + k * b.mean())
    a_larger = a.std(ddof=1) >= b.std(ddof=1)
    sd = float(a.std(ddof=1) if a_larger else b.std(ddof=1))
    ta = (1 - k) ** 2 * a.var(ddof=1) / len(a) + (sd ** 2 / n if a_larger else 0.0)
    tb = k ** 2 * b.var(ddof=1) / len(b) + (0.0 if a_larger else sd ** 2 / n)
    df = float(_satterthwaite(np.array([ta, tb]), np.array([len(a) - 1, len(b) - 1.0])))
    se = float(math.sqrt(ta + tb))
    t = st.t.ppf(0.5 + confidence / 2, df)
    return Forecast(float(x), estimate, estimate - t * se, estimate + t * se, se, df, sd, n)


def slope_power(xs, ns, sds, true_slope: float, alpha: float, simulations: int = 20000,
                seed: int = 0, df: str = "hsu") -> float:
    """The chance that ``slope``'s test rejects at ``alpha`` for rung means on a line of
    ``true_slope`` and normal seeds (``xs``, ``ns``, ``sds`` per rung), by simulation."""
    xs, ns, sds = (np.asarray(v, dtype=float) for v in (xs, ns, sds))
    if not (len(xs) == len(ns) == len(sds) >= 2) or (ns < 2).any() or (sds <= 0).any():
        raise ValueError("need two or more rungs, each of 2 or more seeds and an SD > 0")
    rng = np.random.default_rng(seed)
    c = slope_weights(xs, ns)
    # each rung's sample mean and variance, drawn exactly (normal and scaled chi-square)
    means = true_slope * xs + rng.standard_normal((simulations, len(xs))) * sds / np.sqrt(ns)
    variances = sds ** 2 * rng.chisquare(ns - 1, (simulations, len(xs))) / (ns - 1)
    estimate = (c * means).sum(axis=1)
    terms = c ** 2 * variances / ns
    se = np.sqrt(terms.sum(axis=1))
    p = 2 * st.t.sf(np.abs(estimate) / se, _df(terms, np.broadcast_to(ns, terms.shape), df))
    return float((p < alpha).mean())

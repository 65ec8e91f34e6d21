"""How many seeds: the power of the book's paired decisions, read from its decision family
(``power_table``: each paired-t decision's SD read back from its interval; bootstrap
decisions are left out, their test is not a t over seeds)."""
from __future__ import annotations

import math

from .cache import cached

T_METHOD = "paired t over seeds"  # decisions.T_METHOD: the decisions this module reads
COLUMNS = ("comparison", "unit", "margin", "seeds", "paired SD",
           "smallest detectable difference", "in margins", "seeds to detect the margin",
           "TOST power at a true 0", "seeds for the TOST at a true 0")


def _power(effect_size: float, n: int, alpha: float, alternative: str) -> float:
    """The power of a paired t of ``n`` seeds at ``alpha`` for a true standardized
    difference (scipy's noncentral t; the lower tail as P(T > t; -nc): statsmodels'
    TTestPower, through the cdf, is NaN at large noncentrality and few seeds)."""
    from scipy import stats
    df, nc = n - 1, effect_size * math.sqrt(n)
    if alternative == "larger":
        return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, nc))
    t = stats.t.ppf(1 - alpha / 2, df)
    return float(stats.nct.sf(t, df, nc) + stats.nct.sf(t, df, -nc))


def detectable_effect(n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The standardized difference (difference / SD) that a two-sided paired t of ``n``
    seeds at ``alpha`` detects with probability ``power`` (solved on ``_power``)."""
    from scipy.optimize import brentq
    if n < 2:
        return math.inf
    high = 1.0
    while _power(high, n, alpha, "two-sided") < power:
        high *= 2
    return brentq(lambda e: _power(e, n, alpha, "two-sided") - power, 0.0, high, xtol=1e-10)


def _fewest(effect: float, enough, alpha: float, power: float, sides: int) -> float:
    """The smallest n >= 2 with enough(n) (false, then true in n) for a standardized
    ``effect``, searched from the normal approximation of a ``sides``-sided test."""
    from scipy import stats
    if effect <= 0:
        return math.inf
    if math.isinf(effect):
        return 2
    z = stats.norm.ppf(1 - alpha / sides) + stats.norm.ppf(power if sides == 2 else
                                                           1 - (1 - power) / 2)
    n = max(2, math.ceil((z / effect) ** 2))
    while n > 2 and enough(n - 1):
        n -= 1
    while not enough(n):
        n += 1
    return n


def seeds_to_detect(effect_size: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The fewest seeds (>= 2) at which a two-sided paired t at ``alpha`` detects a true
    standardized difference ``effect_size`` with probability ``power``."""
    return _fewest(effect_size, lambda n: _power(effect_size, n, alpha, "two-sided") >= power,
                   alpha, power, 2)


@cached  # an integral of seconds a call: kept on disk (stats.cache)
def tost_power(margin_in_sd: float, n: int, alpha: float = 0.05,
               difference_in_sd: float = 0.0) -> float:
    """The exact chance that the paired TOST at ``alpha`` declares equivalence within
    +/- margin with ``n`` seeds and a true difference ``difference_in_sd`` (both in SDs
    of the paired differences): it rejects when |mean| < margin - t(1 - alpha) SE, and
    given the sample variance the mean is normal, so the chance is an integral over
    the variance's chi-square quantiles."""
    from scipy import integrate, stats
    if n < 2 or margin_in_sd <= 0:
        return 0.0
    if math.isinf(margin_in_sd):
        return 1.0
    df, root = n - 1, math.sqrt(n)
    a, c = margin_in_sd * root, difference_in_sd * root
    critical = stats.t.ppf(1 - alpha, df)
    top = stats.chi2.cdf(df * (a / critical) ** 2, df)  # beyond it no sample can reject

    def given(u: float) -> float:
        b = critical * math.sqrt(stats.chi2.ppf(u, df) / df)
        return max(0.0, stats.norm.cdf(a - b - c) - stats.norm.cdf(b - a - c))
    if top <= 0:
        return 0.0
    return float(integrate.quad(given, 0.0, top, limit=200)[0])


def seeds_for_equivalence(margin_in_sd: float, alpha: float = 0.05,
                          power: float = 0.8) -> float:
    """The fewest seeds (>= 2) at which the TOST at ``alpha`` declares equivalence with
    probability ``power`` when the true difference is 0."""
    return _fewest(margin_in_sd, lambda n: tost_power(margin_in_sd, n, alpha) >= power,
                   alpha, power, 1)


def paired_sd(low: float, high: float, n: int, confidence: float = 0.95) -> float:
    """The SD of the paired differences behind a paired-t interval [low, high] of ``n``
    seeds (half-width = t SD / sqrt n); NaN with fewer than 2 seeds."""
    from scipy import stats
    if n < 2 or not (math.isfinite(low) and math.isfinite(high)):
        return math.nan
    return (high - low) / 2 * math.sqrt(n) / stats.t.ppf(0.5 + confidence / 2, n - 1)


def holm_tests(family) -> int:
    """How many tests Holm's adjustment ran over: two per decision left in the family."""
    return 2 * int(family["in_family"].sum()) if "in_family" in family else 0


def holm_alpha(family, alpha: float = 0.05) -> float:
    """Holm's first-step alpha for a ``stats.holm`` frame: ``alpha`` over its tests."""
    return alpha / (holm_tests(family) or 1)


def power_table(family, seeds: int | None = None, alpha: float | str = 0.05,
                power: float = 0.8):
    """One row per paired-t decision of ``family`` (``stats.holm``'s frame), in its
    order, with the columns ``COLUMNS``, at ``seeds`` seeds (None: the decision's own).
    ``alpha="holm"``: Holm's first-step alpha over the family (``holm_alpha``).
    ``alpha``, ``power``, ``seeds`` and the family's tests go in the table's ``attrs``."""
    import numpy as np
    import pandas as pd
    tests = None
    if alpha == "holm":
        tests, alpha = holm_tests(family), holm_alpha(family)
    rows = {}
    chosen = family[family["method"] == T_METHOD] if "method" in family else family.iloc[:0]
    for key, d in chosen.iterrows():
        sd, margin = paired_sd(d["low"], d["high"], int(d["n_seeds"])), float(d["margin"])
        n = int(d["n_seeds"]) if seeds is None else int(seeds)
        numbers = [math.nan] * 5
        if not math.isnan(sd):
            margin_in_sd = margin / sd if sd > 0 else math.inf
            detectable = detectable_effect(n, alpha, power) * sd
            numbers = [detectable, detectable / margin,
                       seeds_to_detect(margin_in_sd, alpha, power),
                       tost_power(margin_in_sd, n, alpha),
                       seeds_for_equivalence(margin_in_sd, alpha, power)]
        rows[key] = [d["label"], d["unit"], margin, n, sd, *numbers]
    table = pd.DataFrame.from_dict(rows, orient="index", columns=list(COLUMNS),
                                   dtype=None if rows else float)
    table.index.name = "key"  # an empty family gives an empty table with these columns
    for column in ("seeds to detect the margin", "seeds for the TOST at a true 0"):
        if np.isfinite(table[column]).all():
            table[column] = table[column].astype(int)  # counts, where every one is finite
    table.attrs.update(alpha=alpha, power=power, seeds=seeds, tests=tests)
    return table


def _number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 10 else f"{x:.2g}"


def power_values(table, what: str = "decisions") -> dict:
    """The keys of ``book/templates/power.md`` read off a power_table (or some of its
    rows, which ``what`` names); {} where no row has a paired SD."""
    alpha, power = table.attrs["alpha"], table.attrs["power"]
    table = table[table["paired SD"].notna()]
    if table.empty:
        return {}
    ratio, detect = table["in margins"], table["seeds to detect the margin"]
    percent = f"{power:.0%}"
    chance = f"an {percent}" if percent.startswith(("8", "11", "18")) else f"a {percent}"
    tests = table.attrs.get("tests")
    hardest = detect.idxmax()

    def spread(name: str, column, form=_number) -> dict:
        return {f"{name}_{s}": form(getattr(column, s)()) for s in ("min", "max", "median")}
    return {"seeds": " or ".join(str(s) for s in sorted(set(table["seeds"]))),
            "level": (f"Holm's first-step alpha ({alpha:.2g}: 5% over the family's "
                      f"{tests} tests)" if tests else f"{alpha:.0%}" if alpha >= 0.01
                      else f"an alpha of {alpha:.2g}"),
            "chance": chance, "chance_capital": chance[0].upper() + chance[1:],
            "decisions": len(table), "what": what, "detecting": int((ratio <= 1).sum()),
            "hardest": table.loc[hardest, "comparison"],
            "hardest_sd": f"{table.loc[hardest, 'paired SD']:.3g}",
            **spread("ratio", ratio), **spread("detect", detect),
            **spread("tost", table["TOST power at a true 0"], lambda x: f"{x:.0%}"),
            **spread("for_tost", table["seeds for the TOST at a true 0"])}


def power_sentence(table, what: str = "decisions") -> str:
    """``power_values`` in the words of ``book/templates/power.md``."""
    from ..paths import fill
    if table.empty:
        return "No decision of this family is a paired t over seeds."
    values = power_values(table, what)
    name = "power.md" if values else "power-one-seed.md"
    return fill(name, values or {"what": what}).rstrip("\n")


def sd_factors(seeds: int, confidence: float = 0.95) -> tuple:
    """The ``confidence`` interval of a true SD, as factors of an SD estimated from
    ``seeds`` normal values (chi-square, ``seeds - 1`` degrees of freedom)."""
    from scipy.stats import chi2
    df = seeds - 1
    if df < 1:
        raise ValueError("one seed gives no SD")
    tail = (1 - confidence) / 2
    return tuple(math.sqrt(df / chi2.ppf(q, df)) for q in (1 - tail, tail))


def sd_uncertainty(seeds: int, confidence: float = 0.95) -> str:
    """How uncertain an SD of ``seeds`` paired differences is (its chi-square interval as
    factors of the estimate), in the words of ``book/templates/sd-uncertainty.md``."""
    from ..paths import fill
    if seeds < 2:
        return "one seed gives no SD"
    low, high = sd_factors(seeds, confidence)
    return fill("sd-uncertainty.md", {"seeds": seeds, "df": seeds - 1,
                                      "confidence": f"{confidence:.0%}", "low": f"{low:.1f}",
                                      "high": f"{high:.1f}"}).rstrip("\n")

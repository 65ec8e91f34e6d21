"""How many seeds: the power of the book's paired comparisons, from stored runs.

For a comparison with paired standard deviation ``sd`` (over seeds) and margin ``m``:

- **equivalence power**: the chance that the TOST declares "equivalent within m" when
  the true difference is 0 (each one-sided test at ``alpha``; the pair's power is at
  least 1 - 2 (1 - one side's), the usual bound);
- **difference power**: the chance that the two-sided test rejects "no difference" when
  the true difference is 2 m, an effect clearly outside the margin.

Both come from statsmodels' ``TTestPower`` (a paired t-test is a one-sample t-test of
the differences). scipy's noncentral t returns NaN for large noncentrality at few
degrees of freedom; there the power is 1 to within 1e-6 (checked by the tests against
simulation), and is reported as such.
"""
from __future__ import annotations

import math


def _power(effect_size: float, n: int, alpha: float, alternative: str) -> float:
    from statsmodels.stats.power import TTestPower
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = TTestPower().power(effect_size=effect_size, nobs=n, alpha=alpha,
                                   alternative=alternative)
    value = float(value)
    if math.isnan(value):  # noncentrality beyond scipy's nct: the power is 1
        if effect_size * math.sqrt(n) > 10:
            return 1.0
        raise FloatingPointError(f"power undefined for effect {effect_size}, n {n}")
    return value


def equivalence_power(sd: float, margin: float, n: int, alpha: float) -> float:
    if n < 2:
        return 0.0
    one_side = _power(margin / sd, n, alpha, "larger")
    return max(0.0, 1 - 2 * (1 - one_side))


def difference_power(sd: float, margin: float, n: int, alpha: float) -> float:
    if n < 2:
        return 0.0
    return _power(2 * margin / sd, n, alpha, "two-sided")


def seeds_needed(sd: float, margin: float, alpha: float, target: float = 0.8,
                 most: int = 50) -> int | None:
    """The fewest seeds (>= 3) with both powers >= ``target``; None if more than ``most``."""
    for n in range(3, most + 1):
        if (equivalence_power(sd, margin, n, alpha) >= target
                and difference_power(sd, margin, n, alpha) >= target):
            return n
    return None


def power_table(comparisons: dict, margin: float, family_tests: int, seeds: int,
                target: float = 0.8):
    """One row per comparison (name: paired SD): seeds needed at the raw level and at
    Holm's strictest level (alpha / family_tests), and both powers at ``seeds``."""
    import pandas as pd
    rows = []
    strict = 0.05 / family_tests
    for name, sd in comparisons.items():
        rows.append({"comparison": name, "paired SD": sd,
                     "seeds needed (5%)": seeds_needed(sd, margin, 0.05, target),
                     "seeds needed (Holm's strictest)": seeds_needed(sd, margin, strict, target),
                     f"equivalence power at {seeds} (5%)": equivalence_power(sd, margin, seeds, 0.05),
                     f"difference power at {seeds} (5%)": difference_power(sd, margin, seeds, 0.05),
                     f"equivalence power at {seeds} (Holm's strictest)":
                         equivalence_power(sd, margin, seeds, strict)})
    return pd.DataFrame(rows).set_index("comparison")

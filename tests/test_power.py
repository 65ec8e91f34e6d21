"""claims.power: seeds needed from a paired SD and a margin, and the powers behind it
checked against simulated t-tests, also where statsmodels' noncentral t returns NaN."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from albert_rerun.claims import power

STRICT = 0.05 / 38  # Holm's strictest level in a family of 19 decisions, two tests each


def _simulated_power(effect_size, n, alpha, two_sided, reps=40_000, seed=0):
    """Share of paired t-tests of n differences ~ N(effect_size, 1) that reject."""
    d = np.random.default_rng(seed).normal(effect_size, 1.0, (reps, n))
    t = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(n))
    if two_sided:
        return float((np.abs(t) > stats.t.ppf(1 - alpha / 2, n - 1)).mean())
    return float((t > stats.t.ppf(1 - alpha, n - 1)).mean())


def _statsmodels(effect_size, n, alpha, alternative):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(TTestPower().power(effect_size=effect_size, nobs=n, alpha=alpha,
                                        alternative=alternative))


@pytest.mark.parametrize("effect_size, n, alpha", [(1.0, 5, 0.05), (2.0, 3, 0.05),
                                                   (1.5, 8, STRICT)])
def test_power_matches_simulation_where_statsmodels_is_defined(effect_size, n, alpha):
    assert not math.isnan(_statsmodels(effect_size, n, alpha, "two-sided"))
    for alternative, two_sided in (("two-sided", True), ("larger", False)):
        value = power._power(effect_size, n, alpha, alternative)
        assert value == pytest.approx(_simulated_power(effect_size, n, alpha, two_sided),
                                      abs=0.01)


@pytest.mark.parametrize("effect_size, n, alpha", [(8.0, 3, STRICT), (5.0, 5, STRICT),
                                                   (5.0, 3, STRICT), (20.0, 5, STRICT)])
def test_power_where_the_noncentral_t_returns_nan(effect_size, n, alpha):
    """Large effects at few seeds and Holm's strictest level: statsmodels' two-sided
    power is NaN (scipy's lower tail), yet the power is not always 1 (at 3 seeds the
    critical t is about 27): it must agree with simulation."""
    assert math.isnan(_statsmodels(effect_size, n, alpha, "two-sided"))
    value = power._power(effect_size, n, alpha, "two-sided")
    simulated = _simulated_power(effect_size, n, alpha, two_sided=True)
    assert value == pytest.approx(simulated, abs=0.01)
    assert 0.0 <= value <= 1.0


def test_power_is_one_where_the_effect_is_huge():
    value = power._power(20.0, 5, STRICT, "two-sided")
    assert value == pytest.approx(1.0, abs=1e-6)
    assert _simulated_power(20.0, 5, STRICT, True, reps=5000) == 1.0


def test_seeds_needed_falls_with_the_margin_and_rises_with_the_sd():
    sd = 0.01
    by_margin = [power.seeds_needed(sd, m, 0.05) for m in (0.008, 0.012, 0.02, 0.04)]
    assert all(isinstance(n, int) for n in by_margin)
    assert by_margin == sorted(by_margin, reverse=True) and by_margin[0] > by_margin[-1]
    by_sd = [power.seeds_needed(s, 0.02, 0.05) for s in (0.005, 0.01, 0.02)]
    assert by_sd == sorted(by_sd) and by_sd[0] < by_sd[-1]
    assert power.seeds_needed(0.01, 0.02, STRICT) > power.seeds_needed(0.01, 0.02, 0.05)
    assert power.seeds_needed(1.0, 0.01, 0.05, most=10) is None
    assert power.seeds_needed(0.001, 1.0, STRICT) == 3  # never fewer than 3


def test_seeds_needed_is_the_first_n_with_both_powers():
    sd, margin = 0.01, 0.012
    n = power.seeds_needed(sd, margin, 0.05)
    for k, target in ((n, True), (n - 1, False)):
        both = (power.equivalence_power(sd, margin, k, 0.05) >= 0.8
                and power.difference_power(sd, margin, k, 0.05) >= 0.8)
        assert both is target, k


def test_equivalence_power_is_a_lower_bound_of_the_tost_power():
    """Simulated TOST (both one-sided tests reject) at a true difference of 0."""
    sd, margin, n = 1.0, 1.2, 6
    d = np.random.default_rng(3).normal(0.0, sd, (40_000, n))
    se = d.std(1, ddof=1) / math.sqrt(n)
    critical = stats.t.ppf(0.95, n - 1)
    tost = ((d.mean(1) + margin) / se > critical) & ((d.mean(1) - margin) / se < -critical)
    bound = power.equivalence_power(sd, margin, n, 0.05)
    assert 0.3 < bound <= tost.mean() + 0.01
    assert power.equivalence_power(sd, margin, 1, 0.05) == 0.0


def test_power_table_has_a_row_per_comparison():
    table = power.power_table({"a minus b": 0.01, "c minus d": 0.03}, margin=0.02,
                              family_tests=38, seeds=5)
    assert list(table.index) == ["a minus b", "c minus d"]
    assert table.loc["a minus b", "seeds needed (5%)"] <= \
        table.loc["c minus d", "seeds needed (5%)"]
    assert (table.filter(like="power").to_numpy() <= 1).all()

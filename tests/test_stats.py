import numpy as np
import pytest
from scipy import stats

from albert_rerun.stats import mean_interval, paired_difference, verdict


def test_interval_matches_scipy():
    x = np.array([0.51, 0.55, 0.49, 0.57, 0.52])
    low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
    interval = mean_interval(x)
    assert interval.mean == pytest.approx(x.mean())
    assert (interval.low, interval.high) == pytest.approx((low, high))


def test_paired_difference_is_tighter_than_unpaired_when_seeds_correlate():
    seed_effect = np.array([0.0, 0.05, -0.04])
    a, b = 0.60 + seed_effect, 0.58 + seed_effect + np.array([0.001, -0.002, 0.001])
    paired = paired_difference(a, b)
    assert paired.excludes(0.0) and paired.mean == pytest.approx(0.02, abs=1e-3)
    assert paired.half_width < mean_interval(a).half_width


def test_verdicts():
    assert verdict(mean_interval([0.02, 0.03, 0.025]), +1) == "reproduced"
    assert verdict(mean_interval([0.02, 0.03, 0.025]), -1) == "not reproduced"
    assert verdict(mean_interval([-0.02, 0.03, 0.01]), +1) == "inconclusive"


def test_bad_input():
    with pytest.raises(ValueError):
        mean_interval([])
    with pytest.raises(ValueError):
        paired_difference([1, 2], [1, 2, 3])
    assert mean_interval([0.5]).high == np.inf

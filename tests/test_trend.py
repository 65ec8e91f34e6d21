"""The slope over rungs (stats.trend): least squares over seeds, Welch's error."""
import numpy as np
import pytest
from scipy import stats as st

from albert_rerun.stats import trend


def test_the_slope_is_the_least_squares_line_through_every_seed():
    rng = np.random.default_rng(0)
    groups = {0: rng.normal(0, 1, 11), 2: rng.normal(1, 2, 11), 4: rng.normal(2, 3, 3)}
    x = np.concatenate([[k] * len(v) for k, v in groups.items()])
    y = np.concatenate(list(groups.values()))
    assert trend.slope(groups).estimate == pytest.approx(np.polyfit(x, y, 1)[0])


def test_with_two_rungs_it_is_welchs_t_test_scaled_by_the_step_in_x():
    rng = np.random.default_rng(1)
    a, b = rng.normal(0, 1, 11), rng.normal(0.8, 3, 4)
    s = trend.slope({0: a, 2: b}, df="welch")
    welch = st.ttest_ind(b, a, equal_var=False)
    assert s.estimate == pytest.approx((b.mean() - a.mean()) / 2)
    assert s.p == pytest.approx(welch.pvalue)
    assert s.df == pytest.approx(welch.df)
    low, high = welch.confidence_interval()
    assert (s.low, s.high) == pytest.approx((low / 2, high / 2))
    # the registered rule keeps Welch's error and takes the fewest seeds' df (Hsu)
    hsu = trend.slope({0: a, 2: b})
    assert (hsu.estimate, hsu.se, hsu.df) == pytest.approx((s.estimate, s.se, 3))
    assert hsu.p > s.p and hsu.low < s.low


def test_the_registered_df_keeps_its_level_where_welchs_does_not():
    # 11, 11 and 3 seeds, the 3-seed rung three times as noisy: Welch's df reject a true
    # zero slope too often at 1%; the fewest seeds' df do not
    xs, ns, sds = (0, 2, 4), (11, 11, 3), (1.0, 1.0, 3.0)
    welch = trend.slope_power(xs, ns, sds, 0.0, 0.01, 50000, df="welch")
    hsu = trend.slope_power(xs, ns, sds, 0.0, 0.01, 50000)
    assert welch > 0.02 and hsu <= 0.01
    with pytest.raises(ValueError, match="df must be"):
        trend.slope({0: [1, 2], 2: [3, 4]}, df="pooled")


def test_a_noisy_rung_widens_the_interval_a_quiet_one_does_not_hide_it():
    quiet = {0: np.array([0.0, 0.1, -0.1]), 2: np.array([1.0, 1.1, 0.9]),
             4: np.array([2.0, 2.1, 1.9])}
    noisy = {**quiet, 4: np.array([0.0, 4.0, 2.0])}
    assert trend.slope(noisy).se > 3 * trend.slope(quiet).se
    assert trend.slope(quiet).low > 0


def test_a_contrast_of_rung_means_carries_its_own_error():
    rng = np.random.default_rng(4)
    groups = {0: rng.normal(0, 1, 6), 2: rng.normal(1, 2, 11), 4: rng.normal(1, 2, 4)}
    curve = trend.contrast(groups, {0: 1, 2: -2, 4: 1})
    m = {x: v.mean() for x, v in groups.items()}
    assert curve.estimate == pytest.approx(m[0] - 2 * m[2] + m[4])
    assert curve.se == pytest.approx(np.sqrt(sum(
        w ** 2 * groups[x].var(ddof=1) / len(groups[x]) for x, w in ((0, 1), (2, -2), (4, 1)))))
    assert curve.df == 3  # Hsu: the fewest seeds of the rungs it uses, less one
    segment = trend.contrast(groups, {2: -0.5, 4: 0.5})
    assert segment.df == 3 and segment.estimate == pytest.approx((m[4] - m[2]) / 2)
    w = trend.slope_weights((0, 2, 4), (6, 11, 4))
    assert w.sum() == pytest.approx(0) and (w * np.array([0, 2, 4])).sum() == pytest.approx(1)


def test_bad_rungs_are_refused_and_the_message_gives_counts_not_values():
    with pytest.raises(ValueError, match="two or more rungs"):
        trend.slope({0: [1, 2]})
    with pytest.raises(ValueError, match="two or more finite"):
        trend.slope({0: [1, 2], 2: [3]})
    with pytest.raises(ValueError, match=r"shape \(3,\) with 2 finite") as error:
        trend.slope({0: [1, 2], 2: [0.123456, np.inf, 0.654321]})
    assert "0.123" not in str(error.value)  # a blind rung's numbers stay unprinted


def test_a_slope_with_no_spread_is_no_test():
    """Amendment 5: no spread at any rung gives p = 1 and no interval, not p = 0."""
    s = trend.slope({0: [0.1, 0.1, 0.1], 2: [0.3, 0.3, 0.3], 4: [0.5, 0.5, 0.5]})
    assert s.estimate == pytest.approx(0.1) and s.se == 0 and s.p == 1
    assert np.isnan(s.low) and np.isnan(s.high)


def test_the_forecast_carries_the_line_and_its_interval_holds_the_truth_95_percent():
    first, second = np.array([0.0, 0.2, 0.1]), np.array([1.0, 1.3, 0.9, 1.1])
    f = trend.extrapolate(first, second, 0, 2, 4, n=3)
    assert f.estimate == pytest.approx(2 * second.mean() - first.mean())
    assert f.assumed_sd == pytest.approx(max(first.std(ddof=1), second.std(ddof=1)))
    # coverage at the ladder's seeds (6, 11, then 4) with the registered assumption
    # true (the 16x SD equals the larger, 4x, SD): the borrowed SD is one estimate with
    # its rung's df, so the interval holds its level (three terms, as if independent,
    # gave about 94%)
    rng = np.random.default_rng(2)
    hits, draws = 0, 6000
    for _ in range(draws):
        a, b, c = (rng.normal(m, s, n) for m, s, n in ((0, 0.2, 6), (1, 1.0, 11), (2, 1.0, 4)))
        f = trend.extrapolate(a, b, 0, 2, 4, n=4)
        hits += f.low <= c.mean() <= f.high
    assert 0.945 < hits / draws < 0.965


def test_the_simulated_power_is_the_size_at_no_slope_and_grows_with_it():
    xs, ns, sds = (0, 2, 4), (11, 11, 3), (1.0, 1.0, 1.0)
    assert trend.slope_power(xs, ns, sds, 0.0, 0.05, df="welch") == pytest.approx(
        0.05, abs=0.01)  # equal spreads: Welch's df hold their level
    assert trend.slope_power(xs, ns, sds, 0.0, 0.05) < 0.05
    small, large = (trend.slope_power(xs, ns, sds, s, 0.01) for s in (0.1, 3.0))
    assert small < large and large > 0.8
    # the simulation is the test itself: it agrees with repeating the test on draws
    rng = np.random.default_rng(3)
    rejected = np.mean([trend.slope({x: rng.normal(0.3 * x, 1.0, n) for x, n in
                                     zip(xs, ns)}).p < 0.01 for _ in range(3000)])
    assert trend.slope_power(xs, ns, sds, 0.3, 0.01) == pytest.approx(rejected, abs=0.03)

"""stats.curves: the oscillation measure scores every monotone curve 0 whatever its
pace, ranks noise above it and a zig-zag highest, and does not depend on the scale of
the values."""
import numpy as np
import pytest

from albert_rerun.stats.curves import oscillation

LAYERS = np.arange(11)
STEADY = 10.0 - 0.8 * LAYERS  # a steady decline
CONVEX = 0.4 * 0.2 ** LAYERS  # a decay that slows down: the collapsed ALBERT-style shape
CONCAVE = np.sqrt(LAYERS + 1.0)  # a rise that slows down
# the steady decline plus noise of one step's size, twenty draws
NOISY_DRAWS = STEADY + np.random.default_rng(0).normal(0, 0.8, (20, len(LAYERS)))
NOISY = NOISY_DRAWS[9]  # a draw with reversals (0.36), for the invariance tests
ZIGZAG = 5.0 + 3.0 * (-1.0) ** LAYERS  # up and down at every layer


def test_monotone_curves_score_zero_at_any_pace():
    for curve in (STEADY, CONVEX, CONCAVE, STEADY[::-1], [1.0, 1.0, 2.0, 2.0, 3.0]):
        assert oscillation(curve) == pytest.approx(0.0, abs=1e-12)


def test_order_monotone_then_noisy_then_zigzag():
    monotone = max(oscillation(STEADY), oscillation(CONVEX))
    noisy = np.array([oscillation(c) for c in NOISY_DRAWS])
    zigzag = oscillation(ZIGZAG)
    assert monotone == 0.0
    assert (noisy >= monotone).all() and (noisy > monotone).mean() > 0.5  # most reverse
    assert noisy.max() < zigzag


def test_values_that_can_be_worked_out_by_hand():
    assert oscillation([0.0, 1.0, 0.0]) == pytest.approx(1.0)  # once across and back
    assert oscillation([0.0, 1.0, 0.0, 1.0]) == pytest.approx(1.0)  # back once, then on
    assert oscillation([0.0, 2.0, 1.0, 3.0]) == pytest.approx(1 / 3)  # 1 back over 3
    # more swings of the same depth, more oscillation
    assert oscillation([0, 1] * 6) > oscillation([0, 1] * 3) > oscillation([0, 1])


def test_scale_offset_and_direction_do_not_matter():
    for curve in (NOISY, ZIGZAG, [3.0, 1.0, 2.0, 0.5]):
        x = np.asarray(curve)
        base = oscillation(x)
        for transformed in (1e-6 * x, 250.0 * x + 40.0, -x, x[::-1]):
            assert oscillation(transformed) == pytest.approx(base)


def test_monotone_map_keeps_zero_and_reversals():
    """The paper plots cosine similarity, the store holds the angle: a monotone map of a
    curve keeps a monotone curve at 0 and keeps its reversals."""
    angle = np.array([40.0, 12.0, 35.0, 8.0, 30.0, 5.0])
    cosine = np.cos(np.radians(angle))
    assert oscillation(cosine) > 0
    assert oscillation(np.cos(np.radians(CONVEX))) == pytest.approx(0.0, abs=1e-12)


def test_a_slowing_decay_scores_below_a_gentle_zig_zag():
    gentle = 5.0 + 0.5 * (-1.0) ** LAYERS
    assert oscillation(CONVEX) == 0.0 < oscillation(gentle)


def test_edge_cases():
    assert oscillation([2.0, 2.0, 2.0, 2.0]) == 0.0  # constant: nothing reverses
    assert oscillation([1.0, 3.0]) == 0.0 and oscillation([1.0]) == 0.0
    for bad in ([], [1.0, np.nan, 2.0], [1.0, np.inf, 0.0]):
        with pytest.raises(ValueError):
            oscillation(bad)
    with pytest.raises(ValueError, match="one-dimensional"):
        oscillation([[1.0, 2.0], [3.0, 4.0]])


def test_float_noise_on_a_converged_tail_weighs_next_to_nothing():
    tail = np.concatenate([[0.4, 0.02, 1e-3], 1e-7 * (1 + 0.3 * (-1.0) ** np.arange(6))])
    assert oscillation(tail) < 1e-5  # the noise is weighed by its depth


def test_three_points_reverse_at_most_once():
    """Chapter 7 at 4 layers: a curve of three points scores 0 unless its middle point
    is its highest or lowest."""
    assert oscillation([3.0, 2.0, 1.0]) == 0.0 == oscillation([1.0, 1.0, 2.0])
    assert oscillation([1.0, 3.0, 2.0]) == pytest.approx(0.5)

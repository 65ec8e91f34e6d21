"""Plain readings (pages.plain), case by case, on the confirmatory numbers' shapes."""
import pandas as pd
import pytest

from albert_rerun.book import plain as P


@pytest.mark.parametrize("numbers, expected", [
    # sharing cost: on the paper's side, far past the margin
    ((0.147, 0.097, 0.197, 0.027, +1, 0.0001), P.HOLDS),
    # dropout: a difference shown on the paper's side; its 95% interval lies inside the
    # margin, but after Holm the TOST does not pass (p 0.15): not shown to be small
    ((0.022, 0.0174, 0.0267, 0.0269, +1, 0.0001, 0.05, "", 0.15), P.HOLDS),
    # ... and where the TOST passes too, it is tiny
    ((0.022, 0.0174, 0.0267, 0.0269, +1, 0.0001, 0.05, "", 0.01), P.TINY),
    # no TOST p given: the whole interval inside the margin stands for it
    ((0.022, 0.0174, 0.0267, 0.0269, +1, 0.0001), P.TINY),
    # equal time: the other side, past the margin
    ((0.358, 0.309, 0.406, 0.027, -1, 0.0001), P.REVERSED),
    ((-0.01, -0.015, -0.005, 0.027, +1, 0.001), P.REVERSED_TINY),
    # asymmetry: the interval holds 0 and crosses the margin
    ((-0.012, -0.025, 0.001, 0.0108, +1, 0.07, 0.05, "", 0.4), P.UNDECIDED),
    ((0.001, -0.004, 0.006, 0.0108, +1, 0.6, 0.05, "", 0.01), P.NO_DIFFERENCE),
    # an interval inside the margin whose TOST fails after Holm: undecided
    ((0.001, -0.004, 0.006, 0.0108, +1, 0.6, 0.05, "", 0.2), P.UNDECIDED),
    # significant at 5% but not after Holm: what the family says is what the reader reads
    ((-0.23, -0.46, -0.001, 0.25, +1, 0.3), P.UNDECIDED),
    # the paper says no difference
    ((0.014, -0.003, 0.031, 0.0108, 0, 0.1), P.UNDECIDED),
    ((0.002, -0.004, 0.006, 0.0108, 0, 0.5), P.HOLDS),
    ((0.002, -0.004, 0.006, 0.0108, 0, 0.5, 0.05, "", 0.3), P.UNDECIDED),
    ((0.05, 0.03, 0.07, 0.0108, 0, 0.001), P.DIFFERS),
])
def test_each_case(numbers, expected):
    assert P.plain_reading(*numbers) == expected


def test_a_row_is_read_at_its_holm_adjusted_tests():
    import pandas as pd
    row = pd.Series({"stage": "early training", "estimate": 0.022, "low": 0.0174,
                     "high": 0.0267, "margin": 0.0269, "paper_sign": 1,
                     "p_difference": 1e-6, "p_difference_holm": 1e-5,
                     "p_equivalence": 0.03, "p_equivalence_holm": 0.15})
    assert P.row_reading(row) == P.HOLDS  # Holm withheld "smaller than the margin"
    assert P.row_reading(row.drop("p_equivalence_holm")) == P.TINY  # outside a family


def test_a_failed_premise_wins_over_the_numbers():
    reading = P.plain_reading(0.3, -1.5, 2.1, 2.0, +1, 0.7,
                              premise="neither model orders cue-free pairs")
    assert reading == "not testable here: neither model orders cue-free pairs"


def test_every_reading_is_defined_once_and_bad_numbers_are_refused():
    assert len(P.READING_WORDS) == len(set(P.READING_WORDS)) == 8
    with pytest.raises(ValueError, match="paper_sign"):
        P.plain_reading(0.1, 0, 0.2, 0.05, 2, 0.01)
    with pytest.raises(ValueError, match="low <= estimate"):
        P.plain_reading(0.3, 0, 0.2, 0.05, 1, 0.01)
    with pytest.raises(ValueError, match="real"):
        P.plain_reading(float("nan"), 0, 0.2, 0.05, 1, 0.01)



"""Plain readings (pages.plain), case by case, on the confirmatory numbers' shapes."""
import pandas as pd
import pytest

from albert_rerun.book import headlines as H
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


def test_a_chapters_decision_text_is_its_plain_reading_numbers_and_stage():
    """The brief: "Reproduced (at 5% before Holm: equivalent)" outran its numbers. A
    chapter's prose now gives one reading, by the one rule, after Holm where the family
    judges the decision; the verdict words stay in the verdict table."""
    from albert_rerun.stats.inference import arm_level, decision, holm
    rungs = {"rungs": {"unigram_loss_at_mask": 6.685, "bigram_loss_at_mask": 6.147},
             "reads_context": 6.665, "distance": 6.685 - 6.147}
    numbers = {"estimate": -0.008, "low": -0.011, "high": -0.005, "n": 3,
               "p_difference": 0.001, "p_equivalence": 0.001}
    d = decision("dropout/ce", "dropout", "x", numbers, 0.0269, -1, "nats", "t").with_gate(
        [arm_level("a", 6.5, rungs), arm_level("b", 6.5, rungs)])
    family = holm([d])
    text = H.decision_text(d, family)
    assert text == (f"{P.row_reading(family.loc['dropout/ce'])}: "
                    f"-0.008 nats [-0.011, -0.005], margin ±0.027. Early training: the "
                    f"weakest arm is 34% of the way from the unigram to the bigram rung.")
    assert "5%" not in text and "inconclusive" not in text
    # outside a family it is read at 5%, and says so
    assert H.decision_text(d).startswith(f"{P.TINY} (at 5%, outside Holm's family): ")
    # a gated decision: not testable, its reason, and its measured difference all the same
    gated = d.with_gate([arm_level("a", 6.9, rungs), arm_level("b", 6.5, rungs)])
    assert H.decision_text(gated, holm([gated])) == (
        f"{P.NOT_TESTABLE}: {gated.gate_reason}. Measured: -0.008 nats [-0.011, -0.005], "
        f"margin ±0.027.")
    assert gated.gate_reason


def test_a_reading_of_no_difference_says_where_its_unadjusted_interval_lies():
    """A skeptical reader: after Holm, "undecided" or "no difference here" stood beside an
    interval that excludes 0 (cpu's equal time, +0.111 [+0.087, +0.135]), as if no
    effect were seen."""
    from albert_rerun.stats.inference import decision
    numbers = {"estimate": 0.111, "low": 0.087, "high": 0.135, "n": 3,
               "p_difference": 0.003, "p_equivalence": 0.9}
    d = decision("w", "wall_clock", "w", numbers, 0.027, -1, "nats", "t")
    family = pd.DataFrame({"in_family": [True], "stage": ["early training"],
                           "estimate": [0.111], "low": [0.087], "high": [0.135],
                           "margin": [0.027], "paper_sign": [-1],
                           "p_difference_holm": [0.2], "p_equivalence_holm": [1.0]},
                          index=["w"])
    text = H.decision_text(d, family)
    assert text.startswith(f"{P.UNDECIDED}: +0.111 nats")
    assert "Its 95% interval, not adjusted, excludes 0 on the other side from the paper's." \
        in text
    shown = H.decision_text(d)  # at 5%: reversed, and nothing more to say
    assert shown.startswith(P.REVERSED) and "not adjusted" not in shown
    # an interval inside the margin whose equivalence Holm does not show: said so
    inside = decision("n", "asymmetry", "n", {"estimate": 0.004, "low": -0.002,
                                              "high": 0.010, "n": 3, "p_difference": 0.2,
                                              "p_equivalence": 0.03}, 0.0108, 0, "nats", "t")
    held = family.rename(index={"w": "n"}).assign(
        estimate=0.004, low=-0.002, high=0.010, margin=0.0108, paper_sign=0,
        p_difference_holm=1.0, p_equivalence_holm=0.4)
    assert H.decision_text(inside, held) == (
        f"{P.UNDECIDED}: +0.004 nats [-0.002, +0.010], margin ±0.011. Its 95% interval, "
        f"not adjusted, lies inside the margin.")

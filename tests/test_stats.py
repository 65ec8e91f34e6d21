"""stats.inference against scipy and statsmodels, and the verdict rule's table."""
import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_paired

from albert_rerun.stats.inference import (VERDICTS, Decision, bootstrap, correct_matrix, decision,
                                       holm, mean_interval, paired_t, summarize, verdict_of)

A = np.array([6.512, 6.498, 6.530, 6.505, 6.521])
B = np.array([6.540, 6.531, 6.549, 6.522, 6.560])


def test_interval_matches_scipy():
    x = np.array([0.51, 0.55, 0.49, 0.57, 0.52])
    low, high = scipy_stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=scipy_stats.sem(x))
    interval = mean_interval(x)
    assert interval.mean == pytest.approx(x.mean())
    assert (interval.low, interval.high) == pytest.approx((low, high))
    assert mean_interval([0.5]).high == np.inf
    with pytest.raises(ValueError):
        mean_interval([])
    with pytest.raises(ValueError, match=r"shape \(2,\) with 1 finite") as error:
        mean_interval([0.4321, np.nan])
    assert "0.432" not in str(error.value)  # counts, not a blind rung's values


def test_summarize_matches_scipy_in_order_of_appearance():
    frame = pd.DataFrame({"condition": ["b"] * 4 + ["a"] * 4, "seed": list(range(4)) * 2,
                          "metric": [0.50, 0.52, 0.49, 0.55, 0.45, 0.50, 0.47, 0.48]})
    table = summarize(frame, "metric", scale=100)
    assert list(table.index) == ["b", "a"]
    b = 100 * np.array([0.50, 0.52, 0.49, 0.55])
    low, high = scipy_stats.t.interval(0.95, 3, loc=b.mean(), scale=scipy_stats.sem(b))
    assert table.loc["b", "mean"] == pytest.approx(b.mean())
    assert (table.loc["b", "low"], table.loc["b", "high"]) == pytest.approx((low, high))


def test_paired_t_matches_scipy_and_statsmodels():
    out = paired_t(A, B, margin=0.05)
    d = A - B
    assert out["estimate"] == pytest.approx(d.mean()) and out["n"] == 5
    assert out["p_difference"] == pytest.approx(scipy_stats.ttest_rel(A, B).pvalue)
    low, high = scipy_stats.t.interval(0.95, 4, loc=d.mean(), scale=scipy_stats.sem(d))
    assert (out["low"], out["high"]) == pytest.approx((low, high))
    assert out["p_equivalence"] == pytest.approx(ttost_paired(A, B, -0.05, 0.05)[0])
    # TOST by hand: the larger p of the two one-sided tests against -margin and +margin
    above = scipy_stats.ttest_1samp(d + 0.05, 0, alternative="greater").pvalue
    below = scipy_stats.ttest_1samp(d - 0.05, 0, alternative="less").pvalue
    assert out["p_equivalence"] == pytest.approx(max(above, below))
    assert paired_t(A, B, margin=0.0)["p_equivalence"] == 1.0  # no margin: never equivalent
    against_zero = paired_t(d)
    assert against_zero["p_difference"] == pytest.approx(scipy_stats.ttest_1samp(d, 0).pvalue)


def test_paired_t_edge_cases():
    one = paired_t([1.0], [0.5])
    assert one["n"] == 1 and one["p_difference"] == 1.0 and one["low"] == -np.inf
    constant = paired_t([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], margin=1.0)
    assert constant["p_difference"] == 0.0 and constant["p_equivalence"] == 0.0
    assert paired_t([1.0, 2.0], [1.0, 2.0], margin=0.1)["p_difference"] == 1.0
    with pytest.raises(ValueError, match="equal 1-d shapes"):
        paired_t([1, 2], [1, 2, 3])


def _correct(rng, p, seeds, items):
    return (rng.random((seeds, items)) < p).astype(float)


def test_bootstrap_recovers_a_planted_difference():
    """Items answered right with p 0.75 by A and 0.65 by B: 10 points, planted."""
    rng = np.random.default_rng(0)
    a, b = _correct(rng, 0.75, 3, 1000), _correct(rng, 0.65, 3, 1000)
    out = bootstrap(100 * a, 100 * b, margin=1.0, resamples=2000)
    assert out["estimate"] == pytest.approx(100 * (a.mean() - b.mean()))
    assert out["low"] < 10 < out["high"] and out["low"] < out["estimate"] < out["high"]
    assert out["high"] - out["low"] < 8
    assert out["p_difference"] < 0.01 and out["p_equivalence"] > 0.5
    same = bootstrap(100 * a, 100 * _correct(rng, 0.75, 3, 1000), margin=5.0, resamples=2000)
    assert same["low"] < 0 < same["high"] and same["p_difference"] > 0.05
    assert same["p_equivalence"] < 0.05  # tight around 0, within 5 points


def test_bootstrap_interval_covers_about_95_percent():
    """Over 100 planted data sets, the interval covers the planted 10 points about as
    often as it promises (the binomial SE of 95% over 100 is 2.2 points)."""
    rng = np.random.default_rng(1)
    covered = 0
    for k in range(100):
        a, b = _correct(rng, 0.75, 3, 200), _correct(rng, 0.65, 3, 200)
        out = bootstrap(100 * a, 100 * b, resamples=500, seed=k)
        covered += out["low"] < 10 < out["high"]
    assert 88 <= covered <= 100, covered


def test_bootstrap_against_a_constant_and_bad_shapes():
    rng = np.random.default_rng(2)
    a = _correct(rng, 0.56, 3, 1000)
    out = bootstrap(100 * a, None, margin=2.0, offset=50.0, resamples=2000)
    assert out["estimate"] == pytest.approx(100 * a.mean() - 50)
    assert out["low"] > 0 and out["p_difference"] < 0.01
    with pytest.raises(ValueError, match="seeds, items"):
        bootstrap(np.ones(5), np.ones(5))
    with pytest.raises(ValueError, match="different lengths"):
        correct_matrix(["0101", "011"])
    np.testing.assert_array_equal(correct_matrix(["01", "11"]), [[0, 1], [1, 1]])


@pytest.mark.parametrize("estimate, p_difference, p_equivalence, paper_sign, expected", [
    (-0.1, 0.001, 0.9, -1, "reproduced"),  # different, on the paper's side
    (+0.1, 0.001, 0.9, -1, "contradicted"),  # different, the other side
    (+0.1, 0.001, 0.9, +1, "reproduced"),
    (-0.1, 0.001, 0.9, +1, "contradicted"),
    (0.001, 0.6, 0.01, +1, "equivalent"),  # within the margin
    (0.001, 0.001, 0.01, -1, "equivalent"),  # within it, though not zero
    (0.02, 0.3, 0.4, -1, "inconclusive"),  # neither test rejects
    (0.001, 0.6, 0.01, 0, "reproduced"),  # the paper says no difference: equivalence
    (0.1, 0.001, 0.9, 0, "contradicted"),
    (-0.1, 0.001, 0.9, 0, "contradicted"),
    (0.02, 0.3, 0.4, 0, "inconclusive"),
])
def test_verdict_rule(estimate, p_difference, p_equivalence, paper_sign, expected):
    assert verdict_of(estimate, p_difference, p_equivalence, paper_sign) == expected
    assert expected in VERDICTS


def test_verdict_rule_refuses_a_bad_sign_and_follows_alpha():
    with pytest.raises(ValueError, match="paper_sign"):
        verdict_of(0.1, 0.01, 0.5, 2)
    assert verdict_of(-0.1, 0.03, 0.9, -1, alpha=0.01) == "inconclusive"


def _decision(key, p_difference, p_equivalence=0.9, estimate=-0.05, paper_sign=-1):
    return decision(key, "test", key, {"estimate": estimate, "low": estimate - 0.01,
                                       "high": estimate + 0.01, "n": 5,
                                       "p_difference": p_difference,
                                       "p_equivalence": p_equivalence},
                    margin=0.02, paper_sign=paper_sign, unit="nats", method="paired t")


def test_holm_equals_statsmodels_over_both_tests_of_every_decision():
    decisions = [_decision("a", 0.001, 0.8), _decision("b", 0.02, 0.3),
                 _decision("c", 0.4, 0.004, estimate=0.001)]
    family = holm(decisions)
    raw = [p for d in decisions for p in (d.p_difference, d.p_equivalence)]
    adjusted = multipletests(raw, method="holm")[1].reshape(-1, 2)
    np.testing.assert_allclose(family[["p_difference_holm", "p_equivalence_holm"]].to_numpy(),
                               adjusted)
    assert list(family.index) == ["a", "b", "c"]
    assert family.loc["a", "verdict"] == family.loc["a", "verdict_holm"] == "reproduced"
    assert family.loc["c", "verdict_holm"] == "equivalent"


def test_holm_turns_a_borderline_call_in_a_larger_family():
    borderline = _decision("borderline", 0.02)
    alone = holm([borderline])
    assert alone.loc["borderline", "verdict_holm"] == "reproduced"  # 2 tests: 0.04 < 0.05
    others = [_decision(f"other-{k}", 0.5, 0.5) for k in range(9)]
    family = holm([borderline] + others)
    assert family.loc["borderline", "verdict"] == "reproduced"  # raw
    assert family.loc["borderline", "verdict_holm"] == "inconclusive"
    assert family.loc["borderline", "p_difference_holm"] == pytest.approx(0.02 * 20)
    with pytest.raises(ValueError, match="unique"):
        holm([borderline, borderline])
    assert holm([]).empty


def test_a_decision_keeps_its_numbers_and_verdict():
    numbers = paired_t(A, B, margin=0.005)
    d = decision("k", "claim", "A minus B", numbers, 0.005, -1, "nats", "paired t")
    assert isinstance(d, Decision) and d.n_seeds == 5 and d.estimate == numbers["estimate"]
    assert d.verdict() == "reproduced"
    assert d.verdict(p_difference=0.5) == "inconclusive"
    assert d.to_dict()["key"] == "k"


# -- the competence gate ---------------------------------------------------------------

RUNGS = {"rungs": {"unigram_loss_at_mask": 6.685, "bigram_loss_at_mask": 6.147},
         "reads_context": 6.665, "distance": 6.685 - 6.147}


def test_an_arm_level_is_the_share_of_the_first_rung_it_has_closed():
    from albert_rerun.stats.inference import arm_level
    assert arm_level("unigram", 6.685, RUNGS).level == pytest.approx(0.0)
    assert arm_level("bigram", 6.147, RUNGS).level == pytest.approx(1.0)
    base = arm_level("base", 6.518, RUNGS)
    assert base.level == pytest.approx(0.31, abs=0.005) and base.reads_context
    assert not arm_level("collapsed", 6.685, RUNGS).reads_context


def test_the_gate_keeps_a_collapsed_arm_out_and_stages_the_rest():
    from albert_rerun.stats.inference import EARLY, GATED, NO_MODEL, PAST, arm_level, gate
    collapsed = gate([arm_level("BERT-style", 6.40, RUNGS),
                      arm_level("ALBERT-style", 6.685, RUNGS)])
    assert collapsed["stage"] == GATED and collapsed["failed_arms"] == "ALBERT-style"
    early = gate([arm_level("a", 6.518, RUNGS), arm_level("b", 6.10, RUNGS)])
    assert early["stage"] == EARLY and early["weakest_arm"] == "a"
    assert gate([arm_level("a", 6.07, RUNGS), arm_level("b", 6.10, RUNGS)])["stage"] == PAST
    assert gate([])["stage"] == NO_MODEL


def test_a_gated_decision_is_not_testable_and_stays_out_of_holms_family():
    from albert_rerun.stats.inference import NOT_TESTABLE, arm_level
    strong = decision("strong", "c", "strong", {"estimate": 0.5, "low": 0.4, "high": 0.6,
                                                  "n": 3, "p_difference": 0.001,
                                                  "p_equivalence": 0.9},
                      0.1, +1, "nats", "t")
    borderline = decision("borderline", "c", "b", {"estimate": 0.5, "low": 0.1, "high": 0.9,
                                                     "n": 3, "p_difference": 0.02,
                                                     "p_equivalence": 0.9},
                          0.1, +1, "nats", "t")
    ok = [arm_level("a", 6.4, RUNGS), arm_level("b", 6.3, RUNGS)]
    bad = [arm_level("a", 6.4, RUNGS), arm_level("b", 6.69, RUNGS)]
    family = holm([strong.with_gate(bad), borderline.with_gate(ok)])
    assert family.loc["strong", "verdict_holm"] == NOT_TESTABLE
    assert family.loc["strong", "verdict"] == NOT_TESTABLE
    assert not family.loc["strong", "in_family"]
    assert np.isnan(family.loc["strong", "p_difference_holm"])
    # one judged decision, two tests: 0.02 * 2 = 0.04 < 0.05; with the gated one in the
    # family it would be 0.02 * 3 = 0.06
    assert family.loc["borderline", "p_difference_holm"] == pytest.approx(0.04)
    assert family.loc["borderline", "verdict_holm"] == "reproduced"
    assert family.loc["borderline", "verdict_staged"].startswith(
        "reproduced, early training: weakest arm at")
    assert "(b does not read context)" in family.loc["strong", "verdict_staged"]

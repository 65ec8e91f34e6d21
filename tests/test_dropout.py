"""claims.dropout's decisions on synthetic runs with a planted effect, and the premise
(no overfitting) as a test that can fail."""
import numpy as np
from synthetic import WOBBLE, runs

from albert_rerun.book import dropout
from albert_rerun.studies.decisions import gated
from albert_rerun.stats.inference import NOT_TESTABLE

RUNGS = {"rungs": {"unigram_loss_at_mask": 7.0, "bigram_loss_at_mask": 6.0},
         "reads_context": 6.9, "distance": 1.0}


def _frame(extra_gap: float):
    """Both models share a gap of 0.13 nats (the documents differ); the one without
    dropout has ``extra_gap`` more."""
    frame = runs({"A": -0.03, "B": 0.0}).replace({"condition": {"A": "no dropout",
                                                                  "B": "dropout 0.1"}})
    frame["overfitting gap"] = 0.13 + np.concatenate([WOBBLE["A"] + extra_gap, WOBBLE["B"]])
    return frame


def test_dropout_decisions_on_planted_runs():
    ce, premise = dropout.dropout_decisions(_frame(0.001), {"ce": 0.01})
    assert ce.key == "dropout/ce" and ce.verdict() == "reproduced"
    assert premise.arms == ("no dropout", "dropout 0.1") and premise.unit == "nats"
    assert premise.verdict() == "reproduced"  # the shared gap cancels: no overfitting


def test_the_premise_fails_when_the_model_without_dropout_overfits():
    _, premise = dropout.dropout_decisions(_frame(0.05), {"ce": 0.01})  # 5 margins of gap
    assert premise.verdict() == "contradicted" and premise.low > 0.01


def test_the_premise_is_not_testable_below_one_pass_over_the_data():
    frame = _frame(0.001)
    decisions = gated(dropout.dropout_decisions(frame, {"ce": 0.01}), frame, RUNGS,
                      dropout.premise_untestable(0.79))
    ce, premise = decisions
    assert premise.verdict() == NOT_TESTABLE and "0.79 passes" in premise.gate_reason
    assert ce.verdict() == "reproduced" and ce.judged
    assert dropout.premise_untestable(3.2) == {}  # cpu-long: 3.2 passes, judged

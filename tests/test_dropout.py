"""claims.dropout's decisions on synthetic runs with a planted effect."""
import numpy as np
from synthetic import WOBBLE, runs

from albert_rerun.claims import dropout


def test_dropout_decisions_on_planted_runs():
    frame = runs({"A": -0.03, "B": 0.0}).replace({"condition": {"A": "no dropout",
                                                                  "B": "dropout 0.1"}})
    frame["overfitting gap"] = 0.01 + np.concatenate([WOBBLE["A"], WOBBLE["B"]])
    ce, premise = dropout.dropout_decisions(frame, {"ce": 0.01})
    assert ce.key == "dropout/ce" and ce.verdict() == "reproduced"
    assert premise.verdict() == "reproduced"  # no gap between them: as the paper argues

"""claims.downstream on synthetic per-item correctness: pretrained minus its
random-initialization control."""
import numpy as np
import pandas as pd
from synthetic import strings

from albert_rerun.claims import downstream


def test_downstream_gain_on_per_item_correctness():
    """Pretrained minus its random-init control, paired by seed and by test item: a
    planted 15 points on fine-tuned sentiment is found, none on the probe; seeds
    without a control are left out."""
    rng = np.random.default_rng(0)
    items = 500
    frame = pd.DataFrame([{"condition": "base", "seed": s,
                           "sentiment_correct": strings(rng, 0.75, items),
                           "control_sentiment_correct": strings(rng, 0.60, items)
                           if s < 3 else np.nan,
                           "sentiment_probe_correct": strings(rng, 0.70, items),
                           "control_sentiment_probe_correct": strings(rng, 0.70, items)
                           if s < 3 else np.nan} for s in range(5)])
    finetuned, probe = downstream.gate_decisions(frame, {"downstream": 1.0})
    assert finetuned.n_seeds == 3 and finetuned.unit == "points"
    assert finetuned.verdict() == "reproduced" and finetuned.low < 15 < finetuned.high
    assert probe.verdict() in ("inconclusive", "equivalent") and probe.low < 0 < probe.high
    assert finetuned.key != probe.key

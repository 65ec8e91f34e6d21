"""claims.downstream on synthetic per-item correctness: pretrained minus its
random-initialization control."""
import numpy as np
import pandas as pd
from synthetic import strings

from albert_rerun.book import downstream


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


def test_per_condition_gains_are_worded_as_descriptive_not_as_findings():
    """The paragraph's counts: the unadjusted intervals, those above 0, the arms that do
    not read context."""
    from dataclasses import replace

    from albert_rerun.stats.inference import decision
    numbers = {"estimate": 3.0, "low": 0.5, "high": 5.5, "n": 3, "p_difference": 0.02,
               "p_equivalence": 0.9}
    above = replace(decision("gain/wide", "wall_clock", "wide", numbers, 1.0, +1, "points",
                             "b"), stage="not testable", gate_reason="wide does not read context")
    spans = replace(decision("gain/bert", "wall_clock", "bert",
                             {**numbers, "low": -1.0}, 1.0, +1, "points", "b"),
                    stage="early training")
    runs = pd.DataFrame({"sentiment_probe_accuracy": [0.55, 0.56],
                         "sentiment_accuracy": [np.nan, np.nan],
                         "control_sentiment_accuracy": [np.nan, np.nan]})
    text = downstream.downstream_sentence(runs, {"wide": above, "bert": spans},
                                          {"majority_accuracy": 0.5,
                                           "bag_of_words_accuracy": 0.7})
    assert "2 unadjusted intervals" in text and "; 1 lie above 0" in text
    assert "wide do not read context" in text and "{{" not in text


def test_fine_tuning_repeats_are_read_from_two_profiles_stores(results):
    """The same control fine-tuned under the same protocol at two profiles (stored as
    each profile's evaluation of the same pretraining hash): its two accuracies and
    machines, and the spread in the text, in points and in margins; a model fine-tuned
    at one profile only is not a repeat."""
    from albert_rerun.engine.store import atomic_write_json, results_dir

    def store(profile, model, accuracy, cpu):
        atomic_write_json(results_dir(profile) / "eval" / "ft1" / f"{model}.json", {
            "eval_config": {"protocol": {"learning_rate": 1e-3}},
            "metrics": {"sentiment_accuracy": accuracy},
            "provenance": {"machine": {"cpu": cpu, "torch_threads": 1}}})
    store("cpu", "c0", 0.740, "Intel Xeon")
    store("cpu-long", "c0", 0.750, "AMD EPYC")
    store("cpu", "only-here", 0.700, "Intel Xeon")
    repeats = downstream.finetune_repeats(("cpu", "cpu-long"))
    assert list(repeats["model"]) == ["c0", "c0"]
    assert list(repeats["accuracy %"].round(1)) == [74.0, 75.0]
    assert list(repeats["machine"]) == ["Intel Xeon", "AMD EPYC"]
    text = downstream.finetune_repeat_text(repeats)
    assert "The same 1 random-init models" in text and "differ by 1.0 to 1.0 points" in text
    assert "1.0 times the downstream decisions' margin of 1 point" in text
    assert downstream.finetune_repeat_text(repeats.iloc[:0]) == ""

"""claims.analysis on synthetic runs whose answer is known: a planted effect is found,
no effect reads 'equivalent' or 'inconclusive' as the margin says, missing runs are
named, and the roughness measure does not penalise a steady decline."""
import numpy as np
import pandas as pd
import pytest

from albert_rerun.claims import analysis
from albert_rerun.claims import conditions as C
from albert_rerun.claims.analysis import (CE, MissingRuns, accuracy_decision, ce_decision,
                                          roughness)
from albert_rerun.claims.stats import holm
from albert_rerun.engine import store
from albert_rerun.engine.config import untrained
from albert_rerun.profiles import eval_config

# Per-seed offsets shared by every condition (the seed's own luck, which pairing
# removes), and small per-run wobbles, fixed so that every verdict is reproducible.
SEED_OFFSET = np.array([0.06, -0.04, 0.01, -0.07, 0.03])
WOBBLE = {"A": np.array([0.002, -0.001, 0.003, -0.002, 0.0]),
          "B": np.array([-0.001, 0.002, -0.002, 0.001, 0.001]),
          "C": np.array([0.001, 0.0, -0.001, 0.002, -0.002])}


def runs(effects: dict, seeds: int = 5, scale: float = 1.0) -> pd.DataFrame:
    """One row per (condition, seed): cross-entropy 6.5 + seed offset + effect + wobble
    (times ``scale``)."""
    return pd.DataFrame([{"condition": name, "seed": s,
                          CE: 6.5 + SEED_OFFSET[s] + effect + scale * WOBBLE[name][s]}
                         for name, effect in effects.items() for s in range(seeds)])


def _ce(frame, margin, paper_sign, a="A", b="B"):
    return ce_decision(frame, "k", "claim", "A minus B", a, b, margin, paper_sign)


def test_a_planted_effect_is_found():
    frame = runs({"A": -0.05, "B": 0.0})
    d = _ce(frame, margin=0.01, paper_sign=-1)
    assert d.estimate == pytest.approx(-0.05, abs=0.003) and d.low < -0.05 < d.high
    assert d.high < -0.01 and d.n_seeds == 5 and d.unit == "nats"
    assert d.verdict() == "reproduced"
    assert _ce(frame, 0.01, +1).verdict() == "contradicted"
    assert _ce(frame, 0.01, 0).verdict() == "contradicted"  # the paper said no difference


def test_without_the_pairing_the_seed_offsets_would_hide_it():
    """The seeds' offsets (SD 0.05) are larger than the effect; pairing by seed removes
    them. Shuffled seeds (no longer paired) leave the same effect inconclusive."""
    frame = runs({"A": -0.05, "B": 0.0})
    shuffled = frame.copy()
    shuffled.loc[shuffled["condition"] == "B", "seed"] = [3, 0, 4, 1, 2]
    assert _ce(shuffled, 0.01, -1).verdict() == "inconclusive"


def test_no_effect_is_equivalent_within_a_margin_wider_than_the_noise():
    frame = runs({"A": 0.0, "B": 0.0})
    assert _ce(frame, margin=0.01, paper_sign=-1).verdict() == "equivalent"
    assert _ce(frame, margin=0.01, paper_sign=0).verdict() == "reproduced"


def test_no_effect_is_inconclusive_where_the_margin_is_within_the_noise():
    frame = runs({"A": 0.0, "B": 0.0})
    assert _ce(frame, margin=0.001, paper_sign=-1).verdict() == "inconclusive"
    noisy = runs({"A": 0.0, "B": 0.0}, seeds=3, scale=20)
    assert _ce(noisy, margin=0.01, paper_sign=-1).verdict() == "inconclusive"


def test_pairs_use_only_the_seeds_both_conditions_have():
    frame = runs({"A": -0.05, "B": 0.0})
    partial = frame[~((frame["condition"] == "B") & (frame["seed"] == 4))]
    assert _ce(partial, 0.01, -1).n_seeds == 4
    x, y = analysis.pair_of(partial, CE, "A", "B")
    assert len(x) == len(y) == 4
    with pytest.raises(ValueError, match="share no seed"):
        analysis.pair_of(partial.assign(seed=np.where(partial["condition"] == "A", 0, 1)),
                         CE, "A", "B")


def test_a_borderline_call_turns_inconclusive_in_the_books_family():
    """Raw 'reproduced' at p just under 5%; with the book's other decisions (here nine
    null ones) Holm's adjustment leaves it inconclusive."""
    frame = runs({"A": -0.0059, "B": 0.0})
    borderline = _ce(frame, margin=0.0005, paper_sign=-1)
    assert 0.01 < borderline.p_difference < 0.05 and borderline.verdict() == "reproduced"
    nulls = runs({"A": 0.0, "B": 0.0}, scale=5)
    others = [ce_decision(nulls, f"null-{k}", "claim", "null", "A", "B", 0.0005, -1)
              for k in range(9)]
    family = holm([borderline] + others)
    assert family.loc["k", "verdict"] == "reproduced"
    assert family.loc["k", "verdict_holm"] == "inconclusive"
    table = analysis.Chapter("claim", frame, [borderline]).decision_table(family)
    assert table.loc["A minus B", "verdict"] == "reproduced"
    assert table.loc["A minus B", "verdict (Holm, whole book)"] == "inconclusive"


def _strings(rng, p, items):
    return "".join("1" if x else "0" for x in rng.random(items) < p)


def test_downstream_gain_on_per_item_correctness():
    """Pretrained minus its random-init control, paired by seed and by test item: a
    planted 15 points on fine-tuned sentiment is found, none on the probe; seeds
    without a control are left out."""
    rng = np.random.default_rng(0)
    items = 500
    frame = pd.DataFrame([{"condition": "base", "seed": s,
                           "sentiment_correct": _strings(rng, 0.75, items),
                           "control_sentiment_correct": _strings(rng, 0.60, items)
                           if s < 3 else np.nan,
                           "sentiment_probe_correct": _strings(rng, 0.70, items),
                           "control_sentiment_probe_correct": _strings(rng, 0.70, items)
                           if s < 3 else np.nan} for s in range(5)])
    finetuned, probe = analysis.gate_decisions(frame, {"downstream": 1.0})
    assert finetuned.n_seeds == 3 and finetuned.unit == "points"
    assert finetuned.verdict() == "reproduced" and finetuned.low < 15 < finetuned.high
    assert probe.verdict() in ("inconclusive", "equivalent") and probe.low < 0 < probe.high
    assert finetuned.key != probe.key


def test_accuracy_against_chance_by_items_and_seeds():
    """An NSP-trained model on SOP pairs: no better than chance (the paper's 52.0)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame([{"condition": "nsp", "seed": s,
                           "sop_probe_correct": _strings(rng, 0.5, 600)} for s in range(3)])
    d = accuracy_decision(frame, "k", "sop_nsp", "NSP minus chance", "nsp", None,
                          "sop_probe_correct", margin=5.0, paper_sign=0, offset=0.5)
    assert abs(d.estimate) < 1 and d.verdict() == "reproduced"  # equivalent to chance
    better = frame.assign(sop_probe_correct=[_strings(rng, 0.6, 600) for _ in range(3)])
    d = accuracy_decision(better, "k", "sop_nsp", "NSP minus chance", "nsp", None,
                          "sop_probe_correct", margin=5.0, paper_sign=0, offset=0.5)
    assert d.verdict() == "contradicted" and d.low > 0


def test_dropout_decisions_on_planted_runs():
    frame = runs({"A": -0.03, "B": 0.0}).replace({"condition": {"A": "no dropout",
                                                                  "B": "dropout 0.1"}})
    frame["overfitting gap"] = 0.01 + np.concatenate([WOBBLE["A"], WOBBLE["B"]])
    ce, premise = analysis.dropout_decisions(frame, {"ce": 0.01})
    assert ce.key == "dropout/ce" and ce.verdict() == "reproduced"
    assert premise.verdict() == "reproduced"  # no gap between them: as the paper argues


def test_margins_follow_the_rungs():
    m = analysis.margins({"distance": 0.4})
    assert m["ce"] == pytest.approx(0.02) and m["pairs"] == 2.0
    assert set(analysis.MARGIN_REASONS) <= set(m)


def test_roughness_is_zero_for_a_steady_decline_and_positive_for_a_zig_zag():
    assert roughness([5.0, 4.0, 3.0, 2.0, 1.0]) == 0.0
    assert roughness([1.0, 2.0, 3.0]) == 0.0  # a steady rise as well
    zigzag = [3.0, 1.0, 3.0, 1.0, 3.0]
    assert roughness(zigzag) == pytest.approx(4.0 / (11 / 5))  # |2nd diff| = 4, mean 2.2
    assert roughness([2 * x for x in zigzag]) == pytest.approx(roughness(zigzag))
    assert roughness([4.0, 2.0, 1.0, 0.5]) > 0  # a slowing decline: its pace changes
    assert roughness([1.0, 2.0]) == 0.0


def test_the_first_transition_is_reported_apart():
    """ALBERT's first step starts from the E -> H projection: a large first step on an
    otherwise steady curve leaves the roughness at 0."""
    frame = pd.DataFrame({"condition": ["ALBERT-style", "BERT-style"], "seed": [0, 0],
                          "transition_l2": [[9.0, 4.0, 3.0, 2.0], [2.0, 4.0, 2.0, 4.0]],
                          "transition_angle": [[80.0, 30.0, 30.0, 30.0],
                                               [40.0, 20.0, 40.0, 20.0]]})
    out = analysis.add_roughness(frame)
    assert out.loc[0, "roughness_l2"] == 0.0 and out.loc[0, "first_l2"] == 9.0
    assert out.loc[0, "roughness_angle"] == 0.0 and out.loc[0, "last_angle"] == 30.0
    assert out.loc[1, "roughness_l2"] > 0 and out.loc[1, "roughness_angle"] > 0
    assert "roughness_l2" not in frame  # the input is left as it was


def test_scale_sentences_ignore_a_shorter_equal_flops_budget():
    """The wide model's shorter schedule must not move the scale sentence (it once made
    the wall-clock chapter's checked output flaky)."""
    base = C.base("smoke")
    full = pd.DataFrame({"steps": [20, 20], "tokens": [2e6, 2e6], "seed": [0, 1]})
    short = pd.DataFrame({"steps": [7, 9], "tokens": [7e5, 9e5], "seed": [0, 1]})
    mixed = pd.concat([full, short])
    assert analysis.scale_gap(mixed, base) == analysis.scale_gap(full, base)
    assert analysis.scale_short(mixed, base) == analysis.scale_short(full, base)
    assert "20 steps, 2.0M tokens, 2 seeds" in analysis.scale_short(full, base)
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    assert "20 steps, 5,120 tokens, 1 seed" in analysis.scale_short(one, base)
    assert "5,120 tokens per run" in analysis.scale_gap(one, base)


def test_context_reading_counts_runs_below_the_line():
    from albert_rerun.claims.baselines import reference_levels
    line = reference_levels(eval_config("smoke"))["reads_context"]
    frame = pd.DataFrame({"condition": ["sop", "sop", "nsp"],
                          CE: [line - 0.01, line + 0.01, line - 5]})
    assert "Of these 3 runs, 2 of 3 end below" in analysis.context_reading(frame, "smoke")
    frame[CE] = line + 5
    assert "none end below" in analysis.context_reading(frame, "smoke")
    frame[CE] = line - 5
    assert "all end below" in analysis.context_reading(frame, "smoke")


# -- the stored runs a chapter reads ---------------------------------------------------------

def _store_run(folder, config, metrics, evaluation):
    """A stored pretraining run and its evaluation, as the driver leaves them."""
    name = store.config_hash(config.to_dict())
    store.atomic_write_json(store.pretrain_path(folder, config), {
        "config": config.to_dict(), "hash": name, "metrics": {"steps": config.max_steps},
        "curve": [], "wall_seconds": 1.0,
        "provenance": {"git_commit": "abc", "machine": {"cpu": "test cpu"}}})
    store.atomic_write_json(store.eval_path(folder, name, evaluation), {
        "eval_config": evaluation.to_dict(), "metrics": metrics})


def test_missing_runs_are_reported_by_name(results):
    conditions = {"no dropout": C.base("smoke"), "dropout 0.1": C.dropout("smoke")["dropout 0.1"]}
    with pytest.raises(MissingRuns) as info:
        analysis.load_runs("smoke", conditions, [0, 1], train_missing=False)
    message = str(info.value)
    assert message.startswith("4 stored runs missing at profile 'smoke'")
    for name in conditions:
        for seed in (0, 1):
            hash_ = store.config_hash(C.seeded(conditions[name], seed).to_dict())
            assert f"{name!r} seed {seed} ({hash_})" in message
    assert "python -m albert_rerun.claims --profile smoke" in message


def test_stored_runs_are_read_with_their_controls(results):
    evaluation = eval_config("smoke")
    folder = store.results_dir("smoke")
    base = C.base("smoke")
    for seed in (0, 1):
        _store_run(folder, C.seeded(base, seed), {CE: 6.0 + seed, "sentiment_accuracy": 0.6},
                   evaluation)
    _store_run(folder, untrained(C.seeded(base, 0)), {CE: 8.9, "sentiment_accuracy": 0.5},
               evaluation)
    frame = analysis.load_runs("smoke", {"base": base}, [0, 1])
    assert list(frame[CE]) == [6.0, 7.0] and list(frame["seed"]) == [0, 1]
    assert frame.loc[0, "control_sentiment_accuracy"] == 0.5
    assert np.isnan(frame.loc[1, "control_sentiment_accuracy"])  # no control for seed 1
    assert set(frame["machine"]) == {"test cpu"}
    with pytest.raises(MissingRuns, match=r"^1 stored runs missing.*'base' seed 2"):
        analysis.load_runs("smoke", {"base": base}, [0, 1, 2])
    store.eval_path(folder, frame.loc[1, "hash"], evaluation).unlink()
    with pytest.raises(MissingRuns, match="'base' seed 1"):  # trained, not evaluated
        analysis.load_runs("smoke", {"base": base}, [0, 1])


def test_accuracy_decisions_widen_to_the_seed_level_t_where_seeds_disagree():
    """Three seeds whose differences disagree (+9, +1 and +5 points): the item-and-seed
    bootstrap resamples three values without a t correction; the seed-level t is wider,
    and the decision takes it (the narrower one's interval and p-values never win)."""
    from albert_rerun.claims.stats import bootstrap, correct_matrix, paired_t
    rng = np.random.default_rng(3)
    frame = pd.DataFrame([{"condition": c, "seed": s,
                           "correct": _strings(rng, 0.55 + (gain if c == "a" else 0), 2000)}
                          for s, gain in enumerate((0.09, 0.01, 0.05)) for c in ("a", "b")])
    d = accuracy_decision(frame, "k", "c", "a minus b", "a", "b", "correct", margin=1.0,
                          paper_sign=+1)
    A = 100 * correct_matrix(frame[frame.condition == "a"]["correct"])
    B = 100 * correct_matrix(frame[frame.condition == "b"]["correct"])
    boot, t = bootstrap(A, B, 1.0), paired_t(A.mean(1), B.mean(1), 1.0)
    assert d.low == min(boot["low"], t["low"]) and d.high == max(boot["high"], t["high"])
    assert d.p_difference == max(boot["p_difference"], t["p_difference"])
    assert t["high"] - t["low"] > boot["high"] - boot["low"]  # the t is the wider here

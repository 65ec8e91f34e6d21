"""The claims' building blocks: conditions shared across claims, the statistics the
chapters print, the topic baseline's features and the layer-transition measure."""
import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats as scipy_stats

from albert_rerun import claims
from albert_rerun.baselines import bag_of_words_pairs
from albert_rerun.config import ModelConfig
from albert_rerun.model import AlbertForPreTraining
from albert_rerun.pretraining_data import Instances
from albert_rerun.results import config_hash
from albert_rerun.stats import paired, summarize


def _hash(config):
    return config_hash(config.to_dict())


@pytest.mark.parametrize("profile", ["smoke", "cpu", "gpu"])
def test_shared_conditions_are_one_config(profile):
    """A model several claims use must hash the same, so it is trained once."""
    base = _hash(claims.base(profile))
    bert = _hash(claims.bert_style(profile))
    E, H = claims.base(profile).model.embedding_size, claims.base(profile).model.hidden_size
    asym = {k: _hash(v) for k, v in claims.asymmetry(profile).items()}
    assert asym[f"E={E}, all"] == base
    assert asym[f"E={H}, none"] == bert
    assert _hash(claims.sop_nsp(profile)["sop"]) == base
    assert _hash(claims.dropout(profile)["no dropout"]) == base
    groups = claims.grouped(profile)
    assert _hash(groups[1]) == base
    assert _hash(groups[max(groups)]) == asym[f"E={E}, none"]
    sweep = {k: _hash(v) for k, v in claims.embedding_sweep(profile).items()}
    assert sweep[f"all, E={E}"] == base and sweep[f"none, E={H}"] == bert
    assert len(set(asym.values())) == 8


def test_transition_models_reuse_the_asymmetry_runs_where_depth_allows():
    for profile in ("smoke", "cpu"):
        t = claims.transitions(profile)
        assert _hash(t["ALBERT-style"]) == _hash(claims.base(profile))
        assert _hash(t["BERT-style"]) == _hash(claims.bert_style(profile))
    assert claims.transitions("gpu")["BERT-style"].model.num_hidden_layers == 24


def test_planned_runs_are_distinct_and_seeded():
    calibration = {"ratio": 2.0}
    runs = claims.planned_runs("smoke", range(2), calibration=calibration)
    hashes = [_hash(r) for r in runs]
    assert len(hashes) == len(set(hashes))
    assert {r.seed for r in runs} == {0, 1}
    equal_time = claims.wall_clock("smoke", calibration)["wide ALBERT-style, equal time"]
    assert equal_time.max_steps == round(claims.base("smoke").max_steps / 2.0)
    # claim by claim: the first runs are the asymmetry table's, seed 0 then seed 1
    first = [(r.model.sharing, r.seed) for r in runs[:16]]
    assert first[:8] == [(s, 0) for s in claims.SCHEMES] * 2


def test_summarize_and_paired_match_scipy():
    frame = pd.DataFrame({"condition": ["a"] * 4 + ["b"] * 4, "seed": list(range(4)) * 2,
                          "metric": [0.50, 0.52, 0.49, 0.55, 0.45, 0.50, 0.47, 0.48]})
    table = summarize(frame, "metric", scale=100)
    a = 100 * np.array([0.50, 0.52, 0.49, 0.55])
    low, high = scipy_stats.t.interval(0.95, 3, loc=a.mean(), scale=scipy_stats.sem(a))
    assert table.loc["a", "mean"] == pytest.approx(a.mean())
    assert (table.loc["a", "low"], table.loc["a", "high"]) == pytest.approx((low, high))
    d = paired(frame, "metric", "a", "b", scale=100)
    diff = a - 100 * np.array([0.45, 0.50, 0.47, 0.48])
    low, high = scipy_stats.t.interval(0.95, 3, loc=diff.mean(), scale=scipy_stats.sem(diff))
    assert (d.low, d.high) == pytest.approx((low, high))


def test_paired_uses_only_shared_seeds_and_refuses_none():
    frame = pd.DataFrame({"condition": ["a", "a", "b"], "seed": [0, 1, 1],
                          "metric": [1.0, 2.0, 1.5]})
    assert paired(frame, "metric", "a", "b").n == 1
    with pytest.raises(ValueError, match="share no seed"):
        paired(frame.iloc[[0, 2]].assign(seed=[0, 1]), "metric", "a", "b")


def test_combine_verdicts():
    assert claims.combine_verdicts(["reproduced", "reproduced"]) == "reproduced"
    assert claims.combine_verdicts(["reproduced", "inconclusive"]) == "inconclusive"
    assert claims.combine_verdicts(["inconclusive", "not reproduced"]) == "not reproduced"


def test_roughness():
    assert claims.roughness([3.0, 3.0, 3.0]) == 0.0
    assert claims.roughness([1.0, 3.0, 1.0]) == pytest.approx(2.0 / (5 / 3))
    assert claims.roughness([2.0, 4.0]) == pytest.approx(claims.roughness([1.0, 2.0]))


class _Tok:
    vocab_size, cls_id, sep_id = 10, 2, 3


def test_bag_of_words_features_mark_each_segment_and_their_overlap():
    ids = np.array([[2, 5, 6, 3, 6, 7, 3, 0]], dtype=np.int32)  # [CLS] 5 6 [SEP] 6 7 [SEP]
    types = np.array([[0, 0, 0, 0, 1, 1, 1, 0]], dtype=np.int8)
    instances = Instances(ids, types, np.array([7]), np.array([0]))
    x = bag_of_words_pairs(instances, [0], _Tok()).toarray()[0]
    assert set(np.flatnonzero(x[:10])) == {5, 6}
    assert set(np.flatnonzero(x[10:20])) == {6, 7}
    assert set(np.flatnonzero(x[20:])) == {6}


def test_layer_transitions_equal_a_direct_computation():
    from albert_rerun.train import layer_transitions
    config = ModelConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=3,
                         num_attention_heads=2, intermediate_size=32,
                         max_position_embeddings=16, sharing="all")
    torch.manual_seed(0)
    model = AlbertForPreTraining(config)
    ids = torch.randint(5, 50, (3, 10))
    mask = torch.ones(3, 10, dtype=torch.long)
    mask[1, 7:] = 0
    held_out = type("H", (), {})()
    held_out.sets = {"sop": {"original_ids": ids, "token_type_ids": torch.zeros_like(ids),
                             "attention_mask": mask}}
    out = layer_transitions(model, held_out, torch.device("cpu"))
    with torch.no_grad():
        states = model.albert(ids, torch.zeros_like(ids), mask, output_hidden_states=True)[2]
    keep = mask.bool()
    for layer in range(3):
        a, b = (states[k][keep].double().numpy() for k in (layer, layer + 1))
        l2 = np.linalg.norm(b - a, axis=1).mean()
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        angle = np.degrees(np.arccos(np.clip(cos, -1, 1))).mean()
        assert out["transition_l2"][layer] == pytest.approx(l2, rel=1e-5)
        assert out["transition_angle"][layer] == pytest.approx(angle, rel=1e-6)
    assert len(out["transition_l2"]) == 3 and all(math.isfinite(v) for v in out["transition_angle"])


def test_scale_sentence_ignores_a_shorter_equal_time_budget():
    """The equal-time run's length comes from a timing; the scale sentence must not move
    with it (it once made the wall-clock chapter's checked output flaky)."""
    base = claims.base("smoke")
    full = pd.DataFrame({"steps": [20, 20], "tokens": [2e6, 2e6], "seed": [0, 1]})
    short = pd.DataFrame({"steps": [7, 9], "tokens": [7e5, 9e5], "seed": [0, 1]})
    mixed = pd.concat([full, short])
    assert claims.scale_gap(mixed, base) == claims.scale_gap(full, base)
    assert claims.scale_short(mixed, base) == claims.scale_short(full, base)
    assert "20 steps, 2.0M tokens, 2 seeds" in claims.scale_short(full, base)
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    assert "20 steps, 5,120 tokens, 1 seed" in claims.scale_short(one, base)
    assert "5,120 tokens per run" in claims.scale_gap(one, base)


def test_mask_rungs_on_a_hand_built_corpus():
    """Training text: 5 is the commonest piece; 1 is followed by 2 twice, by 3 once."""
    from albert_rerun.baselines import left_bigram_table, mask_rungs
    train = np.array([5, 1, 2, 5, 1, 2, 5, 1, 3, 5, 5])
    table = left_bigram_table(train, vocab_size=8)
    assert table[1] == 2 and table[2] == 5 and table[3] == 5 and table[5] == 1
    assert table[0] == -1 and table[7] == -1
    M = 7  # the [MASK] id
    ids = np.array([[1, M, 4, M, M],
                    [M, 2, 0, 0, 0]])
    labels = np.array([[-100, 2, -100, 5, 3],
                       [5, -100, -100, -100, -100]])
    rungs = mask_rungs(ids, labels, train, vocab_size=8, mask_id=M)
    # targets 2, 5, 3, 5. Unigram (5): 2 of 4. Bigram: after 1 -> 2 (hit); after 4,
    # never seen -> unigram 5 (hit); left is [MASK] -> 5 (miss); first position -> 5 (hit)
    losses = {k: rungs.pop(k) for k in ("unigram_loss_at_mask", "bigram_loss_at_mask",
                                        "unigram_loss_se")}
    assert rungs == {"unigram_at_mask": 0.5, "bigram_at_mask": 0.75,
                     "left_visible": 0.5, "targets": 4}
    # add-one unigram over 11 tokens and 8 pieces: p(5) = 6/19, p(2) = 3/19, p(3) = 2/19.
    # Witten-Bell after 1 (seen 3 times, 2 distinct followers, 1 -> 2 twice):
    # p(2 | 1) = (2 + 2 * 3/19) / (3 + 2) = 44/95; 4 was never a left neighbour: unigram
    assert losses["unigram_loss_at_mask"] == pytest.approx(
        -np.mean(np.log([3 / 19, 6 / 19, 2 / 19, 6 / 19])))
    assert losses["bigram_loss_at_mask"] == pytest.approx(
        -np.mean(np.log([44 / 95, 6 / 19, 2 / 19, 6 / 19])))
    assert losses["unigram_loss_se"] == pytest.approx(
        np.std(np.log([3 / 19, 6 / 19, 2 / 19, 6 / 19]), ddof=1) / 2)
    with pytest.raises(ValueError, match="no position"):
        mask_rungs(ids, np.full_like(labels, -100), train, 8, M)


def test_left_bigram_probabilities_sum_to_one_after_every_piece():
    from albert_rerun.baselines import LeftBigram
    train = np.random.default_rng(0).integers(0, 9, 200)
    train[train == 4] = 3  # 4 never occurs, so it is never a left neighbour either
    model = LeftBigram(train, vocab_size=10)
    grid_left, grid_right = np.meshgrid(np.arange(10), np.arange(10), indexing="ij")
    table = model.probability(grid_left, grid_right)
    assert (table > 0).all()
    np.testing.assert_allclose(table.sum(axis=1), 1.0)
    np.testing.assert_allclose(table[4], model.unigram)  # an unseen left: the unigram


@pytest.mark.parametrize("profile", ["cpu", "gpu"])
def test_every_planned_model_takes_a_training_step(profile):
    """The cpu and gpu profiles are not run in CI; each distinct model they would train
    (24 layers for the gpu transitions) must at least build and take one finite step."""
    models = {}
    for config in claims.planned_runs(profile, [0], calibration={"ratio": 2.0}):
        models.setdefault(config_hash(config.model.to_dict()), config)
    assert len(models) >= 8
    torch.manual_seed(0)
    for config in models.values():
        model = AlbertForPreTraining(config.model)
        ids = torch.randint(5, config.vocab_size, (2, 12))
        labels = torch.full_like(ids, -100)
        labels[:, 3] = ids[:, 3]
        out = model(ids, torch.zeros_like(ids), torch.ones_like(ids), mlm_labels=labels,
                    sentence_labels=torch.tensor([0, 1]))
        out.loss.backward()
        assert torch.isfinite(out.loss), config.model


def test_cpu_profile_trains_the_grids_fastest_four_layer_recipe():
    """The profile must be the recipe the first chapter measured (everything that shapes
    training; evaluation sizes and fine-tuning may differ)."""
    from albert_rerun.recipe import TRAINING_FIELDS, grid
    candidate = grid("cpu")["H64-L4-B16-T64-lamb-0.005"].to_dict()
    base = claims.base("cpu").to_dict()
    assert set(TRAINING_FIELDS) >= {
        "model", "objective", "max_seq_length", "batch_size", "max_predictions", "optimizer",
        "learning_rate", "warmup_steps", "max_steps", "weight_decay", "train_documents"}
    for field in TRAINING_FIELDS:
        assert base[field] == candidate[field], field
    assert claims.base("cpu").model.embedding_size in claims.CLAIM_SIZES["cpu"].embedding_sizes


def test_driver_shares_runs_between_machines_and_honours_its_deadline(
        tmp_path, monkeypatch, capsys):
    import re
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    # the measurements are not what is tested here (and take most of a minute)
    monkeypatch.setattr(claims, "calibrate", lambda *args, **kwargs: {"ratio": 2.0})
    monkeypatch.setattr(claims, "throughput", lambda *args, **kwargs: {})
    trained = claims.train_all("smoke", seeds=2, workers=1, names=("dropout", "sop_nsp"),
                               exclude=("asymmetry",), seconds=-1)
    out = capsys.readouterr().out
    # per seed: dropout 0.1, and SOP's "none" and "nsp"; the base run is asymmetry's
    assert trained == 0 and "6 runs, 6 to train" in out
    assert out.count("not started (deadline)") == 6
    stored = [p for p in (tmp_path / "smoke").glob("*.json")
              if re.fullmatch(r"[0-9a-f]{16}\.json", p.name)]
    assert stored == []


def test_a_failed_claim_run_is_reported_and_the_worker_goes_on(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    good = claims.base("smoke").replace(max_steps=2, finetune=None)
    bad = good.replace(seed=1, probe_examples=1)  # a one-class probe cannot be fitted
    assert claims.train_runs([bad, good], "smoke") == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "steps 2: MLM" in out


def test_context_reading_counts_runs_below_their_own_objectives_line():
    from albert_rerun.baselines import reference_levels
    config = claims.base("smoke")
    line = reference_levels(config)["reads_context"]
    conditions = {"sop": config, "nsp": config.replace(objective="nsp")}
    frame = pd.DataFrame({"condition": ["sop", "sop", "nsp"],
                          "mlm_loss_at_mask": [line - 0.01, line + 0.01, line - 5]})
    assert "Of these 3 runs, 2 of 3 end below" in claims.context_reading(frame, conditions)
    frame["mlm_loss_at_mask"] = line + 5
    assert "none end below" in claims.context_reading(frame, conditions)
    frame["mlm_loss_at_mask"] = line - 5
    assert "all end below" in claims.context_reading(frame, conditions)

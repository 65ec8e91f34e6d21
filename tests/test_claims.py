"""The claims' building blocks: conditions shared across claims (one config, one stored
run), what the driver plans and how it reports, and the count-based baselines."""
import re

import numpy as np
import pytest

from albert_rerun.studies import conditions as C
from albert_rerun.studies import driver, training
from albert_rerun.studies.baselines import bag_of_words_pairs
from albert_rerun.data.corpus import Instances
from albert_rerun.engine.config import untrained
from albert_rerun.engine.store import config_hash
from albert_rerun.profiles import resolve

pytestmark = pytest.mark.usefixtures("single_thread")


def _hash(config):
    return config_hash(config.to_dict())


@pytest.mark.parametrize("name", ["smoke", "cpu", "gpu"])
def test_shared_conditions_are_one_config(name):
    """A model several claims use must hash the same, so it is trained once."""
    profile = resolve(name)
    base = _hash(C.base(profile))
    bert = _hash(C.bert_style(profile))
    E, H = C.base(profile).model.embedding_size, C.base(profile).model.hidden_size
    asym = {k: _hash(v) for k, v in C.asymmetry(profile).items()}
    assert asym[f"E={E}, all"] == base
    assert asym[f"E={H}, none"] == bert
    assert _hash(C.sop_nsp(profile)["sop"]) == base
    assert _hash(C.dropout(profile)["no dropout"]) == base
    groups = C.grouped(profile)
    assert _hash(groups[1]) == base
    assert _hash(groups[max(groups)]) == asym[f"E={E}, none"]
    assert all(groups[g].model.num_hidden_groups == g for g in groups if 1 < g < max(groups))
    sweep = {k: _hash(v) for k, v in C.embedding_sweep(profile).items()}
    assert sweep[f"all, E={E}"] == base and sweep[f"none, E={H}"] == bert
    assert len(set(asym.values())) == 8
    assert {E, H} <= set(C.CLAIM_SIZES[name].embedding_sizes)


@pytest.mark.parametrize("name", ["smoke", "cpu", "gpu"])
def test_transition_models_have_figure_1s_depth_where_the_profile_affords_it(name):
    profile = resolve(name)
    sizes = C.CLAIM_SIZES[name]
    t = C.transitions(profile)
    assert set(t) == {"BERT-style", "ALBERT-style"}
    for name, config in t.items():
        assert config.model.num_hidden_layers == sizes.transition_layers
        assert config.max_steps == round(C.base(profile).max_steps * sizes.transition_step_share)
        assert config.warmup_steps <= config.max_steps
    assert t["ALBERT-style"].model.sharing == "all" and t["BERT-style"].model.sharing == "none"
    assert t["ALBERT-style"].model.hidden_size == t["BERT-style"].model.hidden_size


def test_the_wide_model_gets_the_bert_style_models_training_flops():
    for profile in map(resolve, ("smoke", "cpu", "gpu")):
        bert, steps = C.bert_style(profile), C.equal_flops_steps(profile)
        wide = C.wide_albert(profile, steps)
        factor = C.CLAIM_SIZES[profile.name].wide_factor
        assert wide.model.hidden_size == factor * bert.model.hidden_size
        assert wide.model.sharing == "all"
        budget = C.step_flops(bert) * bert.max_steps
        assert abs(C.step_flops(wide) * steps - budget) <= C.step_flops(wide) / 2
        assert C.step_flops(wide) > C.step_flops(bert)  # fewer, costlier steps


def test_the_wide_sweep_is_fixed_before_the_comparison():
    sweep = C.wide_sweep(resolve("cpu"))
    assert tuple(sweep) == C.WIDE_LEARNING_RATES
    assert {c.seed for c in sweep.values()} == {C.SWEEP_SEED}
    assert C.SWEEP_SEED >= resolve("gpu").default_seeds  # no comparison uses it
    assert {c.max_steps for c in sweep.values()} == {C.equal_flops_steps(resolve("cpu"))}
    wall = C.wall_clock(resolve("cpu"), 5e-3)
    assert wall["wide ALBERT-style, equal FLOPs"].learning_rate == 5e-3
    assert _hash(wall["BERT-style"]) == _hash(C.bert_style(resolve("cpu")))
    with pytest.raises(ValueError, match="swept learning rate"):
        C.claim_conditions(resolve("cpu"), "wall_clock")
    with pytest.raises(ValueError, match="unknown claim"):
        C.claim_conditions(resolve("cpu"), "everything")


def test_planned_runs_are_distinct_seeded_and_claim_by_claim():
    runs = driver.planned_runs(resolve("smoke"), range(2), C.CLAIMS, wide_learning_rate=5e-3)
    hashes = [_hash(r) for r in runs]
    assert len(hashes) == len(set(hashes))
    assert {r.seed for r in runs} == {0, 1}
    # the base run's seeds first (every decision compares against it), then the
    # asymmetry table's cells condition by condition, each with all its seeds
    base = [_hash(C.seeded(C.base("smoke"), seed)) for seed in (0, 1)]
    assert hashes[:2] == base
    cells = [_hash(C.seeded(c, seed)) for c in C.asymmetry(resolve("smoke")).values()
             for seed in (0, 1)]
    assert hashes[2:16] == [h for h in cells if h not in base]
    every = {_hash(C.seeded(c, seed)) for name in C.CLAIMS
             for c in C.claim_conditions(resolve("smoke"), name, 5e-3).values() for seed in (0, 1)}
    assert set(hashes) == every


def test_controls_are_shared_by_conditions_of_one_architecture():
    runs = driver.planned_runs(resolve("smoke"), range(5), ("sop_nsp", "dropout"))
    controls = driver.planned_controls(runs)
    # two architectures (dropout or not) times the control seeds 0, 1, 2
    assert len(controls) == 2 * training.CONTROL_SEEDS
    assert {c.seed for c in controls} == set(range(training.CONTROL_SEEDS))
    assert all(c.max_steps == 0 for c in controls)
    sop, nsp = (C.seeded(C.sop_nsp(resolve("smoke"))[k], 1) for k in ("sop", "nsp"))
    assert _hash(untrained(sop)) == _hash(untrained(nsp))


def test_the_driver_honours_its_deadline(results, capsys):
    trained = driver.train_all("smoke", seeds=2, workers=1, names=("dropout", "sop_nsp"),
                               seconds=-1, stages=("pretrain",))
    out = capsys.readouterr().out
    runs = driver.planned_runs(resolve("smoke"), range(2), ("dropout", "sop_nsp"))
    planned = len(runs) + len(driver.planned_controls(runs))
    assert trained == 0 and f"{planned} runs, {planned} to train" in out
    assert out.count("not started (deadline)") == planned
    assert not list(results.rglob("*.json"))


def test_a_failed_run_is_reported_and_the_others_go_on(results, capsys):
    good = C.base("smoke").replace(max_steps=2, warmup_steps=1, curve_every=0)
    bad = good.replace(seed=1, train_documents=1, batch_size=512)  # fewer pairs than a batch
    assert training._train([bad, good], results / "smoke", "cpu", 1, False, False,
                           float("inf"), "pretrain") == 1
    out = capsys.readouterr().out
    assert re.search(rf"{_hash(bad)}: FAILED ValueError: the training corpus yields", out)
    assert re.search(rf"{_hash(good)} \{{'steps': 2", out)
    stored = {p.stem for p in (results / "smoke" / "pretrain").glob("*.json")}
    assert stored == {_hash(good)}


def test_a_blinded_report_shows_costs_not_results(capsys):
    """The confirmatory stretches log each run's steps and seconds, never its loss."""
    metrics = {"steps": 5, "train_seconds": 1.5, "tokens_per_second": 10.0,
               "mlm_loss_at_mask": 6.3, "curve_mlm_loss_at_mask": 6.4}
    outcomes = [("a" * 16, ({"metrics": metrics}, 2.0))]
    assert training._report(outcomes, "confirm", blinded=True) == 1
    blinded = capsys.readouterr().out
    assert "'train_seconds': 1.5" in blinded and "6.3" not in blinded and "6.4" not in blinded
    training._report(outcomes, "pretrain")
    assert "'mlm_loss_at_mask': 6.3" in capsys.readouterr().out


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


def test_mask_rungs_on_a_hand_built_corpus():
    """Training text: 5 is the commonest piece; 1 is followed by 2 twice, by 3 once."""
    from albert_rerun.studies.baselines import LeftBigram, mask_rungs
    train = np.array([5, 1, 2, 5, 1, 2, 5, 1, 3, 5, 5])
    table = LeftBigram(train, vocab_size=8).top_followers()
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
    from albert_rerun.studies.baselines import LeftBigram
    train = np.random.default_rng(0).integers(0, 9, 200)
    train[train == 4] = 3  # 4 never occurs, so it is never a left neighbour either
    model = LeftBigram(train, vocab_size=10)
    grid_left, grid_right = np.meshgrid(np.arange(10), np.arange(10), indexing="ij")
    table = model.probability(grid_left, grid_right)
    assert (table > 0).all()
    np.testing.assert_allclose(table.sum(axis=1), 1.0)
    np.testing.assert_allclose(table[4], model.unigram)  # an unseen left: the unigram


def test_cpu_long_plans_thirty_runs_of_the_core_claims_at_four_times_the_steps():
    """Issue 18: the cpu sizes at 21,600 steps, ten conditions at three seeds."""
    runs = driver.planned_runs(resolve("cpu-long"), range(3), wide_learning_rate=5e-3)
    assert len(runs) == 30 and {r.seed for r in runs} == {0, 1, 2}
    assert {r.max_steps for r in runs if r.model.hidden_size == 64} == {21_600}
    base = C.base("cpu-long")
    assert _hash(base) == _hash(C.with_steps(C.base("cpu"), 21_600))
    assert "grouped" not in C.profile_claims(resolve("cpu-long"))
    assert "transitions" not in C.profile_claims(resolve("cpu-long"))
    assert set(C.asymmetry(resolve("cpu-long"))) == {
        "E=32, none", "E=32, attention", "E=32, ffn", "E=32, all", "E=64, none", "E=64, all"}
    assert list(C.wall_clock(resolve("cpu-long"), 5e-3)) == ["BERT-style",
                                                             "wide ALBERT-style, equal time"]


def test_the_equal_time_budget_is_the_bert_style_runs_measured_seconds():
    """Table 6's design: the wide model trains for the BERT-style model's training seconds
    (the median of the stored cpu runs), at the wide model's measured seconds per step."""
    from statistics import median

    from albert_rerun.engine.store import stored_pretrain
    cpu = resolve("cpu")
    budget = C.equal_time_steps(cpu)
    store = C._timing_store(cpu)
    bert = [stored_pretrain(store, C.seeded(C.bert_style(cpu), s))["metrics"]
            for s in range(3)]
    assert budget["bert_seconds"] == median(m["train_seconds"] for m in bert)
    assert budget["steps"] == round(budget["bert_seconds"] / budget["wide_step_seconds"])
    # the wide model is slower per step than the BERT-style one, but it gets more steps
    # at equal time than at equal FLOPs (the time ratio is below the FLOP ratio)
    assert C.equal_flops_steps(cpu) < budget["steps"] < C.bert_style(cpu).max_steps
    long = C.equal_time_steps(resolve("cpu-long"))
    assert long["bert_seconds"] == 4 * budget["bert_seconds"] and not long["estimate"]
    # the gpu profile times its own runs: before they exist a plan may estimate from
    # the cpu ratio, but nothing is configured for training from an estimate
    with pytest.raises(LookupError, match="train those first"):
        C.equal_time_steps(resolve("gpu"))
    assert C.equal_time_steps(resolve("gpu"), planning=True)["estimate"]

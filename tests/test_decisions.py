"""claims.decisions on synthetic runs whose answer is known: a planted effect is found,
no effect reads 'equivalent' or 'inconclusive' as the margin says, accuracies pair by
seed and item, and missing runs are named."""
import numpy as np
import pandas as pd
import pytest
from synthetic import runs, strings

from albert_rerun.studies import conditions as C
from albert_rerun.studies import decisions
from albert_rerun.studies.decisions import CE, MissingRuns, accuracy_decision, ce_decision
from albert_rerun.stats.inference import holm, staged_verdict
from albert_rerun.engine import store
from albert_rerun.engine.config import untrained
from albert_rerun.profiles import eval_config, resolve


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
    x, y = decisions.pair_of(partial, CE, "A", "B")
    assert len(x) == len(y) == 4
    with pytest.raises(ValueError, match="share no seed"):
        decisions.pair_of(partial.assign(seed=np.where(partial["condition"] == "A", 0, 1)),
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


def test_accuracy_against_chance_by_items_and_seeds():
    """An NSP-trained model on SOP pairs: no better than chance (the paper's 52.0)."""
    rng = np.random.default_rng(1)
    frame = pd.DataFrame([{"condition": "nsp", "seed": s,
                           "sop_probe_correct": strings(rng, 0.5, 600)} for s in range(3)])
    d = accuracy_decision(frame, "k", "sop_nsp", "NSP minus chance", "nsp", None,
                          "sop_probe_correct", margin=5.0, paper_sign=0, offset=0.5)
    assert abs(d.estimate) < 1 and d.verdict() == "reproduced"  # equivalent to chance
    better = frame.assign(sop_probe_correct=[strings(rng, 0.6, 600) for _ in range(3)])
    d = accuracy_decision(better, "k", "sop_nsp", "NSP minus chance", "nsp", None,
                          "sop_probe_correct", margin=5.0, paper_sign=0, offset=0.5)
    assert d.verdict() == "contradicted" and d.low > 0


def test_margins_follow_the_rungs():
    m = decisions.margins({"distance": 0.4})
    assert m["ce"] == pytest.approx(0.02) and m["pairs"] == 2.0


# -- the stored runs a chapter reads -----------------------------------------------------


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
    conditions = {"no dropout": C.base("smoke"),
                  "dropout 0.1": C.dropout(resolve("smoke"))["dropout 0.1"]}
    with pytest.raises(MissingRuns) as info:
        decisions.load_runs(resolve("smoke"), conditions, [0, 1], train_missing=False)
    message = str(info.value)
    assert message.startswith("4 stored runs missing at profile 'smoke'")
    for name in conditions:
        for seed in (0, 1):
            hash_ = store.config_hash(C.seeded(conditions[name], seed).to_dict())
            assert f"{name!r} seed {seed} ({hash_})" in message
    assert "python -m albert_rerun.studies --profile smoke" in message


def test_stored_runs_are_read_with_their_controls(results):
    evaluation = eval_config("smoke")
    folder = store.results_dir("smoke")
    base = C.base("smoke")
    for seed in (0, 1):
        _store_run(folder, C.seeded(base, seed), {CE: 6.0 + seed, "sentiment_accuracy": 0.6},
                   evaluation)
    _store_run(folder, untrained(C.seeded(base, 0)), {CE: 8.9, "sentiment_accuracy": 0.5},
               evaluation)
    # a run whose control is not evaluated counts as missing (its decisions subtract the
    # control), named by the run's seed: no estimate is computed before all its seeds are
    # stored
    with pytest.raises(MissingRuns, match=r"^1 stored runs missing.*'base' seed 1"):
        decisions.load_runs(resolve("smoke"), {"base": base}, [0, 1])
    assert list(decisions.load_runs(resolve("smoke"), {"base": base}, [0, 1], controls=False)[CE]) \
        == [6.0, 7.0]
    _store_run(folder, untrained(C.seeded(base, 1)), {CE: 8.8, "sentiment_accuracy": 0.4},
               evaluation)
    frame = decisions.load_runs(resolve("smoke"), {"base": base}, [0, 1])
    assert list(frame[CE]) == [6.0, 7.0] and list(frame["seed"]) == [0, 1]
    assert list(frame["control_sentiment_accuracy"]) == [0.5, 0.4]
    assert set(frame["machine"]) == {"test cpu"}
    with pytest.raises(MissingRuns, match=r"^1 stored runs missing.*'base' seed 2"):
        decisions.load_runs(resolve("smoke"), {"base": base}, [0, 1, 2])
    store.eval_path(folder, frame.loc[1, "hash"], evaluation).unlink()
    with pytest.raises(MissingRuns, match="'base' seed 1"):  # trained, not evaluated
        decisions.load_runs(resolve("smoke"), {"base": base}, [0, 1])


def test_accuracy_decisions_widen_to_the_seed_level_t_where_seeds_disagree():
    """Three seeds whose differences disagree (+9, +1 and +5 points): the item-and-seed
    bootstrap resamples three values without a t correction; the seed-level t is wider,
    and the decision takes it (the narrower one's interval and p-values never win)."""
    from albert_rerun.stats.inference import bootstrap, correct_matrix, paired_t
    rng = np.random.default_rng(3)
    frame = pd.DataFrame([{"condition": c, "seed": s,
                           "correct": strings(rng, 0.55 + (gain if c == "a" else 0), 2000)}
                          for s, gain in enumerate((0.09, 0.01, 0.05)) for c in ("a", "b")])
    d = accuracy_decision(frame, "k", "c", "a minus b", "a", "b", "correct", margin=1.0,
                          paper_sign=+1)
    A = 100 * correct_matrix(frame[frame.condition == "a"]["correct"])
    B = 100 * correct_matrix(frame[frame.condition == "b"]["correct"])
    boot, t = bootstrap(A, B, 1.0), paired_t(A.mean(1), B.mean(1), 1.0)
    assert d.low == min(boot["low"], t["low"]) and d.high == max(boot["high"], t["high"])
    assert d.p_difference == max(boot["p_difference"], t["p_difference"])
    assert t["high"] - t["low"] > boot["high"] - boot["low"]  # the t is the wider here


# -- the competence gate on chapter frames ------------------------------------------------

GATE_RUNGS = {"rungs": {"unigram_loss_at_mask": 6.685, "bigram_loss_at_mask": 6.147},
              "reads_context": 6.665, "distance": 6.685 - 6.147}


def test_decisions_name_their_arms_and_the_gate_reads_their_mean_cross_entropy():
    frame = runs({"A": -0.3, "B": 0.3})  # A near 6.2 (reads context), B near 6.8 (does not)
    d = _ce(frame, 0.01, -1)
    assert d.arms == ("A", "B") and d.stage == ""
    (gated,) = decisions.gated([d], frame, GATE_RUNGS)
    assert gated.stage == "not testable" and gated.failed_arms == "B"
    assert gated.verdict() == "not testable at this scale"
    assert _staged(gated) == "not testable at this scale (B does not read context)"
    assert gated.estimate == d.estimate  # the measured difference stays
    both = runs({"A": -0.3, "B": -0.2})
    (early,) = decisions.gated([_ce(both, 0.01, -1)], both, GATE_RUNGS)
    assert early.stage == "early training" and early.weakest_arm == "B"
    level = (6.685 - both.loc[both["condition"] == "B", CE].mean()) / (6.685 - 6.147)
    assert early.weakest_level == pytest.approx(level)
    assert _staged(early).startswith(f"{early.verdict()}, early training: "
                                                  f"weakest arm at {100 * level:.0f}%")


def _staged(d):
    return staged_verdict(d.verdict(), d.stage, d.weakest_level, d.gate_reason)


def test_a_check_of_the_test_sets_compares_no_model_and_is_not_gated():
    frame = pd.DataFrame({"condition": ["nsp"] * 2, "seed": [0, 1],
                          "correct": ["1101", "1110"]})
    d = accuracy_decision(frame, "k", "c", "bag of words minus majority", "nsp", None,
                          "correct", 2.0, +1, offset=0.5, arms=())
    (staged,) = decisions.gated([d], frame, GATE_RUNGS)
    assert staged.stage == "no model" and staged.judged


def test_the_cost_of_sharing_everything_is_decided_at_each_e():
    """Review error 8: Table 4's headline, all shared minus not shared, at both E; a
    profile without the E = H attention and FFN cells (cpu-long) still gets it there."""
    from albert_rerun.book.asymmetry import asymmetry_decisions
    names = {"A": "E=32, all", "B": "E=32, none", "C": "E=64, all"}
    frame = runs({"A": 0.03, "B": 0.0, "C": 0.05}).replace({"condition": names})
    frame = pd.concat([frame, runs({"A": 0.0}).replace({"condition": {"A": "E=64, none"}})])
    out = {d.key: d for d in asymmetry_decisions(frame, frame.iloc[0:0], 32, 64, [], {"ce": 0.01})}
    assert set(out) == {"asymmetry/all-none/small-E", "asymmetry/all-none/E=H"}
    assert out["asymmetry/all-none/small-E"].paper_sign == +1
    assert out["asymmetry/all-none/small-E"].verdict() == "reproduced"
    assert out["asymmetry/all-none/E=H"].estimate == pytest.approx(0.05, abs=0.005)


def test_partial_sharing_decisions_wait_for_a_resolved_whole_cost():
    """Review: where all shared minus not shared is within one margin to the far end of
    its interval, both partial costs are too: attention minus FFN cannot differ by a
    margin and attention minus not shared is equivalent by construction; both are gated
    as a design that cannot fail. A whole cost under two margins does not suffice (the
    partial costs could then differ by more than one: the gate's former threshold)."""
    from albert_rerun.book.asymmetry import asymmetry_decisions, resolution_gate
    names = {"A": "E=32, all", "B": "E=32, none", "C": "E=32, attention"}
    small = runs({"A": 0.03, "B": 0.0, "C": 0.01}).replace({"condition": names})
    ffn = runs({"A": 0.02}).replace({"condition": {"A": "E=32, ffn"}})
    frame = pd.concat([small, ffn])
    made = asymmetry_decisions(frame, frame.iloc[0:0], 32, 64, [], {"ce": 0.02, "small": 0.02})
    whole = next(d for d in made if d.key == "asymmetry/all-none/small-E")
    far = max(abs(whole.low), abs(whole.high))
    assert 0.03 <= far < 0.04
    gate = resolution_gate(made, 0.05)
    assert set(gate) == {"asymmetry/attention-ffn/small-E", "asymmetry/attention-none/small-E"}
    assert f"{far:.3f} nats" in gate["asymmetry/attention-none/small-E"]
    assert resolution_gate(made, 0.02) == {}  # under two margins of 0.02, not under one
    assert resolution_gate(made, 0.01) == {}


def test_an_interval_never_prints_minus_zero():
    """A chapter printed '-0.000 nats [-0.009, +0.009]' (the dropout premise at cpu): a
    number that rounds to zero reads '0.000' on every machine."""
    assert decisions.interval_text(-0.0001, -0.009, 0.009, "nats") == "0.000 [-0.009, +0.009]"
    assert decisions.interval_text(0.0124, -0.0003, 0.025, "nats") == "+0.012 [0.000, +0.025]"
    assert decisions.interval_text(-1.26, -2.0, -0.5, "points") == "-1.3 [-2.0, -0.5]"

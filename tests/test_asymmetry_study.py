"""The asymmetry study (issue #54): its runs, its decisions on synthetic runs, its power
and that nothing trains before its registration."""
import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.multitest import multipletests

from albert_rerun.engine.store import config_hash
from albert_rerun.paths import repo_root
from albert_rerun.studies import asymmetry as S
from albert_rerun.studies import asymmetry_pilot as P
from albert_rerun.studies import confirm_design as D


def test_every_run_is_distinct_and_differs_from_its_pilot_twin_in_seed_only():
    configs = S.configs()
    assert len(configs) == sum(len(S.SEEDS[d]) * len(S.ARMS[d]) for d in S.SEEDS)
    assert len({config_hash(c.to_dict()) for c in configs.values()}) == len(configs)
    for (arm, layers, seed), c in configs.items():
        assert c.seed == seed and c.model.num_hidden_layers == layers
        assert c.model.init_draw == "common" and c.max_steps == S.STEPS
        twin = P.arm_config(arm, layers).replace(seed=seed)
        assert c.to_dict() == twin.to_dict()
    widened = configs[(S.WIDENED, S.DEEP, S.SEEDS[S.DEEP][0])]
    assert widened.model.intermediate_size == P.widened_ffn(S.DEEP)


def test_seeds_are_fresh():
    stored = set()
    for path in (repo_root() / "data" / "results").glob("*/pretrain/*.json"):
        if path.parent.parent.name != S.STORE:
            stored.add(json.loads(path.read_text())["config"]["seed"])
    seeds = set(S.SEEDS[S.SHALLOW]) | set(S.SEEDS[S.DEEP])
    assert not stored & seeds and P.DEEP_SEED not in seeds
    assert len(seeds) == len(S.SEEDS[S.SHALLOW]) + len(S.SEEDS[S.DEEP])


def test_runs_train_seed_by_seed():
    runs = S.planned()
    assert len(runs) == len(S.configs())
    first = [(r.model.num_hidden_layers, r.seed) for r in runs[:2 + len(S.ARMS[S.DEEP])]]
    assert first == [(S.SHALLOW, S.SEEDS[S.SHALLOW][0])] * 2 + \
        [(S.DEEP, S.SEEDS[S.DEEP][0])] * len(S.ARMS[S.DEEP])


def _frame(effects: dict, seeds: int = 8, sd: float = 0.004, base: float = 6.0,
           rng=None) -> pd.DataFrame:
    """Synthetic runs: ``effects`` {(arm, layers): mean over attention-shared}."""
    rng = rng or np.random.default_rng(0)
    rows = []
    for layers in (S.SHALLOW, S.DEEP):
        for seed in range(seeds):
            noise = rng.normal(0, sd)
            for arm in S.ARMS[layers]:
                ce = base + effects.get((arm, layers), 0.0) + noise + rng.normal(0, sd)
                rows.append({"arm": arm, "layers": layers, "seed": seed, "ce": ce,
                             "curve": [{"tokens": 1e6, S.CE: ce + 0.5},
                                       {"tokens": 2e6, S.CE: ce}]})
    return pd.DataFrame(rows)


def test_decisions_follow_their_numbers():
    effects = {(S.FFN, S.SHALLOW): 0.05, (S.FFN, S.DEEP): -0.05, (S.WIDENED, S.DEEP): 0.0,
               (S.NONE, S.DEEP): -0.1, (S.ALBERT, S.DEEP): 0.1}
    out = S.decisions(_frame(effects, seeds=12), margin=0.0108, unigram=7.0).set_index(
        "decision")
    assert out.loc["sign at 4 layers", "verdict"] == "reproduced"
    assert out.loc["sign at depth", "verdict"] == "contradicted"
    assert out.loc["parameters held apart", "verdict"] == "equivalent"
    assert out.loc["sign at 4 layers", "low"] > 0 > out.loc["sign at depth", "high"]
    raw = np.concatenate([out["p"], out["p equivalence"]])
    holm = multipletests(raw, method="holm")[1]
    assert np.allclose(np.concatenate([out["p holm"], out["p equivalence holm"]]), holm)


def test_an_arm_that_does_not_read_context_leaves_the_family():
    out = S.decisions(_frame({}, seeds=6), margin=0.0108, unigram=5.0)
    assert set(out["verdict"]) == {"not testable"} and out["p holm"].isna().all()


def test_inconclusive_when_neither_test_rejects():
    out = S.decisions(_frame({(S.FFN, S.SHALLOW): 0.012}, seeds=4, sd=0.02), 0.0108, 7.0)
    assert out.set_index("decision").loc["sign at 4 layers", "verdict"] == "inconclusive"


def test_tokens_to_a_rung_count_a_censored_run_as_never():
    frame = _frame({}, seeds=3)
    levels = {"left bigram": 6.2, "two-sided": 5.0}  # every curve ends near 6.0
    table = S.rung_tokens(frame, levels).set_index(["arm", "layers"])
    assert (table["reached left bigram"] == 3).all() and (table["reached two-sided"] == 0).all()
    assert (table["tokens to left bigram"] == 2e6).all()
    assert table["tokens to two-sided"].isna().all()
    assert set(table["stage"]) == {"past left-bigram"}


def test_power_and_the_detectable_difference_agree_with_statsmodels():
    from statsmodels.stats.power import TTestPower
    d = S.detectable(0.01, 12)
    assert S.power(0.01, 12, d) == pytest.approx(0.8, abs=1e-6)
    assert S.power(0.01, 12, 0.012) == pytest.approx(
        TTestPower().power(1.2, 12, 0.05 / 6, alternative="two-sided"))


def test_costs_are_paired_against_not_shared():
    frame = _frame({(S.NONE, S.DEEP): -0.1, (S.ALBERT, S.DEEP): 0.1}, seeds=6)
    costs = S.costs(frame).set_index("arm")["cost"]
    assert costs[S.ALBERT] == pytest.approx(0.2, abs=0.02)
    assert costs[S.ATTENTION] == pytest.approx(0.1, abs=0.02)


def test_nothing_trains_before_the_registration(monkeypatch):
    monkeypatch.setattr(S, "registration", lambda: None)
    assert S.registration_problem().endswith("is not stored")
    with pytest.raises(S.NotStored, match="before the registration"):
        S.train(hours=0.01)


def test_nothing_is_read_before_every_run_is_stored(tmp_path):
    with pytest.raises(S.NotStored):
        S.runs(tmp_path)

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
from albert_rerun.studies import confirm_analysis as D


def test_every_run_is_distinct_and_differs_from_its_pilot_twin_in_seed_only():
    configs = S.configs()
    assert len(configs) == sum(len(S.SEEDS[d]) * len(S.ARMS[d]) for d in S.SEEDS) + \
        S.FIGURE_SEEDS * len(S.FIGURE_ARMS)
    assert len({config_hash(c.to_dict()) for c in configs.values()}) == len(configs)
    for (arm, layers, seed), c in configs.items():
        assert c.seed == seed and c.model.num_hidden_layers == layers
        assert c.model.init_draw == "common" and c.max_steps == S.STEPS
        twin = P.arm_config(arm, layers).replace(seed=seed)
        assert c.to_dict() == twin.to_dict()
    widened = configs[(S.WIDENED, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    assert widened.model.intermediate_size == P.widened_ffn(S.SHALLOW)
    assert (S.NONE, S.DEEP, S.SEEDS[S.DEEP][S.FIGURE_SEEDS]) not in configs


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
    deep = len(S.ARMS[S.DEEP]) + len(S.FIGURE_ARMS)
    first = [(r.model.num_hidden_layers, r.seed) for r in runs[:len(S.ARMS[S.SHALLOW]) + deep]]
    assert first == [(S.SHALLOW, S.SEEDS[S.SHALLOW][0])] * len(S.ARMS[S.SHALLOW]) + \
        [(S.DEEP, S.SEEDS[S.DEEP][0])] * deep


def test_the_plan_fits_the_budget_at_the_engines_speed():
    """The study's runs, priced by arithmetic a token against the confirmatory 4-layer
    run at 20k tokens a second, leave room for the pilot under the cap."""
    configs = S.configs()
    reference = configs[(S.ATTENTION, S.SHALLOW, S.SEEDS[S.SHALLOW][0])]
    ratio = S.flops_per_token(configs[(S.FFN, S.DEEP, S.SEEDS[S.DEEP][0])]) / \
        S.flops_per_token(reference)
    assert 2.4 < ratio < 3.0  # a 12-layer run against a 4-layer one
    assert S.thread_hours(S.planned(), reference, 20_000) < S.CAP_HOURS - 3


def _frame(effects: dict, seeds: int = 8, sd: float = 0.004, base: float = 6.0,
           rng=None) -> pd.DataFrame:
    """Synthetic runs: ``effects`` {(arm, layers): mean over attention-shared}."""
    rng = rng or np.random.default_rng(0)
    rows = []
    for layers in (S.SHALLOW, S.DEEP):
        for seed in range(seeds):
            noise = rng.normal(0, sd)
            for arm in S.ARMS[layers] + (S.FIGURE_ARMS if layers == S.DEEP else ()):
                ce = base + effects.get((arm, layers), 0.0) + noise + rng.normal(0, sd)
                rows.append({"arm": arm, "layers": layers, "seed": seed, "ce": ce,
                             "curve": [{"tokens": 1e6, S.CE: ce + 0.7},
                                       {"tokens": 2e6, S.CE: ce}]})
    return pd.DataFrame(rows)


LEVELS = {"reads_context": 7.0, "distance": 0.54}  # a margin of 0.0108 nats


def test_decisions_follow_their_numbers():
    effects = {(S.FFN, S.SHALLOW): 0.05, (S.FFN, S.DEEP): -0.05, (S.WIDENED, S.SHALLOW): 0.0,
               (S.NONE, S.DEEP): -0.1, (S.ALBERT, S.DEEP): 0.1}
    out = S.decisions(_frame(effects, seeds=12), LEVELS).set_index("decision")
    assert out.loc["sign at 4 layers", "verdict"] == "reproduced"
    assert out.loc["sign at depth", "verdict"] == "contradicted"
    assert out.loc["parameters held apart", "verdict"] == "equivalent"
    assert out.loc["sign at 4 layers", "low"] > 0 > out.loc["sign at depth", "high"]
    raw = np.concatenate([out["p"], out["p equivalence"]])
    holm = multipletests(raw, method="holm")[1]
    assert np.allclose(np.concatenate([out["p holm"], out["p equivalence holm"]]), holm)


def test_the_tests_are_statsmodels_paired_t_and_tost():
    from statsmodels.stats.weightstats import DescrStatsW, ttost_paired
    frame = _frame({(S.FFN, S.SHALLOW): 0.01}, seeds=7)
    row = S.decisions(frame, LEVELS).iloc[0]
    pair = frame[frame["layers"] == S.SHALLOW].pivot(index="seed", columns="arm", values="ce")
    d = pair[S.FFN] - pair[S.ATTENTION]
    assert row["p"] == pytest.approx(DescrStatsW(d).ttest_mean(0)[1])
    assert row["p equivalence"] == pytest.approx(
        ttost_paired(pair[S.FFN], pair[S.ATTENTION], -0.0108, 0.0108)[0])


def test_an_arm_that_does_not_read_context_leaves_the_family():
    frame = _frame({}, seeds=6)
    frame.loc[(frame["layers"] == S.DEEP), "ce"] += 2.0  # the deep arms read nothing
    out = S.decisions(frame, LEVELS).set_index("decision")
    assert out.loc["sign at depth", "verdict"] == "not testable"
    assert np.isnan(out.loc["sign at depth", "p holm"])
    judged = out.drop("sign at depth")
    raw = np.concatenate([judged["p"], judged["p equivalence"]])
    assert np.allclose(np.concatenate([judged["p holm"], judged["p equivalence holm"]]),
                       multipletests(raw, method="holm")[1])


def test_inconclusive_when_neither_test_rejects_and_the_sign_beside_equivalent():
    out = S.decisions(_frame({(S.FFN, S.SHALLOW): 0.012}, seeds=4, sd=0.02), LEVELS)
    assert out.set_index("decision").loc["sign at 4 layers", "verdict"] == "inconclusive"
    row = {"reads context": True, "estimate": -0.006, "p holm": 0.01,
           "p equivalence holm": 0.01}
    assert S.verdict(row) == "equivalent (contradicted)"


def test_a_diverged_run_takes_its_seed_out_of_the_difference():
    frame = _frame({}, seeds=5)
    frame.loc[(frame["arm"] == S.FFN) & (frame["seed"] == 2) &
              (frame["layers"] == S.SHALLOW), "ce"] = np.nan
    assert list(S.paired(frame, S.SHALLOW, S.FFN, S.ATTENTION).index) == [0, 1, 3, 4]


def test_tokens_to_a_rung_count_a_censored_run_as_never():
    frame = _frame({}, seeds=3)
    levels = {"unigram": 6.8, "left bigram": 6.2, "two-sided": 5.0}  # curves end near 6.0
    table = S.rung_tokens(frame, levels).set_index(["arm", "layers"])
    assert (table["reached left bigram"] == 3).all() and (table["reached two-sided"] == 0).all()
    assert (table["tokens to left bigram"] == 2e6).all()
    assert np.isinf(table["tokens to two-sided"]).all()
    assert (table["past left-bigram"] == 3).all() and (table["on the plateau"] == 0).all()
    assert (table["tokens to half way"] == 2e6).all()  # 6.5 nats: the first point is above
    first = S.first_to_rung(frame, levels, "two-sided")
    assert (first["neither"] == 3).all() and (first["later"] == 0).all()


def test_power_and_the_detectable_difference_agree_with_statsmodels():
    from statsmodels.stats.power import TTestPower
    d = S.detectable(0.01, 12)
    assert S.power(0.01, 12, d) == pytest.approx(0.8, abs=1e-6)
    assert S.power(0.01, 12, 0.012) == pytest.approx(
        TTestPower().power(1.2, 12, 0.05 / 6, alternative="two-sided"))


def test_the_secondary_contrasts_are_paired():
    frame = _frame({(S.NONE, S.DEEP): -0.1, (S.ALBERT, S.DEEP): 0.1,
                    (S.WIDENED, S.SHALLOW): -0.03}, seeds=6)
    out = S.contrasts(frame).set_index(["layers", "arm"])["estimate"]
    assert out[(S.DEEP, S.ALBERT)] == pytest.approx(0.2, abs=0.02)
    assert out[(S.DEEP, S.ATTENTION)] == pytest.approx(0.1, abs=0.02)
    assert out[(S.SHALLOW, S.WIDENED)] == pytest.approx(-0.03, abs=0.02)


def test_nothing_trains_before_the_registration(monkeypatch):
    monkeypatch.setattr(S, "registration", lambda: None)
    assert S.registration_problem().endswith("is not stored")
    with pytest.raises(S.NotStored, match="before the registration"):
        S.train(hours=0.01)


def test_nothing_is_read_before_the_study_ends(tmp_path):
    with pytest.raises(S.NotStored, match="is not stored"):
        S.runs(tmp_path, today="2027-01-01")
    with pytest.raises(S.NotStored, match="no run"):  # ended, but nothing stored
        S.runs(tmp_path, today=S.END_DATE)
    assert S.ended(S.END_DATE) and not S.ended("2026-12-31")


# -- the registration (book/asymmetry_registration.md, data/asymmetry-registration.json) --

def test_the_registration_is_committed_and_its_text_unchanged():
    record = S.registration()
    assert record is not None and record["page"] == S.PAGE
    assert S.registration_problem() == ""


def test_the_registered_values_recompute():
    """Every value the registered text shows is recorded; the code gives the same now."""
    from albert_rerun.book import asymmetry_study as A
    from albert_rerun.studies.registration import registered_text
    record = S.registration()
    keys = A.registered_keys(registered_text((repo_root() / S.PAGE).read_text()))
    assert keys and sorted(record["values"]) == sorted(keys)
    values = A.page_values()
    assert {k: values[k] for k in keys} == record["values"]


def test_every_run_of_the_study_descends_from_the_registration():
    from albert_rerun.engine.store import results_dir
    runs = [json.loads(p.read_text())
            for p in sorted((results_dir(S.STORE) / "pretrain").glob("*.json"))]
    assert S.provenance_problems(runs) == []
    assert S.provenance_problems([{"hash": "x", "provenance": {
        "git_commit": "0" * 40}}]), "a run from an unknown commit passes"

"""The confirmatory replication (studies.confirm, book/preregistration.md): the design,
its analysis on synthetic runs with known answers, the stopping rule, and the promise
of the registration (its text unchanged, every confirmatory run's commit descending
from it)."""
import json
import re
import subprocess

import numpy as np
import pandas as pd
import pytest

from albert_rerun.studies import confirm as K
from albert_rerun.studies import confirm_analysis as A
from albert_rerun.studies import confirm_analysis as D
from albert_rerun.studies import registration as R
from albert_rerun.book import preregistration as P
from albert_rerun.studies import asymmetry, asymmetry_pilot, ladder, long_pilot
from albert_rerun.engine.store import config_hash
from albert_rerun.paths import repo_root

ROOT = repo_root()
RUNGS = {"rungs": {"unigram_loss_at_mask": 6.685}, "distance": 0.538,
         "reads_context": 6.60}


@pytest.fixture
def committed(monkeypatch):
    """Read the committed results store (the pilot's runs are stored there)."""
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(ROOT / "data" / "results"))


# -- the design --------------------------------------------------------------------------

# studies after the confirmatory one, on seeds of their own above its range
# (tests/test_ladder.py, test_long_pilot.py and test_asymmetry_pilot.py check theirs)
LATER_STORES = (ladder.STORE, long_pilot.STORE, asymmetry_pilot.STORE, asymmetry.STORE)


def test_fresh_seeds_are_unused_by_every_stored_run():
    earlier, later = set(), set()
    for path in (ROOT / "data" / "results").glob("*/pretrain/*.json"):
        store = path.parent.parent.name
        if store != D.STORE:
            seed = json.loads(path.read_text())["config"]["seed"]
            (later if store in LATER_STORES else earlier).add(seed)
    # fresh when registered: every run stored before it used a lower seed
    assert earlier and max(earlier) < D.FIRST_SEED <= min(D.CONFIRM_SEEDS)
    # and no later study reuses one
    assert not later & set(D.CONFIRM_SEEDS)
    assert D.MIN_SEEDS <= len(D.CONFIRM_SEEDS) <= D.MAX_SEEDS


def test_pilot_configs_are_the_stored_cpu_long_runs(committed):
    from albert_rerun.engine.store import results_dir, stored_pretrain
    from albert_rerun.studies import conditions as C
    configs = D.pilot_conditions()
    assert list(configs) == list(D.CONDITIONS)
    for config in configs.values():
        for seed in D.PILOT_SEEDS:
            assert stored_pretrain(results_dir("cpu-long"), C.seeded(config, seed))


def test_confirmatory_configs_differ_from_the_pilot_only_in_seed_and_wide_steps():
    a, b = D.conditions(19000), D.pilot_conditions()
    for name in D.CONDITIONS[:-1]:
        assert a[name].to_dict() == b[name].to_dict()
    assert a[D.WIDE].max_steps == 19000 and a[D.WIDE].learning_rate == D.WIDE_LEARNING_RATE
    assert a[D.WIDE].model.hidden_size == 2 * a[D.BERT].model.hidden_size


def test_runs_are_planned_seed_major_with_the_transition_controls():
    runs = D.planned(19000, seeds=(1000, 1001))
    per_seed = len(D.CONDITIONS) + len(D.TRANSITION_ARMS)
    check = len(D.LR_CHECK_RATES)
    assert len(runs) == 2 * per_seed + check
    assert [r.seed for r in runs] == ([1000] * per_seed + [D.LR_CHECK_SEED] * check
                                      + [1001] * per_seed)
    controls = [r for r in runs if r.max_steps == 0]
    assert len(controls) == 4 and len({config_hash(r.to_dict()) for r in runs}) == len(runs)
    lr = runs[per_seed:per_seed + check]
    assert [r.learning_rate for r in lr] == list(D.LR_CHECK_RATES)
    assert {r.max_steps for r in lr} == {19000} and D.LR_CHECK_SEED < D.FIRST_SEED


def test_the_learning_rate_check_flags_only_a_gap_beyond_the_margin():
    assert K.lr_check_gap({2.5e-3: 6.30, 5e-3: 6.31, 1e-2: 6.40}, 0.0269) is None
    best, gap = K.lr_check_gap({2.5e-3: 6.25, 5e-3: 6.31, 1e-2: 6.40}, 0.0269)
    assert best == 2.5e-3 and gap == pytest.approx(0.06)


def test_equal_time_ratios_flag_pairs_outside_a_tenth():
    frame = pd.DataFrame([
        {"condition": D.WIDE, "seed": 1000, "train_seconds": 1000.0, "machine": "A"},
        {"condition": D.BERT, "seed": 1000, "train_seconds": 1050.0, "machine": "A"},
        {"condition": D.WIDE, "seed": 1001, "train_seconds": 1300.0, "machine": "B"},
        {"condition": D.BERT, "seed": 1001, "train_seconds": 1000.0, "machine": "A"}])
    table = A.time_ratios(frame)
    assert table["flagged"].tolist() == [False, True]
    assert table["machines"].tolist() == ["A", "B / A"]


def test_an_early_end_reads_only_the_first_seeds_in_order():
    with pytest.raises(ValueError, match="in order"):
        A.confirmatory_frame((1000, 1002))


def test_margins_are_the_registered_fractions_of_the_rung_distance():
    m = D.margin_values(RUNGS)
    assert m["ce"] == pytest.approx(0.0269) and m["small"] == pytest.approx(0.01076)
    assert m["small"] < m["ce"] and m["pairs"] == 2.0
    assert D.holm_alpha() == pytest.approx(0.005)


# -- the analysis on synthetic runs --------------------------------------------------------

EFFECTS = {D.ALBERT: 6.30, D.NONE32: 6.28, D.ATTENTION: 6.29, D.FFN: 6.33, D.BERT: 6.00,
           D.ALL64: 6.20, D.NSP: 6.36, D.DROPOUT: 6.34, D.WIDE: 6.40}


def synthetic(seeds=range(1000, 1012), sop_gain=15.0, noise=0.003, items=400, seed=0):
    """Runs whose true differences are EFFECTS' and a SOP probe ``sop_gain`` points
    better for the SOP-trained arm."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in seeds:
        shift = rng.normal(0, 0.02)  # a seed effect shared by its conditions
        for name, ce in EFFECTS.items():
            p = 0.5 + (sop_gain / 200 if name == D.ALBERT else -sop_gain / 200)

            def correct(q):
                return "".join("1" if x else "0" for x in rng.random(items) < q)
            curve = list(np.linspace(1, 0.2, 5) + rng.normal(0, 0.01, 5))
            rows.append({"condition": name, "seed": s,
                         D.CE: ce + shift + rng.normal(0, noise),
                         "sop_cuefree_probe_correct": correct(p),
                         "sop_probe_correct": correct(p),
                         "nsp_cuefree_probe_correct": correct(0.6 if name == D.NSP else 0.55),
                         "transition_l2": curve, "transition_angle": curve,
                         "control_transition_l2": curve, "control_transition_angle": curve})
    return pd.DataFrame(rows)


def test_family_reads_known_effects():
    family = A.family(synthetic(), RUNGS)
    assert list(family.index) == [s.key for s in D.PRIMARY]
    assert family["in_family"].all() and len(family) == 5
    verdicts = family["verdict_holm"].to_dict()
    # FFN-shared 0.04 above attention-shared: the paper's side
    assert verdicts["confirm/asymmetry"] == "reproduced"
    assert verdicts["confirm/sharing-cost"] == "reproduced"
    assert verdicts["confirm/sop"] == "reproduced"
    assert verdicts["confirm/dropout"] == "reproduced"
    # the wide model 0.40 nats worse than BERT-style: against the paper's sign
    assert verdicts["confirm/equal-time"] == "contradicted"
    assert family.loc["confirm/asymmetry", "estimate"] == pytest.approx(0.04, abs=0.005)
    assert family.loc["confirm/asymmetry", "margin"] == pytest.approx(0.01076)


def test_family_says_equivalent_and_inconclusive_where_it_should():
    EFFECTS_SAVED = dict(EFFECTS)
    try:
        EFFECTS[D.FFN] = EFFECTS[D.ATTENTION]  # no asymmetry at all
        family = A.family(synthetic(noise=0.001), RUNGS)
        assert family.loc["confirm/asymmetry", "verdict_holm"] == "equivalent"
        noisy = A.family(synthetic(seeds=range(1000, 1003), noise=0.05), RUNGS)
        assert noisy.loc["confirm/asymmetry", "verdict_holm"] == "inconclusive"
    finally:
        EFFECTS.update(EFFECTS_SAVED)


def test_holm_adjusts_over_the_primary_family_only():
    frame = synthetic(seeds=range(1000, 1004), noise=0.02)
    primary = A.family(frame, RUNGS)
    secondary = A.family(frame, RUNGS, D.SECONDARY)
    from statsmodels.stats.multitest import multipletests
    raw = primary[["p_difference", "p_equivalence"]].to_numpy().ravel()
    expected = multipletests(raw, method="holm")[1].reshape(-1, 2)
    np.testing.assert_allclose(primary[["p_difference_holm", "p_equivalence_holm"]],
                               expected)
    assert set(secondary.index).isdisjoint(primary.index)
    assert "explore/transitions-angle" in secondary.index


def test_a_gated_arm_leaves_the_family():
    frame = synthetic()
    frame.loc[frame["condition"] == D.WIDE, D.CE] = 6.9  # reads no context
    family = A.family(frame, RUNGS)
    assert family.loc["confirm/equal-time", "verdict_holm"].startswith("not testable")
    assert family["in_family"].sum() == 4


def test_power_plan_matches_statsmodels_and_the_seed_rule():
    from statsmodels.stats.power import TTestPower
    frame = synthetic(seeds=range(3), noise=0.01, seed=3)
    plan = K.power_plan(frame)
    d = A.per_seed(D.PRIMARY[0], frame)
    row = plan.loc["confirm/asymmetry"]
    assert row["mean"] == pytest.approx(d.mean()) and row["paired SD"] == pytest.approx(d.std())
    expected = TTestPower().power(abs(d.mean()) / d.std(), nobs=11, alpha=0.005)
    assert row["power at 11"] == pytest.approx(expected, rel=1e-6)
    n = K.seed_count(plan)
    assert D.MIN_SEEDS <= n <= D.MAX_SEEDS
    fewest = plan["seeds for 80%"].max()
    assert n == min(D.MAX_SEEDS, max(D.MIN_SEEDS, fewest))


def test_equivalence_plan_is_the_tost_power_at_a_true_zero():
    """Amendment 2: the TOST's power within each margin, from the pilot's paired SD; a
    noisy decision cannot reach "equivalent", a quiet one can."""
    from albert_rerun.stats.power import tost_power
    frame = synthetic(seeds=range(3), noise=0.002, seed=4)
    frame.loc[frame["condition"] == D.ALL64, D.CE] += np.array([0.0, 0.2, -0.2])  # noisy
    frame.loc[frame["condition"] == D.ATTENTION, D.CE] += np.array([0.1, -0.1, 0.0])
    plan = K.equivalence_plan(frame, RUNGS)
    margins = D.margin_values(RUNGS)
    for spec in D.PRIMARY:
        row = plan.loc[spec.key]
        sd = abs(A.per_seed(spec, frame).std())
        assert row["paired SD"] == pytest.approx(sd)
        assert row["margin in SDs"] == pytest.approx(margins[spec.margin] / sd)
        expected = tost_power(margins[spec.margin] / sd, 11, 0.005)
        assert row["TOST power, Holm's first step"] == pytest.approx(expected)
        assert row["TOST power at 5%"] >= row["TOST power, Holm's first step"]
    assert plan.loc["confirm/sharing-cost", "TOST power, Holm's first step"] < 0.05
    assert plan.loc["confirm/dropout", "TOST power, Holm's first step"] > 0.99
    readings = P.readings(frame, RUNGS)
    assert readings["confirm/sharing-cost"] in ("out of reach", "unlikely at the pilot's SD")
    assert readings["confirm/dropout"].startswith("reachable at a true 0")


def test_reach_reads_the_sd_uncertainty_and_the_pilot_mean():
    """Amendment 3: out of reach only if the TOST fails even at the smallest SD of the
    pilot's 95% interval; at the pilot's own mean, a difference beyond the margin leaves
    the TOST no chance."""
    from albert_rerun.stats.power import sd_factors, tost_power
    frame = synthetic(seeds=range(3), noise=0.002, seed=4)
    frame.loc[frame["condition"] == D.ALL64, D.CE] += np.array([0.0, 0.2, -0.2])
    plan = K.equivalence_plan(frame, RUNGS)
    row = plan.loc["confirm/sharing-cost"]
    assert row["smallest SD"] == pytest.approx(row["paired SD"] * sd_factors(3)[0])
    assert row["TOST power at the smallest SD"] == pytest.approx(
        tost_power(row["margin"] / row["smallest SD"], 11, 0.005))
    assert row["TOST power at ALPHA / 2"] == pytest.approx(
        tost_power(row["margin in SDs"], 11, 0.025))
    # dropout: 0.04 nats above the base, beyond the 0.027 margin, quiet: reachable at a
    # true 0, hopeless at the pilot's mean
    dropout = plan.loc["confirm/dropout"]
    assert dropout["TOST power, Holm's first step"] > 0.99
    assert dropout["TOST power at the pilot mean"] < 0.01
    assert P.reading(dropout) == "reachable at a true 0, unlikely at the pilot's mean"


def _cells(text: str, start: str) -> list:
    """The cells of the first table row of ``text`` that starts with ``start``."""
    line = next(line for line in text.splitlines() if line.startswith(start))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_amendments_frozen_tables_recompute_from_the_pilot(committed):
    """A dated amendment's numbers never change: its frozen tables, which the page shows,
    are what the code computes from the pilot's stored runs today, to the digit."""
    from albert_rerun.studies.decisions import unit_digits
    frozen = P.frozen_amendment_parts(ROOT)
    assert set(frozen) == {"equivalence", "reach", "lenient"}
    frame, rungs, pct = A.pilot_frame(), A.rungs(), P.percent
    for specs in (D.PRIMARY, D.SECONDARY):
        plan = K.equivalence_plan(frame, rungs, specs, len(D.CONFIRM_SEEDS))
        out = [s.key for s in specs if plan.loc[s.key, "TOST power, Holm's first step"] < 0.05]
        assert f": {len(out)} of {len(specs)}" in frozen["equivalence"]
        for spec in specs:
            row = plan.loc[spec.key]
            first = pct(row["TOST power, Holm's first step"])
            assert _cells(frozen["equivalence"], f"| {spec.label} |")[1:] == [
                f"±{row['margin']:.{unit_digits(spec.unit)}f} {spec.unit}",
                f"{row['paired SD']:.3g}", first, pct(row["TOST power at 5%"])]
            assert _cells(frozen["reach"], f"| `{spec.key}` |")[1:] == [
                first, pct(row["TOST power at the smallest SD"]),
                pct(row["TOST power at ALPHA / 2"]), pct(row["TOST power at the pilot mean"])]
            assert _cells(frozen["lenient"], f"| `{spec.key}` |")[1:] == [
                first, pct(row["TOST power at the smallest SD at ALPHA / 2"]), P.reading(row)]
    page = (ROOT / D.PAGE).read_text()
    for name in frozen:
        assert f"_generated/preregistration-{name}.md" in page.split("## Amendments")[1]


def test_the_build_refuses_a_missing_amendment_table(tmp_path):
    with pytest.raises(FileNotFoundError, match="frozen"):
        P.frozen_amendment_parts(tmp_path)


def test_amendment_4_reads_out_of_reach_only_at_the_most_lenient_values():
    def row(first, lenient, mean=0.5):
        return {"TOST power, Holm's first step": first,
                "TOST power at the smallest SD at ALPHA / 2": lenient,
                "TOST power at the pilot mean": mean}
    assert P.reading(row(0.001, 0.04)) == "out of reach"
    assert P.reading(row(0.001, 0.30)) == "unlikely at the pilot's SD"
    assert P.reading(row(0.20, 0.90)) == "possible"
    assert P.reading(row(0.99, 0.99)) == "reachable at a true 0"
    assert P.reading(row(0.99, 0.99, mean=0.0)) == (
        "reachable at a true 0, unlikely at the pilot's mean")
    frame = synthetic(seeds=range(3), noise=0.002, seed=4)
    frame.loc[frame["condition"] == D.ALL64, D.CE] += np.array([0.0, 0.4, -0.4])
    out = P.since_values(frame, RUNGS)["out_of_reach"]
    assert "`confirm/sharing-cost`" in out and "`confirm/dropout`" not in out


def test_registered_seed_count_is_the_rule_applied_to_the_pilot(committed):
    plan = K.power_plan(A.pilot_frame())
    assert K.seed_count(plan) == len(D.CONFIRM_SEEDS)


# -- the stopping rule ----------------------------------------------------------------------

def test_nothing_is_estimated_before_every_run_is_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    with pytest.raises(D.NotComplete, match="equal-time"):
        A.confirmatory_families()
    store = tmp_path / D.STORE / "choices"
    store.mkdir(parents=True)
    (store / f"{D.EQUAL_TIME}.json").write_text(json.dumps({"steps": 19000}))
    with pytest.raises(D.NotComplete, match=rf"{9 * len(D.CONFIRM_SEEDS)} of {9 * len(D.CONFIRM_SEEDS)} runs"):
        A.confirmatory_families()
    table = A.progress()
    assert (table["trained"] == 0).all() and (table["of"] == len(D.CONFIRM_SEEDS)).all()
    assert not A.complete()


def test_curves_pair_each_seed_at_equal_shares_of_training():
    frame = synthetic(seeds=range(1000, 1003))
    frame["steps"] = np.where(frame["condition"] == D.WIDE, 10000, 21600)
    frame["curve"] = [[{"step": round(k * n / 8), "mlm_loss_at_mask": ce + (8 - k) / 8}
                       for k in range(1, 9)]
                      for n, ce in zip(frame["steps"], frame[D.CE])]
    d = A.curve_differences(frame, D.PRIMARY[-1])  # wide (10,000 steps) minus BERT-style
    assert list(d["share of training"]) == [k / 8 for k in range(1, 9)]
    assert (d["seeds"] == 3).all()
    final = A.per_seed(D.PRIMARY[-1], frame).mean()
    assert d["mean"].iloc[-1] == pytest.approx(final)
    with pytest.raises(ValueError, match="no curve"):
        A.curve_differences(frame, D.PRIMARY[2])


# -- the registration -----------------------------------------------------------------------

def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_registered_block_is_delimited_and_digested():
    text = "intro\n" + R.BEGIN + "\nrules\n" + R.END + "\namendments"
    assert R.registered_text(text) == R.BEGIN + "\nrules\n" + R.END
    assert R.registered_digest(text) == R.registered_digest(text.replace("amendments", "x"))
    assert R.registered_digest(text) != R.registered_digest(text.replace("rules", "rule"))
    with pytest.raises(ValueError, match="registered block"):
        R.registered_text("no markers")


def test_page_states_the_registered_numbers():
    text = R.registered_text((ROOT / D.PAGE).read_text())
    seeds = D.CONFIRM_SEEDS
    assert f"{seeds[0]} to {seeds[-1]}" in text
    for spec in D.PRIMARY + D.SECONDARY:
        assert f"`{spec.key}`" in text
    assert "0.0269 nats" in text and "0.0108 nats" in text and "0.005" in text


def _registration():
    path = ROOT / D.RECORD
    if not path.is_file():
        pytest.fail(f"{D.RECORD} is missing: the registration record is committed with "
                    f"the registration")
    return json.loads(path.read_text())


def test_registered_text_has_not_changed_since_the_registration():
    record = _registration()
    current = (ROOT / D.PAGE).read_text()
    assert R.registered_digest(current) == record["sha256"], (
        "the registered text of book/preregistration.md changed: a change is a dated "
        "amendment after the registered block, never an edit of it")
    if _git("cat-file", "-e", record["commit"]).returncode != 0:
        pytest.skip("the registration commit is not in this clone's history (shallow)")
    then = _git("show", f"{record['commit']}:{D.PAGE}").stdout
    assert R.registered_text(then) == R.registered_text(current)


def test_every_confirmatory_run_descends_from_the_registration():
    record = _registration()
    runs = [json.loads(path.read_text()) for path in
            sorted((ROOT / "data" / "results" / D.STORE / "pretrain").glob("*.json"))]
    if runs and _git("cat-file", "-e", record["commit"]).returncode != 0:
        pytest.skip("the registration commit is not in this clone's history (shallow)")
    assert R.run_provenance_problems(runs, record["commit"]) == []


def test_provenance_check_catches_dirty_and_unrelated_commits():
    record = _registration()
    if _git("cat-file", "-e", record["commit"]).returncode != 0:
        pytest.skip("the registration commit is not in this clone's history (shallow)")
    before = _git("rev-parse", f"{record['commit']}~1").stdout.strip()
    runs = [{"hash": "a", "provenance": {"git_commit": record["commit"]}},
            {"hash": "b", "provenance": {"git_commit": record["commit"] + "+dirty"}},
            {"hash": "c", "provenance": {"git_commit": before}}]
    problems = R.run_provenance_problems(runs, record["commit"])
    assert [p[0] for p in problems] == ["b", "c"]
    # a descendant that changed the training code fails too (amendment 1): the commit
    # before the cue-free pairs' engine change, read as if it came after
    changed = _git("log", "-1", "--format=%H", f"{record['commit']}", "--",
                   "src/albert_rerun/engine").stdout.strip()
    assert changed and not R.same_training_code(f"{changed}~1", record["commit"])
    assert R.same_training_code(record["commit"], record["commit"])


def test_the_results_carry_what_amendment_1_reports_beside_the_verdicts(monkeypatch):
    """Amendment 1: each seed's equal-time seconds ratio, how many differ by more than a
    tenth and the side the median falls on (1.2); the learning-rate check (1.1); the
    SOP-trained probe against the majority label (1.4); the dropout premise's gap (1.8)."""
    frame = synthetic(seeds=range(1000, 1004))
    albert = frame["condition"] == D.ALBERT
    frame["sop_cuefree_majority"] = 0.5
    frame["sop_cuefree_accuracy_probe"] = 0.5
    frame.loc[albert, "sop_cuefree_accuracy_probe"] = frame.loc[albert, "seed"].map(
        {1000: 0.52, 1001: 0.54, 1002: 0.56, 1003: 0.58})
    frame["train_mlm_loss_at_mask"] = frame[D.CE] - 0.1
    frame["train_seconds"] = np.where(frame["condition"] == D.WIDE, 1150.0, 1000.0)
    frame["machine"], frame["steps"], frame["tokens"] = "AMD EPYC", 100, 6400
    record = {"provenance": {"machine": {"cpu": "AMD EPYC"}}, "bert_step_seconds": 0.05,
              "wide_step_seconds": 0.1, "steps": 10800, "bert_steps": 21600}
    for name, value in (("confirmatory_frame", frame), ("pilot_frame", synthetic(seeds=range(3))),
                        ("rungs", RUNGS), ("equal_time_record", record), ("trained_runs", frame)):
        monkeypatch.setattr(A, name, lambda *args, value=value, **kwargs: value)
    margin = D.margin_values(RUNGS)["ce"]
    monkeypatch.setattr(A, "lr_check_scores", lambda store=None: {
        2.5e-3: 5.0, 5e-3: 5.0 + margin / 2, 1e-2: 5.3})
    values = P.results_values()
    assert values["ratios"] == ("1000 1.15, 1001 1.15, 1002 1.15, 1003 1.15; median 1.15; "
                                "both arms on AMD EPYC")
    assert (values["flagged"], values["ratio_seeds"]) == (4, 4)
    assert values["shortfall"] == "about 15% more time than"
    assert values["lr_check"] == "5e-3 is within the cross-entropy margin of the best rate"
    assert values["sop_above"] == "+5.0 [+0.9, +9.1]"  # 2, 4, 6, 8 points
    assert values["dropout_gap"] == "+0.100 [+0.100, +0.100]"
    assert values["dropout_narrowing"] == "0.000 [0.000, 0.000]"
    assert (values["bert_ms"], values["wide_ms"], values["wide_steps"]) == ("50.0", "100.0",
                                                                            "10,800")
    monkeypatch.setattr(A, "lr_check_scores", lambda store=None: {
        2.5e-3: 5.0, 5e-3: 5.2, 1e-2: 5.3})
    assert P.results_values()["lr_check"] == \
        "5e-3 was not the best rate: 0.0025 beat it by 0.200 nats"
    assert "{{" not in P.fill("prereg-results.md", P.results_values())


def test_the_learning_rate_check_is_read_only_when_all_three_are_stored():
    """On the committed store: None until the check's three runs are evaluated, else one
    cross-entropy per registered rate."""
    scores = A.lr_check_scores()
    assert scores is None or (set(scores) == set(D.LR_CHECK_RATES)
                              and all(5 < v < 11 for v in scores.values()))


def test_once_judged_the_confirmatory_verdict_leads_the_box_and_the_glance(tmp_path,
                                                                             monkeypatch):
    """Issue #25's done-when: the confirmatory verdicts are the headline (the
    introduction's line, each chapter's box), the pilot beside them; before the design
    is complete nothing of it is computed."""
    from albert_rerun.book import chapter_box, confirmatory, first_screen, headlines, plain
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    assert confirmatory.confirmatory_rows() == {}
    monkeypatch.setattr(A, "complete", lambda store=None: True)
    monkeypatch.setattr(A, "confirmatory_families",
                        lambda store=None: {"primary": A.family(synthetic(), RUNGS)})
    rows = confirmatory.confirmatory_rows()
    assert set(rows) == {"asymmetry", "sop_nsp", "dropout", "wall_clock"}
    assert rows["asymmetry"]["label"].startswith("FFN-shared minus attention-shared")
    key = headlines.HEADLINES["asymmetry"].key
    pilot = pd.DataFrame([{"label": "attention-shared minus FFN-shared", "estimate": 0.02,
                           "low": -0.01, "high": 0.05, "margin": 0.0108, "unit": "nats",
                           "paper_sign": -1, "verdict": "inconclusive",
                           "verdict_holm": "inconclusive", "stage": "early training",
                           "weakest_level": 0.7, "gate_reason": "", "in_family": True,
                           "n_seeds": 3}], index=[key])
    turned = confirmatory.in_chapter_sign("asymmetry", rows["asymmetry"])
    assert turned["estimate"] == -rows["asymmetry"]["estimate"]
    assert (turned["low"], turned["high"]) == (-rows["asymmetry"]["high"],
                                               -rows["asymmetry"]["low"])
    assert turned["verdict_holm"] == rows["asymmetry"]["verdict_holm"]
    family = confirmatory.confirmatory_family()
    assert family.loc[key, "label"] == turned["label"]
    assert list(confirmatory.with_confirmatory({"cpu-long": pilot})) == ["confirmatory",
                                                                         "cpu-long"]
    # the introduction's line: the registered row, paper-positive (its paper sign is +1)
    asymmetry = rows["asymmetry"]
    assert first_screen.rows("cpu")["asymmetry"]["label"] == asymmetry["label"]
    assert plain.size(asymmetry).startswith(f"{asymmetry['estimate']:+.3f} [")


def test_preface_summary_refuses_an_amendment_it_does_not_describe(tmp_path):
    page = ROOT / "book" / "preregistration.md"
    assert len(P.headings(page.read_text())) == P.SUMMARISED_AMENDMENTS
    P.check_summary(page)
    longer = tmp_path / "preregistration.md"
    longer.write_text(page.read_text() + "\n### Amendment 13, 2027-01-01 00:00 UTC: x\n")
    with pytest.raises(P.SummaryStale, match=f"{P.SUMMARISED_AMENDMENTS + 1} amendments"):
        P.check_summary(longer)


def test_each_decision_reports_the_unit_of_its_metric():
    frame = synthetic(seeds=range(3), noise=0.002, seed=5)
    margins = D.margin_values(RUNGS)
    frame = A.with_changes(frame)
    for spec in D.PRIMARY + D.SECONDARY:
        if spec.kind == "accuracy":
            assert spec.unit == "points"
            continue
        assert spec.unit == ("nats" if spec.kind == "ce" else "share of range")
        assert A.decide(spec, frame, margins).unit == spec.unit


def test_training_costs_add_up_the_runs_training_records():
    runs = pd.DataFrame([
        {"condition": D.BERT, "seed": 1000, "steps": 100, "train_seconds": 5.0,
         "tokens": 1000, "machine": "cpu A"},
        {"condition": D.BERT, "seed": 1001, "steps": 300, "train_seconds": 15.0,
         "tokens": 3000, "machine": "cpu B"},
        {"condition": D.WIDE, "seed": 1000, "steps": 50, "train_seconds": 6.0,
         "tokens": 500, "machine": "cpu A"}])
    costs = A.training_costs(runs).set_index("condition")
    assert costs.loc[D.BERT, "runs"] == 2 and costs.loc[D.BERT, "steps a run"] == 200
    # pooled: 20 s over 400 steps (the mean of the runs' own rates would be 75 ms)
    assert costs.loc[D.BERT, "ms a step"] == pytest.approx(50.0)
    assert costs.loc[D.BERT, "tokens/s"] == pytest.approx(200.0)  # 4,000 over 20 s
    assert costs.loc[D.BERT, "hours"] == pytest.approx(20 / 3600)
    assert costs.loc[D.BERT, "machines"] == "cpu A, cpu B"
    ratios = A.time_ratios(runs)  # only seed 1000 has both arms
    assert list(ratios["seed"]) == [1000]
    assert ratios["wide / BERT-style seconds"].iloc[0] == pytest.approx(1.2)
    assert bool(ratios["flagged"].iloc[0])


def test_trained_runs_read_training_records_only(committed):
    runs = A.trained_runs()
    assert len(runs) and not any("loss" in c or "accuracy" in c or "curve" in c
                                 for c in runs.columns)
    counts = runs.groupby("condition").size()
    for name, row in A.progress().iterrows():
        assert counts.get(name, 0) == row["trained"]
    assert (runs["train_seconds"] > 0).all() and (runs["steps"] > 0).all()


def test_report_refuses_before_every_run_is_stored(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    with pytest.raises(D.NotComplete, match=f"0 of {9 * len(D.CONFIRM_SEEDS)} runs are "
                                            f"evaluated: no estimate"):
        K.report()
    assert K.main(["report"]) == 1


def test_report_puts_the_pilot_beside_each_judged_decision():
    confirmed = A.family(synthetic(), RUNGS)
    pilot = A.family(synthetic(seeds=range(3), seed=7), RUNGS)
    table = K.results_table(confirmed, pilot)
    lines = table.splitlines()
    assert lines[0].count("|") == 7 and "confirmatory, 12 seeds" in lines[0]
    rows = [line for line in lines if line.startswith("| `")]
    assert len(rows) == len(D.PRIMARY)
    row, old = confirmed.loc["confirm/dropout"], pilot.loc["confirm/dropout"]
    cells = _cells(table, "| `confirm/dropout`")
    assert cells[1].startswith(f"{row['estimate']:+.3f} [{row['low']:+.3f}, "
                               f"{row['high']:+.3f}] nats")
    assert cells[2].startswith(K.p_text(row["p_difference"]) + " / "
                               + K.p_text(row["p_equivalence"]) + " [")
    assert cells[3] == row["verdict"] and cells[4] == f"**{row['verdict_staged']}**"
    assert cells[5] == f"{old['estimate']:+.3f} [{old['low']:+.3f}, {old['high']:+.3f}]"
    # the pilot's equal-time arm is not comparable: marked, the page's footnote says why
    assert _cells(table, "| `confirm/equal-time`")[5].endswith(" †")
    assert "\n† The pilot's wide model" in (ROOT / "book" / "templates" / "prereg-results.md").read_text()


def test_holm_counts_only_the_decisions_the_gate_leaves_in_the_family():
    frame = synthetic()
    judged = A.family(frame, RUNGS)
    assert A.holm_tests(judged) == 2 * len(D.PRIMARY)
    judged.loc["confirm/sop", "in_family"] = False
    assert A.holm_tests(judged) == 2 * len(D.PRIMARY) - 2


def test_before_every_run_is_stored_the_page_shows_counts_and_no_curve(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path / "results"))
    text = P.results_text(tmp_path)
    assert text.startswith(f"**Progress**: 0 of the {9 * len(D.CONFIRM_SEEDS)} confirmatory")
    assert not list(tmp_path.glob("*.png")) and not re.search(r"nats|accuracy|loss", text)


def test_curve_captions_take_their_sizes_from_the_configs(monkeypatch):
    """The captions say how many held-out sequences a curve point and the final
    evaluation read; changing the registered configs changes the caption."""
    from albert_rerun import profiles
    assert P.curve_sizes() == {"curve": "256", "final": "4,096"}  # the stored runs' sizes
    conditions, evaluation = D.conditions, profiles.eval_config
    monkeypatch.setattr(D, "conditions", lambda steps: {
        name: config.replace(curve_examples=12) for name, config in conditions(steps).items()})
    monkeypatch.setattr(profiles, "eval_config",
                        lambda profile: evaluation(profile).replace(mlm_sequences=3456))
    assert P.curve_sizes() == {"curve": "12", "final": "3,456"}


def test_committed_stretch_logs_show_no_result():
    """A stretch's log is committed beside the runs and read before the design is
    complete, so each run's line may show its costs only (training.BLINDED): never a loss
    or an accuracy, from which an interim estimate could be made."""
    import ast

    from albert_rerun.studies.training import BLINDED
    line = re.compile(r"^\[\w[\w ]*\] [0-9a-f]{16} (\{.*\}) \(\d+ s\)$")
    logs = sorted((ROOT / "data" / "results" / D.STORE / "logs").glob("stretch-*.log"))
    assert logs
    shown = set()
    for log in logs:
        for text in log.read_text().splitlines():
            match = line.match(text)
            if match:
                shown |= set(ast.literal_eval(match[1]))
    assert shown and shown <= set(BLINDED)


def test_a_median_ratio_outside_a_tenth_labels_equal_time_a_fixed_step_budget(tmp_path,
                                                                           monkeypatch):
    """Amendment 5.2: a median seconds ratio outside 0.9-1.1 relabels the equal-time
    verdict a fixed step budget's. Before the design is complete nothing is read."""
    from albert_rerun.book import confirmatory
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    assert confirmatory.notes() == {}  # incomplete: nothing read
    monkeypatch.setattr(A, "complete", lambda store=None: True)
    monkeypatch.setattr(A, "confirmatory_families",
                        lambda store=None: {"primary": A.family(synthetic(), RUNGS)})

    def frame(wide_seconds):
        return pd.DataFrame({"condition": [D.WIDE, D.BERT] * 3,
                             "seed": [1000, 1000, 1001, 1001, 1002, 1002],
                             "train_seconds": [wide_seconds, 100.0] * 3, "machine": "m"})
    monkeypatch.setattr(A, "confirmatory_frame", lambda store=None: frame(80.0))
    wall = confirmatory.confirmatory_rows()["wall_clock"]
    assert "fixed step budget" in wall["label"] and "equal time" not in wall["label"]
    monkeypatch.setattr(A, "confirmatory_frame", lambda store=None: frame(100.0))
    assert "equal time" in confirmatory.confirmatory_rows()["wall_clock"]["label"]


def test_the_sop_premise_fails_only_where_neither_model_orders_the_cue_free_pairs():
    """The plain reading's premise (amendments 1.4 and 10): where the SOP-trained model's
    probe and its own head, and the NSP-trained model's probe, all sit at the majority
    label, the SOP verdict says that neither model orders the pairs."""
    from albert_rerun.book import confirmatory
    frame = pd.DataFrame({"condition": [D.ALBERT] * 3, "seed": [1000, 1001, 1002],
                          "sop_cuefree_majority": [0.5] * 3,
                          "sop_cuefree_accuracy_probe": [0.49, 0.50, 0.52],
                          "sop_cuefree_accuracy_head": [0.48, 0.49, 0.50]})
    assert confirmatory.sop_premise(frame) == confirmatory.NO_ORDER
    nsp = frame.assign(condition=D.NSP, sop_cuefree_accuracy_probe=0.6)
    assert confirmatory.sop_premise(pd.concat([frame, nsp])) == ""
    assert confirmatory.sop_premise(frame.assign(sop_cuefree_accuracy_head=0.6)) == ""
    assert confirmatory.sop_premise(frame.drop(columns="sop_cuefree_accuracy_head")) == ""


def _at_chance(frame, albert: float, nsp: float, majority: float = 0.5, items: int = 400):
    """``frame`` with the cue-free SOP probe's correct strings at exactly these
    accuracies for the SOP-trained (ALBERT-style) and NSP-trained arms."""
    frame = frame.copy()

    def correct(q):
        k = round(q * items)
        return "1" * k + "0" * (items - k)
    for name, q in ((D.ALBERT, albert), (D.NSP, nsp)):
        frame.loc[frame["condition"] == name, "sop_cuefree_probe_correct"] = correct(q)
    frame["sop_cuefree_majority"] = majority
    return frame


def test_chance_arms_reads_both_arms_against_two_standard_errors_of_the_majority():
    """Amendment 11's rule: an arm reads the pairs at chance within two binomial standard
    errors (one run's, on the test pairs) of the majority label's accuracy."""
    chance_arms, CHANCE_SES = K.chance_arms, K.CHANCE_SES
    sop = next(s for s in D.PRIMARY if s.key == "confirm/sop")
    se = 100 * (0.5 * 0.5 / 400) ** 0.5  # 2.5 points
    inside, outside = 0.5 + (CHANCE_SES * se - 0.5) / 100, 0.5 + (CHANCE_SES * se + 0.5) / 100
    found = chance_arms(sop, _at_chance(synthetic(seeds=range(3)), inside, 0.5))
    assert found["se"] == pytest.approx(se) and found["pairs"] == 400
    assert found["majority"] == pytest.approx(50.0) and found["both"]
    assert found["arms"][D.ALBERT] == pytest.approx(100 * inside)
    # one arm beyond two standard errors, on either side: not both at chance
    assert not chance_arms(sop, _at_chance(synthetic(seeds=range(3)), outside, 0.5))["both"]
    assert not chance_arms(sop, _at_chance(synthetic(seeds=range(3)), 0.5,
                                           1 - outside))["both"]
    # a cross-entropy decision, or pairs without a stored majority label: no reading
    assert chance_arms(D.PRIMARY[0], _at_chance(synthetic(seeds=range(3)), 0.5, 0.5)) is None
    assert chance_arms(sop, synthetic(seeds=range(3))) is None


def test_the_power_table_calls_a_power_between_two_chance_arms_meaningless():
    """Amendment 11: the SOP row's power is noted as meaningless when both arms read the
    cue-free pairs at chance, and only then."""
    frame = synthetic(seeds=range(3), noise=0.002, seed=4)
    values = P.pilot_values(_at_chance(frame, 0.49, 0.51))
    assert _cells(values["primary_table"], "| SOP probe")[-1] == \
        "meaningless: both arms at chance (below)"
    assert values["chance_note"].startswith("The power of `confirm/sop` is meaningless")
    assert values["primary_table"].count("meaningless") == 1
    values = P.pilot_values(_at_chance(frame, 0.60, 0.45))
    assert "meaningless" not in values["primary_table"] and values["chance_note"] == ""


def test_the_pilots_sop_power_is_noted_as_meaningless(committed):
    """On the pilot's own runs (seeds 0-2 of cpu-long) both arms read the cue-free pairs
    at chance, so the registered table's over-99% power for SOP carries the note."""
    frame = A.pilot_frame()
    sop = next(s for s in D.PRIMARY if s.key == "confirm/sop")
    assert K.chance_arms(sop, frame)["both"]
    values = P.pilot_values(frame)
    row = _cells(values["primary_table"], "| SOP probe")
    assert row[3] == "over 99%" and row[-1].startswith("meaningless")
    assert values["seeds"] == len(D.CONFIRM_SEEDS)
    # the same rule passes the pairs the models do read: the secondary accuracies
    for spec in D.SECONDARY:
        found = K.chance_arms(spec, frame)
        assert found is None or not found["both"]



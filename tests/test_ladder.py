"""The compute ladder's design (studies.ladder): the registered rungs, arms, seeds, the
seed rule's inputs as stored, the stopping rule and the forecast's order."""
import json

import numpy as np
import pandas as pd
import pytest

from albert_rerun.studies import confirm_analysis, ladder as L, ladder_power as LP, long_pilot, registration
from albert_rerun.studies import conditions as C
from albert_rerun.engine.store import config_hash
from albert_rerun.paths import repo_root


def test_every_rung_is_the_confirmatory_recipe_on_its_own_schedule():
    registered = confirm_analysis.conditions(L.wide_steps("4x"))
    for rung in ("1x", "16x"):
        for arm, c in L.configs(rung).items():
            r = registered[arm]
            steps = L.wide_steps(rung) if arm == confirm_analysis.WIDE else L.RUNGS[rung]
            assert (c.max_steps, c.warmup_steps, c.curve_every) == (
                steps, max(2, steps // 20), max(1, steps // 8))
            back = C.with_steps(c, r.max_steps)
            assert config_hash(back.to_dict()) == config_hash(r.to_dict())
    assert set(L.configs("1x")) == set(L.ARMS) and len(L.ARMS) == 8
    # the 4x rung is the confirmatory store's configs themselves
    assert {a: config_hash(c.to_dict()) for a, c in L.configs("4x").items()} == {
        a: config_hash(registered[a].to_dict()) for a in L.ARMS}


def test_equal_time_is_the_registered_ratio_at_every_rung():
    ratio = L.wide_steps("4x") / L.RUNGS["4x"]
    for rung in ("1x", "16x"):
        assert L.wide_steps(rung) == round(L.RUNGS[rung] * ratio)
    assert L.X == {"1x": 0.0, "4x": 2.0, "16x": 4.0}


def _stored_seeds():
    seeds = set()
    for path in (repo_root() / "data" / "results").glob("*/pretrain/*.json"):
        seeds.add(json.loads(path.read_text())["config"]["seed"])
    return seeds


def test_the_seeds_are_fresh_and_the_counts_are_the_stored_rules():
    fresh = set(L.SEEDS["1x"]) | set(L.SEEDS["16x"])
    ladder = {run["config"]["seed"] for run in L.stored_runs()}
    assert not fresh & (_stored_seeds() - ladder)
    assert not fresh & set(confirm_analysis.CONFIRM_SEEDS) and long_pilot.SEED not in fresh
    assert not set(L.SEEDS["1x"]) & set(L.SEEDS["16x"])
    budget = L.stored_design()["budget"]
    assert (len(L.SEEDS["1x"]), len(L.SEEDS["16x"])) == (budget["1x seeds"],
                                                         budget["16x seeds"])
    assert budget["hours"] <= budget["limit"] == pytest.approx(
        L.BUDGET_HOURS * (1 + L.BUDGET_TOLERANCE))


def test_the_plan_is_seed_major_with_a_control_after_each_seed():
    runs = L.planned("1x")
    assert len(runs) == 9 * len(L.SEEDS["1x"])
    seeds = [c.seed for c in runs]
    assert seeds == sorted(seeds)
    assert all(runs[k].max_steps == 0 for k in range(8, len(runs), 9))
    with pytest.raises(ValueError, match="confirmatory store"):
        L.planned("4x")


def test_the_budget_rule_picks_the_16x_seeds_first_then_fills_the_1x_rung():
    plan = pd.DataFrame({f"power (a) at {n}": [p, q] for n, p, q in
                         [(3, .5, .1), (4, .85, .2), (5, .95, .3), (8, .99, .4)]},
                        index=["reachable", "never"])
    cost = {"pilot": 10.0, "per seed": {"1x": 1.0, "16x": 10.0}}
    b = LP.budget(plan, cost)  # limit 57.75: 10 + 6 + 4 x 10 = 56 fits, 5 do not
    assert (b["needed"], b["affordable"], b["16x seeds"], b["1x seeds"]) == (4, 4, 4, 7)
    assert b["underpowered"] == ["never"]
    rich = LP.budget(plan, {"pilot": 0.0, "per seed": {"1x": 0.1, "16x": 1.0}})
    assert (rich["16x seeds"], rich["1x seeds"]) == (4, 11)


def test_the_seed_rule_gives_the_stored_budget_from_the_stored_plan():
    # equal to the last digits a float sum's order leaves (the stored plan was summed on
    # another machine)
    stored, budget = L.stored_design()["budget"], LP.budget()
    assert budget.keys() == stored.keys()
    for key, value in stored.items():
        assert budget[key] == (pytest.approx(value, rel=1e-12) if isinstance(value, float)
                               else value), key


def test_nothing_is_estimated_before_the_store_is_complete(tmp_path):
    with pytest.raises(confirm_analysis.NotComplete, match="1x rung is not complete"):
        L.trend_family(tmp_path)
    with pytest.raises(confirm_analysis.NotComplete, match="no forecast"):
        L.forecast(tmp_path)
    table = L.progress(tmp_path)
    assert set(table.columns) == {"rung", "arm", "trained", "evaluated", "diverged", "of"}
    assert table["trained"].sum() == 0 and not L.settled(table)


def test_the_commands_refuse_before_the_store_is_complete_in_one_line(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    for command in (["forecast"], ["result"], ["result", "--early-end"]):
        assert L.main(command) == 1
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and err.startswith("error: NotComplete: ")
    with pytest.raises(SystemExit) as stop:
        L.main(["train", "--hours", "0"])
    assert stop.value.code == 2 and "--hours must be a positive" in capsys.readouterr().err
    assert not any(tmp_path.rglob("*.json"))  # nothing stored by a refusal


def test_only_the_stopping_rule_is_said_in_a_line(capsys):
    assert confirm_analysis.print_unless_incomplete(lambda: "table") == 0
    assert capsys.readouterr().out == "table\n"

    def fails():
        raise ValueError("a bug, not the stopping rule")
    with pytest.raises(ValueError):
        confirm_analysis.print_unless_incomplete(fails)


def test_the_reading_follows_the_sign_and_holm():
    assert L.trend_reading(0.1, 0.01, +1) == L.TOWARD
    assert L.trend_reading(-0.1, 0.01, +1) == L.AWAY
    assert L.trend_reading(-0.1, 0.01, -1) == L.TOWARD
    assert L.trend_reading(0.1, 0.2, +1) == L.NO_TREND


def test_non_finite_numbers_are_dropped_and_listed_and_give_no_reading():
    """Amendment 5's rules on their own: a non-finite difference leaves its rung, a
    rung with fewer than 3 is too few, a stored number that is not finite is listed,
    and a slope that is not finite reads as no trend."""
    from albert_rerun.studies import ladder as R
    spec = confirm_analysis.PRIMARY[0]
    frame = pd.DataFrame({"condition": [spec.a] * 3 + [spec.b] * 3,
                          "seed": [1, 2, 3] * 2,
                          spec.metric: [1.0, np.inf, 3.0, 0.5, 0.5, np.nan],
                          "train_mlm_loss_at_mask": [1.0] * 6})
    d = R.differences({"16x": frame}, spec)
    assert list(d["16x"]) == [0.5]  # seed 2 infinite, seed 3 missing an arm's number
    assert R.too_few(d, ("1x", "16x")) == ["1x", "16x"]
    assert R.nonfinite_runs({"16x": frame}).to_dict("records") == [
        {"rung": "16x", "arm": spec.a, "seed": 2, "number": spec.metric},
        {"rung": "16x", "arm": spec.b, "seed": 3, "number": spec.metric}]
    assert R.trend_reading(float("nan"), 0.001, +1) == R.NO_TREND
    kept = R.without_runs({"16x": frame}, R.nonfinite_runs({"16x": frame}))["16x"]
    assert list(zip(kept["condition"], kept["seed"])) == [
        (spec.a, 1), (spec.a, 3), (spec.b, 1), (spec.b, 2)]


def test_the_analysis_on_complete_rungs(monkeypatch):
    """trend_family on synthetic rungs: each decision's slope, Holm over five."""
    rng = np.random.default_rng(0)

    def fake_frame(rung, store=None, seeds=None):
        rows = []
        for seed in L.SEEDS[rung]:
            base = rng.normal(6.0, 0.01)
            for arm in L.ARMS:
                # equal time and sharing cost grow with compute; the rest stand still
                grow = L.X[rung] * (0.05 if arm in (confirm_analysis.WIDE, confirm_analysis.ALL64)
                                    else 0)
                rows.append({"condition": arm, "seed": seed,
                             confirm_analysis.CE: base + grow + rng.normal(0, 0.01),
                             "sop_cuefree_probe_correct": "".join(
                                 rng.choice(["0", "1"], 200))})
        return pd.DataFrame(rows)

    monkeypatch.setattr(L, "rung_frame", fake_frame)
    monkeypatch.setattr(L, "rung_complete", lambda rung, store=None, seeds=None: True)
    table = L.trend_family(store=None)
    assert list(table.index) == [s.key for s in L.DECISIONS]
    assert table.loc["confirm/sharing-cost", "slope"] == pytest.approx(0.05, abs=0.01)
    assert table.loc["confirm/sharing-cost", "reading"] == L.TOWARD
    assert table.loc["confirm/equal-time", "reading"] == L.AWAY  # the paper's sign is -
    assert table.loc["confirm/dropout", "reading"] == L.NO_TREND
    assert (table["p holm"] >= table["p"]).all()
    # the segments and the curvature, descriptive: a straight line has none
    assert table.loc["confirm/sharing-cost", "1x-4x"] == pytest.approx(0.05, abs=0.01)
    assert table.loc["confirm/sharing-cost", "4x-16x"] == pytest.approx(0.05, abs=0.01)
    assert abs(table.loc["confirm/sharing-cost", "curvature"]) < 0.03


def test_a_diverged_run_is_listed_once_and_any_other_failure_is_left_to_resume(
        tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    L.record_divergence("abc", "FloatingPointError: the run diverged by step 900")
    L.record_divergence("def", "OSError: disk full")
    assert L.diverged() == {"abc": "FloatingPointError: the run diverged by step 900"}


def test_an_early_end_analyses_only_a_long_enough_run_of_whole_seeds(monkeypatch):
    done = {"1x": set(L.SEEDS["1x"]), "16x": set(L.SEEDS["16x"][:2]) | {L.SEEDS["16x"][3]}}
    monkeypatch.setattr(L, "rung_complete", lambda rung, store=None, seeds=None:
                        set(seeds or L.SEEDS[rung]) <= done[rung])
    assert L.complete_prefix("16x") == L.SEEDS["16x"][:2]
    with pytest.raises(confirm_analysis.NotComplete):
        L._analysed_seeds(None, early_end=True)  # 2 whole seeds: fewer than 3
    done["16x"].add(L.SEEDS["16x"][2])
    done["16x"].discard(L.SEEDS["16x"][3])
    assert L._analysed_seeds(None, early_end=True)["16x"] == L.SEEDS["16x"][:3]
    with pytest.raises(confirm_analysis.NotComplete):
        L._analysed_seeds(None, early_end=False)


def test_no_ladder_run_trains_before_the_registration():
    problem = L.registration_problem()
    if L.registration() is None:
        assert "is not stored" in problem
    else:
        assert problem == ""


def test_every_stored_ladder_run_descends_from_the_registration_and_16x_from_the_forecast():
    assert L.provenance_problems(L.stored_runs()) == []


def test_a_run_without_a_registration_or_a_16x_run_before_the_forecast_is_flagged(
        monkeypatch):
    run = {"hash": "abc", "config": {"max_steps": L.RUNGS["16x"]},
           "provenance": {"git_commit": "0" * 40}}
    monkeypatch.setattr(L, "registration", lambda: None)
    assert L.provenance_problems([run]) == ["abc: stored before the registration"]
    head = registration._git("rev-parse", "HEAD").stdout.strip()
    problems = L.provenance_problems([run], {"commit": head})
    assert any("does not descend from the registration" in p for p in problems)
    assert any("forecast" in p for p in problems)


def test_order_counts_as_learned_at_the_first_rung_with_an_interval_above_zero(monkeypatch):
    def fake_frame(rung, store=None, seeds=None):
        above = {"1x": 0.0, "4x": 0.0, "16x": 0.08}[rung]
        rows = [{"condition": confirm_analysis.ALBERT, "seed": s, "sop_cuefree_majority": 0.5,
                 "sop_cuefree_accuracy_probe": 0.5 + above + 0.01 * ((s % 3) - 1),
                 "sop_cuefree_accuracy_head": 0.5 + 0.01 * ((s % 3) - 1)}
                for s in L.SEEDS[rung]]
        return pd.DataFrame(rows)

    monkeypatch.setattr(L, "rung_frame", fake_frame)
    monkeypatch.setattr(L, "rung_complete", lambda rung, store=None, seeds=None: True)
    table = L.sop_by_rung()
    assert list(table["order learned"]) == [False, False, True]
    assert L.first_rung_learning_order(table) == "16x"
    assert table.loc["16x", "probe mean"] == pytest.approx(8.0, abs=0.5)


def test_the_registered_text_has_not_changed_since_the_registration():
    record = L.registration()
    page = (repo_root() / L.PAGE).read_text()
    text = registration.registered_text(page)  # the block exists, registered or not
    assert "## 3. The test, per primary decision" in text
    if record is None:
        return
    assert registration.registered_digest(page) == record["sha256"], (
        "the registered text of book/ladder.md changed: a change is a dated amendment "
        "after the registered block, never an edit of it")
    then = registration._git("show", f"{record['commit']}:{L.PAGE}").stdout
    assert registration.registered_text(then) == text


def test_each_ladder_amendment_is_a_dropdown_with_its_text_unchanged_since_committed():
    """The promise of the page's amendments: each sits in a dropdown named
    ladder-amendment-N (labels are global: the first registration has amendment-N),
    and with the dropdown's own lines taken out its text is byte for byte the text of
    the commit that added it."""
    import re

    from albert_rerun.book import preregistration as A
    fence = re.compile(r"^(:{3,}(\{\w+\}.*)?|:name: .*|:class: .*)$")
    page = (repo_root() / L.PAGE).read_text().split("## Amendments\n", 1)[1]
    texts = A.sections(page)
    assert sorted(texts) == list(range(1, len(texts) + 1)) and len(texts) >= 6
    for number, date, _ in A.headings(page):
        assert (f"::::{{dropdown}} Amendment {number}, {date[:10]}: " in page
                and f":name: ladder-amendment-{number}\n\n### Amendment {number}," in page)
    if A.shallow(repo_root()):
        pytest.skip("a shallow clone: the commits that added the amendments are missing")

    def kept(text):  # the text without the dropdown's own lines
        return "".join(line for line in text.splitlines(keepends=True)
                       if not fence.match(line.rstrip("\n"))).rstrip()
    for number, text in texts.items():
        commit = A.first_commit(repo_root(), f"### Amendment {number},", L.PAGE)
        then = A.sections(A._git(repo_root(), "show", f"{commit}:{L.PAGE}"))[number]
        assert kept(text) == kept(then), f"ladder amendment {number}'s text changed"


def test_a_forecast_computed_in_a_dirty_tree_says_what_git_shows_between(tmp_path):
    """The committed forecast's record reads '+dirty': the page names its commit and the
    commit that stored it, and the files between them, from git."""
    from albert_rerun.book.budgets import forecast_record
    from albert_rerun.studies.registration import _git
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone: the forecast's commits are missing")
    store = repo_root() / "data" / "results" / L.STORE
    commit = json.loads((store / L.FORECAST).read_text())["provenance"]["git_commit"]
    got = forecast_record(store)
    assert commit.endswith("+dirty") and got["forecast_commit"] == commit[:7]
    assert got["forecast_dirty"] == "marked dirty"
    assert got["forecast_between"] == "only the forecast itself"
    clean = {"forecast": {}, "provenance": {"git_commit": commit.removesuffix("+dirty")}}
    (tmp_path / L.FORECAST).write_text(json.dumps(clean))
    assert forecast_record(tmp_path)["forecast_dirty"] == "clean"


def test_a_stored_column_of_nulls_reads_back_as_numbers(tmp_path):
    """A table column that is NaN in every row is stored as null and reloaded as None;
    result_tables reads it back as NaN floats (a skeptic's review), and leaves text,
    booleans and mixed columns as they are."""
    from albert_rerun.engine.store import atomic_write_json
    table = pd.DataFrame({"change": [np.nan, np.nan], "seeds": [4, 3], "read": [True, False],
                          "name": ["a", "b"], "x": [0.5, np.nan]}, index=["k1", "k2"])
    atomic_write_json(tmp_path / L.RESULT, {"tables": {"gap split": json.loads(
        table.to_json(orient="split"))}, "trigger": "a test"})
    read = L.result_tables(tmp_path)[0]["gap split"]
    assert read["change"].dtype == float and read["change"].isna().all()
    assert read["x"].iloc[0] == 0.5 and np.isnan(read["x"].iloc[1])
    assert list(read["read"]) == [True, False] and list(read["name"]) == ["a", "b"]
    assert read.index.name == "key"
    empty = pd.DataFrame({"rung": pd.Series([], dtype=object)})
    assert L._numbers(empty)["rung"].dtype == object

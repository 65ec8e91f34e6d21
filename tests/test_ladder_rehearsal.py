"""A dress rehearsal of the ladder's last day, on a store where every run is stored.

The 16x rung is still training, and its results stay unread until every run is stored
(book/ladder.md, section 4); amendment 1 keeps the 1x rung's own estimates back until
then too. So the paths that show the result once the ladder is complete (the registered
analysis and its stored copy, the ladder page's result, the chapters' "As training
grows" lines, the introduction's column and the scale page) run here on a store made of
public runs: the confirmatory (4x) runs, judged and published, relabelled. Seeds 1000 to
1005 become the 1x rung's seeds 2000 to 2005, seeds 1006 to 1009 the 16x rung's 3000 to
3003, each as its rung's config, with the steps, tokens and seconds of a run of that
rung's length. At 16x two arms are moved on purpose, so that the slopes read every way:
the all-shared E = H = 64 arm by SHIFT[ALL64] nats (the sharing cost grows: toward the
paper's sign) and the wide arm by SHIFT[WIDE] (equal time grows: away from it). The 4x
rung is the committed confirmatory store, read in place.

Amendment 2 says why: the first version of this test copied the committed 1x rung, and so
computed 1x numbers early. Now a guard fails the module on any read of a committed ladder
training or evaluation record, 1x included, by any of the store's readers or by
``Path.read_text``.

What it does not rehearse: the intervals' meaning (the rungs are subsets of one set of
seeds) and the runs' provenance (the copies keep the confirmatory runs', so the page
reports them as problems)."""
import json
import pathlib
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from albert_rerun.engine import store as S
from albert_rerun.engine.store import atomic_write_json, config_hash, eval_path, pretrain_path
from albert_rerun.paths import repo_root
from albert_rerun.studies import conditions as C
from albert_rerun.studies import confirm_analysis as A
from albert_rerun.studies import confirm_analysis as D
from albert_rerun.studies import ladder as L

RESULTS = repo_root() / "data" / "results"
COMMITTED = RESULTS / L.STORE
CONFIRM = RESULTS / D.STORE
FORBIDDEN = (COMMITTED / "pretrain", COMMITTED / "eval")
SOURCE = {"1x": dict(zip(L.SEEDS["1x"], D.CONFIRM_SEEDS[:6])),
          "16x": dict(zip(L.SEEDS["16x"], D.CONFIRM_SEEDS[6:10]))}
SHIFT = {D.ALL64: 0.5, D.WIDE: 0.3}  # nats added to a 16x arm's held-out cross-entropy


def _copy(source, target, arm: str, store: Path, shift: float = 0.0) -> None:
    """Write the confirmatory run ``source`` (its training record, rescaled to
    ``target``'s steps, and the evaluations ``confirm_analysis._needed`` asks of ``arm``)
    into ``store`` as ``target``'s; ``shift`` added to its held-out cross-entropy."""
    evaluations = A._evaluation_configs()
    run = json.loads(pretrain_path(CONFIRM, source).read_text())
    scale = target.max_steps / run["metrics"]["steps"]
    metrics = {**run["metrics"], "steps": target.max_steps,
               "tokens": round(run["metrics"]["tokens"] * scale),
               "train_seconds": run["metrics"]["train_seconds"] * scale}
    atomic_write_json(pretrain_path(store, target),
                      {**run, "config": target.to_dict(), "hash": config_hash(target.to_dict()),
                       "metrics": metrics})
    pairs = zip(A._needed(arm, source, evaluations), A._needed(arm, target, evaluations))
    for k, ((old, evaluation), (new, _)) in enumerate(pairs):
        old_hash, new_hash = config_hash(old.to_dict()), config_hash(new.to_dict())
        record = json.loads(eval_path(CONFIRM, old_hash, evaluation).read_text())
        if k == 0 and shift:  # the common held-out evaluation of the run itself
            record = {**record, "metrics": {**record["metrics"],
                                            D.CE: record["metrics"][D.CE] + shift}}
        atomic_write_json(eval_path(store, new_hash, evaluation),
                          {**record, "pretrain_hash": new_hash})


def build(results: Path) -> Path:
    """A results folder whose ladder store is complete, made of the confirmatory runs,
    and whose other stores link the committed ones; its ladder store."""
    results.mkdir(parents=True)
    for path in RESULTS.iterdir():
        if path.is_dir() and path.name != L.STORE:
            (results / path.name).symlink_to(path)
    store = results / L.STORE
    store.mkdir()
    shutil.copy(COMMITTED / L.DESIGN, store / L.DESIGN)
    confirmatory = L.configs("4x")
    for rung, seeds in SOURCE.items():
        for arm, config in L.configs(rung).items():
            for seed, source in seeds.items():
                _copy(C.seeded(confirmatory[arm], source), C.seeded(config, seed), arm,
                      store, SHIFT.get(arm, 0.0) if rung == "16x" else 0.0)
    # the forecast from the rehearsal's own 1x rung, as the real one came from the real
    # 1x rung: so a miss is the curvature here too (amendment 7)
    atomic_write_json(store / L.FORECAST, L.forecast(store))
    return store


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """``build``'s results folder set as ALBERT_RERUN_RESULTS for the module, with every
    committed ladder record out of bounds."""
    store = build(tmp_path_factory.mktemp("ladder-rehearsal") / "results")
    read, read_text, seen = S.read_json, pathlib.Path.read_text, []

    def allowed(path) -> Path:
        path = Path(path).resolve()
        assert not any(part in path.parents for part in FORBIDDEN), \
            f"the rehearsal read a committed ladder record: {path}"
        return path

    def guarded(path):
        seen.append(allowed(path))
        return read(path)

    def guarded_text(self, *args, **kwargs):
        allowed(self)
        return read_text(self, *args, **kwargs)

    from albert_rerun.engine import provenance
    clean = {**provenance.record(), "git_commit": "0" * 40}  # the test tree may be dirty

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(store.parent))
        patch.setattr(provenance, "record", lambda: clean)
        for module in (S, L):
            patch.setattr(module, "read_json", guarded)
        patch.setattr(pathlib.Path, "read_text", guarded_text)
        yield store
    assert any(store in path.parents for path in seen)  # the guard saw the reads


@pytest.fixture(scope="module")
def family(rehearsal):
    return L.trend_family()


@pytest.fixture(scope="module")
def stored(rehearsal):
    """The analysis stored once, as the training stretch that stores the last run
    does: what every page reads."""
    from albert_rerun.book.budgets import results_text
    with pytest.raises(L.NotComplete, match="the analysis is not"):  # nothing shown before
        L.result_tables()
    assert results_text() == ""
    return Path(L.store_result(trigger="the rehearsal"))


def test_the_rehearsal_store_is_complete_and_the_stopping_rule_held_before(rehearsal):
    from albert_rerun.book.budgets import results_text
    progress = L.progress()
    assert L.settled(progress) and (progress["evaluated"] == progress["of"]).all()
    assert L.rung_complete("1x") and L.rung_complete("16x")
    # one run fewer and nothing is computed, even from frames a caller passes
    frames = L.rung_frames()
    gone = C.seeded(L.configs("16x")[D.NSP], L.SEEDS["16x"][-1])
    path = pretrain_path(rehearsal, gone)
    record = path.read_bytes()
    path.unlink()
    try:
        assert results_text() == ""
        with pytest.raises(D.NotComplete):
            L.trend_family(frames=frames)
        with pytest.raises(D.NotComplete):
            L.sop_by_rung(frames=frames)
    finally:
        path.write_bytes(record)


def test_each_rung_pairs_the_seeds_it_was_given(rehearsal, family):
    """Every rung's mean is the mean of its own seeds' paired differences: the
    confirmatory seeds each was made of, plus the 16x shifts; the slope is
    ``trend.slope`` through them, Holm's p never falls below the raw one, and the
    shifted decisions read toward and away from the paper's sign."""
    from albert_rerun.stats.trend import slope
    four = A.with_changes(L.rung_frame("4x"))
    shift = {"confirm/sharing-cost": SHIFT[D.ALL64], "confirm/equal-time": SHIFT[D.WIDE]}
    for spec in L.DECISIONS:
        row = family.loc[spec.key]
        d4 = A.per_seed(spec, four)
        d1 = d4.loc[list(SOURCE["1x"].values())].to_numpy(float)
        d16 = d4.loc[list(SOURCE["16x"].values())].to_numpy(float) + shift.get(spec.key, 0)
        assert row["1x mean"] == pytest.approx(d1.mean())
        assert row["16x mean"] == pytest.approx(d16.mean())
        assert row["4x mean"] == pytest.approx(d4.mean())
        assert (row["1x seeds"], row["4x seeds"], row["16x seeds"]) == (6, 11, 4)
        s = slope({L.X["1x"]: d1, L.X["4x"]: d4.to_numpy(float), L.X["16x"]: d16})
        assert row["slope"] == pytest.approx(s.estimate)
        assert row["p"] == pytest.approx(s.p) and row["p holm"] >= row["p"] - 1e-12
        assert row["reading"] == L.trend_reading(row["slope"], row["p holm"],
                                                 spec.paper_sign)
        stored = json.loads((rehearsal / L.FORECAST).read_text())["forecast"][spec.key]
        assert row["forecast covers"] == (stored["low"] <= row["16x mean"] <= stored["high"])
    assert family.loc["confirm/sharing-cost", "reading"] == L.TOWARD
    assert family.loc["confirm/equal-time", "reading"] == L.AWAY


def test_a_ladder_store_argument_reads_its_4x_rung_from_the_confirmatory_store(
        rehearsal, family):
    """The ladder store holds no 4x run: given explicitly, the analysis still reads the
    4x rung from the confirmatory store, as with the default."""
    pd.testing.assert_frame_equal(L.trend_family(rehearsal), family)


def test_the_result_is_stored_once_and_read_back_as_computed(rehearsal, stored, family):
    """``ladder.store_result`` keeps the analysis as computed (section 4); the pages read
    it back, equal to a fresh computation, and it is made once."""
    tables, record = L.result_tables()
    assert record["trigger"] == "the rehearsal" and not record["early_end"]
    fresh = L.compute_result()
    assert set(tables) == set(fresh)
    for name, table in tables.items():
        pd.testing.assert_frame_equal(table, fresh[name], check_index_type=False,
                                      rtol=1e-12)
    pd.testing.assert_frame_equal(tables["trend"], family, rtol=1e-12)
    with pytest.raises(FileExistsError):
        L.store_result()


def test_the_ladder_page_shows_the_registered_result(rehearsal, stored, family):
    """The registration page's result (its template filled) carries every registered
    number in the registered sign; the findings page's figure is legible with the
    paper's direction up in every panel; the split recomputes from the runs."""
    import matplotlib.pyplot as plt

    from albert_rerun.book import budgets as B
    from albert_rerun.book import ladder_trend as T
    from figure_checks import figure_problems
    text = B.results_text()
    assert "{{" not in text and "**After the result: leaving the loss plateau**" in text
    after = text.split("**After the result: leaving the loss plateau**")[1]
    assert all(f"| {arm} | " in after for arm in L.ARMS)
    assert [T.tag(k) for k in family.index] == [
        "asymmetry", "sharing cost", "SOP", "dropout", "equal time"]
    powers = T.planned_power()
    design = json.loads((rehearsal / L.DESIGN).read_text())["plan"]
    for key, row in family.iterrows():  # each decision's words once, in the key table
        sign = {1: "+", -1: "−"}[int(row["paper_sign"])]
        assert text.count(f"| {row['decision']} | {row['unit']} | {sign} |") == 1
        assert text.count(row["decision"]) == 1
        line = next(x for x in text.splitlines()
                    if x.startswith(f"| **{T.tag(key)}** | ") and x.count(" | ") > 8)
        assert f" | {row['p holm']:.3f} | {row['slope df']:.0f} | **{row['reading']}** |" \
            in line  # p, Holm's p and df, a column each
        assert line.endswith(f" | {B._power(powers.get(key), row['unit'])} |")
        assert powers[key][0] == design[key]["power (a) at 4"]
        for rung in L.RUNGS:  # the registered sign: the table's own numbers
            assert B._rung(row, rung) in line
    assert B._power(powers["confirm/sop"], "points") == "– (no slope (a))"
    assert ("† marks" in text) == any(T.excluded_before_holm_only(r)
                                      for _, r in family.iterrows())
    covers = int(family["forecast covers"].sum())
    assert f"inside the forecast's\n95% interval for {covers} of 5" in text
    assert "computed once, by the rehearsal, at commit `0000000`" in text
    # the gap beside every slope in nats, each rung (section 2, amendment 7)
    gaps = text.split("slopes in nats")[1].split("**The forecast, then its test**")[0]
    assert len(L.GAP_DECISIONS) == 4 and "confirm/sop" not in L.GAP_DECISIONS
    # the split of each change from 1x to 16x (amendment 7), checked against the
    # per-seed cross-entropies themselves, its intervals against Welch's standard error
    # on the fewest seeds less one
    import scipy.stats as st
    split = L.result_tables()[0]["gap split"]
    assert list(split.index) == list(L.GAP_DECISIONS)
    frames, specs = L.rung_frames(), {spec.key: spec for spec in L.DECISIONS}
    for key in L.GAP_DECISIONS:
        assert f"| **{T.tag(key)}** | " in gaps
        row = split.loc[key]
        parts = {}
        for name, metric in (("change", D.CE), ("training part", "train_mlm_loss_at_mask")):
            d = {r: A.per_seed(replace(specs[key], metric=metric), frames[r]).to_numpy(float)
                 for r in ("1x", "16x")}
            se = np.sqrt(sum(v.var(ddof=1) / len(v) for v in d.values()))
            t = st.t.ppf(0.975, min(map(len, d.values())) - 1)
            parts[name] = d["16x"].mean() - d["1x"].mean()
            assert row[name] == pytest.approx(parts[name], abs=1e-12)
            assert row[f"{name} low"] == pytest.approx(parts[name] - t * se, abs=1e-12)
        assert row["change"] == pytest.approx(family.loc[key, "16x mean"]
                                              - family.loc[key, "1x mean"], abs=1e-12)
        assert row["gap part"] == pytest.approx(row["change"] - row["training part"],
                                                abs=1e-12)
        assert row["read"] == (row["change low"] > 0 or row["change high"] < 0)
        assert B.split_reading(row) in text
    for rung in L.RUNGS:
        assert f"\n| {rung} | " in text  # the SOP and equal-time tables
    assert "Diverged: none." in text and "**Provenance.** Problems found: " in text
    # the findings page's figure: all five decisions, the paper's direction up
    tables = L.result_tables()[0]
    trends = T.gather(tables=tables, paper_signs=True)
    assert all(t.paper_sign == 1 and t.table is not None for t in trends.values())
    fig = B.trend_figure(tables)
    assert figure_problems(fig) == [] and len(fig.axes) == len(L.DECISIONS)
    plt.close(fig)
    progress = B.progress_values()
    assert progress["progress_state"] == "complete"
    assert "for the 32 runs of the 16x budget" in progress["costs"]
    # the findings page's keys, the paper's direction positive
    values = B.findings_values(B.read())
    for key, row in family.iterrows():
        short, sign = B.SHORT[key], int(row["paper_sign"])
        digits = 1 if row["unit"] == "points" else 3
        assert values[f"ladder_{short}_16x"].startswith(
            f"{sign * row['16x mean']:+.{digits}f}".replace("-0.000", "0.000"))
        assert values[f"ladder_{short}_label"] == T.plain_label(row)


def test_the_chapters_read_the_same_result(rehearsal, stored, family):
    import matplotlib.pyplot as plt

    from albert_rerun.book import ladder_trend as T
    from figure_checks import figure_problems
    trends = T.gather()
    for key, t in trends.items():
        row = family.loc[key]
        assert t.table is not None and t.table["slope"] == pytest.approx(row["slope"])
        assert (t.gap is not None) == (key in L.GAP_DECISIONS)
        fig = T.figure([t])
        assert figure_problems(fig) == []
        ticks = [tick.get_text() for tick in fig.axes[0].get_xticklabels()]
        assert ticks == list(L.RUNGS) and T.plain_label(row) in fig.axes[0].get_title("left")
        plt.close(fig)


def test_a_diverged_run_leaves_its_decisions_and_the_page_names_it(rehearsal, stored,
                                                                    tmp_path, monkeypatch):
    """One 16x run listed as diverged (section 4): the store still counts as complete,
    its arm's decisions use three seeds at 16x, and every page names the run."""
    from albert_rerun.book.budgets import progress_values, results_text
    results = tmp_path / "results"
    shutil.copytree(rehearsal.parent, results, symlinks=True)
    store = results / L.STORE
    gone = C.seeded(L.configs("16x")[D.DROPOUT], L.SEEDS["16x"][-1])
    pretrain_path(store, gone).unlink()
    key = config_hash(gone.to_dict())
    atomic_write_json(store / L.DIVERGED, {key: "FloatingPointError: the run diverged"})
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(results))
    (store / L.RESULT).unlink()  # the copy's result was computed with every run
    progress = L.progress()
    assert L.settled(progress) and int(progress["diverged"].sum()) == 1
    L.store_result(store, "the rehearsal")
    table = L.result_tables()[0]["trend"]
    assert table.loc["confirm/dropout", "16x seeds"] == 3
    assert table.loc["confirm/asymmetry", "16x seeds"] == 4
    text = results_text()
    assert f"Diverged: 16x, {D.DROPOUT}, seed {L.SEEDS['16x'][-1]}." in text
    assert "(n = 3)" in text
    progress = progress_values()
    assert progress["progress_state"] == "complete"
    assert "| diverged |" in progress["progress_table"]


def test_too_few_seeds_and_a_non_finite_number_leave_only_their_decisions(
        rehearsal, tmp_path, monkeypatch):
    """Amendments 5 and 6: three of the dropout arm's four 16x runs diverged, so that
    decision has 1 seed at 16x and gets no slope (p = 1 in Holm's family: the other four
    keep theirs); one all-shared E 64 run's held-out cross-entropy is infinite, so it
    leaves every table, as a diverged run does, and is listed. Every page renders."""
    import matplotlib.pyplot as plt
    from statsmodels.stats.multitest import multipletests

    from albert_rerun.book.budgets import results_text
    from albert_rerun.book import ladder_trend as T
    from figure_checks import figure_problems
    results = tmp_path / "results"
    shutil.copytree(rehearsal.parent, results, symlinks=True)
    store = results / L.STORE
    listed = {}
    for seed in L.SEEDS["16x"][1:]:
        gone = C.seeded(L.configs("16x")[D.DROPOUT], seed)
        pretrain_path(store, gone).unlink()
        listed[config_hash(gone.to_dict())] = "FloatingPointError: the run diverged"
    atomic_write_json(store / L.DIVERGED, listed)
    broken = C.seeded(L.configs("16x")[D.ALL64], L.SEEDS["16x"][0])
    path = eval_path(store, config_hash(broken.to_dict()), A._evaluation_configs()[0])
    record = json.loads(path.read_text())
    record["metrics"][D.CE] = float("inf")
    atomic_write_json(path, record)
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(results))
    (store / L.RESULT).unlink(missing_ok=True)
    L.store_result(store, "the rehearsal")
    tables = L.result_tables()[0]
    table = tables["trend"]
    dropout, cost = table.loc["confirm/dropout"], table.loc["confirm/sharing-cost"]
    assert dropout["reading"] == L.NOT_COMPUTED and dropout["too few seeds at"] == "16x"
    assert dropout["p"] == 1 and np.isnan(dropout["slope"]) and dropout["16x seeds"] == 1
    assert np.isnan(dropout["16x mean"]) and np.isfinite(dropout["4x mean"])
    assert cost["16x seeds"] == 3 and np.isfinite(cost["slope"])
    assert list(table["p holm"]) == pytest.approx(
        list(multipletests(table["p"], method="holm")[1]))
    assert (table.drop("confirm/dropout")["reading"] != L.NOT_COMPUTED).all()
    assert tables["non-finite"].to_dict("records") == [
        {"rung": "16x", "arm": D.ALL64, "seed": L.SEEDS["16x"][0], "number": D.CE}]
    gaps = tables["gaps"].set_index(["rung", "arm"])
    assert gaps.loc[("16x", D.ALL64), "seeds"] == 3 and ("16x", D.DROPOUT) not in gaps.index
    sixteen = L.rung_frames()["16x"]
    assert not ((sixteen["condition"] == D.ALL64) & (sixteen["seed"] == L.SEEDS["16x"][0])).any()
    assert len(L.rung_frames(clean=False)["16x"]) == len(sixteen) + 1
    text = results_text()
    assert "no slope: fewer than 3 paired seeds at 16x" in text and "– (n = 1)" in text
    assert "| **dropout** | " in text and "| not tested: fewer than 3 paired seeds at 16x |" in text
    assert f"16x, {D.ALL64}, seed {L.SEEDS['16x'][0]}" in text.split("not finite")[1]
    trends = T.gather()
    assert T.no_slope(trends["confirm/dropout"].table) == "fewer than 3 paired seeds at 16x"
    for t in trends.values():
        fig = T.figure([t])
        assert figure_problems(fig) == []
        plt.close(fig)


def test_the_trained_runs_are_every_rung_run(rehearsal):
    runs = L.trained_runs()
    assert len(runs) == len(L.ARMS) * (len(L.SEEDS["1x"]) + len(L.SEEDS["16x"]))
    hours = L.training_costs()["hours"].sum()
    assert hours == pytest.approx(runs["train_seconds"].sum() / 3600)


@pytest.mark.parametrize("change, training, gap, expected", [
    ((0.4, 0.6), (-0.1, 0.6), (0.1, 0.3), "only the gap part's interval excludes 0"),
    ((0.4, 0.6), (0.1, 0.6), (-0.1, 0.3), "only the training-split part's interval excludes 0"),
    ((0.4, 0.6), (0.2, 0.4), (0.1, 0.3), "both parts' intervals exclude 0"),
    ((-0.6, -0.4), (-0.6, 0.1), (-0.4, 0.2), "neither part's interval excludes 0"),
    ((-0.1, 0.6), (0.2, 0.4), (0.1, 0.3), "not read: the change's interval includes 0"),
    ((np.nan, np.nan), (np.nan, np.nan), (np.nan, np.nan), "not split: too few seeds at a rung"),
])
def test_a_split_is_read_only_where_its_change_is_shown(change, training, gap, expected):
    """Amendment 7's rule: the parts are named only where the change's interval excludes
    0, and then by which of their intervals exclude 0."""
    from albert_rerun.book.budgets import split_reading
    row = {"read": bool(change[0] > 0 or change[1] < 0)}
    for name, (low, high) in (("change", change), ("training part", training),
                              ("gap part", gap)):
        row.update({name: (low + high) / 2, f"{name} low": low, f"{name} high": high})
    assert split_reading(pd.Series(row)) == expected


def test_a_split_without_spread_is_not_read():
    """Amendment 8: a change whose seeds agree exactly has no interval; the reading says
    so, not that its interval includes 0."""
    from albert_rerun.book.budgets import split_reading
    row = {"read": False, "change": 0.1, "change low": np.nan, "change high": np.nan}
    assert split_reading(pd.Series(row)) == "not read: no spread"


def test_a_failing_store_after_the_last_run_is_said_and_leaves_the_commit_to_go_on(
        rehearsal, stored, tmp_path, monkeypatch, capsys):
    """The stretch that stores the last run stores the analysis; if that fails, one
    blind line says so and the stretch goes on to commit its runs."""
    results = tmp_path / "results"
    shutil.copytree(rehearsal.parent, results, symlinks=True)
    store = results / L.STORE
    (store / L.RESULT).unlink()
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(results))

    def broken(*args, **kwargs):
        raise ValueError("a secret 0.123 number")
    monkeypatch.setattr(L, "store_result", broken)
    L.store_when_complete(store)  # does not raise
    out = capsys.readouterr().out
    assert "[ladder] the analysis was not stored (ValueError)" in out and "0.123" not in out
    monkeypatch.undo()
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(results))
    from albert_rerun.engine import provenance
    monkeypatch.setattr(provenance, "record", lambda: {"git_commit": "1" * 40})
    L.store_when_complete(store)
    assert (store / L.RESULT).exists() and "the analysis is in" in capsys.readouterr().out
    assert L.result_tables(store)[1]["trigger"] == \
        "the training stretch that stored the last run"

"""A dress rehearsal of the confirmatory report's day, on a store with every planned run.

The pilot's stored runs (cpu-long seeds 0-2, exploratory and already in the book) are
relabelled as the confirmatory configs, seed 1000 + k from pilot seed k mod 3, and written
to a temporary store; of the committed confirmatory store only the registered equal-time
timing (steps and seconds, no result) is read, and a guard fails the module if any
confirmatory training or evaluation record is. Then every path that shows the verdicts
once the design is complete runs as it will on that day: the report, the
pre-registration page's progress and curves, the chapters' lines and boxes, the
introduction's and the ledger's list. The unit tests in test_confirm feed each of these
synthetic families; this one checks that they read a real store's records, pair the
right seeds and agree with each other.

What it does not rehearse: the untrained controls' training records and the runs'
provenance (the copies keep the pilot's), and the intervals' meaning (eleven seeds made
of three repeat each other)."""
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from albert_rerun.studies import conditions as C
from albert_rerun.studies import confirm as K
from albert_rerun.studies import confirm_analysis as A
from albert_rerun.studies import confirm_analysis as D
from albert_rerun.stats.inference import paired_t
from albert_rerun.engine import store as S
from albert_rerun.engine.store import (atomic_write_json, config_hash, eval_path,
                                       pretrain_path, read_json)
from albert_rerun.paths import repo_root
from albert_rerun.profiles import resolve

ROOT = repo_root()
COMMITTED = ROOT / "data" / "results" / D.STORE
EQUAL_TIME = COMMITTED / "choices" / f"{D.EQUAL_TIME}.json"
FORBIDDEN = (COMMITTED / "pretrain", COMMITTED / "eval")


def pilot_seed(seed: int) -> int:
    return D.PILOT_SEEDS[(seed - D.CONFIRM_SEEDS[0]) % len(D.PILOT_SEEDS)]


def _copy_run(source, target, name: str, store) -> None:
    """Write ``source``'s stored pilot run (its training record and every evaluation
    ``A._needed`` asks of condition ``name``) as ``target``'s, in ``store``."""
    evaluations = A._evaluation_configs()
    pilot_store = C._timing_store(resolve(D.PILOT_PROFILE))
    run = read_json(pretrain_path(pilot_store, source))
    assert run is not None, f"the pilot's run {config_hash(source.to_dict())} is not stored"
    atomic_write_json(pretrain_path(store, target),
                      {**run, "config": target.to_dict(),
                       "hash": config_hash(target.to_dict())})
    for (old, evaluation), (new, _) in zip(A._needed(name, source, evaluations),
                                           A._needed(name, target, evaluations)):
        record = read_json(eval_path(pilot_store, config_hash(old.to_dict()), evaluation))
        assert record is not None
        new_hash = config_hash(new.to_dict())
        atomic_write_json(eval_path(store, new_hash, evaluation),
                          {**record, "pretrain_hash": new_hash})


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """The results folder of a complete design made from the pilot's runs, set as
    ALBERT_RERUN_RESULTS for the module; any read of a committed confirmatory training
    or evaluation record fails."""
    results = tmp_path_factory.mktemp("rehearsal") / "results"
    store = results / D.STORE
    (store / "choices").mkdir(parents=True)
    record = json.loads(EQUAL_TIME.read_text())  # the registered timing: steps, no result
    atomic_write_json(store / "choices" / f"{D.EQUAL_TIME}.json", record)
    pilot, confirmatory = D.pilot_conditions(), D.conditions(record["steps"])
    for name in D.CONDITIONS:
        for seed in D.CONFIRM_SEEDS:
            _copy_run(C.seeded(pilot[name], pilot_seed(seed)),
                      C.seeded(confirmatory[name], seed), name, store)
    # the learning-rate check's three rates from three pilot seeds, so that they differ
    for config, seed in zip(D.lr_check(record["steps"]).values(), D.PILOT_SEEDS):
        _copy_run(C.seeded(pilot[D.WIDE], seed), config, D.WIDE, store)
    read = S.read_json
    seen = []

    def guarded(path):
        path = Path(path).resolve()
        assert not any(part in path.parents for part in FORBIDDEN), \
            f"the rehearsal read a committed confirmatory record: {path}"
        seen.append(path)
        return read(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(results))
        patch.setattr(S, "read_json", guarded)
        yield store
    assert any(store in path.parents for path in seen)  # the guard saw the reads


def test_the_rehearsal_store_is_complete(rehearsal):
    assert A.complete() and A.complete(rehearsal)
    assert A.progress()["evaluated"].sum() == len(D.CONDITIONS) * len(D.CONFIRM_SEEDS)


def test_each_decision_pairs_the_seeds_it_was_given(rehearsal):
    """Every primary and secondary decision reads all eleven seeds, paired as the
    rehearsal relabelled them: its estimate is the mean of the pilot's per-seed
    differences in that order, and (the pairing shows in the spread, not the mean) its
    interval is their paired t-interval (the accuracy decisions' is the wider of that
    and the item bootstrap)."""
    families = A.confirmatory_families(rehearsal)
    pilot = A.with_changes(A.pilot_frame())
    for specs, family in ((D.PRIMARY, families["primary"]),
                          (D.SECONDARY, families["secondary"])):
        for spec in specs:
            by_seed = A.per_seed(spec, pilot)
            t = paired_t(np.array([by_seed[pilot_seed(s)] for s in D.CONFIRM_SEEDS]))
            row = family.loc[spec.key]
            assert row["n_seeds"] == len(D.CONFIRM_SEEDS)
            assert row["estimate"] == pytest.approx(t["estimate"], rel=1e-9, abs=1e-12)
            if spec.kind == "accuracy":
                assert row["low"] <= t["low"] + 1e-9 and row["high"] >= t["high"] - 1e-9
            else:
                assert (row["low"], row["high"]) == pytest.approx((t["low"], t["high"]))
                assert row["p_difference"] == pytest.approx(t["p_difference"])


def test_the_report_and_every_page_agree_on_each_verdict(rehearsal, tmp_path):
    from albert_rerun.book import confirmatory, first_screen, headlines, plain
    from albert_rerun.book.preregistration import results_text, results_values
    report = K.report()
    page = results_text(tmp_path)
    assert page.startswith(f"All {len(D.CONDITIONS) * len(D.CONFIRM_SEEDS)} confirmatory")
    assert f"confirmatory, {len(D.CONFIRM_SEEDS)} seeds" in report
    for spec in D.PRIMARY + D.SECONDARY:
        line = next(line for line in report.splitlines() if f"`{spec.key}`: {spec.label}" in line)
        assert line in page  # the same row, verdicts and all
    rows = confirmatory.confirmatory_rows()
    assert set(rows) == {spec.claim for spec in D.PRIMARY}
    extras = confirmatory.confirmatory_extras()
    assert set(extras) == set(headlines.EXTRA)
    wide = A.pilot_frame().query("condition == @D.WIDE").set_index("seed")[D.CE]
    scores = dict(zip(D.LR_CHECK_RATES, wide.loc[list(D.PILOT_SEEDS)]))
    gap = K.lr_check_gap(scores, D.margin_values(A.rungs())["ce"])
    assert results_values()["lr_check"] == (
        "5e-3 is within the cross-entropy margin of the best rate" if gap is None else
        f"5e-3 was not the best rate: {gap[0]:g} beat it by {gap[1]:.3f} nats")
    assert (tmp_path / "preregistration-confirm-curves.png").stat().st_size > 1000
    empty = {"cpu": pd.DataFrame(columns=["in_family", "n_seeds"])}
    shown = first_screen.rows("cpu")
    # the introduction's lines: the registered rows, paper-positive
    for name, (source, _) in first_screen.LINES.items():
        row = rows.get(source, extras.get(source))
        if row is not None:
            assert shown[name]["label"] == row["label"]
            low, high = sorted(int(row["paper_sign"]) * row[k] for k in ("low", "high"))
            assert plain.size(row).endswith(f"{low:+.3f}, {high:+.3f}] nats") \
                or row["unit"] != "nats"


def test_a_store_argument_is_read_wherever_it_is_given(rehearsal, monkeypatch, tmp_path):
    """With the environment pointing at an empty folder, the functions given the
    rehearsal store still judge it: none falls back to the default store, not even the
    parts that would otherwise go missing quietly (the learning-rate check, the
    equal-time measurement)."""
    from albert_rerun.book import confirmatory
    from albert_rerun.book.preregistration import results_text, results_values
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path / "empty"))
    assert not A.complete()
    assert set(confirmatory.confirmatory_rows(rehearsal)) == {s.claim for s in D.PRIMARY}
    assert "budget_only" in confirmatory.notes(rehearsal)
    values = results_values(rehearsal)
    assert values["lr_check"] != "its runs are not stored" and values["cpu"]
    assert K.report(rehearsal).startswith("Primary family")
    assert results_text(tmp_path, rehearsal).startswith("All ")

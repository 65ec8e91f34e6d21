"""A dress rehearsal of the confirmatory report's day, on a store with every planned run.

The pilot's stored runs (cpu-long seeds 0-2, exploratory and already in the book) are
relabelled as the confirmatory configs, seed 1000 + k from pilot seed k mod 3, and written
to a temporary store; the committed confirmatory store is never read. Then every path that
shows the verdicts once the design is complete runs as it will on that day: the report,
the pre-registration page's progress and curves, the chapters' lines, the introduction's
and the ledger's list. The unit tests in test_confirm feed each of these synthetic
families; this one checks that they read a real store's records, pair the right seeds and
agree with each other."""
import json

import numpy as np
import pytest

from albert_rerun.claims import conditions as C
from albert_rerun.claims import confirm as K
from albert_rerun.engine.store import (atomic_write_json, config_hash, eval_path,
                                       pretrain_path, read_json)
from albert_rerun.paths import repo_root

ROOT = repo_root()
PILOT_STORE = ROOT / "data" / "results" / K.PILOT_PROFILE
EQUAL_TIME = ROOT / "data" / "results" / K.STORE / "choices" / f"{K.EQUAL_TIME}.json"


def pilot_seed(seed: int) -> int:
    return K.PILOT_SEEDS[(seed - K.CONFIRM_SEEDS[0]) % len(K.PILOT_SEEDS)]


def _copy_run(source, target, name: str, store) -> None:
    """Write ``source``'s stored pilot run (its training record and every evaluation
    ``K._needed`` asks of condition ``name``) as ``target``'s, in ``store``."""
    evaluations = K._evaluation_configs()
    run = read_json(pretrain_path(PILOT_STORE, source))
    assert run is not None, f"the pilot's run {config_hash(source.to_dict())} is not stored"
    atomic_write_json(pretrain_path(store, target),
                      {**run, "config": target.to_dict(),
                       "hash": config_hash(target.to_dict())})
    for (old, evaluation), (new, _) in zip(K._needed(name, source, evaluations),
                                           K._needed(name, target, evaluations)):
        record = read_json(eval_path(PILOT_STORE, config_hash(old.to_dict()), evaluation))
        assert record is not None
        new_hash = config_hash(new.to_dict())
        atomic_write_json(eval_path(store, new_hash, evaluation),
                          {**record, "pretrain_hash": new_hash})


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """The results folder of a complete design made from the pilot's runs, set as
    ALBERT_RERUN_RESULTS for the module."""
    results = tmp_path_factory.mktemp("rehearsal") / "results"
    store = results / K.STORE
    (store / "choices").mkdir(parents=True)
    record = json.loads(EQUAL_TIME.read_text())  # the registered timing: steps, no result
    atomic_write_json(store / "choices" / f"{K.EQUAL_TIME}.json", record)
    pilot, confirmatory = K.pilot_conditions(), K.conditions(record["steps"])
    for name in K.CONDITIONS:
        for seed in K.CONFIRM_SEEDS:
            _copy_run(C.seeded(pilot[name], pilot_seed(seed)),
                      C.seeded(confirmatory[name], seed), name, store)
    for config in K.lr_check(record["steps"]).values():
        _copy_run(C.seeded(pilot[K.WIDE], K.PILOT_SEEDS[0]), config, K.WIDE, store)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(results))
        yield store


def test_the_rehearsal_store_is_complete_and_apart_from_the_committed_one(rehearsal):
    assert K.complete() and K.complete(rehearsal)
    assert K.progress()["evaluated"].sum() == len(K.CONDITIONS) * len(K.CONFIRM_SEEDS)
    assert ROOT not in rehearsal.parents


def test_each_decision_pairs_the_seeds_it_was_given(rehearsal):
    """Every primary and secondary estimate is the mean of the pilot's per-seed
    differences in the order the rehearsal relabelled them, over all eleven seeds."""
    families = K.confirmatory_families(rehearsal)
    pilot = K.with_changes(K.pilot_frame())
    for specs, family in ((K.PRIMARY, families["primary"]),
                          (K.SECONDARY, families["secondary"])):
        for spec in specs:
            by_seed = K.per_seed(spec, pilot)
            expected = np.mean([by_seed[pilot_seed(s)] for s in K.CONFIRM_SEEDS])
            row = family.loc[spec.key]
            assert row["n_seeds"] == len(K.CONFIRM_SEEDS)
            assert row["estimate"] == pytest.approx(expected, rel=1e-9, abs=1e-12)
            assert row["low"] <= row["estimate"] <= row["high"]


def test_the_report_and_every_page_agree_on_each_verdict(rehearsal, tmp_path):
    from albert_rerun.book.preregistration import confirm_curves, progress_text
    from albert_rerun.claims import reader
    primary = K.confirmatory_families()["primary"]
    report = K.report()
    page = progress_text()
    assert page.startswith("**The verdicts**") and report in page
    assert f"confirmatory, {len(K.CONFIRM_SEEDS)} seeds" in report
    for spec in K.PRIMARY + K.SECONDARY:
        assert f"`{spec.key}`: {spec.label}" in report
    line = reader.confirm_line()
    rows = reader.confirmatory_rows()
    assert set(rows) == {spec.claim for spec in K.PRIMARY}
    for spec in K.PRIMARY:
        verdict = primary.loc[spec.key, "verdict_staged"]
        assert f"{spec.label}: **{verdict}**" in line
        status = K.status_text(spec.claim)
        assert f"**{verdict}** after Holm's adjustment" in status
        assert "runs trained" not in status  # the verdict, not the progress
    notes = K.beside_notes(K.confirmatory_frame())
    assert {note.split("`")[1] for note in notes} == set(K.NOTED)
    assert any("learning-rate check" in note for note in notes)  # its three runs are read
    assert "preregistration-confirm-curves.png" in confirm_curves(tmp_path)


def test_a_store_argument_is_read_wherever_it_is_given(rehearsal, monkeypatch, tmp_path):
    """With the environment pointing at an empty folder, the functions given the
    rehearsal store still judge it: none falls back to the default store."""
    from albert_rerun.claims import reader
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    assert not K.complete()
    assert set(reader.confirmatory_rows(rehearsal)) == {s.claim for s in K.PRIMARY}
    assert "judged after Holm's adjustment" in reader.confirm_line(rehearsal)
    assert "after Holm's adjustment" in K.status_text("dropout", rehearsal)
    assert K.report(rehearsal).startswith("Primary family")

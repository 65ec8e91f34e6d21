"""A dress rehearsal of the ladder's last day, on a store where every run is stored.

The 16x rung is still training, and its results stay unread until every run is stored
(book/ladder.md, section 4). So the paths that show the result once it is complete (the
registered analysis, the ladder page's result, the chapters' "As training grows" lines,
the introduction's column and the scale page) have so far run only on synthetic tables.
Here they run on a real store's records: the committed 1x rung as stored, and a 16x rung
made of copies of the 1x rung's first four seeds, relabelled as the 16x configs of seeds
3000 to 3003. The 4x rung is the committed confirmatory store, read in place.

A guard fails the module if any committed ladder training or evaluation record is read
once the rehearsal store is built: the committed 16x records stay unread (the copies
read only the 1x ones, before the guard is set).

What it does not rehearse: the intervals' meaning (the 16x seeds repeat four 1x seeds,
so every 16x mean equals a 1x subset's mean) and the runs' provenance (the copies keep
the 1x runs')."""
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from albert_rerun.engine import store as S
from albert_rerun.engine.store import atomic_write_json, config_hash, eval_path, pretrain_path
from albert_rerun.paths import repo_root
from albert_rerun.studies import conditions as C
from albert_rerun.studies import confirm_analysis as A
from albert_rerun.studies import ladder as L

RESULTS = repo_root() / "data" / "results"
COMMITTED = RESULTS / L.STORE
FORBIDDEN = (COMMITTED / "pretrain", COMMITTED / "eval")
SOURCE = dict(zip(L.SEEDS["16x"], L.SEEDS["1x"]))  # 16x seed: the 1x seed it copies


def _copy(source, target, arm: str, store: Path, relabel: bool) -> None:
    """Write the committed 1x run ``source`` (its training record and the evaluations
    ``confirm_analysis._needed`` asks of ``arm``) into ``store`` as ``target``'s."""
    evaluations = A._evaluation_configs()
    run = json.loads(pretrain_path(COMMITTED, source).read_text())
    if relabel:
        run = {**run, "config": target.to_dict(), "hash": config_hash(target.to_dict())}
    atomic_write_json(pretrain_path(store, target), run)
    for (old, evaluation), (new, _) in zip(A._needed(arm, source, evaluations),
                                           A._needed(arm, target, evaluations)):
        old_hash, new_hash = config_hash(old.to_dict()), config_hash(new.to_dict())
        record = json.loads(eval_path(COMMITTED, old_hash, evaluation).read_text())
        atomic_write_json(eval_path(store, new_hash, evaluation),
                          {**record, "pretrain_hash": new_hash})


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """A results folder whose ladder store is complete (the 1x rung as committed, the
    16x rung copied from it) and whose other stores link the committed ones; set as
    ALBERT_RERUN_RESULTS for the module, with committed ladder records out of bounds."""
    results = tmp_path_factory.mktemp("ladder-rehearsal") / "results"
    results.mkdir()
    for path in RESULTS.iterdir():
        if path.is_dir() and path.name != L.STORE:
            (results / path.name).symlink_to(path)
    store = results / L.STORE
    store.mkdir()
    for name in (L.DESIGN, L.FORECAST):
        shutil.copy(COMMITTED / name, store / name)
    one, sixteen = L.configs("1x"), L.configs("16x")
    for arm in L.ARMS:
        for seed in L.SEEDS["1x"]:
            config = C.seeded(one[arm], seed)
            _copy(config, config, arm, store, relabel=False)
        for seed, source in SOURCE.items():
            _copy(C.seeded(one[arm], source), C.seeded(sixteen[arm], seed), arm, store,
                  relabel=True)
    read, seen = S.read_json, []

    def guarded(path):
        path = Path(path).resolve()
        assert not any(part in path.parents for part in FORBIDDEN), \
            f"the rehearsal read a committed ladder record: {path}"
        seen.append(path)
        return read(path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(results))
        patch.setattr(S, "read_json", guarded)
        yield store
    assert any(store in path.parents for path in seen)  # the guard saw the reads


@pytest.fixture(scope="module")
def family(rehearsal):
    return L.trend_family()


def test_the_rehearsal_store_is_complete(rehearsal):
    progress = L.progress()
    assert (progress["evaluated"] == progress["of"]).all()
    assert L.rung_complete("1x") and L.rung_complete("16x")


def test_each_rung_pairs_the_seeds_it_was_given(rehearsal, family):
    """Every rung's mean is the mean of its own seeds' paired differences: 1x all six,
    16x the four 1x seeds it copies, 4x the eleven confirmatory seeds; the slope is
    ``trend.slope`` through them, and Holm's p never falls below the raw one."""
    from albert_rerun.stats.trend import slope
    one = A.with_changes(L.rung_frame("1x"))
    four = A.with_changes(L.rung_frame("4x"))
    for spec in L.DECISIONS:
        row = family.loc[spec.key]
        d1 = A.per_seed(spec, one)
        d16 = d1.loc[list(SOURCE.values())].to_numpy(float)
        d4 = A.per_seed(spec, four).to_numpy(float)
        assert row["1x mean"] == pytest.approx(d1.mean())
        assert row["16x mean"] == pytest.approx(d16.mean())
        assert row["4x mean"] == pytest.approx(d4.mean())
        assert (row["1x seeds"], row["4x seeds"], row["16x seeds"]) == (6, 11, 4)
        s = slope({L.X["1x"]: d1.to_numpy(float), L.X["4x"]: d4, L.X["16x"]: d16})
        assert row["slope"] == pytest.approx(s.estimate)
        assert row["p"] == pytest.approx(s.p) and row["p holm"] >= row["p"] - 1e-12
        assert row["reading"] == L.trend_reading(row["slope"], row["p holm"],
                                                 spec.paper_sign)
        stored = json.loads((rehearsal / L.FORECAST).read_text())["forecast"][spec.key]
        assert row["forecast covers"] == (stored["low"] <= row["16x mean"] <= stored["high"])


def test_a_ladder_store_argument_reads_its_4x_rung_from_the_confirmatory_store(
        rehearsal, family):
    """The ladder store holds no 4x run: given explicitly, the analysis still reads the
    4x rung from the confirmatory store, as with the default."""
    given = L.trend_family(rehearsal)
    pd.testing.assert_frame_equal(given, family)


def test_the_ladder_page_shows_the_registered_result(rehearsal, family, tmp_path):
    import matplotlib.pyplot as plt

    from albert_rerun.book import ladder_page as P
    from albert_rerun.pages import ladder_trend as T
    from albert_rerun.pages.figure_text import figure_problems, stored_font_px
    text = P.results_text(generated=tmp_path)
    assert text.startswith("**The result**") and P.readings_sentence(family) in text
    for _, row in family.iterrows():
        assert f"| {row['decision']} ({row['unit']}) |" in text
        assert f"**{row['reading']}**" in text
    # every table's rows: five decisions, eight arms, three rungs
    assert text.count("| no |") + text.count("| yes |") + text.count("| **no** |") >= 5 + 3
    covers = int(family["forecast covers"].sum())
    assert f"{covers} of 5 measured means lie inside their forecast's interval" in text
    assert "ladder-trends.png" in text and stored_font_px(tmp_path / "ladder-trends.png")
    # the page's figure: all five decisions, in the registered sign
    trends = T.gather(chapter_signs=False, table=family)
    assert all(t.sign == 1 for t in trends.values())
    fig = T.figure(list(trends.values()))
    assert figure_problems(fig) == [] and len(fig.axes) == len(L.DECISIONS)
    plt.close(fig)
    for rung in L.RUNGS:
        assert f"\n| {rung} | " in text  # the SOP and equal-time tables
    assert "No run diverged." in text
    assert P.progress_text().startswith("**Progress**: every run")
    assert "for the 32 runs of the 16x rung" in P.progress_text()


def test_the_chapters_introduction_and_scale_page_read_the_same_result(rehearsal, family):
    from albert_rerun.pages import ladder_trend as T
    from albert_rerun.pages.at_scale import sixteen_sentence
    from albert_rerun.pages.figure_text import figure_problems
    trends = T.gather()
    cells = T.growth_cells(trends)
    for key, t in trends.items():
        row = family.loc[key]
        assert t.table is not None and t.table["slope"] == pytest.approx(row["slope"])
        line = T.box_line(T.claim_trends(trends, t.claim))
        assert T.READING_WORDS[row["reading"]] in line and "not known yet" not in line
        excludes = row["slope low"] > 0 or row["slope high"] < 0
        assert T.sentence(t) in line
        assert ("only before Holm's adjustment" in T.sentence(t)) == \
            (excludes and row["reading"] == L.NO_TREND)
        inside = "inside" if row["forecast covers"] else "outside"
        assert f"The 16x mean is {inside} its forecast's interval." in line
        assert any(cell.startswith(row["reading"]) for cell in cells.values())
        fig = T.figure([t])
        assert figure_problems(fig) == []
        ticks = [tick.get_text() for tick in fig.axes[0].get_xticklabels()]
        assert ticks == list(L.RUNGS) and not fig.axes[0].texts[1:]  # no "shown when"
        import matplotlib.pyplot as plt
        plt.close(fig)
    assert sixteen_sentence(L.progress()).startswith("All 32 runs of the 16x rung")


def test_the_report_command_prints_every_registered_table(rehearsal, capsys):
    assert L.main(["report"]) == 0
    out = capsys.readouterr().out
    for title in ("The trend family", "Held-out minus training", "SOP on the cue-free",
                  "Equal time", "Training"):
        assert title in out
    assert all(spec.key in out for spec in L.DECISIONS)


@pytest.mark.parametrize("readings, expected", [
    ([L.NO_TREND] * 5, "After Holm's adjustment, all 5 slopes show no trend."),
    ([L.TOWARD] + [L.NO_TREND] * 4, "After Holm's adjustment over the 5 slopes, 1 moves "
     "toward the paper's sign and 4 show no trend."),
    ([L.AWAY, L.AWAY, L.TOWARD, L.NO_TREND, L.NO_TREND], "After Holm's adjustment over "
     "the 5 slopes, 1 moves toward the paper's sign, 2 move away from it and 2 show no "
     "trend."),
])
def test_the_result_opens_with_the_readings_counted_in_words(readings, expected):
    from albert_rerun.book.ladder_page import readings_sentence
    assert readings_sentence(pd.DataFrame({"reading": readings})) == expected

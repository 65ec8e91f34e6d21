"""The confirmatory runs as chapters 3-8 show them (book.confirmatory): the
differences a notebook computes in plain pandas are checked against the registered code,
nothing is shown before every run is stored, and the tables and notes follow the data."""
import matplotlib
import pandas as pd
import pytest

from albert_rerun.book import confirmatory as cb
from albert_rerun.book.headlines import paper_positive
from albert_rerun.paths import repo_root
from albert_rerun.studies import confirm_analysis

matplotlib.use("Agg")
ROOT = repo_root()


@pytest.fixture
def committed(monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(ROOT / "data" / "results"))


def _ce_differences(runs):
    ce = runs.pivot(index="seed", columns="condition", values="mlm_loss_at_mask")
    ce = ce.reindex(columns=cb.ARMS)
    return pd.DataFrame({"asym": ce[cb.FFN] - ce[cb.ATTENTION],
                         "cost": ce[cb.ALL64] - ce[cb.BERT]})


def test_every_chapter_claim_has_its_registered_decisions():
    keys = {claim: [s.key for s in cb.specs(claim)]
            for claim in ("asymmetry", "sop_nsp", "dropout", "wall_clock", "transitions",
                          "embedding_size")}
    assert keys["asymmetry"][:2] == ["confirm/asymmetry", "confirm/sharing-cost"]
    assert keys["dropout"] == ["confirm/dropout"]
    assert keys["transitions"] == ["explore/transitions-angle", "explore/transitions-l2"]
    assert keys["embedding_size"] == ["explore/embedding-size", "explore/sharing-cost-E32"]
    shown = {k for ks in keys.values() for k in ks}
    registered = {s.key for s in (*confirm_analysis.PRIMARY, *confirm_analysis.SECONDARY)}
    assert shown == registered  # every registered decision is shown in some chapter
    with pytest.raises(KeyError, match="no registered decision"):
        cb.specs("recipe")


def test_nothing_is_shown_before_every_run_is_stored(results):
    runs = cb.runs()
    assert runs.empty and {"condition", "seed", "sop_probe_correct",
                           "change_oscillation_angle"} <= set(runs.columns)
    by_seed = _ce_differences(runs)
    assert by_seed.empty
    cb.check_by_seed(by_seed, "asymmetry")  # nothing to compare, nothing shown
    table = cb.decisions("asymmetry")
    assert list(table.columns) == ["trained", "evaluated", "of"]  # progress only
    assert (table["trained"] == 0).all()
    fig = cb.figure(by_seed, "asymmetry")
    assert not any(line.get_xdata().size for ax in fig.axes for line in ax.lines)
    with pytest.raises(AssertionError, match="before the runs"):
        cb.check_by_seed(pd.DataFrame({"x": [0.1]}, index=[1000]), "dropout")


def test_the_notebooks_pandas_equals_the_registered_analysis(committed):
    runs = cb.runs()
    assert len(runs) == len(confirm_analysis.CONDITIONS) * len(confirm_analysis.CONFIRM_SEEDS)
    by_seed = cb.check_by_seed(_ce_differences(runs), "asymmetry")
    table = cb.decisions("asymmetry")
    primary = confirm_analysis.confirmatory_families()["primary"]
    for column, key in zip(by_seed.columns, ("confirm/asymmetry", "confirm/sharing-cost")):
        assert by_seed[column].mean() == pytest.approx(primary.loc[key, "estimate"])
        row = paper_positive(primary.loc[key])
        shown = table.loc[row["label"], "difference [95% interval]"]
        assert shown.startswith(f"{row['estimate']:+.3f} [")
    # a column taken the wrong way round fails the check
    with pytest.raises(AssertionError):
        cb.check_by_seed(-by_seed, "asymmetry")
    # the plain reading follows the rule: the sharing cost holds, the asymmetry is undecided
    assert table["plain reading"].tolist()[:2] == ["undecided", "holds here"]
    assert sum(label.endswith("(exploratory)") for label in table.index) == 3
    from albert_rerun.book.build import MAX_COLUMNS
    assert len(table.columns) <= MAX_COLUMNS  # shown open, not folded


def test_sop_rows_keep_the_registered_reading_with_the_order_check_beside_it(committed):
    table = cb.decisions("sop_nsp")
    readings = dict(zip(table.index, table["plain reading"]))
    sop = [r for label, r in readings.items() if label.startswith("SOP probe on cue-free")]
    nsp = [r for label, r in readings.items() if label.startswith("NSP probe on cue-free")]
    assert sop[0] == f"undecided: {cb.NO_ORDER}"  # registered: inconclusive after Holm
    assert "orders" not in nsp[0]


def test_the_figure_draws_each_seed_and_each_interval(committed):
    by_seed = _ce_differences(cb.runs())
    fig = cb.figure(by_seed, "asymmetry")
    ax = fig.axes[0]
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert [len(line.get_xdata()) for line in dots] == [11, 11]  # two columns given
    assert len(ax.get_yticklabels()) == len(cb.specs("asymmetry"))
    assert fig.get_figwidth() * fig.dpi >= 600


def test_the_partial_costs_read_the_pilot(committed, monkeypatch):
    costs = cb.partial_costs()
    frame = confirm_analysis.pilot_frame()
    spec = {s.key: s for s in confirm_analysis.SECONDARY}["explore/attention-free"]
    attention = confirm_analysis.per_seed(spec, frame).mean()
    assert costs["attention"] == f"{attention:+.3f}" and costs["fits"] is False
    # partial costs under the whole cost fit the chapter's assumption
    values = iter([0.001, 0.002, 0.010])
    monkeypatch.setattr(confirm_analysis, "per_seed",
                        lambda spec, frame: pd.Series([next(values)]))
    assert cb.partial_costs()["fits"] is True


def test_the_learning_rate_check_names_the_best_rate(committed, monkeypatch):
    assert cb.learning_rate_check()["registered_best"] is True
    monkeypatch.setattr(confirm_analysis, "lr_check_scores",
                        lambda store=None: {2.5e-3: 6.40, 5e-3: 6.41, 1e-2: 6.5})
    check = cb.learning_rate_check()
    assert check["best"] == "0.0025" and check["registered_best"] is False
    assert check["scores"].startswith("6.400 nats at 0.0025")
    monkeypatch.setattr(confirm_analysis, "lr_check_scores", lambda store=None: None)
    assert cb.learning_rate_check() is None


def test_a_chapters_verdict_table_fits_open_and_reads_one_rule(committed):
    from albert_rerun.book.build import MAX_COLUMNS
    from albert_rerun.book import dropout
    from albert_rerun.book import chapter_box, ledger, plain
    family = ledger.book_family("cpu", range(3), "cpu", train_missing=False)
    chapter = dropout.dropout("cpu", range(3), "cpu", train_missing=False)
    table = chapter_box.verdict_table(chapter, family)
    assert len(table.columns) <= MAX_COLUMNS  # shown open (book.build.fold_code)
    assert list(table.columns) == ["ours", "margin", "plain reading"]  # one label
    for d, (_, shown) in zip(chapter.decisions, table.iterrows()):
        assert shown["plain reading"].startswith(plain.row_reading(family.loc[d.key]))


def test_the_families_are_judged_once_per_store_state(committed, monkeypatch):
    calls = []
    real = confirm_analysis.both_families
    monkeypatch.setattr(confirm_analysis, "both_families",
                        lambda frame, r: calls.append(1) or real(frame, r))
    monkeypatch.setattr(confirm_analysis, "_JUDGED", {})
    first = confirm_analysis.confirmatory_families()
    first["primary"].loc["confirm/dropout", "estimate"] = 99.0  # a caller's own copy
    again = confirm_analysis.confirmatory_families()
    assert len(calls) == 1 and again["primary"].loc["confirm/dropout", "estimate"] != 99.0
    # a store that changes is judged again
    monkeypatch.setattr(confirm_analysis, "store_fingerprint", lambda store: ("changed",))
    confirm_analysis.confirmatory_families()
    assert len(calls) == 2


def test_what_the_test_could_detect_reads_the_seeds_spread(committed):
    from albert_rerun.stats.power import detectable_effect
    spec = cb.specs("asymmetry")[0]
    found = cb.detectable("asymmetry")
    diffs = confirm_analysis.per_seed(spec, cb.runs())
    smallest = detectable_effect(len(diffs), confirm_analysis.holm_alpha()) * diffs.std()
    assert found[spec.key]["smallest"] == f"{smallest:.3f} nats"
    assert found[spec.key]["seeds"] == str(len(diffs))
    assert cb.detectable("dropout") == {}  # only an undecided primary decision


def test_nothing_is_detected_before_every_run(results):
    assert cb.detectable("asymmetry") == {}


def test_turned_differences_put_the_paper_on_the_positive_side(committed):
    table = cb.decisions("wall_clock")
    assert list(table.index) == ["BERT-style minus wide all-shared (H 128), equal time"]
    assert table.iloc[0]["difference [95% interval]"].startswith("-0.358")
    assert "verdict at 5%" not in table and "after Holm" not in table  # one label
    runs = cb.runs()
    ce = runs.pivot(index="seed", columns="condition", values="mlm_loss_at_mask")
    cb.check_by_seed(pd.DataFrame({"t": ce[cb.BERT] - ce[cb.WIDE]}), "wall_clock")
    with pytest.raises(AssertionError):  # the registered sign fails the check
        cb.check_by_seed(pd.DataFrame({"t": ce[cb.WIDE] - ce[cb.BERT]}), "wall_clock")


def test_every_unit_a_chapter_table_shows_is_a_glossary_term(committed):
    """A chapter's verdict table names its unit in the glossary's word (the registered
    'share of range' of chapter 7 reads 'ranges' there), so a reader can look it up."""
    import re
    glossary = (ROOT / "book" / "how_to_read.md").read_text().split("```{glossary}")[1]
    terms = set(re.findall(r"^(\S[^\n]*)$", glossary, re.M))
    for claim in ("asymmetry", "sop_nsp", "dropout", "wall_clock", "transitions",
                  "embedding_size"):
        for cell in cb.decisions(claim)["difference [95% interval]"]:
            unit = cell.rsplit("] ", 1)[1]
            assert unit in terms or unit == "points", (claim, cell)

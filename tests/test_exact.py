"""The exact claims' analysis (chapters 1 and 2) in the library: counts from the closed
form checked against a module built on meta, and the verdicts they give."""
import pytest

from albert_rerun.book import exact


def test_the_embedding_share_chapter():
    chapter = exact.embedding_share()
    texts = chapter.texts
    assert round(texts["bert_embedding_share"], 1) == 21.8
    assert texts["table3_matched"] == texts["table3_rows"] == len(chapter.tables["table3"])
    assert texts["embedding_share_verdict"] == "reproduced"
    # 8 of 8 only with a convention chosen per row; without the pooler, 5 of 8
    assert texts["table3_one_convention"] == 5
    assert texts["share_reading"] == "holds under a per-row convention"
    assert list(chapter.tables["factorization"].index) == list(exact.TABLE3_EMBEDDINGS)
    assert chapter.tables["components"].loc["total", "share %"] == 100.0


def test_the_sharing_chapter_names_the_counts_it_does_not_match():
    chapter = exact.sharing_reductions()
    texts = chapter.texts
    assert texts["reduction_none"] == 0.0 and texts["reduction_all"] > 90
    assert texts["counts_matched"] < texts["counts_total"]
    assert texts["sharing_verdict"] == ("reproduced, except the paper's counts for "
                                        + texts["unmatched_models"])
    assert texts["grouped_all_g1"] < texts["grouped_all_g12"]


def test_the_sharing_chapter_reads_each_part_by_its_numbers():
    """The reductions hold (sharing both removes over half of the layer parameters);
    the printed counts hold for the 12 that match and not for the two that do not."""
    texts = exact.sharing_reductions().texts
    assert texts["reductions_reading"] == "holds here"
    assert texts["counts_reading"] == "holds here for 12 of 14, does not hold here for 2"
    assert (texts["xlarge_gap"], texts["xxlarge_gap"]) == (2.2, 5.6)
    # the paper's "about 18x", both counted with the pooler: 334.61M / 17.68M
    assert round(texts["large_ratio"], 1) == 18.9


def test_the_parameter_tables_keep_to_six_columns_with_their_index():
    """Issue #26 (slim tables): Table 4's two index levels made seven columns; its rows
    are now named as the paper names them, in one index column."""
    chapter = exact.sharing_reductions()
    for name in ("table4", "table1"):
        table = chapter.tables[name]
        assert table.index.nlevels + len(table.columns) <= 6, name
        assert not table.isna().any().any(), name
    table4 = chapter.tables["table4"]
    assert table4.index.name == "ALBERT-base" and table4.index.is_unique
    assert table4.loc["E = 128, all shared", "paper (M)"] == 12
    assert table4.loc["E = 768, not shared", "matches"] == "without pooler"
    assert set(exact.embedding_share().tables) == {"components", "factorization", "table3"}


def test_a_module_that_disagrees_with_the_closed_form_stops_the_chapter(monkeypatch):
    from albert_rerun.model import params
    monkeypatch.setattr(params, "module_counts", lambda model: {"embeddings": -1})
    with pytest.raises(AssertionError, match="closed form and module disagree"):
        exact.embedding_share()


def test_the_papers_counts_stand_beside_ours():
    """The first screens' table: the paper's counts (paper.py) beside ours, each of ours
    under the convention that matches it, else the nearer one."""
    one = exact.embedding_share().texts
    assert one["paper_none"] == "87, 89, 93, 108" and one["paper_all"] == "10, 12, 16, 31"
    assert one["ours_none"] == "87.06, 89.06, 93.06, 108.49"  # without the pooler
    assert one["ours_all"].startswith("9.68, 11.68")  # with it
    two = exact.sharing_reductions().texts
    assert two["paper_table1"] == "108, 334, 12, 18, 60, 235"
    assert two["ours_table1"].split(", ")[-2:] == ["58.72", "222.60"]  # the two unmatched
    assert two["paper_table4_128"] == "12, 64, 38, 89"
    assert two["schemes_table4_768"].startswith("all shared, attention shared")

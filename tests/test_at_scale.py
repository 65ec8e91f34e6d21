"""The scale page (``book.scale``, book/scale.md): where the models stand at each budget
against the count rungs, from the stored runs; its keys are filled."""
import re

import numpy as np
import pandas as pd
import pytest

from albert_rerun.book import scale as S
from albert_rerun.paths import repo_root

ROOT = repo_root()


@pytest.fixture(scope="module")
def committed():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(ROOT / "data" / "results"))
        yield S.standing(pilot=S.pilot_runs()), S.rung_levels()


def test_the_standing_is_each_arms_mean_at_each_budget(committed):
    from albert_rerun.studies import confirm_analysis as D
    from albert_rerun.studies import ladder as L
    table, levels = committed
    assert list(table.columns) == ["1x", "4x", "16x", "64x"]
    assert list(table.index) == list(L.ARMS)
    frame = L.rung_frame("16x")
    assert table.loc[D.DROPOUT, "16x"] == pytest.approx(
        frame[frame["condition"] == D.DROPOUT][D.CE].mean())
    # the long pilot trained the sharing cost's two arms only
    assert set(table["64x"].dropna().index) == {D.ALL64, D.BERT}
    assert levels["unigram"] > levels["left bigram"] > levels["two-sided"]


def test_the_models_pass_the_count_rungs_only_with_longer_training(committed):
    """What the page's first paragraph says, from the numbers: no model below the
    left-bigram rung at 1x, one at 4x, every one at 16x, all but dropout below the
    two-sided count rung at 16x (issue #55: 7 of 8), and the pilot's two below it."""
    table, levels = committed
    left, two = S.below(table, levels["left bigram"]), S.below(table, levels["two-sided"])
    assert left == {"1x": "0 of 8", "4x": "1 of 8", "16x": "8 of 8", "64x": "2 of 2"}
    assert two == {"1x": "0 of 8", "4x": "0 of 8", "16x": "7 of 8", "64x": "2 of 2"}
    assert (table.idxmin() == "BERT-style (not shared, E = H = 64)").all()


def test_below_counts_the_arms_a_budget_trained():
    table = pd.DataFrame({"1x": [6.5, 6.0], "64x": [np.nan, 5.0]}, index=["a", "b"])
    assert S.below(table, 6.2) == {"1x": "1 of 2", "64x": "1 of 1"}
    text = S.standing_table(table, {"unigram": 6.7, "left bigram": 6.2})
    assert "| a | 6.500 | – |" in text and "| *unigram rung* | *6.700* | *6.700* |" in text


def test_every_key_the_page_uses_is_filled():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(ROOT / "data" / "results"))
        from albert_rerun.book import budgets
        values = budgets.values()
    used = set(re.findall(r"\{\{\s*(\w+)\s*\}\}", (ROOT / "book" / "scale.md").read_text()))
    assert used and used <= set(values), sorted(used - set(values))
    assert values["scale_below_two_sided_16x"] == "7 of 8"
    assert values["scale_below_left_bigram_4x"] == "1 of 8"
    # one count of tokens on every page: steps x batch x length, as the introduction's
    from albert_rerun.book import first_screen
    assert values["pilot_tokens"] == values["pilot_tokens_counted"] == "354M"
    assert first_screen.scale_values()["intro_tokens_16x"] == "88.5 million"
    assert S.millions(S.tokens_at(86_400)) == "88.5M"
    assert S.millions(S.tokens_at(5_400)) == "5.53M"


def test_the_two_sided_sentence_gives_the_stored_rung():
    text = S.two_sided_sentence({"rung": {"two_sided_loss_at_mask": 5.4321,
                                          "two_sided_at_mask": 0.146}})
    assert "5.432 nats" in text and "14.6%" in text and "{{" not in text
    assert S.two_sided_sentence(None) == ""

"""The page on what the book can and cannot say about ALBERT at its scale
(``pages.at_scale``, book/scale.md): its numbers come from the facts it is given, its
words follow them (all models worse than the two-sided count rung or not, a difference
still moving or not, the 16x rung trained or not), and the introduction's first screen
links to it."""

import numpy as np
import pandas as pd
import pytest

from albert_rerun.pages import at_scale as S
from albert_rerun.paths import repo_root

ROOT = repo_root()


def yardsticks(two_sided=5.710, se=0.019):
    return {"rung": {"two_sided_loss_at_mask": two_sided, "two_sided_loss_se": se,
                     "two_sided_at_mask": 0.146, "targets": 30748},
            "one_sided": {"unigram_loss_at_mask": 6.685, "unigram_at_mask": 0.053,
                          "bigram_loss_at_mask": 6.147, "bigram_at_mask": 0.088,
                          "targets": 30748}}


def models(ces=(6.307, 6.044)):
    names = ["ALBERT-style (all shared, E 32)", "BERT-style (not shared, E = H = 64)"]
    return pd.DataFrame({"ce": list(ces), "accuracy": [0.067, 0.102],
                         "sentiment": [0.582, 0.589],
                         "control_sentiment": [0.563, np.nan]},
                        index=pd.Index(names[:len(ces)], name="condition"))


def curve(last_quarter_change, seeds=5, seed=0):
    """A seed x share frame whose last quarter moves by about ``last_quarter_change``."""
    rng = np.random.default_rng(seed)
    shares = [k / 8 for k in range(1, 9)]
    base = np.linspace(0.01, 0.1, 8)
    base[6:] = base[5] + last_quarter_change * np.array([0.5, 1.0])
    return pd.DataFrame(base + rng.normal(0, 0.002, (seeds, 8)), columns=shares,
                        index=range(1000, 1000 + seeds))


def ladder(trained16=0, evaluated16=0, diverged16=0):
    """A table like ``ladder.progress``'s: one arm, 6 seeds at 1x and 4 at 16x."""
    rows = [{"rung": "1x", "arm": "a", "trained": 6, "evaluated": 6, "diverged": 0,
             "of": 6},
            {"rung": "16x", "arm": "a", "trained": trained16, "evaluated": evaluated16,
             "diverged": diverged16, "of": 4}]
    return pd.DataFrame(rows)


def facts(**changes):
    base = dict(yardsticks=yardsticks(), models=models(), seeds=11,
                sentiment={"bag_of_words_accuracy": 0.777, "majority_accuracy": 0.504,
                           "test_examples": 1057},
                curves=[("wide minus BERT-style", 0.027, curve(0.14)),
                        ("FFN minus attention", 0.011, curve(0.0, seed=1))],
                forecast={"confirm/x": {"estimate": 0.548, "low": 0.422, "high": 0.674,
                                        "unit": "nats"}},
                labels={"confirm/x": "wide minus BERT-style"},
                ladder=ladder(), rungs={"1x": 5400, "4x": 21600, "16x": 86400},
                scale={"params": 0.33e6, "paper_params": 11.7e6, "flops": 1.0e15,
                       "paper_flops": 4.1e21})
    base.update(changes)
    return S.ScaleFacts(**base)


def test_the_yardsticks_and_the_models_are_the_facts_numbers():
    text = S.yardsticks_text(facts())
    for number in ("6.685", "6.147", "5.710", "14.6%", "6.307", "6.044", "10.2%", "77.7%",
                   "50.4%", "58.2% to 58.9%", "30,748"):
        assert number in text, number
    assert "All 2 are worse than the two-sided count rung" in text
    assert "1 of the 2 ends below the left-bigram rung" in text
    assert "0.334 nats above it" in text
    # the best model first, after the three rungs
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows[4].startswith("| BERT-style") and rows[5].startswith("| ALBERT-style")


def test_a_model_past_the_two_sided_rung_changes_the_words():
    text = S.yardsticks_text(facts(models=models((6.307, 5.60))))
    assert "1 of the 2 is worse" in text and "All 2 are worse" not in text
    assert "0.110 nats below it" in text
    assert "no model has yet learned" not in text
    assert "early in training" in S.early_text(facts(models=models((6.307, 5.60))))
    # a model level with the rung (within two of its standard errors) is not worse
    assert "1 of the 2 is worse" in S.yardsticks_text(facts(models=models((6.307, 5.72))))


def test_each_difference_is_still_moving_only_where_its_last_quarter_says_so():
    text = S.early_text(facts())
    assert "1 of the 2 was still moving when training ended" in text
    assert "For FFN minus attention, it cannot be told from zero." in text
    row = next(line for line in text.splitlines() if line.startswith("| wide minus"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    frame = curve(0.14)
    assert cells[2] == f"{frame[0.125].mean():+.3f}" and cells[3] == f"{frame[1.0].mean():+.3f}"
    assert cells[4] == f"{frame[1.0].mean() - frame[0.125].mean():+.3f}"
    both = S.early_text(facts(curves=[("a", 0.027, curve(0.14)), ("b", 0.027, curve(0.1))]))
    assert "All 2 were still moving" in both and "cannot be told" not in both
    assert "not all stored yet" in S.early_text(facts(curves=[]))


def test_no_negative_zero_is_shown():
    assert S._signed(-0.0001, 3) == "0.000" and S._signed(-0.0123, 3) == "-0.012"
    assert S._signed(0.5, 1) == "+0.5"


def test_the_16x_rung_is_read_from_the_store_counts():
    assert "has not trained yet: none of its 4 runs is stored" in S.transfer_text(facts())
    partial = S.transfer_text(facts(ladder=ladder(2, 1)))
    assert "is training: 2 of its 4 runs are stored and 1 evaluated" in partial
    assert "not trained yet" not in partial
    done = S.transfer_text(facts(ladder=ladder(4, 4)))
    assert "All 4 runs of the 16x rung are stored" in done
    failed = S.transfer_text(facts(ladder=ladder(4, 3, 1)))  # a diverged run is settled
    assert "All 4 runs of the 16x rung are settled: 3 stored and 1 listed as diverged" \
        in failed
    text = S.transfer_text(facts())
    assert "| wide minus BERT-style | +0.548 [+0.422, +0.674] nats |" in text
    assert "{doc}`ladder`" in text and "5,400, 21,600, 86,400 steps" in text
    # 16x is four times the 4x compute: 4.1e21 / 4e15
    assert "1,000,000x less compute" in text
    assert "not stored yet" in S.transfer_text(facts(forecast=None))


def test_the_page_holds_each_part_and_states_what_is_missing():
    page = S.scale_page(facts())
    assert page.count("\n## ") == 2 and page.startswith("## What the models can do")
    empty = S.scale_page(S.ScaleFacts())
    assert "not stored" in empty and "{doc}`ladder`" in empty


def test_the_two_sided_sentence_gives_the_stored_rung():
    text = S.two_sided_sentence(yardsticks(two_sided=5.4321))
    assert "5.432 nats" in text and "14.6%" in text and "{doc}`scale`" in text
    assert S.two_sided_sentence(None) == ""


def test_the_stored_page_shows_the_stored_two_sided_rung():
    """From the committed store: the rung's numbers on the page are the stored ones."""
    from albert_rerun.profiles import resolve
    from albert_rerun.studies import confirm_design as D
    from albert_rerun.studies.count_rungs import STORE, stored
    rung = stored(resolve(D.PILOT_PROFILE).evaluation, ROOT / "data" / "results" / STORE)
    if rung is None:
        pytest.skip("no two-sided rung stored")
    text = S.yardsticks_text(S.ScaleFacts(yardsticks=rung))
    assert f"| two-sided count rung: both neighbours of the gap | " \
           f"{rung['rung']['two_sided_loss_at_mask']:.3f} |" in text


@pytest.mark.parametrize("levels, stages, words", [
    ([0.19, 0.35], ["early", "early"], "from 19% to 35% of the way from the unigram to the "
     "bigram rung (none past the bigram rung)"),
    ([-0.2, 0.35], ["early", "early"], "from below the unigram rung to 35% of the way"),
    ([-19.91, -0.5], ["early", "early"], "still below the unigram rung (none past"),
    ([0.5, 1.2], ["early", "past"], "from 50% to 120% of the way from the unigram to the "
     "bigram rung (1 past the bigram rung)")])
def test_how_far_the_models_got_reads_in_order_below_the_unigram_rung_too(levels, stages,
                                                                         words):
    """The ledger's stage line: a level below 0 (worse than the unigram rung) is said
    in words, never as a range from 0% down to a negative percentage."""
    from albert_rerun.pages.scale import stage_summary
    from albert_rerun.stats.inference import EARLY, PAST
    family = pd.DataFrame({"weakest_level": levels,
                           "stage": [PAST if s == "past" else EARLY for s in stages]})
    text = stage_summary(family)
    assert text.startswith("the weakest arm of each comparison ") and words in text
    assert "-" not in text

"""One sign and one label on a findings page (issue #55): positive is the paper's
direction; each result carries its plain reading, never beside an interval it
contradicts; the ladder's panels put the paper's side above zero; the dropout arm's
crossing of the count rung is said from the values, whatever they are."""
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from albert_rerun.book import plain
from albert_rerun.book import dropout
from albert_rerun.book import chapter_box, headlines
from albert_rerun.stats.inference import Decision


def row(estimate, low, high, paper_sign=-1, p=0.01, p_eq=0.5, margin=0.01, unit="nats",
        label="attention-shared minus FFN-shared, E 32", stage="early training"):
    return pd.Series({"estimate": estimate, "low": low, "high": high, "margin": margin,
                      "paper_sign": paper_sign, "p_difference_holm": p,
                      "p_equivalence_holm": p_eq, "unit": unit, "label": label,
                      "n_seeds": 11, "stage": stage, "gate_reason": ""})


def test_a_difference_against_a_negative_paper_sign_is_turned():
    turned = headlines.paper_positive(row(-0.03, -0.05, -0.01))
    assert (turned["estimate"], turned["low"], turned["high"]) == (0.03, 0.01, 0.05)
    assert turned["paper_sign"] == 1
    assert turned["label"] == "FFN-shared minus attention-shared, E 32"
    kept = headlines.paper_positive(row(0.02, 0.01, 0.03, paper_sign=0))
    assert kept["estimate"] == 0.02 and kept["paper_sign"] == 0


def test_the_reading_does_not_depend_on_the_sign():
    for r in (row(-0.03, -0.05, -0.01), row(0.03, 0.01, 0.05), row(0.002, -0.01, 0.02)):
        a = headlines.answer(r)
        flipped = r.copy()
        flipped[["estimate", "low", "high"]] = [-r["estimate"], -r["high"], -r["low"]]
        flipped["paper_sign"] = -r["paper_sign"]
        assert headlines.answer(flipped) == a


def test_the_answer_is_in_the_papers_direction():
    a = headlines.answer(row(-0.03, -0.05, -0.01))  # the paper's side: holds
    assert a["reading"] == "holds here" and a["difference"] == "+0.030 nats [+0.010, +0.050]"
    assert a["margin"] == "±0.010 nats" and a["seeds"] == "11" and a["holm_only"] == ""
    against = headlines.answer(row(0.03, 0.01, 0.05))
    assert against["reading"] == "reversed here" and against["difference"].startswith("-0.030")


def test_an_undecided_label_beside_an_interval_excluding_zero_says_why():
    """The 3-seed SOP row read '+7.0 points [+4.2, +10.0] undecided': the interval
    excludes 0 before Holm's adjustment only, and the line says so."""
    sop = row(7.03, 4.2, 10.0, paper_sign=1, p=0.09, margin=2.0, unit="points")
    a = headlines.answer(sop)
    assert a["reading"] == "undecided" and a["holm_only"] == plain.HOLM_NOTE
    assert headlines.one_label(a) == f"undecided ({plain.HOLM_NOTE})"
    assert headlines.answer(row(0.0, -0.02, 0.02, p=0.9))["holm_only"] == ""


def test_a_failed_premise_is_one_label_with_its_reason():
    a = headlines.answer(row(0.3, -1.5, 2.1, paper_sign=1, p=1.0, margin=2.0, unit="points"),
                         "neither model orders cue-free pairs")
    assert a["reading"] == "not testable here"
    assert a["why"] == "neither model orders cue-free pairs"


def test_one_seed_shows_no_interval():
    assert headlines.difference(0.002, -np.inf, np.inf, "nats") == \
        "+0.002 nats (one seed: no interval)"


def test_a_decision_line_is_turned_and_marks_readings_outside_holm():
    d = Decision("asymmetry/attention-ffn/small-E", "asymmetry",
                 "attention-shared minus FFN-shared, E = 32", -0.03, -0.05, -0.01, 3,
                 0.01, 0.5, 0.01, -1, "nats", "paired t over seeds", stage="early training",
                 weakest_level=0.34)
    assert chapter_box.verdict_table(SimpleNamespace(decisions=[d]), None).index[0] == \
        "FFN-shared minus attention-shared, E = 32"
    line = chapter_box.decision_line(d)
    assert line.startswith("holds here (at 5%, outside Holm's family), +0.030 nats")
    assert "weakest arm at 34%" in line
    gated = replace(d, stage="not testable", gate_reason="a model is not read")
    assert chapter_box.decision_line(gated).startswith("not testable here (a model is not read)")


def test_the_first_screen_says_so_before_the_test_is_judged():
    assert chapter_box.confirmed_values(None)["reading"] == chapter_box.NOT_JUDGED


def test_every_trend_panel_puts_the_papers_side_above_zero():
    from albert_rerun.book.ladder_trend import Trend
    base = dict(claim="wall_clock", unit="nats", four=(0.36, 0.31, 0.41, 11), forecast=None,
                table=None)
    # the registration's difference (wide minus BERT-style) has the paper's sign -1
    wide = Trend("confirm/equal-time", label="wide all-shared (H 128) minus BERT-style, "
                 "equal time", paper_sign=-1, sign=1, **base)
    # a chapter that had turned its headline (sign -1) whose paper sign is then +1... the
    # registration's: -1 x +1 = -1 is turned back to the paper's
    turned = Trend("confirm/dropout", label="no dropout minus dropout 0.1", paper_sign=-1,
                   sign=-1, registered_label="dropout 0.1 minus no dropout", **base)
    out = chapter_box.paper_side([wide, turned])
    assert [t.paper_sign for t in out] == [1, 1]
    assert out[0].label == "BERT-style minus wide all-shared (H 128)"
    assert out[0].interval(*out[0].four[:3])[0] == pytest.approx(-0.36)
    assert out[1].label == "dropout 0.1 minus no dropout" and out[1].sign == 1
    assert chapter_box.trend_values(out[0])["reading"] == "not known yet"


@pytest.mark.parametrize("r, words", [
    ({"low": np.nan, "high": np.nan, "never": 4, "seeds": 4}, "in none of its 4 seeds"),
    ({"low": 0.5, "high": 0.625, "never": 0, "seeds": 4},
     "in all 4 seeds, first at 50% to 62% of training"),
    ({"low": 0.75, "high": 0.75, "never": 2, "seeds": 4},
     "in 2 of its 4 seeds, first at 75% of training")])
def test_the_dropout_crossing_is_said_from_its_values(r, words):
    assert dropout.crossing(r) == words


def test_the_delay_phrase_follows_which_arm_is_later():
    apart = {"apart": True, "later": "dropout 0.1"}
    assert dropout.delay_phrase(apart, "dropout 0.1").startswith("later")
    assert dropout.delay_phrase(apart, "no dropout").startswith("earlier")
    assert dropout.delay_phrase({"apart": False, "later": None}, "dropout 0.1").startswith(
        "at times that overlap")


def test_the_crossing_gives_both_arms_shares_of_training():
    delay = {"apart": True, "later": "dropout 0.1",
             "a": {"low": 0.75, "high": 0.875, "never": 0, "seeds": 4},
             "b": {"low": 0.5, "high": 0.625, "never": 0, "seeds": 4}}
    assert dropout.delay_phrase(delay, "dropout 0.1") == \
        "later in every seed (75% to 88% of training against 50% to 62%)"


def test_the_16x_pairs_timed_on_one_cpu_and_run_on_another_are_named():
    """Both step counts were fixed from a timing on one CPU; a pair run on another is not
    at equal time, and the pairs on the timing CPU give the equal-time difference."""
    import pandas as pd
    from albert_rerun.book import wall_clock
    from albert_rerun.studies.confirm_analysis import BERT, WIDE
    xeon, epyc = "Intel(R) Xeon(R) Processor", "AMD EPYC"
    ratios = pd.DataFrame({"rung": ["4x", "16x", "16x"], "seed": [1, 3000, 3003],
                           "wide / BERT-style seconds": [0.7, 0.78, 0.98],
                           "machines": [epyc, xeon, epyc]})
    frame = pd.DataFrame({"seed": [3000, 3000, 3003, 3003],
                          "condition": [BERT, WIDE] * 2,
                          "mlm_loss_at_mask": [5.0, 5.5, 5.1, 5.6]})
    record = {"provenance": {"machine": {"cpu": epyc}}}
    assert wall_clock.timing_cpus("16x", {"time ratios": ratios}, frame, record) == {
        "timed": "AMD EPYC", "other": "1 of 2", "other_cpu": "Intel Xeon",
        "other_ratios": "0.78", "same": "-0.500 nats"}


def test_the_introduction_forest_draws_the_profiles_beside_the_sharing_cost_star():
    import matplotlib
    matplotlib.use("Agg")
    import pandas as pd
    from albert_rerun.book import figures as HF
    row = dict(estimate=0.02, low=0.01, high=0.03, margin=0.027, paper_sign=1, unit="nats",
               stage="early training", p_difference=0.01, p_difference_holm=0.01,
               p_equivalence=float("nan"), p_equivalence_holm=float("nan"), n_seeds=3)
    confirmatory = pd.DataFrame([row], index=["confirm/sharing-cost"])
    cpu = pd.DataFrame([row], index=["asymmetry/all-none/E=H"])
    fig = HF.headline_forest({"confirmatory": confirmatory, "cpu": cpu})
    lines = [l for l in fig.axes[0].lines if l.get_marker() in ("*", "o")]
    assert {l.get_marker() for l in lines} == {"*", "o"}

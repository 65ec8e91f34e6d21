"""What a reader meets first: the introduction's values and the scale
say what the numbers say, in one sign, and fit a page."""
import numpy as np
import pandas as pd
import pytest

from albert_rerun.book.text import times
from albert_rerun.book import (chapter_box, confirmatory, figures, first_screen,
                                headlines, plain, scale)
from albert_rerun.stats.inference import EARLY, GATED
from albert_rerun.profiles import resolve

KEY = headlines.HEADLINES["asymmetry"].key


def row(estimate, low, high, verdict="inconclusive", holm=None, stage=EARLY, level=0.34,
        margin=0.027, unit="nats", sign=-1):
    return pd.Series({"claim": "asymmetry", "label": "attention-shared minus FFN-shared",
                      "estimate": estimate, "low": low, "high": high, "margin": margin,
                      "unit": unit, "paper_sign": sign, "verdict": verdict,
                      "verdict_holm": holm or verdict, "stage": stage,
                      "weakest_level": level, "gate_reason": "", "in_family": stage != GATED,
                      "n_seeds": 3}, name=KEY)


def family(*rows):
    return pd.DataFrame(list(rows))


def test_the_scale_is_computed_once_from_the_configs():
    n = scale.scale_numbers(resolve("cpu"))
    assert n["paper_params"] > 10 * n["params"]  # ALBERT-base is about 12M, ours < 1M
    assert n["paper_tokens"] == 125_000 * 4096 * 512
    assert n["paper_flops"] > 1e5 * n["flops"]


@pytest.mark.parametrize("ratio, expected", [(47407.4, "47,000x"), (36.3, "36x"),
                                             (16504048, "17,000,000x")])
def test_ratios_are_rounded_to_two_digits(ratio, expected):
    assert times(ratio) == expected


def test_a_chapter_glues_its_verdicts_texts_and_margins():
    from albert_rerun.studies.decisions import Chapter
    chapter = Chapter("asymmetry", pd.DataFrame(), [], texts={"context": "words"})
    values = chapter_box.chapter_glue("asymmetry", chapter, pd.DataFrame(), "asym_", "smoke")
    assert values["asym_context"] == "words"
    assert {"asym_ce_margin", "asym_unigram", "asym_bigram"} <= set(values)


@pytest.mark.parametrize("numbers, expected", [
    # (estimate, low, high, paper sign): a claim the paper signs negative is turned
    ((-0.05, -0.06, -0.04, -1), "+0.050 [+0.040, +0.060] nats"),
    ((0.358, 0.309, 0.406, -1), "-0.358 [-0.406, -0.309] nats"),
    ((0.147, 0.097, 0.197, 1), "+0.147 [+0.097, +0.197] nats"),
    ((0.01, -0.02, 0.03, 0), "+0.010 [-0.020, +0.030] nats")])
def test_every_size_on_a_findings_page_is_paper_positive(numbers, expected):
    estimate, low, high, sign = numbers
    assert plain.size(row(estimate, low, high, sign=sign)) == expected


@pytest.mark.parametrize("numbers, holm, expected", [
    # an undecided interval that excludes 0 says why beside it
    ((0.111, 0.087, 0.135, -1), "inconclusive", "undecided (0 excluded only before Holm's adjustment)"),
    ((0.01, -0.001, 0.03, -1), "inconclusive", "undecided, leaning to the other side"),
    ((-0.01, -0.03, 0.001, -1), "inconclusive", "undecided, leaning to the paper's side"),
    ((-0.05, -0.06, -0.04, -1), "reproduced", "holds here")])
def test_the_first_screens_label_never_disagrees_with_its_interval(numbers, holm,
                                                                   expected):
    estimate, low, high, sign = numbers
    r = row(estimate, low, high, holm, sign=sign, margin=0.011)
    assert first_screen.reading(r) == expected


def test_a_failed_premise_reads_not_testable_with_its_reason_in_a_few_words():
    r = row(0.3, -1.5, 2.1, sign=1, unit="points", margin=2)
    r["premise"] = "a model compared does not read context, so nothing follows"
    assert first_screen.reading(r) == "not testable here (a model compared does not read context)"


def test_a_note_stands_beside_the_registered_reading_not_in_its_place():
    """SOP's order check came after the results: its undecided verdict keeps its word."""
    r = row(0.3, -1.5, 2.1, sign=1, unit="points", margin=2)
    r["note"] = "neither model orders cue-free pairs, checked after the results"
    assert first_screen.reading(r) == ("undecided (neither model orders cue-free pairs, "
                                       "checked after the results)")


def test_the_introductions_values_at_a_profile_with_nothing_stored(monkeypatch, tmp_path):
    """Every key is filled before any run is stored: the measured lines read 'not run
    yet', the exact claims and the scale come from the code."""
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    values = first_screen.values("smoke")
    assert values["intro_dropout_reading"] == "not run yet"
    assert values["intro_against"] == values["intro_undecided"] == \
        values["intro_untestable"] == "none"
    assert values["intro_hold"] == "the parameter savings (counted)"  # counted, not run
    assert values["intro_share_reading"] == ("holds under a per-row convention; 5 of 8 "
                                             "counts under one convention")
    assert values["intro_embedding_share"] == "21.8%"
    n = scale.scale_numbers(resolve("cpu"))
    assert values["intro_params_times"] == times(n["paper_params"] / n["params"])
    assert values["intro_steps_16x"] == "86,400"
    assert all(isinstance(v, str) and (v or k.endswith("_note")) for k, v in values.items())


def test_a_claim_that_holds_inside_its_margin_is_marked_below_it():
    """The introduction's list of claims that hold marks one whose whole 95% interval
    lies inside its margin (dropout at 4x: [+0.017, +0.027] inside ±0.027)."""
    from albert_rerun.book.first_screen import below_margin
    row = {"estimate": 0.022, "low": 0.0174, "high": 0.0267, "margin": 0.0269,
           "paper_sign": 1, "holm_tests": 10}
    inside = below_margin(row)
    assert inside
    assert below_margin({**row, "high": 0.03}) == ""
    assert below_margin({**row, "estimate": -0.022, "low": -0.0267, "high": -0.0174,
                         "paper_sign": -1}) == inside


def test_a_difference_inside_its_margin_says_so_beside_its_reading():
    """Dropout at 4x: 'holds here' (TOST short after Holm) beside an interval inside the
    margin gets a note on every findings page that reads ``headlines.answer``."""
    from albert_rerun.book.headlines import answer, one_label
    from albert_rerun.book.plain import INSIDE_NOTE
    r = row(0.022, 0.0174, 0.0267, sign=1, unit="nats", margin=0.0269)
    r["p_difference_holm"], r["p_equivalence_holm"] = 1e-5, 0.15
    assert one_label(answer(r)) == f"holds here ({INSIDE_NOTE})"
    r["high"] = 0.03
    assert one_label(answer(r)) == "holds here"


def test_an_undecided_reading_inside_its_margin_says_why():
    """Chapter 3 at cpu: attention-shared minus not shared, E 32, -0.002 to +0.010 inside
    ±0.011, undecided: equivalent only before Holm's adjustment, and the line says so."""
    from albert_rerun.book.headlines import answer, one_label
    from albert_rerun.book.plain import INSIDE_HOLM_NOTE
    r = row(0.004, -0.002, 0.0096, sign=0, margin=0.0108)
    r["p_difference_holm"], r["p_equivalence_holm"] = 0.9, 0.2
    assert one_label(answer(r)) == f"undecided ({INSIDE_HOLM_NOTE})"
    r["p_equivalence_holm"] = 0.01
    assert one_label(answer(r)) == "holds here"  # no difference claimed: it holds inside


def test_the_stage_of_each_compared_arm_recomputes_from_the_confirmatory_runs(monkeypatch):
    """Where the 4x arms stand against the left-bigram rung (both scored on the whole
    held-out set), and the E 32 to E 64 gain the equal-time partner carries."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(root / "data" / "results"))
    from albert_rerun.book.first_screen import stage_values
    from albert_rerun.book.scale import rung_levels
    from albert_rerun.studies import confirm_analysis as C
    values = stage_values()
    ce = C.confirmatory_frame().pivot(index="seed", columns="condition", values=C.CE)
    rung = rung_levels()["left bigram"]
    assert values["stage_bert_4x"] == f"{(ce[C.BERT] < rung).sum()} of 11" == "10 of 11"
    assert values["stage_all64_4x"] == "1 of 11"
    assert values["stage_wide_4x"] == values["stage_none32_4x"] == "0 of 11"
    assert values["stage_e32_4x"] == "0 of 44"
    gain = (ce[C.NONE32] - ce[C.BERT]).mean()
    assert values["stage_e_gain_4x"].startswith(f"{gain:+.3f} [") and abs(gain - 0.238) < 5e-4


def test_chapter_8s_check_after_the_results_recomputes_from_the_confirmatory_runs(monkeypatch):
    """All shared, the larger E's advantage per confirmatory seed (E 32 minus E 64: no paper
    sign between H/2 and H), and how much sharing shrinks the not-shared gain (positive: the
    paper's direction, sharing favouring the smaller E)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(root / "data" / "results"))
    from albert_rerun.book.embedding_size import post_hoc, post_hoc_intervals
    from albert_rerun.book.first_screen import embedding_check
    from albert_rerun.studies import confirm_analysis as C
    ce = C.confirmatory_frame().pivot(index="seed", columns="condition", values=C.CE)
    larger, shrink = (post_hoc(ce)[c] for c in post_hoc(ce).columns)
    assert larger.equals((ce[C.ALBERT] - ce[C.ALL64]).dropna()) and len(larger) == 11
    assert shrink.equals(((ce[C.NONE32] - ce[C.BERT]) - larger).dropna())
    found = post_hoc_intervals(ce)
    assert abs(found["esweep_shared_confirm"].mean - 0.116) < 5e-4
    assert abs(found["esweep_interaction"].mean - 0.122) < 5e-4
    check = embedding_check()
    assert check["intro_embedding_winner"] == "the larger E still wins"
    assert check["intro_embedding_posthoc"].startswith("+0.122 nats [")
    assert check["intro_embedding_seeds"] == "11"


def test_the_papers_table4_gaps_are_its_own_numbers():
    from albert_rerun.book.first_screen import paper_values
    v = paper_values()
    assert (v["paper_t4_attention"], v["paper_t4_ffn"], v["paper_t4_all"]) == (
        "+0.1", "-1.4", "-1.5")
    assert (v["paper_t4_asymmetry_128"], v["paper_t4_asymmetry_768"]) == ("+1.5", "+2.1")


def test_a_folded_cells_table_names_its_rows_in_words_and_drops_empty_ones():
    from albert_rerun.book import chapter_box
    answer = {"reading": "holds here", "why": "", "difference": "+0.1 nats [+0.0, +0.2]",
              "holm_only": ""}
    one = chapter_box.shown(answer)
    assert list(one.index) == ["plain reading", "difference [95% interval]"]
    two = chapter_box.shown({"a_": answer, "b_": {**answer, "why": "early training"}},
                            {"a_": "first", "b_": "second"})
    assert list(two.columns) == ["first", "second"]
    assert two.loc["why"].tolist() == ["", "early training"]


def test_the_introduction_lists_undecided_apart_from_not_testable(monkeypatch):
    """'Undecided' (the test ran, neither side shown) and 'not testable here' (a premise
    fails) are two lists, each claim in the one its reading gives."""
    open_row = row(-0.012, -0.025, 0.001, sign=1, margin=0.0108)
    gated = row(0.01, -0.01, 0.03, stage=GATED)
    monkeypatch.setattr(first_screen, "rows", lambda profile: {"asymmetry": open_row,
                                                               "transitions": gated})
    values = first_screen.values("smoke")
    assert values["intro_undecided"] == first_screen.LINES["asymmetry"][1]
    assert values["intro_untestable"] == "transitions"
    assert values["intro_against"] == "none"

"""What a reader meets first: the bottom lines, the introduction's values and the scale
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


H = headlines.HEADLINES["asymmetry"]


@pytest.mark.parametrize("low, high, expected", [
    (-0.05, -0.01, H.lower), (0.01, 0.05, H.higher),
    # reproduced after Holm: the TOST failed at Holm's level, so the words give the
    # interval's place, not "by less than the margin"
    (-0.02, -0.01, H.lower + ", its 95% interval inside the margin"),
    (-0.01, 0.02, "no difference larger than the margin"),
    (-0.05, 0.02, "no clear difference (the interval holds 0)"),
    (-np.inf, np.inf, "one seed only, so no direction can be shown")])
def test_the_words_follow_the_interval(low, high, expected):
    assert headlines.direction(row(0.0, low, high, "reproduced"), H) == expected


def test_an_interval_holding_0_says_which_way_its_estimate_leans():
    """A reviewer: "the interval is wide" was said of [-1.5, +2.1] against a margin of 2
    and hid that the asymmetry's estimate leans against the paper."""
    assert headlines.direction(row(-0.01, -0.05, 0.02), H).endswith(
        "(the interval holds 0; the estimate leans to the paper's side)")
    assert headlines.direction(row(0.01, -0.02, 0.05), H).endswith(
        "(the interval holds 0; the estimate leans against the paper's direction)")


def test_an_interval_holm_does_not_follow_is_read_as_unadjusted():
    """Review: "dropout hurts" stood beside an inconclusive verdict after Holm."""
    assert headlines.direction(row(0.0, -0.05, -0.01, "reproduced", "inconclusive"), H) == \
        "at 5% before Holm's adjustment only, " + H.lower
    # within the margin the words already say less than a finding
    assert headlines.direction(row(0.0, -0.02, -0.01, "equivalent", "inconclusive"), H) == \
        H.lower + ", by less than the margin"
    assert headlines.direction(row(0.0, -0.02, -0.01, "equivalent"), H) == \
        H.lower + ", by less than the margin"


def test_the_bottom_line_has_question_paper_ours_verdict_and_stage_per_profile():
    families = {"cpu": family(row(-0.002, -0.025, 0.021, "equivalent", "inconclusive")),
                "cpu-long": family(row(0.021, -0.016, 0.057, level=0.70))}
    text = chapter_box.bottom_line("asymmetry", families)
    assert text.startswith(f"**The question.** {H.question}")
    assert "**The paper.** At E = 128" in text and "-1.4" in text
    assert "**Ours, `cpu`.**" in text and "-0.002 nats [-0.025, +0.021]" in text
    assert "**Ours, `cpu-long` ({term}`pilot`, exploratory).**" in text
    assert "34% of the way" in text and "70% of the way" in text
    assert "{term}`nats`" in text and "NaN" not in text


def test_a_profile_without_the_decision_says_so():
    text = chapter_box.bottom_line("asymmetry", {"cpu": family(row(0, -1, 1)),
                                                 "gpu": pd.DataFrame(columns=["label"])})
    assert "**Ours, `gpu`.** Not measured at this profile." in text


def test_the_scale_is_computed_once_from_the_configs():
    n = scale.scale_numbers(resolve("cpu"))
    assert n["paper_params"] > 10 * n["params"]  # ALBERT-base is about 12M, ours < 1M
    assert n["paper_tokens"] == 125_000 * 4096 * 512
    assert n["paper_flops"] > 1e5 * n["flops"]


@pytest.mark.parametrize("ratio, expected", [(47407.4, "47,000x"), (36.3, "36x"),
                                             (16504048, "17,000,000x")])
def test_ratios_are_rounded_to_two_digits(ratio, expected):
    assert times(ratio) == expected


def test_the_box_figure_is_legible_at_its_drawn_size():
    """Text at least 10 px: the figure is drawn at 100 dpi and shown at its own width
    (narrower than the text column), so a 10 pt font is 14 px on the page."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = figures.headline_figure("asymmetry", {"cpu": family(row(0.3, 0.1, 9.0))})
    width_px = fig.get_figwidth() * fig.dpi
    assert width_px <= 676  # the text column at 1280 px
    sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
    assert min(sizes) * fig.dpi / 72 >= 10
    plt.close(fig)


def test_chapter_4s_box_figure_names_the_pairs_each_row_is_measured_on():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    frame = family(row(0.3, 0.1, 9.0).rename(headlines.HEADLINES["sop_nsp"].key))
    fig = figures.headline_figure("sop_nsp", {"confirmatory": frame, "cpu": frame})
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["confirmatory\n(cue-free pairs)", "cpu\n(cut-cue pairs)"]
    plt.close(fig)
    fig = figures.headline_figure("asymmetry", {"cpu": family(row(0.3, 0.1, 9.0))})
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["cpu"]
    plt.close(fig)


def test_a_chapter_glues_its_verdicts_texts_margins_and_bottom_line(monkeypatch):
    from albert_rerun.studies.decisions import Chapter
    monkeypatch.setattr(chapter_box, "bottom_line_glue",
                        lambda claim, profile, seeds, device: {"bottom_line": claim})
    chapter = Chapter("asymmetry", pd.DataFrame(), [], texts={"context": "words"})
    glued = chapter_box.chapter_glue("asymmetry", chapter, pd.DataFrame(), "asym_", "smoke")
    assert glued["bottom_line"] == "asymmetry" and glued["asym_context"] == "words"
    assert {"asym_ce_margin", "asym_rungs", "asym_ce_reason"} <= set(glued)
    values = chapter_box.chapter_glue("asymmetry", chapter, pd.DataFrame(), "asym_", "smoke",
                                      box=False)
    assert "bottom_line" not in values and values["asym_context"] == "words"
    assert {"asym_ce_margin", "asym_unigram", "asym_bigram"} <= set(values)


def test_one_seed_shows_no_interval_and_never_infinity():
    """The smoke book printed '-0.070 nats [-inf, +inf]' for a single seed."""
    text = headlines.numbers(row(-0.0704, -np.inf, np.inf, margin=0.00157))
    assert text == "-0.070 nats (one seed: no interval), margin ±0.002"
    assert "inf" not in headlines.result_sentence(row(-0.07, -np.inf, np.inf), H)


def test_margins_are_rounded_as_their_estimates():
    assert headlines.numbers(row(-0.002, -0.025, 0.021, margin=0.0108)).endswith("margin ±0.011")
    assert headlines.numbers(row(7.03, 4.2, 10.0, margin=2, unit="points")) == \
        "+7.0 points [+4.2, +10.0], margin ±2.0"
    linked = headlines.numbers(row(-0.002, -0.025, 0.021), link=True)
    assert "{term}`nats`" in linked and "{term}`margin` ±0.027" in linked


def test_the_box_defines_its_terms_before_the_results():
    text = chapter_box.bottom_line("asymmetry", {"cpu-long": family(row(0.02, -0.01, 0.05))})
    reading, ours = text.index("*Reading ours:*"), text.index("**Ours,")
    assert reading < ours
    for word in ("{term}`nats`", "{term}`margin`", "{term}`Holm`", "{term}`stage`",
                 "{term}`cross-entropy at [MASK]`"):
        assert reading <= text.index(word) < ours, word
    assert "({term}`pilot`, exploratory)" in text


def test_the_sop_caveat_gives_the_probe_and_the_models_own_head(monkeypatch):
    """A reviewer: a frozen-encoder probe is not the model. Where both the probe's and
    the head's cue-free accuracy sit at the majority label, the caveat says so with
    both intervals; where the head reads more, it does not say "neither"."""
    from albert_rerun.studies import confirm_analysis, confirm_design
    monkeypatch.setattr(confirm_analysis, "confirmatory_families",
                        lambda store=None: {"secondary": pd.DataFrame()})
    frame = pd.DataFrame({"condition": [confirm_design.ALBERT] * 3,
                          "seed": [1000, 1001, 1002],
                          "sop_cuefree_majority": [0.5] * 3,
                          "sop_cuefree_accuracy_probe": [0.49, 0.50, 0.52],
                          "sop_cuefree_accuracy_head": [0.48, 0.49, 0.50],
                          "sop_accuracy_head": [0.75, 0.76, 0.77]})
    text = confirmatory.sop_words(frame)["sop_nsp"]
    assert "neither the SOP-trained model's frozen-encoder probe nor its own SOP head" \
        in text and "the head -1.0 [" in text and "76.0% on the original pairs" in text
    # the measured premise of the plain reading (issue #41): neither model orders them
    assert confirmatory.sop_words(frame)["sop_nsp_premise"] == \
        "neither model orders cue-free pairs (a check made after the results)"
    nsp = frame.assign(condition=confirm_design.NSP, sop_cuefree_accuracy_probe=0.6)
    both = confirmatory.sop_words(pd.concat([frame, nsp]))
    assert "sop_nsp_premise" not in both
    assert "The NSP-trained model's probe scores +10.0 [" in both["sop_nsp"]  # shown
    frame["sop_cuefree_accuracy_head"] = [0.60, 0.61, 0.62]
    text = confirmatory.sop_words(frame)["sop_nsp"]
    assert "neither" not in text and "finds no sentence order" in text
    assert "The model's own SOP head scores +11.0 [" in text
    assert "sop_nsp_premise" not in confirmatory.sop_words(frame)


def test_a_confirmatory_result_without_a_shown_difference_says_which_way_it_leans():
    """A cold reader: chapter 3's box gave the asymmetry as 'undecided' and never said
    that its estimate leans against the paper (the introduction did). The words are the
    chapters' own (``interval_note``): where the unadjusted interval lies, never a
    second verdict."""
    leaning = headlines.result_sentence(row(0.012, -0.001, 0.025, margin=0.011), H,
                                        confirmatory=True)
    assert ("Its 95% interval, not adjusted, holds 0 and reaches past the margin; the "
            "estimate leans against the paper's direction.") in leaning
    assert "not adjusted" not in headlines.result_sentence(row(0.012, -0.001, 0.025,
                                                               margin=0.011), H)
    excluded = headlines.result_sentence(row(0.03, 0.01, 0.05, holm="inconclusive",
                                             verdict="contradicted"), H, confirmatory=True)
    assert "Its 95% interval, not adjusted, excludes 0 on the other side from the " \
        "paper's." in excluded
    assert "before Holm" not in excluded and H.higher not in excluded


@pytest.mark.parametrize("numbers, reading, expected", [
    # a paper that says "no difference": the side by name, and the margin
    ((0.010, 0.002, 0.017, 0.027, 0), "undecided",
     "Its 95% interval, not adjusted, excludes 0 above 0 and lies inside the margin."),
    ((0.003, -0.002, 0.008, 0.0108, 0), "undecided",
     "Its 95% interval, not adjusted, lies inside the margin."),
    ((-0.008, -0.011, -0.005, 0.027, -1), "no difference here",
     "Its 95% interval, not adjusted, excludes 0 on the paper's side and lies inside "
     "the margin."),
    ((0.111, 0.087, 0.135, 0.027, -1), "undecided",
     "Its 95% interval, not adjusted, excludes 0 on the other side from the paper's."),
    ((0.3, 0.1, 0.5, 0.027, 1), "holds here", ""),  # a difference shown: nothing to add
    ((0.0, -0.1, 0.1, 0.027, 0), "no difference here", ""),  # shown inside: said
])
def test_the_interval_note_says_where_an_unadjusted_interval_lies(numbers, reading,
                                                                   expected):
    assert headlines.interval_note(*numbers, reading) == expected


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
    ((0.111, 0.087, 0.135, -1), "inconclusive", "undecided (after Holm's adjustment)"),
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
    r["premise"] = "neither model orders cue-free pairs (a check made after the results)"
    assert first_screen.reading(r) == ("not testable here (neither model orders cue-free "
                                       "pairs)")


def test_the_introductions_values_at_a_profile_with_nothing_stored(monkeypatch, tmp_path):
    """Every key is filled before any run is stored: the measured lines read 'not run
    yet', the exact claims and the scale come from the code."""
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    values = first_screen.values("smoke")
    assert values["intro_dropout_reading"] == "not run yet"
    assert values["intro_hold"] == values["intro_against"] == "none"
    assert values["intro_share_reading"] == "holds exactly"
    assert values["intro_embedding_share"] == "21.8%"
    n = scale.scale_numbers(resolve("cpu"))
    assert values["intro_params_times"] == times(n["paper_params"] / n["params"])
    assert values["intro_steps_16x"] == "86,400"
    assert all(isinstance(v, str) and v for v in values.values())


def test_a_claim_that_holds_inside_its_margin_is_marked_below_it():
    """The introduction's list of claims that hold marks one whose whole 95% interval
    lies inside its margin (dropout at 4x: [+0.017, +0.027] inside ±0.027)."""
    from albert_rerun.book.first_screen import below_margin
    row = {"estimate": 0.022, "low": 0.0174, "high": 0.0267, "margin": 0.0269,
           "paper_sign": 1, "holm_tests": 10}
    assert below_margin(row) == "below the margin at 4x"
    assert below_margin({**row, "high": 0.03}) == ""
    assert below_margin({k: v for k, v in row.items() if k != "holm_tests"}) == \
        "below the margin"
    assert below_margin({**row, "estimate": -0.022, "low": -0.0267, "high": -0.0174,
                         "paper_sign": -1}) == "below the margin at 4x"

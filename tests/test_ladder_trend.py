"""Each decision against compute (pages.ladder_trend): what a chapter's box and the
introduction show of the compute ladder, before the ladder is complete and after."""
from dataclasses import replace

import numpy as np
import pytest

from albert_rerun.book import ladder_trend as T
from albert_rerun.book.figures import figure_problems
from albert_rerun.studies import confirm_design, ladder


def trend(key="confirm/dropout", table=None, forecast=(0.041, 0.026, 0.057)):
    spec = next(s for s in confirm_design.PRIMARY if s.key == key)
    sign, label = T._chapter_sign(spec)
    f = dict(zip(("estimate", "low", "high"), forecast)) if forecast else None
    return T.Trend(key, spec.claim, label, spec.unit, sign * spec.paper_sign, sign,
                   (0.022, 0.017, 0.027, 11), f, 32, 5, 3, table, None,
                   spec.label if sign == -1 else "")


def complete_row(slope=0.01, p_holm=0.02, reading="moves toward the paper's sign",
                 sixteen=0.06, forecast=(0.041, 0.026, 0.057)):
    row = {"slope": slope, "slope low": slope - 0.005, "slope high": slope + 0.005,
           "p holm": p_holm, "reading": reading, "paper_sign": 1, "forecast": forecast[0],
           "forecast low": forecast[1], "forecast high": forecast[2],
           "forecast covers": forecast[1] <= sixteen <= forecast[2]}
    for rung, (m, n) in {"1x": (0.005, 6), "4x": (0.022, 11), "16x": (sixteen, 4)}.items():
        row.update({f"{rung} mean": m, f"{rung} low": m - 0.01, f"{rung} high": m + 0.01,
                    f"{rung} seeds": n})
    for name in ("1x-4x", "4x-16x"):
        row.update({name: 0.0, f"{name} low": -0.01, f"{name} high": 0.01})
    return row


def test_the_chapters_that_turn_their_headline_turn_its_trend_too():
    assert T._chapter_sign(next(s for s in confirm_design.PRIMARY
                                if s.key == "confirm/dropout"))[0] == -1
    assert T._chapter_sign(next(s for s in confirm_design.PRIMARY
                                if s.key == "confirm/asymmetry"))[0] == -1
    assert T._chapter_sign(next(s for s in confirm_design.PRIMARY
                                if s.key == "confirm/sharing-cost")) == (
        1, "all shared minus not shared, E = H = 64")
    t = trend()
    assert t.label == "no dropout minus dropout 0.1" and t.paper_sign == -1
    assert t.interval(0.041, 0.026, 0.057) == (-0.041, -0.057, -0.026)


def test_before_the_ladder_is_complete_the_box_gives_counts_and_the_forecast_only():
    line = T.box_line([trend()])
    assert line.startswith("**As training grows.** Which way it moves is not known yet.")
    assert "5 of its 32 runs are stored" in line
    # the forecast, in the chapter's sign, and the 4x rung; dropout's paper's side is
    # below zero and the forecast lies below the 4x mean
    assert ("Forecast -0.041 nats [-0.057, -0.026], further toward the paper's side than "
            "at 4x (-0.022 nats [-0.027, -0.017], the confirmatory runs' t-interval)." in line)
    assert "It is an extrapolation, not a test." in line
    assert "Holm" not in line and "per doubling" not in line
    away = T.box_line([trend(forecast=(0.01, -0.01, 0.03))])
    assert "further from the paper's side than at 4x" in away
    two = T.box_line([trend("confirm/asymmetry"), trend("confirm/sharing-cost")])
    assert two.count("runs are stored") == 1 and two.count(":* forecast") == 2
    assert two.count("not a test") == 1 and "*All shared minus not shared" in two
    assert T.cell(trend()) == ("not known yet (16x: 5 of 32 runs). 4x -0.022 → forecast "
                               "-0.041 nats, extrapolated")


def test_once_complete_the_sentence_gives_the_reading_slope_segments_signs_and_forecast():
    row = complete_row(sixteen=0.05)
    row.update({"1x-4x": 0.008, "1x-4x low": 0.002, "1x-4x high": 0.014,
                "4x-16x": 0.014, "4x-16x low": -0.001, "4x-16x high": 0.029})
    covered = T.sentence(trend(table=row))
    assert covered.startswith("It moves toward the paper's sign")  # the registered words
    assert "-0.010 nats [-0.015, -0.005] per doubling of compute" in covered
    assert "(Holm's p = 0.020)" in covered and "inside its forecast's interval" in covered
    assert "1x to 4x: -0.008 nats [-0.014, -0.002]" in covered
    assert "4x to 16x: -0.014 nats [-0.029, +0.001]" in covered
    assert "1x -0.005, 4x -0.022, 16x -0.050 nats" in covered
    row.update(complete_row(sixteen=0.09, reading="no trend shown"))
    missed = T.sentence(trend(table=row))
    assert missed.startswith("No trend is shown (not evidence of no trend)")
    # dropout is turned in its chapter: -0.090 lies below [-0.057, -0.026] there, and
    # +0.090 above [+0.026, +0.057] on the ladder page; both say one side (amendment 7)
    assert ("lies beyond its forecast's interval, in the paper's direction: the forecast "
            "was -0.041 nats [-0.057, -0.026]") in missed
    assert T.miss_side(row) == "in the paper's direction"
    assert T.miss_side({**row, "16x mean": 0.01}) == "in the other direction"
    assert T.miss_side({**row, "16x mean": 0.01, "paper_sign": -1}) == \
        "in the paper's direction"
    assert T.miss_side({**row, "16x mean": 0.04, "forecast covers": True}) == ""
    assert "with the opposite sign (dropout 0.1 minus no dropout)." in missed
    # beside "no trend shown", the power planned for slope (a), in the chapter's sign
    # (amendment 7); none beside a moving decision
    powered = T.sentence(replace(trend(table=row), power=(0.92, 0.39, 0.007)))
    assert ("planned with 92% power to show a slope as large as slope (a), -0.007 nats "
            "per doubling") in powered and "smaller trends could still go unseen" in powered
    assert "over 99% power" in T.sentence(replace(trend(table=row), power=(0.9998, 0.8, 0.1)))
    assert "planned with" not in missed and "planned with" not in covered
    # which arm gains, in plain words, from the registered slope's sign: dropout's is
    # +0.010 nats (the chapter prints -0.010), so the model with dropout does worse; only
    # the first step's own interval excludes 0, so the words say so (amendment 10)
    assert ("In plain words: from 1x to 4x, the model with dropout does worse relative "
            "to the one without; from 4x to 16x, no further change is shown. The means at "
            "each budget: 1x -0.005, 4x -0.022, 16x -0.050 nats.") in covered
    assert "In plain words" not in missed  # no trend shown: nothing to put in words
    assert "The means at each budget: 1x -0.005" in missed
    steps = {"slope": 0.01, "1x-4x low": 0.001, "1x-4x high": 0.02, "4x-16x low": 0.002,
             "4x-16x high": 0.03}
    assert T.plain_words("confirm/dropout", "nats", steps) == (
        "as training grows, the model with dropout does worse relative to the one "
        "without, in both steps (1x to 4x, 4x to 16x)")
    assert T.plain_words("confirm/dropout", "nats", {**steps, "1x-4x low": -0.01}) == (
        "from 4x to 16x, the model with dropout does worse relative to the one without; "
        "from 1x to 4x, no change is shown")
    assert T.plain_words("confirm/dropout", "nats",
                         {**steps, "4x-16x low": -0.03, "4x-16x high": -0.01}).endswith(
        "from 4x to 16x, the difference moves back")
    assert T.plain_words("confirm/dropout", "nats", {**steps, "slope": -0.01, "1x-4x low": -0.02,
                                                     "1x-4x high": -0.001, "4x-16x low": -0.03,
                                                     "4x-16x high": 0.01}) == (
        "from 1x to 4x, the model with dropout does better relative to the one without; "
        "from 4x to 16x, no further change is shown")
    assert T.plain_words("confirm/sop", "points", {**steps, "1x-4x low": -0.01,
                                                   "4x-16x low": -0.01}) == (
        "over 1x to 16x as a whole, the SOP-trained model's probe does better relative to "
        "the NSP-trained model's; neither step alone shows it")  # points: higher is better
    # no trend after Holm and neither step's interval excludes 0: no change shown at all,
    # whatever the whole slope's sign (chapters 3 and 4 glue these words)
    assert T.plain_words("confirm/asymmetry", "nats",
                         {**steps, "p holm": 0.979, "1x-4x low": -0.01,
                          "4x-16x low": -0.01}) == T.NO_CHANGE_WORDS
    assert T.plain_words("confirm/sop", "points", {**steps, "p holm": 0.2, "1x-4x low": -0.01,
                                                   "4x-16x low": -0.01}) == T.NO_CHANGE_WORDS
    # a step that excludes 0 is still said where Holm shows no trend
    assert T.plain_words("confirm/dropout", "nats",
                         {**steps, "p holm": 0.2, "1x-4x low": -0.01}).startswith(
        "from 4x to 16x, the model with dropout does worse")
    assert set(T.ARMS_IN_WORDS) == {s.key for s in ladder.DECISIONS}
    # section 3's caution, only where some budget's mean lies on the other side of zero
    # from the paper (amendment 10): here every one is on its side
    assert "reaching its side" not in covered
    other = T.sentence(trend(table={**row, **complete_row(), "1x mean": -0.005}))
    assert "Moving toward the paper's sign is not the same as reaching its side." in other
    assert "reaching its side" not in missed
    # the slope's interval is not adjusted: where it excludes 0 and Holm's test does not
    # reject, the sentence says so (a rehearsal showed "no trend" beside [+0.001, +0.010])
    assert "before Holm's adjustment" in missed  # complete_row: [+0.005, +0.015]
    row.update({"slope low": -0.001})
    assert "before Holm's adjustment" not in T.sentence(trend(table=row))
    assert "before Holm's adjustment" not in covered
    assert T.cell(trend(table=complete_row())) == (  # in the chapter's sign
        "moves toward the paper's sign (Holm's p = 0.020); 1x → 4x → 16x: -0.005 → -0.022 "
        "→ -0.060 nats")
    # two decisions once complete: a list, an item each, each named
    two = T.box_line([trend("confirm/asymmetry", table=complete_row()),
                      trend("confirm/sharing-cost", table=complete_row())])
    assert two.startswith("**As training grows.**\n\n- *") and two.count("\n- *") == 2
    assert "\n- *All shared minus not shared, E = H = 64:* " in two


@pytest.mark.parametrize("table", [None, complete_row()])
def test_the_figure_is_legible_and_shows_1x_and_16x_only_once_complete(table):
    import matplotlib.pyplot as plt
    fig = T.figure([trend(table=table), trend("confirm/sharing-cost", table=table)])
    assert figure_problems(fig) == []
    ax = fig.axes[0]
    xs = sorted({round(float(x), 2) for line in ax.lines for x in np.atleast_1d(
        line.get_xdata()) if line.get_marker() == "o"})
    assert xs == ([0.0, 2.0, 4.0] if table else [2.0])
    texts = " ".join(t.get_text() for t in ax.texts)
    assert ("when 16x" in texts) is (table is None) and "paper's" in texts
    # dropout is turned (no dropout minus dropout): the paper's side is below zero
    shaded = [p for p in ax.patches if p.get_facecolor()[1] > p.get_facecolor()[0]]
    assert len(shaded) == 1 and shaded[0].get_bbox().y1 <= 1e-12
    plt.close(fig)


def test_the_fitted_line_is_the_least_squares_line_through_every_seed():
    import matplotlib.pyplot as plt
    means, seeds = {0.0: 0.005, 2.0: 0.022, 4.0: 0.05}, {0.0: 6, 2.0: 11, 4.0: 4}
    xs = np.repeat(list(means), list(seeds.values()))
    ys = np.repeat(list(means.values()), list(seeds.values()))
    slope, intercept = np.polyfit(xs, ys, 1)
    row = complete_row(slope=slope, sixteen=0.05)
    fig = T.figure([trend(table=row)])
    line = next(l for l in fig.axes[0].lines if l.get_linestyle() == "--")
    # the chapter's sign (dropout is turned): the line is -(intercept + slope x)
    assert np.allclose(line.get_ydata(), [-intercept, -(intercept + 4 * slope)])
    plt.close(fig)


def test_gather_asks_the_registered_analysis_at_its_default_stores(monkeypatch):
    seen = []

    def tables(store=None):
        seen.append(store)
        raise confirm_design.NotComplete("not yet")
    monkeypatch.setattr(ladder, "result_tables", tables)
    T.gather()
    assert seen == [None]  # None: the default stores (4x: the confirmatory one)
    import pandas as pd
    full = pd.DataFrame({"rung": ["1x", "16x"], "arm": ["a", "a"], "trained": [6, 4],
                         "evaluated": [6, 3], "diverged": [0, 1], "of": [6, 4]})
    monkeypatch.setattr(ladder, "progress", lambda store=None: full)
    with pytest.raises(confirm_design.NotComplete):  # complete, yet no analysis: loud
        T.gather()


ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


def test_the_stored_ladder_shows_the_4x_rung_and_the_forecast_and_holds_the_rest(
        monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(ROOT / "data" / "results"))
    trends = T.gather()
    assert set(trends) == {s.key for s in ladder.DECISIONS}
    progress = ladder.progress()
    complete = bool(progress[progress["rung"] == "16x"].eval("evaluated == of").all())
    for t in trends.values():
        assert (t.table is None) is not complete  # the stopping rule
        assert t.forecast is not None and np.isfinite(t.four[0]) and t.four[3] == 11


def test_an_empty_store_shows_counts_only_and_a_figure_of_notes(results):
    trends = T.gather()
    assert set(trends) == {s.key for s in ladder.DECISIONS}
    for t in trends.values():
        assert t.forecast is None and t.table is None and np.isnan(t.four[0])
        assert t.trained == 0 and t.runs == 32
    line = T.box_line(T.claim_trends(trends, "asymmetry"))
    assert "0 of its 32 runs are stored" in line and "forecast" not in line
    fig = T.figure(T.claim_trends(trends, "dropout"))
    assert figure_problems(fig) == []
    assert {t.get_text().split(":")[0] for t in fig.axes[0].texts} >= {"1x", "4x", "16x"}

"""Each decision against compute (book.ladder_trend): what a chapter's figure and its
few words show of the compute ladder, before the ladder is complete and after."""
import numpy as np
import pytest

from albert_rerun.book import ladder_trend as T
from figure_checks import figure_problems
from albert_rerun.studies import confirm_analysis, ladder


def trend(key="confirm/dropout", table=None, forecast=(0.041, 0.026, 0.057)):
    spec = next(s for s in confirm_analysis.PRIMARY if s.key == key)
    sign, label = T._chapter_sign(spec)
    f = dict(zip(("estimate", "low", "high"), forecast)) if forecast else None
    return T.Trend(key, spec.claim, label, spec.unit, sign * spec.paper_sign, sign,
                   (0.022, 0.017, 0.027, 11), f, table, None,
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
    assert T._chapter_sign(next(s for s in confirm_analysis.PRIMARY
                                if s.key == "confirm/dropout"))[0] == -1
    assert T._chapter_sign(next(s for s in confirm_analysis.PRIMARY
                                if s.key == "confirm/asymmetry"))[0] == -1
    assert T._chapter_sign(next(s for s in confirm_analysis.PRIMARY
                                if s.key == "confirm/sharing-cost")) == (
        1, "all shared minus not shared, E = H = 64")
    t = trend()
    assert t.label == "no dropout minus dropout 0.1" and t.paper_sign == -1
    assert t.interval(0.041, 0.026, 0.057) == (-0.041, -0.057, -0.026)


def test_plain_words_name_the_arm_that_gains_and_the_steps_that_show_it():
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
    assert ("1x:\nnot yet" in texts) is (table is None) and "paper's" in texts
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
    # means far off one line (dropout's at 16x): no straight fit, the means joined
    bent = {**row, "curvature": 0.7, "curvature low": 0.5, "curvature high": 0.9}
    fig = T.figure([trend(table=bent)])
    assert not [l for l in fig.axes[0].lines if l.get_linestyle() == "--"]
    joined = next(l for l in fig.axes[0].lines if len(l.get_xdata()) == 3)
    assert np.allclose(joined.get_ydata(), [-0.005, -0.022, -0.05])
    plt.close(fig)


def test_gather_asks_the_registered_analysis_at_its_default_stores(monkeypatch):
    seen = []

    def tables(store=None):
        seen.append(store)
        raise confirm_analysis.NotComplete("not yet")
    monkeypatch.setattr(ladder, "result_tables", tables)
    T.gather()
    assert seen == [None]  # None: the default stores (4x: the confirmatory one)
    import pandas as pd
    full = pd.DataFrame({"rung": ["1x", "16x"], "arm": ["a", "a"], "trained": [6, 4],
                         "evaluated": [6, 3], "diverged": [0, 1], "of": [6, 4]})
    monkeypatch.setattr(ladder, "progress", lambda store=None: full)
    with pytest.raises(confirm_analysis.NotComplete):  # complete, yet no analysis: loud
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
    fig = T.figure(T.claim_trends(trends, "dropout"))
    assert figure_problems(fig) == []
    assert {t.get_text().split(":")[0] for t in fig.axes[0].texts} >= {"1x", "4x", "16x"}

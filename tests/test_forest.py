"""The forest of effects in margins (figures.forest) and the ledger's figures, on
synthetic families with known decisions."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from albert_rerun.book import figures, ledger  # noqa: E402
import figure_checks  # noqa: E402
from albert_rerun.profiles import resolve  # noqa: E402
from albert_rerun.stats.inference import decision, holm  # noqa: E402

# key, claim, label, margin, paper_sign, unit, (estimate, half-width) in margins
SPECS = [("asym/Esmall", "asymmetry", "attention minus FFN, small E", 0.04, 1, "nats", 3, 1),
         ("asym/EH", "asymmetry", "attention minus FFN, E = H", 0.04, 1, "nats", 0.2, 0.5),
         ("sop/head", "sop_nsp", "SOP head minus NSP head", 2.0, 1, "points", -2, 0.5),
         ("dropout/ce", "dropout", "no dropout minus dropout", 0.04, -1, "nats", 0.5, 3),
         ("grouped/first-step", "grouped", "G = 2 minus G = 1", 0.02, 0, "nats", 0.1, 0.4)]


def family(scale: float = 1.0, seeds: int = 3) -> pd.DataFrame:
    """A holm() family whose p-values follow from the intervals (a small p where the
    interval excludes 0 or lies inside the band)."""
    out = []
    for key, claim, label, margin, sign, unit, x, half in SPECS:
        x, half = x * scale, half if seeds > 1 else np.inf
        low, high = (x - half) * margin, (x + half) * margin
        out.append(decision(key, claim, label, {
            "estimate": x * margin, "low": low, "high": high, "n": seeds,
            "p_difference": 0.001 if not low <= 0 <= high else 0.5,
            "p_equivalence": 0.001 if -margin < low and high < margin else 0.5},
            margin, sign, unit, "paired t over seeds"))
    return holm(out)


def rows(families: dict) -> pd.DataFrame:
    frame = ledger.stacked(families)
    return frame.assign(row=frame["label"], source=frame["profile"])


@pytest.fixture(scope="module")
def two_profiles():
    return rows({"cpu": family(), "gpu": family(scale=1.5)})


def artists(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def test_forest_draws_every_decision_paper_positive_in_margins(two_profiles):
    fig = figures.forest(two_profiles)
    ax = fig.axes[0]
    band, = artists(ax, "equivalence-band")
    assert (band.get_x(), band.get_width()) == pytest.approx((-1, 2))  # +-1 margin
    for key, row in two_profiles.iterrows():
        point, = artists(ax, f"{row['profile']}:{key}")
        assert point.get_marker() == figures.marker(row["profile"])
        toward = -1 if row["paper_sign"] < 0 else 1  # the paper's direction positive
        assert point.get_xdata()[0] == pytest.approx(toward * row["estimate"] / row["margin"])
        low, high = artists(ax, f"{row['profile']}:{key}/interval")[0].get_xdata()
        ends = sorted((toward * row["low"], toward * row["high"]))
        assert (low, high) == pytest.approx((ends[0] / row["margin"], ends[1] / row["margin"]))
    assert figures.marker("cpu") != figures.marker("gpu")
    assert ax.get_ylim()[1] < ax.get_ylim()[0]  # the first decision on top
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(SPECS) and labels[-1].endswith("(paper: no difference)")
    plt.close(fig)


def test_forest_colours_each_point_by_its_plain_reading_and_writes_no_verdicts(two_profiles):
    from matplotlib.colors import to_rgba
    from albert_rerun.book.plain import row_reading
    fig = figures.forest(two_profiles)
    ax = fig.axes[0]
    for key, row in two_profiles.iterrows():
        point, = artists(ax, f"{row['profile']}:{key}")
        head = row_reading(row).partition(": ")[0]
        assert to_rgba(point.get_color()) == to_rgba(figures.READING_COLOURS[head])
    assert not [t for t in ax.texts if t.get_text().strip()]  # the table holds the words
    legend, = fig.legends
    entries = [t.get_text() for t in legend.get_texts()]
    assert entries[-2:] == ["cpu", "gpu"] and set(entries[:-2]) <= set(figures.READING_COLOURS)
    assert len(set(figures.READING_COLOURS.values())) == len(figures.READING_COLOURS)
    fig.canvas.draw()  # the legend above the first row, once laid out
    assert legend.get_window_extent().y0 >= ax.get_window_extent().y1 - 1
    plt.close(fig)


def test_one_seed_intervals_are_cut_at_the_edge_with_an_arrow():
    fig = figures.forest(rows({"smoke": family(seeds=1)}))
    ax = fig.axes[0]
    low, high = ax.get_xlim()
    for key, *_ in SPECS:
        xs = artists(ax, f"smoke:{key}/interval")[0].get_xdata()
        assert np.isfinite(xs).all() and low <= min(xs) and max(xs) <= high
    assert high <= figures.X_LIMIT
    assert {line.get_marker() for line in ax.get_lines()} >= {"<", ">"}
    plt.close(fig)


def test_bad_margins_are_refused():
    with pytest.raises(ValueError, match="margin"):
        figures.forest(rows({"cpu": family().assign(margin=0.0)}))


def test_stacked_labels_each_family_with_its_profile():
    cpu, gpu = family(), family(scale=1.5)
    both = ledger.stacked({"cpu": cpu, "gpu": gpu})
    assert list(both["profile"]) == ["cpu"] * len(cpu) + ["gpu"] * len(gpu)
    pd.testing.assert_frame_equal(both.drop(columns="profile"), pd.concat([cpu, gpu]))


def test_published_families_train_and_reseed_only_the_current_profile(monkeypatch):
    calls = []
    monkeypatch.setattr(ledger, "published_profiles", lambda current: [current, resolve("cpu")])
    monkeypatch.setattr(ledger, "book_family",
                        lambda profile, *args: calls.append((profile.name, *args)) or family())
    families = ledger.published_families("gpu", [0, 1], "cuda", train_missing=True)
    assert list(families) == ["gpu", "cpu"]
    assert calls == [("gpu", [0, 1], "cuda", True), ("cpu", None, "cuda", False)]


def test_the_ledger_figures_keep_issue_41s_rules():
    """At most 12 rows a figure, the chapters in order, each figure legible at the text
    column; each source is named in the legend."""
    families = {"cpu": family(), "gpu": family(scale=1.5)}
    figs = ledger.ledger_figures(families, max_rows=3)
    assert [f.axes[0].get_title() for f in figs] == [
        "3. attention vs FFN · 4. SOP vs NSP", "5. dropout · grouped"]
    for fig in figs:
        assert figure_checks.figure_problems(fig) == []
        labels = [t.get_text() for t in fig.legends[0].get_texts()]
        assert "gpu" in labels and "cpu" in labels
        plt.close(fig)

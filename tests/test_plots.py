"""The forest plot and the compute panels, on synthetic families with known decisions."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from albert_rerun.book import plots  # noqa: E402
from albert_rerun.profiles import resolve  # noqa: E402
from albert_rerun.stats.inference import decision, holm  # noqa: E402

# key, claim, label, margin, paper_sign, unit, (estimate, half-width) in margins
SPECS = [("asym/Esmall", "asymmetry", "attention minus FFN, small E", 0.04, 1, "nats", 3, 1),
         ("asym/EH", "asymmetry", "attention minus FFN, E = H", 0.04, 1, "nats", 0.2, 0.5),
         ("sop/head", "sop_nsp", "SOP head minus NSP head", 2.0, 1, "points", -2, 0.5),
         ("dropout/ce", "dropout", "no dropout minus dropout", 0.04, -1, "nats", 0.5, 3),
         ("grouped/first-step", "grouped", "G = 2 minus G = 1", 0.02, 0, "nats", 0.1, 0.4)]


def family(profile: str, scale: float = 1.0, seeds: int = 3) -> pd.DataFrame:
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
    return holm(out).assign(profile=profile)


@pytest.fixture(scope="module")
def two_profiles():
    return pd.concat([family("cpu"), family("gpu", scale=1.5)])


def artists(ax, gid):
    return [a for a in ax.get_children() if a.get_gid() == gid]


def test_forest_draws_band_every_decision_and_both_profiles(two_profiles):
    ax = plots.forest(two_profiles)
    band, = artists(ax, "equivalence-band")
    assert (band.get_x(), band.get_width()) == pytest.approx((-1, 2))  # +-1 margin
    for profile, rows in two_profiles.groupby("profile"):
        for key, row in rows.iterrows():
            point, = artists(ax, f"{profile}:{key}")
            assert point.get_marker() == plots.marker(profile)
            toward = -1 if row["paper_sign"] < 0 else 1  # the paper's direction positive
            assert point.get_xdata()[0] == pytest.approx(
                toward * row["estimate"] / row["margin"])
            low, high = artists(ax, f"{profile}:{key}/interval")[0].get_xdata()
            ends = sorted((toward * row["low"], toward * row["high"]))
            assert (low, high) == pytest.approx((ends[0] / row["margin"],
                                                 ends[1] / row["margin"]))
    assert plots.marker("cpu") != plots.marker("gpu")
    assert ax.get_ylim()[1] < ax.get_ylim()[0]  # the first decision on top
    assert len(ax.get_yticklabels()) == len(SPECS)
    plt.close(ax.figure)


def test_forest_marks_the_papers_direction_and_both_verdicts(two_profiles):
    ax = plots.forest(two_profiles)
    # positive is the paper's direction on every row: its mark is on the right
    expected = {1: ">", -1: ">", 0: plots.PAPER_NONE_MARKER}
    assert plots.PAPER_NONE_MARKER not in plots.PROFILE_MARKERS.values()
    for key, _, _, _, sign, *_ in SPECS:
        mark, = artists(ax, f"paper:{key}")
        assert mark.get_marker() == expected[sign]
        x = mark.get_xdata()[0]
        assert np.sign(x) == abs(sign)
        text, = artists(ax, f"verdict:{key}")
        for profile in ("cpu", "gpu"):
            row = two_profiles[two_profiles["profile"] == profile].loc[key]
            line = next(l for l in text.get_text().splitlines() if l.startswith(profile))
            assert row["verdict"] in line
            if row["verdict_holm"] != row["verdict"]:
                assert f"Holm: {row['verdict_holm']}" in line
            else:
                assert "Holm" not in line
    # the synthetic family has each kind of verdict, so the test covers them
    assert {"reproduced", "contradicted", "equivalent"} <= set(two_profiles["verdict"])
    plt.close(ax.figure)


def test_forest_colours_each_point_by_its_holm_verdict(two_profiles):
    from matplotlib.colors import to_rgba
    ax = plots.forest(two_profiles)
    for key, row in two_profiles[two_profiles["profile"] == "cpu"].iterrows():
        point, = artists(ax, f"cpu:{key}")
        assert to_rgba(point.get_color()) == to_rgba(plots.VERDICT_COLOURS[row["verdict_holm"]])
    plt.close(ax.figure)


def test_one_seed_intervals_are_cut_at_the_edge():
    ax = plots.forest(family("smoke", seeds=1))
    low, high = ax.get_xlim()
    for key, *_ in SPECS:
        xs = artists(ax, f"smoke:{key}/interval")[0].get_xdata()
        assert np.isfinite(xs).all() and low <= min(xs) and max(xs) <= high
    assert high <= plots.X_LIMIT
    plt.close(ax.figure)


def test_forest_draws_into_given_axes(two_profiles):
    figure, ax = plt.subplots()
    assert plots.forest(two_profiles, ax=ax) is ax
    plt.close(figure)


def test_scale_panel_one_panel_per_claim_points_at_each_profiles_compute(two_profiles):
    compute = {"cpu": 3e14, "gpu": 2e17}
    axes = plots.scale_panel(two_profiles, compute)
    claims = list(dict.fromkeys(two_profiles["claim"]))
    assert [a.get_title() for a in axes] == [plots.claim_title(c) for c in claims]
    for panel, claim in zip(axes, claims):
        assert panel.get_xscale() == "log"
        band, = artists(panel, "equivalence-band")
        assert (band.get_y(), band.get_height()) == pytest.approx((-1, 2))
        rows = two_profiles[two_profiles["claim"] == claim]
        for key, row in rows.iterrows():
            point, = artists(panel, f"{row['profile']}:{key}")
            assert point.get_xdata()[0] == compute[row["profile"]]
            toward = -1 if row["paper_sign"] < 0 else 1  # the paper's direction positive
            assert point.get_ydata()[0] == pytest.approx(
                toward * row["estimate"] / row["margin"])
    plt.close(axes[0].figure)


def test_scale_panel_places_each_decision_at_its_arms_compute():
    """A decision sits at its arms' training FLOPs (``train_flops``), not at its profile's
    base run: two decisions of one profile whose arms differ in FLOPs sit apart (the old
    panel drew both at the profile's compute); one without (a check of the test sets)
    sits at its profile's compute."""
    arms = {"asym/Esmall": 1e13, "asym/EH": 3e13}
    frame = pd.concat([family("cpu").assign(train_flops=family("cpu").index.map(arms)),
                       family("gpu", scale=1.5).assign(
                           train_flops=family("gpu").index.map(
                               {k: 100 * v for k, v in arms.items()}))])
    compute = {"cpu": 9e12, "gpu": 9e14}
    axes = plots.scale_panel(frame, compute)
    panel = axes[0]
    assert panel.get_title() == "3. attention vs FFN"  # in words, not the claim's key
    x = {(p, k): artists(panel, f"{p}:{k}")[0].get_xdata()[0]
         for p in ("cpu", "gpu") for k in arms}
    assert x[("cpu", "asym/Esmall")] == 1e13 and x[("cpu", "asym/EH")] == 3e13
    assert x[("gpu", "asym/Esmall")] == 1e15 and x[("gpu", "asym/EH")] == 3e15
    sop = axes[1]
    assert artists(sop, "cpu:sop/head")[0].get_xdata()[0] == compute["cpu"]
    assert "costlier arm" in panel.get_xlabel()
    plt.close(panel.figure)
    # compute is needed only where a decision has no FLOPs of its own
    only = frame[frame["claim"] == "asymmetry"]
    plt.close(plots.scale_panel(only, {})[0].figure)
    with pytest.raises(ValueError, match="cpu"):
        plots.scale_panel(frame, {"gpu": 9e14})


def test_scale_panel_with_one_profile_and_missing_compute():
    cpu = family("cpu")
    axes = plots.scale_panel(cpu, {"cpu": 1e14})
    assert len(axes) == cpu["claim"].nunique()
    plt.close(axes[0].figure)
    with pytest.raises(ValueError, match="gpu"):
        plots.scale_panel(pd.concat([cpu, family("gpu")]), {"cpu": 1e14})


def test_bad_families_are_refused():
    cpu = family("cpu")
    with pytest.raises(ValueError, match="profile"):
        plots.forest(cpu.drop(columns="profile"))
    with pytest.raises(ValueError, match="margin"):
        plots.forest(cpu.assign(margin=0.0))


def test_stacked_labels_each_family_with_its_profile():
    from albert_rerun.book.ledger import stacked
    cpu = family("cpu").drop(columns="profile")
    gpu = family("gpu", scale=1.5).drop(columns="profile")
    both = stacked({"cpu": cpu, "gpu": gpu})
    assert list(both["profile"]) == ["cpu"] * len(cpu) + ["gpu"] * len(gpu)
    pd.testing.assert_frame_equal(both.drop(columns="profile"), pd.concat([cpu, gpu]))


def test_published_families_train_and_reseed_only_the_current_profile(monkeypatch):
    from albert_rerun.book import ledger
    calls = []
    monkeypatch.setattr(ledger, "published_profiles", lambda current: [current, resolve("cpu")])
    monkeypatch.setattr(ledger, "book_family",
                        lambda profile, *args: calls.append((profile.name, *args))
                        or family(profile.name))
    families = ledger.published_families("gpu", [0, 1], "cuda", train_missing=True)
    assert list(families) == ["gpu", "cpu"]
    assert calls == [("gpu", [0, 1], "cuda", True), ("cpu", None, "cuda", False)]


def test_a_profile_still_training_is_marked_interim_in_legend_text_and_panel():
    """ledger.book_family marks a partial profile's rows ``interim``: the forest's legend
    and verdict text say so, and the compute panel draws its intervals dotted (hollow is
    'not testable', as in the forest)."""
    frame = pd.concat([family("cpu"), family("gpu", scale=1.5).assign(interim=True)])
    ax = plots.forest(frame)
    labels = [t.get_text() for t in ax.figure.legends[0].get_texts()]
    assert "gpu profile (interim: still training)" in labels and "cpu profile" in labels
    key = SPECS[0][0]
    text, = artists(ax, f"verdict:{key}")
    assert any(line.startswith("gpu (interim): ") for line in text.get_text().splitlines())
    plt.close(ax.figure)
    axes = plots.scale_panel(frame, {"cpu": 1e13, "gpu": 1e15})
    points = {p: artists(a, f"{p}:{key}") for a in axes for p in ("cpu", "gpu")
              if artists(a, f"{p}:{key}")}
    intervals = {p: artists(a, f"{p}:{key}/interval") for a in axes for p in ("cpu", "gpu")
                 if artists(a, f"{p}:{key}/interval")}
    assert intervals["gpu"][0].get_linestyle() == ":"
    assert intervals["cpu"][0].get_linestyle() == "-"
    plt.close(axes[0].figure)


def test_scale_panel_keeps_to_the_measured_compute_and_notes_the_papers():
    """Review: an axis stretched to the paper's run (1e20 FLOPs and more) drew profiles
    four times apart on top of each other; the paper's run is a note at the edge."""
    frame = pd.concat([family("cpu"), family("gpu", scale=1.5)])
    claims = list(dict.fromkeys(frame["claim"]))
    assert len(claims) > 1
    paper = {claims[0]: 1e21, claims[-1]: 1e14}  # off the measured range; within it
    axes = plots.scale_panel(frame, {"cpu": 1e13, "gpu": 4e13}, paper_compute=paper)
    low, high = axes[0].get_xlim()
    assert low == pytest.approx(1e13 / 3) and high == pytest.approx(4e13 * 3)
    note, = artists(axes[0], f"paper-compute:{claims[0]}")
    assert "1.0e+21 FLOPs" in note.get_text() and "8,333,333x" in note.get_text()
    line, = artists(axes[-1], f"paper-compute:{claims[-1]}")
    assert line.get_xdata()[0] == 1e14
    plt.close(axes[0].figure)


def test_scale_panel_marks_what_it_cuts_at_the_edge():
    """Review: cpu-long's equal-time point (+13 margins) was cut at the edge unmarked."""
    frame = family("cpu")
    key = frame.index[0]
    frame.loc[key, ["estimate", "low", "high"]] = [20 * frame.loc[key, "margin"],
                                                   15 * frame.loc[key, "margin"],
                                                   25 * frame.loc[key, "margin"]]
    axes = plots.scale_panel(frame, {"cpu": 1e13})
    cut = [a for panel in axes for a in artists(panel, f"cpu:{key}/cut")]
    assert cut and all(a.get_marker() == "^" for a in cut)
    others = [a for panel in axes for k in frame.index[1:] for a in artists(panel, f"cpu:{k}/cut")
              if abs(frame.loc[k, "high"] / frame.loc[k, "margin"]) <= plots.X_LIMIT]
    assert not others
    plt.close(axes[0].figure)


def test_the_ledger_figures_keep_issue_41s_rules(monkeypatch):
    """Each of the ledger's figures (one forest and one compute figure per group of
    claims) has at most 12 rows and 8 legend entries, text of 10 px and panels of 300 px
    as shown at the text column, and titles in words (issue #41: one forest of 22 rows
    and 14 legend entries; panels titled ``sop_nsp``)."""
    from albert_rerun.book import ledger_page
    from albert_rerun.book.figure_text import figure_problems
    frame = pd.concat([family("cpu"), family("gpu", scale=1.5)])
    assert [list(dict.fromkeys(p["claim"])) for p in plots.parts(frame)] == [
        ["asymmetry"], ["sop_nsp", "dropout"], ["grouped"]]  # unnamed claims last
    for part in plots.parts(frame):
        for fig in (plots.forest(part).figure,
                    plots.scale_panel(part, {"cpu": 1e13, "gpu": 1e15})[0].figure):
            assert figure_problems(fig) == []
            titles = [a.get_title() for a in fig.axes if a.get_title()]
            assert titles and not any("_" in t for t in titles)
            plt.close(fig)
    families = {"cpu": family("cpu").drop(columns="profile")}
    from albert_rerun.book import ledger
    monkeypatch.setattr(ledger, "training_compute", lambda profile: 1e13)
    monkeypatch.setattr(ledger, "paper_compute", lambda: {})
    figures = ledger_page.ledger_figures(families)
    assert list(figures) == [f"{k}_{i}" for i in range(1, len(plots.LEDGER_PARTS) + 1)
                             for k in ("forest", "scale")]
    for fig in set(figures.values()):
        assert figure_problems(fig) == []
        plt.close(fig)

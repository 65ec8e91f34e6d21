"""Figures record their smallest text's size and are drawn to read at the text column's
width (issue #26): the book's browser check reads the recorded size back."""
import io

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

from albert_rerun.book import figures as F  # noqa: E402
import figure_checks as FC  # noqa: E402


def recorded(data: bytes) -> tuple:
    image = Image.open(io.BytesIO(data))
    return image.size[0], float(image.text[F.FONT_KEY])


def test_the_smallest_visible_text_is_measured_in_pixels():
    fig, ax = plt.subplots(dpi=100)
    ax.set_title("title", fontsize=14)
    ax.text(0.5, 0.5, "small", fontsize=7.2)
    ax.text(0.5, 0.5, "hidden", fontsize=2, visible=False)
    ax.tick_params(labelsize=9)
    fig.canvas.draw()
    assert F.min_font_px(fig) == pytest.approx(10.0)
    plt.close(fig)


def test_a_wide_figure_is_drawn_at_the_columns_width_with_legible_text():
    fig, axes = plt.subplots(1, 3, figsize=(12, 3), dpi=100)
    axes[0].legend(handles=axes[0].plot([0, 1], label="a line"), fontsize=6)
    width, font = recorded(F.png(fig))
    assert width <= F.COLUMN_PX and font >= F.MIN_FONT_PX
    plt.close(fig)


def test_unfitted_the_same_figure_records_its_small_text_and_width():
    fig, ax = plt.subplots(figsize=(12, 3), dpi=100)
    ax.text(0.5, 0.5, "note", fontsize=6)
    width, font = recorded(F.png(fig, fit=False))
    assert width > F.COLUMN_PX and font == pytest.approx(6 * 100 / 72, abs=0.01)
    plt.close(fig)


def test_the_stored_size_is_read_back_from_a_file(tmp_path):
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    path = tmp_path / "figure.png"
    path.write_bytes(F.png(fig))
    assert FC.stored_font_px(path) >= F.MIN_FONT_PX
    plt.savefig(tmp_path / "plain.png")
    assert FC.stored_font_px(tmp_path / "plain.png") is None
    plt.close(fig)


# -- issue #41's rules, on the figure objects (no browser) ----------------------------------

def test_figure_problems_names_each_rule_a_figure_breaks():
    fig, axes = plt.subplots(1, 4, figsize=(6.6, 3), dpi=100)  # four panels in 660 px
    axes[0].set_yticks(range(13), [f"row {i}" for i in range(13)])  # 13 rows in words
    for i in range(9):  # nine legend entries
        axes[1].plot([0, 1], [i, i], label=f"line {i}")
    axes[1].legend(fontsize=5)  # 7 px drawn: png lifts it to 10 px, as the book shows it
    problems = FC.figure_problems(fig)
    assert [p.split(" ", 1)[1] if p[0].isdigit() else p.split(" ")[0] for p in problems] \
        == ["legend entries", "rows", "panels"]
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.6, 3), dpi=100)
    ax.set_yticks([0, 0.5, 1.0])  # numbers are not rows
    ax.plot([0, 1], label="one line")
    ax.legend()
    assert FC.figure_problems(fig) == []
    plt.close(fig)


def _runs(conditions: dict, seeds=(0, 1, 2)):
    """Runs whose curves are known: condition -> (steps, offset); 8 points each."""
    import pandas as pd
    rows = []
    for name, (steps, offset) in conditions.items():
        for seed in seeds:
            curve = [{"step": steps * k // 8, "tokens": 1000 * steps * k // 8,
                      "mlm_loss_at_mask": 7 - 0.1 * k + offset + 0.01 * seed * (name == "a")}
                     for k in range(1, 9)]
            rows.append({"condition": name, "seed": seed, "steps": steps, "curve": curve})
    return pd.DataFrame(rows)


def test_chapter_curves_draw_the_paired_difference_and_keep_the_rules():
    """Issue #41: chapters 5 and 6's curves lay on top of each other; under them, the
    paired difference along training (mean over seeds, 95% interval)."""
    from albert_rerun.book import figures
    two = figures.curves(_runs({"a": (800, 0.05), "b": (800, 0.0)}))
    top, bottom = two.axes
    line, = [ln for ln in bottom.get_lines() if ln.get_marker() == "o"]
    assert list(line.get_xdata()) == [100 * k for k in range(1, 9)]  # steps: same steps
    assert line.get_ydata() == pytest.approx([0.06] * 8)  # a minus b, mean over seeds
    assert "a minus b" in bottom.get_title()
    assert FC.figure_problems(two) == []
    plt.close(two)
    three = figures.curves(_runs({"ref": (800, 0.0), "x": (500, 0.1), "y": (300, 0.2)}),
                           x="tokens", xscale=1e-6, xlabel="training tokens (M)")
    labels = [t.get_text() for t in three.axes[1].get_legend().get_texts()]
    assert labels == ["x minus ref", "y minus ref"]  # each one minus the first
    assert "share of training" in three.axes[1].get_xlabel()  # arms of different steps
    assert FC.figure_problems(three) == []
    plt.close(three)


def test_the_preregistration_curves_keep_the_rules():
    """Issue #41: four panels side by side were 81 px wide, titled with code keys."""
    from albert_rerun.studies import confirm_analysis as A
    from albert_rerun.studies import confirm as R
    fig = R.curves_figure(A.pilot_frame(), A.rungs())
    assert FC.figure_problems(fig) == []
    titles = [ax.get_title() for ax in fig.axes]
    assert all(" minus " in t for t in titles)  # the decision's label, in words
    plt.close(fig)


# -- every figure the book's chapters draw, from the committed stores (cpu profile) -------

# what a chapter's notebook or the build calls -> how this test builds it at ``cpu``
BOOK_FIGURES = {
    "figures.asymmetry": "chapter 3", "figures.sop_nsp": "chapter 4",
    "figures.curves": "chapters 5 and 6", "figures.transitions": "chapter 7",
    "figures.embedding_sweep": "chapter 8", "cb.figure": "chapters 3-8, confirmatory",
    "exact.factorization_figure": "chapter 1", "exact.grouped_figure": "chapter 2",
    "recipe.plot_candidates": "the recipe", "recipe.plot_grid": "the recipe",
    "headline_forest": "the introduction (book.build.write_forest)",
    "ledger.ledger_figures": "the ledger",
    "ladder_trend.figure": "chapters 3-6's boxes (chapter_box)",
    "scale.pilot_figure": "the scale page's long pilot (scale.write_scale_parts)",
    "scale.standing_figure": "the scale page (scale.write_scale_parts)",
    "budgets.trend_figure": "the compute ladder's findings (budgets.write_ladder_parts)"}
CONFIRM_CLAIMS = ("asymmetry", "sop_nsp", "dropout", "wall_clock")  # chapters 3-6 draw cb.figure


def test_every_figure_the_chapters_call_is_checked():
    """A figure a notebook draws (``figures.*``, ``cb.figure``, ``exact.*_figure``,
    ``recipe.plot_*``) is one ``test_the_books_figures_keep_issue_41s_rules`` draws."""
    import re
    from albert_rerun.paths import repo_root
    called = set()
    for source in sorted((repo_root() / "notebooks").glob("*.md")):
        called |= set(re.findall(r"\b(figures\.\w+|cb\.figure|exact\.\w+_figure|"
                                 r"recipe\.plot_\w+)\(", source.read_text()))
    assert called and called <= set(BOOK_FIGURES), called - set(BOOK_FIGURES)


@pytest.fixture(scope="module")
def committed_cpu():
    """The committed stores (data/results), read at the cpu profile, which reads
    without writing; the chapters' frames and the published families, built once."""
    from albert_rerun.paths import repo_root
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ALBERT_RERUN_RESULTS", str(repo_root() / "data" / "results"))
        from albert_rerun.book import (asymmetry, dropout, embedding_size, sop_nsp,
                                           transitions, wall_clock)
        from albert_rerun.book import ledger
        from albert_rerun.book.confirmatory import with_confirmatory
        chapters = {"asymmetry": asymmetry.asymmetry("cpu", present=False),
                    "sop_nsp": sop_nsp.sop_nsp("cpu"), "dropout": dropout.dropout("cpu"),
                    "wall_clock": wall_clock.wall_clock("cpu"),
                    "transitions": transitions.transitions("cpu"),
                    "embedding_size": embedding_size.embedding_sweep("cpu")}
        families = with_confirmatory(ledger.published_families("cpu"))
        yield chapters, families


def _book_figures(chapters, families):
    """(name, the figure) for every figure of ``BOOK_FIGURES``, called as the book
    calls it."""
    import pandas as pd
    from albert_rerun.book import exact
    from albert_rerun.book import figures
    from albert_rerun.book import confirmatory as cb
    from albert_rerun.book.figures import headline_forest
    from albert_rerun.studies import conditions as C
    from albert_rerun.studies import confirm_analysis, recipe
    base = C.base("cpu").model
    yield "figures.asymmetry", figures.asymmetry(
        chapters["asymmetry"].runs, chapters["asymmetry"].extra["grouped"],
        base.embedding_size, base.hidden_size, C.SCHEMES)
    yield "figures.sop_nsp", figures.sop_nsp(chapters["sop_nsp"].runs)
    yield "figures.curves", figures.curves(chapters["dropout"].runs)
    yield "figures.curves", figures.curves(chapters["wall_clock"].runs, x="tokens",
                                           xscale=1e-6, xlabel="training tokens (M)")
    yield "figures.transitions", figures.transitions(chapters["transitions"].runs)
    yield "figures.embedding_sweep", figures.embedding_sweep(
        chapters["embedding_size"].runs, C.CLAIM_SIZES["cpu"].embedding_sizes)
    runs = cb.runs()
    for claim in CONFIRM_CLAIMS:  # the differences by seed, as the notebooks compute them
        by_seed = pd.DataFrame({s.label: confirm_analysis.per_seed(s, runs)
                                for s in cb.specs(claim)})
        yield "cb.figure", cb.figure(by_seed, claim)
    yield "exact.factorization_figure", exact.factorization_figure(
        exact.embedding_share().tables["factorization"])
    yield "exact.grouped_figure", exact.grouped_figure(
        exact.sharing_reductions().tables["sweep"])
    search = recipe.load()
    for plot in (recipe.plot_candidates, recipe.plot_grid):
        plot(search)
        yield f"recipe.{plot.__name__}", plt.gcf()
    from albert_rerun.book import ledger
    for fig in ledger.ledger_figures({p: f for p, f in families.items() if p != "confirmatory"}):
        yield "ledger.ledger_figures", fig
    yield "headline_forest", headline_forest(families)
    from albert_rerun.book import ladder_trend
    trends = ladder_trend.gather()
    for claim in ("asymmetry", "sop_nsp", "dropout", "wall_clock"):
        yield "ladder_trend.figure", ladder_trend.figure(ladder_trend.claim_trends(trends, claim))
    from albert_rerun.book import budgets, scale
    runs = scale.pilot_runs()
    if runs is not None:  # the committed pilot, once both arms are stored
        yield "scale.pilot_figure", scale.pilot_figure(scale.counted_curve(runs),
                                                       scale.pilot_rungs())
    yield "scale.standing_figure", scale.standing_figure(scale.standing(pilot=runs),
                                                         scale.rung_levels())
    from albert_rerun.studies.ladder import result_tables
    yield "budgets.trend_figure", budgets.trend_figure(result_tables()[0])


def test_the_books_figures_keep_issue_41s_rules(committed_cpu, monkeypatch):
    """Every figure the chapters, their boxes and the introduction draw, from the
    committed cpu and confirmatory runs: text of 10 px, panels of 300 px as shown, at
    most 8 legend entries and 12 rows (issue #41: chapter 3's panels were 200, 200 and
    140 px, chapter 4's 176, chapter 7's 261; the introduction's forest had 15 rows)."""
    from albert_rerun.paths import repo_root
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(repo_root() / "data" / "results"))
    problems, drawn = {}, set()
    for name, fig in _book_figures(*committed_cpu):
        drawn.add(name)
        found = FC.figure_problems(fig)
        if found:
            problems.setdefault(name, []).append(found)
        titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
        assert not any("_" in t for t in titles), (name, titles)  # in words, not code
        plt.close(fig)
    assert drawn == set(BOOK_FIGURES)
    assert problems == {}, problems

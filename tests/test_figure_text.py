"""Figures record their smallest text's size and are drawn to read at the text column's
width (issue #26): the book's browser check reads the recorded size back."""
import io

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from PIL import Image  # noqa: E402

from albert_rerun.pages import figure_text as F  # noqa: E402


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


def test_a_figure_for_a_wide_page_keeps_its_width_and_lifts_its_small_text():
    fig, ax = plt.subplots(figsize=(9, 3), dpi=100)
    ax.text(0.5, 0.5, "note", fontsize=6)
    width, font = recorded(F.png(F.for_wide_page(fig)))
    assert width > F.COLUMN_PX and font >= F.MIN_FONT_PX
    plt.close(fig)


def test_the_stored_size_is_read_back_from_a_file(tmp_path):
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    path = tmp_path / "figure.png"
    path.write_bytes(F.png(fig))
    assert F.stored_font_px(path) >= F.MIN_FONT_PX
    plt.savefig(tmp_path / "plain.png")
    assert F.stored_font_px(tmp_path / "plain.png") is None
    plt.close(fig)


# -- issue #41's rules, on the figure objects (no browser) ----------------------------------

def test_figure_problems_names_each_rule_a_figure_breaks():
    fig, axes = plt.subplots(1, 4, figsize=(6.6, 3), dpi=100)  # four panels in 660 px
    axes[0].set_yticks(range(13), [f"row {i}" for i in range(13)])  # 13 rows in words
    for i in range(9):  # nine legend entries
        axes[1].plot([0, 1], [i, i], label=f"line {i}")
    axes[1].legend(fontsize=5)  # 7 px drawn: png lifts it to 10 px, as the book shows it
    problems = F.figure_problems(fig)
    assert [p.split(" ", 1)[1] if p[0].isdigit() else p.split(" ")[0] for p in problems] \
        == ["legend entries", "rows", "panels"]
    plt.close(fig)
    # a figure for the wide page keeps its width: 1500 px shown at 944, its text shrunk
    fig, ax = plt.subplots(figsize=(15, 3), dpi=100)
    ax.set_title("title", fontsize=7.2)
    problems = F.figure_problems(F.for_wide_page(fig))
    assert len(problems) == 1 and problems[0].startswith("text 7.")  # 10 px * 944 / ~1230
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.6, 3), dpi=100)
    ax.set_yticks([0, 0.5, 1.0])  # numbers are not rows
    ax.plot([0, 1], label="one line")
    ax.legend()
    assert F.figure_problems(fig) == []
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
    from albert_rerun.pages import figures
    two = figures.curves(_runs({"a": (800, 0.05), "b": (800, 0.0)}))
    top, bottom = two.axes
    line, = [ln for ln in bottom.get_lines() if ln.get_marker() == "o"]
    assert list(line.get_xdata()) == [100 * k for k in range(1, 9)]  # steps: same steps
    assert line.get_ydata() == pytest.approx([0.06] * 8)  # a minus b, mean over seeds
    assert "a minus b" in bottom.get_title()
    assert F.figure_problems(two) == []
    plt.close(two)
    three = figures.curves(_runs({"ref": (800, 0.0), "x": (500, 0.1), "y": (300, 0.2)}),
                           x="tokens", xscale=1e-6, xlabel="training tokens (M)")
    labels = [t.get_text() for t in three.axes[1].get_legend().get_texts()]
    assert labels == ["x minus ref", "y minus ref"]  # each one minus the first
    assert "share of training" in three.axes[1].get_xlabel()  # arms of different steps
    assert F.figure_problems(three) == []
    plt.close(three)


def test_the_preregistration_curves_keep_the_rules():
    """Issue #41: four panels side by side were 81 px wide, titled with code keys."""
    from albert_rerun.studies import confirm_analysis as A
    from albert_rerun.studies import confirm_report as R
    fig = R.curves_figure(A.pilot_frame(), A.rungs())
    assert F.figure_problems(fig) == []
    titles = [ax.get_title() for ax in fig.axes]
    assert all(" minus " in t for t in titles)  # the decision's label, in words
    plt.close(fig)

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

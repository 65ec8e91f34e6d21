"""Figures that record how large their text is drawn, so the book can check that every
figure reads at the size it is shown (issue #26: labels of about 5 px).

A figure's PNG carries, in a ``tEXt`` chunk named ``albert-rerun:min-font-px``, the
height in pixels of its smallest text at the size it is drawn. On the page a figure is
shown at some width; its smallest text is then ``min_font_px * shown / drawn`` pixels,
which the browser check (``tests/test_book.py``) requires to be at least 10 px at a
1280 px window. ``register`` makes every matplotlib figure a notebook displays go
through ``png`` (the chapters call it in their setup).
"""
from __future__ import annotations

import io
from pathlib import Path

FONT_KEY = "albert-rerun:min-font-px"
MIN_FONT_PX = 10.0  # the smallest text a reader should have to read, on the page
COLUMN_PX = 660  # the book's text column at a 1280 px window (676 px), less a margin
COLUMN_ATTRIBUTE = "albert_rerun_wide_page"  # set by for_wide_page
WIDE_PAGE_PX = 944  # the ledger's article at a 1280 px window, whole width
# issue #41: what a reader can take in, as shown (``figure_problems`` checks them)
MAX_LEGEND_ENTRIES = 8  # in all of a figure's legends together
MAX_ROWS = 12  # rows labelled in words on a figure's y axes, all panels together
MIN_PANEL_PX = 300  # the narrowest a panel (an axes) may be shown


def for_wide_page(fig):
    """Mark ``fig`` as drawn for a page that gives its article the whole width (the
    ledger's, 944 px at a 1280 px window): ``png`` keeps its width, whose layout its
    labels need, and only lifts text smaller than ``MIN_FONT_PX``. Returns it."""
    setattr(fig, COLUMN_ATTRIBUTE, True)
    return fig


def min_font_px(fig) -> float:
    """The height in pixels of the smallest visible, non-empty text of ``fig`` at its
    own dpi (a point is 1/72 inch); inf for a figure without text."""
    from matplotlib.text import Text
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and _shown(t)]
    return min(sizes) * fig.dpi / 72 if sizes else float("inf")


def _shown(text) -> bool:
    """A tick label is drawn only where its tick lies within its axis' view."""
    axes = text.axes
    if axes is None:
        return True
    for axis in (axes.xaxis, axes.yaxis):
        ticks = axis.get_major_ticks() + axis.get_minor_ticks()
        for tick in ticks:
            if text in (tick.label1, tick.label2):
                lo, hi = sorted(axis.get_view_interval())
                return tick.get_loc() is not None and lo <= tick.get_loc() <= hi \
                    and tick.get_visible()
    return True


def _save(fig, savefig: dict) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi,
                metadata={FONT_KEY: f"{min_font_px(fig):.2f}"}, **savefig)
    return buffer.getvalue()


def _png_width(data: bytes) -> int:
    return int.from_bytes(data[16:20], "big")  # the IHDR chunk's width


def fit_to_column(fig, column_px: float = COLUMN_PX, min_px: float = MIN_FONT_PX) -> None:
    """Make ``fig`` read at the text column's width: no wider than ``column_px`` pixels
    at its dpi (its height kept, so its panels get narrower, not flatter), and no text
    smaller than ``min_px`` pixels; then lay it out again. A figure drawn wider than the
    column is shown shrunk, and its text with it (issue #26: labels of 5 px)."""
    from matplotlib.text import Text
    changed = False
    width_px = fig.get_figwidth() * fig.dpi
    if width_px > column_px:
        fig.set_size_inches(column_px / fig.dpi, fig.get_figheight())
        changed = True
    smallest = min_px * 72 / fig.dpi
    for text in fig.findobj(Text):
        if text.get_fontsize() < smallest and text.get_text().strip():
            text.set_fontsize(smallest)
            changed = True
    if not changed:  # a figure that already reads at the column keeps its own layout
        return
    engine = fig.get_layout_engine()
    if engine is None:
        try:
            fig.set_layout_engine("constrained")
        except RuntimeError:  # a colour bar or a layout this figure cannot change
            pass
    fig.canvas.draw()


def png(fig, dpi: float | None = None, fit: bool = True, **savefig) -> bytes:
    """``fig`` as PNG bytes (tight bounding box, as the notebook's inline backend draws
    it) with its smallest text's height recorded under ``FONT_KEY``; ``fit``: first
    ``fit_to_column``, and narrower again while the saved image (text outside the axes
    included) is wider than the column."""
    if dpi is not None:
        fig.set_dpi(dpi)
    savefig.setdefault("bbox_inches", "tight")
    fig.canvas.draw()  # lays out ticks, so that the tick labels shown are known
    if not fit:
        return _save(fig, savefig)
    if getattr(fig, COLUMN_ATTRIBUTE, False):
        fit_to_column(fig, column_px=float("inf"))
        return _save(fig, savefig)
    fit_to_column(fig)
    data = _save(fig, savefig)
    for _ in range(3):
        width = _png_width(data)
        if width <= COLUMN_PX:
            break
        target = fig.get_figwidth() * fig.dpi * COLUMN_PX / width
        fit_to_column(fig, column_px=max(target, 0.5 * COLUMN_PX))
        data = _save(fig, savefig)
    return data


def _rows(ax) -> int:
    """The rows of ``ax`` labelled in words: its y tick labels that are not numbers."""
    import re
    number = re.compile(r"^[\u2212+-]?[\d.,]+(e[\u2212+-]?\d+)?%?$|^\$.*\$$")
    return sum(1 for t in ax.get_yticklabels()
               if t.get_visible() and t.get_text().strip() and _shown(t)
               and not number.match(t.get_text().strip()))


def measure(fig) -> dict:
    """``fig`` as the book shows it (``png``, then scaled to its column, the whole page's
    width for ``for_wide_page``): ``drawn`` and ``shown`` width in pixels, ``font_px``
    (its smallest text, as shown), ``legend_entries`` (all legends together), ``rows``
    (labelled in words, all panels together) and ``panel_px`` (each visible panel's
    width, as shown). Leaves ``fig`` laid out as ``png`` leaves it."""
    from matplotlib.legend import Legend
    data = png(fig)
    drawn = _png_width(data)
    column = WIDE_PAGE_PX if getattr(fig, COLUMN_ATTRIBUTE, False) else COLUMN_PX
    scale = min(drawn, column) / drawn
    legends = {id(x): x for x in fig.findobj(Legend)}.values()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison
              and not hasattr(ax, "_colorbar")]
    return {"drawn": drawn, "shown": round(drawn * scale),
            "font_px": min_font_px(fig) * scale,
            "legend_entries": sum(len([t for t in x.get_texts() if t.get_text().strip()])
                                  for x in legends if x.get_visible()),
            "rows": sum(_rows(ax) for ax in panels),
            "panel_px": [ax.get_window_extent().width * scale for ax in panels]}


def figure_problems(fig) -> list:
    """Where ``fig``, as shown (``measure``), breaks issue #41's rules: text under
    ``MIN_FONT_PX``, more than ``MAX_LEGEND_ENTRIES`` legend entries or ``MAX_ROWS``
    rows, a panel narrower than ``MIN_PANEL_PX``. An empty list where it keeps them."""
    m = measure(fig)
    problems = []
    if m["font_px"] < MIN_FONT_PX - 0.05:
        problems.append(f"text {m['font_px']:.1f} px as shown (at {m['shown']} px)")
    if m["legend_entries"] > MAX_LEGEND_ENTRIES:
        problems.append(f"{m['legend_entries']} legend entries")
    if m["rows"] > MAX_ROWS:
        problems.append(f"{m['rows']} rows")
    narrow = [round(w) for w in m["panel_px"] if w < MIN_PANEL_PX]
    if narrow:
        problems.append(f"panels {narrow} px wide as shown")
    return problems


def register() -> bool:
    """In an IPython kernel, display every matplotlib figure through ``png``; False
    outside one. Call after pyplot is imported (its inline backend registers its own
    formatter then)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure
    # the inline backend registers its own PNG formatter when it is first loaded, which
    # pyplot does at the first figure: load it now, so that this formatter comes after
    plt.close(plt.figure())
    shell.display_formatter.formatters["image/png"].for_type(Figure, png)
    return True


def stored_font_px(path: Path) -> float | None:
    """The smallest text's height recorded in a PNG file, None where none is."""
    from PIL import Image
    with Image.open(path) as image:
        value = getattr(image, "text", {}).get(FONT_KEY)
    return float(value) if value is not None else None

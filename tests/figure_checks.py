"""What the book's tests check on a figure as a reader sees it (``figures.png`` scaled to
the text column): legible text, few legend entries, few labelled rows, panels wide
enough; and the smallest text's size a stored PNG records."""
from pathlib import Path

from albert_rerun.book.figures import COLUMN_PX, FONT_KEY, MIN_FONT_PX, _png_width, \
    _shown, min_font_px, png

MAX_LEGEND_ENTRIES = 8  # in all of a figure's legends together
MAX_ROWS = 12  # rows labelled in words on a figure's y axes, all panels together
MIN_PANEL_PX = 300  # the narrowest a panel (an axes) may be shown


def _rows(ax) -> int:
    """The rows of ``ax`` labelled in words: its y tick labels that are not numbers."""
    import re
    number = re.compile(r"^[\u2212+-]?[\d.,]+(e[\u2212+-]?\d+)?%?$|^\$.*\$$")
    return sum(1 for t in ax.get_yticklabels() if t.get_visible() and t.get_text().strip()
               and _shown(t) and not number.match(t.get_text().strip()))


def measure(fig) -> dict:
    """``fig`` as the book shows it (``png``, scaled to the column): ``drawn`` and
    ``shown`` width, ``font_px``, ``legend_entries``, ``rows`` (labelled in words) and
    ``panel_px`` (each panel's width), as shown."""
    from matplotlib.legend import Legend
    drawn = _png_width(png(fig))
    scale = min(drawn, COLUMN_PX) / drawn
    legends = {id(x): x for x in fig.findobj(Legend) if x.get_visible()}.values()
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison
              and not hasattr(ax, "_colorbar")]
    return {"drawn": drawn, "shown": round(drawn * scale),
            "font_px": min_font_px(fig) * scale,
            "legend_entries": sum(len([t for t in x.get_texts() if t.get_text().strip()])
                                  for x in legends),
            "rows": sum(_rows(ax) for ax in panels),
            "panel_px": [ax.get_window_extent().width * scale for ax in panels]}


def figure_problems(fig) -> list:
    """How ``fig``, as shown, breaks the limits above (small text, legend entries, rows,
    narrow panels); [] where it keeps them."""
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


def stored_font_px(path: Path) -> float | None:
    """The smallest text's height recorded in a PNG file, None where none is."""
    from PIL import Image
    with Image.open(path) as image:
        value = getattr(image, "text", {}).get(FONT_KEY)
    return float(value) if value is not None else None

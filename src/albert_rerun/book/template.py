"""Markdown templates for the pages' generated parts, and writing those parts."""
from __future__ import annotations

import re
from pathlib import Path

from ..paths import fill  # noqa: F401  (the pages' modules read it from here)

KEY = re.compile(r"\{\{\s*(\w+)\s*\}\}")
NOT_STORED = "(not stored)"  # a key's or a figure's text before its results are stored


def write_parts(generated: Path, parts: dict, dpi: float | None = None) -> list:
    """Each part into ``generated/<name>``: text, figure as PNG, or None as a small figure
    that says its results are not stored."""
    import matplotlib.pyplot as plt

    from .figures import FIGURE_WIDTH_IN, FONT_PT, png
    generated.mkdir(parents=True, exist_ok=True)
    for name, part in parts.items():
        if isinstance(part, str):
            (generated / name).write_text(part)
            continue
        if part is None:
            part, ax = plt.subplots(figsize=(FIGURE_WIDTH_IN, 1.0), dpi=100)
            ax.text(0.5, 0.5, NOT_STORED, ha="center", va="center", fontsize=FONT_PT)
            ax.set_axis_off()
        (generated / name).write_bytes(png(part, dpi=dpi))
        plt.close(part)
    return [generated / name for name in parts]


def record_values(path: Path) -> dict:
    """A registration record's commit, date and digest."""
    import json
    stored = json.loads(path.read_text())
    return {"commit": stored["commit"][:7], "date": stored["date"],
            "sha256": stored["sha256"][:16]}


def pipe(head: list, rows) -> str:
    """A markdown pipe table of ``head`` and ``rows``, cells as given."""
    lines = ["| " + " | ".join(map(str, line)) + " |" for line in [head, *rows]]
    return "\n".join([lines[0], "|" + "---|" * len(head)] + lines[1:])

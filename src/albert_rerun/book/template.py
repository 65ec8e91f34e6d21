"""Markdown templates: a generated part's sentences live in ``book/templates/<name>``,
and code fills its ``{{ key }}`` slots with numbers and short phrases."""
from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path("book") / "templates"
KEY = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def fill(name: str, values: dict, root: Path | None = None) -> str:
    """The template ``book/templates/<name>`` with each ``{{ key }}`` replaced by its
    value; a key without a value is an error, so no template sentence goes out unfilled."""
    from ..paths import repo_root
    text = ((root or repo_root()) / TEMPLATES / name).read_text()
    missing = sorted(set(KEY.findall(text)) - set(values))
    if missing:
        raise KeyError(f"{name}: no value for {missing}")
    return KEY.sub(lambda m: str(values[m.group(1)]), text)

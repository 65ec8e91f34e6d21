"""The markdown pages' values as MyST substitutions: the build writes every provider's keys
to ``book/_generated/values.json``; as a Sphinx extension this module hands them to MyST."""
from __future__ import annotations

import importlib
import json
from pathlib import Path

VALUES = Path("book") / "_generated" / "values.json"
# "module:function" of every provider, each called with the resolved profile
PROVIDERS: tuple = (
    "albert_rerun.book.first_screen:values",
    "albert_rerun.book.budgets:values",
    "albert_rerun.book.asymmetry_study:values",
)


def compute(profile) -> dict:
    """Every provider's keys at ``profile``; a key filled twice is an error."""
    out: dict = {}
    for target in PROVIDERS:
        module, name = target.split(":")
        values = getattr(importlib.import_module(module), name)(profile)
        clash = sorted(set(values) & set(out))
        if clash:
            raise ValueError(f"{target} fills keys another provider fills: {clash}")
        bad = {k: v for k, v in values.items() if not isinstance(v, str)}
        if bad:
            raise TypeError(f"{target} gives non-text values (format them at display): {bad}")
        out.update(values)
    return out


def write_values(root: Path, profile) -> Path:
    """``book/_generated/values.json`` at ``profile``."""
    path = root / VALUES
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(compute(profile), indent=1, sort_keys=True) + "\n")
    return path


def load(app, config) -> None:
    """Sphinx's config-inited: the stored values become MyST substitutions."""
    path = Path(app.srcdir) / VALUES
    values = json.loads(path.read_text()) if path.exists() else {}
    config.myst_substitutions = {**(config.myst_substitutions or {}), **values}


def setup(app):
    """Sphinx's extension entry point."""
    app.connect("config-inited", load)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

"""Where the repository and its markdown templates are, whatever the working directory
(nbval runs kernels in ``notebooks/``, papermill in ``--cwd``)."""
from __future__ import annotations

import os
import re
from pathlib import Path

_KEY = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def repo_root() -> Path:
    """The repository root: $ALBERT_RERUN_ROOT, else the checkout holding this package."""
    override = os.environ.get("ALBERT_RERUN_ROOT")
    if override:
        return Path(override).resolve()
    for base in (Path(__file__).resolve(), Path.cwd().resolve()):
        for candidate in (base, *base.parents):
            if (candidate / "_config.yml").is_file() and (candidate / "src").is_dir():
                return candidate
    raise FileNotFoundError("cannot find the repository root (a folder with _config.yml "
                            "and src/); set ALBERT_RERUN_ROOT")


def fill(name: str, values: dict) -> str:
    """The markdown template ``book/templates/<name>`` with each ``{{ key }}`` replaced by
    its value; a key without a value is an error, so no sentence goes out unfilled."""
    text = (repo_root() / "book" / "templates" / name).read_text()
    missing = sorted(set(_KEY.findall(text)) - set(values))
    if missing:
        raise KeyError(f"{name}: no value for {missing}")
    return _KEY.sub(lambda m: str(values[m.group(1)]), text)

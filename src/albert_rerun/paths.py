"""Where the repository and its data are, whatever the working directory.

nbval runs kernels in ``notebooks/``, papermill in ``--cwd``; neither is the root.
"""
from __future__ import annotations

import os
from pathlib import Path


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


def shared_reference() -> Path:
    """The project's shared reference folder beside the checkout (may be absent)."""
    return repo_root().parent / "shared" / "reference"

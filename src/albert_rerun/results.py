"""The results store: one JSON per finished run, named by the hash of its config.

Writes are atomic (a temporary file renamed into place), so a killed run never
leaves a half-written result; a corrupt file is reported and recomputed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from .paths import repo_root

log = logging.getLogger(__name__)


def config_hash(config: dict) -> str:
    """A stable 16-hex-digit name for a resolved run config."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def results_dir(profile: str) -> Path:
    """data/results/<profile>, or $ALBERT_RERUN_RESULTS/<profile> (CI: a temporary dir)."""
    base = os.environ.get("ALBERT_RERUN_RESULTS")
    return (Path(base) if base else repo_root() / "data" / "results") / profile


def atomic_write_json(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(payload, out, indent=1, sort_keys=True)
            out.write("\n")
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def result_path(store: Path, config) -> Path:
    """Where the result of a run config lives in ``store``: named by its hash."""
    return store / f"{config_hash(config.to_dict())}.json"


def stored_result(store: Path, config):
    """The verified stored result of ``config`` in ``store``, or None (missing, corrupt or
    stale; the last two are reported)."""
    return load_result(result_path(store, config), config.to_dict())


def load_result(path: Path, expected_config: dict):
    """A stored result if it is whole and made by ``expected_config``; else None."""
    if not path.exists():
        return None
    try:
        result = json.loads(path.read_text())
        if result.get("config") != expected_config or "metrics" not in result:
            raise ValueError("config or metrics do not match")
        return result
    except (ValueError, OSError) as error:
        log.warning("stored result %s is corrupt or stale (%s): recomputing", path, error)
        print(f"warning: stored result {path} is corrupt or stale ({error}); recomputing")
        return None

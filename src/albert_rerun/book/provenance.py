"""What a reader needs to trace and redo the book's numbers: each chapter's footer
(``chapter_footer``) and every stored run as one table (``published_runs``)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pandas as pd

from ..engine.provenance import short_commit

MAX_TEXT = 64  # longer strings are per-item records (correctness strings), not metrics


def _counted(values) -> str:
    """'a (3 runs), b (1 run)', most frequent first."""
    return ", ".join(f"{value} ({n} run{'s' if n != 1 else ''})"
                     for value, n in Counter(values).most_common())


def chapter_footer(runs: pd.DataFrame, profile: str, claims: list[str]) -> str:
    """The end of a chapter (``chapter-footer.md``): the stored results ``runs`` holds,
    their machines and commits, and the command that recomputes them."""
    from ..paths import fill
    from ..studies.conditions import CLAIMS
    missing = [c for c in ("machine", "commit", "hash") if c not in runs.columns]
    if missing:
        raise ValueError(f"runs lacks the columns {missing}")
    if runs.empty:
        raise ValueError("the chapter read no stored results")
    if not claims or set(claims) - set(CLAIMS):
        raise ValueError(f"claims must be a non-empty list from {CLAIMS}, got {list(claims)}")
    distinct = runs.drop_duplicates("hash")
    n = len(distinct)
    # without the '+dirty' mark: that is data, in the runs CSV
    commits = distinct["commit"].map(lambda c: short_commit(c).removesuffix("+dirty"))
    return fill("chapter-footer.md", {
        "n": n, "results": "result" if n == 1 else "results", "profile": profile,
        "machines": _counted(distinct["machine"]),
        "commit_word": "commits" if commits.nunique() > 1 else "commit",
        "commits": _counted("`" + commits + "`"),
        "command": f"python -m albert_rerun.studies --profile {profile} --claims "
                   f"{' '.join(claims)} --fresh"})


# -- every published run as one table ---------------------------------------------------

def flatten(record: dict, prefix: str = "") -> dict:
    """Nested dicts as dotted columns; lists and long strings left out."""
    out = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, str):
            if len(value) <= MAX_TEXT:
                out[name] = value
        elif value is None or isinstance(value, (bool, int, float)):
            out[name] = value
    return out


def published_runs(store: Path, current_eval: str | None = None) -> pd.DataFrame:
    """One row per stored pretraining run and evaluation of it: ``hash``, ``config.*``,
    ``pretrain.*``, ``machine.*``, ``commit``, ``eval_hash``, ``eval_current`` and
    ``eval.*``."""
    evaluations = {}
    for path in sorted(store.glob("eval/*/*.json")):
        evaluations.setdefault(path.stem, []).append(json.loads(path.read_text()))
    rows = []
    for path in sorted(store.glob("pretrain/*.json")):
        run = json.loads(path.read_text())
        base = {"hash": run.get("hash", path.stem),
                **flatten(run.get("config", {}), "config."),
                **flatten(run.get("metrics", {}), "pretrain."),
                "pretrain.wall_seconds": run.get("wall_seconds"),
                **flatten(run.get("provenance", {}).get("machine", {}), "machine."),
                "commit": run.get("provenance", {}).get("git_commit")}
        rows += [{**base, "eval_hash": e.get("eval_hash"),
                  "eval_current": e.get("eval_hash") == current_eval,
                  **flatten(e.get("metrics", {}), "eval.")}
                 for e in evaluations.get(base["hash"], [])] or [base]
    return pd.DataFrame(rows)


"""What the three registrations share: a registered page's digest, its committed record,
and the checks that a checkout and its runs descend from the registration with its
training code (amendment 1 of the first registration)."""
from __future__ import annotations

import hashlib
import subprocess

from ..engine.store import read_json

BEGIN, END = "<!-- registered text begins -->", "<!-- registered text ends -->"
# the code a registered run trains with must equal the registration's
FROZEN = ("src/albert_rerun/engine", "src/albert_rerun/model", "src/albert_rerun/data")


def registered_text(page_text: str) -> str:
    """The registered block of a registration page (between the markers)."""
    start, stop = page_text.find(BEGIN), page_text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"the page has no registered block ({BEGIN!r} ... {END!r})")
    return page_text[start:stop + len(END)]


def registered_digest(page_text: str) -> str:
    return hashlib.sha256(registered_text(page_text).encode()).hexdigest()


def _git(*args, cwd=None) -> subprocess.CompletedProcess:
    from ..paths import repo_root
    return subprocess.run(["git", *args], cwd=cwd or repo_root(), capture_output=True,
                          text=True)


def descends(commit: str, ancestor: str) -> bool:
    """Whether ``commit`` (a run's recorded commit, without '+dirty') has ``ancestor``
    in its history."""
    return _git("merge-base", "--is-ancestor", ancestor, commit).returncode == 0


def same_training_code(commit: str, ancestor: str) -> bool:
    """Whether ``commit``'s engine, model and data code (FROZEN) equals ``ancestor``'s."""
    return _git("diff", "--quiet", ancestor, commit, "--", *FROZEN).returncode == 0


def run_provenance_problems(runs, ancestor: str) -> list:
    """The runs whose recorded commit is dirty, not a descendant of ``ancestor``, or
    trains with other FROZEN code than it, as text (none: [])."""
    out = []
    for run in runs:
        commit = run["provenance"]["git_commit"]
        if commit.endswith("+dirty"):
            out.append(f"{run['hash']}: trained from a dirty tree ({commit})")
        elif not descends(commit, ancestor):
            out.append(f"{run['hash']}: commit {commit} does not descend from the "
                       f"registration {ancestor}")
        elif not same_training_code(commit, ancestor):
            out.append(f"{run['hash']}: commit {commit} changed the training code "
                       f"({', '.join(FROZEN)}) since the registration")
    return out


def record(path: str) -> dict | None:
    """The registration record at ``path`` (from the repository's root), or None."""
    from ..paths import repo_root
    return read_json(repo_root() / path)


def problem(stored: dict | None, record_path: str, page: str) -> str:
    """Why this checkout may not train a registered study's runs ("" if it may): no
    record ``stored`` (read from ``record_path``), a record not committed, a HEAD that
    does not descend from the registration commit, or a registered text (``page``)
    that changed."""
    from ..paths import repo_root
    if stored is None:
        return f"{record_path} is not stored"
    if _git("cat-file", "-e", f"HEAD:{record_path}").returncode != 0:
        return f"{record_path} is not committed"
    head = _git("rev-parse", "HEAD").stdout.strip()
    if not descends(head, stored["commit"]):
        return f"HEAD {head[:7]} does not descend from {stored['commit'][:7]}"
    if registered_digest((repo_root() / page).read_text()) != stored["sha256"]:
        return f"the registered text of {page} changed"
    return ""


def provenance_problems(runs, stored: dict | None) -> list:
    """``run_provenance_problems`` against the registration record ``stored``; every run
    counts as stored before the registration where there is none."""
    if stored is None:
        return [f"{run['hash']}: stored before the registration" for run in runs]
    return run_provenance_problems(runs, stored["commit"])

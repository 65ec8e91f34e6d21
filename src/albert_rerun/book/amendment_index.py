"""The pre-registration page's first screen: one row for the registration and for each
amendment, read from the page and the git history.

For each it gives the date (from its heading), the commit that first added it to
book/preregistration.md (``git log -S``), the confirmatory runs trained when it was
written (as its own "Runs stored when it was written" line states them; ``runs_at``
counts those already committed at its commit, which a test checks it does not exceed),
what it changed in one line and whether it touched a rule, a margin, a seed or a verdict. The last two are
written once per amendment in ``data/preregistration-amendment-index.json``; a test
fails when the page holds an amendment that file does not describe.
"""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

HEADING = re.compile(r"^### Amendment (\d+), (\d{4}-\d\d-\d\d \d\d:\d\d UTC): (.*)$", re.M)
INDEX = "data/preregistration-amendment-index.json"
FLAGS = ("rule", "margin", "seed", "verdict")


def _git(root: Path, *args) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout


def headings(page_text: str) -> list:
    """[(number, date, title)] of the page's amendments, in order."""
    return [(int(n), date, title) for n, date, title in HEADING.findall(page_text)]


def design_hashes() -> set:
    """The 16-digit names of the 99 runs of the confirmatory design."""
    from ..studies import confirm_design
    from ..studies import conditions as C
    from ..engine.store import config_hash
    from ..paths import repo_root
    record = confirm_design.equal_time_record(repo_root() / "data" / "results"
                                              / confirm_design.STORE)
    configs = confirm_design.conditions(record["steps"])
    return {config_hash(C.seeded(configs[name], seed).to_dict())
            for name in confirm_design.CONDITIONS for seed in confirm_design.CONFIRM_SEEDS}


def runs_at(root: Path, commit: str, hashes: set) -> int:
    """How many of ``hashes`` had a stored run in the tree of ``commit``."""
    names = _git(root, "ls-tree", "-r", "--name-only", commit,
                 "data/results/confirm/pretrain/").split()
    return sum(Path(n).stem in hashes for n in names if n.endswith(".json"))


def first_commit(root: Path, text: str, path: str = "book/preregistration.md") -> str:
    out = _git(root, "log", "--format=%H", "--reverse", f"-S{text}", "--", path).split()
    if not out:
        raise LookupError(f"no commit adds {text!r} to {path}")
    return out[0]


STORED = re.compile(r"\*\*Runs stored when it was written\*\*: (all 99|none finished|(\d+) "
                    r"of the 99)")


def stated_runs(section: str) -> int:
    """The runs an amendment says were stored when it was written."""
    m = STORED.search(section)
    if m is None:
        raise LookupError("the amendment does not say which runs were stored")
    return 99 if m.group(1) == "all 99" else 0 if m.group(1) == "none finished" \
        else int(m.group(2))


def sections(page_text: str) -> dict:
    """{number: the amendment's text}, heading included."""
    starts = [(m.start(), int(m.group(1))) for m in HEADING.finditer(page_text)]
    ends = [s for s, _ in starts[1:]] + [len(page_text)]
    return {n: page_text[s:e] for (s, n), e in zip(starts, ends)}


def rows(root: Path) -> list:
    """The table's rows, the registration first."""
    page = (root / "book" / "preregistration.md").read_text()
    index = json.loads((root / INDEX).read_text())
    record = json.loads((root / "data" / "preregistration.json").read_text())
    for number, _, title in headings(page):
        if str(number) not in index["amendments"]:
            raise LookupError(f"amendment {number} ({title}) is not described in {INDEX}")
    hashes = design_hashes()
    out = [{"what": "Registration", "date": record["date"], "commit": record["commit"],
            "runs": runs_at(root, record["commit"], hashes), **index["registration"]}]
    texts = sections(page)
    for number, date, title in headings(page):
        described = index["amendments"][str(number)]
        commit = first_commit(root, f"### Amendment {number},")
        out.append({"what": f"Amendment {number}", "title": title, "date": date,
                    "commit": commit, "runs": stated_runs(texts[number]),
                    "committed runs": runs_at(root, commit, hashes), **described})
    return out


def table(root: Path, anchor=lambda row: "") -> str:
    """The first-screen table in markdown; ``anchor(row)`` links a row's name."""
    lines = ["| | date | commit | runs trained (of 99) | what it changed | touched a rule, "
             "margin, seed or verdict? |", "|---|---|---|---|---|---|"]
    for row in rows(root):
        touched = [f for f in FLAGS if row[f]]
        name = f"[{row['what']}]({anchor(row)})" if anchor(row) else row["what"]
        lines.append(f"| {name} | {row['date']} | `{row['commit'][:7]}` | {row['runs']} | "
                     f"{row['summary']} | {'yes: ' + ', '.join(touched) if touched else 'no'} |")
    return "\n".join(lines) + "\n"

"""The pre-registration page's first screen: one row for the registration and for each
amendment, read from the page and the git history.

For each it gives the date (from its heading), the commit that first added it to
book/preregistration.md (``git log -S``), the confirmatory runs trained when it was
written (as its own "Runs stored when it was written" line states them; ``runs_at``
counts those already committed at its commit, which a test checks it does not exceed),
what it changed in one line and whether it touched a rule, a margin, a seed or a verdict. The last two are
written once per amendment in ``data/preregistration-amendment-index.json``; a test
fails when the page holds an amendment that file does not describe.

The page shows ``table`` first, under its preface
(``book/_generated/preregistration-amendments.md``, written by
``preregistration.write_preregistration_parts``). In a shallow clone the history that
dates the commits is missing: the commit column then says so rather than naming the
clone's one commit (``git log -S`` there finds every text in it).
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


def shallow(root: Path) -> bool:
    """Whether ``root`` is a shallow clone (its history, and the commits, incomplete)."""
    return _git(root, "rev-parse", "--is-shallow-repository").strip() == "true"


def rows(root: Path) -> list:
    """The table's rows, the registration first. In a shallow clone "commit", "runs" of
    the registration and "committed runs" are None: the history that gives them is
    missing."""
    page = (root / "book" / "preregistration.md").read_text()
    index = json.loads((root / INDEX).read_text())
    record = json.loads((root / "data" / "preregistration.json").read_text())
    for number, _, title in headings(page):
        if str(number) not in index["amendments"]:
            raise LookupError(f"amendment {number} ({title}) is not described in {INDEX}")
    history = not shallow(root)
    hashes = design_hashes()
    out = [{"what": "Registration", "date": record["date"], "commit": record["commit"],
            "runs": runs_at(root, record["commit"], hashes) if history else None,
            **index["registration"]}]
    texts = sections(page)
    for number, date, title in headings(page):
        described = index["amendments"][str(number)]
        commit = first_commit(root, f"### Amendment {number},") if history else None
        out.append({"what": f"Amendment {number}", "title": title, "date": date,
                    "commit": commit, "runs": stated_runs(texts[number]),
                    "committed runs": runs_at(root, commit, hashes) if history else None,
                    **described})
    return out


def anchor(row: dict) -> str:
    """The label a row links to on the page: the registered text's box, or the
    amendment's dropdown (their ``:name:``)."""
    if row["what"] == "Registration":
        return "registered-text"
    return "amendment-" + row["what"].split()[-1]


def table(root: Path, anchor=anchor) -> str:
    """The first-screen table in markdown: one row for the registration and one per
    amendment, with four yes/no columns (``FLAGS``); ``anchor(row)`` (a label, or "")
    links a row's name."""
    lines = ["| | written (UTC) | commit | runs stored (of 99) | what it changed | "
             + " | ".join(f"changed a {f}?" for f in FLAGS) + " |",
             "|---|---|---|---|---|" + "---|" * len(FLAGS)]
    for row in rows(root):
        label = anchor(row)
        name = f"{{ref}}`{row['what']} <{label}>`" if label else row["what"]
        commit = f"`{row['commit'][:7]}`" if row["commit"] else "not in this clone"
        runs = "not in this clone" if row["runs"] is None else row["runs"]
        # the registration sets every rule; an amendment changes one or not (a cold
        # reader: "yes" meant "fixed" on the first row and "changed" on the others)
        flags = " | ".join(("set" if row["what"] == "Registration" else "yes")
                           if row[f] else "no" for f in FLAGS)
        lines.append(f"| {name} | {row['date'].removesuffix(' UTC')} | {commit} | {runs} | "
                     f"{row['summary']} | {flags} |")
    return "\n".join(lines) + "\n"

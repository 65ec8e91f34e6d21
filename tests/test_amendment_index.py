"""The pre-registration's first-screen table (book.preregistration.table)."""
import json
import re

import pytest

from albert_rerun.book import preregistration as A
from albert_rerun.paths import repo_root

ROOT = repo_root()


def test_every_amendment_on_the_page_is_described_once_and_in_order():
    page = (ROOT / "book" / "preregistration.md").read_text()
    numbers = [n for n, _, _ in A.headings(page)]
    assert numbers == list(range(1, len(numbers) + 1))
    index = json.loads((ROOT / A.INDEX).read_text())
    assert sorted(map(int, index["amendments"])) == numbers
    for described in [index["registration"], *index["amendments"].values()]:
        assert set(described) == {"summary", *A.FLAGS}
        assert len(described["summary"].split()) <= 25


def test_rows_come_from_the_page_and_history_and_no_claim_outruns_the_commits():
    rows = A.rows(ROOT)
    assert rows[0]["what"] == "Registration" and rows[0]["runs"] == 0
    for row in rows[1:]:
        # the runs an amendment says were trained include runs not yet committed, never
        # fewer than were committed at its own commit
        assert row["committed runs"] <= row["runs"] <= 99
        assert row["commit"] != rows[0]["commit"]
    assert [r["date"] for r in rows] == sorted(r["date"] for r in rows)


def test_the_stated_runs_are_read_from_the_amendments_own_words():
    assert A.stated_runs("**Runs stored when it was written**: all 99, as before") == 99
    assert A.stated_runs("**Runs stored when it was written**: none finished.") == 0
    assert A.stated_runs("**Runs stored when it was written**: 22 of the 99 runs") == 22
    with pytest.raises(LookupError):
        A.stated_runs("no such line")


def test_an_undescribed_amendment_fails(tmp_path):
    for part in ("book", "data"):
        (tmp_path / part).mkdir()
    page = (ROOT / "book" / "preregistration.md").read_text()
    (tmp_path / "book" / "preregistration.md").write_text(
        page + "\n### Amendment 99, 2027-01-01 00:00 UTC: new\n")
    (tmp_path / A.INDEX).write_text((ROOT / A.INDEX).read_text())
    (tmp_path / "data" / "preregistration.json").write_text(
        (ROOT / "data" / "preregistration.json").read_text())
    with pytest.raises(LookupError, match=r"amendment 99 \(new\) is not described"):
        A.rows(tmp_path)


def _history():
    if A.shallow(ROOT):
        pytest.skip("a shallow clone: the commits that date the amendments are missing")


def test_the_table_has_a_row_for_the_registration_and_each_amendment():
    """The first screen's table: one row each, in order, its four flags as yes/no columns
    read from the index, each row linked to its text on the page."""
    _history()
    page = (ROOT / "book" / "preregistration.md").read_text()
    index = json.loads((ROOT / A.INDEX).read_text())
    lines = A.table(ROOT).splitlines()
    assert lines[0].split("|")[-5:-1] == [f" changed a {f}? " for f in A.FLAGS]
    body = [line for line in lines[2:] if line.startswith("|")]
    numbers = [n for n, _, _ in A.headings(page)]
    assert len(body) == 1 + len(numbers)
    described = [index["registration"]] + [index["amendments"][str(n)] for n in numbers]
    names = ["{ref}`Registration <registered-text>`"] + [
        f"{{ref}}`Amendment {n} <amendment-{n}>`" for n in numbers]
    for k, (line, name, entry) in enumerate(zip(body, names, described)):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == name and cells[4] == entry["summary"]
        # the registration sets its rules; an amendment changed one or did not
        yes = "set" if k == 0 else "yes"
        assert cells[-4:] == [yes if entry[f] else "no" for f in A.FLAGS]
        assert re.fullmatch(r"`[0-9a-f]{7}`", cells[2])


def test_a_shallow_clone_names_no_commit(monkeypatch):
    """In a shallow clone ``git log -S`` would date every text to the clone's one
    commit; the table says the history is missing instead (the registration's commit
    is its stored record's)."""
    monkeypatch.setattr(A, "shallow", lambda root: True)
    monkeypatch.setattr(A, "first_commit", lambda *a: pytest.fail("read the history"))
    monkeypatch.setattr(A, "runs_at", lambda *a: pytest.fail("read the history"))
    body = A.table(ROOT).splitlines()[2:]
    record = json.loads((ROOT / "data" / "preregistration.json").read_text())
    assert f"| `{record['commit'][:7]}` | not in this clone |" in body[0]
    assert all("| not in this clone |" in line for line in body[1:])
    assert not any(re.search(r"`[0-9a-f]{7}`", line) for line in body[1:])


PAGE = ROOT / "book" / "preregistration.md"
INCLUDE = "```{{include}} _generated/preregistration-{}.md\n```"
FENCE = re.compile(r"^(:{3,}(\{\w+\}.*)?|:name: .*|:class: .*)$")


def _preface_and_rest(page: str):
    """The page's preface (the prose under its title) and what follows it."""
    title, rest = page.split("\n", 1)
    assert title.startswith("# ")
    match = re.search(r"^(```|:::|#)", rest, re.M)
    return rest[:match.start()], rest[match.start():]


def test_the_table_is_the_first_thing_after_a_short_preface():
    """Issue #41, section 4: under the title, a preface of at most 60 words, then the
    table of the registration and its amendments, before anything else."""
    preface, rest = _preface_and_rest(PAGE.read_text())
    assert 0 < len(preface.split()) <= 60
    first = rest.split("\n:::\n")[0]
    assert first == ":::{container} wide-table amendment-index\n" + INCLUDE.format(
        "amendments")


def test_the_page_reads_table_results_registered_box_pilot_amendments_in_order():
    page = PAGE.read_text()
    record = json.loads((ROOT / "data" / "preregistration.json").read_text())
    box = f"::::{{admonition}} Registered {record['date'][:10]}, unchanged since\n"
    order = [INCLUDE.format("amendments"), "\n## The results\n", INCLUDE.format("progress"),
             box, INCLUDE.format("record"), "<!-- registered text begins -->",
             "<!-- registered text ends -->", "\n::::\n", "\n## What the design was sized on\n",
             INCLUDE.format("pilot"), "\n## Amendments\n", INCLUDE.format("since"),
             "::::{dropdown} Amendment 1,"]
    at = [page.find(text) for text in order]
    assert -1 not in at and at == sorted(at), dict(zip(order, at))
    # the registered block lies inside the box, its labels beside its two rules
    inside = page[at[3]:page.index("\n::::\n", at[3])]
    assert ":name: registered-text\n" in inside
    assert "**The registered text begins**" in inside.split("<!-- registered text begins")[0]
    assert "**The registered text ends**" in inside.split("registered text ends -->")[1]
    # every generated part of the page is on it once
    for name in ("amendments", "record", "progress", "pilot", "since", "equivalence",
                 "reach", "lenient"):
        assert page.count(INCLUDE.format(name)) == 1, name


def test_each_amendment_is_a_dropdown_under_its_summary_with_its_text_unchanged():
    """Each amendment's dropdown is titled with its number, day and the index's one-line
    summary, and named for the table's link; with the dropdown's own lines taken out,
    its text is byte for byte the text of the commit that added it."""
    page = PAGE.read_text()
    index = json.loads((ROOT / A.INDEX).read_text())
    texts = A.sections(page)
    for number, date, _ in A.headings(page):
        summary = index["amendments"][str(number)]["summary"]
        opening = (f"::::{{dropdown}} Amendment {number}, {date[:10]}: {summary}\n"
                   f":name: amendment-{number}\n\n### Amendment {number},")
        assert opening in page, f"amendment {number} is not in its dropdown"
        # it closes before the next one opens
        tail = texts[number].rsplit("\n::::\n", 1)[1]
        assert all(FENCE.match(line) or not line.strip() for line in tail.splitlines()), number
    if A.shallow(ROOT):
        pytest.skip("a shallow clone: the commits that added the amendments are missing")
    def kept(text):  # the text without the dropdown's own lines
        return "".join(line for line in text.splitlines(keepends=True)
                       if not FENCE.match(line.rstrip("\n"))).rstrip()
    for number, text in texts.items():
        commit = A.first_commit(ROOT, f"### Amendment {number},")
        then = A.sections(A._git(ROOT, "show", f"{commit}:book/preregistration.md"))[number]
        assert kept(text) == kept(then), f"amendment {number}'s text changed"


def test_the_unchanged_text_check_can_fail():
    page = PAGE.read_text()
    text = A.sections(page)[1]
    assert not FENCE.match("**Runs stored when it was written**: none finished.")
    assert FENCE.match("::::{dropdown} Amendment 1, 2026-12-03: x") and FENCE.match("::::")
    edited = text.replace("none finished", "none had finished")
    assert "none had finished" in "".join(
        line for line in edited.splitlines(keepends=True) if not FENCE.match(line.rstrip("\n")))


def test_the_build_writes_the_table_as_the_first_part(tmp_path, monkeypatch):
    """write_preregistration_parts writes the table the page includes first, from the
    repository's history even when the book is built from a copy of its sources."""
    from albert_rerun.book import preregistration as P
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(ROOT / "data" / "results"))
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "preregistration.md").write_text(PAGE.read_text())
    paths = P.write_preregistration_parts(tmp_path)
    assert paths[0].name == "preregistration-amendments.md"
    text = paths[0].read_text()
    assert text.startswith(A.table(ROOT)) if not A.shallow(ROOT) else "| |" in text
    assert {p.name for p in paths} >= {f"preregistration-{n}.md" for n in
                                        ("amendments", "record", "progress", "pilot", "since")}

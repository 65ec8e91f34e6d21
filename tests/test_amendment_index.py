"""The pre-registration's first-screen table (book.amendment_index)."""
import json
import re

import pytest

from albert_rerun.book import amendment_index as A
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
    with pytest.raises(LookupError, match="amendment 99 \(new\) is not described"):
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
    assert lines[0].split("|")[-5:-1] == [f" {f}? " for f in A.FLAGS]
    body = [line for line in lines[2:] if line.startswith("|")]
    numbers = [n for n, _, _ in A.headings(page)]
    assert len(body) == 1 + len(numbers)
    described = [index["registration"]] + [index["amendments"][str(n)] for n in numbers]
    names = ["{ref}`Registration <registered-text>`"] + [
        f"{{ref}}`Amendment {n} <amendment-{n}>`" for n in numbers]
    for line, name, entry in zip(body, names, described):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[0] == name and cells[4] == entry["summary"]
        assert cells[-4:] == ["yes" if entry[f] else "no" for f in A.FLAGS]
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

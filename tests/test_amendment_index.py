"""The pre-registration's first-screen table (book.amendment_index)."""
import json

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

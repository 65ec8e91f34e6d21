"""Issue #41's words, on the page sources a reader meets first: the introduction (with
its generated parts), the how-to-read page and the page on what the
book can say at its scale. Each is rendered from
MyST to HTML (markdown-it, roles shown as their text, includes inlined) and read by
``tests/readability.py``: no sentence over 40 words, a median of 22 or fewer. The built
book's HTML gets the same check in tests/test_book.py. And no internal history (a dirty
commit, an issue number, a session) on a reader's page."""
import re
from pathlib import Path

import pytest

import readability
from albert_rerun.paths import repo_root

ROOT = repo_root()
ROLE = re.compile(r"\{([a-z:-]+)\}`([^`]*)`")
HISTORY = re.compile(r"\+dirty|issue #\d+|\bsession\b")
HISTORY_PAGES = ("changelog", "preregistration", "ladder")  # history by nature


def _role(match) -> str:
    role, text = match.group(1), match.group(2)
    if role.startswith("glue"):
        return "1"  # a glued number or word
    return re.sub(r"\s*<[^>]*>$", "", text)


def myst_html(text: str, folder: Path) -> str:
    """``text`` (MyST) as HTML: ``{include}`` inlined from ``folder``, a glossary's
    definitions as paragraphs, fences of admonitions and containers dropped, roles as
    their shown text."""
    from markdown_it import MarkdownIt
    out, lines, k, dropped = [], text.splitlines(), 0, 0
    while k < len(lines):
        line = lines[k]
        if dropped and line.strip() == "```":  # a dropped directive's closing fence: not
            dropped -= 1                      # a code fence opening over what follows
            k += 1
            continue
        if line.startswith("```{include}"):
            path = folder / line.split("}", 1)[1].strip()
            out += path.read_text().splitlines() if path.exists() else []
            k += 2  # the include and its closing fence
            continue
        if line.startswith("```{glossary}"):
            k += 1
            while not lines[k].startswith("```"):
                body = lines[k]
                out.append(body.strip() if body.startswith("  ") else "")
                k += 1
            k += 1
            continue
        if re.match(r"^(:::+|```)\{(admonition|container|figure)\}", line) or \
                re.match(r"^:::+\s*$", line) or re.match(r"^:[a-z]+:", line):
            dropped += line.startswith("```")
            k += 1
            continue
        out.append(line)
        k += 1
    return MarkdownIt("commonmark").enable("table").render(ROLE.sub(_role, "\n".join(out)))


@pytest.fixture(scope="module")
def reader_parts(tmp_path_factory):
    """book/ copied with its generated reader parts, from the stored results."""
    import os
    import shutil
    from albert_rerun.book import build
    root = tmp_path_factory.mktemp("words")
    shutil.copytree(ROOT / "book", root / "book",
                    ignore=shutil.ignore_patterns("_generated", "_build"))
    old = os.environ.get("ALBERT_RERUN_RESULTS")
    os.environ["ALBERT_RERUN_RESULTS"] = str(ROOT / "data" / "results")
    try:
        build.write_reader_pages(root, "cpu")
    finally:
        if old is None:
            os.environ.pop("ALBERT_RERUN_RESULTS")
        else:
            os.environ["ALBERT_RERUN_RESULTS"] = old
    return root / "book"


def page_summary(book: Path, name: str) -> dict:
    html = myst_html((book / name).read_text(), book)
    return readability.summary(readability.prose(html, "body"))


@pytest.mark.parametrize("page", ["intro.md", "how_to_read.md", "scale.md", "methods.md"])
def test_no_sentence_over_40_words_and_a_median_of_22(reader_parts, page):
    got = page_summary(reader_parts, page)
    html = myst_html((reader_parts / page).read_text(), reader_parts)
    long = [s for p in readability.prose(html, "body") for s in readability.sentences(p)
            if len(s.split()) > 40]
    assert not long, long
    assert got["median"] <= 22, got


def test_the_scale_page_and_the_gate_show_the_stored_two_sided_rung(reader_parts):
    """The scale page's part is written from the store (not its "not stored" line), so
    the words checked above are its words; the gate names the two-sided rung too."""
    from albert_rerun.profiles import resolve
    from albert_rerun.studies import count_rungs
    stored = count_rungs.stored(resolve("cpu").evaluation,
                                ROOT / "data" / "results" / count_rungs.STORE)
    level = count_rungs.levels(stored)["two-sided"]
    scale = (reader_parts / "_generated" / "scale-standing.md").read_text()
    assert f"| *two-sided count rung* | *{level:.3f}* |" in scale
    assert "two-sided count rung" in (reader_parts / "_generated" / "gate.md").read_text()


def test_the_contradicted_verdict_says_what_it_cannot_say():
    """Registration, section 8: a contradicted verdict tells nothing directly about the
    paper's scale, and the book says so (error 7)."""
    # chapter 6, whose confirmatory result reads reversed, says it in its first screen
    chapter = " ".join((ROOT / "notebooks" / "06_wall_clock.md").read_text().split())
    assert "This tells nothing directly about the paper's scale" in chapter


def test_the_how_to_read_page_defines_the_plain_readings(reader_parts):
    from albert_rerun.book import plain
    page = (reader_parts / "how_to_read.md").read_text()
    for word in plain.READING_WORDS:
        assert f"\n| {word} | " in page, word


def test_no_internal_history_on_a_readers_page_sources(reader_parts):
    """Commit hashes with +dirty, issue numbers and sessions belong in the changelog."""
    sources = [p for p in reader_parts.glob("*.md") if p.stem not in HISTORY_PAGES]
    sources += list((reader_parts / "_generated").glob("*.md"))
    sources += list((ROOT / "notebooks").glob("*.md"))
    found = [f"{p.name}: {m.group(0)}" for p in sources
             for m in HISTORY.finditer(p.read_text())]
    assert not found, found

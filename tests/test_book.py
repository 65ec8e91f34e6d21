"""The book builds at the smoke profile with warnings as errors, and renders in a browser.

The build happens in a temporary copy of the book sources, so a test run never
overwrites the chapters `make book` executed.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from albert_rerun.book import build_html, execute_chapters, write_environment_page
from albert_rerun.paths import repo_root

ROOT = repo_root()
BOOK_SOURCES = ("_config.yml", "_toc.yml", "book", "notebooks")


def _copy_sources(target: Path) -> Path:
    for name in BOOK_SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, target / name,
                            ignore=shutil.ignore_patterns("chapters", "_generated", "*.ipynb"))
        else:
            shutil.copy2(source, target / name)
    (target / "src").mkdir()  # marks the copy as a book root
    return target


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """Execute the chapters at smoke and build the HTML once for the session."""
    root = _copy_sources(tmp_path_factory.mktemp("book"))
    timings = execute_chapters(root, "smoke")
    write_environment_page(root, "smoke", timings)
    build_html(root)  # -W -n --keep-going: raises on any warning
    return root


@pytest.mark.slow
def test_book_builds_with_all_pages(built_book):
    html = built_book / "_build" / "html"
    chapters = [f"book/chapters/{source.stem}.html"
                for source in sorted((built_book / "notebooks").glob("[0-9][0-9]_*.md"))]
    assert len(chapters) == 9  # the recipe and the eight claims
    for page in ("book/intro.html", "book/ledger.html", "book/methods.html",
                 "book/bibliography.html", *chapters):
        assert (html / page).is_file(), page
    ledger = (html / "book" / "ledger.html").read_text()
    # every verdict cell is glued from a chapter: none is left pending
    assert "reproduced" in ledger and "pending" not in ledger
    assert ledger.count("inconclusive") + ledger.count("reproduced") >= 8
    methods = (html / "book" / "methods.html").read_text()
    assert "git commit" in methods and "torch" in methods
    assert "seeds per condition" in methods  # the generated profile table
    # MathJax is served from the book itself, not a CDN
    assert (html / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    assert 'src="../_static/mathjax/tex-mml-chtml.js' in ledger or "mathjax/tex-mml-chtml.js" in ledger
    assert "cdn.jsdelivr.net/npm/mathjax" not in ledger


@pytest.mark.slow
def test_unknown_citation_key_fails_the_build(built_book, tmp_path):
    root = tmp_path / "broken"
    shutil.copytree(built_book, root, ignore=shutil.ignore_patterns("_build"))
    intro = root / "book" / "intro.md"
    intro.write_text(intro.read_text() + "\nSee {cite:p}`nosuchkey2099`.\n")
    with pytest.raises(subprocess.CalledProcessError):
        build_html(root)


# -- the browser check -----------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def _render(url: str, profile_dir: Path, screenshot: Path = None) -> str:
    """The DOM after Chromium loaded and ran the page's scripts."""
    flags = CHROMIUM_FLAGS + [f"--user-data-dir={profile_dir}", "--window-size=1280,900"]
    if screenshot is not None:
        subprocess.run([CHROMIUM, *flags, f"--screenshot={screenshot}", url],
                       capture_output=True, timeout=120, check=True)
    return subprocess.run([CHROMIUM, *flags, "--virtual-time-budget=5000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=120, check=True).stdout


@pytest.fixture(scope="session")
def chromium():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium not installed: `apt-get install chromium` to run the browser check")
    return CHROMIUM


@pytest.mark.slow
def test_browser_renders_index_and_a_claim_chapter(built_book, chromium, tmp_path):
    html = built_book / "_build" / "html"
    # index.html redirects to the introduction
    assert "book/intro.html" in (html / "index.html").read_text()
    intro = _render((html / "book" / "intro.html").as_uri(), tmp_path / "p1",
                    screenshot=tmp_path / "intro.png")
    assert re.search(r"<title>[^<]*ALBERT, re-run", intro)
    assert (tmp_path / "intro.png").stat().st_size > 10_000

    chapter_path = html / "book" / "chapters" / "02_sharing_reductions.html"
    chapter = _render(chapter_path.as_uri(), tmp_path / "p2")
    assert re.search(r"<title>Claim 2", chapter)
    # a figure with its caption and an image that exists on disk
    figure = re.search(r'<figure[^>]*id="fig-grouped-sharing".*?</figure>', chapter, re.S)
    assert figure, "the grouped-sharing figure did not render"
    image = re.search(r'<img[^>]*src="([^"]+)"', figure.group(0)).group(1)
    assert (chapter_path.parent / image).resolve().is_file()
    assert "Parameters of ALBERT-base" in figure.group(0)
    # MathJax rendered the math (offline, from the vendored copy)
    assert "mjx-container" in chapter
    # a citation links into the bibliography, and its target exists there
    link = re.search(r'<a[^>]*href="([^"]*bibliography\.html)#([^"]+)"', chapter)
    assert link, "no citation link into the bibliography"
    bibliography = _render((chapter_path.parent / link.group(1)).resolve().as_uri(),
                           tmp_path / "p3")
    assert f'id="{link.group(2)}"' in bibliography
    assert "albert: a lite bert" in bibliography.lower()

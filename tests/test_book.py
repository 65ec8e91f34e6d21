"""The book builds at the smoke profile with warnings as errors, and every page of it
works in a browser when served from a sub-path, as GitHub Pages serves a project: in two
builds, without a repository (as `make book` builds it here) and with one (as the Pages
workflow does: the repository button and the chapters' launch buttons), the second
rendering the first one's executed chapters again. The chapters are the committed
notebooks, which nbval (run first on the same worker) has just executed and compared
with their committed outputs; they are not executed a second time here.

The build happens in a temporary copy of the book sources, so a test run never
overwrites the chapters `make book` executed. The browser check opens every page in
headless Chromium (Playwright driving Debian's chromium; no browser is downloaded) over
Python's http.server at http://127.0.0.1:PORT/<name>/, and on each page requires: no
console error and no failed request, every internal link and #anchor resolving, every
image loaded, the math rendered; on a chapter, its "Rerun this chapter" box and the
download of its .ipynb and .md, and the launch buttons' targets where the build has a
repository, none where it has not. It saves a screenshot of the ledger at 1280 px and
the time of each check in test-artifacts/.

ALBERT_RERUN_BOOK=<root> checks a book already built there (say, by `make book` at the
cpu profile) instead of building the smoke one.
"""
import functools
import json
import os
import re
import shutil
import subprocess
import threading
import time
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from albert_rerun.book.build import (build_html, execute, notebook_sources,
                                  render_committed_chapters, write_generated_parts)
from albert_rerun.book.rerun import BOX_CLASS, LAUNCH_BUTTONS
from albert_rerun.paths import repo_root

ROOT = repo_root()
ARTIFACTS = ROOT / "test-artifacts"
BOOK_SOURCES = ("_config.yml", "_toc.yml", "CITATION.cff", "book", "notebooks")
SUB_PATH = "albert-rerun"  # the <repo> of https://<owner>.github.io/<repo>/
REPOSITORY = "example-owner/albert-rerun"  # the second build's GitHub repository
BUILDS = ("plain", "with-repository")


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


def _store_smoke_runs(executed: set, scratch: Path) -> None:
    """What the notebooks store at smoke, in this process's results store: nbval, run
    first on this worker (the root conftest.py), executed the committed notebooks and
    trained their runs there; a notebook it did not run (this file run alone, say) is
    executed here at smoke, as the book build would, into ``scratch``."""
    for source in notebook_sources(ROOT):
        if f"notebooks/{source.stem}.ipynb" not in executed:
            execute(source, scratch / f"{source.stem}.ipynb", {"profile": "smoke"},
                    source.parent)


@pytest.fixture(scope="session")
def built_book(tmp_path_factory, nbval_executed):
    """The smoke book built once for the session (or the book built at
    $ALBERT_RERUN_BOOK): its chapters are the committed notebooks, not run again."""
    if os.environ.get("ALBERT_RERUN_BOOK"):
        return Path(os.environ["ALBERT_RERUN_BOOK"])
    root = _copy_sources(tmp_path_factory.mktemp("book"))
    # nbval, first on this worker, executed the committed notebooks at smoke in its
    # fresh results store (the root conftest.py's $ALBERT_RERUN_RESULTS), training their
    # runs, and checked every output against a fresh run: so the chapters of the smoke
    # book are the committed notebooks, parameterized as papermill would and finished as
    # `make book` finishes them (render_committed_chapters), and the generated pages and
    # the rerun boxes read the runs nbval stored.
    _store_smoke_runs(nbval_executed, tmp_path_factory.mktemp("executed"))
    timings = render_committed_chapters(root, ROOT / "notebooks")
    write_generated_parts(root, "smoke", timings)
    build_html(root)  # -W -n --keep-going: raises on any warning
    return root


@pytest.fixture(scope="session")
def built_book_with_repository(built_book, tmp_path_factory) -> Path:
    """The same executed chapters rendered again with REPOSITORY (no notebook runs
    twice): the folder whose _build/html holds it."""
    output = tmp_path_factory.mktemp("with-repository")
    build_html(built_book, REPOSITORY, output)
    return output


def toc_pages(toc: Path = ROOT / "_toc.yml") -> list:
    """The HTML pages the book has: its table of contents plus Sphinx's own pages."""
    spec = yaml.safe_load(toc.read_text())
    files = [spec["root"]] + [chapter["file"] for part in spec.get("parts", [])
                              for chapter in part["chapters"]]
    return ["index.html", "genindex.html", "search.html"] + [f"{f}.html" for f in files]


PAGES = toc_pages(Path(os.environ.get("ALBERT_RERUN_BOOK", ROOT)) / "_toc.yml")
LEDGER = next(page for page in PAGES if page.endswith("ledger.html"))


@pytest.mark.slow
def test_book_builds_with_all_pages(built_book):
    html = built_book / "_build" / "html"
    chapters = [f"book/chapters/{source.stem}.html"
                for source in sorted((built_book / "notebooks").glob("[0-9][0-9]_*.md"))]
    for page in PAGES + chapters:
        assert (html / page).is_file(), page
    # the browser check below covers every page that was built
    built = {str(p.relative_to(html)) for p in html.rglob("*.html")
             if p.relative_to(html).parts[0] not in ("_static", "_sources", "_downloads")}
    assert built == set(PAGES)
    methods = (html / "book" / "methods.html").read_text()
    assert "git commit" in methods and "torch" in methods
    # the introduction's citation from CITATION.cff: the reference and the BibTeX entry
    intro = re.sub(r"<[^>]+>", "", (html / "book" / "intro.html").read_text())
    citation = yaml.safe_load((built_book / "CITATION.cff").read_text())
    assert citation["title"] in intro and "@misc{albert_rerun" in intro
    assert "seeds per condition" in methods  # the generated profile table
    # MathJax is served from the book itself, not a CDN
    assert (html / "_static" / "mathjax" / "tex-mml-chtml.js").is_file()
    chapter = (html / "book" / "chapters" / "01_embedding_share.html").read_text()  # has math
    assert "mathjax/tex-mml-chtml.js" in chapter and "cdn.jsdelivr.net/npm/mathjax" not in chapter


@pytest.mark.slow
def test_methods_page_links_the_runs_csv_and_times_every_notebook(built_book):
    html = built_book / "_build" / "html"
    methods = (html / "book" / "methods.html").read_text()
    csv, = (html / "_downloads").rglob("runs-*.csv")
    assert f'href="../{csv.relative_to(html)}"' in methods
    header = csv.read_text().splitlines()[0].split(",")
    assert {"hash", "config.model.hidden_size", "commit"} <= set(header)
    for source in (built_book / "notebooks").glob("[0-9][0-9]_*.md"):
        assert f"<td><p>{source.stem}</p></td>" in methods, source.stem


@pytest.mark.slow
def test_chapters_fold_their_code_and_drop_papermills_cells(built_book):
    import nbformat
    for chapter in sorted((built_book / "book" / "chapters").glob("*.ipynb")):
        cells = [c for c in nbformat.read(chapter, as_version=4).cells
                 if c.cell_type == "code"]
        for cell in cells:
            tags = set(cell.metadata.get("tags", []))
            if tags & {"parameters", "injected-parameters"}:
                assert "remove-cell" in tags, chapter.name
            else:
                assert tags & {"hide-input", "remove-input", "remove-cell", "hide-cell",
                               "show-input"}
        assert any("injected-parameters" in c.metadata.get("tags", []) for c in cells)
        if chapter.stem[:2] in ("03", "04", "05", "06"):  # the decision in plain pandas
            shown = [c for c in cells if "show-input" in c.metadata.get("tags", [])]
            assert shown and "hide-input" not in shown[0].metadata["tags"], chapter.name
            assert "runs.pivot(" in shown[0].source, chapter.name
        page = (built_book / "_build" / "html" / "book" / "chapters"
                / chapter.with_suffix(".html").name).read_text()
        assert "injected-parameters" not in page and "tag_parameters" not in page


def _one_page_book(root: Path, text: str) -> Path:
    """The book's own configuration and bibliography around one page of ``text``: what
    a check of the build's settings needs, without building every page again."""
    root.mkdir(parents=True)
    shutil.copy2(ROOT / "_config.yml", root / "_config.yml")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/page\n")
    (root / "book").mkdir()
    shutil.copy2(ROOT / "book" / "references.bib", root / "book" / "references.bib")
    shutil.copytree(ROOT / "book" / "_static", root / "book" / "_static")
    # sphinxcontrib-bibtex resolves a citation against a bibliography directive
    (root / "book" / "page.md").write_text(text + "\n```{bibliography}\n```\n")
    (root / "src").mkdir()  # marks the copy as a book root
    return root


@pytest.mark.slow
def test_unknown_citation_key_fails_the_build(tmp_path):
    known = _one_page_book(tmp_path / "known", "# A page\n\nSee {cite:p}`lan2020albert`.\n")
    build_html(known)  # the same settings pass a known key (-W: no warning)
    broken = _one_page_book(tmp_path / "broken", "# A page\n\nSee {cite:p}`nosuchkey2099`.\n")
    with pytest.raises(subprocess.CalledProcessError):
        build_html(broken)


# -- the browser check -----------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
PAGE_TIMEOUT_MS = 60_000


@pytest.fixture(scope="session")
def browser():
    """Headless Debian chromium under Playwright (skipped without it, except in CI)."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is required in CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium not installed: `apt-get install chromium` to run the browser check")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(html: Path, site: Path):
    """``html`` copied to <site>/<SUB_PATH>/ and served from <site> on 127.0.0.1: yields
    (base URL, the served copy's folder)."""
    shutil.copytree(html, site / SUB_PATH)
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/{SUB_PATH}/", site / SUB_PATH
    server.shutdown()
    thread.join()


@pytest.fixture(scope="session")
def served_book(built_book, tmp_path_factory):
    """The book built without a repository, served from a sub-path."""
    yield from _serve(built_book / "_build" / "html", tmp_path_factory.mktemp("site"))


@pytest.fixture(scope="session")
def served_book_with_repository(built_book_with_repository, tmp_path_factory):
    """The book built with REPOSITORY, served from a sub-path."""
    yield from _serve(built_book_with_repository / "_build" / "html",
                      tmp_path_factory.mktemp("site-with-repository"))


@pytest.fixture(scope="session")
def check_times():
    """Seconds of each check on each page (and what it counted), written to
    test-artifacts/browser-checks.json at the end of the session."""
    times = {}
    yield times
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "browser-checks.json").write_text(json.dumps(times, indent=1) + "\n")


class _Ids(HTMLParser):
    """The id and name attributes of a page: the targets its anchors may name."""

    def __init__(self):
        super().__init__()
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        self.ids.update(value for key, value in attrs if key in ("id", "name") and value)


@functools.lru_cache(maxsize=None)
def _ids_of(path: Path) -> frozenset:
    parser = _Ids()
    parser.feed(path.read_text(errors="replace"))
    return frozenset(parser.ids)


def broken_links(hrefs, base_url: str, site: Path) -> list:
    """Every same-origin link that leaves the book's sub-path, names a missing file or
    names an anchor its target lacks."""
    base = urlsplit(base_url)
    problems = []
    for href in sorted(set(hrefs)):
        url = urlsplit(href)
        if url.scheme not in ("http", "https") or url.netloc != base.netloc:
            continue  # external or mailto: not this book's to check offline
        if not url.path.startswith(base.path):
            problems.append(f"{href}: outside the book's sub-path {base.path}")
            continue
        relative = unquote(url.path[len(base.path):])
        target = site / relative
        if relative == "" or relative.endswith("/"):
            target = target / "index.html"
        if not target.is_file():
            problems.append(f"{href}: no file {relative or 'index.html'}")
        elif url.fragment and unquote(url.fragment) not in _ids_of(target):
            problems.append(f"{href}: no id {unquote(url.fragment)!r} in {relative}")
    return problems


# Each check's script, run in the page. Images: lazy ones made eager, then each waited
# for. Math: MathJax waited for, then every .math element must hold its rendering.
IMAGES = """async () => {
  const images = Array.from(document.images);
  images.forEach(img => { img.loading = "eager"; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  return images.map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth}));
}"""
MATH = """async () => {
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; }
  const math = Array.from(document.querySelectorAll(".math"));
  return {count: math.length, unrendered: math.filter(m => !m.querySelector("mjx-container"))
                                              .map(m => m.textContent.slice(0, 60))};
}"""
LINKS = '() => Array.from(document.querySelectorAll("a[href]"), a => a.href)'
# checkVisibility, not offsetParent: Chromium lays out a closed <details>'s content
# under content-visibility: hidden, so it keeps an offsetParent while nothing shows.
# Code shown open: folded everywhere but in cells the book tags show-input (the few
# lines of pandas that compute a confirmatory decision), counted apart.
VISIBLE_CODE = """() => {
  const open = Array.from(document.querySelectorAll("div.cell_input"))
                    .filter(c => c.checkVisibility());
  const shown = open.filter(c => c.closest(".tag_show-input"));
  return [open.length - shown.length, shown.length];
}"""
# The header's buttons (sphinx-book-theme's groups) and the chapter's rerun box.
BUTTONS = """(box) => {
  const hrefs = sel => Array.from(document.querySelectorAll(sel), a => a.href);
  return {launch: hrefs(".dropdown-launch-buttons a"),
          downloads: hrefs(".dropdown-download-buttons a"),
          repository: hrefs("a.btn-source-repository-button"),
          box: Array.from(document.querySelectorAll("." + box),
                          b => [b.querySelector(".admonition-title").textContent.trim(),
                                (b.textContent.match(/papermill /g) || []).length])};
}"""


def _timed(times: dict, name: str, check):
    started = time.perf_counter()
    result = check()
    times[name] = round(time.perf_counter() - started, 3)
    return result


def _open(page, base_url: str, path: str, site: Path) -> None:
    page.goto(base_url + path, wait_until="load", timeout=PAGE_TIMEOUT_MS)
    if 'http-equiv="refresh"' in (site / path).read_text().lower():  # index.html
        page.wait_for_url(lambda url: url != base_url + path, timeout=PAGE_TIMEOUT_MS)
        page.wait_for_load_state("load")


def inspect_page(browser, base_url: str, path: str, site: Path, times: dict) -> dict:
    """Load the page ``path`` of the book at ``base_url`` and run every check on it,
    timing each in ``times`` (seconds); returns what failed, and what was counted."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors = []
    # The browser's own probe for /favicon.ico at the server's root, outside the book
    # (a project site's root is not the book's): the redirect page index.html makes it
    # before it moves on; every book page links its own icon.
    def outside(url: str) -> bool:
        return urlsplit(url).path == "/favicon.ico"
    page.on("console", lambda m: errors.append(m.text) if m.type == "error"
            and not outside(m.location.get("url", "")) else None)
    page.on("pageerror", lambda e: errors.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: errors.append(f"request failed: {r.url}"))
    page.on("response", lambda r: errors.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 and not outside(r.url) else None)
    _timed(times, "load", lambda: _open(page, base_url, path, site))
    images = _timed(times, "images", lambda: page.evaluate(IMAGES))
    math = _timed(times, "math", lambda: page.evaluate(MATH))
    links = page.evaluate(LINKS)
    broken = _timed(times, "links", lambda: broken_links(links, base_url, site))
    visible_code = _timed(times, "folded_code", lambda: page.evaluate(VISIBLE_CODE))
    buttons = _timed(times, "buttons", lambda: page.evaluate(BUTTONS, BOX_CLASS))
    failures = {"console": errors, "links": broken,
                "images": [i["src"] for i in images if i["width"] == 0],
                "math": math["unrendered"],
                "final_url": [] if f"/{SUB_PATH}/" in page.url else [page.url]}
    page.close()
    counts = {"links": len(links), "images": len(images), "math": math["count"],
              "visible_code": visible_code[0], "shown_code": visible_code[1]}
    return {**failures, "counts": counts, "buttons": buttons}


def launch_targets(stem: str) -> set:
    """The launch buttons' links for chapter ``stem`` of a book built with REPOSITORY:
    the repository's own notebook, on its main branch."""
    path = f"notebooks/{stem}.ipynb"
    return {f"{LAUNCH_BUTTONS['colab_url']}/github/{REPOSITORY}/blob/main/{path}",
            f"{LAUNCH_BUTTONS['binderhub_url']}/v2/gh/{REPOSITORY}/main?urlpath=tree/{path}"}


@pytest.mark.slow
@pytest.mark.parametrize("build", BUILDS)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_works_in_a_browser_from_a_sub_path(page, build, browser, request,
                                                       check_times):
    base_url, site = request.getfixturevalue(
        "served_book" if build == "plain" else "served_book_with_repository")
    times = {}
    started = time.perf_counter()
    result = inspect_page(browser, base_url, page, site, times)
    times["total"] = round(time.perf_counter() - started, 3)
    counts, buttons = result.pop("counts"), result.pop("buttons")
    check_times[f"{build}/{page}"] = {"seconds": times, "counts": counts}
    assert result == {"console": [], "links": [], "images": [], "math": [], "final_url": []}
    chapter = page.startswith("book/chapters/")
    if chapter:
        stem = Path(page).stem
        assert counts["visible_code"] == 0, "code cells are shown unfolded"
        if stem[:2] in ("03", "04", "05", "06"):  # the decision in a few lines of pandas
            assert counts["shown_code"] >= 1, "the confirmatory pandas is folded"
        # one box, with a papermill command per profile (or fewer: a profile without
        # the chapter's claim says so instead)
        (title, commands), = buttons["box"]
        assert title == "Rerun this chapter" and commands >= 1
        # the executed notebook and its MyST source (both resolve: the link check above)
        names = {urlsplit(url).path.rsplit("/", 1)[-1] for url in buttons["downloads"]}
        assert {f"{stem}.ipynb", f"{stem}.md"} <= names, buttons["downloads"]
    else:
        assert buttons["box"] == []
    if build == "plain":  # no repository, no button that needs one
        assert buttons["launch"] == [] and buttons["repository"] == [], buttons
        return
    assert buttons["repository"] == [f"https://github.com/{REPOSITORY}"]
    if chapter:
        assert set(buttons["launch"]) == launch_targets(stem), buttons["launch"]
        tracked = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--error-unmatch",
                                  f"notebooks/{stem}.ipynb"], capture_output=True)
        assert tracked.returncode == 0, "the launch target is not in the repository"
    else:
        assert buttons["launch"] == []


@pytest.mark.slow
def test_the_browser_check_catches_a_broken_page(browser, served_book, tmp_path):
    """The checks can fail: a page with a console error, a dead link, a dead anchor, a
    missing image and raw math reports each of them."""
    base_url, site = served_book
    (site / "broken.html").write_text(
        '<html><body><script>console.error("boom")</script>'
        '<a href="nowhere.html">x</a><a href="book/intro.html#no-such-id">y</a>'
        '<a href="/elsewhere.html">z</a><img src="missing.png">'
        '<span class="math">\\(x\\)</span></body></html>')
    result = inspect_page(browser, base_url, "broken.html", site, {})
    assert any("boom" in e for e in result["console"])
    assert any("missing.png" in e for e in result["console"])  # the failed request
    links = "\n".join(result["links"])
    assert len(result["links"]) == 3, links
    assert "outside the book's sub-path" in links and "no file nowhere.html" in links
    assert "no id 'no-such-id' in book/intro.html" in links
    assert len(result["images"]) == 1 and result["math"] == ["\\(x\\)"]


@pytest.mark.slow
def test_ledger_fits_1280_px_and_is_saved_as_a_screenshot(browser, served_book):
    base_url, _ = served_book
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(base_url + LEDGER, wait_until="load", timeout=PAGE_TIMEOUT_MS)
    page.evaluate("async () => { if (window.MathJax) await MathJax.startup.promise; }")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ledger-1280.png"), full_page=True)
    tables = page.evaluate("""() => Array.from(document.querySelectorAll("article table"),
      table => {
        let overflow = 0;  // the most any scrolling box around the table hides sideways
        for (let box = table.parentElement; box && box !== document.body; box = box.parentElement) {
          if (["auto", "scroll"].includes(getComputedStyle(box).overflowX)) {
            overflow = Math.max(overflow, box.scrollWidth - box.clientWidth);
          }
        }
        const broken = [];  // words of a cell that the layout splits over two lines
        for (const cell of table.querySelectorAll("td, th")) {
          const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/[A-Za-z]{4,16}/g)) {
              const range = document.createRange();
              range.setStart(node, m.index);
              range.setEnd(node, m.index + m[0].length);
              const tops = new Set(Array.from(range.getClientRects(), r => Math.round(r.top)));
              if (tops.size > 1) broken.push(m[0]);
            }
          }
        }
        return {right: table.getBoundingClientRect().right, overflow: overflow,
                broken: broken, first: table.innerText.slice(0, 40)};
      })""")
    width, page_overflow = page.evaluate(
        "() => [window.innerWidth, document.documentElement.scrollWidth - window.innerWidth]")
    page.close()
    assert tables, "the ledger has no table"
    for table in tables:  # every column on screen, nothing scrolled out of sight,
        assert table["right"] <= width and table["overflow"] <= 1, table
        assert not table["broken"], table  # and no word cut in two ("inconcl-usive")
    assert page_overflow <= 1
    assert (ARTIFACTS / "ledger-1280.png").stat().st_size > 20_000


# -- the book as a reader meets it (issue #26) -------------------------------------------

FIRST_SCREEN_PX = 1000
CHAPTER_PAGES = [p for p in PAGES if p.startswith("book/chapters/")]
GLOSSARY = "book/how_to_read.html"
# What the page shows a reader, in the text column: every visible table and image,
# with the column's width, each image's drawn (natural) and shown width and its file.
LAYOUT = """() => {
  const article = document.querySelector("article.bd-article") || document.querySelector("article");
  const column = article.getBoundingClientRect();
  const shown = el => el.checkVisibility() && el.getBoundingClientRect().width > 0;
  const box = document.querySelector(".bottom-line");
  return {column: {left: column.left, right: column.right, width: column.width},
          bottom_line: box ? box.getBoundingClientRect().top + window.scrollY : null,
          tables: Array.from(article.querySelectorAll("table")).filter(shown).map(t => {
            const r = t.getBoundingClientRect();
            return {left: r.left, right: r.right, width: r.width,
                    text: t.innerText, first: t.innerText.slice(0, 60)};
          }),
          images: Array.from(article.querySelectorAll("img")).filter(shown).map(i => {
            const r = i.getBoundingClientRect();
            return {src: i.currentSrc || i.src, natural: i.naturalWidth, width: r.width,
                    left: r.left, right: r.right};
          })};
}"""
RAW_VALUES = re.compile(r"\bNaN\b|<NA>|\b[0-9a-f]{16}\b")


def reader_layout(browser, base_url: str, path: str, site: Path, screenshot=None) -> dict:
    page = browser.new_page(viewport={"width": 1280, "height": FIRST_SCREEN_PX})
    _open(page, base_url, path, site)
    page.evaluate(IMAGES)  # every image loaded, so that its width is its own
    page.evaluate("async () => { if (window.MathJax && MathJax.startup) "
                  "await MathJax.startup.promise; }")
    layout = page.evaluate(LAYOUT)
    if screenshot:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / screenshot), full_page=False)
    page.close()
    return layout


def layout_problems(layout: dict, site: Path, base_url: str) -> list:
    """What overflows the text column, is illegible or shows raw values, on one page."""
    from figure_checks import MIN_FONT_PX, stored_font_px
    column, problems = layout["column"], []
    for table in layout["tables"]:
        if table["width"] > column["width"] + 1 or table["right"] > column["right"] + 1:
            problems.append(f"table wider than the column ({table['width']:.0f} > "
                            f"{column['width']:.0f} px): {table['first']!r}")
        raw = RAW_VALUES.search(table["text"])
        if raw:
            problems.append(f"table shows {raw.group(0)!r}: {table['first']!r}")
    for image in layout["images"]:
        name = image["src"].rsplit("/", 1)[-1]
        if image["width"] > column["width"] + 1:
            problems.append(f"image wider than the column: {name}")
        relative = unquote(urlsplit(image["src"]).path)[len(urlsplit(base_url).path):]
        font = stored_font_px(site / relative) if (site / relative).suffix == ".png" else None
        if font is None:
            if (site / relative).suffix == ".png":
                problems.append(f"figure without its font size recorded: {name}")
            continue
        on_page = font * image["width"] / image["natural"]
        if on_page < MIN_FONT_PX:
            problems.append(f"figure text {on_page:.1f} px on the page (drawn {font:.1f} "
                            f"px, shown at {image['width']:.0f} of {image['natural']} px): "
                            f"{name}")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("book/")])
def test_a_reader_meets_slim_tables_and_legible_figures(page, browser, served_book):
    """At 1280 px: no visible table or image wider than the text column, no raw NaN,
    <NA> or run hash in a visible table, and every figure's smallest text at least 10 px
    as shown (its recorded drawn size times shown over drawn width); on a chapter, the
    bottom-line box within the first screen."""
    base_url, site = served_book
    shots = {"book/intro.html": "intro-1280.png", LEDGER: "ledger-top-1280.png",
             "book/chapters/03_asymmetry.html": "chapter-03-1280.png",
             "book/chapters/05_dropout.html": "chapter-05-1280.png"}
    layout = reader_layout(browser, base_url, page, site, shots.get(page))
    assert layout_problems(layout, site, base_url) == []
    if page in CHAPTER_PAGES and page != LEDGER:  # the ledger opens with its table
        assert layout["bottom_line"] is not None, "no bottom-line box"
        assert layout["bottom_line"] < FIRST_SCREEN_PX - 150, layout["bottom_line"]


@pytest.mark.slow
def test_the_reader_checks_can_fail(served_book, tmp_path):
    """An overflowing table, a raw NaN and a figure drawn small and shown smaller are
    each reported."""
    from albert_rerun.book.figures import FONT_KEY
    from PIL import Image, PngImagePlugin
    base_url, site = served_book
    info = PngImagePlugin.PngInfo()
    info.add_text(FONT_KEY, "12")
    Image.new("RGB", (1200, 300)).save(site / "wide.png", pnginfo=info)
    layout = {"column": {"left": 0, "right": 676, "width": 676}, "bottom_line": 0,
              "tables": [{"left": 0, "right": 900, "width": 900, "text": "a NaN",
                          "first": "a NaN"}],
              "images": [{"src": base_url + "wide.png", "natural": 1200, "width": 660,
                          "left": 0, "right": 660}]}
    problems = layout_problems(layout, site, base_url)
    assert len(problems) == 3, problems
    assert "wider than the column" in problems[0] and "'NaN'" in problems[1]
    assert "figure text 6.6 px" in problems[2]


@pytest.mark.slow
def test_the_glossary_exists_and_each_term_is_linked_from_another_page(built_book):
    html = built_book / "_build" / "html"
    glossary = (html / GLOSSARY).read_text()
    terms = re.findall(r'<dt id="(term-[^"]+)"', glossary)
    assert len(terms) >= 15, terms
    for required in ("nats", "TOST", "Holm", "Avg", "pilot", "confirmatory", "gate",
                     "stage", "margin", "arm", "profile", "probe", "rung", "level"):
        assert f"term-{required}" in terms, required
    linked = set()
    for page in html.rglob("*.html"):
        if page.name != "how_to_read.html":
            linked |= set(re.findall(r'how_to_read\.html#(term-[^"]+)"', page.read_text()))
    assert set(terms) <= linked, sorted(set(terms) - linked)


@pytest.mark.slow
def test_the_gate_paragraph_is_written_in_full_on_one_page_only(built_book):
    """The gate rule (text.gate_rule) on the glossary page; the chapters link to it."""
    html = built_book / "_build" / "html"
    marker = "two standard errors under the unigram rung"
    pages = [str(p.relative_to(html)) for p in html.rglob("*.html")
             if marker in re.sub(r"<[^>]+>", "", p.read_text())]
    assert pages == [GLOSSARY], pages


READER_PAGES = ("book/intro.html", GLOSSARY, "book/scale.html", "book/methods.html",
                *(f"book/chapters/{p.stem}.html"  # the chapters, their outputs too
                  for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.md"))))
HISTORY = re.compile(r"\+dirty|issue #\d+|\bsession\b")
HISTORY_PAGES = ("changelog", "preregistration", "ladder")  # history by nature


@pytest.mark.slow
@pytest.mark.parametrize("page", READER_PAGES)
def test_the_built_reader_pages_keep_sentences_short(built_book, page):
    """tests/test_words.py's rule on the built HTML a reader meets: in the page's article
    text (paragraphs and list items outside code, tables and math), no sentence over 40
    words and a median of 22 or fewer."""
    import readability
    paragraphs = readability.prose((built_book / "_build" / "html" / page).read_text())
    long = [s for p in paragraphs for s in readability.sentences(p) if len(s.split()) > 40]
    assert not long, long
    got = readability.summary(paragraphs)
    assert got["sentences"] and got["median"] <= 22, got


@pytest.mark.slow
def test_no_internal_history_on_a_built_readers_page(built_book):
    """No dirty commit, issue number or session on any built page (its text as a reader
    sees it, or a downloaded file), except the history pages and two records kept as
    data: the runs CSV (each run's commit) and the methods page's row of the commit this
    copy of the book was built from (``build.write_environment_page``)."""
    from bs4 import BeautifulSoup
    html = built_book / "_build" / "html"
    found = []
    for path in sorted(html.rglob("*")):
        relative = path.relative_to(html)
        if not path.is_file() or relative.parts[0] in ("_static", "_sources") or \
                path.stem in HISTORY_PAGES:
            continue
        if path.suffix == ".html":
            soup = BeautifulSoup(path.read_text(), "html.parser")
            for hidden in soup(["script", "style"]):
                hidden.decompose()
            for row in soup("tr"):  # the build's own commit, a record (methods page)
                cells = row(["td", "th"])
                if cells and cells[0].get_text(" ").strip() == "git commit":
                    row.decompose()
            text = soup.get_text(" ")
        elif relative.parts[0] == "_downloads" and path.suffix in (".md", ".ipynb", ".py",
                                                                     ".txt", ".csv"):
            if path.suffix == ".csv" and path.name.startswith("runs-"):
                continue  # the runs CSV keeps a run's commit, '+dirty' included, as data
            text = path.read_text(errors="replace")
        else:
            continue
        found += [f"{relative}: {m.group(0)}" for m in HISTORY.finditer(text)]
    assert not found, found


# -- page budgets (issue #55): words of article text on the built pages ------------------

APPENDIX = "How this was tested"  # the _toc.yml part whose pages the book budget leaves out
INTRO = "book/intro.html"
BUDGETS = {INTRO: 1200, "book/budgets.html": 1500}
CHAPTER_BUDGET, BOOK_BUDGET = 2500, 20_000


def article_words(path: Path) -> int:
    import readability
    return readability.article_words(path.read_text())


def findings_pages(toc: Path) -> list:
    """The HTML pages outside the part ``APPENDIX`` of ``toc``, the root first."""
    spec = yaml.safe_load(toc.read_text())
    return [f"{spec['root']}.html"] + [f"{c['file']}.html" for part in spec["parts"]
                                       if part.get("caption") != APPENDIX
                                       for c in part["chapters"]]


def budget_problems(html: Path, pages: list) -> list:
    """Each page over its budget (``BUDGETS``; a chapter ``CHAPTER_BUDGET``), and the
    findings pages together over ``BOOK_BUDGET``."""
    problems, total = [], 0
    for page in pages:
        words = article_words(html / page)
        total += words
        limit = BUDGETS.get(page, CHAPTER_BUDGET if page.startswith("book/chapters/")
                            else None)
        if limit is not None and words > limit:
            problems.append(f"{page}: {words} words > {limit}")
    if total > BOOK_BUDGET:
        problems.append(f"the findings pages: {total} words > {BOOK_BUDGET}")
    return problems


@pytest.mark.slow
def test_the_findings_pages_keep_to_their_word_budgets(built_book):
    """The introduction at most 1,200 words of article text, the ladder's findings 1,500,
    each chapter 2,500, and every page outside "How this was tested" 20,000 together."""
    html = built_book / "_build" / "html"
    pages = findings_pages(built_book / "_toc.yml")
    assert INTRO in pages and "book/budgets.html" in pages
    assert "book/preregistration.html" not in pages and "book/ladder.html" not in pages
    assert budget_problems(html, pages) == []


def test_the_budget_check_can_fail(tmp_path):
    words = " ".join(["word"] * 1300)
    (tmp_path / "book" / "chapters").mkdir(parents=True)
    (tmp_path / INTRO).write_text(f"<article><p>{words}</p></article>")
    (tmp_path / "book/chapters/03_x.html").write_text(
        f"<article><p>{words} {words}</p></article>")
    problems = budget_problems(tmp_path, [INTRO, "book/chapters/03_x.html"])
    assert problems == [f"{INTRO}: 1300 words > 1200",
                        "book/chapters/03_x.html: 2600 words > 2500"]


# What a cold reader must get from the introduction's first two screens (issue #55):
# each a line of the page's text that a pattern must find.
FIRST_ANSWERS = {
    "(a) attention against FFN sharing": r"attention.*FFN.*Ours[^.]*?(holds|reversed|no "
                                         r"difference|undecided|not testable|not run)",
    "(b) SOP against NSP": r"SOP.*NSP.*Ours[^.]*?(holds|reversed|no difference|undecided|"
                           r"not testable|not run)",
    "(c) dropout": r"Dropout.*Ours[^.]*?(holds|reversed|no difference|undecided|"
                   r"not testable|not run)",
    "(d) size and training against ALBERT-base": r"parameters.*ALBERT-base.*tokens",
    "(e) which claims hold": r"these hold: .*Against the paper: .*Undecided: ",
}
SCREENS_TEXT = """(bottom) => {
  const article = document.querySelector("article.bd-article") || document.querySelector("article");
  return Array.from(article.querySelectorAll("p, li")).filter(el =>
      el.getBoundingClientRect().top + window.scrollY < bottom).map(el => el.innerText);
}"""


def missing_answers(lines: list) -> list:
    """The ``FIRST_ANSWERS`` no line of ``lines`` gives."""
    return [name for name, pattern in FIRST_ANSWERS.items()
            if not any(re.search(pattern, " ".join(line.split())) for line in lines)]


@pytest.mark.slow
def test_the_introductions_first_two_screens_answer_a_to_e(browser, served_book):
    """At 1280 px, the paragraphs and list items that start within the introduction's
    first two screens answer (a) to (e)."""
    base_url, site = served_book
    page = browser.new_page(viewport={"width": 1280, "height": FIRST_SCREEN_PX})
    _open(page, base_url, INTRO, site)
    lines = page.evaluate(SCREENS_TEXT, 2 * FIRST_SCREEN_PX)
    page.close()
    assert missing_answers(lines) == []


def test_the_first_screen_check_can_fail():
    lines = ["Dropout (chapter 5). Ours: holds here.", "Every model has 1 million parameters."]
    assert missing_answers(lines) == [
        "(a) attention against FFN sharing", "(b) SOP against NSP",
        "(d) size and training against ALBERT-base", "(e) which claims hold"]

"""Sentence lengths and words of a built page's prose as a reader meets it: ``prose`` takes
the article's paragraphs, ``sentences`` splits them, ``lengths`` counts words (the book's
rule: no sentence over 40 words, a median of 22 or fewer)."""
from __future__ import annotations

import re
import statistics

ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "cf.", "Fig.", "Eq.", "No.")
_END = re.compile(r"(?<=[.!?])[)\"”’]?\s+(?=[A-Z0-9\"“(`*])")
_SKIP = ("pre", "code", "table", "script", "style", "math", "figure", "nav", "footer")


def prose(html: str, selector: str = "article") -> list:
    """The text of each paragraph and list item inside ``selector``, outside code, tables
    and math."""
    from bs4 import BeautifulSoup
    soup = BeautifulSoup(html, "html.parser")
    out = []
    for root in soup.select(selector) or [soup]:
        for skipped in root.find_all(_SKIP):
            skipped.decompose()
        for node in root.find_all(["p", "li"]):
            if node.find(["p", "li"]):  # a list item holding paragraphs: theirs count
                continue
            text = " ".join(node.get_text(" ").split())
            if text:
                out.append(text)
    return out


_NOT_READ = ("pre", "code", "script", "style", "math", "nav", "footer")


def article_words(html: str) -> int:
    """Words a reader meets in the page's article, folded cell outputs included (a reader
    who unfolds one reads it), not code, math or navigation (the page budgets)."""
    from bs4 import BeautifulSoup
    soup = BeautifulSoup(html, "html.parser")
    article = soup.select_one("article") or soup
    for hidden in article.select(".cell_input, .MathJax, .headerlink, .toggle-details"):
        hidden.decompose()
    for skipped in article.find_all(_NOT_READ):
        if not (skipped.name in ("pre", "code") and skipped.find_parent(class_="cell_output")):
            skipped.decompose()
    return len(article.get_text(" ").split())


def sentences(text: str) -> list:
    """The sentences of one paragraph."""
    guarded = text
    for k, abbreviation in enumerate(ABBREVIATIONS):
        guarded = guarded.replace(abbreviation, f"\0{k}\0")
    parts = [p.strip() for p in _END.split(guarded) if p.strip()]
    out = []
    for part in parts:
        for k, abbreviation in enumerate(ABBREVIATIONS):
            part = part.replace(f"\0{k}\0", abbreviation)
        out.append(part)
    return out


def lengths(paragraphs) -> list:
    """Words in each sentence of ``paragraphs``."""
    return [len(s.split()) for p in paragraphs for s in sentences(p)]


def summary(paragraphs) -> dict:
    """{"sentences", "median", "longest", "over_40"} of ``paragraphs``."""
    counts = lengths(paragraphs)
    if not counts:
        return {"sentences": 0, "median": 0.0, "longest": 0, "over_40": 0}
    return {"sentences": len(counts), "median": float(statistics.median(counts)),
            "longest": max(counts), "over_40": sum(c > 40 for c in counts)}

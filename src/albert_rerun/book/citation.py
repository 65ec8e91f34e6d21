"""The book's citation from ``CITATION.cff``: the introduction shows it as a reference
formatted by pybtex in the bibliography's style and as a BibTeX entry."""
from __future__ import annotations

from pathlib import Path

import yaml

STYLE = "plain"  # as _config.yml's bibtex_default_style
KEY = "albert_rerun"


def bibtex_entry(citation: dict):
    """The book as a BibTeX ``@misc`` entry (as cffconvert and GitHub map software)."""
    from pybtex.database import Entry, Person
    fields = {"title": "{" + citation["title"] + "}"}  # braces: keep the title's case
    if "version" in citation:
        fields["note"] = f"Version {citation['version']}"
    url = citation.get("repository-code") or citation.get("url")
    if url:
        fields["url"] = url
    # an entity has one name, kept whole
    authors = [Person("{" + a["name"] + "}") if "name" in a else
               Person(first=a.get("given-names", ""), last=a["family-names"])
               for a in citation["authors"]]
    return Entry("misc", fields=fields, persons={"author": authors})


def paper_key(citation: dict, bibfile: Path) -> str | None:
    """The key in ``bibfile`` of the first work ``citation`` references (by title)."""
    from pybtex.database import parse_file
    if not citation.get("references"):
        return None

    def plain(title: str) -> str:
        return "".join(ch for ch in title.lower() if ch.isalnum())
    wanted = plain(citation["references"][0]["title"])
    for key, entry in parse_file(str(bibfile)).entries.items():
        if plain(entry.fields.get("title", "")) == wanted:
            return key
    return None


def citation_markdown(root: Path) -> str:
    """The introduction's citation section (``citation.md``) from ``root/CITATION.cff``."""
    from pybtex.database import BibliographyData
    from pybtex.plugin import find_plugin

    from ..paths import fill
    citation = yaml.safe_load((root / "CITATION.cff").read_text())
    bibliography = BibliographyData({KEY: bibtex_entry(citation)})
    style = find_plugin("pybtex.style.formatting", STYLE)()
    reference, = (" ".join(e.text.render_as("markdown").split())
                  for e in style.format_bibliography(bibliography).entries)
    key = paper_key(citation, root / "book" / "references.bib")
    if key is None or not citation.get("license"):
        raise ValueError("CITATION.cff must name the paper (references) and a licence")
    return fill("citation.md", {"message": " ".join(citation["message"].split()),
                                "reference": reference,
                                "bibtex": bibliography.to_string("bibtex").strip(),
                                "paper_key": key,
                                "licences": " and ".join(citation["license"])})


def write_citation_page(root: Path) -> Path:
    """``book/_generated/citation.md``, included by the introduction."""
    from .template import write_parts
    return write_parts(root / "book" / "_generated", {"citation.md": citation_markdown(root)})[0]

"""Every value a chapter's sentences take from its code is glued by that notebook: each
key its markdown names (``{glue:text}``, ``{glue}``, ``{glue:md}``, ``{glue:figure}``)
is among the keys its committed, executed ``.ipynb`` glued. A sentence that names a key
no cell glues would fail the book's -W build; this says which, without a build."""
import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
# a key, or 'other.ipynb::key' (a value another chapter glued), then an optional format
ROLE = re.compile(r"\{glue(?::text)?\}`((?:[^`:]+::)?[^`:]+)(?::[^`]*)?`")
DIRECTIVE = re.compile(r"^```\{glue(?::md|:figure|:math)?\}\s+(\S+)", re.M)


def used(markdown: str) -> set:
    return set(ROLE.findall(markdown)) | set(DIRECTIVE.findall(markdown))


def glued(notebook: dict) -> set:
    return {output["metadata"]["scrapbook"]["name"]
            for cell in notebook["cells"] for output in cell.get("outputs", [])
            if "scrapbook" in output.get("metadata", {})}


def test_the_pattern_finds_roles_and_directives():
    text = ("a {glue:text}`x_1:s` b {glue}`y` c\n```{glue:figure} fig\n:alt: z\n```\n"
            "```{glue:md} box\n:format: myst\n``` {glue:text}`01_a.ipynb::n:d`")
    assert used(text) == {"x_1", "y", "fig", "box", "01_a.ipynb::n"}


@pytest.mark.parametrize("source", sorted(NOTEBOOKS.glob("[0-9]*.md")), ids=lambda p: p.stem)
def test_every_key_a_chapter_names_is_glued(source):
    committed = source.with_suffix(".ipynb")
    if not committed.exists():
        pytest.skip(f"{committed.name} is not committed")
    missing = set()
    for key in used(source.read_text()):
        path, _, name = key.rpartition("::")
        other = NOTEBOOKS / path if path else committed
        if not other.exists() or name not in glued(json.loads(other.read_text())):
            missing.add(key)
    assert not missing, f"{source.name} names keys no cell glues: {sorted(missing)}"

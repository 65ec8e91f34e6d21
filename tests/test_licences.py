"""Licences and citation: every file has a licence (``reuse lint`` over the checkout, by
REUSE.toml), and CITATION.cff is valid Citation File Format 1.2.0 and names the paper.

The CFF check is check-jsonschema against the CFF 1.2.0 JSON schema vendored in
tests/schemas/ (Druskat et al. 2021, Citation File Format, version 1.2.0,
https://doi.org/10.5281/zenodo.5171937; CC-BY-4.0), the schema cffconvert validates
with: cffconvert 2.0.0 itself pins jsonschema<4, which check-jsonschema cannot use.
"""
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

from albert_rerun.paths import repo_root

ROOT = repo_root()
CFF_SCHEMA = ROOT / "tests" / "schemas" / "citation-file-format-1.2.0.json"


def reuse_lint(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reuse", "--root", str(root), "lint"],
                          capture_output=True, text=True, timeout=600)


def test_every_file_of_the_checkout_has_copyright_and_licence():
    result = reuse_lint(ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr


def test_reuse_lint_fails_on_an_unlicensed_file_and_on_a_missing_licence_text(tmp_path):
    """The check can fail: beside REUSE.toml and the texts its two files use, a file no
    annotation covers, then a licence text removed, each make it fail by name."""
    shutil.copy(ROOT / "REUSE.toml", tmp_path)
    (tmp_path / "LICENSES").mkdir()
    for name in ("Apache-2.0", "MIT"):
        shutil.copy(ROOT / "LICENSES" / f"{name}.txt", tmp_path / "LICENSES")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "module.py").write_text("x = 1\n")
    sentiment = tmp_path / "data" / "tasks" / "sentiment"
    sentiment.mkdir(parents=True)
    (sentiment / "train.jsonl.xz").write_bytes(b"\xfd7zXZ\x00")
    assert reuse_lint(tmp_path).returncode == 0
    (tmp_path / "stray.txt").write_text("no licence says what this is\n")
    result = reuse_lint(tmp_path)
    assert result.returncode != 0 and "stray.txt" in result.stdout
    (tmp_path / "stray.txt").unlink()
    (tmp_path / "LICENSES" / "MIT.txt").unlink()
    result = reuse_lint(tmp_path)
    assert result.returncode != 0 and "MIT" in result.stdout


def test_every_licence_has_its_text():
    expressions = " ".join(a["SPDX-License-Identifier"]
                           for a in tomllib.loads((ROOT / "REUSE.toml").read_text())
                           ["annotations"])
    used = {word for word in expressions.replace("(", " ").replace(")", " ").split()
            if word not in ("AND", "OR", "WITH")}
    assert used == {p.stem for p in (ROOT / "LICENSES").glob("*.txt")}
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["license"]["text"] in used  # the package's own


def check_cff(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "check_jsonschema", "--schemafile",
                           str(CFF_SCHEMA), str(path)], capture_output=True, text=True,
                          timeout=600)


def test_citation_file_is_valid_citation_file_format_1_2(tmp_path):
    result = check_cff(ROOT / "CITATION.cff")
    assert result.returncode == 0, result.stdout + result.stderr
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    # the check can fail: without authors, and with a licence that is not SPDX
    broken = tmp_path / "CITATION.cff"
    for change in ({"authors": None}, {"license": "Apache 2"}):
        data = {k: v for k, v in {**citation, **change}.items() if v is not None}
        broken.write_text(yaml.safe_dump(data))
        assert check_cff(broken).returncode != 0, change


def test_citation_names_the_paper_as_the_bibliography_does_and_the_package_version():
    from pybtex.database import parse_file
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    paper = parse_file(str(ROOT / "book" / "references.bib")).entries["lan2020albert"]
    reference, = citation["references"]
    assert reference["title"] == paper.fields["title"].replace("{", "").replace("}", "")
    assert str(reference["year"]) == paper.fields["year"]
    assert reference["url"] == paper.fields["url"]
    assert [a["family-names"] for a in reference["authors"]] == \
           [" ".join(p.last_names) for p in paper.persons["author"]]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert citation["version"] == pyproject["project"]["version"]
    assert set(citation["license"]) >= {pyproject["project"]["license"]["text"]}


def test_the_introduction_shows_the_citation_from_the_file(tmp_path):
    from albert_rerun.book.citation import write_citation_page
    for name in ("CITATION.cff", "book/references.bib"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    text = write_citation_page(tmp_path).read_text()
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert "{" + citation["title"] + "}" in text  # the BibTeX entry
    reference = next(line for line in text.splitlines() if line.startswith("> "))
    assert citation["title"] in reference.replace("\\", "")  # the formatted reference
    assert "{cite:t}`lan2020albert`" in text  # the paper of `references`, by its bib key
    assert "_generated/citation.md" in (ROOT / "book" / "intro.md").read_text()
    # from the same file: a changed title shows
    cff = tmp_path / "CITATION.cff"
    cff.write_text(cff.read_text().replace(citation["title"], "Another title"))
    assert "Another title" in write_citation_page(tmp_path).read_text()

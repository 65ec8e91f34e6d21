"""The claim notebooks: source pairing, parameter validation, nbval catching a change.

nbval itself runs over notebooks/*.ipynb (see pyproject's addopts), comparing a fresh
execution with the COMMITTED smoke-profile outputs.
"""
import json
import subprocess
import sys

import jupytext
import nbformat
import pytest

from albert_rerun.book.build import execute, notebook_sources
from albert_rerun.paths import repo_root
from albert_rerun.profiles import PROFILES
from albert_rerun.book.setup import notebook_setup

ROOT = repo_root()
SOURCES = notebook_sources(ROOT)


def test_there_are_claim_notebooks():
    assert len(SOURCES) == 10  # the recipe search, the eight claims and the ledger


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_committed_ipynb_matches_its_md(source):
    paired = source.with_suffix(".ipynb")
    assert paired.exists(), f"{paired} missing: run `make notebooks`"
    expected = jupytext.read(source)
    committed = nbformat.read(paired, as_version=4)
    assert [(c.cell_type, c.source) for c in committed.cells] == \
           [(c.cell_type, c.source) for c in expected.cells], \
        f"{paired.name} is stale against {source.name}: run `make notebooks`"
    outputs = [c for c in committed.cells if c.cell_type == "code" and c.get("outputs")]
    assert outputs, f"{paired.name} has no committed outputs for nbval to compare"


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_has_parameters_and_validates_them_first(source):
    # after the Colab bootstrap cell (tests/test_rerun.py), which does nothing here
    cells = [c for c in jupytext.read(source).cells if c.cell_type == "code"
             and "bootstrap" not in c.metadata.get("tags", [])]
    assert "parameters" in cells[0].metadata.get("tags", [])
    for name in ("profile", "seeds", "device"):
        assert f"{name} =" in cells[0].source
    assert "notebook_setup(profile, seeds, device)" in cells[1].source


@pytest.mark.parametrize("kwargs, name, allowed", [
    ({"profile": "fast"}, "profile", "smoke"),
    ({"profile": "cpu", "seeds": 0}, "seeds", ">= 1"),
    ({"profile": "cpu", "seeds": -2}, "seeds", ">= 1"),
    ({"profile": "cpu", "device": "tpu"}, "device", "cuda"),
])
def test_bad_parameter_names_parameter_and_allowed_values(kwargs, name, allowed):
    with pytest.raises(ValueError) as info:
        notebook_setup(**kwargs)
    assert f"'{name}'" in str(info.value) and allowed in str(info.value)


def test_bad_papermill_parameter_stops_notebook_at_first_cell(tmp_path):
    import papermill
    source = SOURCES[0]
    with pytest.raises(papermill.PapermillExecutionError) as info:
        execute(source, tmp_path / "out.ipynb", {"profile": "huge"}, source.parent)
    assert f"parameter 'profile' must be one of {tuple(PROFILES)}" in str(info.value)
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    code = [c for c in executed.cells if c.cell_type == "code"]
    # bootstrap, parameters, injected parameters, then the validating cell fails; nothing
    # after it runs
    failed = [i for i, c in enumerate(code)
              if any(o.get("output_type") == "error" for o in c.get("outputs", []))]
    assert failed == [3]
    assert all(c.get("execution_count") is None for c in code[4:])
    # papermill tags the cell it injects, as it does in the book's chapters (the smoke
    # book injects it without executing: build.render_committed_chapters)
    assert "injected-parameters" in code[2].metadata.get("tags", [])


def test_nbval_fails_when_a_committed_number_changes(tmp_path):
    """Plant a changed number in a committed output: nbval must report the mismatch."""
    source = ROOT / "notebooks" / "02_sharing_reductions.ipynb"
    notebook = json.loads(source.read_text())
    planted = False
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            # the layers table: a displayed DataFrame (text/plain and text/html), or a
            # printed one (a stream's text)
            for holder, key in [(output, "text"), *((output["data"], kind) for kind in
                                                    ("text/plain", "text/html")
                                                    if kind in output.get("data", {}))]:
                text = "".join(holder.get(key, []))
                if "reduction %" in text and "30.6" in text:
                    holder[key] = [text.replace("30.6", "30.7")]
                    planted = True
    assert planted, "the reductions cell moved: update this test"
    target = tmp_path / source.name
    target.write_text(json.dumps(notebook))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-q",
         "-p", "no:cacheprovider", str(target)],
        cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode != 0
    assert "30.7" in result.stdout and "30.6" in result.stdout

"""Rerunning a chapter from its page: the "Rerun this chapter" box, the launch buttons'
configuration, and the Colab bootstrap cell that every chapter starts with.

The bootstrap is tested where it matters, in an environment that cannot import
albert_rerun: a fresh virtual environment whose only packages are this one's
requirements (a path to .venv's site-packages, whose own .pth files, the editable
albert_rerun among them, are not processed). Its cell clones the repository from a
``file://`` URL of this checkout (its committed HEAD, as Colab clones the published one),
installs it there with ``pip install --no-deps -e`` (the requirements are all present,
so none is installed: no torch download), and the chapter's next cells run on.
"""
import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

from albert_rerun.book import rerun
from albert_rerun.book.build import notebook_sources
from albert_rerun.paths import repo_root
from albert_rerun.profiles import PROFILES

ROOT = repo_root()
SOURCES = notebook_sources(ROOT)


def bootstrap_cells(source: Path) -> list:
    return [c for c in jupytext.read(source).cells if c.cell_type == "code"
            and rerun.BOOTSTRAP_TAG in c.metadata.get("tags", [])]


# -- the bootstrap cell -----------------------------------------------------------------

def test_every_chapter_starts_with_the_same_bootstrap_cell():
    cells = {}
    for source in SOURCES:
        first = next(c for c in jupytext.read(source).cells if c.cell_type == "code")
        assert rerun.BOOTSTRAP_TAG in first.metadata.get("tags", []), source.name
        assert "remove-cell" in first.metadata["tags"], source.name  # not on the page
        assert len(bootstrap_cells(source)) == 1, source.name
        cells[source.stem] = first.source
    assert len(set(cells.values())) == 1, "the bootstrap cells differ between chapters"
    assert cells.keys() == rerun.CHAPTER_CLAIMS.keys()


def test_the_bootstraps_default_repository_is_the_citation_files():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    cell = bootstrap_cells(SOURCES[0])[0].source
    assert f'"{citation["repository-code"]}"' in cell
    assert '"ALBERT_RERUN_REPOSITORY"' in cell


def test_the_bootstrap_does_nothing_where_albert_rerun_imports(tmp_path):
    cell = bootstrap_cells(SOURCES[0])[0].source
    env = {**os.environ, "ALBERT_RERUN_REPOSITORY": "file:///nowhere",
           "ALBERT_RERUN_CLONE": str(tmp_path / "clone")}
    result = subprocess.run([sys.executable, "-c", cell], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout == "", result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def bare_environment(tmp_path):
    """A virtual environment with this one's packages but not albert_rerun."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; "
                           "print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "requirements-of-the-test.pth").write_text(sysconfig.get_paths()["purelib"]
                                                         + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ALBERT_RERUN_ROOT")}
    probe = subprocess.run([str(python), "-c", "import albert_rerun"], env=env,
                           cwd=tmp_path, capture_output=True, text=True)
    assert probe.returncode != 0, "albert_rerun is importable in the bare environment"
    return python, env


@pytest.mark.slow
def test_the_bootstrap_clones_installs_and_the_chapter_goes_on(tmp_path, bare_environment):
    python, env = bare_environment
    chapter = SOURCES[0]
    clone = tmp_path / "work" / "albert-rerun"
    clone.parent.mkdir()
    env.update(ALBERT_RERUN_REPOSITORY=f"file://{ROOT}", ALBERT_RERUN_CLONE=str(clone))
    # the bootstrap under test, then the clone's own parameters and set-up cells (the
    # checkout's may name modules its HEAD does not have yet), in one process, as a kernel
    script = tmp_path / "chapter.py"
    script.write_text(
        bootstrap_cells(chapter)[0].source + "\n\n"
        "import jupytext, pathlib\n"
        f"source = pathlib.Path({str(clone)!r}) / 'notebooks' / {chapter.name!r}\n"
        "code = [c for c in jupytext.read(source).cells if c.cell_type == 'code']\n"
        "first = next(i for i, c in enumerate(code)\n"
        "             if 'parameters' in c.metadata.get('tags', []))\n"
        "for cell in code[first:first + 2]:\n"
        "    exec(cell.source)\n"
        "print('profile:', settings.profile.name)\n"
        "import albert_rerun\n"
        "print('package:', albert_rerun.__file__)\n")
    result = subprocess.run([str(python), str(script)], cwd=clone.parent, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"albert_rerun installed from {clone}; requirements added: none" in result.stdout
    # the chapter's set-up cell ran at its default (it prints nothing itself: the page
    # opens with its bottom line, not a set-up printout)
    assert "profile: smoke" in result.stdout
    assert f"package: {clone}/src/albert_rerun/__init__.py" in result.stdout
    origin = subprocess.run(["git", "-C", str(clone), "remote", "get-url", "origin"],
                            capture_output=True, text=True, check=True).stdout.strip()
    assert origin == f"file://{ROOT}"
    # a new process of that environment (a spawned training worker) imports the clone's
    fresh = subprocess.run([str(python), "-c", "import albert_rerun.paths as p; "
                            "print(p.repo_root())"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert fresh.stdout.strip() == str(clone), fresh.stderr
    # run again, the cell reuses the clone and the installed package: it does nothing
    again = subprocess.run([str(python), "-c", bootstrap_cells(chapter)[0].source],
                           cwd=clone.parent, env=env, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and again.stdout == "", again.stderr


# -- the box ----------------------------------------------------------------------------

def footer_claims(source: Path):
    """The claims of the chapter footer's recompute command in a chapter's source."""
    match = re.search(r"chapter_footer\(.*?\[([^\]]*)\]\)\)", source.read_text(), re.S)
    return None if match is None else tuple(re.findall(r'"(\w+)"', match.group(1)))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_box_names_the_claims_of_each_chapters_footer(source):
    listed = rerun.CHAPTER_CLAIMS[source.stem]
    found = footer_claims(source)
    if listed is None:  # the ledger reads every claim's decisions
        assert "published_families" in source.read_text()
    else:
        assert (found or ()) == listed


def test_the_box_gives_each_profiles_command_runs_and_predicted_time():
    from albert_rerun.claims.conditions import profile_claims, step_flops
    from albert_rerun.claims.driver import planned_pretraining
    from albert_rerun.engine.bench import stored_flop_rate
    box = rerun.rerun_box("03_asymmetry")
    assert box.startswith("::::{admonition} Rerun this chapter")
    for profile in PROFILES:
        assert rerun.papermill_command("03_asymmetry", profile) in box
        claims = [c for c in ("asymmetry", "grouped") if c in profile_claims(profile)]
        configs = [c for stage in planned_pretraining(profile, names=claims).values()
                   for c in stage]
        trained = [c for c in configs if c.max_steps > 0]
        paragraph = next(line for line in box.splitlines()
                         if line.startswith(f"**`{profile}`**"))
        assert (f"{len(trained)} pretraining runs and {len(configs) - len(trained)} "
                "zero-step controls") in paragraph, paragraph
        if profile == "smoke":
            assert "not predicted" in paragraph
            continue
        flops = sum(step_flops(c) * c.max_steps for c in trained)
        for kind, where in (("cpu", "on one CPU worker"), ("cuda", f"on one {rerun.gpu_name()}")):
            text = rerun.duration(flops / stored_flop_rate(kind))
            assert f"{text} {where}" in paragraph, (kind, paragraph)
    assert "it does not carry grouped" in box  # cpu-long: asymmetry only
    assert "FRESH=1" in box


def test_a_profile_without_the_chapters_claim_says_so_and_gives_no_command():
    from albert_rerun.claims.conditions import CLAIMS, profile_claims
    missing = [(profile, claim) for profile in PROFILES for claim in CLAIMS
               if claim not in profile_claims(profile)]
    assert missing, "every profile carries every claim: nothing to test"
    chapter = {claims[0]: stem for stem, claims in rerun.CHAPTER_CLAIMS.items()
               if claims and len(claims) == 1}
    tested = 0
    for profile, claim in missing:
        if claim in chapter:
            box = rerun.rerun_box(chapter[claim])
            assert f"**`{profile}`** does not carry this chapter's claim ({claim})" in box
            assert rerun.papermill_command(chapter[claim], profile) not in box
            tested += 1
    assert tested


@pytest.mark.parametrize("stem", sorted(rerun.CHAPTER_CLAIMS))
def test_the_boxs_commands_are_papermill_command_lines(stem, tmp_path):
    """Each command parses with papermill's own command line, runs the committed notebook
    from the repository's root in notebooks/, at its profile, on the GPU for gpu."""
    import shlex

    from papermill.cli import papermill as cli
    box = rerun.rerun_box(stem)
    commands = [line for line in box.splitlines() if line.startswith(".venv/bin/papermill")]
    assert commands
    for command in commands:
        words = shlex.split(command)
        context = cli.make_context("papermill", words[1:])
        assert (ROOT / context.params["notebook_path"]).is_file()
        assert context.params["kernel"] == "python3"
        assert (ROOT / context.params["cwd"]).resolve() == ROOT / "notebooks"
        parameters = dict(context.params["parameters"])
        assert parameters["profile"] in PROFILES
        assert (parameters.get("device") == "cuda") == (parameters["profile"] == "gpu")


def test_the_box_goes_at_the_end_of_the_chapter(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title\n\nIntroduction."),
        nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("## Results")])
    path = tmp_path / "05_dropout.ipynb"
    nbformat.write(notebook, path)
    rerun.add_rerun_box(path, "05_dropout")
    cells = nbformat.read(path, as_version=4).cells
    assert [c.cell_type for c in cells] == ["markdown", "code", "markdown", "markdown"]
    assert cells[-1].source == rerun.rerun_box("05_dropout")
    assert cells[0].source.startswith("# Title")  # the title and bottom line come first
    with pytest.raises(ValueError, match="CHAPTER_CLAIMS"):
        rerun.rerun_box("99_unknown")


# -- the repository's buttons -----------------------------------------------------------

def test_repository_config_adds_the_buttons_to_the_books_config(tmp_path):
    (tmp_path / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    base = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert "launch_buttons" not in base and "repository" not in base  # none without one
    config = yaml.safe_load(rerun.repository_config(tmp_path, "someone/albert-rerun")
                            .read_text())
    assert config["repository"]["url"] == "https://github.com/someone/albert-rerun"
    assert config["launch_buttons"]["colab_url"] and config["launch_buttons"]["binderhub_url"]
    assert config["html"]["use_repository_button"] is True
    assert {k: v for k, v in config.items() if k not in ("repository", "launch_buttons",
                                                         "html")} == \
           {k: v for k, v in base.items() if k != "html"}
    for bad in ("someone", "https://github.com/someone/x", "a/b/c", ""):
        with pytest.raises(ValueError, match="owner/name"):
            rerun.repository_config(tmp_path, bad)


def test_the_pages_workflow_and_make_pass_the_repository():
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert 'REPOSITORY="$GITHUB_REPOSITORY"' in workflow
    makefile = (ROOT / "Makefile").read_text()
    assert "--repository $(REPOSITORY)" in makefile

"""Rerunning a chapter from its page: the "Rerun this chapter" box, the launch buttons'
configuration, and the Colab bootstrap cell that every chapter starts with.

The bootstrap is tested where it matters, in an environment that cannot import
albert_rerun: a fresh virtual environment whose only packages are this one's
requirements (a path to .venv's site-packages, whose own .pth files, the editable
albert_rerun among them, are not processed). Its cell clones the repository from a
``file://`` URL of this checkout (its committed HEAD, as Colab clones the published one),
installs it there with ``pip install --no-deps -e`` (the requirements are all present,
so none is installed: no torch download), and the chapter's next cells run on. The install
itself is scripts/kernel_install.py, which the cell runs; its own tests need no clone.
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
from albert_rerun.profiles import PROFILES, resolve

ROOT = repo_root()
BOOTSTRAP_TAG = "bootstrap"  # every chapter's first cell: it installs the package (Colab, Binder)
SOURCES = notebook_sources(ROOT)


def bootstrap_cells(source: Path) -> list:
    return [c for c in jupytext.read(source).cells if c.cell_type == "code"
            and BOOTSTRAP_TAG in c.metadata.get("tags", [])]


# -- the bootstrap cell -----------------------------------------------------------------

def test_every_chapter_starts_with_the_same_bootstrap_cell():
    cells = {}
    for source in SOURCES:
        first = next(c for c in jupytext.read(source).cells if c.cell_type == "code")
        assert BOOTSTRAP_TAG in first.metadata.get("tags", []), source.name
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


# -- the bootstrap's install script -----------------------------------------------------

KERNEL_INSTALL = ROOT / "scripts" / "kernel_install.py"


@pytest.fixture
def kernel_install():
    """scripts/kernel_install.py as a module (it is not in the package: the bootstrap runs
    it before albert_rerun is installed)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("kernel_install", KERNEL_INSTALL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bootstrap_runs_the_install_script_which_needs_only_the_standard_library():
    import ast
    cell = bootstrap_cells(SOURCES[0])[0].source
    assert 'root / "scripts" / "kernel_install.py"' in cell and KERNEL_INSTALL.is_file()
    imported = set()
    for node in ast.walk(ast.parse(KERNEL_INSTALL.read_text())):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module.split(".")[0])
    assert imported and imported <= sys.stdlib_module_names, imported - sys.stdlib_module_names


def test_the_install_script_flags_absent_and_other_pins_but_never_torch_or_ipykernel(
        kernel_install, monkeypatch):
    from importlib.metadata import version
    lacking = kernel_install.lacking
    assert not lacking(f"pytest=={version('pytest')}")
    assert lacking("pytest==0.0.1")
    assert lacking("no-such-distribution-of-albert-rerun==1.0")
    assert not lacking("torch==0.0.1") and not lacking("ipykernel==0.0.1")
    monkeypatch.setattr(kernel_install, "version", lambda name: "1.2.3+cu121")
    assert not lacking("anything==1.2.3")  # a local build of the pinned version
    assert lacking("anything==1.2.4")


def test_the_install_script_installs_what_is_lacking_and_says_so(kernel_install, tmp_path,
                                                                 monkeypatch, capsys):
    import importlib.util
    from importlib.metadata import version
    calls = []
    monkeypatch.setattr(kernel_install.subprocess, "run",
                        lambda command, check: calls.append(command))
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    build = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    package = ["--no-deps", *build, "-e", str(tmp_path)]
    requirements = tmp_path / "requirements.txt"
    # every pin satisfied (torch and ipykernel at any version): only the package
    requirements.write_text(f"# pins\ntorch==0.0.1\n\npytest=={version('pytest')}  # tests\n"
                            "ipykernel==0.0.1\n")
    assert kernel_install.install({"pytest", "torch"}, tmp_path) == []
    assert calls == [pip + package]
    assert capsys.readouterr().out == (f"albert_rerun installed from {tmp_path}; "
                                       "requirements added: none\n")
    # one pin at another version, already imported, and one absent
    calls.clear()
    requirements.write_text(f"pytest=={version('pytest')}\nnumpy==0.0.1\n"
                            "no-such-distribution-of-albert-rerun==1.0\n")
    added = ["numpy==0.0.1", "no-such-distribution-of-albert-rerun==1.0"]
    assert kernel_install.install({"numpy", "pytest"}, tmp_path) == added
    assert calls == [pip + added, pip + package]
    assert capsys.readouterr().out == (
        "installing 2 pinned requirements (a few minutes)\n"
        f"albert_rerun installed from {tmp_path}; requirements added: {added}\n"
        "restart the kernel and run all again: ['numpy==0.0.1'] were imported before\n")
    # the same, none of them imported yet: no restart
    assert kernel_install.install({"pytest"}, tmp_path) == added
    assert "restart" not in capsys.readouterr().out


def test_the_install_script_stops_with_pips_failure(tmp_path):
    """Run as the bootstrap runs it, on a checkout that pip cannot install: it exits
    with an error and does not say it installed anything."""
    (tmp_path / "scripts").mkdir()
    script = tmp_path / "scripts" / "kernel_install.py"
    script.write_text(KERNEL_INSTALL.read_text())
    (tmp_path / "requirements.txt").write_text("# nothing to install\n")
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1"}
    result = subprocess.run([sys.executable, str(script), "sys", "os"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "kernel_install:" in result.stderr and "failed" in result.stderr, result.stderr
    assert "albert_rerun installed" not in result.stdout


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
    from albert_rerun.studies.conditions import profile_claims, step_flops
    from albert_rerun.studies.driver import planned_pretraining
    from albert_rerun.engine.bench import stored_flop_rate
    box = rerun.rerun_box("03_asymmetry")
    assert box.startswith("::::{admonition} Rerun this chapter")
    for profile in PROFILES:
        assert rerun.papermill_command("03_asymmetry", profile) in box
        claims = [c for c in ("asymmetry", "grouped") if c in profile_claims(resolve(profile))]
        configs = [c for stage in planned_pretraining(resolve(profile), names=claims).values()
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
    from albert_rerun.studies.conditions import CLAIMS, profile_claims
    missing = [(profile, claim) for profile in PROFILES for claim in CLAIMS
               if claim not in profile_claims(resolve(profile))]
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

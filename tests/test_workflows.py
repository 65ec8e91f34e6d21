"""Every GitHub Actions workflow lints clean, and the Pages one publishes the book.

The linter is check-jsonschema with its bundled GitHub-workflow schema
(``--builtin-schema vendor.github-workflows``): it reads no network.
"""
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from albert_rerun.paths import repo_root

WORKFLOWS = sorted((repo_root() / ".github" / "workflows").glob("*.y*ml"))
LINTER = Path(sys.executable).with_name("check-jsonschema")


def lint(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINTER), "--builtin-schema", "vendor.github-workflows",
                           str(path)], capture_output=True, text=True, timeout=600)


def test_there_are_workflows_and_the_linter():
    assert WORKFLOWS, "no workflow in .github/workflows"
    assert LINTER.is_file(), f"{LINTER} missing: pip install -r requirements.txt"


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_workflow_lints_clean(path):
    result = lint(path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_linter_catches_an_unknown_key(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  build:\n    runs-on: ubuntu-latest\n"
                      "    stepz:\n      - run: make book\n")
    result = lint(broken)
    assert result.returncode != 0 and "stepz" in result.stdout


def _steps(job: dict) -> dict:
    """A job's steps by the action they use (or 'run')."""
    return {step.get("uses", "run").split("@")[0]: step for step in job["steps"]}


def test_pages_workflow_builds_the_book_and_deploys_it():
    spec = yaml.safe_load((repo_root() / ".github" / "workflows" / "pages.yml").read_text())
    assert spec["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert spec["concurrency"]["group"] == "pages"
    build, deploy = spec["jobs"]["build"], spec["jobs"]["deploy"]
    steps = _steps(build)
    assert steps["actions/setup-python"]["with"]["python-version"] == "3.11"
    assert "make book" in steps["run"]["run"] and "FRESH" not in steps["run"]["run"]
    assert steps["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    deployment = _steps(deploy)["actions/deploy-pages"]
    assert deploy["environment"]["url"] == f"${{{{ steps.{deployment['id']}.outputs.page_url }}}}"

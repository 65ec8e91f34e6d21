"""What made a result: git commit, package versions, machine, time."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from importlib import metadata

from ..paths import repo_root

PACKAGES = ("torch", "numpy", "sentencepiece", "pandas", "matplotlib", "transformers",
            "jupyter-book", "sphinx", "myst-nb", "papermill", "jupytext", "nbval",
            "statsmodels", "scikit-learn", "safetensors", "pytorch-optimizer")


def git_commit() -> str:
    """HEAD's hash, with '+dirty' when tracked files differ; outside git, the value of
    $ALBERT_RERUN_GIT_COMMIT (set when a copy of the tree runs elsewhere) or 'unknown'."""
    if os.environ.get("ALBERT_RERUN_GIT_COMMIT"):
        return os.environ["ALBERT_RERUN_GIT_COMMIT"]
    try:
        root = repo_root()
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=root, capture_output=True, text=True).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError, FileNotFoundError):
        return "unknown"


def short_commit(commit: str) -> str:
    """A git hash cut to 7 digits, keeping a '+dirty' mark; other values as they are."""
    head, dirty, _ = str(commit).partition("+dirty")
    if len(head) == 40 and all(c in "0123456789abcdef" for c in head):
        head = head[:7]
    return head + ("+dirty" if dirty else "")


def package_versions(names=PACKAGES) -> dict:
    """Installed versions of the packages that can change a result."""
    versions = {"python": platform.python_version()}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict:
    """The machine a result was computed on."""
    import torch
    info = {"platform": platform.platform(), "cpu": cpu_model(),
            "cpu_count": os.cpu_count(), "torch_threads": torch.get_num_threads()}
    if torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        info["memory_gib"] = round(pages / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return info


def record() -> dict:
    """Everything above plus the time, for a stored result or the methods page."""
    now = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return {"git_commit": git_commit(), "packages": package_versions(),
            "machine": machine(), "utc_time": now}

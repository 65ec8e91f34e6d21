"""Install albert_rerun into a notebook kernel's Python that cannot import it (Colab,
Binder): every chapter's first cell (tagged ``bootstrap``) finds the checkout around the
notebook or clones one, then runs this script with the kernel's interpreter and the names
of the modules the kernel has imported::

    python scripts/kernel_install.py [IMPORTED_MODULE ...]

It installs the pinned requirements (the checkout's requirements.txt) that this Python
lacks or has at another version, but for its own torch and ipykernel (made for its GPU
and its notebook server), then the package (``pip install --no-deps -e``, without build
isolation where setuptools is present), and says what it added; where a requirement it
installed at another version was imported already, it asks for a restart of the kernel.

Standard library only, and Python 3.9 or later: albert_rerun and its requirements are
not installed yet, and the kernel's Python is the one that Colab or Binder gives.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The kernel's own builds: installed if absent, never replaced.
KEPT = ("torch", "ipykernel")


def pins(requirements: Path) -> list[str]:
    """The ``name==version`` lines of a requirements file, without comments."""
    lines = (line.split("#")[0].strip() for line in requirements.read_text().splitlines())
    return [line for line in lines if line]


def lacking(pin: str) -> bool:
    """Whether this Python lacks ``pin``: not installed, or installed at another version
    (a local build's ``+cu121`` aside) unless it is one of ``KEPT``."""
    name, _, pinned = pin.partition("==")
    try:
        installed = version(name).split("+")[0]
    except PackageNotFoundError:
        return True
    return name not in KEPT and installed != pinned


def install(imported, root: Path = ROOT) -> list[str]:
    """Install what ``root``'s requirements lack, then the package from ``root``; the pins
    it installed. ``imported``: the module names the kernel has imported."""
    missing = [pin for pin in pins(root / "requirements.txt") if lacking(pin)]
    loaded = [pin for pin in missing if pin.split("==")[0].replace("-", "_") in imported]
    pip = [sys.executable, "-m", "pip", "install", "--quiet"]
    if missing:
        print(f"installing {len(missing)} pinned requirements (a few minutes)", flush=True)
        subprocess.run(pip + missing, check=True)
    build = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") else []
    subprocess.run(pip + ["--no-deps", *build, "-e", str(root)], check=True)
    print(f"albert_rerun installed from {root}; requirements added: {missing or 'none'}",
          flush=True)
    if loaded:
        print(f"restart the kernel and run all again: {loaded} were imported before",
              flush=True)
    return missing


if __name__ == "__main__":
    try:
        install(set(sys.argv[1:]))
    except subprocess.CalledProcessError as error:  # pip has said why, on stderr
        sys.exit(f"kernel_install: {' '.join(map(str, error.cmd))} failed "
                 f"(exit status {error.returncode})")

"""nbval under other CPU kernels (issue #39): the committed notebook outputs must not
depend on the machine that wrote them.

Each variant is an environment variable on the whole nbval process, and so on its
notebook kernels (OpenBLAS reads its core type when numpy loads, ATen its capability
when torch loads):

- ``openblas``: another OpenBLAS kernel behind numpy, scipy and scikit-learn
  (``OPENBLAS_CORETYPE``): Haswell, as an AVX2 machine runs, or Sandybridge where this
  machine is itself an AVX2 one without AVX-512;
- ``aten-default`` and ``aten-avx2``: PyTorch's other vector kernels
  (``ATEN_CPU_CAPABILITY``);
- ``threads-2``: two torch threads instead of one (``ALBERT_RERUN_THREADS``).

``python tests/nbval_variants.py [NOTEBOOK ...]`` (``make nbval-variants``) runs nbval on
the given notebooks (default: all) under every variant, each in a fresh results store
(the root conftest.py gives every pytest process its own), so that the smoke runs are
trained under the variant too, and prints the kernels that ran. tests/test_nbval_variants.py
runs one notebook under each variant inside `make test`, reading the runs that nbval's
run of the committed notebooks stored on its worker.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SANITIZE = ROOT / "tests" / "nbval_sanitize.cfg"


def cpu_flags() -> set:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    line = next((l for l in text.splitlines() if l.startswith("flags")), "")
    return set(line.split(":", 1)[-1].split())


def openblas_coretype(flags: set | None = None) -> str:
    """The OpenBLAS kernel that this machine does not run by itself: Haswell (AVX2) on an
    AVX-512 machine, Sandybridge (AVX) on an AVX2 one."""
    flags = cpu_flags() if flags is None else flags
    return "Haswell" if "avx512f" in flags else "Sandybridge"


def variants() -> dict:
    return {"openblas": {"OPENBLAS_CORETYPE": openblas_coretype()},
            "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
            "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
            "threads-2": {"ALBERT_RERUN_THREADS": "2"}}


KERNELS = """
import json, threadpoolctl, numpy, scipy.linalg, sklearn.linear_model, torch
from albert_rerun.engine.pretrain import cpu_threads
blas = sorted({i.get("architecture", "?") for i in threadpoolctl.threadpool_info()
               if i.get("internal_api") == "openblas"})
print(json.dumps({"openblas": blas, "aten": torch.backends.cpu.get_cpu_capability(),
                  "torch_threads": cpu_threads()}))
"""


def kernels(env: dict) -> dict:
    """What a process started with ``env`` runs: the OpenBLAS core types threadpoolctl
    reports, ATen's CPU capability, the torch threads the engine takes."""
    result = subprocess.run([sys.executable, "-c", KERNELS], env=env, capture_output=True,
                            text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def variant_env(name: str, base: dict | None = None) -> dict:
    env = dict(os.environ if base is None else base)
    env.setdefault("ALBERT_RERUN_THREADS", "1")
    env.update(variants()[name])
    return env


def run_nbval(notebooks: list, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    """nbval on ``notebooks`` (paths), the suite's sanitizing, no other addopts."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-o", "addopts=", "--nbval", "--nbval-current-env",
               "--nbval-sanitize-with", str(SANITIZE), *map(str, notebooks)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebooks", nargs="*", help="notebooks/*.ipynb (default: all)")
    parser.add_argument("--variant", action="append", choices=tuple(variants()),
                        help="only these variants (default: all)")
    args = parser.parse_args(argv)
    notebooks = [Path(n).resolve() for n in args.notebooks] or \
        sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    failed = []
    print(f"this machine's own kernels: {kernels({**os.environ, 'ALBERT_RERUN_THREADS': '1'})}",
          flush=True)
    for name in args.variant or variants():
        env = variant_env(name)
        # a fresh store per variant: the root conftest.py of the repository gives every
        # pytest process its own, so the smoke runs are trained under the variant
        env.pop("ALBERT_RERUN_RESULTS", None)
        start = time.perf_counter()
        result = run_nbval(notebooks, env, ROOT)
        seconds = time.perf_counter() - start
        summary = (result.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"{name}: {variants()[name]} kernels {kernels(env)}: {summary} "
              f"({seconds:.0f} s)", flush=True)
        if result.returncode != 0:
            failed.append(name)
            print(result.stdout[-6000:], result.stderr[-2000:], sep="\n", flush=True)
    print("all variants pass" if not failed else f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

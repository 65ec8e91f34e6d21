"""scripts/device_gpu.sh, dry-run on the CPU at the smoke profile: it checks the tree,
runs the bench at tiny sizes, the learning-rate search and its part's runs before a
start deadline, packs the results into $OUT and prints each run's tokens/s; run again,
it trains nothing that is stored (and, with --no-bench, skips the bench).

The learning-rate search's six smoke runs come stored (tests/fixtures/gpu-search-smoke,
``SEARCH_RUNS``): the dry run scores them and picks from them, as a call after an
earlier one does, and trains only its part's runs (the dropout claim's two and their
controls), which check the training path and the packing of this call's weights.
Refresh the stored ones when the search's configs change (the test says so):

    ALBERT_RERUN_RESULTS=/tmp/search python -m albert_rerun.studies.gpu_search \
        --profile smoke --device cpu
    cp /tmp/search/smoke/pretrain/* tests/fixtures/gpu-search-smoke/pretrain/
"""
import json
import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from albert_rerun.paths import repo_root

SCRIPT = repo_root() / "scripts" / "device_gpu.sh"
SEARCH_RUNS = Path(__file__).parent / "fixtures" / "gpu-search-smoke" / "pretrain"


def _store_search_runs(results: Path) -> None:
    """The smoke search's six runs (training records and weights) into ``results``,
    after checking that they are the current search's: the same config hashes."""
    import shutil

    from albert_rerun.engine.store import config_hash
    from albert_rerun.profiles import resolve
    from albert_rerun.studies import gpu_search
    grid = gpu_search.conditions(resolve("smoke"))
    wanted = {config_hash(config.to_dict()) for config in grid.values()}
    stored = {p.stem for p in SEARCH_RUNS.glob("*.json")}
    assert stored == wanted, ("tests/fixtures/gpu-search-smoke is not the smoke search's "
                              "runs: refresh it as this module's docstring says")
    shutil.copytree(SEARCH_RUNS, results / "smoke" / "pretrain")


def _call(tmp_path: Path, out: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "OUT": str(out), "ALBERT_RERUN_RESULTS": str(tmp_path / "results"),
           "PYTHON": sys.executable}  # the script's python: this one, not the PATH's
    # two workers, the script's parallel path (on the GPU: four runs side by side)
    return subprocess.run(["bash", str(SCRIPT), "--part", "1", "--dry-run", "--seconds", "600",
                           "--reserve", "20", "--workers", "2", "--claims", "dropout", *args],
                          cwd=repo_root(),
                          env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.long  # opt-in (make test-long): two calls of the script, about 2 minutes
def test_device_script_dry_run_packs_results_and_reruns_only_what_is_missing(tmp_path):
    out = tmp_path / "out"
    _store_search_runs(tmp_path / "results")
    first = _call(tmp_path, out)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    log = first.stdout
    assert "data files match the manifest" in log and "== bench: exit 0" in log
    assert "[gpu learning-rate search] 6 runs, 0 to train" in log  # the stored ones
    assert "[gpu learning-rate search] picked LAMB" in log
    assert "[part 1/2] claims: dropout" in log and "[pretrain] 4 runs, 4 to train" in log
    bench = json.loads((out / "bench-cpu.json").read_text())
    assert bench["profile"] == "smoke" and "loop_over_bare" in bench["ratios"]
    assert {m["kind"] for m in bench["measurements"]} == {"loop", "bare"}  # no HF: a dry run
    (packed,) = bench["packed"]  # as many loops side by side as --workers
    assert packed["parties"] == 2 and len(packed["rounds"]) == 2
    assert packed["aggregate_tokens_per_s"] == pytest.approx(
        sum(r["tokens_per_s"] for r in packed["rounds"]))
    with tarfile.open(out / "results.tgz") as packed:
        names = packed.getnames()
    assert "./choices/gpu-learning-rate.json" in names
    runs = [n for n in names if n.startswith("./pretrain/")]
    assert len(runs) == 6 + 4  # the search's six runs, the dropout claim's two and controls
    # this call's runs, the dropout claim's: trained, timed, their weights packed
    trained = re.findall(r"^([0-9a-f]{16}): 20 steps, [\d,]+ tokens/s", log, re.M)
    assert len(trained) == 2 and not {p.stem for p in SEARCH_RUNS.glob("*.json")} & set(trained)
    assert (out / "weights.tar.0").is_file() and (out / "part-1.log").is_file()

    again = _call(tmp_path, tmp_path / "out2", "--no-bench")  # the bench ran above
    assert again.returncode == 0, again.stdout[-3000:]
    assert "== bench" not in again.stdout
    assert "4 runs, 0 to train" in again.stdout
    assert not re.search(r"^[0-9a-f]{16}: \d+ steps", again.stdout, re.M)


def test_device_script_refuses_a_missing_gpu_without_dry_run(tmp_path):
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    env = {**os.environ, "OUT": str(tmp_path), "ALBERT_RERUN_RESULTS": str(tmp_path / "r"),
           "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(SCRIPT), "--part", "2"], cwd=repo_root(), env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 3 and "no GPU" in done.stdout

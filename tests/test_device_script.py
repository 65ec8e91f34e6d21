"""scripts/device_gpu.sh, dry-run on the CPU at the smoke profile: it checks the tree,
runs the bench at tiny sizes and the claims' runs before a start deadline, packs the
results into $OUT and prints each run's tokens/s; run again, it trains nothing that is
stored (and, with --no-bench, skips the bench)."""
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
    first = _call(tmp_path, out)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    log = first.stdout
    assert "data files match the manifest" in log and "== bench: exit 0" in log
    assert "[pretrain] 4 runs, 4 to train" in log
    bench = json.loads((out / "bench-cpu.json").read_text())
    assert bench["profile"] == "smoke" and "loop_over_bare" in bench["ratios"]
    assert {m["kind"] for m in bench["measurements"]} == {"loop", "bare"}  # no HF: a dry run
    (packed,) = bench["packed"]  # as many loops side by side as --workers
    assert packed["parties"] == 2 and len(packed["rounds"]) == 2
    assert packed["aggregate_tokens_per_s"] == pytest.approx(
        sum(r["tokens_per_s"] for r in packed["rounds"]))
    with tarfile.open(out / "results.tgz") as packed:
        names = packed.getnames()
    runs = [n for n in names if n.startswith("./pretrain/")]
    assert len(runs) == 4  # the dropout claim's two runs and their controls
    # this call's runs, the dropout claim's: trained, timed, their weights packed
    trained = re.findall(r"^([0-9a-f]{16}): 20 steps, [\d,]+ tokens/s", log, re.M)
    assert len(trained) == 2
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

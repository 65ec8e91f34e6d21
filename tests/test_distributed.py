"""torch.distributed on the CPU (gloo), through torchrun with two ranks: run-level
sharding trains each planned run exactly once, a 2-rank DDP run equals the 1-process
run of the same global batch, and a run whose rank was killed resumes from its
checkpoint and ends as the uninterrupted run. Smoke-size models, results in a
temporary ALBERT_RERUN_RESULTS."""
import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from albert_rerun.studies import conditions as C
from albert_rerun.studies import driver
from albert_rerun.engine.store import config_hash
from albert_rerun.profiles import resolve

TESTS = Path(__file__).parent
CLAIMS = ["--profile", "smoke", "--stages", "pretrain", "--claims", "dropout",
          "--workers", "1"]
TRAINED = re.compile(r"^\[pretrain\] ([0-9a-f]{16}) \{", re.M)
# 2-rank DDP against one process: the same global batch, masks and order; only the
# order of floating-point sums differs (per-rank matmuls, the all-reduce). After the
# smoke run's 20 LAMB steps every float16-stored weight agrees to this (init std 0.05):
DDP_WEIGHT_TOLERANCE = 2e-3
DDP_LOSS_TOLERANCE = 1e-3  # nats, the learning curve's held-out cross-entropy


def _env(results: Path, **extra) -> dict:
    return {**os.environ, "ALBERT_RERUN_RESULTS": str(results), "TQDM_DISABLE": "1",
            "PYTHONUNBUFFERED": "1", **extra}


def _torchrun(*args) -> list:
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            "--nproc_per_node", "2", *args]


def _planned() -> list:
    runs = driver.planned_runs(resolve("smoke"), C.default_seeds(resolve("smoke")), ["dropout"])
    return [config_hash(c.to_dict()) for c in runs + driver.planned_controls(runs)]


def _stored(store: Path, name: str) -> dict:
    return json.loads((store / "pretrain" / f"{name}.json").read_text())


@pytest.fixture(scope="module")
def sharded(tmp_path_factory):
    """Two ranks of the claims driver, uninterrupted: (results store, output)."""
    results = tmp_path_factory.mktemp("sharded")
    done = subprocess.run(_torchrun("-m", "albert_rerun.studies", *CLAIMS), env=_env(results),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return results / "smoke", done.stdout


def test_two_ranks_train_each_planned_run_exactly_once(sharded):
    store, output = sharded
    planned = _planned()
    assert collections.Counter(TRAINED.findall(output)) == {name: 1 for name in planned}
    for rank in (0, 1):  # each rank took its share of the same list
        assert re.search(rf"\[pretrain\] {len(planned)} runs, {len(planned)} to train, "
                         rf"{len(planned) // 2} on rank {rank}", output)
    assert all((store / "pretrain" / f"{name}.json").is_file() for name in planned)


def _rank_process(launcher: int, rank: int) -> int:
    """The pid of torchrun's worker of ``rank`` (a child of the launcher we started)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            environ = (entry / "environ").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if ppid == launcher and f"RANK={rank}".encode() in environ:
            return int(entry.name)
    raise LookupError(f"no worker of rank {rank} under pid {launcher}")


def _untimed(curve: list) -> list:
    return [{k: v for k, v in point.items() if k != "seconds"} for point in curve]


def test_a_rank_killed_mid_run_is_resumed_by_the_rerun(tmp_path, sharded):
    reference, _ = sharded
    env = _env(tmp_path, ALBERT_RERUN_CHECKPOINT_EVERY="2")
    store = tmp_path / "smoke"
    launcher = subprocess.Popen(_torchrun(str(TESTS / "torchrun_slow_claims.py"), *CLAIMS),
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
    deadline = time.time() + 600
    while (not list(store.glob("checkpoints/*/checkpoint.pt")) and time.time() < deadline
           and launcher.poll() is None):
        time.sleep(0.05)
    assert launcher.poll() is None, "the runs finished before a rank could be killed"
    os.kill(_rank_process(launcher.pid, 1), signal.SIGKILL)
    output = launcher.communicate(timeout=600)[0]
    assert launcher.returncode != 0, output[-2000:]
    left = sorted(p.parent.name for p in store.glob("checkpoints/*/checkpoint.pt"))
    assert left, "no run was left mid-way to resume"
    assert not any((store / "pretrain" / f"{name}.json").exists() for name in left)

    rerun = subprocess.run(_torchrun("-m", "albert_rerun.studies", *CLAIMS), env=env,
                           capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert not list(store.glob("checkpoints/*/checkpoint.pt"))
    for name in _planned():  # the resumed runs too: the uninterrupted runs' weights
        resumed, uninterrupted = _stored(store, name), _stored(reference, name)
        assert resumed["weights"]["sha256"] == uninterrupted["weights"]["sha256"], name
        assert _untimed(resumed["curve"]) == _untimed(uninterrupted["curve"]), name
        assert resumed["metrics"]["tokens"] == uninterrupted["metrics"]["tokens"], name


def test_two_rank_ddp_equals_one_process_with_the_same_global_batch(tmp_path):
    from albert_rerun.engine.store import load_weights
    # Without a sentence-pair loss: the sentence head's dropout (0.1, as HF's SOP head)
    # draws per-rank masks, which no global-batch split can reproduce; the encoder has no
    # dropout (ALBERT's pretraining), so the MLM-only run must match to float order.
    args = ["-m", "albert_rerun.engine.distributed", "--profile", "smoke", "--device", "cpu",
            "--objective", "none"]
    one = subprocess.run([sys.executable, *args], env=_env(tmp_path / "one"),
                         capture_output=True, text=True, timeout=600)
    assert one.returncode == 0, one.stderr[-3000:]
    two = subprocess.run(_torchrun(*args), env=_env(tmp_path / "two"), capture_output=True,
                         text=True, timeout=600)
    assert two.returncode == 0, two.stdout[-3000:] + two.stderr[-3000:]
    (single,) = (tmp_path / "one" / "smoke" / "pretrain").glob("*.json")
    store_one, store_two = tmp_path / "one" / "smoke", tmp_path / "two" / "smoke"
    a, b = _stored(store_one, single.stem), _stored(store_two, single.stem)
    assert b["runtime"]["ranks"] == 2 and "ranks" not in a["runtime"]
    assert a["metrics"]["tokens"] == b["metrics"]["tokens"]  # the same global batches
    assert a["metrics"]["steps"] == b["metrics"]["steps"] == 20
    for p, q in zip(a["curve"], b["curve"]):
        assert abs(p["mlm_loss_at_mask"] - q["mlm_loss_at_mask"]) < DDP_LOSS_TOLERANCE
        assert abs(p["train_loss"] - q["train_loss"]) < DDP_LOSS_TOLERANCE
    wa, wb = load_weights(store_one, a), load_weights(store_two, b)
    assert wa.keys() == wb.keys()
    worst = max((wa[k] - wb[k]).abs().max().item() for k in wa)
    assert worst < DDP_WEIGHT_TOLERANCE, worst
    moved = max((wa[k] - w).abs().max().item() for k, w in _initial(store_one, a).items())
    assert moved > 20 * DDP_WEIGHT_TOLERANCE  # the tolerance is far below what training moves


def _initial(store: Path, result: dict) -> dict:
    """The run's initial weights (float16-rounded, as stored)."""
    from albert_rerun.engine.config import PretrainConfig
    from albert_rerun.model.modeling import AlbertForPreTraining
    config = PretrainConfig.from_dict(result["config"])
    torch.manual_seed(config.seed)
    model = AlbertForPreTraining(config.model)
    return {k: v.to(torch.float16).float() for k, v in model.state_dict().items()}

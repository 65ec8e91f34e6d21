"""The pretraining engine on a tiny config: it learns, it resumes after kill -9 with
the same metrics, and the results store reuses, rejects and recomputes correctly."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from albert_rerun.config import ModelConfig
from albert_rerun.train import RunConfig, learning_rate, pretrain, run

TINY = ModelConfig(vocab_size=8000, embedding_size=16, hidden_size=32, num_hidden_layers=2,
                   num_attention_heads=2, intermediate_size=64, max_position_embeddings=32)


def tiny_run(**changes) -> RunConfig:
    values = dict(model=TINY, objective="sop", max_seq_length=32, batch_size=8,
                  max_predictions=5, optimizer="adamw", learning_rate=2e-3, warmup_steps=3,
                  max_steps=16, eval_examples=64, probe_examples=128, curve_every=8,
                  finetune=None, device="cpu", train_documents=60)
    values.update(changes)
    return RunConfig(**values)


COMPARED = ("mlm_accuracy", "mlm_loss", "sop_accuracy_head", "nsp_accuracy_head",
            "sop_accuracy_probe", "nsp_accuracy_probe", "steps", "tokens")


def test_invalid_run_config_names_the_field():
    with pytest.raises(ValueError, match="objective"):
        tiny_run(objective="mlm-only")
    with pytest.raises(ValueError, match="optimizer"):
        tiny_run(optimizer="sgd")
    with pytest.raises(ValueError, match="max_seq_length"):
        tiny_run(max_seq_length=64)


def test_schedule_warms_up_then_decays_to_zero():
    config = tiny_run(max_steps=100, warmup_steps=10, learning_rate=1.0)
    assert learning_rate(config, 0, 0) == pytest.approx(0.1)
    assert learning_rate(config, 9, 0) == pytest.approx(1.0)
    assert learning_rate(config, 55, 0) == pytest.approx(0.5)
    assert learning_rate(config, 100, 0) == 0.0
    timed = config.replace(max_seconds=10.0)
    assert learning_rate(timed, 20, 5.0) == pytest.approx(0.5)  # the clock is later


def test_training_lowers_the_loss(tmp_path):
    out = pretrain(tiny_run(max_steps=40, curve_every=10), tmp_path, quiet=True)
    curve = out["curve"]
    assert curve[-1]["train_loss"] < curve[0]["train_loss"]
    assert out["metrics"]["mlm_loss"] < 8.9  # ln(8000) = 8.99: below a uniform guess
    assert out["metrics"]["steps"] == 40 and out["metrics"]["tokens"] > 40 * 8 * 10


def test_curve_points_record_their_held_out_sample(tmp_path):
    """A curve point on the whole held-out set at the last step equals the final
    evaluation; a limited one says how many sequences it used."""
    whole = pretrain(tiny_run(), tmp_path / "whole", quiet=True, curve_examples=None)
    last = whole["curve"][-1]
    assert last["step"] == 16 and last["examples"] == 64
    assert last["mlm_accuracy"] == whole["metrics"]["mlm_accuracy"]
    assert last["mlm_loss"] == pytest.approx(whole["metrics"]["mlm_loss"])
    part = pretrain(tiny_run(), tmp_path / "part", quiet=True, curve_examples=16)
    assert {p["examples"] for p in part["curve"]} == {16}


_CHILD = """
import sys, time, torch
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_engine import tiny_run
from albert_rerun.train import pretrain
original = torch.optim.AdamW.step
def slow_step(self, *a, **k):
    time.sleep(0.15)  # give the parent time to kill us between checkpoints
    return original(self, *a, **k)
torch.optim.AdamW.step = slow_step
pretrain(tiny_run(), Path({workdir!r}), checkpoint_every=4, quiet=True)
print("finished")
"""


def test_kill_9_then_resume_gives_the_same_metrics(tmp_path):
    reference = pretrain(tiny_run(), tmp_path / "reference", quiet=True)["metrics"]
    workdir = tmp_path / "killed"
    child = subprocess.Popen([sys.executable, "-c", _CHILD.format(
        tests=str(Path(__file__).parent), workdir=str(workdir))])
    checkpoint = workdir / "checkpoint.pt"
    deadline = time.time() + 120
    while not checkpoint.exists() and time.time() < deadline and child.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    assert child.poll() is None, "the child finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    saved = torch.load(checkpoint, weights_only=True)
    assert 0 < saved["step"] < 16, saved["step"]
    resumed = pretrain(tiny_run(), workdir, checkpoint_every=4, quiet=True)["metrics"]
    for key in COMPARED:
        assert resumed[key] == reference[key], key


def test_corrupt_checkpoint_is_reported_and_the_run_starts_over(tmp_path, capsys):
    workdir = tmp_path / "w"
    workdir.mkdir()
    (workdir / "checkpoint.pt").write_bytes(b"not a checkpoint")
    out = pretrain(tiny_run(max_steps=4), workdir, quiet=True)
    assert "checkpoint" in capsys.readouterr().out and out["metrics"]["steps"] == 4


def test_results_store_reuses_rejects_corrupt_and_recomputes(tmp_path, monkeypatch, capsys):
    config = tiny_run(max_steps=4)
    first = run(config, tmp_path, quiet=True)
    (path,) = tmp_path.glob("*.json")
    stored = json.loads(path.read_text())
    assert stored["config"] == config.to_dict() and stored["hash"] == path.stem
    for key in ("git_commit", "packages", "machine", "utc_time"):
        assert key in stored["provenance"]
    assert stored["wall_seconds"] > 0 and stored["metrics"]["steps"] == 4

    import albert_rerun.train as engine

    def fail(*args, **kwargs):
        raise AssertionError("a stored result must be reused, not retrained")
    monkeypatch.setattr(engine, "pretrain", fail)
    assert run(config, tmp_path, quiet=True)["metrics"] == first["metrics"]

    path.write_text(path.read_text()[:50])  # a torn write
    monkeypatch.undo()
    again = run(config, tmp_path, quiet=True)
    assert "corrupt" in capsys.readouterr().out
    assert again["metrics"]["mlm_accuracy"] == first["metrics"]["mlm_accuracy"]
    assert not list(tmp_path.glob(".tmp-*"))  # no half-written file left behind


TIME_KEYS = ("train_seconds", "tokens_per_second")


def test_smoke_profile_albert_and_bert_rerun_bit_identically(tmp_path):
    """A newcomer's path: both styles at the smoke profile, twice, same numbers."""
    from albert_rerun.profiles import pretraining_config
    for style, objective in (("albert", "sop"), ("bert", "nsp")):
        config = pretraining_config("smoke", style, objective=objective)
        first = run(config, tmp_path / "a", quiet=True)["metrics"]
        second = run(config, tmp_path / "b", quiet=True)["metrics"]
        for key in TIME_KEYS:
            first.pop(key), second.pop(key)
        assert first == second, style
        for key in ("mlm_accuracy", "sop_accuracy_probe", "nsp_accuracy_probe",
                    "sentiment_accuracy", "genre_accuracy"):
            assert 0.0 <= first[key] <= 1.0
        assert first["genre_majority"] < 0.5 and first["sentiment_majority"] < 0.6


def test_loss_at_mask_is_the_cross_entropy_where_mask_is_shown(tmp_path):
    """Checked against the full (B, T, V) logits: only targets whose input is [MASK]."""
    from albert_rerun.pretraining_data import tokenize_split
    from albert_rerun.tokenizer import Tokenizer
    from albert_rerun.train import HeldOut, evaluate
    config = tiny_run(max_steps=8)
    model = pretrain(config, tmp_path, quiet=True)["model"].eval()
    tokenizer = Tokenizer()
    held_out = HeldOut(config, tokenizer, tokenize_split("validation", tokenizer))
    data = held_out.sets[config.objective]
    with torch.no_grad():
        logits = model(data["input_ids"], data["token_type_ids"], data["attention_mask"],
                       full_logits=True).mlm_logits
    where = (data["mlm_labels"] != -100) & (data["input_ids"] == tokenizer.mask_id)
    expected = torch.nn.functional.cross_entropy(logits[where], data["mlm_labels"][where])
    every_target = torch.nn.functional.cross_entropy(logits.flatten(0, 1),
                                                     data["mlm_labels"].flatten())
    metrics = evaluate(model, held_out, config.objective, torch.device("cpu"))
    assert metrics["mlm_loss_at_mask"] == pytest.approx(expected.item(), rel=1e-6)
    # the loss over every target is a different number, well beyond that tolerance
    assert abs(every_target.item() - expected.item()) > 1e-5 * expected.item()


def test_commit_override_applies_only_where_set(monkeypatch):
    from albert_rerun.provenance import git_commit
    monkeypatch.delenv("ALBERT_RERUN_GIT_COMMIT", raising=False)
    here = git_commit()
    monkeypatch.setenv("ALBERT_RERUN_GIT_COMMIT", "abc123+copy")
    assert git_commit() == "abc123+copy" != here


def test_grid_schedules_end_at_the_cpu_budget():
    from albert_rerun.recipe import CPU_BUDGET, FOLLOW_UP, GRID, SHAPES, grid
    seconds = {shape: 0.01 * (k + 3) for k, shape in enumerate(SHAPES)}
    configs = grid("cuda", {"step_seconds": seconds})
    assert len(configs) == len(GRID) + len(FOLLOW_UP)
    for (shape, optimizer, lr, *seed), config in zip(GRID + FOLLOW_UP, configs.values()):
        assert config.seed == (seed[0] if seed else 0)
        H, L, B, T = SHAPES[shape]
        assert (config.model.hidden_size, config.model.num_hidden_layers, config.batch_size,
                config.max_seq_length) == (H, L, B, T)
        assert (config.optimizer, config.learning_rate, config.device) == (optimizer, lr, "cuda")
        # rounded to 100 steps: within 50 steps' time of the budget
        assert abs(config.max_steps * seconds[shape] - CPU_BUDGET) <= 50 * seconds[shape]


def test_grid_reports_a_failed_run_and_finishes_the_others(tmp_path, capsys):
    from albert_rerun.recipe import run_grid
    good = tiny_run(max_steps=2, finetune=None)
    bad = good.replace(seed=1, probe_examples=1)  # a one-class probe cannot be fitted
    run_grid([("good", good, tmp_path), ("bad", bad, tmp_path)], 2, 600)
    run_grid([("late", good.replace(seed=2), tmp_path)], 1, -1)
    out = capsys.readouterr().out
    assert "good: 2 steps" in out and "bad: FAILED" in out and "late: not started" in out
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_a_diverged_run_stops_with_a_clear_error(tmp_path):
    with pytest.raises(FloatingPointError, match="diverged at step"):
        pretrain(tiny_run(learning_rate=1e12, max_steps=8), tmp_path / "w", quiet=True)


def test_bench_measures_both_implementations_and_refuses_a_missing_gpu(capsys):
    from albert_rerun import bench
    rows = bench.measure("tiny", 32, 2, 16, 2, 16, steps=1, peak=1.0)
    assert [(r["style"], r["implementation"]) for r in rows] == [
        ("albert", "ours"), ("albert", "HF"), ("bert", "ours"), ("bert", "HF")]
    assert all(r["tokens_per_s"] > 0 and r["fraction_of_peak"] > 0 for r in rows)
    assert rows[0]["speedup_vs_HF"] == rows[1]["step_s"] / rows[0]["step_s"]
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit):
            bench.main(["--device", "cuda"])
        assert "no CUDA device" in capsys.readouterr().err

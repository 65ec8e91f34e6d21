"""The pretraining engine on a tiny config: deterministic, resumable bit for bit (also
after kill -9), the initialized model at zero steps, refusals before step 0 (bad
device, corrupt data), and the held-out measures it records."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from albert_rerun import AlbertForPreTraining, ModelConfig
from albert_rerun.data.files import DataError, manifest, sha256
from albert_rerun.engine import pretrain as engine
from albert_rerun.engine.config import PretrainConfig
from albert_rerun.engine.pretrain import DeviceStream, learning_rate, pretrain, run
from albert_rerun.profiles import pretraining_config

pytestmark = pytest.mark.usefixtures("single_thread")

# Two training documents hold about 120 segment pairs of 32 tokens: with batch 16 an
# epoch is a few steps, and with CHUNK masks are drawn 3 steps at a time, so 12 steps
# cross epochs and chunks, and a checkpoint (every 4 steps) falls between them.
TINY = pretraining_config("smoke", batch_size=16, max_steps=12, warmup_steps=2,
                          curve_every=4, curve_examples=16, train_documents=2)
CHUNK = 48


def _state(model) -> dict:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def _same_weights(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """TINY trained once, uninterrupted; its workdir keeps the step-8 checkpoint."""
    workdir = tmp_path_factory.mktemp("reference")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
        patch.setenv("ALBERT_RERUN_THREADS", "1")
        out = pretrain(TINY, workdir, device="cpu", checkpoint_every=4, quiet=True)
    return {"weights": _state(out["model"]), "curve": out["curve"],
            "metrics": out["metrics"], "workdir": workdir}


def test_schedule_warms_up_then_decays_to_zero():
    config = TINY.replace(max_steps=100, warmup_steps=10, learning_rate=1.0)
    assert learning_rate(config, 0) == pytest.approx(0.1)
    assert learning_rate(config, 9) == pytest.approx(1.0)
    assert learning_rate(config, 55) == pytest.approx(0.5)
    assert learning_rate(config, 100) == 0.0


def _stream(tokenizer, config=TINY, start_step=0):
    from albert_rerun.data.corpus import tokenize_split
    corpus = tokenize_split("train", tokenizer).subset(config.train_documents)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
        return DeviceStream(config, tokenizer, corpus, torch.device("cpu"), start_step)


def test_the_tiny_run_crosses_epochs_and_chunks(reference, tokenizer):
    stream = _stream(tokenizer)
    steps = stream.epochs[0][2]
    assert stream.chunk_steps == 3 and 4 < steps < 8, steps
    assert steps % 3  # a chunk of masks straddles the first epoch's end
    assert [p["step"] for p in reference["curve"]] == [4, 8, 12]
    assert reference["metrics"]["steps"] == 12
    assert reference["metrics"]["tokens"] > 12 * TINY.batch_size * 10


def test_the_stream_resumes_at_any_step_with_the_same_batches(tokenizer):
    """Every start step, also one inside a chunk that began in the previous epoch."""
    whole = _stream(tokenizer)
    batches = [whole.batch(step) for step in range(14)]
    whole.close()
    for start in range(1, 14):
        late = _stream(tokenizer, start_step=start)
        for step in range(start, 14):
            batch = late.batch(step)
            assert all(torch.equal(batch[k], batches[step][k]) for k in batch), (start, step)
        late.close()
    P = TINY.max_predictions
    for batch in batches:  # static shapes, every step
        assert batch["input_ids"].shape == (TINY.batch_size, TINY.max_seq_length)
        assert batch["mlm_positions"].shape == batch["mlm_labels"].shape == (TINY.batch_size, P)
    assert not torch.equal(batches[0]["mlm_positions"], batches[1]["mlm_positions"])


def test_distinct_epochs_cycle_the_same_pairs_in_a_new_order(tokenizer):
    from albert_rerun.data.corpus import create_instances, tokenize_split
    corpus = tokenize_split("train", tokenizer).subset(TINY.train_documents)
    source = create_instances(corpus, tokenizer, TINY.objective, TINY.max_seq_length,
                              seed=TINY.seed * 1000)  # epoch 0's pairs
    pool = {tuple(row) for row in source.input_ids.astype(np.int64).tolist()}
    share = lambda tensors: np.mean([tuple(r) in pool for r in tensors["input_ids"].tolist()])
    cycled = _stream(tokenizer, TINY.replace(distinct_epochs=1))
    first, second = cycled._build(0)[0], cycled._build(1)[0]
    assert share(first) == share(second) == 1.0  # epoch 1 repeats epoch 0's pairs...
    assert not torch.equal(first["input_ids"], second["input_ids"])  # ...in a new order
    assert share(_stream(tokenizer)._build(1)[0]) < 0.5  # by default its pairs are new


def test_the_same_config_gives_the_same_weights(reference, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
    again = pretrain(TINY, tmp_path, device="cpu", checkpoint_every=4, quiet=True)
    assert _same_weights(_state(again["model"]), reference["weights"])
    assert again["curve"] == [{**p, "seconds": q["seconds"]} for p, q in
                              zip(reference["curve"], again["curve"])]
    other = pretrain(TINY.replace(seed=1), tmp_path / "seed1", device="cpu", quiet=True)
    assert not _same_weights(_state(other["model"]), reference["weights"])


def test_a_run_resumed_from_its_checkpoint_ends_bit_identically(reference, tmp_path,
                                                                monkeypatch):
    checkpoint = reference["workdir"] / "checkpoint.pt"
    payload = torch.load(checkpoint, weights_only=True)
    assert payload["step"] == 8 and payload["wall_seconds"] >= payload["seconds"] > 0
    # as a checkpoint written before wall seconds were carried: they start from its
    # training seconds
    torch.save({k: v for k, v in payload.items() if k != "wall_seconds"},
               tmp_path / "checkpoint.pt")
    monkeypatch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
    starts = []
    real_stream = engine.DeviceStream

    def spy(config, tokenizer, corpus, device, start_step=0):
        starts.append(start_step)
        return real_stream(config, tokenizer, corpus, device, start_step)
    monkeypatch.setattr(engine, "DeviceStream", spy)
    resumed = pretrain(TINY, tmp_path, device="cpu", checkpoint_every=4, quiet=True)
    assert starts == [8]  # four steps trained here, eight restored
    assert resumed["earlier_wall_seconds"] == payload["seconds"]
    assert _same_weights(_state(resumed["model"]), reference["weights"])
    losses = lambda curve: [(p["step"], p["train_loss"], p["mlm_loss_at_mask"]) for p in curve]
    assert losses(resumed["curve"]) == losses(reference["curve"])


def test_a_run_stopped_at_its_deadline_resumes_bit_identically(reference, tmp_path,
                                                               monkeypatch):
    """The driver's budget: a deadline already past stops the run at its first loss read
    (step 4, the first curve point) with a checkpoint of its own (none is due before step
    100 here); the same call without a deadline resumes there and ends as the
    uninterrupted run."""
    monkeypatch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
    with pytest.raises(engine.StoppedAtDeadline) as stopped:
        pretrain(TINY, tmp_path, device="cpu", checkpoint_every=100, quiet=True,
                 stop_at=time.time() - 1)
    assert (stopped.value.step, stopped.value.steps) == (4, 12)
    assert engine.checkpoint_step(tmp_path) == 4
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=True)["step"] == 4
    resumed = pretrain(TINY, tmp_path, device="cpu", checkpoint_every=100, quiet=True)
    assert _same_weights(_state(resumed["model"]), reference["weights"])
    losses = lambda curve: [(p["step"], p["train_loss"], p["mlm_loss_at_mask"]) for p in curve]
    assert losses(resumed["curve"]) == losses(reference["curve"])
    assert resumed["metrics"]["tokens"] == reference["metrics"]["tokens"]


def test_a_resumed_runs_wall_seconds_cover_every_stretch(reference, tmp_path, monkeypatch):
    """A stored run's wall_seconds is the whole run's, as its train_seconds are: a stretch
    stopped at its deadline keeps its wall seconds in the checkpoint, and the resumed
    run's stored result adds them to its own (it held the last stretch's alone). The
    run's results are the uninterrupted run's all the same."""
    from albert_rerun.engine.store import config_hash, load_weights
    monkeypatch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
    real_step = engine.train_step

    def slow_step(*args, **kwargs):
        time.sleep(0.25)  # the first stretch's 4 steps: at least 1 s of wall clock
        return real_step(*args, **kwargs)
    store = tmp_path / "store"
    checkpoint = store / "checkpoints" / config_hash(TINY.to_dict()) / "checkpoint.pt"
    started = time.time()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "train_step", slow_step)
        with pytest.raises(engine.StoppedAtDeadline):
            run(TINY, store, device="cpu", quiet=True, stop_at=time.time() - 1)
    first = time.time() - started
    carried = torch.load(checkpoint, weights_only=True)
    assert carried["step"] == 4 and 1.0 <= carried["wall_seconds"] <= first
    started = time.time()
    stored = run(TINY, store, device="cpu", quiet=True)
    second = time.time() - started
    # both stretches: the first up to its checkpoint, the second at least as long as the
    # training it did; no more than the two calls took
    trained_here = stored["metrics"]["train_seconds"] - carried["seconds"]
    assert carried["wall_seconds"] + trained_here <= stored["wall_seconds"] <= first + second
    assert stored["wall_seconds"] >= stored["metrics"]["train_seconds"]
    assert "wall_seconds" not in stored["metrics"]
    half = {k: v.to(torch.float16).float() for k, v in reference["weights"].items()}
    assert _same_weights(load_weights(store, stored), half)
    assert stored["metrics"]["tokens"] == reference["metrics"]["tokens"]
    losses = lambda curve: [(p["step"], p["train_loss"], p["mlm_loss_at_mask"]) for p in curve]
    assert losses(stored["curve"]) == losses(reference["curve"])


def test_a_deadline_after_the_last_step_changes_nothing(reference, tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
    out = pretrain(TINY, tmp_path, device="cpu", checkpoint_every=4, quiet=True,
                   stop_at=time.time() + 3600)
    assert _same_weights(_state(out["model"]), reference["weights"])


def test_zero_steps_is_the_initialized_model(tmp_path):
    config = TINY.replace(max_steps=0, warmup_steps=0, seed=4)
    out = pretrain(config, tmp_path, device="cpu", quiet=True)
    torch.manual_seed(4)
    expected = AlbertForPreTraining(config.model)
    assert _same_weights(_state(out["model"]), _state(expected))
    assert out["metrics"]["steps"] == 0 and out["curve"] == []


def test_training_lowers_the_loss(tmp_path):
    config = pretraining_config("smoke", optimizer="adamw", learning_rate=5e-3,
                                max_steps=30, warmup_steps=3, curve_every=10,
                                curve_examples=64)
    out = pretrain(config, tmp_path, device="cpu", quiet=True)
    from albert_rerun.engine.evaluate import mlm_set, score_mlm
    start = pretrain(config.replace(max_steps=0, warmup_steps=0), tmp_path / "init",
                     device="cpu", quiet=True)["model"]
    initial = score_mlm(start, mlm_set(32, config.max_predictions, 64), "cpu")
    curve = out["curve"]
    assert curve[-1]["train_loss"] < curve[0]["train_loss"] - 0.5
    assert curve[-1]["mlm_loss_at_mask"] < initial["mlm_loss_at_mask"] - 0.5


def test_a_diverged_run_stops_with_a_clear_error(tmp_path):
    with pytest.raises(FloatingPointError, match="diverged by step 4"):
        pretrain(TINY.replace(learning_rate=1e12), tmp_path, device="cpu", quiet=True)


def test_cuda_without_a_gpu_is_refused_before_anything_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA device"):
        engine.resolve_device("cuda")
    assert engine.resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(engine, "Tokenizer", _must_not_run)
    with pytest.raises(ValueError, match="no CUDA device"):
        pretrain(TINY, tmp_path / "w", device="cuda", quiet=True)
    assert not (tmp_path / "w").exists()


def _must_not_run(*args, **kwargs):
    raise AssertionError("the run went on past its checks")


def test_checkpoints_fall_where_asked_between_log_points(tmp_path):
    """A checkpoint every 3 steps is written at step 3 and 6 of 8, though no loss is
    read there otherwise (LOG_EVERY 50, no curve)."""
    saved = []
    real_save = engine._save_checkpoint
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "_save_checkpoint",
                      lambda path, model, optimizer, state: (saved.append(state["step"]),
                                                             real_save(path, model, optimizer,
                                                                       state)))
        pretrain(TINY.replace(max_steps=8, curve_every=0), tmp_path, device="cpu",
                 checkpoint_every=3, quiet=True)
    assert saved == [3, 6]
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=True)["step"] == 6


def test_corrupt_checkpoint_is_reported_and_the_run_starts_over(tmp_path, capsys):
    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint")
    out = pretrain(TINY.replace(max_steps=4, curve_every=0), tmp_path, device="cpu",
                   quiet=True)
    assert "checkpoint" in capsys.readouterr().out and out["metrics"]["steps"] == 4


# -- bad input stops a run before step 0 -------------------------------------------------

@pytest.mark.parametrize("name", ["tasks/sentiment/train.jsonl.xz", "corpus/train.jsonl.xz",
                                  "tokenizer/spm_unigram_8000.model"])
def test_a_corrupt_data_file_stops_a_run_before_step_0(name, data_copy, flip_byte, tmp_path,
                                                       monkeypatch):
    """Every file a run or its evaluation reads is checked first: a corrupt task file is
    not found only after pretraining, nor a corrupt corpus hidden by its token cache."""
    if name.startswith("corpus/"):  # its token cache exists (linked, or built here)
        from albert_rerun.data.corpus import tokenize_split
        from albert_rerun.data.tokenizer import Tokenizer
        tokenize_split("train", Tokenizer())
    target = data_copy(name)
    flip_byte(target)
    monkeypatch.setattr(engine, "DeviceStream", _must_not_run)
    monkeypatch.setattr(engine, "AlbertForPreTraining", _must_not_run)
    with pytest.raises(DataError) as info:
        run(TINY, tmp_path / "store", device="cpu", quiet=True)
    message = str(info.value)
    assert f"data/{name} is corrupt" in message
    assert sha256(target) in message and manifest()[name] in message
    assert not (tmp_path / "store").exists()


def test_a_missing_task_file_stops_a_run_before_step_0(data_copy, tmp_path, monkeypatch):
    data_copy("tasks/genre/test.jsonl.xz").unlink()
    monkeypatch.setattr(engine, "DeviceStream", _must_not_run)
    expected = manifest()["tasks/genre/test.jsonl.xz"]
    with pytest.raises(DataError, match=f"genre/test.jsonl.xz is missing.*{expected}"):
        pretrain(TINY, tmp_path, device="cpu", quiet=True)


# -- kill -9 in the middle of a run --------------------------------------------------------

_CHILD = """
import sys, time, torch
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_engine import TINY, CHUNK
from albert_rerun.engine import pretrain as engine
engine.CHUNK_SEQUENCES = CHUNK
original = engine.train_step
def slow_step(*args, **kwargs):
    time.sleep(0.2)  # time for the parent to kill us between checkpoints
    return original(*args, **kwargs)
engine.train_step = slow_step
engine.pretrain(TINY, Path({workdir!r}), device="cpu", checkpoint_every=4, quiet=True)
print("finished")
"""


def test_kill_9_then_resume_gives_the_same_weights(reference, tmp_path, monkeypatch):
    workdir = tmp_path / "killed"
    child = subprocess.Popen([sys.executable, "-c", _CHILD.format(
        tests=str(Path(__file__).parent), workdir=str(workdir))],
        env={**os.environ, "ALBERT_RERUN_THREADS": "1"})
    checkpoint = workdir / "checkpoint.pt"
    deadline = time.time() + 900  # a generous bound for a loaded machine
    while not checkpoint.exists() and time.time() < deadline and child.poll() is None:
        time.sleep(0.02)
    time.sleep(0.3)  # into the next checkpoint interval
    assert checkpoint.exists(), "the child wrote no checkpoint before the deadline"
    assert child.poll() is None, "the child finished before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    saved = torch.load(checkpoint, weights_only=True)["step"]
    assert 0 < saved < TINY.max_steps, saved
    assert not list(workdir.glob("*.partial"))
    monkeypatch.setattr(engine, "CHUNK_SEQUENCES", CHUNK)
    resumed = pretrain(TINY, workdir, device="cpu", checkpoint_every=4, quiet=True)
    assert _same_weights(_state(resumed["model"]), reference["weights"])


# -- the results store's side of a run -----------------------------------------------------

def test_run_stores_reuses_rejects_corrupt_and_recomputes(tmp_path, capsys):
    config = TINY.replace(max_steps=4, curve_every=0)
    first = run(config, tmp_path, device="cpu", quiet=True)
    (path,) = (tmp_path / "pretrain").glob("*.json")
    stored = json.loads(path.read_text())
    assert stored["config"] == config.to_dict() and stored["hash"] == path.stem
    assert PretrainConfig.from_dict(stored["config"]) == config
    for key in ("git_commit", "packages", "machine", "utc_time"):
        assert key in stored["provenance"]
    assert stored["runtime"] == {"device": "cpu", "compile": False, "threads": 1}
    assert stored["wall_seconds"] > 0 and stored["metrics"]["steps"] == 4
    assert stored["weights"]["file"] == f"{path.stem}.safetensors"
    assert not (tmp_path / "checkpoints" / path.stem).exists()

    with pytest.MonkeyPatch.context() as patch:  # stored: reused, not retrained
        patch.setattr(engine, "pretrain", _must_not_run)
        assert run(config, tmp_path, device="cpu", quiet=True)["metrics"] == first["metrics"]

    path.write_text(path.read_text()[:50])  # a torn write
    again = run(config, tmp_path, device="cpu", quiet=True)
    assert "corrupt" in capsys.readouterr().out
    assert again["weights"]["sha256"] == first["weights"]["sha256"]  # the same weights
    assert not list(tmp_path.rglob(".tmp-*"))  # no half-written file left behind


def test_loss_at_mask_is_the_cross_entropy_where_mask_is_shown(reference):
    """score_mlm against the full (B, T, V) logits: only targets whose input is [MASK]."""
    from albert_rerun.engine.evaluate import mlm_set, score_mlm
    model = AlbertForPreTraining(TINY.model)
    model.load_state_dict(reference["weights"])
    model.eval()
    data = mlm_set(TINY.max_seq_length, TINY.max_predictions, 64)
    with torch.no_grad():
        logits = model(data["input_ids"], data["token_type_ids"], data["attention_mask"],
                       full_logits=True).mlm_logits
    where = (data["mlm_labels"] != -100) & (data["input_ids"] == data["mask_id"])
    expected = torch.nn.functional.cross_entropy(logits[where], data["mlm_labels"][where])
    every_target = torch.nn.functional.cross_entropy(logits.flatten(0, 1),
                                                     data["mlm_labels"].flatten())
    metrics = score_mlm(model, data, "cpu", batch_size=16)
    assert metrics["mlm_loss_at_mask"] == pytest.approx(expected.item(), rel=1e-6)
    # the loss over every target is a different number, well beyond that tolerance
    assert abs(every_target.item() - expected.item()) > 1e-5 * expected.item()
    # the last curve point scored the same model on the first curve_examples sequences
    last = reference["curve"][-1]
    assert last["examples"] == TINY.curve_examples
    prefix = score_mlm(model, mlm_set(TINY.max_seq_length, TINY.max_predictions,
                                      TINY.curve_examples), "cpu")
    assert last["mlm_loss_at_mask"] == pytest.approx(prefix["mlm_loss_at_mask"], rel=1e-6)
    per_sequence = metrics["sequence_loss_at_mask"].sum() / metrics["sequence_count_at_mask"].sum()
    assert per_sequence == pytest.approx(metrics["mlm_loss_at_mask"])
    assert (metrics["sequence_count_at_mask"] == where.sum(1).numpy()).all()


def test_held_out_sets_do_not_depend_on_the_objective():
    """One MLM set for every model (in-order pairs, masked once); curve points read a
    prefix of it."""
    from albert_rerun.engine.evaluate import mlm_set, pair_set
    small, large = mlm_set(32, 5, 16), mlm_set(32, 5, 64)
    for key in ("input_ids", "mlm_labels", "attention_mask"):
        assert torch.equal(small[key], large[key][:16])
    sop, nsp = pair_set("sop", 32, 64), pair_set("nsp", 32, 64)
    assert set(np.unique(sop["labels"])) == set(np.unique(nsp["labels"])) == {0, 1}


def test_layer_transitions_equal_a_direct_computation():
    from albert_rerun.engine.evaluate import layer_transitions
    config = ModelConfig(vocab_size=50, embedding_size=8, hidden_size=16, num_hidden_layers=3,
                         num_attention_heads=2, intermediate_size=32,
                         max_position_embeddings=16, sharing="all")
    torch.manual_seed(0)
    model = AlbertForPreTraining(config)
    ids = torch.randint(5, 50, (3, 10))
    mask = torch.ones(3, 10, dtype=torch.long)
    mask[1, 7:] = 0
    data = {"original_ids": ids, "token_type_ids": torch.zeros_like(ids),
            "attention_mask": mask}
    out = layer_transitions(model, data, torch.device("cpu"))
    with torch.no_grad():
        states = model.albert(ids, torch.zeros_like(ids), mask, output_hidden_states=True)[2]
    keep = mask.bool()
    for layer in range(3):
        a, b = (states[k][keep].double().numpy() for k in (layer, layer + 1))
        l2 = np.linalg.norm(b - a, axis=1).mean()
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        angle = np.degrees(np.arccos(np.clip(cos, -1, 1))).mean()
        assert out["transition_l2"][layer] == pytest.approx(l2, rel=1e-5)
        assert out["transition_angle"][layer] == pytest.approx(angle, rel=1e-6)
    assert len(out["transition_l2"]) == 3


def test_commit_override_applies_only_where_set(monkeypatch):
    from albert_rerun.engine.provenance import git_commit
    monkeypatch.delenv("ALBERT_RERUN_GIT_COMMIT", raising=False)
    here = git_commit()
    monkeypatch.setenv("ALBERT_RERUN_GIT_COMMIT", "abc123+copy")
    assert git_commit() == "abc123+copy" != here

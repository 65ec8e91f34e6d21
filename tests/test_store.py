"""The results store: float16 safetensors weights checked by SHA-256, evaluations keyed
by (pretraining hash, evaluation hash), and what a corrupt file does."""
from dataclasses import replace
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import torch

from albert_rerun import AlbertForPreTraining
from albert_rerun.engine import evaluate as evaluation
from albert_rerun.engine import store
from albert_rerun.engine.evaluate import EvalConfig, evaluate_stored
from albert_rerun.profiles import eval_config, pretraining_config
from synthetic import stored_run

pytestmark = pytest.mark.usefixtures("single_thread")
CONFIG = pretraining_config("smoke", max_steps=4, seed=3)


def _stored_run(tmp_path, config=CONFIG):
    """A stored pretraining result of ``config`` (its initialized weights), as run()
    writes one; returns (store folder, result, the model)."""
    return stored_run(tmp_path, config)


def test_config_hash_is_stable_and_order_free():
    a = store.config_hash({"x": 1, "y": [1, 2], "z": {"b": 1, "a": 2}})
    assert a == store.config_hash({"z": {"a": 2, "b": 1}, "y": [1, 2], "x": 1})
    assert len(a) == 16 and a != store.config_hash({"x": 1, "y": [2, 1], "z": {"b": 1, "a": 2}})
    assert store.pretrain_path(Path("s"), CONFIG).name == \
        f"{store.config_hash(CONFIG.to_dict())}.json"


def test_results_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    assert store.results_dir("smoke") == tmp_path / "smoke"
    monkeypatch.delenv("ALBERT_RERUN_RESULTS")
    assert store.results_dir("cpu").parts[-3:] == ("data", "results", "cpu")


def test_weights_round_trip_through_float16_safetensors(tmp_path):
    folder, result, model = _stored_run(tmp_path)
    record = result["weights"]
    path = folder / "pretrain" / record["file"]
    assert record["dtype"] == "float16" and record["bytes"] == path.stat().st_size
    fp32_bytes = sum(p.numel() * 4 for p in model.state_dict().values())
    assert record["bytes"] < 0.55 * fp32_bytes
    loaded = store.load_weights(folder, result)
    original = model.state_dict()
    assert loaded.keys() == original.keys()
    for name, tensor in original.items():
        assert loaded[name].dtype == torch.float32
        assert torch.equal(loaded[name], tensor.half().float()), name
    again = AlbertForPreTraining(CONFIG.model).eval()
    again.load_state_dict(loaded)
    model.eval()
    ids = torch.randint(5, CONFIG.vocab_size, (2, 16))
    with torch.no_grad():
        torch.testing.assert_close(again(ids).mlm_logits, model(ids).mlm_logits,
                                   atol=2e-2, rtol=1e-2)
    blob = path.read_bytes()  # safetensors: a length, a JSON header, raw tensors (no pickle)
    header = json.loads(blob[8:8 + int.from_bytes(blob[:8], "little")])
    assert header["__metadata__"] == {"dtype": "float16"}
    assert {entry["dtype"] for name, entry in header.items() if name != "__metadata__"} == {"F16"}


def test_a_corrupt_or_missing_weight_file_names_the_file_and_both_checksums(tmp_path,
                                                                           flip_byte):
    folder, result, _ = _stored_run(tmp_path)
    path = folder / "pretrain" / result["weights"]["file"]
    expected = result["weights"]["sha256"]
    flip_byte(path, offset=path.stat().st_size - 10)
    with pytest.raises(store.WeightsError) as info:
        store.load_weights(folder, result)
    message = str(info.value)
    assert str(path) in message and "is corrupt" in message
    assert expected in message and hashlib.sha256(path.read_bytes()).hexdigest() in message
    path.unlink()
    with pytest.raises(store.WeightsError, match=f"{path.name} is missing.*{expected}"):
        store.load_weights(folder, result)
    with pytest.raises(store.WeightsError, match="records no weights"):
        store.load_weights(folder, {**result, "weights": None})


def test_a_control_is_rebuilt_from_its_seed_and_a_different_rebuild_is_named(tmp_path):
    """Zero-step controls are not committed: their seed rebuilds them, bit for bit on the
    machine that made them. Made on another CPU type the rebuild can differ (it does at
    E = H = 64 between Intel and AMD), and the error says so and how to remake it."""
    control = replace(CONFIG, max_steps=0)
    payload = store._initial_weights(control.to_dict())
    result = {"hash": "c0ffee", "config": control.to_dict(),
              "provenance": {"machine": {"cpu": "Some CPU"}},
              "weights": {"file": "c0ffee.safetensors", "dtype": "float16",
                          "sha256": hashlib.sha256(payload).hexdigest()}}
    (tmp_path / "pretrain").mkdir()
    loaded = store.load_weights(tmp_path, result)  # no file: rebuilt, and it matches
    assert loaded.keys() == AlbertForPreTraining(CONFIG.model).state_dict().keys()
    other = {**result, "weights": {**result["weights"], "sha256": "0" * 64}}
    with pytest.raises(store.WeightsError, match=r"control c0ffee rebuilt from its seed "
                       r"here.*recorded on Some CPU.*c0ffee\.json"):
        store.load_weights(tmp_path, other)


def test_evaluation_is_keyed_by_pretraining_and_evaluation_hash(tmp_path, monkeypatch):
    folder, result, _ = _stored_run(tmp_path)
    calls = []

    def fake_evaluate(model, model_config, config, device, seed, untrained):
        calls.append(config)
        return {"mlm_loss_at_mask": 8.0 + len(calls), "untrained": untrained}
    monkeypatch.setattr(evaluation, "evaluate", fake_evaluate)
    first_config = eval_config("smoke")
    first = evaluate_stored(folder, result, first_config, "cpu")
    assert store.eval_path(folder, result["hash"], first_config) == \
        folder / "eval" / first_config.key / f"{result['hash']}.json"
    assert first["pretrain_hash"] == result["hash"] and first["eval_hash"] == first_config.key
    assert evaluate_stored(folder, result, first_config, "cpu") == first  # reused
    assert len(calls) == 1

    changed = first_config.replace(mlm_sequences=32)
    assert changed.key != first_config.key
    assert store.pretrain_path(folder, CONFIG).stem == result["hash"]  # pretraining unmoved
    second = evaluate_stored(folder, result, changed, "cpu")
    assert len(calls) == 2 and second["metrics"]["mlm_loss_at_mask"] == 10.0
    assert store.stored_eval(folder, result["hash"], first_config)["metrics"] == first["metrics"]
    assert len(list((folder / "eval").glob("*/*.json"))) == 2

    path = store.eval_path(folder, result["hash"], changed)  # made by another config
    path.write_text(json.dumps({**second, "eval_config": first_config.to_dict()}))
    assert store.stored_eval(folder, result["hash"], changed) is None


def test_evaluation_checks_the_weights_before_anything_runs(tmp_path, monkeypatch, flip_byte):
    folder, result, _ = _stored_run(tmp_path)
    flip_byte(folder / "pretrain" / result["weights"]["file"])

    def must_not_run(*args, **kwargs):
        raise AssertionError("evaluated corrupt weights")
    monkeypatch.setattr(evaluation, "evaluate", must_not_run)
    with pytest.raises(store.WeightsError, match="is corrupt"):
        evaluate_stored(folder, result, eval_config("smoke"), "cpu")
    assert not (folder / "eval").exists()


def test_a_stored_run_of_another_config_is_not_reused(tmp_path, capsys):
    folder, result, _ = _stored_run(tmp_path)
    assert store.stored_pretrain(folder, CONFIG)["hash"] == result["hash"]
    path = store.pretrain_path(folder, CONFIG)
    path.write_text(json.dumps({**result, "config": CONFIG.replace(seed=9).to_dict()}))
    assert store.stored_pretrain(folder, CONFIG) is None
    assert "another config" in capsys.readouterr().out
    path.write_text("{")
    assert store.read_json(path) is None and "corrupt" in capsys.readouterr().out


def test_atomic_writes_leave_no_partial_file(tmp_path):
    target = tmp_path / "a" / "b.json"
    with pytest.raises(TypeError):
        store.atomic_write_json(target, {"bad": object()})
    assert not target.exists() and not list(tmp_path.rglob(".tmp-*"))
    store.atomic_write_json(target, {"ok": 1})
    assert json.loads(target.read_text()) == {"ok": 1}


def test_a_real_evaluation_of_a_stored_run(tmp_path):
    """The smoke evaluation end to end on a stored (initialized) run: every metric the
    chapters read, with per-item correctness for the bootstrap; fine-tuning is an
    evaluation of its own, stored under its own key."""
    from albert_rerun.profiles import resolve
    folder, result, _ = _stored_run(tmp_path, CONFIG.replace(max_steps=0, warmup_steps=0))
    config = eval_config("smoke")
    metrics = evaluate_stored(folder, result, config, torch.device("cpu"))["metrics"]
    assert len(metrics["sequence_loss_at_mask"]) == metrics["mlm_sequences"] == \
        config.mlm_sequences
    for task in ("sop", "nsp"):
        assert len(metrics[f"{task}_head_correct"]) == config.pair_examples
        assert set(metrics[f"{task}_probe_correct"]) <= {"0", "1"}
        assert 0.5 <= metrics[f"{task}_majority"] <= 1
    assert len(metrics["transition_l2"]) == CONFIG.model.num_hidden_layers
    for task in ("sentiment", "genre"):
        assert len(metrics[f"{task}_probe_correct"]) == config.task_examples
        assert metrics[f"{task}_probe_accuracy"] == pytest.approx(
            metrics[f"{task}_probe_correct"].count("1") / config.task_examples)
    for key in ("mlm_accuracy", "mlm_accuracy_at_mask", "sop_accuracy_probe",
                "nsp_accuracy_head", "train_mlm_loss_at_mask"):
        assert np.isfinite(metrics[key]), key
    tuning = resolve("smoke").finetune_config()
    tuned = evaluate_stored(folder, result, tuning, torch.device("cpu"))
    assert store.eval_path(folder, result["hash"], tuning).parent.name == tuning.key
    assert len(tuned["metrics"]["sentiment_correct"]) == tuning.task_examples
    assert 0.0 <= tuned["metrics"]["sentiment_accuracy"] <= 1.0
    assert len(list((folder / "eval").glob("*/*.json"))) == 2

import sys

import pytest

from albert_rerun import PRESETS, ModelConfig, preset


@pytest.mark.parametrize("changes, field", [
    ({"hidden_size": 30, "num_attention_heads": 4}, "hidden_size"),
    ({"num_hidden_layers": 6, "num_hidden_groups": 4}, "num_hidden_groups"),
    ({"sharing": "everything"}, "sharing"),
    ({"hidden_act": "swish"}, "hidden_act"),
    ({"vocab_size": 0}, "vocab_size"),
    ({"embedding_size": -8}, "embedding_size"),
    ({"intermediate_size": 2.5}, "intermediate_size"),
    ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob"),
    ({"sharing": "none", "num_hidden_groups": 2, "num_hidden_layers": 4}, "num_hidden_groups"),
    ({"project_embeddings": False, "embedding_size": 64}, "project_embeddings"),
])
def test_invalid_config_names_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        ModelConfig(**changes)


def test_invalid_config_raises_before_any_tensor(monkeypatch):
    """Validation lives in the config, so a model is never half-built."""
    import torch
    calls = []
    monkeypatch.setattr(torch, "empty", lambda *a, **k: calls.append(a))
    with pytest.raises(ValueError):
        ModelConfig(hidden_size=100, num_attention_heads=3)
    assert calls == []


def test_error_lists_allowed_values():
    with pytest.raises(ValueError) as info:
        ModelConfig(sharing="some")
    for scheme in ("none", "attention", "ffn", "all"):
        assert scheme in str(info.value)


def test_block_schedule_matches_albert_group_rule():
    """HF: group_idx = int(i / (L / G)); TF: int(i / L * G)."""
    config = ModelConfig(num_hidden_layers=12, num_hidden_groups=3, hidden_size=64,
                         num_attention_heads=4, intermediate_size=128)
    expected = [int(i / (12 / 3)) for i in range(12)]
    assert [config.attention_block_index(i) for i in range(12)] == expected
    assert [config.ffn_block_index(i) for i in range(12)] == expected


@pytest.mark.parametrize("sharing, attention, ffn", [
    ("none", 12, 12), ("attention", 1, 12), ("ffn", 12, 1), ("all", 1, 1)])
def test_block_counts_per_scheme(sharing, attention, ffn):
    config = preset("albert-base", sharing=sharing)
    assert (config.num_attention_blocks, config.num_ffn_blocks) == (attention, ffn)


def test_presets_have_released_shapes():
    assert preset("albert-xlarge").num_attention_heads == 16  # not H/64
    assert preset("albert-xxlarge").hidden_size == 4096
    assert preset("bert-large").embedding_size == 1024
    assert not preset("bert-base").has_projection
    assert preset("albert-base").has_projection
    with pytest.raises(ValueError, match="unknown preset"):
        preset("albert-huge")
    assert len(PRESETS) >= 6


def test_dict_round_trip_and_unknown_field():
    config = preset("albert-large")
    assert ModelConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown fields"):
        ModelConfig.from_dict({**config.to_dict(), "num_layers": 3})


def test_package_import_does_not_import_transformers():
    import subprocess
    code = "import albert_rerun, sys; print('transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "False"


# -- the pretraining and evaluation configs ---------------------------------------------

def _pretrain(**changes):
    from albert_rerun.profiles import pretraining_config
    return pretraining_config("smoke", **changes)


@pytest.mark.parametrize("changes, field", [
    ({"objective": "mlm-only"}, "objective"),
    ({"optimizer": "sgd"}, "optimizer"),
    ({"max_seq_length": 256}, "max_seq_length"),  # beyond max_position_embeddings
    ({"max_seq_length": 4}, "max_seq_length"),
    ({"batch_size": 0}, "batch_size"),
    ({"max_predictions": 40}, "max_predictions"),  # more than the sequence holds
    ({"max_steps": -1}, "max_steps"),
    ({"max_steps": 10, "warmup_steps": 20}, "warmup_steps"),
    ({"learning_rate": -1e-3}, "learning_rate"),
    ({"seed": 1.5}, "seed"),
    ({"distinct_epochs": True}, "distinct_epochs"),
    ({"model": {"hidden_size": 32}}, "model"),
])
def test_invalid_pretrain_config_names_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        _pretrain(**changes)


@pytest.mark.parametrize("changes, field", [
    ({"mlm_sequences": 0}, "mlm_sequences"),
    ({"max_predictions": 200}, "max_predictions"),
    ({"pair_examples": 2.0}, "pair_examples"),
    ({"task_examples": -1}, "task_examples"),
    ({"probe_tasks": ("sentiment", "topic")}, "probe_tasks"),
    ({"finetune_tasks": "sentiment"}, "finetune_tasks"),  # a string, not a tuple
    ({"finetune": {"epochs": 3}}, "finetune"),
])
def test_invalid_eval_config_names_the_field(changes, field):
    from albert_rerun.engine.evaluate import EvalConfig
    with pytest.raises(ValueError, match=field):
        EvalConfig(**changes)


def test_pretrain_config_round_trip_and_unknown_field():
    from albert_rerun.engine.config import PretrainConfig
    config = _pretrain(objective="nsp", seed=3)
    assert PretrainConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown fields.*max_seconds"):
        PretrainConfig.from_dict({**config.to_dict(), "max_seconds": 60})  # engine v1's
    with pytest.raises(ValueError, match="unknown fields.*num_layers"):
        PretrainConfig.from_dict({**config.to_dict(),
                                  "model": {**config.model.to_dict(), "num_layers": 2}})


def test_untrained_control_is_shared_by_objectives_and_keeps_model_and_seed():
    from albert_rerun.engine.config import untrained
    sop, nsp = _pretrain(seed=2), _pretrain(seed=2, objective="nsp", learning_rate=1e-3)
    control = untrained(sop)
    assert control == untrained(nsp)
    assert (control.max_steps, control.model, control.seed) == (0, sop.model, 2)
    assert untrained(sop.replace(seed=3)) != control

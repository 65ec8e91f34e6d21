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

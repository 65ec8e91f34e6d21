import pytest
import torch

from albert_rerun import AlbertForPreTraining, ModelConfig, preset
from albert_rerun.model.params import closed_form, encoder_total, layer_parameters, module_counts


def _build_on_meta(config):
    with torch.device("meta"):
        return AlbertForPreTraining(config)


CONFIGS = [
    ModelConfig(vocab_size=99, embedding_size=16, hidden_size=36, num_hidden_layers=6,
                num_attention_heads=6, intermediate_size=37, max_position_embeddings=64),
    ModelConfig(vocab_size=1000, embedding_size=64, hidden_size=64, num_hidden_layers=4,
                num_attention_heads=4, intermediate_size=256),
    ModelConfig(vocab_size=500, embedding_size=24, hidden_size=48, num_hidden_layers=8,
                num_attention_heads=3, intermediate_size=100, project_embeddings=True),
]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("sharing", ["none", "attention", "ffn", "all"])
def test_closed_form_equals_module_counts(config, sharing):
    config = config.replace(sharing=sharing)
    model = _build_on_meta(config)
    assert module_counts(model) == closed_form(config)
    assert sum(closed_form(config).values()) == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
@pytest.mark.parametrize("sharing", ["attention", "ffn", "all"])
def test_closed_form_with_groups(groups, sharing):
    config = CONFIGS[0].replace(sharing=sharing, num_hidden_groups=groups)
    assert module_counts(_build_on_meta(config)) == closed_form(config)


def test_bert_base_embedding_share():
    """BERT-base with WordPiece V = 30522: the numbers quoted in the embedding chapter."""
    config = preset("bert-base", vocab_size=30522)
    counts = closed_form(config)
    assert counts["embeddings"] == 23_837_184
    assert layer_parameters(config) == 7_087_872
    assert encoder_total(counts) == 109_482_240


def test_bert_base_matches_analytic_from_reference():
    """albert_facts.md: BERT-base at V=30000 is 109,081,344 with pooler."""
    assert encoder_total(closed_form(preset("bert-base"))) == 109_081_344
    assert encoder_total(closed_form(preset("bert-large")), pooler=False) == 333_557_760


def test_albert_base_pretraining_total():
    """albert_facts.md: AlbertForPreTraining base = 11,813,810 (HF's layout)."""
    assert sum(closed_form(preset("albert-base")).values()) == 11_813_810
    assert encoder_total(closed_form(preset("albert-xxlarge"))) == 222_595_584


import pytest
import torch

# Deterministic, quiet CPU runs for every test.
torch.manual_seed(0)


@pytest.fixture
def tiny_config():
    """HF's own ALBERT test size: V 32... scaled so that every component is present."""
    from albert_rerun import ModelConfig
    return ModelConfig(vocab_size=99, embedding_size=16, hidden_size=36, num_hidden_layers=6,
                       num_attention_heads=6, intermediate_size=37, max_position_embeddings=64,
                       sharing="all", num_hidden_groups=1)

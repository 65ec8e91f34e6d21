"""Parameter accounting: a closed form per component, and the same read off a module;
and the FLOPs of a training step from the same sizes (``useful_flops``).

The two counts must agree for every configuration and sharing scheme (tests check it);
the claim chapters then use whichever is convenient and show both.
"""
from __future__ import annotations

from collections import OrderedDict

from torch import nn

from .config import ModelConfig

COMPONENTS = ("embeddings", "projection", "attention", "ffn", "pooler", "mlm_head",
              "sentence_head")


def attention_block_parameters(H: int) -> int:
    """Q, K, V and output projections with biases, plus the post-LayerNorm."""
    return 4 * (H * H + H) + 2 * H


def ffn_block_parameters(H: int, intermediate: int) -> int:
    """H -> I -> H with biases, plus the post-LayerNorm."""
    return (H * intermediate + intermediate) + (intermediate * H + H) + 2 * H


def layer_parameters(config: ModelConfig) -> int:
    """One unshared transformer layer (attention + FFN)."""
    return (attention_block_parameters(config.hidden_size)
            + ffn_block_parameters(config.hidden_size, config.intermediate_size))


def closed_form(config: ModelConfig) -> "OrderedDict[str, int]":
    """Parameters of AlbertForPreTraining per component, from the sizes alone."""
    V, E, H = config.vocab_size, config.embedding_size, config.hidden_size
    counts = OrderedDict()
    counts["embeddings"] = (V + config.max_position_embeddings + config.type_vocab_size) * E + 2 * E
    counts["projection"] = E * H + H if config.has_projection else 0
    counts["attention"] = config.num_attention_blocks * attention_block_parameters(H)
    counts["ffn"] = config.num_ffn_blocks * ffn_block_parameters(H, config.intermediate_size)
    counts["pooler"] = H * H + H
    # Dense H->E, LayerNorm(E) and the output bias; the decoder is tied to the embeddings.
    counts["mlm_head"] = H * E + E + 2 * E + V
    counts["sentence_head"] = 2 * H + 2
    return counts


def encoder_total(counts, pooler: bool = True) -> int:
    """The bare encoder (what papers usually count): no pretraining heads."""
    keys = ["embeddings", "projection", "attention", "ffn"] + (["pooler"] if pooler else [])
    return sum(counts[k] for k in keys)


# Module-name prefixes in model.AlbertForPreTraining, per component.
_PREFIXES = OrderedDict([
    ("embeddings", "albert.embeddings."),
    ("projection", "albert.encoder.embedding_hidden_mapping_in."),
    ("attention", "albert.encoder.attention_blocks."),
    ("ffn", "albert.encoder.ffn_blocks."),
    ("pooler", "albert.pooler."),
    ("mlm_head", "mlm_head."),
    ("sentence_head", "sentence_head."),
])


def module_counts(model: nn.Module) -> "OrderedDict[str, int]":
    """The same components counted from a built AlbertForPreTraining's parameters."""
    counts = OrderedDict((k, 0) for k in _PREFIXES)
    for name, parameter in model.named_parameters():  # shared tensors appear once
        component = next((k for k, p in _PREFIXES.items() if name.startswith(p)), None)
        if component is None:
            raise KeyError(f"parameter {name} belongs to no known component")
        counts[component] += parameter.numel()
    return counts


def millions(count: int) -> float:
    return count / 1e6


def paper_conventions(config: ModelConfig) -> "OrderedDict[str, int]":
    """The two ways a paper may count an encoder: with or without the pooler.

    Uses TF ALBERT's rule (no E->H projection when E == H), as the paper's code did.
    """
    if config.project_embeddings is not None:
        config = config.replace(project_embeddings=None)
    counts = closed_form(config)
    return OrderedDict([("with pooler", encoder_total(counts, pooler=True)),
                        ("without pooler", encoder_total(counts, pooler=False))])


def matching_conventions(config: ModelConfig, paper_millions: float) -> list:
    """Which counting conventions round (to the nearest million) to the paper's figure."""
    return [name for name, count in paper_conventions(config).items()
            if round(millions(count)) == paper_millions]


# -- compute ------------------------------------------------------------------------------

def useful_flops(config: ModelConfig, batch: int, seq: int, masked: int) -> float:
    """FLOPs of one training step counting only what the model needs (3x forward)."""
    H, I, E, V, L = (config.hidden_size, config.intermediate_size, config.embedding_size,
                     config.vocab_size, config.num_hidden_layers)
    tokens = batch * seq
    layer = 2 * tokens * (4 * H * H + 2 * H * I) + 2 * 2 * batch * seq * seq * H
    projection = 2 * tokens * E * H if config.has_projection else 0
    head = 2 * batch * masked * (H * E + E * V) + 2 * batch * H * H
    return 3 * (L * layer + projection + head)

"""Typed model configuration, its validation, and named presets.

One dataclass describes every model in the book, BERT and ALBERT alike: BERT is
the point ``embedding_size == hidden_size, sharing == "none"`` of ALBERT's space.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

SHARING_SCHEMES = ("none", "attention", "ffn", "all")
ACTIVATIONS = ("gelu_new", "gelu", "relu")
POSITION_INITS = ("normal", "sinusoidal")
# stream: every weight drawn in turn from the seeded generator, so an arm with fewer
# blocks draws its later blocks from other numbers; common: each part (the embeddings,
# attention block i, FFN block i, the heads) from its own generator keyed by the seed
# and the part, so arms that differ in sharing start their blocks in common alike
INIT_DRAWS = ("stream", "common")


@dataclass(frozen=True)
class ModelConfig:
    """Sizes and switches of an ALBERT/BERT encoder with its pretraining heads."""

    vocab_size: int = 30000  # V: ALBERT's SentencePiece vocabulary (BERT's WordPiece is 30522)
    embedding_size: int = 128  # E: factorized embedding width; E == H and no projection is BERT
    hidden_size: int = 768  # H
    num_hidden_layers: int = 12  # L: layers applied, shared or not
    num_attention_heads: int = 12  # H must be divisible by it
    intermediate_size: int = 3072  # FFN width, 4H in the paper
    hidden_act: str = "gelu_new"  # gelu_new: tanh approximation (TF ALBERT); gelu: exact erf
    hidden_dropout_prob: float = 0.0  # ALBERT v2 uses 0, BERT and ALBERT v1 0.1
    attention_probs_dropout_prob: float = 0.0
    classifier_dropout_prob: float = 0.1  # dropout before the sentence-pair/classifier heads
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    sharing: str = "all"  # none | attention | ffn | all: which sub-blocks layers share
    num_hidden_groups: int = 1  # shared blocks are split into this many groups of L/G layers
    project_embeddings: Optional[bool] = None  # None: an E->H projection only when E != H (TF)
    layer_norm_eps: float = 1e-12
    initializer_range: float = 0.02
    position_init: str = "normal"  # normal: N(0, range) as BERT; sinusoidal: Vaswani's, scaled to range
    pad_token_id: int = 0
    init_draw: str = "stream"  # stream | common: see INIT_DRAWS

    def __post_init__(self) -> None:
        self.validate()

    # -- validation -------------------------------------------------------
    def validate(self) -> None:
        """Raise ValueError naming the field and what is allowed; allocate nothing."""
        for name in ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers",
                     "num_attention_heads", "intermediate_size", "max_position_embeddings",
                     "type_vocab_size", "num_hidden_groups"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(f"ModelConfig.{name} must be a positive integer, got {value!r}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob",
                     "classifier_dropout_prob"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ValueError(f"ModelConfig.{name} must be a probability in [0, 1), "
                                 f"got {value!r}")
        for name in ("layer_norm_eps", "initializer_range"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"ModelConfig.{name} must be positive, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"ModelConfig.hidden_size ({self.hidden_size}) must be divisible by "
                f"num_attention_heads ({self.num_attention_heads})")
        if self.sharing not in SHARING_SCHEMES:
            raise ValueError(f"ModelConfig.sharing must be one of {SHARING_SCHEMES}, "
                             f"got {self.sharing!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(f"ModelConfig.hidden_act must be one of {ACTIVATIONS}, "
                             f"got {self.hidden_act!r}")
        if self.position_init not in POSITION_INITS:
            raise ValueError(f"ModelConfig.position_init must be one of {POSITION_INITS}, "
                             f"got {self.position_init!r}")
        if self.init_draw not in INIT_DRAWS:
            raise ValueError(f"ModelConfig.init_draw must be one of {INIT_DRAWS}, "
                             f"got {self.init_draw!r}")
        if self.num_hidden_layers % self.num_hidden_groups:
            raise ValueError(
                f"ModelConfig.num_hidden_groups ({self.num_hidden_groups}) must divide "
                f"num_hidden_layers ({self.num_hidden_layers})")
        if self.sharing == "none" and self.num_hidden_groups != 1:
            raise ValueError(
                "ModelConfig.num_hidden_groups applies to shared blocks only; with "
                f"sharing='none' it must be 1, got {self.num_hidden_groups}")
        if self.project_embeddings is False and self.embedding_size != self.hidden_size:
            raise ValueError(
                "ModelConfig.project_embeddings=False needs embedding_size == hidden_size, "
                f"got E={self.embedding_size}, H={self.hidden_size}")
        if not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(f"ModelConfig.pad_token_id must be in [0, vocab_size), "
                             f"got {self.pad_token_id}")

    # -- derived ----------------------------------------------------------
    @property
    def has_projection(self) -> bool:
        """Whether embeddings are mapped E->H by a dense layer."""
        if self.project_embeddings is None:
            return self.embedding_size != self.hidden_size
        return self.project_embeddings

    @property
    def num_attention_blocks(self) -> int:
        """Distinct attention sub-blocks held in memory."""
        shared = self.sharing in ("attention", "all")
        return self.num_hidden_groups if shared else self.num_hidden_layers

    @property
    def num_ffn_blocks(self) -> int:
        """Distinct feed-forward sub-blocks held in memory."""
        shared = self.sharing in ("ffn", "all")
        return self.num_hidden_groups if shared else self.num_hidden_layers

    def attention_block_index(self, layer: int) -> int:
        """Which attention block layer ``layer`` applies (ALBERT's group rule)."""
        return layer * self.num_attention_blocks // self.num_hidden_layers

    def ffn_block_index(self, layer: int) -> int:
        """Which feed-forward block layer ``layer`` applies."""
        return layer * self.num_ffn_blocks // self.num_hidden_layers

    def replace(self, **changes) -> "ModelConfig":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The fields; ``init_draw`` only where it is not the default, so that every
        config stored before the field existed keeps its hash (``engine.store``)."""
        values = dataclasses.asdict(self)
        if values["init_draw"] == "stream":
            del values["init_draw"]
        return values

    @classmethod
    def from_dict(cls, values: dict) -> "ModelConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"ModelConfig got unknown fields {unknown}; known: {sorted(known)}")
        return cls(**values)


def _bert(hidden: int, layers: int, heads: int, vocab_size: int) -> ModelConfig:
    # BERT: no factorization, no sharing, exact GELU, dropout 0.1 (Devlin et al. 2019).
    return ModelConfig(vocab_size=vocab_size, embedding_size=hidden, hidden_size=hidden,
                       num_hidden_layers=layers, num_attention_heads=heads,
                       intermediate_size=4 * hidden, hidden_act="gelu",
                       hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
                       sharing="none")


def _albert(hidden: int, layers: int, heads: int, vocab_size: int) -> ModelConfig:
    # Released ALBERT v2 configs: E = 128, all layers shared, gelu_new, no dropout.
    return ModelConfig(vocab_size=vocab_size, embedding_size=128, hidden_size=hidden,
                       num_hidden_layers=layers, num_attention_heads=heads,
                       intermediate_size=4 * hidden, sharing="all")


# (hidden, layers, heads) of the paper's Table 1 and the released configs.
# ALBERT-xlarge ships with 16 heads (head size 128), not the paper's H/64 rule.
_PRESET_SHAPES = {
    "bert-base": (_bert, 768, 12, 12),
    "bert-large": (_bert, 1024, 24, 16),
    "albert-base": (_albert, 768, 12, 12),
    "albert-large": (_albert, 1024, 24, 16),
    "albert-xlarge": (_albert, 2048, 24, 16),
    "albert-xxlarge": (_albert, 4096, 12, 64),
    # Small shapes for the CPU profiles and tests (H = 128, 4 layers, 2 heads).
    "bert-tiny": (_bert, 128, 4, 2),
    "albert-tiny": (_albert, 128, 4, 2),
}

PRESETS = tuple(_PRESET_SHAPES)


def preset(name: str, vocab_size: int = 30000, **changes) -> ModelConfig:
    """A named configuration of the paper's Table 1, optionally with fields changed."""
    if name not in _PRESET_SHAPES:
        raise ValueError(f"unknown preset {name!r}; choose one of {PRESETS}")
    make, hidden, layers, heads = _PRESET_SHAPES[name]
    config = make(hidden, layers, heads, vocab_size)
    if name == "albert-tiny":
        config = config.replace(embedding_size=64)
    return config.replace(**changes) if changes else config

"""What determines a pretraining run: one typed, validated, hashable config.

Evaluation is configured apart (``evaluate.EvalConfig``): a change of evaluation never
changes a pretraining run's hash, so it never forces pretraining again. Where a run
trains (device, compiled or not, threads) is not part of the config either; the stored
result records it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..data.corpus import OBJECTIVES
from ..model.config import ModelConfig

OPTIMIZERS = ("adamw", "lamb")


@dataclass(frozen=True)
class PretrainConfig:
    """Everything that determines a pretrained model's weights."""

    model: ModelConfig
    objective: str = "sop"  # sop | nsp | none (pairs in order, no sentence-pair loss)
    max_seq_length: int = 128
    batch_size: int = 64
    max_predictions: int = 20  # masked tokens per sequence, at most (the static layout)
    optimizer: str = "lamb"  # lamb (the paper; fastest in the recipe search) | adamw
    learning_rate: float = 5e-3
    weight_decay: float = 0.01
    warmup_steps: int = 100
    max_steps: int = 1000  # the schedule's length; 0: the initialized model (a control)
    seed: int = 0
    train_documents: int = 0  # pretrain on this many training documents; 0: all
    sop_random_for_single: bool = False  # the official SOP's NSP-style negatives
    distinct_epochs: int = 0  # build this many epochs of segment pairs, then cycle them
    curve_every: int = 0  # steps between learning-curve points (0: none)
    curve_examples: int = 128  # held-out sequences a curve point scores

    def __post_init__(self):
        if not isinstance(self.model, ModelConfig):
            raise ValueError(f"PretrainConfig.model must be a ModelConfig, got "
                             f"{type(self.model).__name__}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"PretrainConfig.objective must be one of {OBJECTIVES}, "
                             f"got {self.objective!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"PretrainConfig.optimizer must be one of {OPTIMIZERS}, "
                             f"got {self.optimizer!r}")
        for name, low in (("max_seq_length", 8), ("batch_size", 1), ("max_predictions", 1),
                          ("curve_examples", 1), ("max_steps", 0), ("warmup_steps", 0),
                          ("seed", 0), ("train_documents", 0), ("distinct_epochs", 0),
                          ("curve_every", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"PretrainConfig.{name} must be an integer >= {low}, "
                                 f"got {value!r}")
        for name in ("learning_rate", "weight_decay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"PretrainConfig.{name} must be a number >= 0, got {value!r}")
        if self.max_steps and self.warmup_steps > self.max_steps:
            raise ValueError(f"PretrainConfig.warmup_steps ({self.warmup_steps}) exceeds "
                             f"max_steps ({self.max_steps})")
        if self.max_seq_length > self.model.max_position_embeddings:
            raise ValueError(f"PretrainConfig.max_seq_length ({self.max_seq_length}) exceeds "
                             f"the model's max_position_embeddings "
                             f"({self.model.max_position_embeddings})")
        if self.max_predictions > self.max_seq_length:
            raise ValueError("PretrainConfig.max_predictions exceeds max_seq_length")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "model": self.model.to_dict()}

    @classmethod
    def from_dict(cls, values: dict) -> "PretrainConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"PretrainConfig got unknown fields {unknown}; known: "
                             f"{sorted(known)}")
        return cls(**{**values, "model": ModelConfig.from_dict(values["model"])})

    def replace(self, **changes) -> "PretrainConfig":
        return dataclasses.replace(self, **changes)

    def replace_model(self, **changes) -> "PretrainConfig":
        return self.replace(model=self.model.replace(**changes))

    @property
    def vocab_size(self) -> int:
        return self.model.vocab_size

    @property
    def tokens_per_step(self) -> int:
        return self.batch_size * self.max_seq_length


def untrained(config: PretrainConfig) -> PretrainConfig:
    """The same architecture and seed at initialization: the random-init control.

    Fields that cannot change an untrained model are set to fixed values, so that every
    condition with the same model and seed (SOP, NSP, no sentence loss...) shares one
    control, trained (for zero steps) once."""
    return PretrainConfig(model=config.model, seed=config.seed, max_steps=0, warmup_steps=0,
                          max_seq_length=config.max_seq_length,
                          max_predictions=config.max_predictions,
                          batch_size=config.batch_size)

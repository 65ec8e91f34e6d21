"""What ``smoke``, ``cpu``, ``cpu-long`` and ``gpu`` mean, and the check of a notebook's
papermill parameters; ``resolve`` turns a name into the ``ResolvedProfile`` passed down."""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine.evaluate import EvalConfig

DEVICES = ("auto", "cpu", "cuda")
# fine-tuning learning rates: the driver's pilot picks from the grid; until then, and at
# smoke, the defaults
FINETUNE_GRID = (1e-4, 3e-4, 1e-3, 3e-3)
DEFAULT_FINETUNE_RATES = {"pretrained": 3e-4, "untrained": 1e-3}


@dataclass(frozen=True)
class Profile:
    """How large the runs behind a chapter are and how they pretrain."""

    name: str
    description: str  # one line for the README and the methods page
    default_seeds: int  # seeds per condition for the empirical chapters
    hidden: int
    layers: int
    heads: int
    embedding: int
    seq: int
    batch: int
    steps: int
    documents: int = 0  # training documents (0: all)
    learning_rate: float = 5e-3
    distinct_epochs: int = 0  # 0: every epoch's pairs built anew


# The recipe (notebooks/00_recipe.md): LAMB 5e-3, init std 0.05, sinusoidal positions.
# cpu: the grid's fastest 4-layer candidate (5 minutes on 2 cores), 3 seeds (the time the
# retrain had); gpu: the first size a CPU cannot train in a session.
_CPU = Profile("cpu", "the published book: the sizes a 2-core CPU affords", 3,
               hidden=64, layers=4, heads=2, embedding=32, seq=64, batch=16, steps=5400)
PROFILES = {p.name: p for p in (
    Profile("smoke", "seconds per notebook; what CI executes and compares", 1,
            hidden=32, layers=2, heads=2, embedding=16, seq=32, batch=8, steps=20,
            documents=60),
    _CPU,
    Profile("gpu", "models a CPU cannot train, planned for two 10-minute calls on one H200 "
            "(not yet run)", 3, hidden=256, layers=12, heads=4, embedding=128, seq=128,
            batch=128, steps=2000, distinct_epochs=4),
    # the claims whose effects grow with training, at four times cpu's steps
    replace(_CPU, name="cpu-long", steps=4 * _CPU.steps,
            description="the cpu sizes at four times the training, for the core claims; "
                        "trained in resumable stretches"),
)}
SIZES = PROFILES  # a profile's sizes are its fields


@dataclass(frozen=True)
class Settings:
    """The validated parameters of one notebook run."""

    profile: ResolvedProfile
    seeds: tuple
    device: str


def validate_parameters(profile: str, seeds=None, device: str = "auto") -> Settings:
    """Validated papermill parameters (``seeds=None``: the profile's default number);
    ValueError naming a bad one."""
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"parameter 'profile' must be one of {tuple(PROFILES)}, "
                         f"got {profile!r}")
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int)
                              or seeds < 1):
        raise ValueError(f"parameter 'seeds' must be an integer >= 1 (or None for the "
                         f"profile's default), got {seeds!r}")
    if not isinstance(device, str) or device not in DEVICES:
        raise ValueError(f"parameter 'device' must be one of {DEVICES}, got {device!r}")
    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            raise ValueError("parameter 'device' is 'cuda' but no CUDA device is "
                             "available; use 'auto' or 'cpu'")
    chosen = resolve(profile)
    return Settings(chosen, tuple(range(seeds or chosen.default_seeds)), device)


def pretraining_config(profile: str, style: str = "albert", **changes):
    """The base PretrainConfig of a profile; ``style`` albert (E < H, all shared) or bert;
    ``changes`` override its fields, ``model_changes`` (a dict) the model's."""
    return resolve(profile).pretraining_config(style, **changes)


def eval_config(profile: str):
    """How every model of a profile is evaluated (one EvalConfig: one evaluation hash)."""
    from .engine.evaluate import EvalConfig

    s, small = SIZES[profile], profile == "smoke"
    return EvalConfig(max_seq_length=s.seq, max_predictions=max(5, round(0.15 * s.seq)),
                      mlm_sequences=64 if small else 4096,
                      pair_examples=64 if small else 1024,
                      probe_pairs=128 if small else 1024,
                      transition_sequences=16 if small else 64,
                      train_mlm_sequences=64 if small else 512,
                      task_examples=200 if small else 0, finetune=None)


@dataclass(frozen=True)
class ResolvedProfile:
    """A profile resolved once from its name (``resolve``) and passed down, so that no layer
    looks the name up again; the picks in ``choices`` are read when asked, as runs store
    them. Its ``Profile``'s fields (``description``, ``default_seeds``, ...) read through."""

    name: str
    settings: Profile = field(repr=False)
    results: Path  # engine.store.results_dir(name), read once
    evaluation: EvalConfig = field(repr=False)

    def __getattr__(self, name: str):
        if name.startswith("_") or name == "settings":  # unpickling: no fields yet
            raise AttributeError(name)
        return getattr(self.settings, name)

    @property
    def sizes(self) -> Profile:
        return self.settings

    @property
    def choices(self) -> Path:
        """Where the profile's picks are stored (learning rates, the equal-time budget)."""
        return self.results / "choices"

    def pretraining_config(self, style: str = "albert", **changes):
        """The profile's base PretrainConfig (``profiles.pretraining_config``)."""
        from .engine.config import PretrainConfig
        from .model.config import ModelConfig

        if style not in ("albert", "bert"):
            raise ValueError(f"style must be 'albert' or 'bert', got {style!r}")
        model_changes = changes.pop("model_changes", {})
        s = self.sizes
        model = ModelConfig(vocab_size=8000, embedding_size=s.embedding if style == "albert"
                            else s.hidden, hidden_size=s.hidden, num_hidden_layers=s.layers,
                            num_attention_heads=s.heads, intermediate_size=4 * s.hidden,
                            max_position_embeddings=max(s.seq, 128),
                            sharing="all" if style == "albert" else "none",
                            initializer_range=0.05, position_init="sinusoidal")
        if model_changes:
            model = model.replace(**model_changes)
        values = dict(model=model, objective="sop", max_seq_length=s.seq, batch_size=s.batch,
                      max_predictions=max(5, round(0.15 * s.seq)), optimizer="lamb",
                      learning_rate=s.learning_rate, warmup_steps=max(2, s.steps // 20),
                      max_steps=s.steps, curve_every=max(1, s.steps // 8),
                      curve_examples=min(256, 16 * s.batch), train_documents=s.documents,
                      distinct_epochs=s.distinct_epochs)
        return PretrainConfig(**{**values, **changes})

    def finetune_rates(self) -> dict:
        """{"pretrained": lr, "untrained": lr}: the pilot's, where stored."""
        path = self.choices / "finetune-rates.json"
        if self.name == "smoke" or not path.is_file():
            return dict(DEFAULT_FINETUNE_RATES)
        return json.loads(path.read_text())["chosen"]

    def finetune_config(self):
        """How the profile fine-tunes (FinetuneEval): sentiment, the whole training split (a
        sample at smoke), at the pilot's learning rates."""
        from .engine.evaluate import FinetuneEval
        from .engine.finetune import FinetuneProtocol

        rates, small = self.finetune_rates(), self.name == "smoke"
        protocol = FinetuneProtocol(learning_rate=rates["pretrained"],
                                    untrained_learning_rate=rates["untrained"],
                                    epochs=1 if small else 3,
                                    max_seq_length=min(128, self.sizes.seq),
                                    max_train_examples=200 if small else 0)
        return FinetuneEval(protocol=protocol, task_examples=200 if small else 0)


def resolve(profile) -> ResolvedProfile:
    """The ``ResolvedProfile`` of a name (one already resolved as it is), the same object
    for the same name and results folder; ValueError naming the profiles if unknown."""
    if isinstance(profile, ResolvedProfile):
        return profile
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"profile must be one of {tuple(PROFILES)}, got {profile!r}")
    from .engine.store import results_dir
    return _resolved(profile, results_dir(profile))


@functools.lru_cache(maxsize=None)
def _resolved(name: str, results: Path) -> ResolvedProfile:
    return ResolvedProfile(name, PROFILES[name], results, eval_config(name))

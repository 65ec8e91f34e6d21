"""Run profiles and the validation of a notebook's papermill parameters.

One place defines what ``smoke``, ``cpu`` and ``gpu`` mean. :func:`resolve` turns a
profile's name into a :class:`ResolvedProfile`, once, where the name comes in (a command
line, a notebook's parameter, a page's build): its settings, sizes, results folder and
held-out sets travel down from there, not the name to be looked up again in each layer.
:func:`validate_parameters` checks a notebook's parameters, so that a bad one stops it
at once with a message naming the parameter and the allowed values; notebooks call it
through ``pages.setup.notebook_setup``, which adds the gpu profile's predicted time on a
CPU. This module is configuration: it imports nothing above the engine (a test checks it).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .engine.evaluate import EvalConfig

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Profile:
    """How large the runs behind a chapter are."""

    name: str
    description: str  # one line for the README and the methods page
    default_seeds: int  # seeds per condition for the empirical chapters


PROFILES = {
    # Their predicted training times, from stored throughput, are on the methods page
    # (book.build._predicted; `python -m albert_rerun.studies --predict`).
    "smoke": Profile("smoke", "seconds per notebook; what CI executes and compares", 1),
    # 3 seeds: the plan, from the power analysis (stats.power; its table is on the
    # ledger page), was 5; the retrain had time for 3 (about 8 minutes a run on one core).
    "cpu": Profile("cpu", "the published book: the sizes a 2-core CPU affords", 3),
    "gpu": Profile("gpu", "models a CPU cannot train, planned for two 10-minute calls on "
                   "one H200 (not yet run)", 3),
    # the cpu sizes at four times the steps, for the claims whose effects grow with
    # training (studies.conditions.PROFILE_CLAIMS); about 30 minutes a run on one core, so
    # it trains over several sessions (the driver's --hours, resumed by the same command)
    "cpu-long": Profile("cpu-long", "the cpu sizes at four times the training, for the "
                        "core claims; trained in resumable stretches", 3),
}


@dataclass(frozen=True)
class Settings:
    """The validated parameters of one notebook run."""

    profile: ResolvedProfile
    seeds: tuple
    device: str


def validate_parameters(profile: str, seeds=None, device: str = "auto") -> Settings:
    """Validate papermill parameters; raise ValueError naming the parameter.

    ``seeds=None`` means the profile's default number of seeds.
    """
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


# -- pretraining and evaluation sizes per profile -----------------------------------------
# The recipe comes from the search in notebooks/00_recipe.md: LAMB 5e-3 with init std
# 0.05 and sinusoidal position tables. The cpu size is the grid's fastest 4-layer
# candidate (H 64, E 32, batch 16, sequence 64), on the grid's schedule: 5,400 steps,
# sized to end after 5 minutes of training on 2 CPU cores. The gpu size is the first
# that a CPU cannot train in a session (H 256, 12 layers, batch 128 x 128).

@dataclass(frozen=True)
class Sizes:
    hidden: int
    layers: int
    heads: int
    embedding: int
    seq: int
    batch: int
    steps: int
    documents: int  # training documents (0: all)
    learning_rate: float
    distinct_epochs: int  # 0: every epoch's pairs built anew


# The gpu profile's learning rate and warm-up come from a search on the GPU
# (studies.gpu_search) stored under this name in results_dir("gpu")/choices/.
GPU_SEARCH_CHOICE = "gpu-learning-rate"

SIZES = {
    "smoke": Sizes(32, 2, 2, 16, 32, 8, 20, 60, 5e-3, 0),
    "cpu": Sizes(64, 4, 2, 32, 64, 16, 5400, 0, 5e-3, 0),
    "gpu": Sizes(256, 12, 4, 128, 128, 128, 2000, 0, 5e-3, 4),
}
# cpu-long: the cpu profile on a schedule four times as long (warm-up share, curve points
# and learning rate as at cpu: the same run as conditions.with_steps(cpu base, 21600))
SIZES["cpu-long"] = replace(SIZES["cpu"], steps=4 * SIZES["cpu"].steps)


def pretraining_config(profile: str, style: str = "albert", **changes):
    """The base PretrainConfig of a profile; ``style`` albert (E < H, all shared) or bert.

    ``changes`` override PretrainConfig fields; ``model_changes`` (a dict) override model
    fields, e.g. ``pretraining_config("cpu", model_changes={"sharing": "ffn"})``.
    (By name, for the training code's command lines; the packages above read
    ``ResolvedProfile.pretraining_config``.)
    """
    _check_name(profile)
    return _pretraining_config(profile, None, style, **changes)


def _check_name(profile) -> None:
    """The one error of an unknown profile name (``resolve``, ``pretraining_config``)."""
    if not isinstance(profile, str) or profile not in PROFILES:
        raise ValueError(f"profile must be one of {tuple(PROFILES)}, got {profile!r}")


def _pretraining_config(profile: str, results: Path | None, style: str = "albert",
                        **changes):
    """``pretraining_config`` of a known profile; the gpu profile's searched learning rate
    is read from ``results`` (its results folder; None: ``results_dir("gpu")``)."""
    from .engine.config import PretrainConfig
    from .model.config import ModelConfig

    if style not in ("albert", "bert"):
        raise ValueError(f"style must be 'albert' or 'bert', got {style!r}")
    model_changes = changes.pop("model_changes", {})
    s = SIZES[profile]
    model = ModelConfig(vocab_size=8000, embedding_size=s.embedding if style == "albert"
                        else s.hidden, hidden_size=s.hidden, num_hidden_layers=s.layers,
                        num_attention_heads=s.heads, intermediate_size=4 * s.hidden,
                        max_position_embeddings=max(s.seq, 128),
                        sharing="all" if style == "albert" else "none",
                        initializer_range=0.05, position_init="sinusoidal")
    if model_changes:
        model = model.replace(**model_changes)
    learning_rate, warmup = s.learning_rate, max(2, s.steps // 20)
    searched = gpu_search_choice(results) if profile == "gpu" else None
    if searched:
        learning_rate = searched["learning_rate"]
        warmup = max(2, round(searched["warmup_share"] * s.steps))
    values = dict(model=model, objective="sop", max_seq_length=s.seq, batch_size=s.batch,
                  max_predictions=max(5, round(0.15 * s.seq)), optimizer="lamb",
                  learning_rate=learning_rate, warmup_steps=warmup,
                  max_steps=s.steps, curve_every=max(1, s.steps // 8),
                  curve_examples=min(256, 16 * s.batch), train_documents=s.documents,
                  distinct_epochs=s.distinct_epochs)
    values.update(changes)
    return PretrainConfig(**values)


def gpu_search_choice(results: Path | None = None):
    """The gpu profile's stored learning-rate pick ({"learning_rate", "warmup_share",
    ...}) in ``results`` (the gpu profile's results folder; None: ``results_dir("gpu")``),
    or None before the search (studies.gpu_search) has run."""
    import json

    if results is None:
        from .engine.store import results_dir
        results = results_dir("gpu")
    path = results / "choices" / f"{GPU_SEARCH_CHOICE}.json"
    return json.loads(path.read_text()) if path.is_file() else None


def eval_config(profile: str):
    """How every model of a profile is evaluated (one EvalConfig: one evaluation hash)."""
    from .engine.evaluate import EvalConfig

    s = SIZES[profile]
    small = profile == "smoke"
    return EvalConfig(max_seq_length=s.seq, max_predictions=max(5, round(0.15 * s.seq)),
                      mlm_sequences=64 if small else 4096,
                      pair_examples=64 if small else 1024,
                      probe_pairs=128 if small else 1024,
                      transition_sequences=16 if small else 64,
                      train_mlm_sequences=64 if small else 512,
                      task_examples=200 if small else 0, finetune=None)


def finetune_config(profile: str):
    """How a profile fine-tunes (FinetuneEval): sentiment, the whole training split (a
    sample at smoke), at the pilot's learning rates."""
    return _finetune_config(profile, finetune_rates(profile))


def _finetune_config(profile: str, rates: dict):
    from .engine.evaluate import FinetuneEval
    from .engine.finetune import FinetuneProtocol

    small = profile == "smoke"
    protocol = FinetuneProtocol(learning_rate=rates["pretrained"],
                                untrained_learning_rate=rates["untrained"],
                                epochs=1 if small else 3,
                                max_seq_length=min(128, SIZES[profile].seq),
                                max_train_examples=200 if small else 0)
    return FinetuneEval(protocol=protocol, task_examples=200 if small else 0)


# Fine-tuning learning rates: picked on validation from FINETUNE_GRID by the driver's
# pilot (claims.driver.finetune_rates) and stored in <results>/<profile>/choices/; until
# a profile has its pilot (and always at smoke, whose runs learn nothing to pick by),
# these defaults stand.
FINETUNE_GRID = (1e-4, 3e-4, 1e-3, 3e-3)
DEFAULT_FINETUNE_RATES = {"pretrained": 3e-4, "untrained": 1e-3}


def finetune_rates(profile: str) -> dict:
    """{"pretrained": lr, "untrained": lr} for a profile (the pilot's, where stored)."""
    from .engine.store import results_dir
    return _finetune_rates(profile, results_dir(profile))


def _finetune_rates(profile: str, results: Path) -> dict:
    import json

    path = results / "choices" / "finetune-rates.json"
    if profile == "smoke" or not path.is_file():
        return dict(DEFAULT_FINETUNE_RATES)
    return json.loads(path.read_text())["chosen"]


# -- a profile resolved once ----------------------------------------------------------------

@dataclass(frozen=True)
class ResolvedProfile:
    """A profile as the code below an entry point uses it, resolved once from its name
    (``resolve``): its settings, sizes, results folder and held-out sets, so that no layer
    looks the name up again. As nanoGPT's one config object, it is what is passed down.

    What the results store can change while a process runs is read when asked, not
    held: the fine-tuning rates the driver's pilot stores (``finetune_config``) and the
    gpu profile's searched learning rate (``pretraining_config``), both in ``choices``.
    """

    name: str
    settings: Profile = field(repr=False)
    sizes: Sizes = field(repr=False)
    results: Path  # engine.store.results_dir(name), read once
    # how every model of the profile is scored, one EvalConfig (one evaluation hash): the
    # common held-out sets (MLM sequences, SOP and NSP test pairs, probe pairs, layer
    # transitions) and their sizes
    evaluation: EvalConfig = field(repr=False)

    @property
    def description(self) -> str:
        return self.settings.description

    @property
    def default_seeds(self) -> int:
        """Seeds per condition for the empirical chapters."""
        return self.settings.default_seeds

    @property
    def choices(self) -> Path:
        """Where the profile's picks are stored (learning rates, the equal-time budget)."""
        return self.results / "choices"

    def pretraining_config(self, style: str = "albert", **changes):
        """The profile's base PretrainConfig (``profiles.pretraining_config``)."""
        return _pretraining_config(self.name, self.results, style, **changes)

    def finetune_rates(self) -> dict:
        """{"pretrained": lr, "untrained": lr}: the pilot's, where stored."""
        return _finetune_rates(self.name, self.results)

    def finetune_config(self):
        """How the profile fine-tunes (``profiles.finetune_config``), at the stored rates."""
        return _finetune_config(self.name, self.finetune_rates())


def resolve(profile) -> ResolvedProfile:
    """The ``ResolvedProfile`` of a profile's name (one already resolved is returned as
    it is); an unknown name raises ValueError naming the profiles. The same name and
    results folder ($ALBERT_RERUN_RESULTS, else data/results) give the same object."""
    if isinstance(profile, ResolvedProfile):
        return profile
    _check_name(profile)
    from .engine.store import results_dir
    return _resolved(profile, results_dir(profile))


@functools.lru_cache(maxsize=None)
def _resolved(name: str, results: Path) -> ResolvedProfile:
    return ResolvedProfile(name, PROFILES[name], SIZES[name], results, eval_config(name))

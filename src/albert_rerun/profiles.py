"""Run profiles and the validation of a notebook's papermill parameters.

One place defines what ``smoke``, ``cpu`` and ``gpu`` mean. A notebook calls
:func:`notebook_setup` first so that a bad parameter stops it at once with a
message naming the parameter and the allowed values.
"""
from __future__ import annotations

from dataclasses import dataclass

DEVICES = ("auto", "cpu", "cuda")


@dataclass(frozen=True)
class Profile:
    """How large the runs behind a chapter are."""

    name: str
    description: str  # one line for the README and the methods page
    default_seeds: int  # seeds per condition for the empirical chapters
    expected_minutes: str  # rough wall time of the whole book on the named machine


PROFILES = {
    "smoke": Profile("smoke", "seconds per notebook; what CI executes and compares", 1,
                     "about 1 minute on 2 CPU cores"),
    "cpu": Profile("cpu", "the published book: the sizes a 2-core CPU affords", 3,
                   "about 2 minutes on 2 CPU cores from the committed results; training "
                   "its 48 runs there takes about 3.5 hours"),
    "gpu": Profile("gpu", "larger models and more seeds for one modern GPU", 5,
                   "hours on one H200 (not run as a whole): masking a batch on one CPU "
                   "core bounds each run at minutes"),
}


@dataclass(frozen=True)
class Settings:
    """The validated parameters of one notebook run."""

    profile: Profile
    seeds: tuple
    device: str


def notebook_setup(profile: str, seeds=None, device: str = "auto") -> Settings:
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
    chosen = PROFILES[profile]
    count = seeds or chosen.default_seeds
    return Settings(chosen, tuple(range(count)), device)


# -- pretraining sizes per profile ------------------------------------------------------
# The recipe comes from the search in notebooks/00_recipe.md: LAMB 5e-3 with init std
# 0.05 and sinusoidal position tables. The cpu size is the grid's fastest 4-layer
# candidate (H 64, E 32, batch 16, sequence 64), on the grid's schedule: 5,400 steps,
# sized to end after 5 minutes of training on 2 CPU cores; every seed of it read context
# (went below the unigram line at [MASK]) after about 4 of them.

def pretraining_config(profile: str, style: str = "albert", **changes):
    """The base RunConfig of a profile; ``style`` albert (E < H, all shared) or bert.

    ``changes`` override RunConfig fields; ``model_changes`` (a dict) override model
    fields, e.g. ``pretraining_config("cpu", model_changes={"sharing": "ffn"})``.
    """
    from .config import ModelConfig
    from .finetune import FinetuneProtocol
    from .train import RunConfig

    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {tuple(PROFILES)}, got {profile!r}")
    if style not in ("albert", "bert"):
        raise ValueError(f"style must be 'albert' or 'bert', got {style!r}")
    model_changes = changes.pop("model_changes", {})
    sizes = {
        # H, layers, heads, E, T, batch, steps, documents, eval, probe, finetune train/eval
        "smoke": (32, 2, 2, 16, 32, 8, 20, 60, 64, 128, (200, 200)),
        "cpu": (64, 4, 2, 32, 64, 16, 5400, 0, 512, 512, (1000, 500)),
        "gpu": (256, 12, 4, 128, 128, 256, 4000, 0, 2048, 4096, (0, 0)),
    }[profile]
    H, layers, heads, E, T, batch, steps, documents, evals, probes, finetune_n = sizes
    model = ModelConfig(vocab_size=8000, embedding_size=E if style == "albert" else H,
                        hidden_size=H, num_hidden_layers=layers, num_attention_heads=heads,
                        intermediate_size=4 * H, max_position_embeddings=max(T, 128),
                        sharing="all" if style == "albert" else "none",
                        initializer_range=0.05, position_init="sinusoidal")
    if model_changes:
        model = model.replace(**model_changes)
    # few fine-tuning examples (cost) get a larger learning rate than the full split
    protocol = FinetuneProtocol(max_train_examples=finetune_n[0],
                                max_eval_examples=finetune_n[1], max_seq_length=min(128, T),
                                learning_rate=1e-4 if finetune_n[0] == 0 else 5e-4)
    values = dict(model=model, objective="sop", max_seq_length=T, batch_size=batch,
                  max_predictions=max(5, round(0.15 * T)), optimizer="lamb",
                  learning_rate=5e-3, warmup_steps=max(2, steps // 20), max_steps=steps,
                  eval_examples=evals, probe_examples=probes,
                  curve_every=max(1, steps // 8), train_documents=documents,
                  finetune=protocol, device="auto")
    values.update(changes)
    return RunConfig(**values)

"""The recipe search: learning curves of candidate recipes on this CPU.

A naive post-LN tiny ALBERT stays on the unigram plateau (held-out MLM accuracy
about 5-8%) for many minutes here. Before any claim is sized, this measures which
knobs (optimizer, learning rate, initialization, positions, vocabulary size)
leave it fastest, in steps and in seconds. Results go to data/results/recipe/ and the
methods chapter plots them.

    .venv/bin/python -m albert_rerun.recipe [--only NAME ...]
"""
from __future__ import annotations

import argparse

from .config import ModelConfig
from .paths import repo_root
from .train import RunConfig, run


def base_model(**changes) -> ModelConfig:
    values = dict(vocab_size=8000, embedding_size=64, hidden_size=128, num_hidden_layers=4,
                  num_attention_heads=2, intermediate_size=512, max_position_embeddings=128,
                  sharing="all")
    values.update(changes)
    return ModelConfig(**values)


def base_run(**changes) -> RunConfig:
    values = dict(model=base_model(), objective="sop", max_seq_length=64, batch_size=32,
                  max_predictions=10, optimizer="adamw", learning_rate=1e-3, warmup_steps=60,
                  max_steps=600, eval_examples=256, probe_examples=512, curve_every=50,
                  finetune=None, device="cpu")
    values.update(changes)
    return RunConfig(**values)


CANDIDATES = {  # one knob at a time against adamw-1e-3; 600 steps is about 2.5 minutes
    "adamw-1e-3": base_run(),
    "lamb-5e-3": base_run(optimizer="lamb", learning_rate=5e-3),
    "adamw-1e-3-init-0.05": base_run(model=base_model(initializer_range=0.05)),
    "adamw-1e-3-sinusoidal": base_run(model=base_model(position_init="sinusoidal")),
    "adamw-2e-3-long": base_run(learning_rate=2e-3, max_steps=2400, curve_every=100),
    # the three knobs that helped at 600 steps, together, for 2400 steps
    "lamb-5e-3-init-0.05-sinusoidal-long": base_run(
        model=base_model(initializer_range=0.05, position_init="sinusoidal"), optimizer="lamb",
        learning_rate=5e-3, max_steps=2400, curve_every=100),
    # the chosen recipe with half the vocabulary (its own SentencePiece model): more
    # pieces per word, but each piece is seen twice as often
    "lamb-5e-3-init-0.05-sinusoidal-v4000-long": base_run(
        model=base_model(vocab_size=4000, initializer_range=0.05, position_init="sinusoidal"),
        optimizer="lamb", learning_rate=5e-3, max_steps=2400, curve_every=100),
    # the same recipe on a 6000-step schedule: where does [MASK] accuracy pass the
    # left-bigram rung, and so how long would the cpu profile need to be?
    "lamb-5e-3-init-0.05-sinusoidal-6000": base_run(
        model=base_model(initializer_range=0.05, position_init="sinusoidal"), optimizer="lamb",
        learning_rate=5e-3, max_steps=6000, curve_every=250),
}


def recipe_store():
    """The committed recipe runs: a measurement the book shows, never a CI smoke run."""
    return repo_root() / "data" / "results" / "recipe"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", default=None, choices=tuple(CANDIDATES))
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    args = parser.parse_args(argv)
    store = recipe_store()
    for name in args.only or CANDIDATES:
        # every curve point on the whole held-out set, so that a curve and the chapter's
        # plateau and rungs are measured on the same sequences
        result = run(CANDIDATES[name], store, quiet=True, fresh=args.fresh,
                     curve_examples=None)
        m = result["metrics"]
        print(f"{name:>24}: MLM {m['mlm_accuracy']:.3f} after {m['steps']} steps, "
              f"{m['train_seconds']:.0f} s, {m['tokens_per_second']:,.0f} tok/s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

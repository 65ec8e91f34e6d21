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


# -- the wider search: batch, learning rate, width, depth, sequence length ---------------
# Each schedule is sized to end after CPU_BUDGET seconds of training on this 2-core CPU
# (step times measured here by step_seconds); the runs themselves can go anywhere (a lent
# GPU trains them side by side), and the chapter converts their steps back into this
# CPU's seconds.

CPU_BUDGET = 300.0  # "within the first minutes": every grid schedule ends at 5 minutes here
GRID_THREADS = 2  # the thread count the budget is measured at (the recipe runs' count)
SHAPES = {  # name: (hidden size, layers, batch, sequence length)
    "H128-L4-B32-T64": (128, 4, 32, 64), "H128-L4-B16-T64": (128, 4, 16, 64),
    "H128-L4-B8-T64": (128, 4, 8, 64), "H128-L2-B16-T64": (128, 2, 16, 64),
    "H128-L2-B8-T64": (128, 2, 8, 64), "H64-L4-B16-T64": (64, 4, 16, 64),
    "H64-L4-B32-T64": (64, 4, 32, 64), "H256-L4-B8-T64": (256, 4, 8, 64),
    "H128-L4-B32-T32": (128, 4, 32, 32), "H128-L4-B16-T32": (128, 4, 16, 32),
    "H128-L2-B32-T64": (128, 2, 32, 64), "H64-L2-B16-T64": (64, 2, 16, 64),
    "H64-L4-B8-T64": (64, 4, 8, 64),
}
GRID = [  # (shape, optimizer, learning rate), most informative first
    ("H128-L4-B16-T64", "lamb", 5e-3), ("H128-L4-B8-T64", "lamb", 5e-3),
    ("H128-L4-B16-T64", "lamb", 1e-2), ("H128-L4-B8-T64", "lamb", 2.5e-3),
    ("H128-L4-B32-T64", "lamb", 1e-2), ("H128-L2-B16-T64", "lamb", 5e-3),
    ("H64-L4-B16-T64", "lamb", 5e-3), ("H128-L4-B8-T64", "lamb", 1e-2),
    ("H128-L4-B16-T64", "lamb", 2.5e-3), ("H128-L2-B8-T64", "lamb", 5e-3),
    ("H128-L2-B16-T64", "lamb", 1e-2), ("H64-L4-B16-T64", "lamb", 1e-2),
    ("H128-L4-B32-T32", "lamb", 5e-3), ("H128-L4-B16-T32", "lamb", 5e-3),
    ("H128-L4-B32-T64", "lamb", 5e-3), ("H256-L4-B8-T64", "lamb", 5e-3),
    ("H128-L4-B16-T64", "adamw", 2e-3), ("H64-L4-B32-T64", "lamb", 5e-3),
    ("H128-L2-B8-T64", "lamb", 1e-2), ("H128-L4-B8-T64", "adamw", 1e-3),
]


# The second round: the three that read context within the budget, at two more seeds,
# and their neighbours (shape, optimizer, learning rate, seed).
FOLLOW_UP = [
    ("H128-L2-B16-T64", "lamb", 1e-2, 1), ("H128-L2-B16-T64", "lamb", 1e-2, 2),
    ("H128-L2-B16-T64", "lamb", 5e-3, 1), ("H128-L2-B16-T64", "lamb", 5e-3, 2),
    ("H64-L4-B16-T64", "lamb", 5e-3, 1), ("H64-L4-B16-T64", "lamb", 5e-3, 2),
    ("H128-L2-B32-T64", "lamb", 1e-2, 0), ("H128-L2-B16-T64", "lamb", 2e-2, 0),
    ("H64-L2-B16-T64", "lamb", 5e-3, 0), ("H64-L4-B8-T64", "lamb", 5e-3, 0),
    ("H128-L2-B16-T64", "adamw", 2e-3, 0),
]


# what shapes a run's training (model, data, optimizer, schedule); a profile adopts a
# grid candidate when these agree (evaluation sizes and fine-tuning may differ)
TRAINING_FIELDS = ("model", "objective", "max_seq_length", "batch_size", "max_predictions",
                   "optimizer", "learning_rate", "warmup_steps", "max_steps", "weight_decay",
                   "train_documents")


def shape_run(shape: str, optimizer: str = "lamb", learning_rate: float = 5e-3,
              steps: int = 100, device: str = "cpu") -> RunConfig:
    """The chosen recipe (init 0.05, sinusoidal positions) at a grid shape."""
    H, L, B, T = SHAPES[shape]
    model = base_model(hidden_size=H, num_hidden_layers=L, embedding_size=H // 2,
                       intermediate_size=4 * H, num_attention_heads=max(2, H // 64),
                       initializer_range=0.05, position_init="sinusoidal")
    return base_run(model=model, batch_size=B, max_seq_length=T,
                    max_predictions=max(5, round(0.15 * T)), optimizer=optimizer,
                    learning_rate=learning_rate, max_steps=steps,
                    warmup_steps=max(2, steps // 20), curve_every=max(25, steps // 24),
                    device=device)


def step_seconds(shapes=tuple(SHAPES), threads: int = GRID_THREADS, steps: int = 20) -> dict:
    """Seconds per training step of each shape on this CPU (LAMB, random batches)."""
    import torch

    from .bench import _time_steps
    from .model import AlbertForPreTraining
    from .train import make_optimizer
    torch.set_num_threads(threads)
    out = {}
    for shape in shapes:
        config = shape_run(shape)
        B, T, P = config.batch_size, config.max_seq_length, config.max_predictions
        torch.manual_seed(0)
        model = AlbertForPreTraining(config.model).train()
        optimizer = make_optimizer(model, config)
        ids = torch.randint(5, config.vocab_size, (B, T))
        labels = torch.full((B, T), -100)
        labels[:, 1:1 + P] = ids[:, 1:1 + P]
        types, mask = torch.zeros_like(ids), torch.ones_like(ids)
        sentence = torch.randint(0, 2, (B,))

        def step():
            model(ids, types, mask, mlm_labels=labels, sentence_labels=sentence).loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        out[shape] = _time_steps(step, 3, steps)
    return out


def grid_store():
    return repo_root() / "data" / "results" / "recipe-grid"


def step_seconds_record(measure: bool = False) -> dict:
    """The stored step times the grid's schedules are sized by (measured if asked or
    missing; shapes added since are measured and added)."""
    import json

    from .provenance import record
    from .results import atomic_write_json
    path = grid_store() / "step-seconds.json"
    if path.exists() and not measure:
        stored = json.loads(path.read_text())
        missing = [shape for shape in SHAPES if shape not in stored["step_seconds"]]
        if not missing:
            return stored
        stored["step_seconds"].update(step_seconds(missing))
        stored.setdefault("added", []).append({"shapes": missing, "provenance": record()})
    else:
        stored = {"threads": GRID_THREADS, "step_seconds": step_seconds(),
                  "provenance": record()}
    atomic_write_json(path, stored)
    return stored


def grid(device: str = "cpu", measured: dict | None = None, entries=None) -> dict:
    """Every grid candidate (``entries``, default GRID then FOLLOW_UP) with its schedule
    sized to CPU_BUDGET seconds here."""
    seconds = (measured or step_seconds_record())["step_seconds"]
    out = {}
    for shape, optimizer, lr, *seed in (GRID + FOLLOW_UP if entries is None else entries):
        steps = max(100, int(round(CPU_BUDGET / seconds[shape] / 100)) * 100)
        config = shape_run(shape, optimizer, lr, steps, device)
        name = f"{shape}-{optimizer}-{lr:g}"
        if seed and seed[0]:
            config, name = config.replace(seed=seed[0]), f"{name}-seed{seed[0]}"
        out[name] = config
    return out


def run_grid(jobs: list, workers: int, seconds: float) -> None:
    """Train (name, config, store) jobs in ``workers`` processes side by side, one torch
    thread each unless $ALBERT_RERUN_THREADS says otherwise; no job starts after
    ``seconds``. Finished runs are stored as they end."""
    import os

    from .train import run_many
    threads = int(os.environ.get("ALBERT_RERUN_THREADS") or 1)
    options = {"curve_examples": None}  # every curve point on the whole held-out set
    for name, outcome in run_many([(name, config, store, options)
                                   for name, config, store in jobs],
                                  workers, seconds, threads):
        if outcome is None:
            print(f"{name}: not started (deadline)", flush=True)
            continue
        if isinstance(outcome, str):
            print(f"{name}: FAILED {outcome}", flush=True)
            continue
        result, wall = outcome
        m = result["metrics"]
        print(f"{name}: {m['steps']} steps, loss at [MASK] {m['mlm_loss_at_mask']:.3f}, "
              f"MLM {m['mlm_accuracy']:.3f}, {wall:.0f} s", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", default=None, choices=tuple(CANDIDATES))
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--grid", action="store_true",
                        help="train the wider grid instead (data/results/recipe-grid)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="where the grid runs train (their schedules are this CPU's)")
    parser.add_argument("--workers", type=int, default=1, help="grid runs side by side")
    parser.add_argument("--seconds", type=float, default=float("inf"),
                        help="start no grid run after this many seconds")
    parser.add_argument("--follow-up", action="store_true",
                        help="with --grid: only the second round (FOLLOW_UP)")
    parser.add_argument("--measure", action="store_true",
                        help="measure this CPU's step times for the grid (else stored)")
    args = parser.parse_args(argv)
    if args.measure:
        print(step_seconds_record(measure=True)["step_seconds"])
    if args.grid:
        store = grid_store() / args.device
        # first the chosen recipe itself, so that the device's curves can be set beside
        # the ones this CPU measured for the same config
        chosen = "lamb-5e-3-init-0.05-sinusoidal-long"
        jobs = [] if args.follow_up else [
            (chosen, CANDIDATES[chosen].replace(device=args.device), store)]
        entries = FOLLOW_UP if args.follow_up else None
        jobs += [(n, c, store) for n, c in grid(args.device, entries=entries).items()]
        run_grid(jobs, args.workers, args.seconds)
        return 0
    if args.measure:
        return 0
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

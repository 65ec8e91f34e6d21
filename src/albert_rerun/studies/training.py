"""Training and evaluating runs into a store: the jobs the worker pool pickles, the stage
runners every study shares (``_train``, ``_evaluate``), and a stretch's options."""
from __future__ import annotations

import os
from pathlib import Path

from ..engine.config import PretrainConfig
from ..engine.runner import rank_and_world, run_many, shard, worker_threads
from ..engine.store import (atomic_write_json, config_hash, read_json, stored_eval,
                            stored_pretrain)
from ..profiles import ResolvedProfile
from . import conditions as C

CONTROL_SEEDS = 3  # random-initialization controls per architecture (seeds 0, 1, 2)
# --fill: the least budget left for which an idle worker starts a run that cannot end
FILL_START_SECONDS = 300.0
# what a finished run's log line shows; a blinded store's shows costs only
SHOWN = ("steps", "train_seconds", "tokens_per_second", "mlm_loss_at_mask",
         "curve_mlm_loss_at_mask", "sentiment_accuracy")
BLINDED = ("steps", "train_seconds", "tokens_per_second")


def pretrain_job(config_dict: dict, store: Path, device: str, compile: bool,
                 fresh: bool, stop_at: float | None = None) -> dict:
    """One run, trained or resumed into ``store``: its metrics, or at ``stop_at`` the step
    reached (checkpointed)."""
    from ..engine.pretrain import StoppedAtDeadline, run
    try:
        result = run(PretrainConfig.from_dict(config_dict), store, device,
                     compile, quiet=True, fresh=fresh, stop_at=stop_at)
    except StoppedAtDeadline as stopped:
        return {"hash": config_hash(config_dict), "stopped": stopped.step,
                "steps": stopped.steps}
    metrics = dict(result["metrics"])
    if result["curve"]:  # the curve's held-out sequences (a subset of the evaluation's)
        metrics["curve_mlm_loss_at_mask"] = result["curve"][-1]["mlm_loss_at_mask"]
    return {"hash": result["hash"], "metrics": metrics}


def evaluate_hash(store, pretrain_hash: str, config, device: str,
                  fresh: bool = False) -> dict:
    """The evaluation ``config`` of the stored run ``pretrain_hash`` in ``store`` (computed
    if missing): its hash and its numeric metrics."""
    import torch

    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import cpu_threads, resolve_device
    result = read_json(store / "pretrain" / f"{pretrain_hash}.json")
    if result is None:
        raise FileNotFoundError(f"no stored pretraining run {pretrain_hash} in {store}")
    torch.set_num_threads(cpu_threads())
    outcome = evaluate_stored(store, result, config, resolve_device(device), fresh=fresh)
    return {"hash": pretrain_hash, "metrics": {k: v for k, v in outcome["metrics"].items()
                                               if isinstance(v, float)}}


def store_choice(path, record: dict) -> None:
    """Write a pick to ``choices/`` once, from rank 0."""
    if rank_and_world()[0] == 0:
        atomic_write_json(path, record)


def _sync_ranks() -> None:
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def remaining_seconds(config: PretrainConfig, store: Path, device: str) -> float:
    """Predicted training seconds left of one run in ``store`` at the stored FLOP rate
    (0 where none is stored)."""
    from ..engine.bench import stored_flop_rate
    from ..engine.pretrain import checkpoint_step, resolve_device
    kind = "cuda" if resolve_device(device).type == "cuda" else "cpu"
    try:
        rate = stored_flop_rate(kind)
    except (FileNotFoundError, KeyError, StopIteration):
        return 0.0
    workdir = store / "checkpoints" / config_hash(config.to_dict())
    steps = max(0, config.max_steps - checkpoint_step(workdir))
    return C.step_flops(config) * steps / rate


def steps_reached(config: PretrainConfig, store: Path) -> int:
    """How far a run of ``store`` has trained, no loss read: every step once stored,
    else its checkpoint's step (0 before one)."""
    from ..engine.pretrain import checkpoint_step
    if stored_pretrain(store, config) is not None:
        return config.max_steps
    return checkpoint_step(store / "checkpoints" / config_hash(config.to_dict()))


def _train(configs: list, store: Path, device: str, workers: int, compile: bool,
           fresh: bool, seconds: float, label: str, finish_by: float | None = None,
           fill: bool = False, blinded: bool = False, failed=None) -> int:
    """Train the missing ``configs`` into ``store``; with ``finish_by`` (a ``time.time()``)
    start only the runs predicted to end before it and stop the running ones there,
    checkpointed. ``fill``: a worker with nothing that fits starts the next run anyway
    while ``FILL_START_SECONDS`` are left. ``blinded``: the log shows costs, not
    results; ``failed(key, text)`` is told of each run that failed."""
    mine = _mine(configs, [c for c in configs if fresh or stored_pretrain(store, c) is None],
                 label, "to train")
    jobs = [(config_hash(c.to_dict()), pretrain_job,
             (c.to_dict(), store, device, compile, fresh, finish_by),
             remaining_seconds(c, store, device) if finish_by else 0.0) for c in mine]
    if fill:
        jobs = [(*job[:3], min(job[3], FILL_START_SECONDS)) for job in jobs]
    done = _report(run_many(jobs, workers, seconds, worker_threads(workers), finish_by),
                   label, blinded, failed)
    _sync_ranks()
    return done


def _evaluate(hashes: list, store: Path, config, device: str, workers: int,
              fresh: bool = False, seconds: float = float("inf"), label: str = "evaluate",
              blinded: bool = False) -> int:
    """Evaluate (or fine-tune: ``config``) the stored runs ``hashes`` of ``store`` lack."""
    mine = _mine(hashes, [h for h in hashes if fresh or stored_eval(store, h, config) is None],
                 label, "to do")
    jobs = [(h, evaluate_hash, (store, h, config, device, fresh)) for h in mine]
    done = _report(run_many(jobs, workers, seconds, worker_threads(workers)), label, blinded)
    _sync_ranks()
    return done


def _mine(items: list, missing: list, label: str, verb: str) -> list:
    """This rank's share of ``missing``, said in the log."""
    rank, world = rank_and_world()
    mine = shard(missing, rank, world)
    print(f"[{label}] {len(items)} runs, {len(missing)} {verb}, {len(mine)} on rank "
          f"{rank}", flush=True)
    return mine


def _report(outcomes, label: str, blinded: bool = False, failed=None) -> int:
    """Log each outcome of ``run_many``; the number of runs done."""
    done = 0
    for key, outcome in outcomes:
        if outcome is None:
            print(f"[{label}] {key}: not started (deadline)", flush=True)
        elif isinstance(outcome, str):
            print(f"[{label}] {key}: FAILED {outcome}", flush=True)
            if failed is not None:
                failed(key, outcome)
        elif "stopped" in outcome[0]:
            print(f"[{label}] {key}: stopped at the deadline at step {outcome[0]['stopped']}"
                  f" of {outcome[0]['steps']}, checkpoint kept ({outcome[1]:.0f} s)",
                  flush=True)
        else:
            metrics = outcome[0]["metrics"]
            shown = {k: round(metrics[k], 4) for k in (BLINDED if blinded else SHOWN)
                     if k in metrics}
            print(f"[{label}] {key} {shown} ({outcome[1]:.0f} s)", flush=True)
            done += 1
    return done


def held_out_scores(profile: ResolvedProfile, configs: dict, device: str = "auto"):
    """{key: held-out cross-entropy at [MASK]} of the stored runs of ``configs`` ({key:
    config}) on the profile's evaluation MLM set; None if one is not stored."""
    import torch

    from ..engine.evaluate import mlm_set, score_mlm
    from ..engine.pretrain import resolve_device
    from ..engine.store import load_weights
    from ..model.modeling import AlbertForPreTraining
    store, evaluation = profile.results, profile.evaluation
    results = {key: stored_pretrain(store, config) for key, config in configs.items()}
    if any(result is None for result in results.values()):
        return None
    data = mlm_set(evaluation.max_seq_length, evaluation.max_predictions,
                   evaluation.mlm_sequences, evaluation.vocab_size)
    scores = {}
    for key, config in configs.items():
        model = AlbertForPreTraining(config.model)
        model.load_state_dict(load_weights(store, results[key]))
        scores[key] = score_mlm(model, data, resolve_device(device))["mlm_loss_at_mask"]
        del model
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    return scores


def add_stretch_arguments(parser) -> None:
    """A stretch's options, shared by the driver and the studies' ``train`` commands."""
    from ..cli import positive_int
    parser.add_argument("--hours", type=float, default=None,
                        help="a wall-clock budget for pretraining: start no run predicted "
                        "to end after it, stop the running ones at its end with a "
                        "checkpoint (the same command resumes them)")
    parser.add_argument("--fill", action="store_true",
                        help="with --hours: a worker that no run fits starts the next one "
                        "anyway while 5 minutes are left, and stops it at the deadline "
                        "with a checkpoint for the next stretch")
    parser.add_argument("--workers", type=positive_int, default=None,
                        help="parallel training processes (default: 2 on a CPU, 1 on a GPU)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))


def check_stretch_arguments(parser, args) -> None:
    """Refuse a non-positive --hours, and --fill without it."""
    if args.hours is not None and not args.hours > 0:
        parser.error(f"--hours must be a positive number of hours, got {args.hours}")
    if args.fill and args.hours is None:
        parser.error("--fill needs --hours: it fills a budget's idle workers")


def run_stretch(parser, args, train) -> int:
    """A ``train`` command's body: check the stretch's options, then ``train`` with them."""
    check_stretch_arguments(parser, args)
    train(args.hours, args.fill, args.workers, args.device)
    return 0


def pilot_main(argv, description: str, train, progress_lines, train_help: str,
               progress_help: str) -> int:
    """A pilot's command line: ``train`` (a stretch, ``run_stretch``) and ``progress``
    (each line of ``progress_lines()`` printed)."""
    import argparse
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    add_stretch_arguments(sub.add_parser("train", help=train_help))
    sub.add_parser("progress", help=progress_help)
    args = parser.parse_args(argv)
    if args.command == "progress":
        for line in progress_lines():
            print(line)
        return 0
    return run_stretch(parser, args, train)


def default_workers() -> int:
    """Two single-threaded workers on a CPU with two or more cores; one on a GPU."""
    import torch
    if torch.cuda.is_available():
        return 1
    return 2 if len(os.sched_getaffinity(0)) >= 2 else 1

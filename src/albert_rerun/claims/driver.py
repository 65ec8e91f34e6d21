"""The claims driver: train and evaluate every run a profile's chapters need.

    python -m albert_rerun.claims --profile cpu --workers 2
    torchrun --nproc_per_node 8 -m albert_rerun.claims --profile gpu

Stages, each over the runs not yet stored (all with ``--fresh``):

1. the wide model's learning-rate sweep (claim 6), at a seed no comparison uses; its
   winner is stored in ``choices/`` before any comparison run is configured;
2. every pretraining run of the chosen claims, claim by claim, seed by seed, and the
   random-initialization controls (zero steps: the initialized weights);
3. the fine-tuning learning-rate pilot on the base run's seed 0 and its control, whose
   picks are stored in ``choices/`` before any reported evaluation;
4. the evaluation of every run and control (``engine.evaluate``).

Runs go to worker processes side by side (``--workers``); under torchrun each rank
takes a disjoint share of every stage (``engine.runner.shard``) and the ranks meet
between stages.
"""
from __future__ import annotations

import argparse
import os
import time

from ..engine.config import PretrainConfig
from ..engine.runner import rank_and_world, run_many, shard, worker_threads
from ..engine.store import (atomic_write_json, config_hash, read_json, results_dir,
                            stored_eval, stored_pretrain)
from ..profiles import FINETUNE_GRID, PROFILES
from . import conditions as C

CONTROL_SEEDS = 3  # random-initialization controls per architecture (seeds 0, 1, 2)


# -- job functions (importable: the spawn pool pickles them by name) --------------------

def pretrain_job(config_dict: dict, profile: str, device: str, compile: bool,
                 fresh: bool) -> dict:
    from ..engine.pretrain import run
    result = run(PretrainConfig.from_dict(config_dict), results_dir(profile), device,
                 compile, quiet=True, fresh=fresh)
    return {"hash": result["hash"], "metrics": result["metrics"]}


def eval_job(pretrain_hash: str, profile: str, device: str, fresh: bool) -> dict:
    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import resolve_device
    from ..profiles import eval_config
    store = results_dir(profile)
    result = read_json(store / "pretrain" / f"{pretrain_hash}.json")
    if result is None:
        raise FileNotFoundError(f"no stored pretraining run {pretrain_hash} in {store}")
    import torch
    from ..engine.pretrain import cpu_threads
    torch.set_num_threads(cpu_threads())
    outcome = evaluate_stored(store, result, eval_config(profile), resolve_device(device),
                              fresh=fresh)
    return {"hash": pretrain_hash, "metrics": {k: v for k, v in outcome["metrics"].items()
                                               if isinstance(v, float)}}


# -- what a profile trains --------------------------------------------------------------

def _unique(configs) -> list:
    seen, out = set(), []
    for config in configs:
        key = config_hash(config.to_dict())
        if key not in seen:
            seen.add(key)
            out.append(config)
    return out


def planned_runs(profile: str, seeds, names=C.CLAIMS, wide_learning_rate=None) -> list:
    """Every distinct seeded pretraining run of the named claims: claim by claim, seed by
    seed, so that an interrupted driver leaves whole claims behind it."""
    out = []
    for name in names:
        group = C.claim_conditions(profile, name, wide_learning_rate)
        for seed in seeds:
            out += [C.seeded(config, seed) for config in group.values()]
    return _unique(out)


def planned_controls(runs: list) -> list:
    return C.controls([r for r in runs if r.seed < CONTROL_SEEDS])


def choices_path(profile: str, name: str):
    return results_dir(profile) / "choices" / f"{name}.json"


def _sync_ranks() -> None:
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.barrier()


def _train(configs: list, profile: str, device: str, workers: int, compile: bool,
           fresh: bool, seconds: float, label: str) -> int:
    store = results_dir(profile)
    rank, world = rank_and_world()
    missing = [c for c in configs if fresh or stored_pretrain(store, c) is None]
    mine = shard(missing, rank, world)
    print(f"[{label}] {len(configs)} runs, {len(missing)} to train, {len(mine)} on rank "
          f"{rank}", flush=True)
    jobs = [(config_hash(c.to_dict()), pretrain_job, (c.to_dict(), profile, device, compile,
                                                      fresh)) for c in mine]
    done = _report(run_many(jobs, workers, seconds, worker_threads(workers)), label)
    _sync_ranks()
    return done


def _evaluate(hashes: list, profile: str, device: str, workers: int, fresh: bool,
              seconds: float) -> int:
    from ..profiles import eval_config
    store = results_dir(profile)
    config = eval_config(profile)
    rank, world = rank_and_world()
    missing = [h for h in hashes if fresh or stored_eval(store, h, config) is None]
    mine = shard(missing, rank, world)
    print(f"[evaluate] {len(hashes)} runs, {len(missing)} to evaluate, {len(mine)} on rank "
          f"{rank}", flush=True)
    jobs = [(h, eval_job, (h, profile, device, fresh)) for h in mine]
    done = _report(run_many(jobs, workers, seconds, worker_threads(workers)), "evaluate")
    _sync_ranks()
    return done


def _report(outcomes, label: str) -> int:
    done = 0
    for key, outcome in outcomes:
        if outcome is None:
            print(f"[{label}] {key}: not started (deadline)", flush=True)
        elif isinstance(outcome, str):
            print(f"[{label}] {key}: FAILED {outcome}", flush=True)
        else:
            metrics = outcome[0]["metrics"]
            shown = {k: round(metrics[k], 4) for k in
                     ("steps", "tokens_per_second", "mlm_loss_at_mask", "sentiment_accuracy")
                     if k in metrics}
            print(f"[{label}] {key} {shown} ({outcome[1]:.0f} s)", flush=True)
            done += 1
    return done


# -- the two choices made before the comparisons ----------------------------------------

def wide_learning_rate(profile: str, device: str = "auto", workers: int = 1,
                       compile: bool = False, fresh: bool = False) -> float:
    """The wide model's learning rate: the sweep's lowest held-out cross-entropy at
    [MASK] (trained if missing), stored with the sweep's figures."""
    path = choices_path(profile, "wide-learning-rate")
    stored = None if fresh else read_json(path)
    if stored is not None:
        return stored["learning_rate"]
    sweep = C.wide_sweep(profile)
    _train(list(sweep.values()), profile, device, workers, compile, fresh, float("inf"),
           "wide sweep")
    import torch

    from ..engine.evaluate import mlm_set, score_mlm
    from ..engine.pretrain import resolve_device
    from ..engine.store import load_weights
    from ..model.modeling import AlbertForPreTraining
    from ..profiles import eval_config
    store, evaluation = results_dir(profile), eval_config(profile)
    data = mlm_set(evaluation.max_seq_length, evaluation.max_predictions,
                   evaluation.mlm_sequences, evaluation.vocab_size)
    scores = {}
    for lr, config in sweep.items():
        result = stored_pretrain(store, config)
        model = AlbertForPreTraining(config.model)
        model.load_state_dict(load_weights(store, result))
        scores[lr] = score_mlm(model, data, resolve_device(device))["mlm_loss_at_mask"]
        del model
        torch.cuda.empty_cache() if torch.cuda.is_available() else None
    chosen = min(scores, key=scores.get)
    rank, _ = rank_and_world()
    if rank == 0:
        atomic_write_json(path, {"learning_rate": chosen, "seed": C.SWEEP_SEED,
                                 "steps": C.equal_flops_steps(profile),
                                 "mlm_loss_at_mask": {str(k): v for k, v in scores.items()},
                                 "runs": {str(k): config_hash(v.to_dict())
                                          for k, v in sweep.items()}})
    return chosen


def finetune_rates(profile: str, device: str = "auto", fresh: bool = False) -> dict:
    """The fine-tuning learning rates (pretrained, untrained) picked on validation from
    FINETUNE_GRID with the base run's seed 0 and its control (stored in choices/)."""
    path = choices_path(profile, "finetune-rates")
    stored = None if fresh else read_json(path)
    if stored is not None:
        return stored
    import torch

    from ..data.tokenizer import Tokenizer
    from ..engine.config import untrained
    from ..engine.finetune import learning_rate_pilot
    from ..engine.pretrain import cpu_threads, resolve_device
    from ..engine.store import load_weights
    from ..profiles import eval_config
    store = results_dir(profile)
    base = C.seeded(C.base(profile), 0)
    runs = {"pretrained": base, "untrained": untrained(base)}
    _train(list(runs.values()), profile, device, 1, False, False, float("inf"), "pilot")
    torch.set_num_threads(cpu_threads())
    states = {name: load_weights(store, stored_pretrain(store, config))
              for name, config in runs.items()}
    protocol = eval_config(profile).finetune
    started = time.time()
    outcome = learning_rate_pilot(states, base.model, "sentiment", protocol, FINETUNE_GRID,
                                  resolve_device(device), Tokenizer(vocab_size=base.vocab_size))
    record = {**outcome, "grid": list(FINETUNE_GRID), "task": "sentiment",
              "runs": {k: config_hash(v.to_dict()) for k, v in runs.items()},
              "seconds": time.time() - started}
    if rank_and_world()[0] == 0:
        atomic_write_json(path, record)
    return record


# -- the whole profile --------------------------------------------------------------------

def predicted_seconds(configs: list, device_kind: str) -> float:
    """Training seconds of these runs from stored throughput measurements: on a GPU the
    H200 bench's tokens/s at the gpu profile's size, on a CPU the cpu profile's runs'
    (both as FLOP/s, scaled by each run's FLOPs)."""
    from ..engine.bench import stored_flop_rate
    rate = stored_flop_rate(device_kind)
    return sum(C.step_flops(c) * c.max_steps for c in configs) / rate


def train_all(profile: str, seeds=None, device: str = "auto", workers: int | None = None,
              fresh: bool = False, names=C.CLAIMS, seconds: float = float("inf"),
              compile: bool = False, stages=("pretrain", "evaluate"),
              confirm_gpu_profile: bool = False) -> int:
    """Every stage above for the named claims; returns the number of runs and
    evaluations done. A failed run is reported and the others go on."""
    from ..data.files import verify_inputs
    verify_inputs()  # a corrupt data file stops here, before any run starts
    seeds = range(seeds) if isinstance(seeds, int) else (seeds or C.default_seeds(profile))
    workers = workers or default_workers()
    deadline = time.time() + seconds
    import torch
    if profile == "gpu" and not torch.cuda.is_available() and not confirm_gpu_profile:
        probe = planned_runs(profile, seeds, [n for n in names if n != "wall_clock"])
        hours = predicted_seconds(probe, "cpu") / 3600
        raise SystemExit(f"the gpu profile on a CPU: its runs (without the wall-clock claim) "
                         f"would train for about {hours:,.0f} hours here (predicted from "
                         f"the stored cpu runs' FLOP rate); pass --yes-train-gpu-profile-on-"
                         f"cpu to go on")
    done = 0
    lr = None
    if "wall_clock" in names and "pretrain" in stages:
        lr = wide_learning_rate(profile, device, workers, compile, fresh)
    elif "wall_clock" in names:
        lr = read_json(choices_path(profile, "wide-learning-rate"))["learning_rate"]
    runs = planned_runs(profile, seeds, names, lr)
    runs_and_controls = runs + planned_controls(runs)
    if "pretrain" in stages:
        done += _train(runs_and_controls, profile, device, workers, compile, fresh,
                       max(0.0, deadline - time.time()), "pretrain")
    if "evaluate" in stages:
        finetune_rates(profile, device)
        store = results_dir(profile)
        ready = [config_hash(c.to_dict()) for c in runs_and_controls
                 if stored_pretrain(store, c) is not None]
        done += _evaluate(ready, profile, device, workers, fresh,
                          max(0.0, deadline - time.time()))
    return done


def default_workers() -> int:
    """Two single-threaded workers on a CPU with two or more cores; one on a GPU."""
    import torch
    if torch.cuda.is_available():
        return 1
    return 2 if len(os.sched_getaffinity(0)) >= 2 else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu", choices=tuple(PROFILES))
    parser.add_argument("--seeds", type=int, default=None, help="default: the profile's")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--workers", type=int, default=None,
                        help="parallel training processes (default: 2 on a CPU, 1 on a GPU)")
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--compile", action="store_true", help="torch.compile the models")
    parser.add_argument("--claims", nargs="+", default=list(C.CLAIMS), choices=C.CLAIMS,
                        metavar="CLAIM", help=f"which claims' runs, in this order "
                        f"(default: all, {' '.join(C.CLAIMS)})")
    parser.add_argument("--stages", nargs="+", default=["pretrain", "evaluate"],
                        choices=("pretrain", "evaluate"))
    parser.add_argument("--seconds", type=float, default=float("inf"),
                        help="start no run after this many seconds (default: no limit)")
    parser.add_argument("--yes-train-gpu-profile-on-cpu", action="store_true",
                        dest="confirm", help="go on with the gpu profile without a GPU")
    args = parser.parse_args(argv)
    from ..engine.distributed import maybe_init
    with maybe_init():
        train_all(args.profile, args.seeds, args.device, args.workers, args.fresh,
                  args.claims, args.seconds, args.compile, tuple(args.stages), args.confirm)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

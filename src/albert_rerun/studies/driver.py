"""Train and evaluate every run a profile's chapters need, over the runs not yet
stored: the wide model's learning-rate sweep, the claims' pretraining runs and their
random-init controls, their evaluation, and fine-tuning after a learning-rate pilot.

    python -m albert_rerun.studies --profile cpu --workers 2
    torchrun --nproc_per_node 8 -m albert_rerun.studies --profile gpu
"""
from __future__ import annotations

import argparse
import time

from ..cli import positive_int
from ..engine.store import config_hash, read_json, stored_pretrain
from ..profiles import FINETUNE_GRID, PROFILES, ResolvedProfile, resolve
from . import conditions as C
from .training import (CONTROL_SEEDS, _evaluate, _train, add_stretch_arguments,
                       check_stretch_arguments, default_workers, held_out_scores,
                       store_choice)


def planned_runs(profile: ResolvedProfile, seeds, names=None, wide_learning_rate=None,
                 planning: bool = False) -> list:
    """Every distinct seeded pretraining run of the named claims (default: the profile's):
    the base run's seeds first, then claim by claim, condition by condition with all its
    seeds, so that a deadline leaves whole paired decisions behind."""
    names = C.profile_claims(profile) if names is None else names
    out = [C.seeded(config, seed) for name in names
           for config in C.claim_conditions(profile, name, wide_learning_rate,
                                            planning).values()
           for seed in seeds]
    base = {config_hash(C.seeded(C.base(profile), seed).to_dict()) for seed in seeds}
    return C.distinct(sorted(out, key=lambda c: config_hash(c.to_dict()) not in base))


def planned_controls(runs: list) -> list:
    """The random-init controls of the runs at a seed below CONTROL_SEEDS."""
    return C.controls([r for r in runs if r.seed < CONTROL_SEEDS])


def wide_learning_rate(profile: ResolvedProfile, device: str = "auto", workers: int = 1,
                       compile: bool = False, fresh: bool = False) -> float:
    """The wide model's learning rate: the sweep's lowest held-out cross-entropy at
    [MASK] (trained if missing), stored in choices/."""
    path, source = _sweep_choice(profile), C.SWEEP_FROM.get(profile.name)
    stored = None if fresh and source is None else read_json(path)  # another's: never fresh
    if stored is not None:
        return stored["learning_rate"]
    if source is not None:
        raise LookupError(f"profile {profile.name!r} takes the wide model's learning rate "
                          f"of profile {source!r}, which has no stored pick ({path}): run "
                          f"its sweep first")
    sweep = C.wide_sweep(profile)
    _train(list(sweep.values()), profile.results, device, workers, compile, fresh,
           float("inf"), "wide sweep")
    scores = held_out_scores(profile, sweep, device)
    if scores is None:
        raise RuntimeError("the wide model's sweep runs are not all stored (one failed?): "
                           "see the [wide sweep] lines above")
    chosen = min(scores, key=scores.get)
    store_choice(path, {"learning_rate": chosen, "seed": C.SWEEP_SEED,
                        "steps": C.equal_flops_steps(profile),
                        "mlm_loss_at_mask": {str(k): v for k, v in scores.items()},
                        "runs": {str(k): config_hash(v.to_dict()) for k, v in sweep.items()}})
    return chosen


def finetune_rates(profile: ResolvedProfile, device: str = "auto", fresh: bool = False) -> dict:
    """The fine-tuning learning rates (pretrained, untrained) picked on validation from
    FINETUNE_GRID with the base run's seed 0 and its control (stored in choices/)."""
    path = profile.choices / "finetune-rates.json"
    stored = None if fresh else read_json(path)
    if stored is not None:
        return stored
    import torch

    from ..data.tokenizer import Tokenizer
    from ..engine.config import untrained
    from ..engine.finetune import learning_rate_pilot
    from ..engine.pretrain import cpu_threads, resolve_device
    from ..engine.store import load_weights
    store = profile.results
    base = C.seeded(C.base(profile), 0)
    runs = {"pretrained": base, "untrained": untrained(base)}
    _train(list(runs.values()), store, device, 1, False, False, float("inf"), "pilot")
    torch.set_num_threads(cpu_threads())
    states = {name: load_weights(store, stored_pretrain(store, config))
              for name, config in runs.items()}
    protocol = profile.finetune_config().protocol
    started = time.time()
    outcome = learning_rate_pilot(states, base.model, "sentiment", protocol, FINETUNE_GRID,
                                  resolve_device(device), Tokenizer(vocab_size=base.vocab_size))
    record = {**outcome, "grid": list(FINETUNE_GRID), "task": "sentiment",
              "runs": {k: config_hash(v.to_dict()) for k, v in runs.items()},
              "seconds": time.time() - started}
    store_choice(path, record)
    return record


def predicted_seconds(configs: list, device_kind: str) -> float:
    """Training seconds of these runs at the stored FLOP rate of ``device_kind``."""
    from ..engine.bench import stored_flop_rate
    return sum(C.train_flops(c) for c in configs) / stored_flop_rate(device_kind)


def _sweep_choice(profile: ResolvedProfile):
    """Where the wide model's learning rate of ``profile`` is stored (``SWEEP_FROM``)."""
    source = C.SWEEP_FROM.get(profile.name)
    if source is None:
        return profile.choices / "wide-learning-rate.json"
    return C._timing_store(resolve(source)) / "choices" / "wide-learning-rate.json"


def planned_pretraining(profile: ResolvedProfile, seeds=None, names=None) -> dict:
    """{stage: configs} of every pretraining run the named claims train at ``profile``,
    in the driver's order."""
    seeds = range(seeds) if isinstance(seeds, int) else (seeds or C.default_seeds(profile))
    names = C.profile_claims(profile) if names is None else names
    out = {}
    if "wall_clock" in names and profile.name not in C.SWEEP_FROM:
        out["wide sweep"] = list(C.wide_sweep(profile).values())
    # a run's FLOPs do not depend on its learning rate: before the sweep, the first
    # candidate rate stands in
    stored = read_json(_sweep_choice(profile))
    rate = stored["learning_rate"] if stored else C.WIDE_LEARNING_RATES[0]
    seen, runs = set(), []
    for name in names:
        new = [c for c in planned_runs(profile, seeds, [name], rate, True)
               if config_hash(c.to_dict()) not in seen]
        seen.update(config_hash(c.to_dict()) for c in new)
        out[name], runs = new, runs + new
    out["controls"] = planned_controls(runs)
    return out


def cpu_prediction_text(seeds: int) -> str:
    """The gpu profile's predicted training time on this CPU, as a phrase."""
    from ..engine.bench import stored_flop_rate
    configs = [c for stage in planned_pretraining(resolve("gpu"), seeds).values()
               for c in stage]
    try:
        hours = predicted_seconds(configs, "cpu") / 3600
    except FileNotFoundError as error:
        return f"its {len(configs)} runs would train for many hours here ({error})"
    rate = stored_flop_rate("cpu") / 1e9
    return (f"its {len(configs)} runs would train for about {hours:,.0f} hours here "
            f"(predicted at {rate:,.1f} GFLOP/s, the stored cpu runs' training rate)")


def train_all(profile: ResolvedProfile | str, seeds=None, device: str = "auto",
              workers: int | None = None, fresh: bool = False, names=None,
              seconds: float = float("inf"), compile: bool = False,
              stages=("pretrain", "evaluate", "finetune"),
              confirm_gpu_profile: bool = False, finetune_all: bool = False,
              hours: float | None = None, fill: bool = False) -> int:
    """Every stage for the named claims: the number of runs and evaluations done (a failed
    run is reported, the others go on). ``hours``: a wall-clock budget for pretraining
    (``fill`` as in ``_train``); evaluations of the stored runs follow it, unbounded."""
    from ..data.files import verify_inputs
    profile = resolve(profile)  # the book's build and the tests pass a name
    verify_inputs()  # a corrupt data file stops here, before any run starts
    seeds = range(seeds) if isinstance(seeds, int) else (seeds or C.default_seeds(profile))
    names = C.profile_claims(profile) if names is None else names
    workers = workers or default_workers()
    finish_by = None if hours is None else time.time() + hours * 3600
    deadline = time.time() + (seconds if hours is None else min(seconds, hours * 3600))
    import torch
    if profile.name == "gpu" and not torch.cuda.is_available() and not confirm_gpu_profile:
        raise SystemExit(f"the gpu profile on a CPU: {cpu_prediction_text(len(seeds))}; pass "
                         f"--yes-train-gpu-profile-on-cpu to go on")
    done, lr = 0, None
    if "wall_clock" in names:
        lr = (wide_learning_rate(profile, device, workers, compile, fresh)
              if "pretrain" in stages else read_json(_sweep_choice(profile))["learning_rate"])
        if "pretrain" in stages and C.TIMING_SOURCE[profile.name] == profile.name:
            # the equal-time budget is this profile's BERT-style seconds: train those first
            _train([C.seeded(C.bert_style(profile), seed) for seed in seeds], profile.results,
                   device, workers, compile, fresh, max(0.0, deadline - time.time()),
                   "BERT-style first", finish_by)
        record = C.equal_time_steps(profile)
        if read_json(profile.choices / "equal-time.json") != record:
            store_choice(profile.choices / "equal-time.json", record)
    runs = planned_runs(profile, seeds, names, lr)
    runs_and_controls = runs + planned_controls(runs)
    if "pretrain" in stages:
        done += _train(runs_and_controls, profile.results, device, workers, compile, fresh,
                       max(0.0, deadline - time.time()), "pretrain", finish_by,
                       fill and finish_by is not None)
    store = profile.results

    # The budget bounds pretraining only: a stretch that trained to its end would
    # otherwise leave its runs without evaluations.
    def left() -> float:
        return float("inf") if hours is not None else max(0.0, deadline - time.time())
    if "evaluate" in stages:
        ready = [config_hash(c.to_dict()) for c in runs_and_controls
                 if stored_pretrain(store, c) is not None]
        done += _evaluate(ready, store, profile.evaluation, device, workers, fresh, left())
    if "finetune" in stages and left() > 0:
        first = C.seeded(C.base(profile), list(seeds)[0])  # the pilot needs it and its control
        if any(stored_pretrain(store, c) is None for c in [first, *planned_controls([first])]):
            print("[finetune] waits for the base run's first seed and its control",
                  flush=True)
            return done
        finetune_rates(profile, device)
        targets = runs_and_controls if finetune_all else finetune_targets(profile, seeds)
        ready = [config_hash(c.to_dict()) for c in targets
                 if stored_pretrain(store, c) is not None]
        done += _evaluate(ready, store, profile.finetune_config(), device, workers, fresh,
                          left(), "finetune")
    return done


def finetune_targets(profile: ResolvedProfile, seeds) -> list:
    """The runs fine-tuned by default: the base run's seeds and their controls."""
    base = [C.seeded(C.base(profile), seed) for seed in seeds]
    return base + planned_controls(base)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu", choices=tuple(PROFILES))
    parser.add_argument("--seeds", type=positive_int, default=None,
                        help="seeds per condition, at least 1 (default: the profile's)")
    add_stretch_arguments(parser)
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--compile", action="store_true", help="torch.compile the models")
    parser.add_argument("--claims", nargs="+", default=None, choices=C.CLAIMS,
                        metavar="CLAIM", help=f"which claims' runs, in this order "
                        f"(default: the profile's; all of {' '.join(C.CLAIMS)} but at "
                        f"cpu-long, {' '.join(C.PROFILE_CLAIMS['cpu-long'])})")
    parser.add_argument("--stages", nargs="+", default=["pretrain", "evaluate", "finetune"],
                        choices=("pretrain", "evaluate", "finetune"))
    parser.add_argument("--finetune-all", action="store_true",
                        help="fine-tune every run, not only the base runs and their controls")
    parser.add_argument("--seconds", type=float, default=float("inf"),
                        help="start no run after this many seconds (default: no limit)")
    parser.add_argument("--yes-train-gpu-profile-on-cpu", action="store_true",
                        dest="confirm", help="go on with the gpu profile without a GPU")
    args = parser.parse_args(argv)
    profile = resolve(args.profile)
    check_stretch_arguments(parser, args)
    from ..engine.distributed import maybe_init
    with maybe_init():
        train_all(profile, args.seeds, args.device, args.workers, args.fresh,
                  args.claims, args.seconds, args.compile, tuple(args.stages), args.confirm,
                  args.finetune_all, args.hours, args.fill)
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

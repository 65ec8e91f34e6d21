"""torch.distributed through torchrun: run-level sharding and DDP for one large run.

``maybe_init`` starts a process group when torchrun launched this process (WORLD_SIZE >
1): NCCL where every rank has a GPU, gloo otherwise (the CPU tests use gloo).

Two ways past one process:

- **many runs**: ``torchrun --nproc_per_node N -m albert_rerun.studies ...`` gives each
  rank a disjoint share of the missing runs (``runner.shard``); every run trains in one
  process, as it would alone;
- **one run**: ``torchrun --nproc_per_node N -m albert_rerun.engine.distributed ...``
  trains one run with DistributedDataParallel. Every rank builds and masks the same
  global batch as the single-process run (same pairs, order and masks; at these sizes
  the duplicated masking is cheap beside the step) and computes the step on its slice
  of it; DDP averages the gradients. Each rank's MLM loss is weighted by its share of
  the batch's masked tokens, so the averaged gradient is the gradient of the global
  batch's loss: the run equals the single-process run up to the order of floating-point
  sums. Dropout draws differ (each rank draws its slice's), so the equality holds for
  runs without dropout, as every base run is.
"""
from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def maybe_init():
    """A process group for the duration of the block, when under torchrun."""
    import torch
    import torch.distributed as dist
    world = int(os.environ.get("WORLD_SIZE", 1))
    if world <= 1 or dist.is_initialized():
        yield
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    dist.init_process_group(backend)
    try:
        yield
    finally:
        dist.destroy_process_group()


def main(argv=None) -> int:
    """Train one run of a profile with DDP over torchrun's ranks (stored results
    reused); without torchrun, the same run in one process."""
    import argparse
    import json
    from pathlib import Path

    from ..profiles import PROFILES, pretraining_config
    from .pretrain import run
    from .runner import rank_and_world
    from .store import results_dir
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--profile", default="smoke", choices=tuple(PROFILES))
    parser.add_argument("--style", default="albert", choices=("albert", "bert"))
    parser.add_argument("--objective", default="sop", choices=("sop", "nsp", "none"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=None, help="default: the profile's")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--store", default=None, help="results folder (default: the "
                        "profile's, under $ALBERT_RERUN_RESULTS or data/results)")
    args = parser.parse_args(argv)
    changes = dict(objective=args.objective, seed=args.seed)
    config = pretraining_config(args.profile, args.style, **changes)
    if args.steps is not None:
        from ..studies.conditions import with_steps
        config = with_steps(config, args.steps)
    store = Path(args.store) if args.store else results_dir(args.profile)
    with maybe_init():
        result = run(config, store, args.device, args.compile, quiet=True, fresh=args.fresh,
                     ddp=True)
    if rank_and_world()[0] == 0:
        print(json.dumps({"hash": result["hash"], **result["metrics"]}, indent=1))
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

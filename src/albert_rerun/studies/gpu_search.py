"""The gpu profile's learning rate and warm-up, searched on the GPU before any claim's
run: LAMB (the paper's choice) at three peak rates and two warm-ups on a short schedule
at the base size; the lowest held-out cross-entropy at [MASK] wins, and
``profiles.pretraining_config("gpu")`` reads the stored pick.

    python -m albert_rerun.studies.gpu_search --profile gpu
"""
from __future__ import annotations

import argparse

from ..cli import positive_int
from ..profiles import GPU_SEARCH_CHOICE, PROFILES, ResolvedProfile, resolve
from .conditions import with_steps

RATES = (2.5e-3, 5e-3, 1e-2)
WARMUP_SHARES = (0.02, 0.06)
STEP_SHARE = 0.25  # of the profile's schedule
MIN_STEPS = 25  # the fewest steps at which the two warm-ups differ (a smoke dry run)
SEARCH_SEED = 200  # a seed no comparison (nor the wide sweep's 100) uses


def conditions(profile: ResolvedProfile) -> dict:
    """{(peak rate, warm-up share): config} of the search at ``profile``'s base size
    (independent of any stored pick: both fields are set here)."""
    steps = max(MIN_STEPS, round(profile.sizes.steps * STEP_SHARE))
    short = with_steps(profile.pretraining_config(), steps).replace(seed=SEARCH_SEED)
    return {(rate, share): short.replace(learning_rate=rate,
                                         warmup_steps=max(1, round(share * steps)))
            for rate in RATES for share in WARMUP_SHARES}


def search(profile: ResolvedProfile, device: str = "auto", workers: int = 1,
           compile: bool = False, fresh: bool = False, seconds: float = float("inf")):
    """The stored pick, or train the missing search runs (none starts after
    ``seconds``), score them and store the pick; None while runs are missing."""
    from ..engine.store import config_hash, read_json
    from .training import _train, choices_path, held_out_scores, store_choice
    path = choices_path(profile, GPU_SEARCH_CHOICE)
    stored = None if fresh else read_json(path)
    if stored is not None:
        return stored
    grid = conditions(profile)
    _train(list(grid.values()), profile.results, device, workers, compile, fresh, seconds,
           "gpu learning-rate search")
    scores = held_out_scores(profile, grid, device)
    if scores is None:
        print("[gpu learning-rate search] runs missing (deadline): no pick stored; the "
              "next call trains them", flush=True)
        return None
    rate, share = min(scores, key=scores.get)
    record = {"learning_rate": rate, "warmup_share": share, "seed": SEARCH_SEED,
              "steps": next(iter(grid.values())).max_steps,
              "mlm_loss_at_mask": {f"{r} {s}": v for (r, s), v in scores.items()},
              "runs": {f"{r} {s}": config_hash(c.to_dict()) for (r, s), c in grid.items()}}
    store_choice(path, record)
    print(f"[gpu learning-rate search] picked LAMB {rate:g}, warm-up {share:.0%} "
          f"(held-out cross-entropy at [MASK] {scores[(rate, share)]:.4f})", flush=True)
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="gpu", choices=tuple(PROFILES))
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--workers", type=positive_int, default=1, help="runs side by side")
    parser.add_argument("--compile", action="store_true", help="torch.compile the models")
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--seconds", type=float, default=float("inf"),
                        help="start no run after this many seconds")
    args = parser.parse_args(argv)
    from ..engine.distributed import maybe_init
    with maybe_init():
        search(resolve(args.profile), args.device, args.workers, args.compile, args.fresh,
               args.seconds)
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

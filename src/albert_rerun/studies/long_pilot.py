"""The long pilot: the decided sharing cost's two arms trained to 64 times the cpu
profile's steps, one seed each (exploratory; one seed gives no interval).

- ``configs``: all shared and not shared (BERT-style) at E = H = 64, the confirmatory
  recipe (``confirm_design.conditions``) on a schedule of ``STEPS`` (warm-up scaled with
  it, as ``conditions.with_steps`` does), with a held-out curve point every ``CURVE_EVERY``
  steps on ``CURVE_EXAMPLES`` of the common held-out sequences: 192 points, three of
  them inside the 1x rung's 5,400 steps, so that where each model passes the count
  rungs, and whether the loss drops suddenly, can be read off the curve;
- ``SEED``: no confirmatory or ladder run uses it (a test checks the ladder's seeds).

Training (``python -m albert_rerun.studies.long_pilot train --hours H --fill``, or
``scripts/train_stretch.sh long-pilot H``, which runs it from a clean checkout) trains
both arms side by side, stops them at the deadline with checkpoints and resumes them in
the next stretch. Until the ladder's registration is committed the log is blinded: it
shows steps, seconds and tokens a second, never a loss, so that nothing the pilot
shows can shape the registration.
"""
from __future__ import annotations

import argparse
import time

from ..engine.store import config_hash, results_dir
from . import confirm, confirm_design

STORE = "long-pilot"  # data/results/long-pilot/
BASE_STEPS = 5400  # the cpu profile's steps: the ladder's 1x rung
MULTIPLE = 64
STEPS = MULTIPLE * BASE_STEPS  # 345,600 steps, about 354M tokens a run
CURVE_EVERY = 1800  # 192 curve points
CURVE_EXAMPLES = 1024  # of the common held-out set's 4,096 sequences
SEED = 6400
ARMS = (confirm_design.ALL64, confirm_design.BERT)


def configs() -> dict:
    """{arm: seeded config}: the two arms at ``STEPS``, the confirmatory recipe."""
    base = confirm_design.conditions(None)
    out = {}
    for arm in ARMS:
        c = base[arm]
        out[arm] = c.replace(max_steps=STEPS, warmup_steps=max(2, STEPS // 20),
                             curve_every=CURVE_EVERY, curve_examples=CURVE_EXAMPLES,
                             seed=SEED)
    return out


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train (or resume) both arms, then evaluate the finished ones on the common
    held-out set and the cue-free pairs, as the confirmatory runs are."""
    from ..data.files import verify_inputs
    from .training import _train, default_workers
    verify_inputs()
    runs = list(configs().values())
    workers = workers or default_workers()
    finish_by = None if hours is None else time.time() + hours * 3600
    done = _train(runs, results_dir(STORE), device, workers, False, False, float("inf"),
                  "long-pilot", finish_by, fill and finish_by is not None, blinded=True)
    return done + confirm.evaluate_trained(runs, STORE, device, workers)


def progress(store=None) -> list:
    """[(arm, step reached, steps)]: how far each arm has trained (a checkpoint's step,
    or every step once stored); no loss."""
    from ..engine.pretrain import checkpoint_step
    from ..engine.store import stored_pretrain
    store = store or results_dir(STORE)
    out = []
    for arm, c in configs().items():
        reached = (c.max_steps if stored_pretrain(store, c) is not None else
                   checkpoint_step(store / "checkpoints" / config_hash(c.to_dict())))
        out.append((arm, reached, c.max_steps))
    return out


def main(argv=None) -> int:
    from .training import add_stretch_arguments, check_stretch_arguments
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("train", help="train or resume both arms, then evaluate them")
    add_stretch_arguments(go)
    sub.add_parser("progress", help="the step each arm has reached (no loss)")
    args = parser.parse_args(argv)
    if args.command == "progress":
        for arm, reached, steps in progress():
            print(f"{arm}: step {reached:,} of {steps:,}")
        return 0
    check_stretch_arguments(parser, args)
    train(args.hours, args.fill, args.workers, args.device)
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

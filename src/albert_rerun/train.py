"""Pretrain one model at a profile and print its result: ``python -m albert_rerun.train``.

    .venv/bin/python -m albert_rerun.train --profile smoke --style albert --objective sop
    .venv/bin/python -m albert_rerun.train --profile cpu --style bert --objective nsp --seed 1

Stored results are reused (``--fresh`` retrains). The engine knows nothing of profiles;
this command joins the two.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from .engine.pretrain import run
from .profiles import PROFILES, resolve


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="smoke", choices=tuple(PROFILES))
    parser.add_argument("--style", default="albert", choices=("albert", "bert"))
    parser.add_argument("--objective", default="sop", choices=("sop", "nsp", "none"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--store", default=None, help="results folder (default: data/results)")
    args = parser.parse_args(argv)
    profile = resolve(args.profile)
    config = profile.pretraining_config(args.style, objective=args.objective, seed=args.seed)
    store = Path(args.store) / profile.name if args.store else profile.results
    result = run(config, store, args.device, args.compile, fresh=args.fresh)
    print(json.dumps({"hash": result["hash"], **result["metrics"]}, indent=1))
    return 0


if __name__ == "__main__":
    from .cli import run_main
    raise SystemExit(run_main(main))

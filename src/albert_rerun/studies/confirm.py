"""The confirmatory replication registered on book/preregistration.md: what sized its
design, its equal-time measurement, its training and its command line.

The exploratory profiles (cpu, and cpu-long's seeds 0-2, the **pilot**) were read, and
several of their rules revised, after their numbers were seen. The registration fixes,
before any confirmatory run exists, what the confirmatory runs are and how they are
judged:

- ``confirm_design.conditions``: nine conditions at the cpu-long sizes (21,600 steps),
  the wide model's steps set by ``measure_equal_time`` on the machine that trains,
  before its first run;
- ``confirm_design.CONFIRM_SEEDS``: fresh seeds no stored run uses, as many as
  ``power_plan`` asks of the pilot's paired differences at Holm's first-step alpha
  (``seed_count``, capped by the budget);
- ``confirm_design.PRIMARY``: the primary family, one Holm family of its own;
  ``SECONDARY``: the exploratory decisions, a second family;
- ``confirm_analysis.family``: the analysis, the same function for the pilot and the
  confirmatory seeds. On the confirmatory store it refuses to compute anything before
  every run, evaluation and control of the design is stored (``NotComplete``): the
  stopping rule. ``progress`` counts what is stored, and shows nothing else.
  ``confirm_report`` says what the judged families show.

Training (``python -m albert_rerun.studies.confirm train --hours H``, or
``scripts/train_stretch.sh confirm H``, which runs it from a clean checkout) goes seed by
seed: every condition of one seed before the next, so that a stretch stopped at its
deadline leaves whole seeds behind.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import re
import time

import pandas as pd

from ..engine.store import atomic_write_json, config_hash, results_dir
from ..profiles import resolve
from . import conditions as C
from .confirm_analysis import (_evaluation_configs, complete, cue_free_config, per_seed,
                               progress, time_ratios, trained_runs, training_costs,
                               with_changes)
from .confirm_design import (ALPHA, BERT, CONFIRM_SEEDS, EQUAL_TIME, FIRST_SEED, MAX_SEEDS,
                             MIN_SEEDS, PILOT_PROFILE, POWER, PRIMARY, STORE,
                             WIDE_LEARNING_RATE, conditions, print_unless_incomplete,
                             equal_time_record, holm_alpha, margin_values, planned)
from .confirm_report import report

# Equal time: both models' seconds per training step, timed on the machine that trains,
# in lockstep over TIMING_STEPS steps each after TIMING_WARMUP, one thread.
TIMING_STEPS, TIMING_WARMUP = 400, 25


# -- what sized the design -------------------------------------------------------------------

def power_plan(frame: pd.DataFrame, specs=PRIMARY, seeds=range(3, MAX_SEEDS + 5),
               alpha: float | None = None) -> pd.DataFrame:
    """What the design was sized on: each spec's pilot mean and SD of the per-seed paired
    differences, the 95% half-width at the pilot's seeds, and the power of a two-sided
    paired t at Holm's first-step alpha for a true difference equal to the pilot's mean,
    at each seed count in ``seeds`` (columns ``power at n``), and the fewest seeds that
    reach ``POWER``."""
    from scipy import stats as st

    from ..stats.power import _power
    alpha = holm_alpha(specs) if alpha is None else alpha
    frame = with_changes(frame)
    rows = []
    for spec in specs:
        d = per_seed(spec, frame)
        n, mean, sd = len(d), float(d.mean()), float(d.std(ddof=1))
        half = float(st.t.ppf(0.975, n - 1) * sd / math.sqrt(n)) if n > 1 else math.inf
        powers = {k: (_power(abs(mean) / sd, k, alpha, "two-sided") if sd > 0 else 1.0)
                  for k in seeds}
        enough = [k for k, p in powers.items() if p >= POWER]
        rows.append({"decision": spec.label, "key": spec.key, "pilot seeds": n,
                     "mean": mean, "paired SD": sd, "half-width": half,
                     "seeds for 80%": min(enough) if enough else math.inf,
                     **{f"power at {k}": p for k, p in powers.items()}})
    return pd.DataFrame(rows).set_index("key")


def equivalence_plan(frame: pd.DataFrame, rungs: dict, specs=PRIMARY,
                     n: int | None = None) -> pd.DataFrame:
    """Amendment 2: whether "equivalent" is within the design's reach. For each spec, the
    exact power of the paired TOST within the spec's margin (``power.tost_power``) at
    ``n`` seeds (the registered count) when the true difference is 0, the case most
    favourable to it, with the pilot's paired SD: at Holm's first-step alpha for the
    family of ``specs`` (the TOST is judged there unless other tests reject first) and at
    an unadjusted 5% (Holm's last step, an upper bound). For the accuracy decisions this
    is the t's power; the decision takes the more cautious of the t and the bootstrap, so
    theirs is lower."""
    from ..stats.power import sd_factors, tost_power
    n = len(CONFIRM_SEEDS) if n is None else n
    margins = margin_values(rungs)
    plan = power_plan(frame, specs, seeds=(n,))
    first = holm_alpha(specs)
    rows = []
    for spec in specs:
        row = plan.loc[spec.key]
        sd, margin = abs(float(row["paired SD"])), margins[spec.margin]
        ratio = margin / sd if sd > 0 else math.inf
        # amendment 3: the SD rests on the pilot's seeds; at the low end of its 95%
        # interval, the TOST's best case. The level a TOST meets at best, unless its own
        # difference test rejects too (at a true 0, a chance of about alpha): Holm's
        # next-to-last step, ALPHA / 2.
        smallest = sd * sd_factors(int(row["pilot seeds"]))[0]
        rows.append({"key": spec.key, "decision": spec.label, "margin": margin,
                     "paired SD": sd, "margin in SDs": ratio, "alpha": first,
                     "TOST power, Holm's first step": tost_power(ratio, n, first),
                     "TOST power at 5%": tost_power(ratio, n, ALPHA),
                     "TOST power at ALPHA / 2": tost_power(ratio, n, ALPHA / 2),
                     "smallest SD": smallest,
                     "TOST power at the smallest SD": tost_power(
                         margin / smallest if smallest > 0 else math.inf, n, first),
                     # amendment 4: the most lenient pair, an upper bound
                     "TOST power at the smallest SD at ALPHA / 2": tost_power(
                         margin / smallest if smallest > 0 else math.inf, n, ALPHA / 2),
                     "TOST power at the pilot mean": tost_power(
                         ratio, n, first, float(row["mean"]) / sd if sd > 0 else 0.0)})
    return pd.DataFrame(rows).set_index("key")


def seed_count(plan: pd.DataFrame) -> int:
    """The registered rule: the fewest seeds at or above MIN_SEEDS that give every
    primary decision POWER, at most MAX_SEEDS."""
    needed = plan["seeds for 80%"].max()
    return int(min(MAX_SEEDS, max(MIN_SEEDS, needed)))


# -- equal time ----------------------------------------------------------------------------

def measure_equal_time(steps: int = TIMING_STEPS, warmup: int = TIMING_WARMUP,
                       device: str = "cpu") -> dict:
    """Seconds per training step of the BERT-style model and of the wide model on this
    machine, one thread, in lockstep: each step of one is followed by a step of the
    other (which goes first alternates), each fed by its own data stream as in training,
    so that any change of the machine's load falls on both. A step's time is its batch
    fetch and its forward, backward and LAMB update; the median of ``steps`` steps after
    ``warmup`` is the model's. The common data cost of building an epoch of segment
    pairs, spread over that epoch's steps, is added to both. The wide model's steps are
    the BERT-style run's 21,600 times the ratio of the two per-step times."""
    from time import perf_counter

    import torch

    from ..data.corpus import create_instances, tokenize_split
    from ..data.tokenizer import Tokenizer
    from ..engine.pretrain import DeviceStream, make_optimizer, sync, train_step
    from ..engine.provenance import record
    from ..model.modeling import AlbertForPreTraining
    torch.set_num_threads(1)
    target = torch.device(device)
    configs = {"bert": conditions(None)[BERT],
               "wide": C.wide_albert(resolve(PILOT_PROFILE), None, WIDE_LEARNING_RATE)}
    tokenizer = Tokenizer(vocab_size=configs["bert"].vocab_size)
    corpus = tokenize_split("train", tokenizer).subset(configs["bert"].train_documents)
    arms = {}
    for name, config in configs.items():
        config = config.replace(seed=FIRST_SEED - 1)
        torch.manual_seed(config.seed)
        model = AlbertForPreTraining(config.model).to(target)
        arms[name] = (config, model, make_optimizer(model, config),
                      DeviceStream(config, tokenizer, corpus, target, 0))
    timed = {name: [] for name in arms}
    load_before = os.getloadavg()
    try:
        for step in range(warmup + steps):
            order = list(arms) if step % 2 == 0 else list(arms)[::-1]
            for name in order:
                config, model, optimizer, stream = arms[name]
                started = perf_counter()
                train_step(model, model, optimizer, config, stream.batch(step), step,
                           target, None)
                sync(target)
                if step >= warmup:
                    timed[name].append(perf_counter() - started)
    finally:
        for _, _, _, stream in arms.values():
            stream.close()
    load_after = os.getloadavg()
    bert = configs["bert"]
    started = perf_counter()
    epoch = create_instances(corpus, tokenizer, bert.objective, bert.max_seq_length,
                             seed=FIRST_SEED - 1)
    build_seconds = perf_counter() - started
    data_step = build_seconds / (len(epoch) / bert.batch_size)
    per_step = {name: statistics.median(values) for name, values in timed.items()}
    ratio = (per_step["bert"] + data_step) / (per_step["wide"] + data_step)
    return {"steps": round(bert.max_steps * ratio), "bert_steps": bert.max_steps,
            "bert_step_seconds": per_step["bert"] + data_step,
            "wide_step_seconds": per_step["wide"] + data_step,
            "median_step_seconds": per_step, "epoch_build_seconds": build_seconds,
            "data_seconds_per_step": data_step, "timed_steps": steps, "warmup": warmup,
            "step_seconds": timed, "load_before": list(load_before),
            "load_after": list(load_after), "learning_rate": WIDE_LEARNING_RATE,
            "provenance": record()}


# -- training -------------------------------------------------------------------------------

def eval_job(pretrain_hash: str, kind: str, device: str, store: str = STORE) -> dict:
    """One stored run's evaluation in ``store``: "evaluate" (the common held-out sets,
    as cpu-long's) or "cuefree" (the cue-free SOP and NSP pairs)."""
    from ..profiles import eval_config
    from .training import evaluate_hash
    config = eval_config(PILOT_PROFILE) if kind == "evaluate" else cue_free_config()
    return evaluate_hash(results_dir(store), pretrain_hash, config, device)


def evaluate_trained(runs: list, store: str, device: str, workers: int,
                     cue_free: bool = True) -> int:
    """Evaluate the trained ``runs`` of ``store`` that lack an evaluation: every one on
    the common held-out sets, every trained one (not a zero-step control) on the
    cue-free pairs; blinded, as a stretch's log is. The confirmatory store, the long
    pilot and the ladder evaluate their runs so (``cue_free=False``: the held-out sets
    only)."""
    from ..engine.runner import run_many, worker_threads
    from ..engine.store import stored_eval, stored_pretrain
    from .training import _report
    folder, done = results_dir(store), 0
    kinds = (("evaluate", _evaluation_configs()[0]), ("cuefree", cue_free_config()))
    for kind, config in kinds[:2 if cue_free else 1]:
        # every trained run on the cue-free pairs too (the confirmatory issue's wish; the
        # registered design needs them of the SOP and NSP arms, CUE_FREE_ARMS, only)
        ready = [config_hash(c.to_dict()) for c in runs if stored_pretrain(folder, c)
                 is not None and (kind == "evaluate" or c.max_steps > 0)]
        todo = [h for h in ready if stored_eval(folder, h, config) is None]
        print(f"[{kind}] {len(ready)} runs, {len(todo)} to do", flush=True)
        jobs = [(h, eval_job, (h, kind, device, store)) for h in todo]
        done += _report(run_many(jobs, workers, float("inf"), worker_threads(workers)), kind,
                        blinded=True)
    return done


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Time the equal-time arms (once, before any run), then train and evaluate the
    missing confirmatory runs seed by seed; ``hours`` as the driver's."""
    from ..data.files import verify_inputs
    from .training import _train, default_workers
    verify_inputs()
    store = results_dir(STORE)
    record = equal_time_record()
    if record is None:
        print("[equal time] timing the BERT-style and the wide model on this machine",
              flush=True)
        record = measure_equal_time()
        atomic_write_json(store / "choices" / f"{EQUAL_TIME}.json", record)
    print(f"[equal time] the wide model trains {record['steps']} steps "
          f"({record['bert_step_seconds']:.4f} s and {record['wide_step_seconds']:.4f} s "
          f"a step)", flush=True)
    workers = workers or default_workers()
    finish_by = None if hours is None else time.time() + hours * 3600
    runs = planned(record["steps"])
    # blinded: a stretch's log shows each run's steps and seconds, never a result (the
    # stopping rule: nothing is judged, or looked at, before every run is stored)
    done = _train(runs, store, device, workers, False, False, float("inf"), "confirm",
                  finish_by, fill and finish_by is not None, blinded=True)
    return done + evaluate_trained(runs, STORE, device, workers)


def print_progress() -> None:
    table = progress()
    print(table.to_string())
    print("complete" if complete() else "not complete: no estimate is computed before it is")


_LOG_LINE = re.compile(r"^\[confirm\] [0-9a-f]{16}(?P<what> \{|: stopped at the deadline)"
                       r".*\((?P<seconds>\d+) s\)$")
_FAILED = re.compile(r"^\[confirm\] [0-9a-f]{16}: FAILED")


def stretches(store=None) -> pd.DataFrame:
    """The training stretches from their logs (``scripts/train_stretch.sh``), one row
    each: its start (UTC, from the log's name), the runs it finished (the transition
    controls and the learning-rate check included), stopped with a checkpoint and that
    failed, and the finished and stopped runs' worker-hours (each run's wall time, added
    up; evaluation and the equal-time timing left out). Counts and seconds only: the
    logs since b91c12b show no result, the three before it do, and this reads none."""
    logs = sorted(((store or results_dir(STORE)) / "logs").glob("stretch-*.log"))
    rows = []
    for log in logs:
        finished = stopped = failed = seconds = 0
        for line in log.read_text().splitlines():
            match = _LOG_LINE.match(line)
            if match:
                finished += match["what"] == " {"
                stopped += match["what"] != " {"
                seconds += int(match["seconds"])
            failed += bool(_FAILED.match(line))
        start = pd.to_datetime(log.stem.removeprefix("stretch-"), format="%Y%m%dT%H%M%SZ")
        rows.append({"log": log.name, "started (UTC)": start, "finished": finished,
                     "stopped": stopped, "failed": failed, "worker hours": seconds / 3600})
    return pd.DataFrame(rows, columns=["log", "started (UTC)", "finished", "stopped",
                                       "failed", "worker hours"])


def print_costs() -> None:
    """The stored runs' training cost and each seed's equal-time seconds ratio (training
    records only: no estimate)."""
    runs = trained_runs()
    costs = training_costs(runs)
    with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
        print(costs.to_string(index=False))
        print(f"\n{len(runs)} runs, {costs['hours'].sum():.2f} hours of training "
              f"(one thread each)\n")
        print(time_ratios(runs).to_string(index=False))
        logs = stretches()
        print(f"\n{len(logs)} stretches, {logs['worker hours'].sum():.2f} worker-hours of "
              f"training runs (each run's wall time, added up):\n")
        print(logs.to_string(index=False))


def main(argv=None) -> int:
    from .training import add_stretch_arguments, run_stretch
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("train", help="time the equal-time arms once, then train and "
                        "evaluate the missing confirmatory runs, seed by seed")
    add_stretch_arguments(go)
    sub.add_parser("progress", help="n of N seeds stored per condition")
    sub.add_parser("report", help="both families' verdicts with the pilot beside them, "
                   "once every run is stored (refused before)")
    sub.add_parser("costs", help="the stored runs' training hours, ms a step, tokens/s "
                   "and each seed's equal-time seconds ratio (no estimate)")
    args = parser.parse_args(argv)
    if args.command == "progress":
        print_progress()
        return 0
    if args.command == "costs":
        print_costs()
        return 0
    if args.command == "report":
        return print_unless_incomplete(report)
    return run_stretch(parser, args, train)


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

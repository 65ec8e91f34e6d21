"""The confirmatory replication (book/preregistration.md): what sized its design, its
training (``scripts/train_stretch.sh confirm H``, seed by seed), report and command line;
the design and analysis are ``confirm_analysis``."""
from __future__ import annotations

import argparse
import math
import time

import pandas as pd

from ..engine.store import config_hash, results_dir
from .confirm_analysis import (ALPHA, CONFIRM_SEEDS, MAX_SEEDS, MIN_SEEDS, POWER, PRIMARY,
                               SECONDARY, STORE, WIDE_LEARNING_RATE, NotComplete,
                               _evaluation_configs, both_families, complete, confirmatory_frame,
                               curve_differences, equal_time_record, holm_alpha, holm_tests,
                               margin_values, per_seed, pilot_frame, planned,
                               print_unless_incomplete, progress, rungs, time_ratios,
                               trained_runs, training_costs, with_changes)

CHANCE_SES = 2  # within this many binomial SEs of the majority label: chance (amend. 11)


def power_plan(frame: pd.DataFrame, specs=PRIMARY,
               seeds=range(3, MAX_SEEDS + 5)) -> pd.DataFrame:
    """What the design was sized on: per spec, the pilot's paired mean and SD, a paired t's
    power at Holm's first-step alpha per seed count, and the fewest seeds reaching POWER."""
    from ..stats.power import _power
    alpha, frame = holm_alpha(specs), with_changes(frame)
    rows = []
    for spec in specs:
        d = per_seed(spec, frame)
        n, mean, sd = len(d), float(d.mean()), float(d.std(ddof=1))
        powers = {k: (_power(abs(mean) / sd, k, alpha, "two-sided") if sd > 0 else 1.0)
                  for k in seeds}
        enough = [k for k, p in powers.items() if p >= POWER]
        rows.append({"decision": spec.label, "key": spec.key, "pilot seeds": n,
                     "mean": mean, "paired SD": sd,
                     "seeds for 80%": min(enough) if enough else math.inf,
                     **{f"power at {k}": p for k, p in powers.items()}})
    return pd.DataFrame(rows).set_index("key")


def equivalence_plan(frame: pd.DataFrame, rungs: dict, specs=PRIMARY,
                     n: int | None = None) -> pd.DataFrame:
    """Amendment 2: per spec, the paired TOST's power within its margin at ``n`` seeds
    for a true 0 with the pilot's paired SD, at Holm's first-step alpha, 5% and ALPHA / 2,
    and (amendments 3 and 4) at the low end of the SD's 95% interval."""
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
        smallest = sd * sd_factors(int(row["pilot seeds"]))[0]
        low_ratio = margin / smallest if smallest > 0 else math.inf
        rows.append({"key": spec.key, "decision": spec.label, "margin": margin,
                     "paired SD": sd, "margin in SDs": ratio, "alpha": first,
                     "TOST power, Holm's first step": tost_power(ratio, n, first),
                     "TOST power at 5%": tost_power(ratio, n, ALPHA),
                     "TOST power at ALPHA / 2": tost_power(ratio, n, ALPHA / 2),
                     "smallest SD": smallest,
                     "TOST power at the smallest SD": tost_power(low_ratio, n, first),
                     "TOST power at the smallest SD at ALPHA / 2": tost_power(
                         low_ratio, n, ALPHA / 2),
                     "TOST power at the pilot mean": tost_power(
                         ratio, n, first, float(row["mean"]) / sd if sd > 0 else 0.0)})
    return pd.DataFrame(rows).set_index("key")


def seed_count(plan: pd.DataFrame) -> int:
    """The registered rule: the fewest seeds at or above MIN_SEEDS that give every
    primary decision POWER, at most MAX_SEEDS."""
    needed = plan["seeds for 80%"].max()
    return int(min(MAX_SEEDS, max(MIN_SEEDS, needed)))


def chance_arms(spec, frame: pd.DataFrame) -> dict | None:
    """Amendment 11's rule for an accuracy decision on pairs with a majority label: each
    arm's mean accuracy (points), the majority's, one run's binomial SE, and "both":
    whether both arms lie within ``CHANCE_SES`` SEs of it; None for other decisions."""
    if spec.kind != "accuracy" or not spec.metric.endswith("_probe_correct"):
        return None
    majority = spec.metric[:-len("_probe_correct")] + "_majority"
    if majority not in frame or spec.metric not in frame:
        return None
    arms, pairs, rate = {}, set(), set()
    for arm in (spec.a, spec.b):
        runs = frame[frame["condition"] == arm].dropna(subset=[spec.metric, majority])
        if not len(runs):
            return None
        arms[arm] = float(runs[spec.metric].map(
            lambda s: 100 * sum(c == "1" for c in s) / len(s)).mean())
        pairs |= set(runs[spec.metric].map(len))
        rate |= set(runs[majority].round(12))
    if len(pairs) != 1 or len(rate) != 1:
        raise ValueError(f"{spec.key}: the arms were scored on different test pairs")
    (n,), (p,) = pairs, rate
    se = 100 * math.sqrt(p * (1 - p) / n)
    return {"arms": arms, "majority": 100 * p, "pairs": n, "se": se,
            "both": all(abs(a - 100 * p) <= CHANCE_SES * se for a in arms.values())}


def lr_check_gap(scores: dict, margin: float) -> tuple | None:
    """Amendment 1.1's rule (``scores``: {rate: held-out cross-entropy}): (the best rate,
    how far 5e-3 is behind it) where that gap exceeds ``margin``, else None."""
    best = min(scores, key=scores.get)
    gap = scores[WIDE_LEARNING_RATE] - scores[best]
    return None if best == WIDE_LEARNING_RATE or gap <= margin else (best, gap)


def stretch(runs: list, store: str, label: str, hours: float | None, fill: bool,
            workers: int | None, device: str, cue_free: bool = True, **options) -> int:
    """Every study's training stretch: train the missing ``runs`` into ``store``, blinded,
    for ``hours`` (``fill``: ``training._train``'s), then evaluate the trained ones,
    blinded, on the common held-out sets and (``cue_free``) on the cue-free pairs."""
    from ..data.files import verify_inputs
    from ..engine.store import stored_pretrain
    from .training import _evaluate, _train, default_workers
    verify_inputs()
    workers, folder = workers or default_workers(), results_dir(store)
    finish_by = None if hours is None else time.time() + hours * 3600
    done = _train(runs, folder, device, workers, False, False, float("inf"), label, finish_by,
                  fill and finish_by is not None, blinded=True, **options)
    for kind, config in zip(("evaluate", "cuefree")[:2 if cue_free else 1],
                            _evaluation_configs()):
        ready = [config_hash(c.to_dict()) for c in runs if stored_pretrain(folder, c)
                 is not None and (kind == "evaluate" or c.max_steps > 0)]
        done += _evaluate(ready, folder, config, device, workers, label=kind, blinded=True)
    return done


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train and evaluate the missing confirmatory runs seed by seed (wide: equal-time steps)."""
    record = equal_time_record()
    if record is None:  # measured once, before the first run, by the registration's code
        raise SystemExit(f"no equal-time measurement in {results_dir(STORE) / 'choices'}: it "
                         f"is taken once, before the first confirmatory run (the registration "
                         f"commit's confirm.measure_equal_time; book/preregistration.md, 6)")
    print(f"[equal time] the wide model trains {record['steps']} steps "
          f"({record['bert_step_seconds']:.4f} s and {record['wide_step_seconds']:.4f} s "
          f"a step)", flush=True)
    return stretch(planned(record["steps"]), STORE, "confirm", hours, fill, workers, device)


def curves_figure(frame: pd.DataFrame, rungs: dict, specs=PRIMARY):
    """One panel per cross-entropy decision: its paired difference along training
    (``curve_differences``) with the margin's band, at the text column's width."""
    import textwrap

    import matplotlib.pyplot as plt
    specs = [s for s in specs if s.kind == "ce"]
    margins = margin_values(rungs)
    with plt.rc_context({"font.size": 10}):
        fig, axes = plt.subplots(len(specs), 1, figsize=(6.6, 0.6 + 1.75 * len(specs)),
                                 dpi=100, sharex=True, squeeze=False)
        for ax, spec in zip(axes[:, 0], specs):
            d, m = curve_differences(frame, spec), margins[spec.margin]
            ax.axhspan(-m, m, color="0.88", lw=0)
            ax.axhline(0, color="0.4", lw=0.8)
            ax.fill_between(d["share of training"], d["low"], d["high"], color="C0",
                            alpha=0.25, lw=0)
            ax.plot(d["share of training"], d["mean"], "o-", color="C0", ms=3)
            ax.set_title(textwrap.fill(spec.label, 70), fontsize=10)
            ax.set_ylabel("A minus B\n(nats)")
        axes[-1][0].set_xticks([0.25, 0.5, 0.75, 1.0])
        axes[-1][0].set_xlabel("share of training")
        fig.tight_layout()
    return fig


def p_text(value: float) -> str:
    """A p-value to two significant digits, or "<0.001"."""
    return f"{value:.2g}" if value >= 0.001 else "<0.001"


def results_table(confirmed: pd.DataFrame, pilot: pd.DataFrame, specs=PRIMARY) -> str:
    """The judged family as a markdown table beside the pilot's differences, marked † where
    the pilot is no guide (its wide model trained no measured equal time)."""
    from .decisions import interval_text
    n = int(confirmed["n_seeds"].max())
    rows = []
    for spec in specs:
        row, old = confirmed.loc[spec.key], pilot.loc[spec.key]
        tests = f"{p_text(row['p_difference'])} / {p_text(row['p_equivalence'])}"
        if row["in_family"]:
            tests += (f" [{p_text(row['p_difference_holm'])} / "
                      f"{p_text(row['p_equivalence_holm'])}]")
        before = interval_text(old["estimate"], old["low"], old["high"], old["unit"])
        rows.append({
            "decision (A minus B)": f"`{spec.key}`: {spec.label}",
            f"confirmatory, {n} seeds [95%]":
                f"{interval_text(row['estimate'], row['low'], row['high'], row['unit'])} "
                f"{row['unit']} (margin {row['margin']:.4g})",
            "p: difference / TOST [after Holm]": tests, "verdict at 5%": row["verdict"],
            "verdict after Holm": f"**{row['verdict_staged']}**",
            "pilot, seeds 0-2": before + (" †" if spec.key == "confirm/equal-time" else "")})
    return pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True) + "\n"


def report(store=None) -> str:
    """Both judged families beside the pilot; NotComplete until every run is evaluated."""
    if not complete(store):
        table = progress(store)
        raise NotComplete(f"{int(table['evaluated'].sum())} of {int(table['of'].sum())} "
                          f"runs are evaluated: no estimate is computed before all are")
    r = rungs()
    families = both_families(confirmatory_frame(store=store), r)
    pilot = both_families(pilot_frame(), r)
    return "\n".join(f"{name.capitalize()} family, Holm over "
                     f"{holm_tests(families[name])} tests:\n\n"
                     + results_table(families[name], pilot[name], specs)
                     for name, specs in (("primary", PRIMARY), ("secondary", SECONDARY)))


def main(argv=None) -> int:
    from .training import add_stretch_arguments, run_stretch
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    go = sub.add_parser("train", help="train and evaluate the missing confirmatory runs, "
                        "seed by seed, at the stored equal-time steps")
    add_stretch_arguments(go)
    sub.add_parser("progress", help="n of N seeds stored per condition")
    sub.add_parser("report", help="both families' verdicts with the pilot beside them, "
                   "once every run is stored (refused before)")
    sub.add_parser("costs", help="the stored runs' training hours, ms a step, tokens/s "
                   "and each seed's equal-time seconds ratio (no estimate)")
    args = parser.parse_args(argv)
    if args.command == "report":
        return print_unless_incomplete(report)
    if args.command == "progress":
        print(progress().to_string())
        print("complete" if complete() else "not complete: no estimate before it is")
    if args.command == "costs":  # training records only: no estimate
        runs = trained_runs()
        with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
            print(training_costs(runs).to_string(index=False))
            print(time_ratios(runs).to_string(index=False))
    if args.command != "train":
        return 0
    return run_stretch(parser, args, train)


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

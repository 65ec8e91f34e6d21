"""The confirmatory replication: the design registered on book/preregistration.md, its
analysis, its progress and its training.

The exploratory profiles (cpu, and cpu-long's seeds 0-2, the **pilot**) were read, and
several of their rules revised, after their numbers were seen. This module fixes, before
any confirmatory run exists, what the confirmatory runs are and how they are judged:

- ``conditions``: nine conditions at the cpu-long sizes (21,600 steps), the wide model's
  steps set by ``measure_equal_time`` on the machine that trains, before its first run;
- ``CONFIRM_SEEDS``: fresh seeds no stored run uses, as many as ``power_plan`` asks of
  the pilot's paired differences at Holm's first-step alpha (capped by the budget);
- ``PRIMARY``: the primary family, one Holm family of its own; ``SECONDARY``: the
  exploratory decisions, a second family;
- ``family``: the analysis, the same function for the pilot and the confirmatory seeds.
  On the confirmatory store it refuses to compute anything before every run, evaluation
  and control of the design is stored (``NotComplete``): the stopping rule. ``progress``
  counts what is stored, and shows nothing else.

Training (``python -m albert_rerun.studies.confirm train --hours H``, or
``scripts/train_stretch.sh confirm H``, which runs it from a clean checkout) goes seed by
seed: every condition of one seed before the next, so that a stretch stopped at its
deadline leaves whole seeds behind.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import statistics
import subprocess
import re
import sys
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ..engine.store import atomic_write_json, config_hash, read_json, results_dir
from . import conditions as C

STORE = "confirm"  # data/results/confirm/
PILOT_PROFILE = "cpu-long"  # the sizes, and the pilot's store
PILOT_SEEDS = (0, 1, 2)
FIRST_SEED = 1000  # no stored run uses a seed at or above 1000 (a test checks it)
# The seed count: the fewest at or above MIN_SEEDS that give every primary decision
# POWER at the pilot's mean and paired SD, at Holm's first-step alpha; at most MAX_SEEDS
# (the budget: about 2.9 CPU-hours a seed for the nine conditions, 12 seeds about 35 h).
# The pilot's table (book/preregistration.md) gives 11.
ALPHA, POWER, MIN_SEEDS, MAX_SEEDS = 0.05, 0.8, 10, 12
CONFIRM_SEEDS = tuple(range(FIRST_SEED, FIRST_SEED + 11))
# The wide model's peak learning rate: every arm's (5e-3), also the cpu sweep's pick; the
# sweep's three candidates all sat on the plateau, so a sweep would buy no information.
WIDE_LEARNING_RATE = 5e-3
# Equal time: both models' seconds per training step, timed on the machine that trains,
# in lockstep over TIMING_STEPS steps each after TIMING_WARMUP, one thread.
TIMING_STEPS, TIMING_WARMUP = 400, 25
EQUAL_TIME = "equal-time"
# Amendment 1: the wide model at its confirmatory steps at three rates, one seed no
# comparison uses, trained after the first confirmatory seed (exploratory; never changes
# the verdict: ``lr_check_reading``).
LR_CHECK_SEED, LR_CHECK_RATES = 100, (2.5e-3, 5e-3, 1e-2)
# Amendment 1: the code a confirmatory run trains with must equal the registration's.
FROZEN = ("src/albert_rerun/engine", "src/albert_rerun/model", "src/albert_rerun/data")

ALBERT = "ALBERT-style (all shared, E 32)"
NONE32 = "not shared, E 32"
ATTENTION = "attention-shared, E 32"
FFN = "FFN-shared, E 32"
BERT = "BERT-style (not shared, E = H = 64)"
ALL64 = "all shared, E 64"
NSP = "NSP-trained"
DROPOUT = "dropout 0.1"
WIDE = "wide all-shared (H 128), equal time"
CONDITIONS = (ALBERT, NONE32, ATTENTION, FFN, BERT, ALL64, NSP, DROPOUT, WIDE)
# the arms whose random-initialization controls the transition decisions subtract, and
# those scored on the cue-free pairs (the SOP and NSP decisions' arms)
TRANSITION_ARMS = (ALBERT, NONE32)
CUE_FREE_ARMS = (ALBERT, NSP)
CE = "mlm_loss_at_mask"


class NotComplete(LookupError):
    """The confirmatory store does not yet hold every run the design names."""


# -- the conditions --------------------------------------------------------------------------

def conditions(wide_steps: int | None) -> dict:
    """{name: config without seed} at the cpu-long sizes; the wide model only with its
    ``wide_steps`` (the equal-time measurement's). The pilot's stored runs are these
    configs at seeds 0-2 (``pilot_conditions``)."""
    p = PILOT_PROFILE
    b = C.base(p)
    H = b.model.hidden_size
    out = {ALBERT: b, NONE32: b.replace_model(sharing="none"),
           ATTENTION: b.replace_model(sharing="attention"),
           FFN: b.replace_model(sharing="ffn"), BERT: C.bert_style(p),
           ALL64: b.replace_model(embedding_size=H, sharing="all"),
           NSP: b.replace(objective="nsp"), DROPOUT: C.dropout(p)["dropout 0.1"]}
    if wide_steps is not None:
        out[WIDE] = C.wide_albert(p, wide_steps, WIDE_LEARNING_RATE)
    return out


def pilot_conditions() -> dict:
    """The pilot's configs: cpu-long's, its wide model at its stored equal-time steps."""
    stored = read_json(C._timing_store(PILOT_PROFILE) / "choices" / "equal-time.json")
    return conditions(stored["steps"] if stored else None)


def equal_time_record(store=None) -> dict | None:
    return read_json((store or results_dir(STORE)) / "choices" / f"{EQUAL_TIME}.json")


def lr_check(wide_steps: int) -> dict:
    """{rate: config}: the wide model at its confirmatory steps at each rate of the
    learning-rate check (amendment 1), at LR_CHECK_SEED."""
    return {rate: C.wide_albert(PILOT_PROFILE, wide_steps, rate).replace(seed=LR_CHECK_SEED)
            for rate in LR_CHECK_RATES}


def planned(wide_steps: int, seeds=CONFIRM_SEEDS) -> list:
    """Every confirmatory pretraining run, seed-major: all conditions of a seed, then its
    two transition controls, then the next seed; the learning-rate check (amendment 1)
    after the first seed."""
    from ..engine.config import untrained
    configs = conditions(wide_steps)
    out = []
    for k, seed in enumerate(seeds):
        out += [C.seeded(configs[name], seed) for name in CONDITIONS]
        out += [untrained(C.seeded(configs[name], seed)) for name in TRANSITION_ARMS]
        if k == 0:
            out += list(lr_check(wide_steps).values())
    return out


# -- the registered decisions ----------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """One registered decision: metric(a) minus metric(b), paired by seed."""

    key: str
    claim: str
    label: str
    a: str
    b: str
    paper_sign: int  # +1 / -1 the paper's sign of a - b; 0: the paper says no difference
    margin: str  # a key of ``margin_values``
    kind: str  # "ce" (paired t), "accuracy" (bootstrap or t, the wider), "change" (paired
    # t of the trained model's metric minus its random-init control's)
    metric: str = CE
    paper: str = ""

    @property
    def unit(self) -> str:
        """The unit of the paired difference: points of probe accuracy, share of the
        oscillation curve's range, or nats of cross-entropy."""
        return {"accuracy": "points", "change": "share of range"}.get(self.kind, "nats")


PRIMARY = (
    Spec("confirm/asymmetry", "asymmetry", "FFN-shared minus attention-shared, E 32",
         FFN, ATTENTION, +1, "small", "ce",
         paper="Table 4, E = 128: attention-shared 81.7, FFN-shared 80.2 Avg"),
    Spec("confirm/sharing-cost", "asymmetry", "all shared minus not shared, E = H = 64",
         ALL64, BERT, +1, "ce", "ce",
         paper="Table 4, E = 768: all shared 79.8, not shared 82.3 Avg"),
    Spec("confirm/sop", "sop_nsp",
         "SOP probe on cue-free pairs, SOP-trained minus NSP-trained", ALBERT, NSP, +1,
         "pairs", "accuracy", metric="sop_cuefree_probe_correct",
         paper="Table 5: SOP accuracy 86.5 (SOP-trained) vs 52.0 (NSP-trained)"),
    Spec("confirm/dropout", "dropout", "dropout 0.1 minus no dropout", DROPOUT, ALBERT,
         +1, "ce", "ce", paper="Table 8: 90.4 with dropout, 90.7 without (Avg)"),
    Spec("confirm/equal-time", "wall_clock",
         "wide all-shared (H 128) minus BERT-style, equal time", WIDE, BERT, -1, "ce", "ce",
         paper="Table 6: ALBERT-xxlarge 88.7 vs BERT-large 87.2 Avg, 32 h vs 34 h"),
)

SECONDARY = (
    Spec("explore/sharing-cost-E32", "asymmetry", "all shared minus not shared, E 32",
         ALBERT, NONE32, +1, "small", "ce",
         paper="Table 4, E = 128: all shared 80.1, not shared 81.6 Avg"),
    Spec("explore/attention-free", "asymmetry", "attention-shared minus not shared, E 32",
         ATTENTION, NONE32, 0, "small", "ce",
         paper="Table 4, E = 128: attention-shared 81.7, not shared 81.6 Avg"),
    Spec("explore/ffn-cost", "asymmetry", "FFN-shared minus not shared, E 32", FFN, NONE32,
         +1, "small", "ce", paper="Table 4, E = 128: FFN-shared 80.2, not shared 81.6 Avg"),
    Spec("explore/sop-cut-pairs", "sop_nsp",
         "SOP probe on the original pairs (with the cut cue), SOP- minus NSP-trained",
         ALBERT, NSP, +1, "pairs", "accuracy", metric="sop_probe_correct",
         paper="Table 5: 86.5 vs 52.0"),
    Spec("explore/nsp-cue-free", "sop_nsp",
         "NSP probe on cue-free pairs, NSP-trained minus SOP-trained", NSP, ALBERT, +1,
         "pairs", "accuracy", metric="nsp_cuefree_probe_correct",
         paper="Table 5: NSP accuracy 90.5 (NSP-trained) vs 78.9 (SOP-trained)"),
    Spec("explore/transitions-angle", "transitions",
         "angle oscillation, trained minus init: not shared minus all shared, E 32",
         NONE32, ALBERT, +1, "oscillation", "change", metric="oscillation_angle",
         paper="Figure 1: ALBERT's transitions smoother (no numbers)"),
    Spec("explore/transitions-l2", "transitions",
         "L2 oscillation, trained minus init: not shared minus all shared, E 32",
         NONE32, ALBERT, +1, "oscillation", "change", metric="oscillation_l2",
         paper="Figure 1: ALBERT's transitions smoother (no numbers)"),
    Spec("explore/embedding-size", "embedding_sweep",
         "not shared: E = H = 64 minus E 32 (E 64 has 8000 x 32 more embedding weights)",
         BERT, NONE32, -1, "ce", "ce",
         paper="Table 3, not shared: E = 768 82.3 vs E = 128 81.7 Avg"),
)

MARGIN_REASONS = {
    "ce": "a twentieth of the distance between the held-out set's unigram and "
          "left-bigram rungs (the book's margin for cross-entropy)",
    "small": "a fiftieth of that distance: under half of the whole cost of sharing every "
             "layer at E 32 in both exploratory profiles, so that 'nearly free' and 'no "
             "asymmetry' are judged against a margin smaller than the effect they are "
             "compared with",
    "pairs": "2 points of probe accuracy (the book's margin for SOP and NSP accuracy)",
    "oscillation": "0.25 of the curve's range (the book's margin for oscillation)",
}


def margin_values(rungs: dict) -> dict:
    """The registered margins (nats, nats, points, share of range), given the held-out
    set's rungs (``decisions.levels``)."""
    return {"ce": 0.05 * rungs["distance"], "small": 0.02 * rungs["distance"],
            "pairs": 2.0, "oscillation": 0.25}


def holm_alpha(specs=PRIMARY, alpha: float = ALPHA) -> float:
    """Holm's first-step alpha: alpha over the family's tests, two per decision (the
    difference test and the TOST), as ``stats.holm`` counts them."""
    return alpha / (2 * len(specs))


# -- the analysis -----------------------------------------------------------------------------

def with_changes(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with the transition measures (``transitions.add_roughness``) and each
    one's change from its random-init control (``change_<measure>``), where present."""
    from ..stats.curves import add_roughness
    if "transition_angle" not in frame:
        return frame
    frame = add_roughness(frame.copy())
    for measure in ("oscillation_angle", "oscillation_l2"):
        if f"control_{measure}" in frame:
            frame[f"change_{measure}"] = frame[measure] - frame[f"control_{measure}"]
    return frame


def per_seed(spec: Spec, frame: pd.DataFrame) -> pd.Series:
    """The decision's per-seed paired difference a - b (points for accuracies)."""
    metric = f"change_{spec.metric}" if spec.kind == "change" else spec.metric

    def values(name):
        part = frame[frame["condition"] == name].set_index("seed")[metric]
        if spec.kind == "accuracy":
            part = part.dropna().map(lambda s: 100 * sum(c == "1" for c in s) / len(s))
        return part.astype(float)

    a, b = values(spec.a), values(spec.b)
    seeds = sorted(set(a.dropna().index) & set(b.dropna().index))
    return (a.loc[seeds] - b.loc[seeds]).rename(spec.key)


def decide(spec: Spec, frame: pd.DataFrame, margins: dict):
    """The decision (``stats.Decision``) of one spec on a frame of runs."""
    from .decisions import accuracy_decision, ce_decision
    margin = margins[spec.margin]
    if spec.kind == "accuracy":
        return accuracy_decision(frame, spec.key, spec.claim, spec.label, spec.a, spec.b,
                                 spec.metric, margin, spec.paper_sign, spec.paper)
    metric = f"change_{spec.metric}" if spec.kind == "change" else spec.metric
    return ce_decision(frame, spec.key, spec.claim, spec.label, spec.a, spec.b, margin,
                       spec.paper_sign, spec.paper, metric=metric, unit=spec.unit)


def family(frame: pd.DataFrame, rungs: dict, specs=PRIMARY) -> pd.DataFrame:
    """The registered analysis: each spec's decision, gated by its arms' levels, with
    Holm's adjustment over ``specs`` alone (``stats.holm``: two tests a decision)."""
    from .decisions import gated
    from ..stats.inference import holm
    frame = with_changes(frame)
    margins = margin_values(rungs)
    return holm(gated([decide(s, frame, margins) for s in specs], frame, rungs))


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


def curve_differences(frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """A cross-entropy decision's paired difference along training: at each curve point
    (every eighth of a run's schedule, on the curve's held-out sequences, a subset of the
    evaluation's), the mean over seeds of a - b with its 95% t-interval. Points are
    matched by their share of the schedule, so the equal-time arms (of different steps)
    meet at equal shares of their time. Points before the end come before the learning
    rate has decayed."""
    from ..stats.inference import mean_interval
    if spec.kind != "ce":
        raise ValueError(f"{spec.key} is not a cross-entropy decision: no curve")

    def points(name):
        out = {}
        for _, row in frame[frame["condition"] == name].iterrows():
            for point in row["curve"]:
                share = round(8 * point["step"] / row["steps"]) / 8
                out[(row["seed"], share)] = point["mlm_loss_at_mask"]
        return out

    a, b = points(spec.a), points(spec.b)
    rows = []
    for share in sorted({k[1] for k in a} & {k[1] for k in b}):
        d = [a[k] - b[k] for k in a if k[1] == share and k in b]
        i = mean_interval(d)
        rows.append({"share of training": share, "mean": i.mean, "low": i.low,
                     "high": i.high, "seeds": i.n})
    return pd.DataFrame(rows)


def curves_figure(frame: pd.DataFrame, rungs: dict, specs=PRIMARY, title: str = ""):
    """One panel per cross-entropy decision of ``specs``: its paired difference along
    training (``curve_differences``), the margin's band and zero; drawn at the text
    column's width (6.6 in at 100 dpi) with 10-point text."""
    import matplotlib.pyplot as plt
    specs = [s for s in specs if s.kind == "ce"]
    margins = margin_values(rungs)
    with plt.rc_context({"font.size": 10}):
        fig, axes = plt.subplots(1, len(specs), figsize=(6.6, 2.6), dpi=100,
                                 sharex=True, squeeze=False)
        for ax, spec in zip(axes[0], specs):
            d = curve_differences(frame, spec)
            m = margins[spec.margin]
            ax.axhspan(-m, m, color="0.88", lw=0)
            ax.axhline(0, color="0.4", lw=0.8)
            ax.fill_between(d["share of training"], d["low"], d["high"], color="C0",
                            alpha=0.25, lw=0)
            ax.plot(d["share of training"], d["mean"], "o-", color="C0", ms=3)
            ax.set_title(spec.key.split("/", 1)[1], fontsize=10)
            ax.set_xticks([0.5, 1.0])
            ax.set_xlabel("share of training")
        axes[0][0].set_ylabel("A minus B (nats)")
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout()
    return fig


# -- the runs ---------------------------------------------------------------------------------

def _evaluation_configs():
    from ..profiles import eval_config
    return (eval_config(PILOT_PROFILE), cue_free_config())


def cue_free_config():
    from ..engine.evaluate import CueFreeEval
    from ..profiles import SIZES
    return CueFreeEval(max_seq_length=SIZES[PILOT_PROFILE].seq)


def _needed(name: str, seeded, evaluations) -> list:
    """(config, evaluation) pairs a stored run of condition ``name`` needs: the common
    evaluation; the cue-free one for the SOP and NSP arms; its control's for the
    transition arms."""
    from ..engine.config import untrained
    needed = [(seeded, evaluations[0])]
    if name in CUE_FREE_ARMS:
        needed.append((seeded, evaluations[1]))
    if name in TRANSITION_ARMS:
        needed.append((untrained(seeded), evaluations[0]))
    return needed


def _stored(store, name: str, seeded, evaluations) -> tuple:
    """(the stored run or None, whether it is stored with every evaluation it needs)."""
    from ..engine.store import stored_eval, stored_pretrain
    run = stored_pretrain(store, seeded)
    return run, run is not None and all(
        stored_eval(store, config_hash(c.to_dict()), e) is not None
        for c, e in _needed(name, seeded, evaluations))


def load(store, configs: dict, seeds, require: bool = True) -> pd.DataFrame:
    """One row per (condition, seed) of ``store``: pretraining figures, both evaluations
    (the common held-out sets and the cue-free pairs) and, for the transition arms, the
    random-init control's. ``require``: NotComplete names what is missing."""
    from ..engine.config import untrained
    from .decisions import CONTROL_METRICS, _evaluations, _machine
    evaluations = _evaluation_configs()
    missing, rows = [], []
    for name, config in configs.items():
        for seed in seeds:
            seeded = C.seeded(config, seed)
            run, complete = _stored(store, name, seeded, evaluations)
            if not complete:
                missing.append(f"{name!r} seed {seed}")
                continue
            row = {"condition": name, "seed": seed, "hash": run["hash"], **run["metrics"],
                   "curve": run["curve"], "machine": _machine(run),
                   "commit": run["provenance"]["git_commit"],
                   **_evaluations(store, run["hash"], evaluations)}
            if name in TRANSITION_ARMS:
                control = _evaluations(store, config_hash(untrained(seeded).to_dict()),
                                       evaluations[:1])
                row.update({f"control_{k}": v for k, v in control.items()
                            if k in CONTROL_METRICS})
            rows.append(row)
    if missing and require:
        raise NotComplete(f"{len(missing)} of {len(configs) * len(seeds)} runs are not "
                          f"stored with their evaluations: {', '.join(missing)}")
    return pd.DataFrame(rows)


def pilot_frame() -> pd.DataFrame:
    """The pilot's runs: cpu-long's seeds 0-2 of the nine conditions (from the results
    folder, else the committed one: the tests' temporary store holds none)."""
    return load(C._timing_store(PILOT_PROFILE), pilot_conditions(), PILOT_SEEDS)


def confirmatory_frame(seeds=CONFIRM_SEEDS, store=None) -> pd.DataFrame:
    """The confirmatory runs of ``seeds``, only once every one of them is stored (the
    stopping rule): NotComplete before. ``seeds`` other than all of them: only the
    longest complete run of seeds from the first (amendment 1, an early end)."""
    if tuple(seeds) != CONFIRM_SEEDS[:len(seeds)]:
        raise ValueError(f"an early end analyses seeds {CONFIRM_SEEDS[0]} to k in order, "
                         f"not {tuple(seeds)}")
    record = equal_time_record(store)
    if record is None:
        raise NotComplete("the equal-time measurement is not stored yet: no confirmatory "
                          "run has started")
    return load(store or results_dir(STORE), conditions(record["steps"]), seeds)


def time_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Amendment 1's check of equal time: per seed, the wide run's training seconds over
    the BERT-style run's, their machines, and whether the ratio is outside 0.9-1.1."""
    rows = []
    for seed, part in frame.groupby("seed"):
        runs = part.set_index("condition")
        if not {WIDE, BERT} <= set(runs.index):
            continue
        ratio = runs.loc[WIDE, "train_seconds"] / runs.loc[BERT, "train_seconds"]
        rows.append({"seed": seed, "wide / BERT-style seconds": ratio,
                     "machines": " / ".join(dict.fromkeys(runs.loc[[WIDE, BERT], "machine"])),
                     "flagged": not 0.9 <= ratio <= 1.1})
    return pd.DataFrame(rows)


RUN_COLUMNS = ["condition", "seed", "steps", "train_seconds", "tokens", "machine"]


def trained_runs(store=None) -> pd.DataFrame:
    """The stored confirmatory runs' training records alone, one row per (condition,
    seed): steps, training seconds, tokens and machine. No evaluation or loss is read,
    so this is shown while the design is incomplete."""
    from .decisions import _machine
    store = store or results_dir(STORE)
    record = equal_time_record(store)
    if record is None:
        return pd.DataFrame(columns=RUN_COLUMNS)
    from ..engine.store import stored_pretrain
    rows = []
    for name, config in conditions(record["steps"]).items():
        for seed in CONFIRM_SEEDS:
            run = stored_pretrain(store, C.seeded(config, seed))
            if run is not None:
                rows.append({"condition": name, "seed": seed,
                             **{k: run["metrics"][k] for k in
                                ("steps", "train_seconds", "tokens")},
                             "machine": _machine(run)})
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def training_costs(runs: pd.DataFrame) -> pd.DataFrame:
    """Per condition of ``trained_runs``: runs, steps a run, milliseconds a step, tokens a
    second and hours of training (one worker of one thread each)."""
    rows = []
    for name, part in runs.groupby("condition", sort=False):
        seconds, steps = part["train_seconds"].sum(), part["steps"].sum()
        rows.append({"condition": name, "runs": len(part),
                     "steps a run": int(part["steps"].median()),
                     "ms a step": 1000 * seconds / steps,
                     "tokens/s": part["tokens"].sum() / seconds,
                     "hours": seconds / 3600,
                     "machines": ", ".join(sorted(set(part["machine"])))})
    return pd.DataFrame(rows, columns=["condition", "runs", "steps a run", "ms a step",
                                       "tokens/s", "hours", "machines"])


def _shortfall(ratios: pd.DataFrame) -> str:
    """'3% less time than' / '4% more time than' / 'as much time as': the median ratio
    in words."""
    median = round(float(ratios["wide / BERT-style seconds"].astype(float).median()), 2)
    if median == 1:
        return "as much time as"
    return f"about {abs(1 - median):.0%} {'less' if median < 1 else 'more'} time than"


def ratios_text(ratios: pd.DataFrame) -> str:
    """'1000 0.70, 1001 1.00; median 0.85; both arms on AMD EPYC': ``time_ratios`` per seed
    (amendment 1.2) and their median, the machines named once where every seed's arms
    shared them (a reader: eleven repeats of one machine hid the numbers), else per seed."""
    column = ratios["wide / BERT-style seconds"]
    machines = list(dict.fromkeys(ratios["machines"]))
    if len(machines) == 1:
        per_seed = ", ".join(f"{seed} {ratio:.2f}" for seed, ratio in
                             zip(ratios["seed"], column))
        where = (f"; both arms on {machines[0]}" if " / " not in machines[0]
                 else f"; wide / BERT-style on {machines[0]}")
    else:
        per_seed = ", ".join(f"{seed} {ratio:.2f} ({machine})" for seed, ratio, machine in
                             zip(ratios["seed"], column, ratios["machines"]))
        where = ""
    return f"{per_seed}; median {column.median():.2f}{where}"


def lr_check_reading(scores: dict, margin: float) -> str:
    """Amendment 1's rule for the learning-rate check: ``scores`` {rate: held-out
    cross-entropy}; the words the equal-time verdict carries, or "" where 5e-3 is within
    the margin of the best."""
    best = min(scores, key=scores.get)
    gap = scores[WIDE_LEARNING_RATE] - scores[best]
    if best == WIDE_LEARNING_RATE or gap <= margin:
        return ""
    return (f"the wide model trained at a learning rate that was not its best, by "
            f"{gap:.3f} nats (the check's best: {best:g})")


def lr_check_words(store=None) -> str | None:
    """Amendment 1.1's words for the equal-time verdict (``lr_check_reading`` at the ce
    margin): None before the check's runs are stored and evaluated."""
    scores = lr_check_scores(store)
    return None if scores is None else lr_check_reading(scores, margin_values(rungs())["ce"])


def lr_check_scores(store=None) -> dict | None:
    """{rate: held-out cross-entropy at [MASK]} of amendment 1's learning-rate check, once
    its three runs are stored and evaluated (None before, or before the equal-time
    measurement fixes their steps)."""
    from .decisions import _evaluations
    record = equal_time_record(store)
    if record is None:
        return None
    store = store or results_dir(STORE)
    evaluations = _evaluation_configs()
    scores = {}
    for rate, config in lr_check(record["steps"]).items():
        run, complete = _stored(store, WIDE, config, evaluations)
        if not complete:
            return None
        scores[rate] = float(_evaluations(store, run["hash"], evaluations[:1])[CE])
    return scores


def rungs() -> dict:
    from .decisions import levels
    return levels(PILOT_PROFILE)


def confirmatory_families(store=None) -> dict:
    """{"primary", "secondary"}: the two families on the confirmatory seeds; NotComplete
    until every run is stored."""
    return both_families(confirmatory_frame(store=store), rungs())


def both_families(frame: pd.DataFrame, r: dict) -> dict:
    """{"primary", "secondary"}: each registered family judged on ``frame``."""
    return {"primary": family(frame, r, PRIMARY), "secondary": family(frame, r, SECONDARY)}


PILOT_NOT_COMPARABLE = {
    "confirm/equal-time": "the pilot's wide model trained a nominal step budget scaled "
                          "from another profile's timing, not equal time measured on one "
                          "machine (section 4: a rough guide only)"}


def _p(value: float) -> str:
    return f"{value:.2g}" if value >= 0.001 else "<0.001"


def results_table(confirmed: pd.DataFrame, pilot: pd.DataFrame, specs=PRIMARY) -> str:
    """The judged family as a markdown table, the pilot beside it: each decision's
    difference with its 95% interval and margin; both raw tests (amendment 1.5: the
    difference test's and the TOST's p) with their Holm-adjusted values; the verdict at
    an unadjusted 5%; the verdict after Holm's adjustment with its stage; and the pilot's
    difference and interval (seeds 0-2, exploratory: no verdict, which the book's own
    cpu-long family gives). Only for a family judged once complete."""
    from .decisions import interval_text
    n = int(confirmed["n_seeds"].max())
    lines = [f"| decision (A minus B) | confirmatory, {n} seeds [95% interval] | p of the "
             f"difference test / of the TOST (after Holm in brackets) | verdict at 5% | "
             f"verdict after Holm | pilot, seeds 0-2 (exploratory) |",
             "|---|---|---|---|---|---|"]
    notes = []
    for spec in specs:
        row, old = confirmed.loc[spec.key], pilot.loc[spec.key]
        tests = f"{_p(row['p_difference'])} / {_p(row['p_equivalence'])}"
        if row["in_family"]:
            tests += (f" [{_p(row['p_difference_holm'])} / "
                      f"{_p(row['p_equivalence_holm'])}]")
        before = f"{interval_text(old['estimate'], old['low'], old['high'], old['unit'])}"
        if spec.key in PILOT_NOT_COMPARABLE:
            notes.append(f"{'†' * (len(notes) + 1)} {PILOT_NOT_COMPARABLE[spec.key]}.")
            before += " " + "†" * len(notes)
        lines.append(
            f"| `{spec.key}`: {spec.label} | "
            f"{interval_text(row['estimate'], row['low'], row['high'], row['unit'])} "
            f"{row['unit']} (margin {row['margin']:.4g}) | {tests} | {row['verdict']} | "
            f"**{row['verdict_staged']}** | {before} |")
    return "\n".join(lines) + "\n" + "".join(f"\n{note}\n" for note in notes)


def holm_tests(judged: pd.DataFrame) -> int:
    """How many tests Holm's adjustment ran over: two for each decision left in the
    family by the gate (a "not testable" decision leaves it)."""
    return 2 * int(judged["in_family"].sum())


NOTED = ("confirm/equal-time", "confirm/sop", "confirm/dropout")  # what beside_notes covers


def above_majority(runs: pd.DataFrame, accuracy: str):
    """The runs' cue-free SOP accuracy (column ``accuracy``: the probe's or the head's)
    minus the majority label's, in points, as a mean with its 95% t-interval over
    seeds; None where the runs do not all carry it."""
    from ..stats.inference import mean_interval
    if not len(runs) or accuracy not in runs or runs[accuracy].isna().any():
        return None
    return mean_interval(100 * (runs[accuracy] - runs["sop_cuefree_majority"]))


def beside_notes(frame: pd.DataFrame, store=None) -> list:
    """What amendment 1 reports beside the primary verdicts, read from the confirmatory
    runs: the equal-time seconds ratio of each seed with its machine and the
    learning-rate check (1.1, 1.2); the SOP-trained arm's cue-free SOP probe accuracy
    against the majority label (1.4); the no-dropout arm's held-out minus training
    cross-entropy at [MASK] (1.8, the dropout premise)."""
    from .decisions import interval_text
    from ..stats.inference import mean_interval
    notes = []
    ratios = time_ratios(frame)
    if len(ratios):
        flagged = int(ratios["flagged"].sum())
        notes.append(
            "`confirm/equal-time` (amendment 1.2): wide over BERT-style training seconds, "
            f"per seed: {ratios_text(ratios)}; {flagged} of {len(ratios)} outside 0.9 to "
            f"1.1 (flagged); below 1 the wide model had less time, which favours "
            f"\"contradicted\" (amendment 5.2). Both arms' step counts were fixed, so a "
            f"seed's ratio reflects the machine's load during its two runs, not how much "
            f"either model trained; the median says the fixed budget gave the wide model "
            f"{_shortfall(ratios)} the BERT-style model took.")
    words = lr_check_words(store)
    if words is not None:
        notes.append("`confirm/equal-time`, learning-rate check (amendment 1.1): "
                     + (words if words else "5e-3 is within the ce margin of the best "
                        "rate") + ".")
    albert = frame[frame["condition"] == ALBERT]  # SOP-trained, and without dropout
    i = above_majority(albert, "sop_cuefree_accuracy_probe")
    if i is not None:
        notes.append(f"`confirm/sop` (amendment 1.4): the SOP-trained arm's cue-free SOP "
                     f"probe accuracy minus the majority label's, "
                     f"{interval_text(i.mean, i.low, i.high, 'points')} points over "
                     f"{i.n} seeds.")
    if len(albert) and "train_mlm_loss_at_mask" in albert:
        gap = (frame[CE] - frame["train_mlm_loss_at_mask"]).groupby(
            [frame["condition"], frame["seed"]]).first()
        i = mean_interval(gap.loc[ALBERT])
        note = (f"`confirm/dropout`, its premise (amendment 1.8): the no-dropout arm's "
                f"held-out minus training cross-entropy at [MASK], "
                f"{interval_text(i.mean, i.low, i.high, 'nats')} nats over {i.n} seeds")
        both = (pd.concat([gap.loc[ALBERT], gap.loc[DROPOUT]], axis=1).dropna()
                if DROPOUT in gap.index.get_level_values(0) else pd.DataFrame())
        if len(both) >= 2:  # amendment 5.5: chapter 5's measure, paired by seed
            d = mean_interval(both.iloc[:, 0] - both.iloc[:, 1])
            note += (f"; that gap minus the dropout arm's, "
                     f"{interval_text(d.mean, d.low, d.high, 'nats')} nats (positive where "
                     f"dropout narrows the gap; a gap appears even without memorising, "
                     f"so this difference is the premise's better reading)")
        notes.append(note + ".")
    return notes


def report(store=None) -> str:
    """Both judged families, the pilot beside them (``results_table``), and what
    amendment 1 reports beside the primary verdicts (``beside_notes``); NotComplete until
    every confirmatory run is stored and evaluated (the stopping rule)."""
    if not complete(store):
        table = progress(store)
        raise NotComplete(f"{int(table['evaluated'].sum())} of {int(table['of'].sum())} "
                          f"runs are evaluated: no estimate is computed before all are")
    frame, r = confirmatory_frame(store=store), rungs()  # read once, judged and noted
    families, pilot = both_families(frame, r), both_families(pilot_frame(), r)
    notes = beside_notes(frame, store)
    return (f"Primary family (confirmatory; Holm over "
            f"{holm_tests(families['primary'])} tests: each decision's difference test "
            f"and TOST):\n\n"
            + results_table(families["primary"], pilot["primary"], PRIMARY)
            + "\nBeside the primary verdicts, as amendment 1 asks:\n\n"
            + "".join(f"- {note}\n" for note in notes)
            + f"\nSecondary family (exploratory; Holm over "
            f"{holm_tests(families['secondary'])} tests: each decision's difference test "
            f"and TOST):\n\n"
            + results_table(families["secondary"], pilot["secondary"], SECONDARY))


def progress(store=None) -> pd.DataFrame:
    """How many of each condition's seeds are trained and evaluated: counts only, no
    estimate (what the book shows until the design is complete)."""
    store = store or results_dir(STORE)
    record = equal_time_record(store)
    configs = conditions(record["steps"] if record else None)
    evaluations = _evaluation_configs()
    rows = []
    for name in CONDITIONS:
        trained = evaluated = 0
        for seed in CONFIRM_SEEDS if name in configs else ():
            run, complete = _stored(store, name, C.seeded(configs[name], seed), evaluations)
            trained += run is not None
            evaluated += complete
        rows.append({"condition": name, "trained": trained, "evaluated": evaluated,
                     "of": len(CONFIRM_SEEDS)})
    return pd.DataFrame(rows).set_index("condition")


def complete(store=None) -> bool:
    table = progress(store)
    return bool((table["evaluated"] == table["of"]).all())


# -- the registration -------------------------------------------------------------------------

PAGE = "book/preregistration.md"
RECORD = "data/preregistration.json"
BEGIN, END = "<!-- registered text begins -->", "<!-- registered text ends -->"


def registered_text(page_text: str) -> str:
    """The registered block of the pre-registration page (between the markers)."""
    start, stop = page_text.find(BEGIN), page_text.find(END)
    if start < 0 or stop < start:
        raise ValueError(f"the page has no registered block ({BEGIN!r} ... {END!r})")
    return page_text[start:stop + len(END)]


def registered_digest(page_text: str) -> str:
    return hashlib.sha256(registered_text(page_text).encode()).hexdigest()


def registration() -> dict:
    """The stored record: {"commit", "date", "sha256"} of the registration."""
    from ..paths import repo_root
    return json.loads((repo_root() / RECORD).read_text())


def _git(*args, cwd=None) -> subprocess.CompletedProcess:
    from ..paths import repo_root
    return subprocess.run(["git", *args], cwd=cwd or repo_root(), capture_output=True,
                          text=True)


def descends(commit: str, ancestor: str) -> bool:
    """Whether ``commit`` (a run's recorded commit, without '+dirty') has ``ancestor``
    in its history (git merge-base --is-ancestor)."""
    return _git("merge-base", "--is-ancestor", ancestor, commit).returncode == 0


def stored_runs(store=None) -> list:
    """Every stored confirmatory pretraining run's JSON."""
    store = store or results_dir(STORE)
    return [json.loads(p.read_text()) for p in sorted((store / "pretrain").glob("*.json"))]


def same_training_code(commit: str, ancestor: str) -> bool:
    """Whether ``commit``'s engine, model and data code (FROZEN) equals ``ancestor``'s."""
    return _git("diff", "--quiet", ancestor, commit, "--", *FROZEN).returncode == 0


def run_provenance_problems(runs, ancestor: str) -> list:
    """The runs whose recorded commit is dirty, unknown, not a descendant of the
    registration commit, or trains with other engine, model or data code than it
    (amendment 1), as text (none: [])."""
    out = []
    for run in runs:
        commit = run["provenance"]["git_commit"]
        if commit.endswith("+dirty"):
            out.append(f"{run['hash']}: trained from a dirty tree ({commit})")
        elif not descends(commit, ancestor):
            out.append(f"{run['hash']}: commit {commit} does not descend from the "
                       f"registration {ancestor}")
        elif not same_training_code(commit, ancestor):
            out.append(f"{run['hash']}: commit {commit} changed the training code "
                       f"({', '.join(FROZEN)}) since the registration")
    return out


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
               "wide": C.wide_albert(PILOT_PROFILE, None, WIDE_LEARNING_RATE)}
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


def evaluate_trained(runs: list, store: str, device: str, workers: int) -> int:
    """Evaluate the trained ``runs`` of ``store`` that lack an evaluation: every one on
    the common held-out sets, every trained one (not a zero-step control) on the
    cue-free pairs; blinded, as a stretch's log is. The confirmatory store, the long
    pilot and the ladder evaluate their runs so."""
    from ..engine.runner import run_many, worker_threads
    from ..engine.store import stored_eval, stored_pretrain
    from .training import _report
    folder, done = results_dir(store), 0
    for kind, config in (("evaluate", _evaluation_configs()[0]), ("cuefree", cue_free_config())):
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
    done = _train(runs, STORE, device, workers, False, False, float("inf"), "confirm",
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
    from .training import add_stretch_arguments, check_stretch_arguments
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
        try:
            print(report())
        except NotComplete as error:  # the stopping rule, not a failure: say it in a line
            from ..cli import one_line
            print(one_line(error), file=sys.stderr)
            return 1
        return 0
    check_stretch_arguments(parser, args)
    train(args.hours, args.fill, args.workers, args.device)
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))


# -- what the chapters say ---------------------------------------------------------------

def equal_time_sentence(record: dict | None) -> str:
    """The stored equal-time measurement in one sentence ("" before it is made)."""
    if not record:
        return ""
    return (f"Equal time was measured on {record['provenance']['machine']['cpu']}: "
            f"{1000 * record['bert_step_seconds']:.1f} ms a step for the BERT-style model, "
            f"{1000 * record['wide_step_seconds']:.1f} ms for the wide one, so the wide "
            f"model trains {record['steps']:,} steps against {record['bert_steps']:,}.")


# Where a registered difference is taken the other way round from the chapter's
# headline (the registration wrote each so that the paper's side is positive), the
# chapter says so next to it: the same comparison, the opposite sign.
REVERSED = {"asymmetry": "attention-shared minus FFN-shared",
            "dropout": "no dropout minus dropout 0.1"}


def status_text(claim: str, store=None) -> str:
    """One paragraph for a chapter: its primary decisions' confirmatory verdicts once
    every confirmatory run is stored; before, how many are, and nothing else."""
    specs = [s for s in PRIMARY if s.claim == claim]
    if not specs:
        return ""
    labels = "; ".join(s.label for s in specs)
    table = progress(store)
    done, total = int(table["evaluated"].sum()), int(table["of"].sum())
    record = equal_time_record(store) if claim == "wall_clock" else None
    timing = " " + equal_time_sentence(record) if record else ""
    trained = int(table["trained"].sum())
    if done < total:
        if claim in REVERSED:
            timing += (f" (Its first difference is this page's {REVERSED[claim]} taken "
                       f"the other way round: the same comparison, the opposite sign.)")
        return (f"**{{term}}`Confirmatory <confirmatory>` test** (pre-registered: "
                f"{labels}): {trained} of {total} "
                f"runs trained, {done} evaluated. It is judged once, when all are; until "
                f"then the numbers on this page are exploratory.{timing}")
    from .decisions import interval_text
    families = confirmatory_families(store)
    primary = families["primary"]
    # the first decision leads the chapter's box (``chapter_box.bottom_line``) in the
    # chapter's sign; here only what the box does not show (a reader met it twice, the
    # second time with the opposite sign)
    parts = []
    for spec in specs[1:]:
        row = primary.loc[spec.key]
        interval = interval_text(row["estimate"], row["low"], row["high"], row["unit"])
        parts.append(f"{spec.label}: {interval} {row['unit']}, **{row['verdict_staged']}** "
                     f"after Holm's adjustment over the primary family ({row['n_seeds']} "
                     f"fresh seeds; the paper: {spec.paper})")
    notes = ""
    if any(spec.key in NOTED for spec in specs):  # amendment 1's notes on this claim
        keys = tuple(f"`{spec.key}`" for spec in specs)
        # the SOP reading leads the box already (``confirmatory.sop_words``)
        notes = "".join(" " + note for note in beside_notes(confirmatory_frame(store=store),
                                                             store)
                        if note.startswith(keys) and not note.startswith("`confirm/sop`"))
    lead = ("**{term}`Confirmatory <confirmatory>` test** (pre-registered), beside the "
            "box's result: ")
    if parts:
        return lead + "; ".join(parts) + "." + timing + notes
    rest = (timing + notes).strip()
    return lead + rest if rest else ""

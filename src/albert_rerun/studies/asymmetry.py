"""The asymmetry study (issue #54): which half of a block can be shared, at two depths,
with the parameter count held apart. Registered on ``PAGE`` before any of its runs.

The three primary decisions (``PRIMARY``) are paired by seed and Holm-adjusted as one
family: FFN-shared minus attention-shared at 4 layers and at ``DEEP`` layers, and the
FFN-shared model with its one FFN widened to the attention-shared model's parameter
count (``asymmetry_pilot.WIDENED``) minus attention-shared at ``DEEP`` layers. Each is a
difference of held-out cross-entropy at [MASK] at the end of the schedule, in nats,
positive in the paper's direction (sharing the FFN costs more than sharing attention).

Every run scores the first ``CURVE_EXAMPLES`` held-out sequences at ``CURVE_POINTS``
points along training; the count rungs are scored on the same sequences
(``count_rungs.levels_on``) and each arm's tokens to a rung read off its curve
(``rung_tokens``). Arms share their common blocks' initial draw, data order and masks
(``init_draw="common"``, measured by ``asymmetry_pilot``).

Nothing is read before every run is stored (``NotStored``); the training log is blind.
Training: ``scripts/train_stretch.sh asymmetry H`` (from a clean checkout that descends
from the registration), resumable across sessions.
"""
from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..engine.store import config_hash, read_json, results_dir
from . import asymmetry_pilot as pilot

STORE = "asymmetry"  # data/results/asymmetry/
PAGE = "book/asymmetry_registration.md"
RECORD = "data/asymmetry-registration.json"  # {"commit", "date", "sha256", "page"}
SHALLOW, DEEP = 4, pilot.DEEP_LAYERS
STEPS = pilot.STEPS  # the confirmatory (4x) schedule
ATTENTION, FFN = pilot.PAIR
NONE, ALBERT = pilot.FOUR[0], pilot.FOUR[3]
WIDENED = pilot.WIDENED
SEEDS = {SHALLOW: tuple(range(5500, 5512)), DEEP: tuple(range(5600, 5605))}
ARMS = {SHALLOW: (ATTENTION, FFN), DEEP: (NONE, ATTENTION, FFN, ALBERT, WIDENED)}
ALPHA = 0.05
# (decision, layers, arm, minus arm): positive = the paper's direction
PRIMARY = (("sign at 4 layers", SHALLOW, FFN, ATTENTION),
           ("sign at depth", DEEP, FFN, ATTENTION),
           ("parameters held apart", DEEP, WIDENED, ATTENTION))
CE = "mlm_loss_at_mask"


class NotStored(LookupError):
    """Some run of the study is not stored and evaluated: nothing is read before."""


def configs() -> dict:
    """{(arm, layers, seed): config} of every run: the pilot's arms (H 64, E 32, the
    confirmatory recipe and 4x schedule, common draw, held-out curve) on fresh seeds."""
    return {(arm, layers, seed): pilot.arm_config(arm, layers, seed)
            for layers in (SHALLOW, DEEP) for seed in SEEDS[layers]
            for arm in ARMS[layers]}


def planned() -> list:
    """Every run in training order, seed by seed: the 4-layer pair of the k-th seed, then
    the deep arms of the k-th seed, so that a stopped study has whole seeds."""
    out, table = [], configs()
    for k in range(max(len(s) for s in SEEDS.values())):
        for layers in (SHALLOW, DEEP):
            if k < len(SEEDS[layers]):
                out += [table[(arm, layers, SEEDS[layers][k])] for arm in ARMS[layers]]
    return out


def hours(tokens_per_second: dict) -> float:
    """Thread-hours to train ``planned()`` at ``tokens_per_second`` ({(arm, layers):
    tokens a second on one thread})."""
    total = 0.0
    for (arm, layers, _), c in configs().items():
        tokens = c.max_steps * c.batch_size * c.max_seq_length
        total += tokens / tokens_per_second[(arm, layers)] / 3600
    return total


# -- registration -------------------------------------------------------------------

def registration() -> dict | None:
    """The committed registration record, or None before it."""
    from ..paths import repo_root
    return read_json(repo_root() / RECORD)


def registration_problem() -> str:
    """Why this checkout may not train the study's runs ("" if it may)."""
    from ..paths import repo_root
    from .confirm_design import _git, descends, registered_digest
    record = registration()
    if record is None:
        return f"{RECORD} is not stored"
    if _git("cat-file", "-e", f"HEAD:{RECORD}").returncode != 0:
        return f"{RECORD} is not committed"
    head = _git("rev-parse", "HEAD").stdout.strip()
    if not descends(head, record["commit"]):
        return f"HEAD {head[:7]} does not descend from {record['commit'][:7]}"
    if registered_digest((repo_root() / PAGE).read_text()) != record["sha256"]:
        return f"the registered text of {PAGE} changed"
    return ""


def provenance_problems(runs, record: dict | None = None) -> list:
    """Each stored run that was not trained from a clean commit descending from the
    registration with its training code; as text (none: [])."""
    from .confirm_design import run_provenance_problems
    record = record or registration()
    if record is None:
        return [f"{run['hash']}: stored before the registration" for run in runs]
    return run_provenance_problems(runs, record["commit"])


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train (or resume) the study's runs in order, then evaluate the finished ones on the
    common held-out set; refused before the registration."""
    from ..data.files import verify_inputs
    from . import confirm
    from .training import _train, default_workers
    problem = registration_problem()
    if problem:
        raise NotStored(f"no study run trains before the registration: {problem}")
    verify_inputs()
    runs = planned()
    workers = workers or default_workers()
    finish_by = None if hours is None else time.time() + hours * 3600
    done = _train(runs, results_dir(STORE), device, workers, False, False, float("inf"),
                  "asymmetry", finish_by, fill and finish_by is not None, blinded=True)
    return done + confirm.evaluate_trained(runs, STORE, device, workers, cue_free=False)


def progress(store=None) -> list:
    """[(arm, layers, seed, step reached, steps)]: no loss."""
    from .training import steps_reached
    store = store or results_dir(STORE)
    return [(arm, layers, seed, steps_reached(c, store), c.max_steps)
            for (arm, layers, seed), c in configs().items()]


# -- the analysis (only once every run is stored) --------------------------------------

def runs(store=None) -> pd.DataFrame:
    """One row per run: arm, layers, seed, parameters, cross-entropy at [MASK] at the end
    (the common held-out set), its curve, tokens, tokens a second. NotStored unless every
    run is stored and evaluated."""
    store = store or results_dir(STORE)
    counts = pilot.parameters()
    rows = []
    for (arm, layers, seed), config in configs().items():
        row = pilot._row(store, config)
        if row is None:
            raise NotStored(f"{arm} / {layers} layers / seed {seed} is not stored")
        rows.append({"arm": arm, "layers": layers, "seed": seed,
                     "parameters": counts[(arm, layers)], "ce": row["ce"],
                     "curve": row["curve"], "tokens": row["tokens"],
                     "tokens/s": row["tokens_per_second"], "hash": row["hash"]})
    return pd.DataFrame(rows)


def paired(frame: pd.DataFrame, layers: int, arm: str, other: str) -> pd.Series:
    """Per seed: ``arm`` minus ``other`` cross-entropy at ``layers``."""
    table = frame[frame["layers"] == layers].pivot(index="seed", columns="arm", values="ce")
    return table[arm] - table[other]


def decisions(frame: pd.DataFrame, margin: float, unigram: float) -> pd.DataFrame:
    """The registered family, as the first registration judges its own: per primary
    decision the seeds, mean difference (nats, positive = the paper's direction), its 95%
    t-interval, the two-sided paired t's p and the TOST's p within ``margin``; Holm's
    adjustment over the six tests; the gate (each arm's mean below the reads-context
    line, two standard errors under the ``unigram`` rung) and the verdict (``verdict``)."""
    from scipy import stats
    from statsmodels.stats.multitest import multipletests
    rows = []
    for name, layers, arm, other in PRIMARY:
        d = paired(frame, layers, arm, other).to_numpy()
        n, mean, se = len(d), d.mean(), d.std(ddof=1) / np.sqrt(len(d))
        half = stats.t.ppf(0.975, n - 1) * se
        ces = frame[(frame["layers"] == layers) & frame["arm"].isin((arm, other))]
        by_arm = ces.groupby("arm")["ce"]
        reads = bool((by_arm.mean() + 2 * by_arm.sem() < unigram).all())
        rows.append({"decision": name, "layers": layers, "seeds": n, "estimate": mean,
                     "low": mean - half, "high": mean + half, "sd": d.std(ddof=1),
                     "p": stats.ttest_1samp(d, 0.0).pvalue,
                     "p equivalence": max(stats.t.sf((mean + margin) / se, n - 1),
                                          stats.t.cdf((mean - margin) / se, n - 1)),
                     "reads context": reads})
    out = pd.DataFrame(rows)
    judged = out["reads context"].to_numpy()
    adjusted = np.full(2 * len(out), np.nan)
    tests = np.concatenate([out["p"], out["p equivalence"]])
    keep = np.concatenate([judged, judged])
    if keep.any():
        adjusted[keep] = multipletests(tests[keep], alpha=ALPHA, method="holm")[1]
    out["p holm"], out["p equivalence holm"] = adjusted[:len(out)], adjusted[len(out):]
    out["verdict"] = [verdict(r) for r in out.to_dict("records")]
    return out


def verdict(row: dict) -> str:
    """The first registration's rule at 5% after Holm: "equivalent" (the TOST rejects),
    else "reproduced" or "contradicted" (the difference test rejects on the paper's side
    or the other), else "inconclusive"; "not testable" if an arm does not read context."""
    if not row["reads context"]:
        return "not testable"
    if row["p equivalence holm"] < ALPHA:
        return "equivalent"
    if row["p holm"] < ALPHA:
        return "reproduced" if row["estimate"] > 0 else "contradicted"
    return "inconclusive"


def growth(frame: pd.DataFrame) -> dict:
    """The asymmetry at ``DEEP`` layers minus at 4 (secondary): its estimate and 95%
    Welch interval (the depths' seeds are different models)."""
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW
    deep = paired(frame, DEEP, FFN, ATTENTION).to_numpy()
    shallow = paired(frame, SHALLOW, FFN, ATTENTION).to_numpy()
    compare = CompareMeans(DescrStatsW(deep), DescrStatsW(shallow))
    low, high = compare.tconfint_diff(alpha=ALPHA, usevar="unequal")
    return {"estimate": deep.mean() - shallow.mean(), "low": low, "high": high}


def costs(frame: pd.DataFrame) -> pd.DataFrame:
    """Per arm at ``DEEP`` layers: its cost against not shared (nats, paired by seed),
    mean and 95% t-interval, for the chapter's figure beside the paper's Table 4."""
    from scipy import stats
    rows = []
    for arm in (ATTENTION, FFN, ALBERT, WIDENED):
        d = paired(frame, DEEP, arm, NONE).to_numpy()
        half = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
        rows.append({"arm": arm, "layers": DEEP, "cost": d.mean(),
                     "low": d.mean() - half, "high": d.mean() + half})
    return pd.DataFrame(rows)


def tokens_to(curve: list, level: float) -> float:
    """Tokens trained at the first curve point under ``level`` (nats); NaN if none."""
    return pilot.tokens_to(curve, level)


def stage(curve_end: float, levels: dict) -> str:
    """Where a model stands at the end against the count rungs scored on its curve's
    sequences: "on the plateau" (above the left-bigram rung), "past left-bigram", or
    "past two-sided"."""
    if curve_end < levels["two-sided"]:
        return "past two-sided"
    if curve_end < levels["left bigram"]:
        return "past left-bigram"
    return "on the plateau"


def rung_tokens(frame: pd.DataFrame, levels: dict) -> pd.DataFrame:
    """Per arm and depth: median tokens to the left-bigram and two-sided rungs over its
    seeds (NaN where fewer than half reach it), the seeds that reach each, and the stage
    most seeds end in."""
    rows = []
    for (arm, layers), group in frame.groupby(["arm", "layers"], sort=False):
        row = {"arm": arm, "layers": layers}
        for rung in ("left bigram", "two-sided"):
            tokens = np.array([tokens_to(c, levels[rung]) for c in group["curve"]])
            reached = np.isfinite(tokens)
            row[f"reached {rung}"] = int(reached.sum())
            # censored runs count as never: the median is finite only if most reach it
            row[f"tokens to {rung}"] = (float(np.median(np.where(reached, tokens, np.inf)))
                                        if reached.sum() * 2 > len(tokens) else np.nan)
        stages = [stage(c[-1][CE], levels) for c in group["curve"]]
        row["stage"] = max(set(stages), key=stages.count)
        rows.append(row)
    return pd.DataFrame(rows)


TESTS = 2 * len(PRIMARY)  # a difference test and a TOST per decision


def power(sd: float, seeds: int, effect: float, tests: int = TESTS) -> float:
    """Power of a paired two-sided t-test at Holm's first level (ALPHA / ``tests``) to
    find ``effect`` nats with per-seed SD ``sd`` on ``seeds`` seeds."""
    from statsmodels.stats.power import TTestPower
    return float(TTestPower().power(effect_size=abs(effect) / sd, nobs=seeds,
                                    alpha=ALPHA / tests, alternative="two-sided"))


def detectable(sd: float, seeds: int, tests: int = TESTS,
               target: float = 0.8) -> float:
    """The smallest difference (nats) found with power ``target`` at Holm's first level."""
    from statsmodels.stats.power import TTestPower
    size = TTestPower().solve_power(nobs=seeds, alpha=ALPHA / tests, power=target,
                                    alternative="two-sided")
    return float(size * sd)


def main(argv=None) -> int:
    from .training import pilot_main
    return pilot_main(argv, __doc__, train,
                      lambda: [f"{arm} / {layers} layers / seed {seed:<6} "
                               f"{reached:>7,} of {steps:,}"
                               for arm, layers, seed, reached, steps in progress()],
                      "train and evaluate the study's runs (after the registration)",
                      "steps reached per run (no loss)")


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

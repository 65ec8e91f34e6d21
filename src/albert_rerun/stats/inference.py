"""Seeds to intervals, tests and verdicts; the book's decisions as one Holm family.

A **decision** is a difference, its 95% interval, a two-sided test of no difference and
a TOST of equivalence within a margin, by a paired t over seeds (``paired_t``) or a
bootstrap over seeds and items (``bootstrap``, accuracies on a fixed test set). Its
verdict (``verdict_of``), at 5% or after Holm over the family (``holm``): where the paper
predicts a direction, **equivalent** if the TOST rejects, else **reproduced** /
**contradicted** if the difference test rejects on the paper's / the other side, else
**inconclusive**; where it predicts none, **reproduced** if the TOST rejects,
**contradicted** if only the difference test does, else **inconclusive**.

The gate (``gate``) comes first: an arm's **level** is the share of the unigram-to-left-
bigram distance it has closed at [MASK]; a decision with an arm that does not read
context is **not testable at this scale** (outside Holm's family); a judged one is
**early training** while its weakest arm is below 100%.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

import numpy as np
from scipy import stats as _stats

from .cache import cached

ALPHA = 0.05
NOT_TESTABLE = "not testable at this scale"
VERDICTS = ("reproduced", "contradicted", "equivalent", "inconclusive", NOT_TESTABLE)
# the stages, in order; "no model": a check of the test sets, which no gate applies to
GATED, EARLY, PAST, NO_MODEL = ("not testable", "early training", "past the bigram rung",
                                "no model")


@dataclass(frozen=True)
class ArmLevel:
    """An arm's mean cross-entropy at [MASK], its level and whether it reads context."""

    arm: str
    ce: float
    level: float
    reads_context: bool


def arm_level(arm: str, ce: float, rungs: dict) -> ArmLevel:
    """``arm``'s ``ArmLevel``; ``rungs``: baselines.reference_levels' dict."""
    unigram = rungs["rungs"]["unigram_loss_at_mask"]
    return ArmLevel(arm, float(ce), float((unigram - ce) / rungs["distance"]),
                    bool(ce < rungs["reads_context"]))


def level_percent(level: float) -> str:
    """A level as a whole percentage, "0%" rather than "-0%" at the unigram rung."""
    return f"{100 * level:.0f}%".replace("-0%", "0%")


def gate(arms) -> dict:
    """The stage of a decision from its arms' levels (the rule in the module docstring):
    {"stage", "failed_arms", "weakest_arm", "weakest_level", "arm_levels", "gate_reason"}."""
    arms = list(arms)
    if not arms:
        return {"stage": NO_MODEL, "failed_arms": "", "weakest_arm": "",
                "weakest_level": float("nan"), "arm_levels": "", "gate_reason": ""}
    weakest = min(arms, key=lambda a: a.level)
    failed = [a.arm for a in arms if not a.reads_context]
    stage = GATED if failed else EARLY if weakest.level < 1.0 else PAST
    return {"stage": stage, "failed_arms": ", ".join(failed), "weakest_arm": weakest.arm,
            "weakest_level": weakest.level,
            "arm_levels": "; ".join(f"{a.arm}: {level_percent(a.level)}" for a in arms),
            "gate_reason": (f"{', '.join(failed)} {'does' if len(failed) == 1 else 'do'} "
                            f"not read context" if failed else "")}


def staged_verdict(verdict: str, stage: str, weakest_level: float,
                   reason: str = "") -> str:
    """A verdict with its stage, e.g. "equivalent, early training: weakest arm at 31%";
    a gated one with its reason ("ALBERT-style does not read context")."""
    if stage == GATED:
        return f"{NOT_TESTABLE} ({reason})" if reason else NOT_TESTABLE
    return {EARLY: f"{verdict}, early training: weakest arm at {level_percent(weakest_level)}",
            PAST: f"{verdict}, past the bigram rung",
            NO_MODEL: f"{verdict} at 5% (a check of the test sets, outside Holm's family)",
            }.get(stage, verdict)


@dataclass(frozen=True)
class Interval:
    mean: float
    low: float
    high: float
    n: int


def mean_interval(values, confidence: float = 0.95) -> Interval:
    """Mean and two-sided t-interval; one value gives an infinitely wide interval."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0 or not np.isfinite(x).all():
        # counts, not values: a blind study's message must not print its numbers
        raise ValueError(f"need a non-empty 1-d array of finite values, got shape "
                         f"{x.shape} with {int(np.isfinite(x).sum())} finite")
    mean = float(x.mean())
    if len(x) == 1:
        return Interval(mean, -np.inf, np.inf, 1)
    half = float(_stats.t.ppf(0.5 + confidence / 2, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
    return Interval(mean, mean - half, mean + half, len(x))


def summarize(frame, metric: str, by: str = "condition", scale: float = 1.0,
              confidence: float = 0.95):
    """Per-condition mean and t-interval of ``metric`` over seeds (rows of ``frame``),
    in the order the conditions first appear; ``scale`` = 100 gives percentages."""
    import pandas as pd
    rows = {name: asdict(mean_interval((group[metric] * scale).to_numpy(), confidence))
            for name, group in frame.groupby(by, sort=False)}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(by)


@dataclass(frozen=True)
class Decision:
    """One comparison of the book: what is compared, its numbers and its p-values."""

    key: str  # unique in the book, e.g. "asymmetry/attention-ffn/E=32"
    claim: str  # the chapter's claim, e.g. "asymmetry"
    label: str  # one line for tables
    estimate: float
    low: float
    high: float
    n_seeds: int
    p_difference: float  # two-sided, H0: no difference
    p_equivalence: float  # TOST, H0: |difference| >= margin
    margin: float
    paper_sign: int  # +1 / -1: the paper's direction of A - B; 0: the paper says none
    unit: str
    method: str  # "paired t over seeds" | "bootstrap over seeds and items"
    paper: str = ""  # the paper's figure, as text
    arms: tuple = ()  # the conditions whose models it compares (the gate reads them)
    train_flops: float = float("nan")  # of one run of its costlier arm
    stage: str = ""
    failed_arms: str = ""
    weakest_arm: str = ""
    weakest_level: float = float("nan")
    arm_levels: str = ""
    gate_reason: str = ""

    def verdict(self, p_difference: float | None = None,
                p_equivalence: float | None = None, alpha: float = ALPHA) -> str:
        if self.stage == GATED:
            return NOT_TESTABLE
        p_d = self.p_difference if p_difference is None else p_difference
        p_e = self.p_equivalence if p_equivalence is None else p_equivalence
        return verdict_of(self.estimate, p_d, p_e, self.paper_sign, alpha)

    def with_gate(self, levels, untestable: str = "") -> "Decision":
        """This decision with the stage of its arms' ``ArmLevel``s; ``untestable`` (a
        reason) gates it whatever their levels."""
        staged = gate(levels)
        if untestable:
            staged.update(stage=GATED, gate_reason=untestable)
        return replace(self, **staged)

    @property
    def judged(self) -> bool:
        return self.stage != GATED

    to_dict = asdict


def verdict_of(estimate: float, p_difference: float, p_equivalence: float, paper_sign: int,
               alpha: float = ALPHA) -> str:
    """The rule in this module's docstring."""
    if paper_sign not in (-1, 0, 1):
        raise ValueError("paper_sign must be -1, 0 or +1")
    equivalent, different = p_equivalence < alpha, p_difference < alpha
    if paper_sign == 0:
        return "reproduced" if equivalent else "contradicted" if different else "inconclusive"
    if equivalent:
        return "equivalent"
    if different:
        return "reproduced" if np.sign(estimate) == paper_sign else "contradicted"
    return "inconclusive"


def _numbers(estimate, low, high, n, p_difference, p_equivalence) -> dict:
    return {"estimate": float(estimate), "low": float(low), "high": float(high), "n": n,
            "p_difference": float(p_difference), "p_equivalence": float(p_equivalence)}


def paired_t(a, b=None, margin: float = 0.0, confidence: float = 0.95) -> dict:
    """Paired t statistics of a - b over seeds (b None: a against 0): mean, t-interval,
    two-sided p of no difference, TOST p of equivalence within ``margin``; zero spread
    gives p 0 or 1 as the sign dictates."""
    from statsmodels.stats.weightstats import DescrStatsW, ttost_paired
    a = np.asarray(a, dtype=float)
    b = np.zeros_like(a) if b is None else np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired values need equal 1-d shapes, got {a.shape}, {b.shape}")
    d = a - b
    mean, n = float(d.mean()), len(d)
    if n < 2:
        return _numbers(mean, -np.inf, np.inf, n, 1.0, 1.0)
    if np.ptp(d) == 0:  # no spread: the t statistics are infinite
        return _numbers(mean, mean, mean, n, 0.0 if mean != 0 else 1.0,
                        0.0 if abs(mean) < margin else 1.0)
    stats = DescrStatsW(d)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p_equivalence = ttost_paired(a, b, -margin, margin)[0] if margin > 0 else 1.0
    return _numbers(mean, *stats.tconfint_mean(alpha=1 - confidence), n,
                    stats.ttest_mean(0)[1], p_equivalence)


def correct_matrix(strings) -> np.ndarray:
    """Per-item correctness strings ('1'/'0', one per seed) as a (seeds, items) array."""
    rows = [np.frombuffer(s.encode(), dtype=np.uint8) - ord("0") for s in strings]
    if len({len(r) for r in rows}) != 1:
        raise ValueError("correctness strings of different lengths: not the same test set")
    return np.stack(rows).astype(float)


@cached
def _resampling_counts(seeds: int, items: int, resamples: int, seed: int) -> tuple:
    """How often each seed and each item is drawn in each resample: (S, R) and (N, R)
    counts as the smallest unsigned integers that hold them (seconds to draw: cached)."""
    rng = np.random.default_rng(seed)
    item_counts = rng.multinomial(items, np.full(items, 1 / items), size=resamples).T
    seed_counts = rng.multinomial(seeds, np.full(seeds, 1 / seeds), size=resamples).T
    return tuple(c.astype(np.min_scalar_type(int(c.max()))) for c in (seed_counts, item_counts))


@lru_cache(maxsize=16)
def _resampling_weights(seeds: int, items: int, resamples: int, seed: int) -> tuple:
    """The resampling counts as floats, once per process for the same shapes."""
    return tuple(c.astype(float) for c in _resampling_counts(seeds, items, resamples, seed))


def bootstrap(a, b=None, margin: float = 0.0, resamples: int = 10000, seed: int = 0,
              confidence: float = 0.95, offset: float = 0.0) -> dict:
    """Two-level paired bootstrap of mean(a) - mean(b) - offset over seeds and items:
    ``a``, ``b`` (seeds, items) arrays (b None: zero). The percentile interval, and the
    p-values at which it would just touch 0 or (TOST) the margin."""
    a = np.asarray(a, dtype=float)
    b = np.zeros_like(a) if b is None else np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"need paired (seeds, items) arrays, got {a.shape} and {b.shape}")
    d = a - b
    S, N = d.shape
    seed_weights, item_weights = _resampling_weights(S, N, resamples, seed)
    draws = ((d @ item_weights) * seed_weights).sum(0) / (S * N) - offset
    tail = (1 - confidence) / 2
    p_difference = min(1.0, 2 * min((draws <= 0).mean(), (draws >= 0).mean()))
    p_equivalence = (max((draws >= margin).mean(), (draws <= -margin).mean())
                     if margin > 0 else 1.0)
    return _numbers(d.mean() - offset, *np.quantile(draws, [tail, 1 - tail]), S,
                    max(p_difference, 1 / resamples), max(p_equivalence, 1 / resamples))


def decision(key: str, claim: str, label: str, numbers: dict, margin: float,
             paper_sign: int, unit: str, method: str, paper: str = "") -> Decision:
    """A ``Decision`` from ``paired_t``'s or ``bootstrap``'s numbers."""
    return Decision(key=key, claim=claim, label=label, estimate=numbers["estimate"],
                    low=numbers["low"], high=numbers["high"], n_seeds=numbers["n"],
                    p_difference=numbers["p_difference"],
                    p_equivalence=numbers["p_equivalence"], margin=margin,
                    paper_sign=paper_sign, unit=unit, method=method, paper=paper)


def holm(decisions, alpha: float = ALPHA):
    """Every decision's raw and Holm-adjusted p-values and verdicts, as one table; the
    family: the judged decisions about trained models, two tests each."""
    import pandas as pd
    from statsmodels.stats.multitest import multipletests
    decisions = list(decisions)
    keys = [d.key for d in decisions]
    if len(set(keys)) != len(keys):
        raise ValueError("decision keys must be unique in a family")
    if not decisions:
        return pd.DataFrame()
    judged = [d for d in decisions if d.judged and d.stage != NO_MODEL]
    adjusted = {}
    if judged:
        raw = np.array([[d.p_difference, d.p_equivalence] for d in judged]).ravel()
        fitted = multipletests(raw, alpha=alpha, method="holm")[1].reshape(-1, 2)
        adjusted = {d.key: (float(p_d), float(p_e)) for d, (p_d, p_e) in zip(judged, fitted)}
    rows = []
    for d in decisions:
        p_d, p_e = adjusted.get(d.key, (float("nan"), float("nan")))
        verdict_holm = (d.verdict(p_d, p_e, alpha) if d.key in adjusted else
                        d.verdict(alpha=alpha) if d.stage == NO_MODEL else NOT_TESTABLE)
        rows.append({**d.to_dict(), "p_difference_holm": p_d, "p_equivalence_holm": p_e,
                     "verdict": d.verdict(alpha=alpha), "verdict_holm": verdict_holm,
                     "in_family": d.key in adjusted,
                     "verdict_staged": staged_verdict(verdict_holm, d.stage,
                                                      d.weakest_level, d.gate_reason)})
    return pd.DataFrame(rows).set_index("key")

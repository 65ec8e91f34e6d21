"""How many seeds: the power of the book's paired comparisons, from stored runs.

For a comparison with paired standard deviation ``sd`` (over seeds) and margin ``m``:

- **equivalence power**: the chance that the TOST declares "equivalent within m" when
  the true difference is 0 (each one-sided test at ``alpha``; the pair's power is at
  least 1 - 2 (1 - one side's), the usual bound);
- **difference power**: the chance that the two-sided test rejects "no difference" when
  the true difference is 2 m, an effect clearly outside the margin.

Both come from statsmodels' ``TTestPower`` (a paired t-test is a one-sample t-test of
the differences). scipy's noncentral t, under it, returns NaN for large noncentrality at
few degrees of freedom; there the same tail probability is integrated directly, P(T > t)
= E over V ~ chi2(df) of P(Z > t sqrt(V / df) - nc) (the tests check the two agree where
both are defined).
"""
from __future__ import annotations

import math


def _power(effect_size: float, n: int, alpha: float, alternative: str) -> float:
    from statsmodels.stats.power import TTestPower
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = TTestPower().power(effect_size=effect_size, nobs=n, alpha=alpha,
                                   alternative=alternative)
    value = float(value)
    if math.isnan(value):  # noncentrality beyond scipy's nct
        value = _power_by_integration(effect_size, n, alpha, alternative)
    return value


def _noncentral_t_sf(t: float, df: int, nc: float) -> float:
    from scipy import integrate, stats
    return integrate.quad(lambda v: stats.norm.sf(t * math.sqrt(v / df) - nc)
                          * stats.chi2.pdf(v, df), 0, math.inf, limit=200)[0]


def _power_by_integration(effect_size: float, n: int, alpha: float, alternative: str) -> float:
    from scipy import stats
    df, nc = n - 1, effect_size * math.sqrt(n)
    if alternative == "larger":
        return _noncentral_t_sf(stats.t.ppf(1 - alpha, df), df, nc)
    t = stats.t.ppf(1 - alpha / 2, df)
    return _noncentral_t_sf(t, df, nc) + (1 - _noncentral_t_sf(-t, df, nc))


def equivalence_power(sd: float, margin: float, n: int, alpha: float) -> float:
    if n < 2:
        return 0.0
    one_side = _power(margin / sd, n, alpha, "larger")
    return max(0.0, 1 - 2 * (1 - one_side))


def difference_power(sd: float, margin: float, n: int, alpha: float) -> float:
    if n < 2:
        return 0.0
    return _power(2 * margin / sd, n, alpha, "two-sided")


def seeds_needed(sd: float, margin: float, alpha: float, target: float = 0.8,
                 most: int = 50) -> int | None:
    """The fewest seeds (>= 3) with both powers >= ``target``; None if more than ``most``."""
    for n in range(3, most + 1):
        if (equivalence_power(sd, margin, n, alpha) >= target
                and difference_power(sd, margin, n, alpha) >= target):
            return n
    return None


def power_table(comparisons: dict, margin: float, family_tests: int, seeds: int,
                target: float = 0.8):
    """One row per comparison (name: paired SD): seeds needed at the raw level and at
    Holm's strictest level (alpha / family_tests), and both powers at ``seeds``."""
    import pandas as pd
    rows = []
    strict = 0.05 / family_tests
    for name, sd in comparisons.items():
        rows.append({"comparison": name, "paired SD": sd,
                     "seeds needed (5%)": seeds_needed(sd, margin, 0.05, target),
                     "seeds needed (Holm's strictest)": seeds_needed(sd, margin, strict, target),
                     f"equivalence power at {seeds} (5%)": equivalence_power(sd, margin, seeds, 0.05),
                     f"difference power at {seeds} (5%)": difference_power(sd, margin, seeds, 0.05),
                     f"equivalence power at {seeds} (Holm's strictest)":
                         equivalence_power(sd, margin, seeds, strict)})
    return pd.DataFrame(rows).set_index("comparison")


# -- the archived runs of the previous cpu book ---------------------------------------------

ARCHIVE = "cpu-v1"  # data/results/cpu-v1: the 48 runs of the previous cpu book (engine v1)


def archived_runs(directory=None):
    """The previous cpu book's runs (one row per run): what varied, the seed and the
    cross-entropy at [MASK] on their held-out set (512 sequences of their own objective)."""
    import json

    import pandas as pd

    from ..paths import repo_root
    directory = directory or repo_root() / "data" / "results" / ARCHIVE
    rows = []
    for path in sorted(directory.glob("*.json")):
        run = json.loads(path.read_text())
        if "config" not in run or "metrics" not in run:
            continue
        c, m = run["config"], run["config"]["model"]
        rows.append({"sharing": m["sharing"], "E": m["embedding_size"], "H": m["hidden_size"],
                     "layers": m["num_hidden_layers"], "groups": m["num_hidden_groups"],
                     "dropout": m["hidden_dropout_prob"], "objective": c["objective"],
                     "steps": c["max_steps"], "seed": c["seed"],
                     "ce": run["metrics"]["mlm_loss_at_mask"]})
    return pd.DataFrame(rows)


def _select(frame, **values):
    part = frame
    for key, value in values.items():
        part = part[part[key] == value]
    return part.set_index("seed")["ce"]


def archived_paired_sds(frame) -> dict:
    """The paired standard deviation (over seeds) of the comparisons the previous cpu book
    made that the new one makes again on the same metric (cross-entropy at [MASK])."""
    base = dict(H=64, layers=4, objective="sop", dropout=0.0, steps=5400)
    cells = {name: _select(frame, **{**base, **spec}) for name, spec in {
        "all, E=32": dict(sharing="all", E=32, groups=1),
        "none, E=32": dict(sharing="none", E=32), "attention, E=32": dict(sharing="attention", E=32),
        "ffn, E=32": dict(sharing="ffn", E=32), "attention, E=64": dict(sharing="attention", E=64),
        "ffn, E=64": dict(sharing="ffn", E=64), "none, E=64": dict(sharing="none", E=64),
        "all, E=64": dict(sharing="all", E=64), "none, E=16": dict(sharing="none", E=16),
        "dropout": dict(sharing="all", E=32, groups=1, dropout=0.1),
        "G=2": dict(sharing="all", E=32, groups=2)}.items()}
    pairs = {"attention minus FFN, E = 32": ("attention, E=32", "ffn, E=32"),
             "attention minus FFN, E = 64": ("attention, E=64", "ffn, E=64"),
             "attention minus not shared, E = 32": ("attention, E=32", "none, E=32"),
             "no dropout minus dropout": ("all, E=32", "dropout"),
             "not shared, E = 64 minus E = 16": ("none, E=64", "none, E=16"),
             "all shared, E = 32 minus E = 64": ("all, E=32", "all, E=64"),
             "G = 2 minus G = 1": ("G=2", "all, E=32")}
    out = {}
    for name, (a, b) in pairs.items():
        d = (cells[a] - cells[b]).dropna()
        if len(d) >= 2:
            out[name] = float(d.std(ddof=1))
    return out


def power_sentence(table, seeds: int) -> str:
    """What ``seeds`` seeds buy, read off a power_table."""
    raw = table[f"equivalence power at {seeds} (5%)"]
    strict = table[f"equivalence power at {seeds} (Holm's strictest)"]
    needed = table["seeds needed (5%)"]
    return (f"At 5% each, {seeds} seeds give {int((raw >= 0.8).sum())} of these "
            f"{len(table)} comparisons at least an 80% chance of an equivalence call when "
            f"there is no difference (from {raw.min():.0%} to {raw.max():.0%}); at Holm's "
            f"strictest level {int((strict >= 0.8).sum())} of them. The median comparison "
            f"would need {int(needed.median())} seeds at 5%.")

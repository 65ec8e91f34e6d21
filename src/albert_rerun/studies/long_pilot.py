"""The long pilot: the decided sharing cost's two arms trained to 64 times the cpu
profile's steps, one seed each (exploratory; one seed gives no interval).

- ``configs``: all shared and not shared (BERT-style) at E = H = 64, the confirmatory
  recipe (``confirm_analysis.conditions``) on a schedule of ``STEPS`` (warm-up scaled with
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

import numpy as np
import pandas as pd

from ..engine.store import results_dir
from . import confirm, confirm_analysis

STORE = "long-pilot"  # data/results/long-pilot/
BASE_STEPS = 5400  # the cpu profile's steps: the ladder's 1x rung
MULTIPLE = 64
STEPS = MULTIPLE * BASE_STEPS  # 345,600 steps, 336M tokens a run (as trained)
CURVE_EVERY = 1800  # 192 curve points
CURVE_EXAMPLES = 1024  # of the common held-out set's 4,096 sequences
SEED = 6400
ARMS = (confirm_analysis.ALL64, confirm_analysis.BERT)


def configs() -> dict:
    """{arm: seeded config}: the two arms at ``STEPS``, the confirmatory recipe."""
    base = confirm_analysis.conditions(None)
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
    return confirm.stretch(list(configs().values()), STORE, "long-pilot", hours, fill,
                           workers, device)


def progress(store=None) -> list:
    """[(arm, step reached, steps)]: how far each arm has trained (a checkpoint's step,
    or every step once stored); no loss."""
    from .training import steps_reached
    store = store or results_dir(STORE)
    return [(arm, steps_reached(c, store), c.max_steps) for arm, c in configs().items()]


# -- what the pilot shows, once both arms are stored -------------------------------------------
#
# The rules below were written on 2026-12-05 while both arms were still training (at
# about 70% of their steps) and before any of their losses had been looked at. The log
# stays blinded; ``progress`` reads steps only.

CE = "mlm_loss_at_mask"  # a curve point's held-out cross-entropy at [MASK]
MARKS = {"1x": 5400, "4x": 21600, "16x": 86400, "64x": STEPS}  # the ladder's lengths
# A sudden drop (``sudden_drops``): over one curve interval the loss reaches a new low at
# least DROP_NATS below every earlier point (so a spike and its recovery is none), and
# that fall is at least DROP_RATIO times the median fall of the DROP_WINDOW intervals
# before it (so a curve whose falls shrink steadily, however fast, has none). The first
# DROP_WINDOW intervals cannot be judged: a blind zone of DROP_WINDOW * CURVE_EVERY steps.
DROP_NATS = 0.05
DROP_RATIO = 3.0
DROP_WINDOW = 5
WARMUP_STEPS = max(2, STEPS // 20)  # a drop before this is marked "during warm-up"


def frame(store=None) -> pd.DataFrame:
    """One row per arm: pretraining figures, the curve and both evaluations on the
    common held-out set (``confirm_analysis.load``); NotComplete until both arms are
    stored with their evaluations: nothing is read before."""
    from . import confirm_analysis
    return confirm_analysis.load(store or results_dir(STORE), configs(), (SEED,))


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """Each arm's held-out curve in long form: arm, step, tokens, ce (nats at [MASK] on
    the curve's ``CURVE_EXAMPLES`` held-out sequences, a subset of the evaluation's)."""
    rows = [{"arm": r["condition"], "step": p["step"], "tokens": p["tokens"], "ce": p[CE]}
            for _, r in runs.iterrows() for p in r["curve"]]
    out = pd.DataFrame(rows)
    order = {arm: i for i, arm in enumerate(ARMS)}  # the arms in the design's order
    return out.sort_values(["arm", "step"], key=lambda c: c.map(order) if c.name == "arm"
                           else c).reset_index(drop=True)


def crossings(curve: pd.DataFrame, rungs: dict) -> pd.DataFrame:
    """Where each arm first scores below each rung (a rung's held-out cross-entropy at
    [MASK], {name: nats}): the step and tokens of the first curve point under it, or NaN
    where the curve never passes it."""
    rows = []
    for arm, part in curve.groupby("arm", sort=False):
        for name, level in rungs.items():
            below = part[part["ce"] < level]
            first = below.iloc[0] if len(below) else None
            rows.append({"arm": arm, "rung": name, "rung nats": level,
                         "step": np.nan if first is None else int(first["step"]),
                         "tokens": np.nan if first is None else int(first["tokens"])})
    return pd.DataFrame(rows)


def sudden_drops(curve: pd.DataFrame, nats: float = DROP_NATS, ratio: float = DROP_RATIO,
                 window: int = DROP_WINDOW) -> pd.DataFrame:
    """Every curve point where an arm's loss drops suddenly (the rule above ``frame``):
    one row per such point, with its step and tokens (the drop happened within the
    interval that ends there), the fall below the earlier low, that fall over the
    median fall of the ``window`` intervals before it, and whether it came during the
    warm-up; empty where there is none."""
    rows = []
    for arm, part in curve.groupby("arm", sort=False):
        ce = part["ce"].to_numpy(dtype=float)
        falls = ce[:-1] - ce[1:]  # falls[i]: from point i to point i + 1
        low = np.minimum.accumulate(ce)  # low[i]: the lowest of points 0..i
        for i in range(window, len(falls)):
            below = low[i] - ce[i + 1]  # how far point i + 1 is under every earlier one
            before = float(np.median(falls[i - window:i]))
            if below >= nats and below >= ratio * max(before, 1e-12):
                point = part.iloc[i + 1]
                rows.append({"arm": arm, "step": int(point["step"]),
                             "tokens": int(point["tokens"]), "fall": float(below),
                             "ratio": float(below / before) if before > 0 else np.inf,
                             "warm-up": bool(point["step"] <= WARMUP_STEPS)})
    return pd.DataFrame(rows, columns=["arm", "step", "tokens", "fall", "ratio", "warm-up"])


def cost_along(curve: pd.DataFrame, a: str = confirm_analysis.ALL64,
               b: str = confirm_analysis.BERT) -> pd.DataFrame:
    """The sharing cost along training: a's minus b's curve cross-entropy at every
    point both have (points of one 64x schedule: before its end, the learning rate has
    not decayed, so a point at 1x's steps is not what a 1x run gives)."""
    wide = curve.pivot(index="step", columns="arm", values="ce").dropna(subset=[a, b])
    tokens = curve.drop_duplicates("step").set_index("step")["tokens"]
    out = pd.DataFrame({"tokens": tokens.reindex(wide.index), "cost": wide[a] - wide[b]})
    return out.reset_index()


def main(argv=None) -> int:
    from .training import pilot_main
    return pilot_main(argv, __doc__, train,
                      lambda: [f"{arm}: step {reached:,} of {steps:,}"
                               for arm, reached, steps in progress()],
                      "train or resume both arms, then evaluate them",
                      "the step each arm has reached (no loss)")


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

"""The long pilot (exploratory): the sharing cost's two arms at 64 times the cpu
profile's steps, one seed each, with a held-out curve point every ``CURVE_EVERY`` steps
(where each passes the count rungs, whether its loss drops suddenly). Training:
``scripts/train_stretch.sh long-pilot H``, from a clean checkout."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..engine.store import results_dir
from . import confirm, confirm_analysis
from .training import pilot_main, steps_reached

STORE = "long-pilot"  # data/results/long-pilot/
BASE_STEPS = 5400  # the cpu profile's steps: the ladder's 1x rung
MULTIPLE = 64
STEPS = MULTIPLE * BASE_STEPS  # 345,600 steps, 336M tokens a run (as trained)
CURVE_EVERY = 1800  # 192 curve points
CURVE_EXAMPLES = 1024  # of the common held-out set's 4,096 sequences
SEED = 6400
WARMUP_STEPS = max(2, STEPS // 20)  # a drop before this is marked "during warm-up"
ARMS = (confirm_analysis.ALL64, confirm_analysis.BERT)


def configs() -> dict:
    """{arm: seeded config}: the two arms at ``STEPS``, the confirmatory recipe."""
    base = confirm_analysis.conditions(None)
    return {arm: base[arm].replace(max_steps=STEPS, warmup_steps=WARMUP_STEPS,
                                   curve_every=CURVE_EVERY, curve_examples=CURVE_EXAMPLES,
                                   seed=SEED) for arm in ARMS}


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train (or resume) both arms, then evaluate them as the confirmatory runs are."""
    return confirm.stretch(list(configs().values()), STORE, "long-pilot", hours, fill,
                           workers, device)


def progress(store=None) -> list:
    """[(arm, step reached, steps)]: how far each arm has trained; no loss."""
    store = store or results_dir(STORE)
    return [(arm, steps_reached(c, store), c.max_steps) for arm, c in configs().items()]


# what the pilot shows, once both arms are stored (rules fixed before any loss was seen)
CE = "mlm_loss_at_mask"  # a curve point's held-out cross-entropy at [MASK]
MARKS = {"1x": 5400, "4x": 21600, "16x": 86400, "64x": STEPS}  # the ladder's lengths
# a sudden drop: a new low at least DROP_NATS under every earlier point, and at least
# DROP_RATIO times the median fall of the DROP_WINDOW intervals before it
DROP_NATS = 0.05
DROP_RATIO = 3.0
DROP_WINDOW = 5


def frame(store=None) -> pd.DataFrame:
    """One row per arm; NotComplete until both arms are stored and evaluated."""
    return confirm_analysis.load(store or results_dir(STORE), configs(), (SEED,))


def curves(runs: pd.DataFrame) -> pd.DataFrame:
    """Each arm's held-out curve in long form (ARMS' order): arm, step, tokens, ce."""
    rows = [{"arm": r["condition"], "step": p["step"], "tokens": p["tokens"], "ce": p[CE]}
            for _, r in runs.iterrows() for p in r["curve"]]
    order = {arm: i for i, arm in enumerate(ARMS)}
    return pd.DataFrame(rows).sort_values(
        ["arm", "step"], key=lambda c: c.map(order) if c.name == "arm" else c
    ).reset_index(drop=True)


def crossings(curve: pd.DataFrame, rungs: dict) -> pd.DataFrame:
    """Per arm and rung ({name: nats}): the step and tokens of its first point below it."""
    rows = []
    for arm, part in curve.groupby("arm", sort=False):
        for name, level in rungs.items():
            first = part[part["ce"] < level].head(1)
            rows.append({"arm": arm, "rung": name, "rung nats": level,
                         **{c: int(first[c].iloc[0]) if len(first) else np.nan
                            for c in ("step", "tokens")}})
    return pd.DataFrame(rows)


def sudden_drops(curve: pd.DataFrame, nats: float = DROP_NATS, ratio: float = DROP_RATIO,
                 window: int = DROP_WINDOW) -> pd.DataFrame:
    """Every point where an arm's loss drops suddenly (the rule above): step, tokens, fall
    below the earlier low, its ratio to the median fall before, during warm-up or not."""
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
    """The sharing cost along training: a's minus b's curve at every point both have."""
    wide = curve.pivot(index="step", columns="arm", values="ce").dropna(subset=[a, b])
    tokens = curve.drop_duplicates("step").set_index("step")["tokens"]
    out = pd.DataFrame({"tokens": tokens.reindex(wide.index), "cost": wide[a] - wide[b]})
    return out.reset_index()


def main(argv=None) -> int:
    return pilot_main(argv, __doc__, train,
                      lambda: [f"{arm}: step {reached:,} of {steps:,}"
                               for arm, reached, steps in progress()],
                      "train or resume both arms, then evaluate them",
                      "the step each arm has reached (no loss)")


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

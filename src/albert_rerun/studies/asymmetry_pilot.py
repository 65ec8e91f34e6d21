"""The asymmetry study's pilot (exploratory, unregistered): what the third registration
is sized from.

- common random numbers (``CRN``): the ladder's 1x attention-shared and FFN-shared runs
  again with ``init_draw="common"``, the SD of their paired difference read both ways;
- depth: the asymmetry's two arms at 12 layers on the 4x schedule, one seed: whether a
  12-layer stack leaves the plateau, and what it costs;
- parameters held apart (``WIDENED``): the FFN-shared arm with its one FFN widened to
  the attention-shared arm's parameter count, at 4 layers.

Each 4x run scores ``CURVE_EXAMPLES`` held-out sequences at ``CURVE_POINTS`` points, so
the count rungs can be scored on the same sequences. Training:
``scripts/train_stretch.sh asymmetry-pilot H`` (from a clean checkout, blinded).
"""
from __future__ import annotations

from ..engine.store import results_dir
from ..model.params import closed_form
from . import confirm, confirm_analysis as D
from . import ladder

STORE = "asymmetry-pilot"  # data/results/asymmetry-pilot/
STEPS = 21600  # the confirmatory (4x) schedule
CURVE_POINTS = 16
CURVE_EXAMPLES = 1024  # of the common held-out set's 4,096 sequences
DEEP_LAYERS = 12
CRN_SEEDS = ladder.SEEDS["1x"]  # paired with the ladder's stored 1x runs
DEEP_SEED = 5400  # no other study uses it (tests check)
PAIR = (D.ATTENTION, D.FFN)  # the asymmetry's two arms
FOUR = (D.NONE32, D.ATTENTION, D.FFN, D.ALBERT)  # the 2x2: not shared ... all shared
WIDENED = "FFN-shared, widened"


def widened_ffn(layers: int, hidden: int = 64) -> int:
    """The width of one shared FFN that gives the FFN-shared model the attention-shared
    model's weight matrices: 4H + (L - 1) 2H (640 at 4 layers, 1,664 at 12; biases and
    LayerNorms leave the counts within 0.2%)."""
    return 4 * hidden + (layers - 1) * 2 * hidden


def arm_config(arm: str, layers: int, seed: int = DEEP_SEED):
    """One arm of the 2x2 (or ``WIDENED``) at ``layers``, H 64, E 32, on the
    confirmatory recipe and schedule, common draw, with a held-out curve."""
    config = D.conditions(None)[D.FFN if arm == WIDENED else arm]
    model = {"num_hidden_layers": layers, "init_draw": "common"}
    if arm == WIDENED:
        model["intermediate_size"] = widened_ffn(layers, config.model.hidden_size)
    return config.replace_model(**model).replace(
        curve_every=config.max_steps // CURVE_POINTS, curve_examples=CURVE_EXAMPLES,
        seed=seed)


def crn_configs() -> dict:
    """{(arm, seed): config}: the ladder's 1x runs of the asymmetry's arms, common draw."""
    configs = ladder.configs("1x")
    return {(arm, seed): configs[arm].replace(seed=seed).replace_model(init_draw="common")
            for seed in CRN_SEEDS for arm in PAIR}


def deep_configs() -> dict:
    """{(arm, layers): config}: the asymmetry's pair at 12 layers, then the widened arm at
    4 layers with its partner, attention-shared."""
    out = {(arm, DEEP_LAYERS): arm_config(arm, DEEP_LAYERS) for arm in PAIR}
    out.update({(arm, 4): arm_config(arm, 4) for arm in (D.ATTENTION, WIDENED)})
    return out


def planned() -> list:
    """Every pilot run, in training order."""
    return list(crn_configs().values()) + list(deep_configs().values())


def parameters() -> dict:
    """{(arm, layers): parameter count} of the deep configs and their 4-layer twins."""
    out = {}
    for layers in (4, DEEP_LAYERS):
        for arm in FOUR + (WIDENED,):
            out[(arm, layers)] = sum(closed_form(arm_config(arm, layers).model).values())
    return out


def progress(store=None) -> list:
    """[(label, step reached, steps)] of every pilot run; no loss."""
    from .training import steps_reached
    store = store or results_dir(STORE)
    return [(f"{key[0]} / {key[1]}", steps_reached(c, store), c.max_steps)
            for key, c in list(crn_configs().items()) + list(deep_configs().items())]


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train (or resume) the pilot's runs in order, then evaluate the finished ones on
    the common held-out set."""
    return confirm.stretch(planned(), STORE, "asymmetry-pilot", hours, fill, workers,
                           device, cue_free=False)


# -- what the pilot measured (each part read only once all of its runs are stored) -------

class NotStored(LookupError):
    """A part of the pilot is not stored in full: nothing of it is read before."""


def _row(store, config) -> dict | None:
    """A stored run's held-out cross-entropy at [MASK], curve and speed; None until it
    is trained and evaluated."""
    from ..engine.store import stored_pretrain
    from .confirm_analysis import _evaluation_configs
    from .decisions import _evaluations, _machine
    run = stored_pretrain(store, config)
    if run is None:
        return None
    metrics = _evaluations(store, run["hash"], _evaluation_configs()[:1])
    if D.CE not in metrics:
        return None
    return {"ce": metrics[D.CE], "curve": run["curve"], "steps": run["metrics"]["steps"],
            "tokens": run["metrics"]["tokens"], "seconds": run["metrics"]["train_seconds"],
            "tokens_per_second": run["metrics"]["tokens_per_second"],
            "machine": _machine(run), "hash": run["hash"]}


def crn_differences(store=None, ladder_store=None) -> "pd.DataFrame":
    """Per seed of ``CRN_SEEDS``: FFN-shared minus attention-shared cross-entropy at
    [MASK] (nats) with the plain draw (the ladder's 1x runs) and the common draw."""
    import pandas as pd
    pilot = store or results_dir(STORE)
    plain = ladder.rung_frame("1x", ladder_store)
    plain = plain.set_index(["condition", "seed"])[D.CE]
    rows = []
    for seed in CRN_SEEDS:
        common = {arm: _row(pilot, crn_configs()[(arm, seed)]) for arm in PAIR}
        if any(v is None for v in common.values()):
            raise NotStored(f"the common-draw runs of seed {seed} are not all stored")
        rows.append({"seed": seed,
                     "plain": plain[(D.FFN, seed)] - plain[(D.ATTENTION, seed)],
                     "common": common[D.FFN]["ce"] - common[D.ATTENTION]["ce"]})
    return pd.DataFrame(rows).set_index("seed")


def crn_summary(table) -> dict:
    """The paired difference's SD with each draw, their ratio with an approximate 95%
    interval (the F distribution's: the two sets of seeds are not independent) and the
    seeds' correlation."""
    from scipy import stats
    n = len(table)
    sd_plain, sd_common = table["plain"].std(ddof=1), table["common"].std(ddof=1)
    ratio = (sd_common / sd_plain) ** 2
    low, high = (ratio / stats.f.ppf(q, n - 1, n - 1) for q in (0.975, 0.025))
    return {"seeds": n, "sd plain": sd_plain, "sd common": sd_common,
            "sd ratio": sd_common / sd_plain, "sd ratio low": low ** 0.5,
            "sd ratio high": high ** 0.5,
            "mean plain": table["plain"].mean(), "mean common": table["common"].mean(),
            "correlation": table["plain"].corr(table["common"])}


def tokens_to(curve: list, level: float) -> float:
    """Tokens trained at the first curve point under ``level`` (nats); NaN if none."""
    for point in curve:
        if point[D.CE] < level:
            return float(point["tokens"])
    return float("nan")


STAGES = ("on the plateau", "past left-bigram", "past two-sided")


def stage(curve_end: float, levels: dict) -> str:
    """Where a curve ends against the count rungs on its sequences (``STAGES``)."""
    if curve_end < levels["two-sided"]:
        return STAGES[2]
    return STAGES[1] if curve_end < levels["left bigram"] else STAGES[0]


def curve_levels() -> dict:
    """The count rungs on the curves' own held-out sequences."""
    from .count_rungs import levels_on
    return levels_on(_evaluation_config(), CURVE_EXAMPLES)


def _evaluation_config():
    from .confirm_analysis import _evaluation_configs
    return _evaluation_configs()[0]


def main(argv=None) -> int:
    from .training import pilot_main
    return pilot_main(argv, __doc__, train,
                      lambda: [f"{label:45s} {reached:>7,} of {steps:,}"
                               for label, reached, steps in progress()],
                      "train and evaluate the pilot", "steps reached per run (no loss)")


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

"""The asymmetry study (registered on ``PAGE`` before any of its runs): which half of a
block can be shared, at two depths, with the parameter count held apart.

The three primary decisions (``PRIMARY``), paired by seed and Holm-adjusted as one
family, are differences of held-out cross-entropy at [MASK] at the end of training,
positive in the paper's direction (sharing the FFN costs more than sharing attention).
Arms share their common blocks' initial draw, data order and masks. Nothing is read
before the study ends (``NotStored``); the training log is blind.
Training: ``scripts/train_stretch.sh asymmetry H``, from a clean checkout.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from ..engine.store import results_dir
from . import asymmetry_pilot as pilot
from . import registration as R

STORE = "asymmetry"  # data/results/asymmetry/
PAGE = "book/asymmetry_registration.md"
RECORD = "data/asymmetry-registration.json"  # {"commit", "date", "sha256", "page"}
SHALLOW, DEEP = 4, pilot.DEEP_LAYERS
STEPS = pilot.STEPS  # the confirmatory (4x) schedule
ATTENTION, FFN = pilot.PAIR
NONE, ALBERT = pilot.FOUR[0], pilot.FOUR[3]
WIDENED = pilot.WIDENED
SEEDS = {SHALLOW: tuple(range(5500, 5516)), DEEP: tuple(range(5600, 5608))}
ARMS = {SHALLOW: (ATTENTION, FFN, WIDENED), DEEP: (ATTENTION, FFN)}
# the deep not-shared and all-shared arms: for the figure of each sharing's cost only
FIGURE_ARMS, FIGURE_SEEDS = (NONE, ALBERT), 3
ALPHA = 0.05
CAP_HOURS = 45.0  # thread-hours of training at the engine's speed, the pilot's included
END_DATE = "2027-02-28"  # the study ends then at the latest, with the whole seeds stored
RUNGS = ("half way", "left bigram", "two-sided")  # the levels tokens are counted to
# (decision, layers, arm, minus arm): positive = the paper's direction
PRIMARY = (("sign at 4 layers", SHALLOW, FFN, ATTENTION),
           ("sign at depth", DEEP, FFN, ATTENTION),
           ("parameters held apart", SHALLOW, WIDENED, ATTENTION))
TESTS = 2 * len(PRIMARY)  # a difference test and a TOST per decision
CE = "mlm_loss_at_mask"


class NotStored(LookupError):
    """Some run of the study is not stored and evaluated: nothing is read before."""


def arms(layers: int, seed: int) -> tuple:
    """The arms trained at ``layers`` for ``seed``: the decisions' arms, and at depth the
    figure's arms for its first ``FIGURE_SEEDS`` seeds."""
    extra = FIGURE_ARMS if layers == DEEP and seed in SEEDS[DEEP][:FIGURE_SEEDS] else ()
    return ARMS[layers] + extra


def configs() -> dict:
    """{(arm, layers, seed): config} of every run: the pilot's arms on fresh seeds."""
    return {(arm, layers, seed): pilot.arm_config(arm, layers, seed)
            for layers in (SHALLOW, DEEP) for seed in SEEDS[layers]
            for arm in arms(layers, seed)}


def planned() -> list:
    """Every run in training order, seed by seed: the 4-layer arms of the k-th seed, then
    the deep arms of the k-th seed, so that a stopped study has whole seeds."""
    out, table = [], configs()
    for k in range(max(len(s) for s in SEEDS.values())):
        for layers in (SHALLOW, DEEP):
            if k < len(SEEDS[layers]):
                seed = SEEDS[layers][k]
                out += [table[(arm, layers, seed)] for arm in arms(layers, seed)]
    return out


def flops_per_token(config) -> float:
    """Floating-point operations of one training step's forward and backward pass, per
    token (torch's ``FlopCounterMode`` on one batch of ``config``'s shape)."""
    import json
    return _flops(json.dumps(config.model.to_dict(), sort_keys=True), config.batch_size,
                  config.max_seq_length, config.max_predictions)


@functools.lru_cache(maxsize=None)
def _flops(model_json: str, batch: int, length: int, predictions: int) -> float:
    import json

    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from ..model.config import ModelConfig
    from ..model.modeling import AlbertForPreTraining
    torch.manual_seed(0)
    model = AlbertForPreTraining(ModelConfig.from_dict(json.loads(model_json)))
    ids = torch.randint(5, model.config.vocab_size, (batch, length))
    positions = torch.arange(predictions).expand(batch, -1)
    with FlopCounterMode(display=False) as counter:
        out = model(input_ids=ids, mlm_positions=positions,
                    mlm_labels=ids.gather(1, positions),
                    sentence_labels=torch.zeros(batch, dtype=torch.long))
        out.loss.backward()
    return counter.get_total_flops() / (batch * length)


def thread_hours(configs, reference_config, reference_speed: float) -> float:
    """Thread-hours to train ``configs``: ``reference_speed`` tokens a second on one thread
    for ``reference_config``, scaled by each config's arithmetic a token."""
    base = flops_per_token(reference_config)
    return sum(c.max_steps * c.batch_size * c.max_seq_length * flops_per_token(c) / base
               for c in configs) / reference_speed / 3600


# -- registration -------------------------------------------------------------------

def registration() -> dict | None:
    """The committed registration record, or None before it."""
    return R.record(RECORD)


def registration_problem() -> str:
    """Why this checkout may not train the study's runs ("" if it may)."""
    return R.problem(registration(), RECORD, PAGE)


def provenance_problems(runs, record: dict | None = None) -> list:
    """Each stored run that was not trained from a clean commit descending from the
    registration with its training code; as text (none: [])."""
    return R.provenance_problems(runs, record or registration())


def train(hours: float | None = None, fill: bool = False, workers: int | None = None,
          device: str = "auto") -> int:
    """Train (or resume) the study's runs in order, then evaluate the finished ones on the
    common held-out set; refused before the registration."""
    from . import confirm
    problem = registration_problem()
    if problem:
        raise NotStored(f"no study run trains before the registration: {problem}")
    return confirm.stretch(planned(), STORE, "asymmetry", hours, fill, workers, device,
                           cue_free=False)


def progress(store=None) -> list:
    """[(arm, layers, seed, step reached, steps)]: no loss."""
    from .training import steps_reached
    store = store or results_dir(STORE)
    return [(arm, layers, seed, steps_reached(c, store), c.max_steps)
            for (arm, layers, seed), c in configs().items()]


# -- the analysis (only once the study has ended) ---------------------------------------

def ended(today: str | None = None) -> bool:
    """Whether ``END_DATE`` has come (``today``: an ISO date, by default the UTC date)."""
    import datetime
    today = today or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    return today >= END_DATE


def runs(store=None, today: str | None = None) -> pd.DataFrame:
    """One row per stored run: arm, layers, seed, parameters, held-out cross-entropy at
    [MASK] at the end, curve, tokens, tokens a second. NotStored until every planned run
    is evaluated or ``END_DATE`` has come (then a run not stored is left out)."""
    store = store or results_dir(STORE)
    counts = pilot.parameters()
    rows = []
    for (arm, layers, seed), config in configs().items():
        row = pilot._row(store, config)
        if row is None:
            if ended(today):
                continue
            raise NotStored(f"{arm} / {layers} layers / seed {seed} is not stored")
        rows.append({"arm": arm, "layers": layers, "seed": seed,
                     "parameters": counts[(arm, layers)], "ce": row["ce"],
                     "curve": row["curve"], "tokens": row["tokens"],
                     "tokens/s": row["tokens_per_second"], "hash": row["hash"]})
    if not rows:
        raise NotStored("no run of the study is stored")
    return pd.DataFrame(rows)


def paired(frame: pd.DataFrame, layers: int, arm: str, other: str) -> pd.Series:
    """Per seed: ``arm`` minus ``other`` cross-entropy at ``layers``; a seed where either
    run diverged is left out (the registered rule)."""
    table = frame[frame["layers"] == layers].pivot(index="seed", columns="arm", values="ce")
    return (table[arm] - table[other]).replace([np.inf, -np.inf], np.nan).dropna()


def decisions(frame: pd.DataFrame, levels: dict) -> pd.DataFrame:
    """The registered family: per primary decision, the seeds, mean difference, its 95%
    t-interval, the paired t's p and the TOST's within ``margin_of``; the gate (each
    arm's mean under ``levels["reads_context"]``); Holm over the tests of the decisions
    that pass it; the verdict (``verdict``)."""
    from statsmodels.stats.multitest import multipletests
    from statsmodels.stats.weightstats import DescrStatsW, ttost_paired
    margin = margin_of(levels)
    rows = []
    for name, layers, arm, other in PRIMARY:
        d = paired(frame, layers, arm, other)
        stats_ = DescrStatsW(d.to_numpy())
        low, high = stats_.tconfint_mean(alpha=ALPHA)
        pair = frame[frame["layers"] == layers].pivot(index="seed", columns="arm",
                                                      values="ce").loc[d.index]
        p_eq = ttost_paired(pair[arm].to_numpy(), pair[other].to_numpy(), -margin,
                            margin)[0]
        means = pair[[arm, other]].mean()
        rows.append({"decision": name, "layers": layers, "seeds": len(d),
                     "estimate": d.mean(), "low": low, "high": high, "sd": d.std(ddof=1),
                     "p": stats_.ttest_mean(0.0)[1], "p equivalence": p_eq,
                     "reads context": bool((means < levels["reads_context"]).all())})
    out = pd.DataFrame(rows)
    judged = out["reads context"].to_numpy()
    tests = np.concatenate([out["p"], out["p equivalence"]])
    keep = np.concatenate([judged, judged])
    adjusted = np.full(len(tests), np.nan)
    if keep.any():
        adjusted[keep] = multipletests(tests[keep], alpha=ALPHA, method="holm")[1]
    out["p holm"], out["p equivalence holm"] = adjusted[:len(out)], adjusted[len(out):]
    out["verdict"] = [verdict(r) for r in out.to_dict("records")]
    return out


def margin_of(levels: dict) -> float:
    """The "small" margin: a fiftieth of the unigram-to-left-bigram distance (nats)."""
    return 0.02 * levels["distance"]


def verdict(row: dict) -> str:
    """The first registration's rule at 5% after Holm: "equivalent" (with the side where
    the difference test rejects too), else "reproduced" or "contradicted", else
    "inconclusive"; "not testable" if an arm does not read context."""
    if not row["reads context"]:
        return "not testable"
    side = "reproduced" if row["estimate"] > 0 else "contradicted"
    if row["p equivalence holm"] < ALPHA:
        return f"equivalent ({side})" if row["p holm"] < ALPHA else "equivalent"
    if row["p holm"] < ALPHA:
        return side
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


def contrasts(frame: pd.DataFrame) -> pd.DataFrame:
    """The secondary paired differences (nats, 95% t-interval): at depth, each sharing
    minus not shared; at 4 layers, widened minus FFN-shared."""
    from statsmodels.stats.weightstats import DescrStatsW
    pairs = [(DEEP, arm, NONE) for arm in (ATTENTION, FFN, ALBERT)] + \
        [(SHALLOW, WIDENED, FFN)]
    rows = []
    for layers, arm, other in pairs:
        d = paired(frame, layers, arm, other).to_numpy()
        low, high = DescrStatsW(d).tconfint_mean(alpha=ALPHA)
        rows.append({"layers": layers, "arm": arm, "minus": other, "seeds": len(d),
                     "estimate": d.mean(), "low": low, "high": high})
    return pd.DataFrame(rows)


def tokens_to(curve: list, level: float) -> float:
    """Tokens trained at the first curve point under ``level`` (nats); inf if none."""
    found = pilot.tokens_to(curve, level)
    return math.inf if math.isnan(found) else found


STAGES, stage = pilot.STAGES, pilot.stage


def with_half_way(levels: dict) -> dict:
    """``levels`` and "half way" between the unigram and left-bigram rungs."""
    return {**levels, "half way": (levels["unigram"] + levels["left bigram"]) / 2}


def rung_tokens(frame: pd.DataFrame, levels: dict) -> pd.DataFrame:
    """Per arm and depth: the median tokens to each of ``RUNGS`` over its seeds (a run
    that never reaches one counts as infinite), the seeds that reach each, and how many
    seeds end in each stage."""
    rows, levels = [], with_half_way(levels)
    for (arm, layers), group in frame.groupby(["arm", "layers"], sort=False):
        row = {"arm": arm, "layers": layers, "seeds": len(group)}
        for rung in RUNGS:
            tokens = np.array([tokens_to(c, levels[rung]) for c in group["curve"]])
            row[f"reached {rung}"] = int(np.isfinite(tokens).sum())
            row[f"tokens to {rung}"] = float(np.median(tokens))
        ends = [stage(c[-1][CE], levels) for c in group["curve"]]
        row.update({name: ends.count(name) for name in STAGES})
        rows.append(row)
    return pd.DataFrame(rows)


def first_to_rung(frame: pd.DataFrame, levels: dict, rung: str) -> pd.DataFrame:
    """Per primary decision: in how many seeds the first arm reaches ``rung`` later than
    the second, earlier, at the same point, or neither does (never counts as latest)."""
    rows, levels = [], with_half_way(levels)
    for name, layers, arm, other in PRIMARY:
        table = frame[frame["layers"] == layers].pivot(index="seed", columns="arm",
                                                       values="curve")
        a = np.array([tokens_to(c, levels[rung]) for c in table[arm]])
        b = np.array([tokens_to(c, levels[rung]) for c in table[other]])
        never = ~np.isfinite(a) & ~np.isfinite(b)
        rows.append({"decision": name, "rung": rung, "later": int(((a > b) & ~never).sum()),
                     "earlier": int((a < b).sum()), "same": int(((a == b) & ~never).sum()),
                     "neither": int(never.sum())})
    return pd.DataFrame(rows)


def power(sd: float, seeds: int, effect: float, tests: int = TESTS) -> float:
    """Power of a paired two-sided t at Holm's first level to find ``effect`` nats."""
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

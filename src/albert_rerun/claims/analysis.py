"""Each claim's analysis: stored runs in, tables, decisions and sentences out.

A chapter calls one function here (``asymmetry``, ``sop_nsp``, ``dropout``,
``wall_clock``, ``transitions``, ``embedding_sweep``); each returns a ``Chapter``: the
runs it read, display tables, its decisions (``stats.Decision``) and the sentences the
page glues. ``book_decisions`` gathers every chapter's decisions, the family that the
ledger adjusts with Holm. The functions that compute a decision from a frame of runs
(``ce_decision``, ``accuracy_decision``, ``trend_decision``...) are separate so that
the tests can feed them synthetic runs with known answers.

Metrics. The primary metric of every pretraining claim is the held-out cross-entropy
at the positions shown as [MASK] (nats, lower is better), on the one held-out set every
model is scored on; accuracy stands beside it. Margins of practical equivalence
(``margins``) are fixed here, before any result, with their reasons.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import conditions as C
from . import paper
from .stats import Decision, bootstrap, correct_matrix, decision, holm, paired_t

CE = "mlm_loss_at_mask"
T_METHOD = "paired t over seeds"
B_METHOD = "bootstrap over seeds and items"


class MissingRuns(LookupError):
    """Stored runs a chapter needs are absent; the message names each one."""


# -- margins -----------------------------------------------------------------------------

MARGIN_REASONS = {
    "ce": "a twentieth of the distance between the unigram and left-bigram rungs of the "
          "held-out set: a difference smaller than that moves a model less than a twentieth "
          "of the way from reading no context to reading its left neighbour",
    "trend": "half the cross-entropy margin per doubling of G, so that the whole G = 1 to "
             "G = L change stays within the margin",
    "pairs": "2 points of SOP or NSP accuracy, about the binomial standard error of a "
             "1,024-pair test set and far below the paper's differences (26 to 38 points)",
    "downstream": "1 point of accuracy, the smallest downstream difference the paper reads "
                  "as a gain (Table 4's attention-sharing cost is 0.1 to 0.7 points)",
    "roughness": "0.02: a change of the mean second difference of 2% of the curve's mean "
                 "per layer, too small to see on a Figure 1 plot",
    "angle": "1 degree, the resolution at which Figure 1 is read",
}


def margins(levels: dict) -> dict:
    """The margins of practical equivalence (units: nats, nats per doubling, accuracy
    points, roughness, degrees), given the held-out set's rungs
    (baselines.reference_levels)."""
    ce = 0.05 * levels["distance"]
    return {"ce": ce, "trend": ce / 2, "pairs": 2.0, "downstream": 1.0, "roughness": 0.02,
            "angle": 1.0}


# -- the runs ----------------------------------------------------------------------------

def _control_metrics(store, config, eval_config) -> dict:
    from ..engine.config import untrained
    from ..engine.store import config_hash, stored_eval
    control = stored_eval(store, config_hash(untrained(config).to_dict()), eval_config)
    if control is None:
        return {}
    return {f"control_{k}": v for k, v in control["metrics"].items()
            if k in ("sentiment_accuracy", "sentiment_correct", "sentiment_probe_accuracy",
                     "sentiment_probe_correct", "genre_probe_accuracy", "genre_probe_correct",
                     CE, "transition_l2", "transition_angle", "sop_accuracy_probe",
                     "nsp_accuracy_probe")}


def load_runs(profile: str, conditions: dict, seeds, device: str = "auto",
              train_missing: bool = False, controls: bool = True) -> pd.DataFrame:
    """One row per (condition, seed): pretraining figures, evaluation metrics and the
    random-initialization control's where it exists. Missing runs are trained and
    evaluated here when ``train_missing`` (one after another), else MissingRuns names
    every one of them."""
    from ..engine.store import config_hash, results_dir, stored_eval, stored_pretrain
    from ..profiles import eval_config
    store, evaluation = results_dir(profile), eval_config(profile)
    seeded = [(name, seed, C.seeded(config, seed)) for name, config in conditions.items()
              for seed in seeds]
    missing = [(name, seed, config) for name, seed, config in seeded
               if stored_pretrain(store, config) is None
               or stored_eval(store, config_hash(config.to_dict()), evaluation) is None]
    if missing and train_missing:
        _train_and_evaluate(profile, [c for _, _, c in missing], device, controls)
    elif missing:
        names = ", ".join(f"{name!r} seed {seed} ({config_hash(c.to_dict())})"
                          for name, seed, c in missing)
        raise MissingRuns(f"{len(missing)} stored runs missing at profile {profile!r}: "
                          f"{names}; train them with `python -m albert_rerun.claims "
                          f"--profile {profile}`")
    rows = []
    for name, seed, config in seeded:
        run = stored_pretrain(store, config)
        evaluated = stored_eval(store, run["hash"], evaluation)
        rows.append({"condition": name, "seed": seed, "hash": run["hash"],
                     **run["metrics"], "curve": run["curve"], "machine": _machine(run),
                     "commit": run["provenance"]["git_commit"],
                     "wall_seconds": run["wall_seconds"], **evaluated["metrics"],
                     **(_control_metrics(store, config, evaluation) if controls else {})})
    return pd.DataFrame(rows)


def _machine(run: dict) -> str:
    machine = run["provenance"]["machine"]
    return machine.get("gpu") or machine.get("cpu", "unknown")


def _train_and_evaluate(profile: str, configs: list, device: str, controls: bool) -> None:
    from ..engine.config import untrained
    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import resolve_device, run
    from ..engine.store import results_dir
    from ..profiles import eval_config
    store, evaluation = results_dir(profile), eval_config(profile)
    target = resolve_device(device)
    todo = list(configs)
    if controls:
        todo += C.controls([c for c in configs if c.seed < 3])
    for config in todo:
        result = run(config, store, device, quiet=True)
        evaluate_stored(store, result, evaluation, target)


def pair_of(frame: pd.DataFrame, metric: str, a, b):
    """metric(a) and metric(b) over the seeds both conditions have, in seed order."""
    x = frame[frame["condition"] == a].set_index("seed")[metric]
    y = frame[frame["condition"] == b].set_index("seed")[metric]
    seeds = sorted(set(x.index) & set(y.index))
    if not seeds:
        raise ValueError(f"conditions {a!r} and {b!r} share no seed")
    return x.loc[seeds].tolist(), y.loc[seeds].tolist()


# -- decisions from frames -----------------------------------------------------------------

def ce_decision(frame, key, claim, label, a, b, margin, paper_sign, paper_text="",
                metric: str = CE) -> Decision:
    """Cross-entropy (or another per-seed metric) of a minus b, paired t over seeds."""
    x, y = pair_of(frame, metric, a, b)
    return decision(key, claim, label, paired_t(x, y, margin), margin, paper_sign,
                    "nats" if metric == CE else "", T_METHOD, paper_text)


def accuracy_decision(frame, key, claim, label, a, b, correct: str, margin, paper_sign,
                      paper_text="", b_correct: str | None = None,
                      offset: float = 0.0) -> Decision:
    """Accuracy points of a minus b on one fixed test set, paired by seed and item
    (two-level bootstrap); ``b`` None compares a with ``offset`` (a fraction)."""
    x = frame[frame["condition"] == a].set_index("seed")[correct]
    if b is None:
        seeds = sorted(x.index)
        A = correct_matrix(x.loc[seeds])
        numbers = bootstrap(100 * A, None, margin, offset=100 * offset)
    else:
        y = frame[frame["condition"] == b].set_index("seed")[b_correct or correct]
        seeds = sorted(set(x.index) & set(y.dropna().index))
        if not seeds:
            raise ValueError(f"conditions {a!r} and {b!r} share no seed")
        numbers = bootstrap(100 * correct_matrix(x.loc[seeds]),
                            100 * correct_matrix(y.loc[seeds]), margin)
    return decision(key, claim, label, numbers, margin, paper_sign, "points", B_METHOD,
                    paper_text)


def trend_slopes(frame: pd.DataFrame, levels: dict, metric: str = CE) -> list:
    """Per seed, the least-squares slope of ``metric`` against log2 of the level (the
    conditions' keys map to numeric levels, e.g. G = 1, 2, 4)."""
    slopes = []
    for seed in sorted(frame["seed"].unique()):
        part = frame[frame["seed"] == seed]
        if part["condition"].nunique() < len(levels):
            continue
        x = np.log2([levels[c] for c in part["condition"]])
        slopes.append(float(np.polyfit(x, part[metric].to_numpy(), 1)[0]))
    return slopes


def trend_decision(frame, key, claim, label, levels: dict, margin, paper_sign,
                   paper_text="") -> Decision:
    return decision(key, claim, label, paired_t(trend_slopes(frame, levels), None, margin),
                    margin, paper_sign, "nats per doubling", T_METHOD, paper_text)


def roughness(values) -> float:
    """How jumpy a layer-to-layer curve is: the mean absolute second difference over
    the layers, divided by the curve's mean (scale-free, so L2 and angles compare
    across models). A steady rise or decline scores 0; only changes of direction or
    of pace count."""
    x = np.asarray(values, dtype=float)
    if len(x) < 3:
        return 0.0
    return float(np.abs(np.diff(x, 2)).mean() / max(abs(x.mean()), 1e-12))


# -- chapters ------------------------------------------------------------------------------

@dataclass
class Chapter:
    """What a chapter shows: its runs, tables, decisions and glued sentences."""

    claim: str
    runs: pd.DataFrame
    decisions: list
    tables: dict = field(default_factory=dict)
    texts: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)

    def decision_table(self, family: pd.DataFrame | None = None) -> pd.DataFrame:
        """The decisions, with the Holm-adjusted verdicts of ``family`` where given."""
        rows = []
        for d in self.decisions:
            row = {"comparison": d.label, "ours": interval_text(d.estimate, d.low, d.high,
                                                                 d.unit),
                   "margin": f"±{d.margin:.3g}", "paper": d.paper, "method": d.method,
                   "verdict": d.verdict()}
            if family is not None and d.key in family.index:
                row["verdict (Holm, whole book)"] = family.loc[d.key, "verdict_holm"]
            rows.append(row)
        return pd.DataFrame(rows).set_index("comparison")


def interval_text(estimate, low, high, unit="") -> str:
    digits = 3 if unit.startswith("nats") else 1 if unit == "points" else 2
    return f"{estimate:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def _levels(profile: str) -> dict:
    from ..profiles import eval_config
    from .baselines import reference_levels
    return reference_levels(eval_config(profile))


def asymmetry(profile: str, seeds=None, device="auto", train_missing=False) -> Chapter:
    """Claim 3: Table 4's eight cells and grouped sharing."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    cells, groups = C.asymmetry(profile), C.grouped(profile)
    runs = load_runs(profile, cells, seeds, device, train_missing)
    grouped = load_runs(profile, {f"G={g}": c for g, c in groups.items()}, seeds, device,
                        train_missing)
    b = C.base(profile)
    small, H = b.model.embedding_size, b.model.hidden_size
    decisions = asymmetry_decisions(runs, grouped, small, H, sorted(groups), m)
    return Chapter("asymmetry", pd.concat([runs, grouped]), decisions)


def asymmetry_decisions(runs, grouped, small: int, H: int, groups, m: dict) -> list:
    def paper_gap(e, a, b):
        return f"{paper.TABLE4_AVG[(e, a)] - paper.TABLE4_AVG[(e, b)]:+.1f} Avg"
    out = []
    for e, paper_e in ((small, 128), (H, 768)):
        out.append(ce_decision(runs, f"asymmetry/attention-ffn/E={e}", "asymmetry",
                               f"attention-shared minus FFN-shared, E = {e}",
                               f"E={e}, attention", f"E={e}, ffn", m["ce"], -1,
                               paper_gap(paper_e, "attention", "ffn")))
    out.append(ce_decision(runs, f"asymmetry/attention-none/E={small}", "asymmetry",
                           f"attention-shared minus not shared, E = {small}",
                           f"E={small}, attention", f"E={small}, none", m["ce"], 0,
                           paper_gap(128, "attention", "none")))
    levels = {f"G={g}": g for g in groups}
    out.append(trend_decision(grouped, "asymmetry/groups-trend", "asymmetry",
                              f"slope over log2 G (G = {', '.join(map(str, groups))})",
                              levels, m["trend"], -1, "more groups better (no numbers)"))
    return out


def sop_nsp(profile: str, seeds=None, device="auto", train_missing=False,
            topic_seeds=None) -> Chapter:
    """Claim 4: Table 5 through the probes, and the topic-only baseline."""
    from ..profiles import eval_config
    from .baselines import topic_baseline
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    runs = load_runs(profile, C.sop_nsp(profile), seeds, device, train_missing)
    evaluation = eval_config(profile)
    pairs = {"smoke": 400, "cpu": 8000, "gpu": 20000}[profile]
    topic = pd.DataFrame([topic_baseline(task, evaluation, pairs, seed)
                          for task in ("nsp", "sop") for seed in (topic_seeds or seeds)])
    return Chapter("sop_nsp", runs, sop_nsp_decisions(runs, topic, m),
                   extra={"topic": topic})


def sop_nsp_decisions(runs, topic, m: dict) -> list:
    p = paper.TABLE5
    sop_majority = float(runs["sop_majority"].iloc[0]) / 1.0
    out = [accuracy_decision(runs, "sop_nsp/sop-pairs/sop-nsp", "sop_nsp",
                             "SOP pairs, probe: SOP-trained minus NSP-trained", "sop", "nsp",
                             "sop_probe_correct", m["pairs"], +1,
                             f"{p['sop'][2] - p['nsp'][2]:+.1f} (own heads)"),
           accuracy_decision(runs, "sop_nsp/sop-pairs/nsp-chance", "sop_nsp",
                             "SOP pairs, probe: NSP-trained minus chance", "nsp", None,
                             "sop_probe_correct", m["pairs"], 0,
                             f"{p['nsp'][2]:.1f} (chance 50)", offset=sop_majority),
           accuracy_decision(runs, "sop_nsp/nsp-pairs/sop-none", "sop_nsp",
                             "NSP pairs, probe: SOP-trained minus no sentence loss", "sop",
                             "none", "nsp_probe_correct", m["pairs"], +1,
                             f"{p['sop'][1] - p['none'][1]:+.1f} (78.9 vs 52.4)")]
    topic = topic.assign(condition=topic["task"])
    for task, sign in (("nsp", +1), ("sop", 0)):
        part = topic[topic["task"] == task]
        out.append(accuracy_decision(part, f"sop_nsp/topic/{task}", "sop_nsp",
                                     f"bag of words on {task.upper()} pairs minus majority",
                                     task, None, "correct", m["pairs"], sign,
                                     "argued, not measured",
                                     offset=float(part["majority"].iloc[0])))
    return out


def dropout(profile: str, seeds=None, device="auto", train_missing=False) -> Chapter:
    """Claim 5: no dropout against dropout 0.1, and the no-overfitting premise."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    runs = load_runs(profile, C.dropout(profile), seeds, device, train_missing)
    runs["overfitting gap"] = runs[CE] - runs["train_mlm_loss_at_mask"]
    return Chapter("dropout", runs, dropout_decisions(runs, m))


def dropout_decisions(runs, m: dict) -> list:
    p = paper.TABLE8_AVG
    return [ce_decision(runs, "dropout/ce", "dropout", "no dropout minus dropout 0.1",
                        "no dropout", "dropout 0.1", m["ce"], -1,
                        f"{p['without dropout'] - p['with dropout']:+.1f} Avg (xxlarge)"),
            ce_decision(runs, "dropout/premise", "dropout",
                        "overfitting gap, no dropout minus dropout 0.1", "no dropout",
                        "dropout 0.1", m["ce"], 0, "no overfitting (argued)",
                        metric="overfitting gap")]


def wall_clock(profile: str, seeds=None, device="auto", train_missing=False) -> Chapter:
    """Claim 6 (b): the wide ALBERT-style model against the BERT-style one at equal
    training FLOPs."""
    from .driver import choices_path
    from ..engine.store import read_json
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    choice = read_json(choices_path(profile, "wide-learning-rate"))
    if choice is None:
        if not train_missing:
            raise MissingRuns(f"the wide model's learning-rate sweep is not stored at "
                              f"profile {profile!r}; run `python -m albert_rerun.claims "
                              f"--profile {profile} --claims wall_clock`")
        from .driver import wide_learning_rate
        choice = {"learning_rate": wide_learning_rate(profile, device)}
        choice = read_json(choices_path(profile, "wide-learning-rate"))
    runs = load_runs(profile, C.wall_clock(profile, choice["learning_rate"]), seeds,
                     device, train_missing)
    return Chapter("wall_clock", runs, wall_clock_decisions(runs, m),
                   extra={"choice": choice})


def wall_clock_decisions(runs, m: dict) -> list:
    p = paper.TABLE6
    gap = f"{p['albert-xxlarge'][2] - p['bert-large'][2]:+.1f} Avg (equal time)"
    return [ce_decision(runs, "wall_clock/equal-flops", "wall_clock",
                        "wide ALBERT-style minus BERT-style, equal training FLOPs",
                        "wide ALBERT-style, equal FLOPs", "BERT-style", m["ce"], -1, gap)]


def transitions(profile: str, seeds=None, device="auto", train_missing=False) -> Chapter:
    """Claim 7: Figure 1's layer transitions, trained and at initialization."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    runs = load_runs(profile, C.transitions(profile), seeds, device, train_missing)
    runs = add_roughness(runs)
    return Chapter("transitions", runs, transitions_decisions(runs, m))


def add_roughness(runs: pd.DataFrame) -> pd.DataFrame:
    """Roughness of each run's curves over layers 2..L (the first transition starts from
    the embedding, through the E -> H projection in ALBERT, and is reported apart), for
    the trained model and its untrained control where stored."""
    runs = runs.copy()
    for measure in ("l2", "angle"):
        runs[f"roughness_{measure}"] = [roughness(v[1:]) for v in runs[f"transition_{measure}"]]
        runs[f"first_{measure}"] = [v[0] for v in runs[f"transition_{measure}"]]
        control = f"control_transition_{measure}"
        if control in runs:
            runs[f"control_roughness_{measure}"] = [
                roughness(v[1:]) if isinstance(v, list) else np.nan for v in runs[control]]
    runs["last_angle"] = [v[-1] for v in runs["transition_angle"]]
    return runs


def transitions_decisions(runs, m: dict) -> list:
    out = [ce_decision(runs, f"transitions/roughness-{measure}", "transitions",
                       f"roughness of the {name} curve, BERT-style minus ALBERT-style",
                       "BERT-style", "ALBERT-style", m["roughness"], +1,
                       "ALBERT smoother (no numbers)", metric=f"roughness_{measure}")
           for measure, name in (("l2", "L2"), ("angle", "angle"))]
    last = runs[runs["condition"] == "ALBERT-style"].sort_values("seed")["last_angle"]
    out.append(decision("transitions/last-angle", "transitions",
                        "ALBERT-style last layer's angle (degrees)",
                        paired_t(last.to_numpy(), None, m["angle"]), m["angle"], +1,
                        "degrees", T_METHOD, "does not converge to 0"))
    return out


def embedding_sweep(profile: str, seeds=None, device="auto", train_missing=False) -> Chapter:
    """Claim 8: Table 3's E sweep, not shared and all shared."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    runs = load_runs(profile, C.embedding_sweep(profile), seeds, device, train_missing)
    b = C.base(profile)
    sizes = C.CLAIM_SIZES[profile].embedding_sizes
    return Chapter("embedding_sweep", runs,
                   embedding_decisions(runs, min(sizes), b.model.embedding_size,
                                       b.model.hidden_size, m))


def embedding_decisions(runs, small: int, mid: int, H: int, m: dict) -> list:
    p = paper.TABLE3_AVG
    return [ce_decision(runs, "embedding/not-shared", "embedding_sweep",
                        f"not shared: E = {H} minus E = {small}", f"none, E={H}",
                        f"none, E={small}", m["ce"], -1,
                        f"{p[('none', 768)] - p[('none', 64)]:+.1f} Avg (768 vs 64)"),
            ce_decision(runs, "embedding/all-shared", "embedding_sweep",
                        f"all shared: E = {mid} minus E = {H}", f"all, E={mid}",
                        f"all, E={H}", m["ce"], -1,
                        f"{p[('all', 128)] - p[('all', 768)]:+.1f} Avg (128 vs 768)")]


def downstream_gate(profile: str, seeds=None, device="auto", train_missing=False) -> Chapter:
    """Pretraining against its random-initialization control, downstream: the base run
    fine-tuned on sentiment minus the same architecture fine-tuned from scratch. Where
    this does not favour pretraining, no downstream comparison between pretraining
    conditions is made."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(_levels(profile))
    runs = load_runs(profile, {"base": C.base(profile)}, seeds, device, train_missing)
    return Chapter("downstream", runs, [gate_decision(runs, m)])


def gate_decision(runs, m: dict) -> Decision:
    with_control = runs.dropna(subset=["control_sentiment_correct"])
    frame = pd.concat([with_control.assign(condition="pretrained"),
                       with_control.assign(condition="random init",
                                           sentiment_correct=with_control[
                                               "control_sentiment_correct"])])
    return accuracy_decision(frame, "downstream/pretrained-random", "downstream",
                             "sentiment, fine-tuned: pretrained minus random init",
                             "pretrained", "random init", "sentiment_correct",
                             m["downstream"], +1, "pretraining helps (implicit)")


CHAPTERS = {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
            "wall_clock": wall_clock, "transitions": transitions,
            "embedding_sweep": embedding_sweep, "downstream": downstream_gate}


def book_decisions(profile: str, seeds=None, device="auto", train_missing=False) -> list:
    """Every decision of the book at ``profile``: the family the ledger adjusts."""
    out = []
    for make in CHAPTERS.values():
        out += make(profile, seeds, device, train_missing).decisions
    return out


def book_family(profile: str, seeds=None, device="auto", train_missing=False) -> pd.DataFrame:
    return holm(book_decisions(profile, seeds, device, train_missing))

"""Each claim's analysis: stored runs in, tables, decisions and sentences out.

A chapter calls one function here (``asymmetry``, ``sop_nsp``, ``dropout``,
``wall_clock``, ``transitions``, ``embedding_sweep``); each returns a ``Chapter``: the
runs it read, display tables, its decisions (``stats.Decision``) and the sentences the
page glues. ``book_decisions`` gathers every chapter's decisions, the family that the
ledger adjusts with Holm. The functions that compute a decision from a frame of runs
(``ce_decision``, ``accuracy_decision``...) are separate so that
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
B_METHOD = "bootstrap over seeds and items, or paired t if wider"


class MissingRuns(LookupError):
    """Stored runs a chapter needs are absent; the message names each one."""


# -- margins -----------------------------------------------------------------------------

MARGIN_REASONS = {
    "ce": "a twentieth of the distance between the unigram and left-bigram rungs of the "
          "held-out set: a difference smaller than that moves a model less than a twentieth "
          "of the way from reading no context to reading its left neighbour",
    "pairs": "2 points of SOP or NSP accuracy, about the binomial standard error of a "
             "1,024-pair test set (1.6 points at 50%) and far below the paper's tested "
             "differences (26.5 and 26.1 points); the paper's NSP-on-SOP figure, 2.0 "
             "points above chance, sits on it",
    "downstream": "1 point of accuracy, between the smallest downstream gain the paper "
                  "reads (0.3 Avg: Tables 3 and 8) and its sharing costs (1.4 to 2.8)",
    "roughness": "0.02: a change of the mean second difference of 2% of the curve's mean "
                 "per layer, too small to see on a Figure 1 plot",
    "angle": "1 degree, the resolution at which Figure 1 is read",
}


def margins(levels: dict) -> dict:
    """The margins of practical equivalence (units: nats, accuracy points, roughness,
    degrees), given the held-out set's rungs
    (baselines.reference_levels)."""
    ce = 0.05 * levels["distance"]
    return {"ce": ce, "pairs": 2.0, "downstream": 1.0, "roughness": 0.02,
            "angle": 1.0}


# -- the runs ----------------------------------------------------------------------------

CONTROL_METRICS = ("sentiment_accuracy", "sentiment_correct", "sentiment_probe_accuracy",
                   "sentiment_probe_correct", "genre_probe_accuracy", "genre_probe_correct",
                   CE, "transition_l2", "transition_angle", "sop_accuracy_probe",
                   "nsp_accuracy_probe", "sop_probe_correct", "nsp_probe_correct")


def _evaluations(store, key: str, configs) -> dict:
    """The metrics of every stored evaluation of run ``key`` under ``configs``."""
    from ..engine.store import stored_eval
    out = {}
    for config in configs:
        stored = stored_eval(store, key, config)
        out.update(stored["metrics"] if stored else {})
    return out


def _control_metrics(store, config, configs) -> dict:
    from ..engine.config import untrained
    from ..engine.store import config_hash
    control = _evaluations(store, config_hash(untrained(config).to_dict()), configs)
    return {f"control_{k}": v for k, v in control.items() if k in CONTROL_METRICS}


def load_runs(profile: str, conditions: dict, seeds, device: str = "auto",
              train_missing: bool = False, controls: bool = True) -> pd.DataFrame:
    """One row per (condition, seed): pretraining figures, evaluation metrics and the
    random-initialization control's where it exists. Missing runs are trained and
    evaluated here when ``train_missing`` (one after another), else MissingRuns names
    every one of them."""
    from ..engine.store import config_hash, results_dir, stored_eval, stored_pretrain
    from ..profiles import eval_config, finetune_config
    store, evaluation = results_dir(profile), eval_config(profile)
    both = (evaluation, finetune_config(profile))
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
        rows.append({"condition": name, "seed": seed, "hash": run["hash"],
                     **run["metrics"], "curve": run["curve"], "machine": _machine(run),
                     "commit": run["provenance"]["git_commit"],
                     "wall_seconds": run["wall_seconds"],
                     **_evaluations(store, run["hash"], both),
                     **(_control_metrics(store, config, both) if controls else {})})
    frame = pd.DataFrame(rows)
    for column in ("sentiment_accuracy", "sentiment_correct", "control_sentiment_accuracy",
                   "control_sentiment_correct"):  # fine-tuned: the base runs only
        if column not in frame:
            frame[column] = np.nan
    return frame


def _machine(run: dict) -> str:
    machine = run["provenance"]["machine"]
    return machine.get("gpu") or machine.get("cpu", "unknown")


def _train_and_evaluate(profile: str, configs: list, device: str, controls: bool) -> None:
    """Train and evaluate missing runs and their controls in this process (a notebook at
    a small profile); fine-tuning is downstream_gate's."""
    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import resolve_device, run
    from ..engine.store import results_dir
    from ..profiles import eval_config
    from .driver import CONTROL_SEEDS
    store, evaluation = results_dir(profile), eval_config(profile)
    target = resolve_device(device)
    todo = list(configs)
    if controls:
        todo += C.controls([c for c in configs if c.seed < CONTROL_SEEDS])
    for config in todo:
        evaluate_stored(store, run(config, store, device, quiet=True), evaluation, target)


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
        numbers = conservative(bootstrap(100 * A, None, margin, offset=100 * offset),
                               paired_t(100 * A.mean(1) - 100 * offset, None, margin))
    else:
        y = frame[frame["condition"] == b].set_index("seed")[b_correct or correct]
        seeds = sorted(set(x.index) & set(y.dropna().index))
        if not seeds:
            raise ValueError(f"conditions {a!r} and {b!r} share no seed")
        numbers = conservative(bootstrap(100 * correct_matrix(x.loc[seeds]),
                                         100 * correct_matrix(y.loc[seeds]), margin),
                               paired_t(100 * correct_matrix(x.loc[seeds]).mean(1),
                                        100 * correct_matrix(y.loc[seeds]).mean(1), margin))
    return decision(key, claim, label, numbers, margin, paper_sign, "points", B_METHOD,
                    paper_text)


def conservative(boot: dict, t: dict) -> dict:
    """The more cautious of the item-and-seed bootstrap and the seed-level paired t on
    per-seed accuracies: the wider interval, the larger p-values. With 3 seeds the
    bootstrap alone is anti-conservative (it resamples 3 seeds without a t correction);
    the t alone ignores nothing either (item noise sits inside each seed's mean), but
    is exact only for normal seed means."""
    if t["n"] < 2:  # one seed: no seed-level t; the bootstrap over items stands
        return boot
    return {"estimate": boot["estimate"], "low": min(boot["low"], t["low"]),
            "high": max(boot["high"], t["high"]), "n": boot["n"],
            "p_difference": max(boot["p_difference"], t["p_difference"]),
            "p_equivalence": max(boot["p_equivalence"], t["p_equivalence"])}


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
                   "margin": f"±{d.margin:.3g}",
                   "paper's side": {-1: "negative", 0: "about zero", 1: "positive"}[
                       d.paper_sign],
                   "paper": d.paper, "method": d.method,
                   "verdict": d.verdict()}
            if family is not None and d.key in family.index:
                row["verdict (Holm, whole book)"] = family.loc[d.key, "verdict_holm"]
            rows.append(row)
        return pd.DataFrame(rows).set_index("comparison")


def interval_text(estimate, low, high, unit="") -> str:
    digits = 3 if unit.startswith("nats") else 1 if unit == "points" else 2
    return f"{estimate:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def levels(profile: str) -> dict:
    """The rungs and reads-context line of the profile's common held-out MLM set."""
    from ..profiles import eval_config
    from .baselines import reference_levels
    return reference_levels(eval_config(profile))


def asymmetry(profile: str, seeds=None, device="auto", train_missing=False,
              present: bool = True) -> Chapter:
    """Claim 3: Table 4's eight cells and grouped sharing."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    cells, groups = C.asymmetry(profile), C.grouped(profile)
    runs = load_runs(profile, cells, seeds, device, train_missing)
    grouped = load_runs(profile, {f"G={g}": c for g, c in groups.items()}, seeds, device,
                        train_missing)
    b = C.base(profile)
    small, H = b.model.embedding_size, b.model.hidden_size
    decisions = asymmetry_decisions(runs, grouped, small, H, sorted(groups), m)
    chapter = Chapter("asymmetry", runs, decisions, extra={"grouped": grouped})
    table = metrics_table(runs, {"params (M)": pd.Series(
        {k: round(parameter_count(c) / 1e6, 3) for k, c in cells.items()})})
    table["paper params (M)"] = [paper.TABLE4_PARAMS[(128 if cells[k].model.embedding_size
                                                      == small else 768, cells[k].model.sharing)]
                                 for k in table.index]
    table["paper Avg"] = [paper.TABLE4_AVG[(128 if cells[k].model.embedding_size == small
                                            else 768, cells[k].model.sharing)]
                          for k in table.index]
    chapter.tables["cells"] = table
    costs = {}
    for e in (small, H):
        for scheme in ("attention", "ffn", "all"):
            d = ce_decision(runs, "", "", "", f"E={e}, {scheme}", f"E={e}, none", m["ce"], -1)
            paper_e = 128 if e == small else 768
            costs[(e, scheme)] = {"CE minus not shared (nats)": interval_text(
                d.estimate, d.low, d.high, "nats"),
                "paper Avg minus not shared": round(paper.TABLE4_AVG[(paper_e, scheme)]
                                                    - paper.TABLE4_AVG[(paper_e, "none")], 1)}
    chapter.tables["costs"] = pd.DataFrame(costs).T.rename_axis(["E", "shared"])
    chapter.tables["grouped"] = metrics_table(grouped, {"params (M)": pd.Series(
        {f"G={g}": round(parameter_count(c) / 1e6, 3) for g, c in groups.items()})})
    chapter.texts.update(scale_gap=scale_gap(runs, b), scale_short=scale_short(runs, b),
                         context=context_reading(pd.concat([runs, grouped]), profile))
    return downstream(chapter, profile) if present else chapter


def asymmetry_decisions(runs, grouped, small: int, H: int, groups, m: dict) -> list:
    def paper_gap(e, a, b):
        return f"{paper.TABLE4_AVG[(e, a)] - paper.TABLE4_AVG[(e, b)]:+.1f} Avg"
    out = []
    for e, paper_e, name in ((small, 128, "small-E"), (H, 768, "E=H")):
        out.append(ce_decision(runs, f"asymmetry/attention-ffn/{name}", "asymmetry",
                               f"attention-shared minus FFN-shared, E = {e}",
                               f"E={e}, attention", f"E={e}, ffn", m["ce"], -1,
                               paper_gap(paper_e, "attention", "ffn")))
    out.append(ce_decision(runs, "asymmetry/attention-none/small-E", "asymmetry",
                           f"attention-shared minus not shared, E = {small}",
                           f"E={small}, attention", f"E={small}, none", m["ce"], 0,
                           paper_gap(128, "attention", "none")))
    # The first step away from sharing everything: G = 1 to the smallest G > 1. Not the
    # asymmetry table's pair (G = L is "not shared"), and, unlike a least-squares slope
    # over log2 G at G = 1, 2, 4 (which weighs only the end points), it reads G = 2.
    first = min(g for g in groups if g > 1)
    out.append(ce_decision(grouped, "asymmetry/groups-first-step", "asymmetry",
                           f"G = {first} minus G = 1 (all shared)", f"G={first}", "G=1",
                           m["ce"], -1, "more groups better (no numbers)"))
    return out


def sop_nsp(profile: str, seeds=None, device="auto", train_missing=False,
            present: bool = True, topic_seeds=None) -> Chapter:
    """Claim 4: Table 5 through the probes, and the topic-only baseline."""
    from ..profiles import eval_config
    from .baselines import topic_baseline
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    runs = load_runs(profile, C.sop_nsp(profile), seeds, device, train_missing)
    evaluation = eval_config(profile)
    pairs = {"smoke": 400, "cpu": 8000, "gpu": 20000}[profile]
    topic = pd.DataFrame([stored_baseline(profile, f"topic-{task}-{seed}", topic_baseline,
                                          task, evaluation, pairs, seed)
                          for task in ("nsp", "sop") for seed in (topic_seeds or seeds)])
    chapter = Chapter("sop_nsp", runs, sop_nsp_decisions(runs, topic, m),
                      extra={"topic": topic})
    table = metrics_table(runs, {
        "SOP, own head %": summary(runs, "sop_accuracy_head", 100, 1),
        "SOP, probe %": summary(runs, "sop_accuracy_probe", 100, 1),
        "NSP, own head %": summary(runs, "nsp_accuracy_head", 100, 1),
        "NSP, probe %": summary(runs, "nsp_accuracy_probe", 100, 1)})
    table["paper MLM / NSP / SOP"] = [" / ".join(map(str, paper.TABLE5[k][:3]))
                                      for k in table.index]
    table.index.name = "trained with"
    chapter.tables["objectives"] = table
    topic_table = topic.groupby("task").agg(accuracy=("accuracy", "mean"),
                                            majority=("majority", "first"),
                                            train_pairs=("train_pairs", "first"),
                                            test_pairs=("test_pairs", "first"))
    topic_table[["accuracy", "majority"]] *= 100
    chapter.tables["topic"] = topic_table.round(1)
    chapter.texts.update(
        scale_gap=scale_gap(runs, C.base(profile)), scale_short=scale_short(runs, C.base(profile)),
        context=context_reading(runs, profile),
        majority=(f"The held-out pairs are {100 * runs['sop_majority'].iloc[0]:.1f}% one label "
                  f"(SOP) and {100 * runs['nsp_majority'].iloc[0]:.1f}% (NSP)."))
    return downstream(chapter, profile) if present else chapter


def sop_nsp_decisions(runs, topic, m: dict) -> list:
    p = paper.TABLE5
    out = [accuracy_decision(runs, "sop_nsp/sop-pairs/sop-nsp", "sop_nsp",
                             "SOP pairs, probe: SOP-trained minus NSP-trained", "sop", "nsp",
                             "sop_probe_correct", m["pairs"], +1,
                             f"{p['sop'][2] - p['nsp'][2]:+.1f} (own heads)"),
           accuracy_decision(runs, "sop_nsp/sop-pairs/nsp-chance", "sop_nsp",
                             "SOP pairs, probe: NSP-trained minus its random-init control",
                             "nsp", "nsp", "sop_probe_correct", m["pairs"], 0,
                             f"{p['nsp'][2]:.1f} (chance 50)",
                             b_correct="control_sop_probe_correct"),
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


def dropout(profile: str, seeds=None, device="auto", train_missing=False,
            present: bool = True) -> Chapter:
    """Claim 5: no dropout against dropout 0.1, and the no-overfitting premise."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    runs = load_runs(profile, C.dropout(profile), seeds, device, train_missing)
    runs["overfitting gap"] = runs[CE] - runs["train_mlm_loss_at_mask"]
    chapter = Chapter("dropout", runs, dropout_decisions(runs, m))
    chapter.tables["runs"] = metrics_table(runs, {
        "training CE at [MASK]": summary(runs, "train_mlm_loss_at_mask"),
        "gap (held-out minus training)": summary(runs, "overfitting gap")})
    chapter.tables["runs"]["paper Avg (xxlarge)"] = [paper.TABLE8_AVG["without dropout"],
                                                     paper.TABLE8_AVG["with dropout"]]
    b = C.base(profile)
    chapter.texts.update(scale_gap=scale_gap(runs, b), scale_short=scale_short(runs, b),
                         context=context_reading(runs, profile),
                         passes=passes_sentence(passes_over_data(runs, b)))
    return downstream(chapter, profile) if present else chapter


def dropout_decisions(runs, m: dict) -> list:
    p = paper.TABLE8_AVG
    return [ce_decision(runs, "dropout/ce", "dropout", "no dropout minus dropout 0.1",
                        "no dropout", "dropout 0.1", m["ce"], -1,
                        f"{p['without dropout'] - p['with dropout']:+.1f} Avg (xxlarge)"),
            ce_decision(runs, "dropout/premise", "dropout",
                        "overfitting gap, no dropout minus dropout 0.1", "no dropout",
                        "dropout 0.1", m["ce"], 0, "no overfitting (argued)",
                        metric="overfitting gap")]


def wall_clock(profile: str, seeds=None, device="auto", train_missing=False,
               present: bool = True) -> Chapter:
    """Claim 6 (b): the wide ALBERT-style model against the BERT-style one at equal
    training FLOPs."""
    from .driver import choices_path
    from ..engine.store import read_json
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    choice = read_json(choices_path(profile, "wide-learning-rate"))
    if choice is None:
        if not train_missing:
            raise MissingRuns(f"the wide model's learning-rate sweep is not stored at "
                              f"profile {profile!r}; run `python -m albert_rerun.claims "
                              f"--profile {profile} --claims wall_clock`")
        import contextlib
        import io

        from .driver import wide_learning_rate
        with contextlib.redirect_stdout(io.StringIO()):  # its progress lines carry timings
            wide_learning_rate(profile, device)
        choice = read_json(choices_path(profile, "wide-learning-rate"))
    conditions = C.wall_clock(profile, choice["learning_rate"])
    runs = load_runs(profile, conditions, seeds, device, train_missing)
    chapter = Chapter("wall_clock", runs, wall_clock_decisions(runs, m),
                      extra={"choice": choice, "conditions": conditions})
    flops = {k: C.step_flops(c) * c.max_steps for k, c in conditions.items()}
    chapter.tables["runs"] = metrics_table(runs, {
        "params (M)": pd.Series({k: round(parameter_count(c) / 1e6, 3)
                                 for k, c in conditions.items()}),
        "H": pd.Series({k: c.model.hidden_size for k, c in conditions.items()}),
        "steps": pd.Series({k: c.max_steps for k, c in conditions.items()}),
        "training PFLOPs": pd.Series({k: round(v / 1e15, 3) for k, v in flops.items()})})
    # Measured seconds are kept apart from what the runs computed: they vary from one
    # machine and moment to the next, so a regression test can compare the rest exactly.
    chapter.tables["timing"] = pd.DataFrame({
        "seconds per step": summary(runs, "step_seconds", 1, 4),
        "training seconds": summary(runs, "train_seconds", 1, 0)})
    sweep = pd.DataFrame({"learning rate": [float(k) for k in choice["mlm_loss_at_mask"]],
                          "CE at [MASK] (nats)": list(choice["mlm_loss_at_mask"].values())})
    chapter.tables["sweep"] = sweep.set_index("learning rate").round(4)
    wide, bert = "wide ALBERT-style, equal FLOPs", "BERT-style"
    step = runs.groupby("condition")["step_seconds"].mean()
    chapter.texts.update(
        flops_ratio=f"{C.step_flops(conditions[wide]) / C.step_flops(conditions[bert]):.2f}",
        equal_steps=f"{conditions[wide].max_steps:,}", bert_steps=f"{conditions[bert].max_steps:,}",
        learning_rate=f"{choice['learning_rate']:g}",
        scale_gap=scale_gap(runs, conditions[bert]),
        scale_short=scale_short(runs, conditions[bert]),
        context=context_reading(runs, profile))
    from ..engine.provenance import short_commit
    commits = runs.groupby("condition")["commit"].agg(
        lambda c: ", ".join(sorted(set(c.map(short_commit)))))
    spread = runs.groupby("condition")["step_seconds"].agg(["min", "max"])
    chapter.extra["timing_texts"] = {
        "time_ratio": f"{step[wide] / step[bert]:.2f}",
        "time_range": (f"{spread.loc[wide, 'min']:.3g}-{spread.loc[wide, 'max']:.3g} s per "
                       f"step against {spread.loc[bert, 'min']:.3g}-"
                       f"{spread.loc[bert, 'max']:.3g} s"),
        "time_machines": ", ".join(sorted(set(runs["machine"]))),
        "time_commits": f"the wide runs at {commits[wide]}, the BERT-style runs at "
                        f"{commits[bert]}"}
    return downstream(chapter, profile) if present else chapter


def wall_clock_decisions(runs, m: dict) -> list:
    p = paper.TABLE6
    gap = f"{p['albert-xxlarge'][2] - p['bert-large'][2]:+.1f} Avg (equal time)"
    return [ce_decision(runs, "wall_clock/equal-flops", "wall_clock",
                        "wide ALBERT-style minus BERT-style, equal training FLOPs",
                        "wide ALBERT-style, equal FLOPs", "BERT-style", m["ce"], -1, gap)]


def transitions(profile: str, seeds=None, device="auto", train_missing=False,
                present: bool = True) -> Chapter:
    """Claim 7: Figure 1's layer transitions, trained and at initialization."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    conditions = C.transitions(profile)
    runs = add_roughness(load_runs(profile, conditions, seeds, device, train_missing))
    chapter = Chapter("transitions", runs, transitions_decisions(runs, m))
    rows = []
    for state, prefix in (("trained", ""), ("random init", "control_")):
        for name in conditions:
            part = runs[runs["condition"] == name].dropna(subset=[f"{prefix}roughness_l2"]) \
                if f"{prefix}roughness_l2" in runs else runs.iloc[:0]
            if part.empty:
                continue
            rows.append({"model": name, "state": state, "seeds": len(part),
                         "first step, L2": part[f"{prefix}transition_l2"].map(
                             lambda v: v[0]).mean(),
                         "first step, angle": part[f"{prefix}transition_angle"].map(
                             lambda v: v[0]).mean(),
                         "roughness, L2": part[f"{prefix}roughness_l2"].mean(),
                         "roughness, angle": part[f"{prefix}roughness_angle"].mean(),
                         "last angle": part[f"{prefix}transition_angle"].map(
                             lambda v: v[-1]).mean()})
    chapter.tables["roughness"] = pd.DataFrame(rows).set_index(["model", "state"]).round(3)
    b = conditions["ALBERT-style"]
    chapter.texts["convergence"] = convergence_text(runs, m["angle"])
    chapter.texts.update(layers=str(b.model.num_hidden_layers), steps=f"{b.max_steps:,}",
                         scale_gap=scale_gap(runs, b), scale_short=scale_short(runs, b),
                         context=context_reading(runs, profile))
    return downstream(chapter, profile) if present else chapter


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


def convergence_text(runs: pd.DataFrame, margin: float) -> str:
    """What the ALBERT-style model's angle curve does over the layers (mean over seeds):
    whether, and from which layer, it stays within ``margin`` degrees of 0."""
    curves = np.array(runs[runs["condition"] == "ALBERT-style"]["transition_angle"].tolist())
    angle = curves.mean(0)
    within = np.flatnonzero(angle < margin)
    text = (f"The ALBERT-style model's angle between consecutive layers falls from "
            f"{angle[0]:.1f} degrees at the first layer to {angle[-1]:.2g} at the last")
    if len(within) and within[0] < len(angle) - 1 and (angle[within[0]:] < margin).all():
        return text + (f": within the {margin:g}-degree margin of 0 from layer "
                       f"{within[0] + 1} on, so at this scale its embeddings converge to a "
                       f"fixed point, as a deep equilibrium model's do, which is what the "
                       f"paper says ALBERT's do not (the decision's \"equivalent\" is this "
                       f"convergence, against the paper)")
    return text + ", so it does not converge to 0 within the layers trained"


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


def embedding_sweep(profile: str, seeds=None, device="auto", train_missing=False,
                    present: bool = True) -> Chapter:
    """Claim 8: Table 3's E sweep, not shared and all shared."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    runs = load_runs(profile, C.embedding_sweep(profile), seeds, device, train_missing)
    b = C.base(profile)
    sizes = C.CLAIM_SIZES[profile].embedding_sizes
    conditions = C.embedding_sweep(profile)
    chapter = Chapter("embedding_sweep", runs,
                      embedding_decisions(runs, min(sizes), b.model.embedding_size,
                                          b.model.hidden_size, m))
    table = metrics_table(runs, {"params (M)": pd.Series(
        {k: round(parameter_count(c) / 1e6, 3) for k, c in conditions.items()})})
    chapter.tables["sweep"] = table
    chapter.tables["paper"] = pd.DataFrame(
        [{"sharing": sh, "E": e, "params (M)": paper.TABLE3_PARAMS[(sh, e)],
          "Avg": paper.TABLE3_AVG[(sh, e)]} for (sh, e) in paper.TABLE3_AVG]).set_index(
        ["sharing", "E"])
    chapter.texts.update(small=str(min(sizes)), mid=str(b.model.embedding_size),
                         sizes=", ".join(str(e) for e in sizes),
                         H=str(b.model.hidden_size), scale_gap=scale_gap(runs, b),
                         scale_short=scale_short(runs, b), context=context_reading(runs, profile))
    return downstream(chapter, profile) if present else chapter


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


def downstream_gate(profile: str, seeds=None, device="auto", train_missing=False,
                    present: bool = True) -> Chapter:
    """Pretraining against its random-initialization control, downstream, for the base
    run: sentiment fine-tuned, and the sentiment probe of frozen features, each minus the
    same architecture from random initialization. Where this does not favour pretraining,
    no downstream comparison between pretraining conditions is made."""
    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import resolve_device
    from ..engine.store import results_dir, stored_eval, stored_pretrain
    from ..profiles import finetune_config
    from .driver import finetune_targets
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    store, tuning = results_dir(profile), finetune_config(profile)
    untuned = [c for c in finetune_targets(profile, seeds)
               if (run := stored_pretrain(store, c)) is None
               or stored_eval(store, run["hash"], tuning) is None]
    if untuned and not train_missing:
        raise MissingRuns(f"{len(untuned)} fine-tuning evaluations missing at profile "
                          f"{profile!r} (the base runs and their controls); run `python -m "
                          f"albert_rerun.claims --profile {profile} --stages finetune`")
    for config in untuned:
        evaluate_stored(store, stored_pretrain(store, config) or _pretrained(profile, config),
                        tuning, resolve_device(device))
    runs = load_runs(profile, {"base": C.base(profile)}, seeds, device, train_missing)
    return Chapter("downstream", runs, gate_decisions(runs, m))


def _pretrained(profile: str, config) -> dict:
    from ..engine.pretrain import run
    from ..engine.store import results_dir
    return run(config, results_dir(profile), quiet=True)


def gate_decisions(runs, m: dict) -> list:
    return [gain_decision(runs, "downstream/finetuned", "downstream",
                          "sentiment fine-tuned: pretrained base minus random init",
                          "sentiment_correct", m["downstream"]),
            gain_decision(runs, "downstream/probe", "downstream",
                          "sentiment probe: pretrained base minus random init",
                          "sentiment_probe_correct", m["downstream"])]


def passes_sentence(passes: float) -> str:
    return (f"The runs made {passes:.2f} passes over the training tokens, so "
            + ("no training sequence was seen twice: the regime the paper describes (a "
               "model that has not begun to overfit) holds here by construction."
               if passes < 1 else "some training sequences were seen more than once."))


def passes_over_data(frame: pd.DataFrame, config) -> float:
    """Tokens a run saw divided by the tokens of its training documents: below 1, no
    training sequence was seen twice."""
    from ..data.corpus import tokenize_split
    from ..data.tokenizer import Tokenizer
    corpus = tokenize_split("train", Tokenizer()).subset(config.train_documents)
    return float(frame["tokens"].max()) / len(corpus.tokens)


CHAPTERS = {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
            "wall_clock": wall_clock, "transitions": transitions,
            "embedding_sweep": embedding_sweep, "downstream": downstream_gate}


def book_decisions(profile: str, seeds=None, device="auto", train_missing=False) -> list:
    """Every decision of the book at ``profile``: the family the ledger adjusts (the
    chapters' tables and downstream summaries are not built for it)."""
    out = []
    for make in CHAPTERS.values():
        out += make(profile, seeds, device, train_missing, present=False).decisions
    return out


def book_family(profile: str, seeds=None, device="auto", train_missing=False) -> pd.DataFrame:
    return holm(book_decisions(profile, seeds, device, train_missing))


# -- what the pages show -------------------------------------------------------------------

def summary(frame: pd.DataFrame, metric: str, scale: float = 1.0, digits: int = 3,
            by: str = "condition") -> pd.Series:
    """'mean [low, high]' (95% t-interval over seeds) of ``metric`` per condition, in the
    order the conditions first appear; '(1 seed)' where there is one."""
    from .stats import summarize
    table = summarize(frame.dropna(subset=[metric]), metric, by=by, scale=scale)

    def cell(row):
        if not np.isfinite(row["low"]):
            return f"{row['mean']:.{digits}f} (1 seed)"
        return f"{row['mean']:.{digits}f} [{row['low']:.{digits}f}, {row['high']:.{digits}f}]"
    return table.apply(cell, axis=1)


def metrics_table(frame: pd.DataFrame, extra: dict | None = None) -> pd.DataFrame:
    """The chapter's main table: cross-entropy at [MASK] first, accuracies beside it."""
    columns = {"CE at [MASK] (nats)": summary(frame, CE),
               "MLM acc. at [MASK] %": summary(frame, "mlm_accuracy_at_mask", 100, 1),
               "MLM acc. %": summary(frame, "mlm_accuracy", 100, 1)}
    table = pd.DataFrame(columns)
    for name, values in (extra or {}).items():
        table[name] = values
    table.index.name = "condition"
    return table


def parameter_count(config) -> int:
    from ..model.params import closed_form
    return int(sum(closed_form(config.model).values()))


def _tokens_text(tokens: float) -> str:
    return f"{tokens / 1e6:.1f}M" if tokens >= 1e6 else f"{tokens:,.0f}"


def scale_gap(frame: pd.DataFrame, config) -> str:
    """One sentence: parameters, steps and tokens of our runs against the paper's."""
    full = frame[frame["steps"] == frame["steps"].max()]
    tokens = float(full["tokens"].mean())
    paper_tokens = paper.PAPER_STEPS * paper.PAPER_BATCH * paper.PAPER_SEQ
    return (f"Scale gap: ours {parameter_count(config) / 1e6:.2f}M parameters (base), "
            f"{int(full['steps'].max()):,} steps, {_tokens_text(tokens)} tokens per run, "
            f"{full['seed'].nunique()} seeds; the paper's ablations 12M (ALBERT-base) to 108M "
            f"parameters, {paper.PAPER_STEPS:,} steps of {paper.PAPER_BATCH} x "
            f"{paper.PAPER_SEQ} tokens ({paper_tokens / 1e9:.0f}B tokens, "
            f"{paper_tokens / tokens:,.0f}x ours), one run per cell.")


def scale_short(frame: pd.DataFrame, config) -> str:
    full = frame[frame["steps"] == frame["steps"].max()]
    return (f"{parameter_count(config) / 1e6:.2f}M params, {int(full['steps'].max()):,} steps, "
            f"{_tokens_text(float(full['tokens'].mean()))} tokens, "
            f"{full['seed'].nunique()} seeds")


def context_reading(frame: pd.DataFrame, profile: str) -> str:
    """How many of a chapter's runs end below the reads-context line (the unigram's
    cross-entropy at [MASK] minus two standard errors) of the common held-out set."""
    rungs = levels(profile)
    below = int((frame[CE] < rungs["reads_context"]).sum())
    share = ("all" if below == len(frame) else "none" if below == 0 else
             f"{below} of {len(frame)}")
    gained = float((rungs["rungs"]["unigram_loss_at_mask"] - frame[CE]).mean())
    text = (f"Of these {len(frame)} runs, {share} end below the unigram's cross-entropy at "
            f"[MASK] by two standard errors, the line that says a model reads context; on "
            f"average they sit {gained:.3f} nats below the unigram rung and "
            f"{rungs['distance'] - gained:.3f} above the left-bigram rung")
    if gained < 0.5 * rungs["distance"]:
        return text + (": models early in learning, less than half way to reading their "
                       "left neighbour, whose differences are differences in how fast they "
                       "learn.")
    return text + "."


def verdict_sentence(d: Decision, family: pd.DataFrame | None = None) -> str:
    """'reproduced (Holm: inconclusive): -0.021 [-0.030, -0.012] nats' for a page."""
    holm_text = ""
    if family is not None and d.key in family.index:
        holm_text = f" (after Holm's adjustment over the book: {family.loc[d.key, 'verdict_holm']})"
    return (f"{d.verdict()}{holm_text}: {interval_text(d.estimate, d.low, d.high, d.unit)} "
            f"{d.unit}, margin ±{d.margin:.3g}")


def margins_text(profile: str) -> dict:
    """The margins and the rungs they come from, as sentences for the rule's prose."""
    reference = levels(profile)
    m = margins(reference)
    r = reference["rungs"]
    return {"ce_margin": f"{m['ce']:.3f}",
            "rungs": (f"the unigram's {r['unigram_loss_at_mask']:.3f} nats and the left "
                      f"bigram's {r['bigram_loss_at_mask']:.3f} nats at [MASK] on the "
                      f"{r['targets']:,} [MASK] targets of the held-out set"),
            "ce_reason": MARGIN_REASONS["ce"]}


# -- downstream, against its three controls -------------------------------------------------

def downstream_controls(profile: str) -> dict:
    """Majority label and bag of words on each task's test split, stored once per
    profile (results_dir/baselines/), as every evaluation scores the same split."""
    from ..profiles import eval_config
    from .baselines import downstream_controls as compute
    examples = eval_config(profile).task_examples
    return {task: stored_baseline(profile, f"downstream-{task}", compute, task, examples)
            for task in ("sentiment", "genre")}


def stored_baseline(profile: str, name: str, function, *arguments) -> dict:
    """A baseline's result from results_dir(profile)/baselines/, computed once."""
    from ..engine.provenance import record
    from ..engine.store import atomic_write_json, config_hash, read_json, results_dir
    key = config_hash({"name": name, "arguments": [str(a) for a in arguments]})
    path = results_dir(profile) / "baselines" / f"{name}-{key}.json"
    stored = read_json(path)
    if stored is None:
        stored = {"result": function(*arguments), "provenance": record()}
        atomic_write_json(path, stored)
    return stored["result"]


def gain_decision(runs: pd.DataFrame, key: str, claim: str, label: str, correct: str,
                  margin: float) -> Decision:
    """Pretrained minus the same architecture from random initialization, on one
    downstream measure (per-item correctness column ``correct``; its control's is
    ``control_<correct>``), over the seeds that have a control."""
    part = runs.dropna(subset=[correct, f"control_{correct}"])
    frame = pd.concat([part.assign(condition="pretrained"),
                       part.assign(condition="random init", **{correct: part[f"control_{correct}"]})])
    return accuracy_decision(frame, key, claim, label, "pretrained", "random init", correct,
                             margin, +1, "pretraining helps (implicit in every Avg)")


def downstream(chapter: Chapter, profile: str) -> Chapter:
    """Adds to a chapter its downstream table: per condition, the frozen-encoder probes
    of sentiment and genre (and fine-tuned sentiment where it was fine-tuned: the base
    runs), each beside the same architecture from random initialization, with the
    majority label and bag of words for the task; and per condition the probe's
    pretrained minus random init (bootstrap over seeds and items, the seeds with a
    control)."""
    runs = chapter.runs
    controls = downstream_controls(profile)
    columns = {"sentiment probe %": "sentiment_probe_accuracy",
               "same, random init %": "control_sentiment_probe_accuracy",
               "genre probe %": "genre_probe_accuracy",
               "genre, random init %": "control_genre_probe_accuracy",
               "sentiment fine-tuned %": "sentiment_accuracy",
               "fine-tuned from random init %": "control_sentiment_accuracy"}
    table = pd.DataFrame({name: summary(runs, metric, 100, 1)
                          for name, metric in columns.items()
                          if metric in runs and runs[metric].notna().any()})
    # the conditions in the chapter's order (columns with fewer rows would sort them)
    table = table.reindex(list(dict.fromkeys(runs["condition"]))).fillna("not evaluated")
    m = margins(levels(profile))
    control = "control_sentiment_probe_correct"
    gains = {name: gain_decision(runs[runs["condition"] == name], f"gain/{name}",
                                 chapter.claim, str(name), "sentiment_probe_correct",
                                 m["downstream"])
             for name in dict.fromkeys(runs["condition"])
             if control in runs and runs.loc[runs["condition"] == name, control].notna().any()}
    table["sentiment probe: pretrained minus random init"] = pd.Series(
        {k: interval_text(d.estimate, d.low, d.high, "points") for k, d in gains.items()},
        dtype=object).reindex(table.index).fillna("no control evaluated")
    table.index.name = "condition"
    s, g = controls["sentiment"], controls["genre"]
    chapter.tables["downstream"] = table
    chapter.tables["downstream_controls"] = pd.DataFrame(
        {"majority label %": [100 * s["majority_accuracy"], 100 * g["majority_accuracy"]],
         "bag of words %": [100 * s["bag_of_words_accuracy"], 100 * g["bag_of_words_accuracy"]]},
        index=pd.Index(["sentiment (test)", "genre (test)"], name="control")).round(1)
    chapter.extra["downstream_gains"] = gains
    chapter.texts["downstream"] = downstream_sentence(runs, gains, s)
    return chapter


def _percent_range(values: pd.Series) -> str:
    """'48.5%' for one value (or equal ones), else '48.5 to 50.1%'."""
    low, high = 100 * values.min(), 100 * values.max()
    return f"{low:.1f}%" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f} to {high:.1f}%"


def downstream_sentence(runs: pd.DataFrame, gains: dict, sentiment: dict) -> str:
    beats = [k for k, d in gains.items() if d.low > 0]
    tuned = runs["sentiment_accuracy"].dropna()
    untrained = runs["control_sentiment_accuracy"].dropna()
    text = (f"On the sentiment test split the majority label scores "
            f"{100 * sentiment['majority_accuracy']:.1f}% and bag of words "
            f"{100 * sentiment['bag_of_words_accuracy']:.1f}%; a probe on these models' "
            f"frozen features scores {100 * runs['sentiment_probe_accuracy'].min():.1f} to "
            f"{100 * runs['sentiment_probe_accuracy'].max():.1f}%")
    if len(tuned):
        text += f", and fine-tuning the base model {_percent_range(tuned)}"
        if len(untrained):
            text += f" (from random initialization: {_percent_range(untrained)})"
    text += ". "
    if beats:
        text += (f"The probe of pretrained features beats the same architecture at random "
                 f"initialization (95% interval above 0) for {', '.join(map(str, beats))}; "
                 f"downstream differences between conditions are read only among those, and "
                 f"the fine-tuned comparison only where fine-tuning beats its control too "
                 f"(the claims ledger tests it for the base model).")
    else:
        text += ("No condition's probe beats the same architecture at random initialization "
                 "(no interval of pretrained minus random init lies above 0): pretraining had "
                 "no measurable downstream effect at this scale, and no downstream comparison "
                 "between pretraining conditions is made.")
    return text


# -- the ledger --------------------------------------------------------------------------

CLAIM_TITLES = {
    "asymmetry": ("3", "Sharing attention is nearly free; sharing the FFN costs (Table 4)",
                  "03_asymmetry"),
    "sop_nsp": ("4", "SOP beats NSP; NSP models only topic (Table 5)", "04_sop_nsp"),
    "dropout": ("5", "Removing dropout helps (Table 8, Figure 2b)", "05_dropout"),
    "wall_clock": ("6", "The wide ALBERT wins at equal compute (Table 6)", "06_wall_clock"),
    "transitions": ("7", "Layer transitions are smoother under sharing (Figure 1)",
                    "07_transitions"),
    "embedding_sweep": ("8", "Not shared improves with E; all-shared best at a small E "
                             "(Table 3)", "08_embedding_size"),
    "downstream": ("-", "Pretraining helps downstream (the premise of every Avg column)",
                   "03_asymmetry"),
}


def ledger_table(family: pd.DataFrame) -> pd.DataFrame:
    """One row per decision, grouped by claim: the paper's figure, ours, the raw and the
    Holm-adjusted verdicts."""
    rows = []
    for key, row in family.iterrows():
        number, title, _ = CLAIM_TITLES[row["claim"]]
        rows.append({"#": number, "claim": title, "decision": row["label"],
                     "paper": row["paper"],
                     "ours": f"{interval_text(row['estimate'], row['low'], row['high'], row['unit'])}"
                             f" {row['unit']}",
                     "margin": f"±{row['margin']:.3g}", "verdict": row["verdict"],
                     "verdict (Holm)": row["verdict_holm"]})
    return pd.DataFrame(rows).set_index(["#", "claim", "decision"])


def verdict_counts(family: pd.DataFrame) -> str:
    """'Of 19 decisions, at 5%: 6 reproduced, ...; after Holm: ...'."""
    def counts(column):
        c = family[column].value_counts()
        return ", ".join(f"{c.get(v, 0)} {v}" for v in ("reproduced", "contradicted",
                                                        "equivalent", "inconclusive"))
    return (f"Of {len(family)} decisions, at 5% each: {counts('verdict')}; after Holm's "
            f"adjustment over the {2 * len(family)} tests of the family: "
            f"{counts('verdict_holm')}.")


def published_profiles(current: str) -> list:
    """The profiles whose stored results cover the whole book: ``current`` first, then
    cpu and gpu where complete (a missing run leaves a profile out). The smoke profile,
    CI's, shows itself only, so that its committed outputs do not depend on which other
    results a checkout holds."""
    from ..engine.store import results_dir
    out = [current]
    if current == "smoke":
        return out
    for profile in ("cpu", "gpu"):
        evaluated = results_dir(profile) / "eval"
        if profile == current or not evaluated.is_dir() or not any(evaluated.iterdir()):
            continue
        try:
            book_decisions(profile)
        except (MissingRuns, FileNotFoundError, TypeError, KeyError):
            continue
        out.append(profile)
    return out


def published_families(current: str, seeds=None, device="auto",
                       train_missing=False) -> dict:
    """{profile: its book_family} for each of ``published_profiles(current)``: ``current``
    at ``seeds`` (training what is missing where ``train_missing``), the others at their
    profile's default seeds."""
    return {p: book_family(p, seeds if p == current else None, device,
                           train_missing and p == current)
            for p in published_profiles(current)}


def stacked(families: dict) -> pd.DataFrame:
    """The families of ``published_families`` in one frame with a ``profile`` column (what
    the forest plot and the compute panels draw)."""
    return pd.concat([family.assign(profile=p) for p, family in families.items()])


def training_hours(profile: str) -> float:
    """Hours of pretraining the profile's stored runs recorded, all of them together."""
    from ..engine.store import read_json, results_dir
    total = 0.0
    for path in (results_dir(profile) / "pretrain").glob("*.json"):
        run = read_json(path)
        total += run["metrics"]["train_seconds"] if run else 0.0
    return total / 3600


def training_compute(profile: str) -> float:
    """Training FLOPs of one base run of the profile (the scale axis of the ledger)."""
    b = C.base(profile)
    return C.step_flops(b) * b.max_steps


def finetune_grid_text(profile: str) -> str:
    """The fine-tuning grid and the pilot's picks, for the methods page."""
    from ..profiles import FINETUNE_GRID, finetune_rates
    rates = finetune_rates(profile)
    grid = ", ".join(f"{lr:g}" for lr in FINETUNE_GRID)
    return (f"{grid} (picked at the `{profile}` profile: {rates['pretrained']:g} for "
            f"pretrained encoders, {rates['untrained']:g} from random initialization)")

"""What the book can and cannot say about ALBERT at its scale (book/scale.md), from the
stored results: the confirmatory models against the count rungs and a bag of words
(``yardsticks_text``), how far each registered cross-entropy difference moved along
training (``early_text``), and what would have to change for a verdict to transfer: the
compute ladder, its stored forecast and how many of its 16x runs are stored
(``transfer_text``). ``gather`` reads the stored results into ``ScaleFacts``;
``scale_page`` writes the page's generated part from them, and ``two_sided_sentence``
the two-sided rung's line for the gate on the how-to-read page.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..chapters.text import times
from ..studies.decisions import agree, interval_text, signed as _signed
from .headlines import term


@dataclass
class ScaleFacts:
    """What the page reads, each part None where the store does not hold it yet.

    ``yardsticks``: the stored two-sided rung (``count_rungs.stored``: its "rung" and the
    "one_sided" rungs of the same targets). ``models``: one row per confirmatory
    condition (columns ``ce``, ``accuracy``, ``sentiment``, ``control_sentiment``: means
    over ``seeds`` seeds). ``sentiment``: the stored sentiment controls (majority label,
    bag of words) on the test split the probes score. ``curves``: per registered
    cross-entropy decision, (label, margin, a seed x share-of-training frame of A minus
    B). ``forecast``: the ladder's stored forecast, by decision key; ``labels`` their
    labels. ``ladder``: ``ladder.progress`` (runs trained and evaluated per rung and arm).
    ``rungs``: the ladder's steps per rung. ``scale``: ``scale.scale_numbers`` of the
    confirmatory runs' profile, whose steps are the ladder's 4x rung."""

    yardsticks: dict | None = None
    models: pd.DataFrame | None = None
    seeds: int = 0
    sentiment: dict | None = None
    curves: list = field(default_factory=list)
    forecast: dict | None = None
    labels: dict = field(default_factory=dict)
    ladder: pd.DataFrame | None = None
    rungs: dict = field(default_factory=dict)
    scale: dict | None = None


# -- the parts --------------------------------------------------------------------------

def _percent(x: float) -> str:
    return f"{100 * x:.1f}%"


def _range(values, unit: str = "%") -> str:
    """'57.4% to 58.9%' of a list of shares (one value: '57.4%')."""
    low, high = f"{100 * min(values):.1f}", f"{100 * max(values):.1f}"
    return f"{low}{unit}" if low == high else f"{low}{unit} to {high}{unit}"


def two_sided_sentence(yardsticks: dict | None) -> str:
    """The two-sided count rung in two sentences, for the gate's description of the
    rungs ("" where it is not stored for the held-out set)."""
    if not yardsticks:
        return ""
    r = yardsticks["rung"]
    return (f"A third rung, the two-sided count rung, fills each gap from both of its "
            f"neighbours, as a masked model can: {r['two_sided_loss_at_mask']:.3f} nats "
            f"and {_percent(r['two_sided_at_mask'])} accuracy at [MASK]. It is a reading "
            f"of where the models stand ({{doc}}`scale`), not a gate.")


def _of(k: int, n: int, verb: str = "ends") -> str:
    """'1 of the 9 ends', '3 of the 9 end', 'All 9 end', 'None of the 9 ends'."""
    plural = {"was": "were", "is": "are"}.get(verb, verb[:-1] if verb.endswith("s") else verb)
    if k == n:
        return f"All {n} {plural}"
    return f"{'None' if k == 0 else k} of the {n} {verb if k <= 1 else plural}"


def _worse(facts: ScaleFacts) -> tuple:
    """(models worse than the two-sided count rung, models), by ``count_rungs.standing``."""
    from ..studies.count_rungs import WORSE, standing
    if not facts.yardsticks or facts.models is None or not len(facts.models):
        return 0, 0
    r = facts.yardsticks["rung"]
    return int(sum(standing(ce, r) == WORSE for ce in facts.models["ce"])), len(facts.models)


def yardsticks_text(facts: ScaleFacts) -> str:
    """The count rungs against the confirmatory models at [MASK], then frozen features
    against a bag of words on sentiment."""
    if not facts.yardsticks:
        return "The count rungs are not stored for the confirmatory runs' held-out set.\n"
    r, one = facts.yardsticks["rung"], facts.yardsticks["one_sided"]
    rows = [("unigram rung: how often each piece occurs", one["unigram_loss_at_mask"],
             one["unigram_at_mask"]),
            ("left-bigram rung: the piece to the left of the gap",
             one["bigram_loss_at_mask"], one["bigram_at_mask"]),
            ("two-sided count rung: both neighbours of the gap",
             r["two_sided_loss_at_mask"], r["two_sided_at_mask"])]
    lines = [f"Every model is scored on one held-out set: {r['targets']:,} positions shown "
             f"as `[MASK]`. Three {term('rung', 'rungs')} that use no network are scored "
             f"on the same positions. Each is a table of counts from the training split. "
             f"The unigram rung knows only how often each piece occurs. The left-bigram "
             f"rung also sees the piece to the left of the gap. The two-sided count rung "
             f"sees both neighbours of the gap, as a masked model does.", ""]
    models = facts.models
    if models is not None and len(models):
        models = models.sort_values("ce")
        rows += [(name, m.ce, m.accuracy) for name, m in models.iterrows()]
    lines += ["| predictor | cross-entropy at [MASK] (nats) | accuracy at [MASK] |",
              "|---|---|---|"]
    lines += [f"| {name} | {ce:.3f} | {_percent(acc)} |" for name, ce, acc in rows]
    if models is None or not len(models):
        lines += ["", "The confirmatory runs are not all stored yet, so no model is shown."]
        return "\n".join(lines) + "\n"
    worse, n = _worse(facts)
    past_bigram = int((models["ce"] < one["bigram_loss_at_mask"]).sum())
    best, best_ce = models.index[0], float(models["ce"].iloc[0])
    lines += ["", f"The models are the {term('confirmatory')} runs, each the mean over its "
              f"{facts.seeds} seeds. {_of(past_bigram, n)} below the left-bigram rung. "
              + _of(worse, n, "is") + " worse than the two-sided count rung, by more than two of its standard "
              f"errors. The best, {best}, ends "
              f"{abs(best_ce - r['two_sided_loss_at_mask']):.3f} nats "
              f"{'above' if best_ce > r['two_sided_loss_at_mask'] else 'below'} it. Their "
              f"accuracy at `[MASK]` is {_range(models['accuracy'])}, against the count "
              f"rung's {_percent(r['two_sided_at_mask'])}."]
    if worse == n:
        lines[-1] += (" So at this scale no model has yet learned what a table of "
                      "neighbour counts knows.")
    s = facts.sentiment
    if s and models["sentiment"].notna().any():
        probe = models["sentiment"].dropna()
        control = models["control_sentiment"].dropna()
        lines += ["", f"Downstream the picture is the same. A {term('probe')} on each "
                  f"model's frozen features scores {_range(probe)} on the sentiment test "
                  f"split ({s['test_examples']:,} examples)."
                  + (f" The {len(control)} models that have a random-init control "
                     f"score {_range(control)} from random initialization."
                     if len(control) else "")
                  + f" A bag of words scores {_percent(s['bag_of_words_accuracy'])}, the "
                  f"majority label {_percent(s['majority_accuracy'])}. The best probe is "
                  f"{100 * (probe.max() - s['majority_accuracy']):.1f} points above the "
                  f"majority label; the bag of words is "
                  f"{100 * (s['bag_of_words_accuracy'] - s['majority_accuracy']):.1f}."]
    return "\n".join(lines) + "\n"


def _change(frame: pd.DataFrame, start: float, end: float):
    """The mean change of a seed x share frame from ``start`` to ``end``, with its 95%
    t-interval over seeds (``stats.inference.mean_interval``)."""
    from ..stats.inference import mean_interval
    return mean_interval((frame[end] - frame[start]).dropna().to_numpy())


def early_text(facts: ScaleFacts) -> str:
    """Each registered cross-entropy difference at its first curve point and at the end,
    its change, and its change over the last quarter of training with its interval."""
    worse, n_models = _worse(facts)
    if n_models and worse == n_models:
        lead = (f"Every verdict of chapters 3 to 6 compares models that are all worse than "
                f"the two-sided count rung: each is {term('stage', 'early training')}.")
    else:
        early = term("stage", "early in training")
        lead = (f"The verdicts of chapters 3 to 6 compare models {early}: {worse} of the "
                f"{n_models} are worse than the two-sided count rung.")
    if not facts.curves:
        return lead + " The confirmatory curves are not all stored yet.\n"
    lines = [lead + " The confirmatory runs also scored each model at every eighth of its "
             "schedule (the figure is on the {doc}`preregistration` page). The table gives "
             "each registered decision on cross-entropy, A minus B in nats, at the first "
             "point and at the end.", "",
             "| decision (A minus B) | margin | at 1/8 of training | at the end | first to "
             "last | last quarter, 95% interval |", "|---|---|---|---|---|---|"]
    moving = []
    for label, margin, frame in facts.curves:
        first, last = min(frame.columns), max(frame.columns)
        quarter = min(frame.columns, key=lambda s: abs(s - 0.75))
        a, b = frame[first].mean(), frame[last].mean()
        q = _change(frame, quarter, last)
        if q.low > 0 or q.high < 0:
            moving.append(label)
        lines.append(f"| {label} | ±{margin:.3f} | {_signed(a, 3)} | {_signed(b, 3)} | "
                     f"{_signed(b - a, 3)} | {interval_text(q.mean, q.low, q.high, 'nats')} |")
    n, k = len(facts.curves), len(moving)
    still = [label for label, _, _ in facts.curves if label not in moving]
    lines += ["", f"This reading is exploratory: it was not registered. "
              f"{_of(k, n, 'was')} still moving when training ended: the change over "
              f"the last quarter of training has a 95% interval that excludes zero."
              + (f" For {'; '.join(still)}, it cannot be told from zero." if still else ""),
              "", "The last quarter is also when the learning rate decays. A change "
              "there shows that the difference had not settled; it does not show that "
              "longer training would keep moving it. That is the compute ladder's "
              "question (below).",
              "", "The points before the end come before the learning rate has decayed, so "
              "they are not what shorter runs would give. The last point is read on the "
              "curve's held-out sequences, so it is close to the verdict's difference but "
              "not equal to it. So each verdict says which model learns faster early on, "
              "at these sizes. It does not say which model is better once trained, nor at "
              "ALBERT's size."]
    return "\n".join(lines) + "\n"


def ladder_counts(ladder: pd.DataFrame | None, rung: str) -> tuple:
    """(runs, trained, evaluated) of one ladder rung."""
    if ladder is None or not len(ladder):
        return 0, 0, 0
    part = ladder[ladder["rung"] == rung]
    return int(part["of"].sum()), int(part["trained"].sum()), int(part["evaluated"].sum())


def sixteen_sentence(ladder: pd.DataFrame | None) -> str:
    """Where the ladder's 16x rung stands, from its stored runs."""
    runs, trained, evaluated = ladder_counts(ladder, "16x")
    if not runs:
        return "The 16x rung's runs are not planned in this store."
    if trained == 0:
        return f"The 16x rung has not trained yet: none of its {runs} runs is stored."
    from ..studies.ladder import settled
    part = ladder[ladder["rung"] == "16x"]
    failed = int(part["diverged"].sum())
    if not settled(part):
        return (f"The 16x rung is training: {trained} of its {runs} runs "
                f"{agree(trained, 'is', 'are')} stored and "
                f"{evaluated} evaluated. Its results are shown only once all are.")
    settled = (f"settled: {evaluated} stored and {failed} listed as diverged" if failed
               else "stored")
    return (f"All {runs} runs of the 16x rung are {settled}. The {{doc}}`ladder` page "
            f"sets them against the forecast." + past_two_sided())


def past_two_sided(store=None, frame: pd.DataFrame | None = None) -> str:
    """' At 16x, 6 of the 8 arms score below the two-sided count rung (5.710 nats), on
    average over their seeds: ...': where the complete 16x rung stands against the
    strongest count rung (issue #38's yardstick; ladder amendment 10), or '' where a
    number is missing. ``frame``: the 16x rung's ``ladder.rung_frame``, where the caller
    has read it already."""
    from ..studies import confirm_design, ladder_curves
    from ..studies import ladder as L
    try:
        level = ladder_curves.rung_level("two-sided")
        frame = L.rung_frame("16x", store) if frame is None else frame
        means = frame.groupby("condition")[confirm_design.CE].mean()
    except (FileNotFoundError, KeyError, confirm_design.NotComplete):
        return ""
    above = [arm for arm in L.ARMS if arm in means and not means[arm] < level]
    text = (f" At 16x, {len(means) - len(above)} of its {len(means)} arms score below the "
            f"two-sided count rung ({level:.3f} nats), on average over their seeds")
    return text + (f"; not yet: {'; '.join(above)}." if above else ".")


def transfer_text(facts: ScaleFacts) -> str:
    """Longer training past the count rungs, the compute ladder and its forecast, and
    what the ladder still leaves out."""
    lines = ["A verdict would begin to speak of trained models once every arm is past "
             "the count rungs: the left-bigram rung first, then the two-sided one. That "
             "needs longer training. The compute ladder, the book's second "
             "pre-registration ({doc}`ladder`), tests what longer training does."]
    steps = facts.rungs
    if steps:
        names = list(steps)
        lines[0] += (f" It runs the same five registered decisions at "
                     f"{', '.join(names[:-1])} and {names[-1]} the training of the `cpu` "
                     f"profile (" + ", ".join(f"{v:,}" for v in steps.values())
                     + " steps). Its 4x rung is the confirmatory runs. For each decision "
                     "it tests the slope of the difference against compute.")
    runs, trained, _ = ladder_counts(facts.ladder, "1x")
    if runs:
        lines[0] += (f" Its 1x rung is complete: all {runs} runs are stored." if trained == runs
                     else f" Its 1x rung is training: {trained} of {runs} runs are stored.")
    if facts.forecast:
        done = ladder_counts(facts.ladder, "16x")
        when = "trained" if done[0] and done[2] == done[0] else "trains"
        lines += ["", f"Before the 16x rung {when}, registered code forecast its mean from "
                  "the two lower rungs, a straight line in log compute. It is shown before "
                  "its test; the ladder's amendment 1 says why. It is in the registered "
                  "sign; chapters 3 and 5 turn their headline, so they show the opposite "
                  "sign:", "",
                  "| decision (A minus B, as registered) | forecast at 16x, 95% prediction "
                  "interval |",
                  "|---|---|"]
        order = list(facts.labels) + [k for k in facts.forecast if k not in facts.labels]
        for key in [k for k in order if k in facts.forecast]:
            f = facts.forecast[key]
            lines.append(f"| {facts.labels.get(key, key)} | "
                         f"{interval_text(f['estimate'], f['low'], f['high'], f['unit'])} "
                         f"{f['unit']} |")
    else:
        lines += ["", "The forecast of the 16x rung is not stored yet."]
    lines += ["", sixteen_sentence(facts.ladder)]
    if facts.scale and "16x" in steps and "4x" in steps:
        n = facts.scale
        ratio = n["paper_flops"] / (n["flops"] * steps["16x"] / steps["4x"])
        lines[-1] += (f" Even the 16x rung trains a base run with {times(ratio)} less "
                      f"compute than ALBERT-base. And the ladder keeps the models' size: "
                      f"{n['params'] / 1e6:.2f}M parameters against ALBERT-base's "
                      f"{n['paper_params'] / 1e6:.0f}M.")
    lines += ["", "So a trend across the ladder says which way an effect travels as "
              "training grows, at this size. For a verdict to carry to ALBERT's scale, "
              "the models would also have to be larger and trained past the count rungs. "
              "Their frozen features would have to beat a bag of words."]
    return "\n".join(lines) + "\n"


def scale_page(facts: ScaleFacts) -> str:
    """The generated body of book/scale.md: the three parts under their headings."""
    return "\n".join(["## What the models can do", "", yardsticks_text(facts),
                      "## Which verdicts are about early learning", "", early_text(facts),
                      "## What would have to change for a verdict to transfer", "",
                      transfer_text(facts)])


# -- from the store ------------------------------------------------------------------------

def seed_curves(frame: pd.DataFrame, spec) -> pd.DataFrame:
    """A cross-entropy decision's paired difference along training, one row per seed and
    one column per share of the schedule (matched as ``confirm_analysis.
    curve_differences`` matches them, whose means these are)."""
    from ..studies.confirm_analysis import schedule_points
    a, b = schedule_points(frame, spec.a), schedule_points(frame, spec.b)
    keys = sorted(set(a) & set(b))
    series = pd.Series({k: a[k][1] - b[k][1] for k in keys})
    return series.unstack() if len(series) else pd.DataFrame()


def stored_sentiment(examples: int) -> dict | None:
    """The sentiment controls (``baselines.downstream_controls``) on the test split that
    ``examples`` selects, as a profile's store holds them: their key is the task and
    ``examples`` alone (``decisions.stored_baseline``), so any profile's copy is the
    same result. None where no profile has stored them; nothing is computed."""
    from ..engine.store import config_hash, read_json
    from ..profiles import PROFILES, resolve
    name = "downstream-sentiment"
    key = config_hash({"name": name, "arguments": ["sentiment", str(examples)]})
    for profile in PROFILES:
        stored = read_json(resolve(profile).results / "baselines" / f"{name}-{key}.json")
        if stored is not None:
            return stored["result"]
    return None


def gather() -> ScaleFacts:
    """The page's facts from the stored results: the confirmatory runs (once all are
    stored), the count rungs of their held-out set, the sentiment controls, the ladder's
    forecast and progress."""
    from ..engine.store import read_json, results_dir
    from ..profiles import resolve
    from ..studies import confirm_analysis as A
    from ..studies import confirm_design as D
    from ..studies import count_rungs
    from ..studies import ladder as L
    from .scale import scale_numbers
    pilot = resolve(D.PILOT_PROFILE)
    facts = ScaleFacts(yardsticks=count_rungs.stored(pilot.evaluation),
                       sentiment=stored_sentiment(pilot.evaluation.task_examples),
                       ladder=L.progress(), rungs=dict(L.RUNGS),
                       labels={s.key: s.label for s in L.DECISIONS},
                       scale=scale_numbers(pilot))
    facts.forecast = (read_json(results_dir(L.STORE) / L.FORECAST) or {}).get("forecast")
    if not A.complete():
        return facts
    frame = A.confirmatory_frame()
    columns = {"ce": D.CE, "accuracy": "mlm_accuracy_at_mask",
               "sentiment": "sentiment_probe_accuracy",
               "control_sentiment": "control_sentiment_probe_accuracy"}
    present = {k: v for k, v in columns.items() if v in frame}
    means = frame.groupby("condition")[list(present.values())].mean()
    facts.models = means.rename(columns={v: k for k, v in present.items()}).reindex(
        columns=list(columns))
    facts.seeds = int(frame.groupby("condition")["seed"].nunique().min())
    rungs = A.rungs()
    check_targets(facts, rungs)
    margins = D.margin_values(rungs)
    facts.curves = [(s.label, margins[s.margin], seed_curves(frame, s))
                    for s in D.PRIMARY if s.kind == "ce"]
    return facts


def check_targets(facts: ScaleFacts, rungs: dict) -> None:
    """The stored rungs must be those of the set the book's gate reads (same targets,
    same unigram and left-bigram cross-entropy)."""
    if not facts.yardsticks:
        return
    one = facts.yardsticks["one_sided"]
    if one["targets"] != rungs["rungs"]["targets"] or not np.isclose(
            one["unigram_loss_at_mask"], rungs["rungs"]["unigram_loss_at_mask"]):
        raise AssertionError("the stored two-sided rung is of another held-out set")


def values() -> dict:
    """The scale page's keys (book/scale.md), for ``budgets.values``."""
    return {}

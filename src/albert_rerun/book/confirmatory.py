"""The confirmatory verdicts as the chapters show them, read only once every run is stored
(the stopping rule): each claim's headline beside the profiles' families, and a chapter's
differences by seed, registered analysis and figure, positive the paper's direction."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..studies import confirm_analysis
from ..studies.confirm_analysis import (ALBERT, ALL64, ATTENTION, BERT, DROPOUT, FFN,  # noqa: F401
                                        NONE32, NSP, PRIMARY, REVERSED, SECONDARY, WIDE)
from ..studies.decisions import unit_digits
from . import plain
from .headlines import EXTRA, HEADLINES

CONFIRMATORY = "confirmatory"  # its name where it stands beside the profiles
ARMS = list(confirm_analysis.CONDITIONS)  # the columns of a pivot of ``runs``
CLAIMS = {"embedding_size": "embedding_sweep"}  # chapter -> registered claim
# said beside the registered verdict's reading, not in its place: the check came after
# the results, and the registration (amendment 1.4) keeps the verdict where it holds
NO_ORDER = "neither model orders cue-free pairs"
SHOWN_UNIT = {"share of range": "ranges"}  # the registered unit, in the glossary's word


def notes(store=None) -> dict:
    """{"budget_only", "sop_nsp_note"} once the design is complete; {} before."""
    if not confirm_analysis.complete(store):
        return {}
    try:
        frame = confirm_analysis.confirmatory_frame(store=store)
    except confirm_analysis.NotComplete:  # no measurement or runs stored (a test's store)
        frame = pd.DataFrame(columns=["condition", "seed"])
    out = {"budget_only": False}
    ratios = confirm_analysis.time_ratios(frame)
    if len(ratios):
        median = round(float(ratios["wide / BERT-style seconds"].astype(float).median()), 2)
        low, high = confirm_analysis.FAIR
        out["budget_only"] = bool(np.isfinite(median) and not low <= median <= high)
    if note := sop_premise(frame):
        out["sop_nsp_note"] = note
    return out


def sop_premise(frame: pd.DataFrame) -> str:
    """``NO_ORDER`` where neither model beats the majority label on cue-free pairs, else ''."""
    above = confirm_analysis.above_majority
    albert = frame[frame["condition"] == ALBERT]
    probe = above(albert, "sop_cuefree_accuracy_probe")
    head = above(albert, "sop_cuefree_accuracy_head")
    other = above(frame[frame["condition"] == NSP], "sop_cuefree_accuracy_probe")
    if probe is None or head is None or not probe.low <= 0 <= probe.high or head.low > 0:
        return ""
    return NO_ORDER if other is None or other.low <= 0 else ""


def _primary(store) -> pd.DataFrame:
    primary = confirm_analysis.confirmatory_families(store)["primary"]
    return primary.assign(holm_tests=confirm_analysis.holm_tests(primary))


def confirmatory_rows(store=None) -> dict:
    """{claim: its first primary row, with ``holm_tests`` and ``note``}; {} before."""
    if not confirm_analysis.complete(store):
        return {}
    primary, noted = _primary(store), notes(store)
    out = {}
    for spec in PRIMARY:
        if spec.claim not in out:
            row = primary.loc[spec.key].copy()
            row["note"] = _note(spec, noted)
            if spec.claim == "wall_clock" and noted.get("budget_only"):
                row["label"] = str(row["label"]).replace("equal time", "fixed step budget")
            out[spec.claim] = row
    return out


def confirmatory_extras(store=None) -> dict:
    """{key: row} of the judged primary decisions in ``EXTRA``; {} before."""
    if not confirm_analysis.complete(store):
        return {}
    primary = _primary(store)
    return {key: primary.loc[key].copy() for key in EXTRA if key in primary.index}


def in_chapter_sign(claim: str, row):
    """A row in its chapter's sign (``REVERSED`` claims negated and relabelled)."""
    row = row.copy()
    row["registered_label"] = row["label"]
    if claim in REVERSED:
        row["estimate"], row["low"], row["high"] = (
            -float(row["estimate"]), -float(row["high"]), -float(row["low"]))
        row["paper_sign"] = -int(row["paper_sign"])
        row["label"] = turned_label(claim, str(row["label"]))
    return row


def turned_label(claim: str, label: str) -> str:
    """A registered label in its chapter's words, keeping what followed its first comma."""
    rest = label.partition(", ")[2]
    return REVERSED[claim] + (f", {rest}" if rest else "")


def confirmatory_family(store=None) -> pd.DataFrame:
    """The confirmatory results as a family indexed by headline key, chapters' sign."""
    rows = [in_chapter_sign(claim, row).rename(HEADLINES[claim].key)
            for claim, row in confirmatory_rows(store).items()]
    rows += [row.rename(key) for key, row in confirmatory_extras(store).items()]
    return pd.DataFrame(rows)


def with_confirmatory(families: dict, store=None) -> dict:
    """``families`` with the confirmatory family first where it is judged."""
    family = confirmatory_family(store)
    return {CONFIRMATORY: family, **families} if len(family) else dict(families)


def confirmatory_secondary(store=None, claims=("transitions", "embedding_sweep")) -> dict:
    """{claim: [secondary rows]} of claims without a primary decision; {} before."""
    if not confirm_analysis.complete(store):
        return {}
    secondary = confirm_analysis.confirmatory_families(store)["secondary"]
    primary_claims = {s.claim for s in PRIMARY}
    out = {}
    for spec in SECONDARY:
        if spec.claim not in primary_claims and spec.claim in claims:
            out.setdefault(spec.claim, []).append(secondary.loc[spec.key])
    return out


def specs(claim: str) -> list:
    """The registered decisions a chapter shows, primary then secondary."""
    registered = (*confirm_analysis.PRIMARY, *confirm_analysis.SECONDARY)
    found = [s for s in registered if s.claim == CLAIMS.get(claim, claim)]
    if claim == "embedding_size":
        found += [s for s in registered if s.key == "explore/sharing-cost-E32"]
    if not found:
        raise KeyError(f"no registered decision for claim {claim!r}")
    return found


def runs(store=None) -> pd.DataFrame:
    """One row per arm and seed, with the transitions' changes; empty until all are stored."""
    if not confirm_analysis.complete(store):
        metrics = {f"change_{s.metric}" if s.kind == "change" else s.metric
                   for s in (*confirm_analysis.PRIMARY, *confirm_analysis.SECONDARY)}
        return pd.DataFrame(columns=["condition", "seed", "train_seconds",
                                     *sorted(metrics)])
    return confirm_analysis.with_changes(confirm_analysis.confirmatory_frame(store=store))


def accuracy(correct) -> float:
    """Percent correct of a per-pair record ('1' right, '0' wrong); NaN without one."""
    if not isinstance(correct, str) or not correct:
        return math.nan
    return 100 * correct.count("1") / len(correct)


def check_by_seed(by_seed: pd.DataFrame, claim: str, store=None) -> pd.DataFrame:
    """``by_seed`` (paper-positive), asserted equal to the registered code's differences."""
    frame = runs(store)
    chosen = specs(claim)[:len(by_seed.columns)]
    for column, spec in zip(by_seed.columns, chosen):
        if not len(frame):
            assert by_seed[column].dropna().empty, "differences shown before the runs"
            continue
        registered = confirm_analysis.per_seed(spec, frame)
        if spec.paper_sign < 0:
            registered = -registered
        mine = by_seed[column].dropna()
        assert list(mine.index) == list(registered.index), (column, spec.key)
        assert (mine - registered).abs().max() < 1e-9, (column, spec.key)
    return by_seed


def _note(spec, noted: dict) -> str:
    if not spec.metric.startswith("sop_cuefree"):  # the NSP probe orders its pairs
        return ""
    return noted.get(f"{spec.claim}_note", "")


def _judged(claim: str, store=None) -> list:
    """[(spec, family name, paper-positive row with its ``note``)] of the claim's decisions."""
    from .headlines import paper_positive
    families = confirm_analysis.confirmatory_families(store)
    noted = notes(store)
    out = []
    for spec in specs(claim):
        name = "primary" if spec in confirm_analysis.PRIMARY else "secondary"
        row = paper_positive(families[name].loc[spec.key])
        row["note"] = _note(spec, noted)
        out.append((spec, name, row))
    return out


def decisions(claim: str, store=None) -> pd.DataFrame:
    """The claim's decisions, paper-positive with one label; the progress before all runs."""
    from .headlines import answer, one_label
    if not confirm_analysis.complete(store):
        table = confirm_analysis.progress(store)
        arms = {a for s in specs(claim) for a in (s.a, s.b)}
        return table.loc[[c for c in table.index if c in arms]]
    rows = []
    for spec, name, row in _judged(claim, store):
        ends = [float(row[k]) for k in ("estimate", "low", "high")]
        d = plain.telling_digits(ends[1:], row["margin"], spec.unit)
        tag = "" if name == "primary" else " (exploratory)"
        unit = SHOWN_UNIT.get(spec.unit, spec.unit)
        rows.append({"decision": row["label"] + tag,
                     "difference [95% interval]": plain.difference(*ends, unit, False, d),
                     "margin": f"±{float(row['margin']):.{d}f}",
                     "plain reading": one_label(answer(row))})
    return pd.DataFrame(rows).set_index("decision")


def figure(by_seed: pd.DataFrame, claim: str, store=None):
    """Each decision's paper-positive differences by seed, mean and interval vs its margin."""
    import matplotlib.pyplot as plt

    from .figures import wrap_phrases
    with plt.rc_context({"font.size": 10}):
        if not confirm_analysis.complete(store):
            fig, ax = plt.subplots(figsize=(6.6, 1.2), dpi=100)
            ax.axis("off")
            table = confirm_analysis.progress(store)
            ax.text(0.5, 0.5, f"{int(table['evaluated'].sum())} of {int(table['of'].sum())}"
                    " confirmatory runs stored: no difference is shown before all are",
                    ha="center", va="center")
            return fig
        judged = _judged(claim, store)
        units = list(dict.fromkeys(spec.unit for spec, *_ in judged))
        fig, axes = plt.subplots(len(units), 1, squeeze=False, dpi=100,
                                 figsize=(6.6, 0.9 + 0.55 * len(judged) + 0.5 * len(units)))
        rng = np.random.default_rng(0)  # the dots' vertical jitter only
        # the notebook's columns are the claim's decisions in order (``check_by_seed``)
        columns = dict(zip((s.key for s in specs(claim)), by_seed.columns))
        for ax, unit in zip(axes[:, 0], units):
            mine = [(spec, name, row) for spec, name, row in judged if spec.unit == unit]
            ax.axvline(0, color="0.4", lw=0.8)
            labels = []
            for y, (spec, name, row) in enumerate(mine):
                column = columns.get(spec.key)
                if column is not None:
                    values = by_seed[column].dropna().to_numpy(float)
                    ax.plot(values, y + rng.uniform(-0.15, 0.15, len(values)), "o",
                            color="0.55", ms=4, zorder=2)
                m = float(row["margin"])  # each decision's own margin, as a band
                ax.fill_between([-m, m], y - 0.42, y + 0.42, color="0.88", lw=0, zorder=0)
                est, low, high = (float(row[k]) for k in ("estimate", "low", "high"))
                ax.plot([low, high], [y, y], color="black", lw=2, zorder=3)
                ax.plot([est], [y], "D", color="black", ms=6, zorder=4)
                tag = "" if name == "primary" else " (exploratory)"
                labels.append(wrap_phrases(row["label"] + tag, 30))
            ax.set_yticks(range(len(mine)), labels)
            ax.set_ylim(len(mine) - 0.5, -0.5)
            shown = SHOWN_UNIT.get(unit, unit)
            ax.set_xlabel(f"positive: the paper's direction, {shown}: seeds (grey dots), mean "
                          f"and 95% interval\n(black); grey band: the decision's margin")
            ax.spines[["top", "right"]].set_visible(False)
        fig.tight_layout()
    return fig


def partial_costs() -> dict:
    """The pilot's partial costs of sharing at E 32 and whether neither exceeds the whole."""
    frame = confirm_analysis.pilot_frame()
    keys = ("explore/attention-free", "explore/ffn-cost", "explore/sharing-cost-E32")
    by_key = {s.key: s for s in confirm_analysis.SECONDARY}
    cost = [float(confirm_analysis.per_seed(by_key[k], frame).mean()) for k in keys]
    return {"attention": f"{cost[0]:+.3f}", "ffn": f"{cost[1]:+.3f}",
            "whole": f"{cost[2]:+.3f}", "fits": max(cost[:2]) <= cost[2]}


def learning_rate_check(store=None) -> dict | None:
    """Chapter 6's learning-rate check ("scores", "best", "registered_best"); None before."""
    scores = confirm_analysis.lr_check_scores(store)
    if scores is None:
        return None
    best = min(scores, key=scores.get)
    return {"scores": ", ".join(f"{scores[r]:.3f} nats at {r:g}" for r in sorted(scores)),
            "best": f"{best:g}", "registered_best": best == confirm_analysis.WIDE_LEARNING_RATE}


def detectable(claim: str, store=None) -> dict:
    """Per undecided primary decision, the smallest difference detected 80% of the time."""
    from ..stats.power import detectable_effect
    if not confirm_analysis.complete(store):
        return {}
    frame = runs(store)
    alpha = confirm_analysis.holm_alpha()
    out = {}
    for spec, name, row in _judged(claim, store):
        if name != "primary" or plain.row_reading(row) != plain.UNDECIDED:
            continue
        diffs = confirm_analysis.per_seed(spec, frame)
        sd, n = float(diffs.std(ddof=1)), len(diffs)
        smallest = detectable_effect(n, alpha) * sd
        d, unit = unit_digits(spec.unit), SHOWN_UNIT.get(spec.unit, spec.unit)
        out[spec.key] = {"sd": f"{sd:.{d}f} {unit}", "seeds": str(n),
                         "alpha": f"{alpha:.3g}", "smallest": f"{smallest:.{d}f} {unit}",
                         "margins": f"{smallest / float(row['margin']):.1f}"}
    return out

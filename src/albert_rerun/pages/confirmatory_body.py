"""The confirmatory runs as a chapter's first evidence under its box (issue #41, section 3).

A chapter shows its registered decisions on the eleven fresh seeds in three steps a
reader can follow: the runs frame (``runs``: one row per arm and seed), the paired
differences by seed, which the notebook computes in a few visible lines of pandas, and
the registered analysis of the same differences (``decisions``: estimate, 95% interval,
margin, plain reading, verdicts; ``figure``: each seed's difference with the mean's
interval). Nothing is computed before every confirmatory run is stored (the stopping
rule): ``runs`` is then empty, the differences are empty, and ``decisions`` gives the
progress counts only.

The secondary decisions are exploratory by registration and are labelled so wherever
they are shown (chapters 7 and 8 have only those).
"""
from __future__ import annotations

import math

import pandas as pd

from ..studies import confirm_analysis, confirm_design
from ..studies.confirm_design import (ALBERT, ALL64, ATTENTION, BERT, DROPOUT, FFN,
                                      NONE32, NSP, WIDE)
from ..studies.decisions import interval_text, unit_digits
from . import plain

__all__ = ["ALBERT", "ALL64", "ATTENTION", "BERT", "DROPOUT", "FFN", "NONE32", "NSP",
           "WIDE", "ARMS", "runs", "accuracy", "specs", "decisions", "figure",
           "check_by_seed", "partial_costs_note", "learning_rate_note"]

ARMS = list(confirm_design.CONDITIONS)  # the columns of a pivot of ``runs``
# the claims whose chapter takes a decision from the registration's secondary family
CLAIMS = {"embedding_size": "embedding_sweep"}


def specs(claim: str, family: str = "both") -> list:
    """The registered decisions of ``claim`` (a chapter's claim key): the primary ones,
    then the secondary ones ("primary", "secondary" or "both"). Chapter 8 also shows
    the secondary cost of sharing every layer at E 32, which it discusses."""
    if family not in ("primary", "secondary", "both"):
        raise ValueError(f"family must be 'primary', 'secondary' or 'both', got {family!r}")
    key = CLAIMS.get(claim, claim)
    primary = [s for s in confirm_design.PRIMARY if s.claim == key]
    secondary = [s for s in confirm_design.SECONDARY if s.claim == key]
    if claim == "embedding_size":
        secondary += [s for s in confirm_design.SECONDARY
                      if s.key == "explore/sharing-cost-E32"]
    if not primary and not secondary:
        raise KeyError(f"no registered decision for claim {claim!r}")
    return {"primary": primary, "secondary": secondary,
            "both": primary + secondary}[family]


def runs(store=None) -> pd.DataFrame:
    """One row per arm and confirmatory seed, with the transition measures' changes
    from their random-init controls; empty (with its key columns) until every
    confirmatory run is stored and evaluated."""
    if not confirm_analysis.complete(store):
        metrics = {f"change_{s.metric}" if s.kind == "change" else s.metric
                   for s in (*confirm_design.PRIMARY, *confirm_design.SECONDARY)}
        return pd.DataFrame(columns=["condition", "seed", "train_seconds",
                                     *sorted(metrics)])
    return confirm_analysis.with_changes(confirm_analysis.confirmatory_frame(store=store))


def accuracy(correct) -> float:
    """Percent correct of a probe's per-pair record ('1' right, '0' wrong); NaN where
    the run has none."""
    if not isinstance(correct, str) or not correct:
        return math.nan
    return 100 * correct.count("1") / len(correct)


def check_by_seed(by_seed: pd.DataFrame, claim: str, store=None) -> pd.DataFrame:
    """The differences by seed a notebook computed, against the registered code's
    (``confirm_analysis.per_seed``) for the decisions of ``claim``, column by column in
    order; raises AssertionError where they differ. Returns ``by_seed``."""
    frame = runs(store)
    chosen = specs(claim)[:len(by_seed.columns)]
    for column, spec in zip(by_seed.columns, chosen):
        if not len(frame):
            assert by_seed[column].dropna().empty, "differences shown before the runs"
            continue
        registered = confirm_analysis.per_seed(spec, frame)
        mine = by_seed[column].dropna()
        assert list(mine.index) == list(registered.index), (column, spec.key)
        assert (mine - registered).abs().max() < 1e-9, (column, spec.key)
    return by_seed


def _premise(spec, caveats: dict) -> str:
    """The failed premise of a decision on cue-free pairs ('' elsewhere)."""
    if not spec.metric.startswith("sop_cuefree"):  # the NSP probe's premise holds
        return ""
    return caveats.get(f"{spec.claim}_premise", "")


def _judged(claim: str, store=None) -> list:
    """[(spec, family name, judged row, premise)] of the claim's decisions."""
    from .confirmatory import confirm_caveats
    families = confirm_analysis.confirmatory_families(store)
    caveats = confirm_caveats(store, families)
    out = []
    for spec in specs(claim):
        name = "primary" if spec in confirm_design.PRIMARY else "secondary"
        out.append((spec, name, families[name].loc[spec.key], _premise(spec, caveats)))
    return out


def decisions(claim: str, store=None) -> pd.DataFrame:
    """The registered analysis of the claim's decisions, one row each (secondary ones
    marked exploratory), rounded for the reader (nats to 3 decimals, points to 1): the
    difference with its 95% interval, the margin, the paper's sign, the plain reading
    and the registered verdict at 5% and after Holm's adjustment over its family. Six
    columns, so that the chapter shows it open (``book.build.MAX_COLUMNS``). Until every run is stored: the progress counts of the arms it compares."""
    if not confirm_analysis.complete(store):
        table = confirm_analysis.progress(store)
        arms = {a for s in specs(claim) for a in (s.a, s.b)}
        return table.loc[[c for c in table.index if c in arms]]
    rows = []
    for spec, name, row, premise in _judged(claim, store):
        d = unit_digits(spec.unit)
        tag = "" if name == "primary" else " (exploratory)"
        rows.append({
            "decision, A minus B": spec.label + tag,
            f"difference [95% interval]": f"{interval_text(float(row['estimate']), float(row['low']), float(row['high']), spec.unit)} {spec.unit}",
            "margin": f"±{float(row['margin']):.{d + 1}f}",
            "paper's sign": {1: "+", -1: "−", 0: "0 (none)"}[int(row["paper_sign"])],
            "plain reading": plain.row_reading(row, premise),
            "verdict at 5%": row["verdict"],
            "after Holm": row["verdict_holm"]})
    return pd.DataFrame(rows).set_index("decision, A minus B")


def figure(by_seed: pd.DataFrame, claim: str, store=None):
    """Each decision's difference by seed (grey dots) and its mean with the 95%
    interval of the registered analysis (black), against its margin (grey band) and
    zero; one row per decision, exploratory ones marked, at the text column's width
    with 10-point text. Before every run is stored, a figure that says so."""
    import matplotlib.pyplot as plt
    import numpy as np
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
            mine = [(spec, name, row) for spec, name, row, _ in judged if spec.unit == unit]
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
                labels.append(_wrap(spec.label + tag))
            ax.set_yticks(range(len(mine)), labels)
            ax.set_ylim(len(mine) - 0.5, -0.5)
            ax.set_xlabel(f"A minus B, {unit}: seeds (grey dots), mean and 95% interval\n"
                          f"(black); grey band: the decision's margin")
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
        fig.tight_layout()
    return fig


def _wrap(text: str, width: int = 30) -> str:
    import textwrap
    return textwrap.fill(text, width, break_on_hyphens=False)


def partial_costs_note(store=None) -> str:
    """Chapter 3's gate assumes that each partial cost of sharing is at most the whole
    cost of sharing every layer; so did the registration's reason for its small margin,
    withdrawn by amendment 11. The pilot's runs (cpu-long, seeds 0-2) say how far that
    holds: the three costs at E 32, from the registered code, in one sentence."""
    frame = confirm_analysis.pilot_frame()
    keys = ("explore/attention-free", "explore/ffn-cost", "explore/sharing-cost-E32")
    by_key = {s.key: s for s in confirm_design.SECONDARY}
    cost = {k: float(confirm_analysis.per_seed(by_key[k], frame).mean()) for k in keys}
    attention, ffn, whole = (cost[k] for k in keys)
    over = [name for name, value in (("attention", attention), ("the FFN", ffn))
            if value > whole]
    if not over:
        return (f"In the confirmatory pilot (cpu-long, seeds 0-2) the partial costs fit "
                f"this assumption: attention alone {attention:+.3f} nats, the FFN alone "
                f"{ffn:+.3f}, every layer {whole:+.3f}.")
    return (f"The confirmatory pilot's runs (cpu-long, seeds 0-2) do not fit this "
            f"assumption. Sharing attention alone cost {attention:+.3f} nats and the FFN "
            f"alone {ffn:+.3f}; sharing every layer cost {whole:+.3f}. The registration's "
            f"reason for its small margin made the same assumption; "
            f"{{ref}}`amendment 11 <amendment-11>` withdraws that reason, and the margin "
            f"stays as registered.")


def learning_rate_note(store=None) -> str:
    """Chapter 6: the registered reason for the wide model's learning rate was wrong when
    it was written (amendment 11); what the check trained afterwards found, from its
    stored scores ('' before they are stored)."""
    scores = confirm_analysis.lr_check_scores(store)
    if scores is None:
        return ""
    best = min(scores, key=scores.get)
    listed = ", ".join(f"{scores[r]:.3f} nats at {r:g}" for r in sorted(scores))
    found = ("the best of the three" if best == confirm_design.WIDE_LEARNING_RATE
             else f"not the best (the best was {best:g})")
    return (f"The registration's reason for the rate 5e-3 was wrong when it was written: "
            f"the sweep it cited had not trained any model to read context "
            f"({{ref}}`amendment 11 <amendment-11>`). The check trained afterwards, one "
            f"seed at the confirmatory length, found 5e-3 {found}: {listed}.")


def power_note(claim: str, store=None) -> str:
    """For each primary decision of ``claim`` that reads undecided: what the design could
    detect, computed after the results from the seeds' own spread (not registered; a
    skeptical review: the registered 81% rested on the pilot's SD). The smallest true
    difference a two-sided paired t over the seeds finds 80% of the time at Holm's
    first-step level over the primary family, in nats and in margins. '' otherwise,
    and before every run is stored."""
    from ..stats.power import detectable_effect
    if not confirm_analysis.complete(store):
        return ""
    frame = runs(store)
    alpha = confirm_design.holm_alpha()
    out = []
    for spec, name, row, premise in _judged(claim, store):
        if name != "primary" or plain.row_reading(row, premise) != plain.UNDECIDED:
            continue
        diffs = confirm_analysis.per_seed(spec, frame)
        sd, n = float(diffs.std(ddof=1)), len(diffs)
        smallest = detectable_effect(n, alpha) * sd
        d = unit_digits(spec.unit)
        out.append(f"After the results, and not registered: for {spec.label}, the "
                   f"differences by seed have an SD of {sd:.{d}f} {spec.unit}. With {n} "
                   f"seeds at Holm's strictest level ({alpha:.3g}), a true difference of "
                   f"{smallest:.{d}f} {spec.unit}, {smallest / float(row['margin']):.1f} "
                   f"margins, would be found 80% of the time. A smaller one could well be "
                   f"missed.")
    return " ".join(out)

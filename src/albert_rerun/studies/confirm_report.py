"""What the confirmatory replication says (book/preregistration.md): the judged families
as tables with the pilot beside them (``results_table``, ``report``: refused until every
run is stored), what amendment 1 reports beside the primary verdicts (``beside_notes``),
the paired differences along training (``curves_figure``) and the equal-time
measurement (``equal_time_sentence``).
"""
from __future__ import annotations

import pandas as pd

from .confirm_analysis import (above_majority, both_families, complete,
                               confirmatory_families, confirmatory_frame, curve_differences,
                               lr_check_scores, pilot_frame, progress, rungs, time_ratios)
from .confirm_design import (ALBERT, CE, DROPOUT, PRIMARY, SECONDARY, WIDE_LEARNING_RATE,
                             NotComplete, equal_time_record, margin_values)

PILOT_NOT_COMPARABLE = {
    "confirm/equal-time": "the pilot's wide model trained a nominal step budget scaled "
                          "from another profile's timing, not equal time measured on one "
                          "machine (section 4: a rough guide only)"}


def _p(value: float) -> str:
    return f"{value:.2g}" if value >= 0.001 else "<0.001"


def results_table(confirmed: pd.DataFrame, pilot: pd.DataFrame, specs=PRIMARY) -> str:
    """The judged family as a markdown table, the pilot beside it: each decision's
    difference with its 95% interval and margin; both raw tests (amendment 1.5: the
    difference test's and the TOST's p) with their Holm-adjusted values; the verdict at
    an unadjusted 5%; the verdict after Holm's adjustment with its stage; and the pilot's
    difference and interval (seeds 0-2, exploratory: no verdict, which the book's own
    cpu-long family gives). Only for a family judged once complete."""
    from .decisions import interval_text
    n = int(confirmed["n_seeds"].max())
    lines = [f"| decision (A minus B) | confirmatory, {n} seeds [95% interval] | p of the "
             f"difference test / of the TOST (after Holm in brackets) | verdict at 5% | "
             f"verdict after Holm | pilot, seeds 0-2 (exploratory) |",
             "|---|---|---|---|---|---|"]
    notes = []
    for spec in specs:
        row, old = confirmed.loc[spec.key], pilot.loc[spec.key]
        tests = f"{_p(row['p_difference'])} / {_p(row['p_equivalence'])}"
        if row["in_family"]:
            tests += (f" [{_p(row['p_difference_holm'])} / "
                      f"{_p(row['p_equivalence_holm'])}]")
        before = f"{interval_text(old['estimate'], old['low'], old['high'], old['unit'])}"
        if spec.key in PILOT_NOT_COMPARABLE:
            notes.append(f"{'†' * (len(notes) + 1)} {PILOT_NOT_COMPARABLE[spec.key]}.")
            before += " " + "†" * len(notes)
        lines.append(
            f"| `{spec.key}`: {spec.label} | "
            f"{interval_text(row['estimate'], row['low'], row['high'], row['unit'])} "
            f"{row['unit']} (margin {row['margin']:.4g}) | {tests} | {row['verdict']} | "
            f"**{row['verdict_staged']}** | {before} |")
    return "\n".join(lines) + "\n" + "".join(f"\n{note}\n" for note in notes)


def holm_tests(judged: pd.DataFrame) -> int:
    """How many tests Holm's adjustment ran over: two for each decision left in the
    family by the gate (a "not testable" decision leaves it)."""
    return 2 * int(judged["in_family"].sum())


def _shortfall(ratios: pd.DataFrame) -> str:
    """'3% less time than' / '4% more time than' / 'as much time as': the median ratio
    in words."""
    median = round(float(ratios["wide / BERT-style seconds"].astype(float).median()), 2)
    if median == 1:
        return "as much time as"
    return f"about {abs(1 - median):.0%} {'less' if median < 1 else 'more'} time than"


def ratios_text(ratios: pd.DataFrame) -> str:
    """'1000 0.70, 1001 1.00; median 0.85; both arms on AMD EPYC': ``time_ratios`` per seed
    (amendment 1.2) and their median, the machines named once where every seed's arms
    shared them (a reader: eleven repeats of one machine hid the numbers), else per seed."""
    column = ratios["wide / BERT-style seconds"]
    machines = list(dict.fromkeys(ratios["machines"]))
    if len(machines) == 1:
        per_seed = ", ".join(f"{seed} {ratio:.2f}" for seed, ratio in
                             zip(ratios["seed"], column))
        where = (f"; both arms on {machines[0]}" if " / " not in machines[0]
                 else f"; wide / BERT-style on {machines[0]}")
    else:
        per_seed = ", ".join(f"{seed} {ratio:.2f} ({machine})" for seed, ratio, machine in
                             zip(ratios["seed"], column, ratios["machines"]))
        where = ""
    return f"{per_seed}; median {column.median():.2f}{where}"


def lr_check_reading(scores: dict, margin: float) -> str:
    """Amendment 1's rule for the learning-rate check: ``scores`` {rate: held-out
    cross-entropy}; the words the equal-time verdict carries, or "" where 5e-3 is within
    the margin of the best."""
    best = min(scores, key=scores.get)
    gap = scores[WIDE_LEARNING_RATE] - scores[best]
    if best == WIDE_LEARNING_RATE or gap <= margin:
        return ""
    return (f"the wide model trained at a learning rate that was not its best, by "
            f"{gap:.3f} nats (the check's best: {best:g})")


def lr_check_words(store=None) -> str | None:
    """Amendment 1.1's words for the equal-time verdict (``lr_check_reading`` at the ce
    margin): None before the check's runs are stored and evaluated."""
    scores = lr_check_scores(store)
    return None if scores is None else lr_check_reading(scores, margin_values(rungs())["ce"])


def beside_notes(frame: pd.DataFrame, store=None) -> list:
    """What amendment 1 reports beside the primary verdicts, read from the confirmatory
    runs: the equal-time seconds ratio of each seed with its machine and the
    learning-rate check (1.1, 1.2); the SOP-trained arm's cue-free SOP probe accuracy
    against the majority label (1.4); the no-dropout arm's held-out minus training
    cross-entropy at [MASK] (1.8, the dropout premise)."""
    from .decisions import interval_text
    from ..stats.inference import mean_interval
    notes = []
    ratios = time_ratios(frame)
    if len(ratios):
        flagged = int(ratios["flagged"].sum())
        notes.append(
            "Equal time (amendment 1.2) reports the wide model's training seconds over the "
            f"BERT-style model's. Per seed: {ratios_text(ratios)}. {flagged} of {len(ratios)} are outside 0.9 "
            f"to 1.1 (flagged). Below 1 the wide model had less time, which favours "
            f"\"contradicted\" (amendment 5.2). Both arms' step counts were fixed, so a "
            f"seed's ratio reflects the machine's load during its two runs, not how much "
            f"either model trained. The median says the fixed budget gave the wide model "
            f"{_shortfall(ratios)} the BERT-style model took.")
    words = lr_check_words(store)
    if words is not None:
        notes.append("Equal time, the learning-rate check (amendment 1.1): "
                     + (words if words else "5e-3 is within the cross-entropy margin of "
                        "the best rate") + ".")
    albert = frame[frame["condition"] == ALBERT]  # SOP-trained, and without dropout
    i = above_majority(albert, "sop_cuefree_accuracy_probe")
    if i is not None:
        notes.append(f"SOP (amendment 1.4): the SOP-trained arm's cue-free SOP "
                     f"probe accuracy minus the majority label's, "
                     f"{interval_text(i.mean, i.low, i.high, 'points')} points over "
                     f"{i.n} seeds.")
    if len(albert) and "train_mlm_loss_at_mask" in albert:
        gap = (frame[CE] - frame["train_mlm_loss_at_mask"]).groupby(
            [frame["condition"], frame["seed"]]).first()
        i = mean_interval(gap.loc[ALBERT])
        note = (f"Dropout, its premise (amendment 1.8): the no-dropout arm's "
                f"held-out minus training cross-entropy at [MASK] is "
                f"{interval_text(i.mean, i.low, i.high, 'nats')} nats over {i.n} seeds")
        both = (pd.concat([gap.loc[ALBERT], gap.loc[DROPOUT]], axis=1).dropna()
                if DROPOUT in gap.index.get_level_values(0) else pd.DataFrame())
        if len(both) >= 2:  # amendment 5.5: chapter 5's measure, paired by seed
            d = mean_interval(both.iloc[:, 0] - both.iloc[:, 1])
            note += (f". That gap minus the dropout arm's is "
                     f"{interval_text(d.mean, d.low, d.high, 'nats')} nats, positive where "
                     f"dropout narrows the gap. A gap appears even without memorising, "
                     f"so this difference is the premise's better reading")
        notes.append(note + ".")
    return notes


def report(store=None) -> str:
    """Both judged families, the pilot beside them (``results_table``), and what
    amendment 1 reports beside the primary verdicts (``beside_notes``); NotComplete until
    every confirmatory run is stored and evaluated (the stopping rule)."""
    if not complete(store):
        table = progress(store)
        raise NotComplete(f"{int(table['evaluated'].sum())} of {int(table['of'].sum())} "
                          f"runs are evaluated: no estimate is computed before all are")
    frame, r = confirmatory_frame(store=store), rungs()  # read once, judged and noted
    families, pilot = both_families(frame, r), both_families(pilot_frame(), r)
    notes = beside_notes(frame, store)
    return (f"Primary family (confirmatory; Holm over "
            f"{holm_tests(families['primary'])} tests: each decision's difference test "
            f"and TOST):\n\n"
            + results_table(families["primary"], pilot["primary"], PRIMARY)
            + "\nBeside the primary verdicts, as amendment 1 asks:\n\n"
            + "".join(f"- {note}\n" for note in notes)
            + f"\nSecondary family (exploratory; Holm over "
            f"{holm_tests(families['secondary'])} tests: each decision's difference test "
            f"and TOST):\n\n"
            + results_table(families["secondary"], pilot["secondary"], SECONDARY))


def curves_figure(frame: pd.DataFrame, rungs: dict, specs=PRIMARY, title: str = ""):
    """One panel per cross-entropy decision of ``specs``, one under another: its paired
    difference along training (``curve_differences``), the margin's band and zero, the
    decision's label (in words) as the panel's title; drawn at the text column's width
    (6.6 in at 100 dpi) with 10-point text, so that every panel is shown over 300 px wide
    (issue #41: four side by side were 81 px each)."""
    import textwrap

    import matplotlib.pyplot as plt
    specs = [s for s in specs if s.kind == "ce"]
    margins = margin_values(rungs)
    with plt.rc_context({"font.size": 10}):
        fig, axes = plt.subplots(len(specs), 1, figsize=(6.6, 0.6 + 1.75 * len(specs)),
                                 dpi=100, sharex=True, squeeze=False)
        for ax, spec in zip(axes[:, 0], specs):
            d = curve_differences(frame, spec)
            m = margins[spec.margin]
            ax.axhspan(-m, m, color="0.88", lw=0)
            ax.axhline(0, color="0.4", lw=0.8)
            ax.fill_between(d["share of training"], d["low"], d["high"], color="C0",
                            alpha=0.25, lw=0)
            ax.plot(d["share of training"], d["mean"], "o-", color="C0", ms=3)
            ax.set_title(textwrap.fill(spec.label, 70), fontsize=10)
            ax.set_ylabel("A minus B\n(nats)")
        axes[-1][0].set_xticks([0.25, 0.5, 0.75, 1.0])
        axes[-1][0].set_xlabel("share of training")
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout()
    return fig


# -- what the chapters say ---------------------------------------------------------------

def equal_time_sentence(record: dict | None) -> str:
    """The stored equal-time measurement in one sentence ("" before it is made)."""
    if not record:
        return ""
    return (f"Equal time was measured on {record['provenance']['machine']['cpu']}: "
            f"{1000 * record['bert_step_seconds']:.1f} ms a step for the BERT-style model, "
            f"{1000 * record['wide_step_seconds']:.1f} ms for the wide one, so the wide "
            f"model trains {record['steps']:,} steps against {record['bert_steps']:,}.")


# Where a registered difference is taken the other way round from the chapter's
# headline (the registration wrote each so that the paper's side is positive), the
# chapter says so next to it: the same comparison, the opposite sign.
REVERSED = {"asymmetry": "attention-shared minus FFN-shared",
            "dropout": "no dropout minus dropout 0.1"}

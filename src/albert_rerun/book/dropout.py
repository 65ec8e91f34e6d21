"""Claim 5 (chapter 5): no dropout against dropout 0.1 (Table 8), and the premise that
the model without dropout does not overfit."""
from __future__ import annotations

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile
from ..studies.decisions import CE, Chapter, available, ce_decision, gated
from .plain import chapter_runs
from .text import metrics_table, passes_over_data, scale_short, summary


def dropout(profile: ResolvedProfile | str, seeds=None, device="auto", train_missing=False,
            present: bool = True) -> Chapter:
    """Claim 5's decisions and runs table."""
    profile, seeds, rungs, m, runs = chapter_runs(profile, C.dropout, seeds, device,
                                                  train_missing)
    runs["overfitting gap"] = runs[CE] - runs["train_mlm_loss_at_mask"]
    b = C.base(profile)
    passes = passes_over_data(runs, b)
    chapter = Chapter("dropout", runs, gated(dropout_decisions(runs, m), runs, rungs,
                                             premise_untestable(passes)))
    table = metrics_table(runs, {
        "training CE at [MASK] (nats)": summary(runs, "train_mlm_loss_at_mask"),
        "gap, held-out minus training (nats)": summary(runs, "overfitting gap")})
    table["paper Avg (xxlarge)"] = table.index.map(
        {"no dropout": paper.TABLE8_AVG["without dropout"],
         "dropout 0.1": paper.TABLE8_AVG["with dropout"]})
    chapter.tables["runs"] = table
    chapter.texts.update(scale=scale_short(runs, b), passes=f"{passes:.2f}")
    return chapter


def dropout_decisions(runs, m: dict) -> list:
    """The effect (no dropout minus dropout 0.1) and the premise (the gaps' difference)."""
    p = paper.TABLE8_AVG
    if not available(runs, "no dropout", "dropout 0.1"):
        return []
    return [ce_decision(runs, "dropout/ce", "dropout", "no dropout minus dropout 0.1",
                        "no dropout", "dropout 0.1", m["ce"], -1,
                        f"{p['without dropout'] - p['with dropout']:+.1f} Avg (xxlarge)"),
            ce_decision(runs, "dropout/premise", "dropout",
                        "overfitting gap (held-out minus training CE at [MASK]), no dropout "
                        "minus dropout 0.1", "no dropout", "dropout 0.1", m["ce"], 0,
                        "does not overfit, even after 1M steps (argued)",
                        metric="overfitting gap", unit="nats")]


def premise_untestable(passes: float) -> dict:
    """The premise gated below one pass over the training tokens (no gap can open)."""
    if passes >= 1:
        return {}
    return {"dropout/premise": f"{passes:.2f} passes over the training tokens: no sequence "
                               f"seen twice, so the design cannot show overfitting"}


def _span(r: dict, counted: bool = True) -> str:
    """'50%' or '50% to 62%' of training, seeds that never passed ``counted``; 'never'."""
    if r["seeds"] == r["never"]:
        return "never"
    low, high = f"{r['low']:.0%}", f"{r['high']:.0%}"
    return (low if low == high else f"{low} to {high}") + (
        f", {r['never']} seeds never" if counted and r["never"] else "")


def crossing(r: dict) -> str:
    """'in all 4 seeds, first at 50% to 62% of training', 'in none of its 4 seeds'."""
    crossed, seeds = r["seeds"] - r["never"], r["seeds"]
    if crossed == 0:
        return f"in none of its {seeds} seeds"
    count = f"in all {seeds} seeds" if crossed == seeds else f"in {crossed} of its {seeds} seeds"
    return f"{count}, first at {_span(r, counted=False)} of training"


def delay_phrase(delay: dict, arm: str) -> str:
    """When ``arm`` first crossed the count rung against the other arm: 'later in every seed'."""
    mine, other = delay.get("a"), delay.get("b")
    when = f" ({_span(mine)} of training against {_span(other)})" if mine and other else ""
    if delay["apart"]:  # a seed that never passed counts as after the end
        return ("later" if delay["later"] == arm else "earlier") + " in every seed" + when
    return "at times that overlap the other arm's" + when

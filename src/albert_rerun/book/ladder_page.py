"""The generated parts of book/ladder.md: the registration record, the progress (counts
only), and the power table the seed counts were chosen on (from the stored design)."""
from __future__ import annotations

import math
from pathlib import Path

from ..studies import ladder as L
from ..studies.decisions import agree, interval_text
from .ladder_result import results_text

RECORD = L.RECORD
MAX = L.MAX_16X


def record_text(root: Path) -> str:
    from .preregistration import record_text as line
    return line(root, RECORD, ", and no ladder run may train")


def progress_text(store=None) -> str:
    """Runs stored per rung: counts, never an estimate."""
    table = L.progress(store)
    failed = int(table["diverged"].sum())
    if L.settled(table):
        lead = ("**Progress**: every run of the 1x and 16x rungs is stored and evaluated"
                + (f", or listed as diverged ({failed})" if failed else "")
                + ". The result below comes from them.")
    else:
        lead = ("**Progress**: counts only. No ladder estimate is computed before every "
                "run of both trained rungs is stored. Two things are shown before that "
                "(amendment 1): the registered forecast of the 16x rung (section 5) and "
                "the 4x rung, which is the confirmatory study's.")
    head = "| rung | runs | trained | evaluated |" + (" diverged |" if failed else "")
    lines = [lead, "", head, "|---" * (5 if failed else 4) + "|"]
    rows = {rung: part for rung, part in table.groupby("rung", sort=False)}
    for rung in L.RUNGS:
        label = f"{rung} ({L.RUNGS[rung]:,} steps, {len(L.SEEDS[rung])} seeds)"
        if rung == "4x":
            lines.append(f"| {label} | the confirmatory runs, complete | | |"
                         + (" |" if failed else ""))
            continue
        part = rows[rung]
        lines.append(f"| {label} | {int(part['of'].sum())} | {int(part['trained'].sum())} | "
                     f"{int(part['evaluated'].sum())} |"
                     + (f" {int(part['diverged'].sum())} |" if failed else ""))
    costs = costs_text(store)
    return "\n".join(lines) + "\n" + (f"\n{costs}" if costs else "")


def rungs_text() -> str:
    """The rungs: steps, tokens a run, passes over the training split, seeds, source."""
    from ..studies import long_pilot
    from ..data.corpus import tokenize_split
    from ..data.tokenizer import Tokenizer
    base = L.configs("4x")[L.confirm_design.ALBERT]
    per_step = base.batch_size * base.max_seq_length
    corpus = len(tokenize_split("train", Tokenizer()).tokens)
    source = {"1x": "trained for this study", "4x": "the confirmatory store, as stored",
              "16x": "trained for this study"}
    lines = ["| rung | steps | tokens a run | passes over the training split | seeds | "
             "source |", "|---|---|---|---|---|---|"]
    rows = [(rung, steps, L.SEEDS[rung], source[rung]) for rung, steps in L.RUNGS.items()]
    rows.append(("long pilot (64x)", long_pilot.STEPS, (long_pilot.SEED,),
                 "exploratory, outside the family"))
    for name, steps, seeds, where in rows:
        tokens = steps * per_step
        seed_text = (f"{seeds[0]} to {seeds[-1]} ({len(seeds)})" if len(seeds) > 1
                     else f"{seeds[0]} (1)")
        lines.append(f"| {name} | {steps:,} | about {tokens / 1e6:.1f}M | "
                     f"{tokens / corpus:.1f} | {seed_text} | {where} |")
    return "\n".join(lines) + (f"\n\nThe training split holds {corpus / 1e6:.2f}M tokens, so "
                               f"the upper rungs see it many times over.\n")


def _number(value, digits: int) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.{digits}f}"


def _power(value) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{100 * value:.0f}%"


def power_text(design: dict | None) -> str:
    """The power table and the budget's choice, from the stored design."""
    if design is None:
        return "**Not yet designed**: `python -m albert_rerun.studies.ladder design`.\n"
    b = design["budget"]
    n16, needed = int(b["16x seeds"]), b["needed"]
    strict = int(b["strict affordable"])
    lines = [f"| decision | 1x mean (SD) | 4x mean (SD) | slope (a) | slope (b) | power (a) "
             f"at {strict} / {n16} / {needed} 16x seeds | power (a), 16x SD twice the 4x, "
             f"at {n16} | power (a), 11 seeds at 1x, at {n16} | power (b) at {n16} / "
             f"{needed} |", "|---|---|---|---|---|---|---|---|---|"]
    for key in [spec.key for spec in L.DECISIONS]:
        row = design["plan"][key]
        digits = 1 if row["unit"] == "points" else 3
        sd = lambda v: "–" if v is None else f"{v:.{digits + (0 if digits == 1 else 1)}f}"
        one = (f"{_number(row['1x mean'], digits)} ({sd(row['1x SD'])})"
               if row["1x seeds"] else f"not measured ({sd(row['1x SD'])}, the 4x SD)")
        lines.append(
            f"| `{key}` ({row['unit']}) | {one} | {_number(row['4x mean'], digits)} "
            f"({sd(row['4x SD'])}) | {_number(row['slope (a)'], digits + 1)} | "
            f"{_number(row['slope (b)'], digits + 1)} | "
            f"{_power(row.get(f'power (a) at {strict}'))} / "
            f"{_power(row[f'power (a) at {n16}'])} / {_power(row.get(f'power (a) at {needed}'))} | "
            f"{_power(row.get(f'power (a), 16x SD twice the 4x, at {n16}'))} | "
            f"{_power(row.get(f'power (a), 11 at 1x, at {n16}'))} | "
            f"{_power(row[f'power (b) at {n16}'])} / {_power(row.get(f'power (b) at {needed}'))} |")
    seen_keys = [k for k, r in design["plan"].items() if (r.get(f"power (b) at {n16}") or 0) >= 0.8]
    seen = (" and ".join(f"`{k}`" for k in seen_keys) or "none") + (" alone" if len(seen_keys) == 1 else "")
    under = " and ".join(f"`{k}`" for k in b["underpowered"]) or "none"
    lines += ["", f"Slopes are per doubling of compute, in the decision's unit. Powers are "
              f"at Holm's first step, with {int(b['1x seeds'])} seeds at 1x.", "",
              f"**The seeds.** The rule needs {needed} seeds at 16x. The budget holds "
              f"{b['affordable']}. So the ladder trains **{n16} seeds at 16x and "
              f"{int(b['1x seeds'])} at 1x**: {b['hours']:.1f} CPU-hours in all, against a "
              f"limit of {b['limit']:.1f}. The long pilot takes {b['pilot hours']:.1f} of "
              f"them, a 1x seed {b['1x hours a seed']:.2f} and a 16x seed "
              f"{b['16x hours a seed']:.1f}.", "",
              f"**How the budget was read.** At a strict {L.BUDGET_HOURS:.0f} hours the "
              f"rule would give {b['strict affordable']} seeds at 16x. Reading \"about "
              f"{L.BUDGET_HOURS:.0f}\" as up to {L.BUDGET_TOLERANCE:.0%} over is what buys "
              f"seed {b['strict affordable'] + 1}. The 1x rung keeps {int(b['1x seeds'])} "
              f"seeds, not 11, by choice: 11 would cost {b['hours with 11 at 1x']:.1f} hours, "
              f"and the column \"11 seeds at 1x\" shows the power they would buy.", "",
              f"**What the cap costs** is the gap between the power at {n16} and at "
              f"{needed} 16x seeds. Even {MAX} seeds at 16x would not give 80% at slope (a) to {under} "
              f"(SOP has no slope (a): its 1x mean was never measured). Their slopes will "
              f"most likely read \"no trend shown\". At slope (b), a change of one margin "
              f"over the ladder, {seen} {'reaches' if len(seen_keys) == 1 else 'reach'} 80% "
              f"at {n16} seeds."]
    return "\n".join(lines) + "\n"


def costs_text(store=None) -> str:
    """'Hours of training stored, each run on one CPU thread: 3.0 for the 48 runs of the 1x rung,
    4.5 for the 4 runs of the 16x rung.' (from the training records alone)."""
    from ..studies.ladder_result import training_costs
    costs = training_costs(store)
    if not len(costs):
        return ""
    parts = [f"{part['hours'].sum():.1f} for the {int(part['runs'].sum())} "
             f"{agree(int(part['runs'].sum()), 'run', 'runs')} of the {rung} rung"
             for rung, part in costs.groupby("rung", sort=False)]
    return "Hours of training stored, each run on one CPU thread: " + ", ".join(parts) + ".\n"


def write_ladder_parts(root: Path) -> list:
    """book/_generated/ladder-{record,progress,rungs,power,result}.md, and the result's
    figure once the ladder is complete."""
    from ..paths import repo_root
    generated = root / "book" / "_generated"
    generated.mkdir(parents=True, exist_ok=True)
    parts = {"record": record_text(repo_root()), "progress": progress_text(),
             "rungs": rungs_text(), "power": power_text(L.stored_design()),
             "result": results_text(generated=generated)
             or "<!-- the result: generated once every ladder run is stored -->\n"}
    from ..pages.budgets import write_budgets_figure
    paths = [p for p in [write_budgets_figure(generated)] if p]
    for name, text in parts.items():
        path = generated / f"ladder-{name}.md"
        path.write_text(text)
        paths.append(path)
    return paths

"""The compute ladder's result as the book shows it (book/ladder.md): the registered
analysis and the tables beside it, read from the store where ``ladder.store_result``
put them once every run was stored (never computed anew), and the hours the runs took,
from their training records alone.

``python -m albert_rerun.studies.ladder_result`` prints them (NotComplete, in a line,
before every run is stored).
"""
from __future__ import annotations

import pandas as pd

from ..engine.store import read_json, results_dir
from . import conditions as C
from . import confirm_analysis
from . import ladder as L

INDEX = {"trend": "key", "sop": "rung"}  # the tables indexed by a column


NOT_STORED = ("every run is stored, but the analysis is not: `python -m "
              "albert_rerun.studies.ladder result` computes and stores it, once")


def result_tables(store=None) -> tuple:
    """({name: table} as ``ladder.compute_result`` gave them, the stored record less its
    tables): read from the store where ``ladder.store_result`` put them. NotComplete
    before every run is stored (the stopping rule), and after, until the result is
    stored: nothing is shown that was not computed once and kept."""
    store = store or results_dir(L.STORE)
    stored = read_json(store / L.RESULT)
    if stored is None:
        L._analysed_seeds(store, False)  # NotComplete before every run is stored
        raise L.NotComplete(NOT_STORED)
    tables = {}
    for name, split in stored["tables"].items():
        table = pd.DataFrame(**split)
        table.index.name = INDEX.get(name)
        tables[name] = table
    return tables, {k: v for k, v in stored.items() if k != "tables"}


def trained_runs(store=None) -> pd.DataFrame:
    """The stored 1x and 16x runs' training records alone, one row per (rung, arm, seed):
    steps, training seconds, tokens and machine. No evaluation or loss is read, so this
    is shown while the ladder trains (``confirm_analysis.trained_runs``' rule)."""
    from ..engine.store import stored_pretrain
    from .decisions import _machine
    store = store or results_dir(L.STORE)
    rows = []
    for rung in ("1x", "16x"):
        for arm, config in L.configs(rung).items():
            for seed in L.SEEDS[rung]:
                run = stored_pretrain(store, C.seeded(config, seed))
                if run is not None:
                    rows.append({"rung": rung, "condition": arm, "seed": seed,
                                 **{k: run["metrics"][k] for k in
                                    ("steps", "train_seconds", "tokens")},
                                 "machine": _machine(run)})
    return pd.DataFrame(rows, columns=["rung"] + confirm_analysis.RUN_COLUMNS)


def training_costs(store=None) -> pd.DataFrame:
    """Per trained rung and arm: runs, steps a run, milliseconds a step, tokens a second
    and hours (``confirm_analysis.training_costs``), from the training records alone."""
    runs = trained_runs(store)
    parts = [confirm_analysis.training_costs(part).assign(rung=rung)
             for rung, part in runs.groupby("rung", sort=False)]
    if not parts:
        return pd.DataFrame(columns=["rung", "condition", "runs", "hours", "tokens/s"])
    out = pd.concat(parts, ignore_index=True)
    return out[["rung"] + [c for c in out.columns if c != "rung"]]



def report(store=None) -> str:
    """The result as text: every table of ``result_tables`` and the training costs."""
    tables, stored = result_tables(store)
    where = (f"stored by {stored['trigger']} at commit {stored['provenance']['git_commit']}"
             + (", an early end" if stored.get("early_end") else ""))
    parts = [(f"The result ({where})", None)] + list(tables.items()) + [
        ("training", training_costs(store))]
    with pd.option_context("display.width", 200, "display.max_columns", None):
        return "\n\n".join(title if table is None else f"{title}\n{table.to_string()}"
                             for title, table in parts)


def main(argv=None) -> int:
    import argparse
    import sys

    from ..cli import one_line
    from .confirm_design import NotComplete
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    try:
        print(report())
    except NotComplete as error:  # the stopping rule, said in a line
        print(one_line(error), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

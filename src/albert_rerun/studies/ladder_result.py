"""The compute ladder's result as the book shows it (book/ladder.md): the registered
analysis and the tables beside it, read from the store where ``ladder.store_result``
put them once every run was stored (never computed anew), and the hours the runs took,
from their training records alone.

``python -m albert_rerun.studies.ladder_result`` prints them (NotComplete, in a line,
before every run is stored); ``--costs`` prints the costs alone, at any time.
"""
from __future__ import annotations

import pandas as pd

from ..engine.store import read_json, results_dir
from . import conditions as C
from . import confirm_analysis
from . import ladder as L

INDEX = {"trend": "key", "sop": "rung", "gap split": "key"}  # the tables indexed by a column


NOT_STORED = ("every run is stored, but the analysis is not: `python -m "
              "albert_rerun.studies.ladder result` computes and stores it, once")


def _numbers(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with each column that JSON stored as numbers and nulls (a column NaN in
    every row reloads as None) read back as floats, so that NaN tests work on it."""
    out = table.copy()
    if not len(out):  # an empty table keeps its columns' types (no value says them)
        return out
    for column in out.columns:
        values = [v for v in out[column] if v is not None]
        if out[column].dtype == object and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out[column] = out[column].astype(float)
    return out


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
        tables[name] = _numbers(table)
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


def costs(store=None) -> str:
    """What the stored 1x and 16x runs cost, from their training records alone (no loss,
    no evaluation, so it is shown while the ladder trains): per rung and arm, runs, ms a
    step, tokens a second and hours; then each seed's equal-time seconds ratio per rung,
    the check of amendment 1.2 of the first registration."""
    runs = trained_runs(store)
    table = training_costs(store)
    ratios = [confirm_analysis.time_ratios(part).assign(rung=rung)
              for rung, part in runs.groupby("rung", sort=False)]
    ratios = pd.concat(ratios, ignore_index=True) if ratios else pd.DataFrame()
    lines = [f"{len(runs)} runs stored, {table['hours'].sum():.2f} hours of training "
             f"(one thread each)"]
    with pd.option_context("display.width", 200, "display.max_columns", None,
                           "display.float_format", "{:.2f}".format):
        lines += [table.to_string(index=False)]
        if len(ratios):
            lines += ["", "wide / BERT-style training seconds, per seed",
                      ratios[["rung"] + [c for c in ratios.columns if c != "rung"]]
                      .to_string(index=False)]
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    from .confirm_design import print_unless_incomplete
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--costs", action="store_true",
                        help="only the training costs, shown while the ladder trains")
    args = parser.parse_args(argv)
    return print_unless_incomplete(lambda: costs() if args.costs else report())


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

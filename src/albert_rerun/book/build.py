"""Execute the claim notebooks with papermill and build the Jupyter Book: ``python -m
albert_rerun.book --profile cpu`` is what ``make book`` runs; ``--notebooks-only`` refreshes
the committed smoke outputs that nbval checks."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..paths import repo_root
from ..profiles import PROFILES, ResolvedProfile, resolve
from ..engine.provenance import record
from .citation import write_citation_page
from .budgets import write_ladder_parts
from .preregistration import write_preregistration_parts
from .rerun import KERNEL
from .template import pipe, write_parts
from .values import write_values


def notebook_sources(root: Path) -> list:
    """The jupytext sources, one per claim, in chapter order."""
    return sorted((root / "notebooks").glob("[0-9][0-9]_*.md"))


def execute(source: Path, output: Path, parameters: dict | None, cwd: Path) -> float:
    """Convert a MyST notebook to .ipynb and run it with papermill; return seconds."""
    import jupytext
    import papermill

    notebook = jupytext.read(source)
    output.parent.mkdir(parents=True, exist_ok=True)
    staging = output.with_suffix(".unexecuted.ipynb")
    jupytext.write(notebook, staging)
    start = time.perf_counter()
    try:
        papermill.execute_notebook(str(staging), str(output), parameters=parameters or {},
                                   kernel_name=KERNEL, cwd=str(cwd), progress_bar=False)
    finally:
        staging.unlink(missing_ok=True)
    return time.perf_counter() - start


# Cell tags that already say how a cell shows; "show-input" (the book's own) keeps code open.
VISIBILITY_TAGS = {"remove-cell", "remove-input", "remove-output", "hide-cell",
                   "hide-input", "hide-output", "show-input"}
PAPERMILL_TAGS = {"parameters", "injected-parameters"}
MAX_COLUMNS = 6  # the widest table the text shows open; wider: a dropdown


def table_columns(cell) -> int:
    """The most cells in one row of any HTML table a code cell outputs (0: none)."""
    import re
    html = "".join("".join(output.get("data", {}).get("text/html", ""))
                   for output in cell.get("outputs", []))
    return max((len(re.findall(r"<t[hd]\b", row))
                for row in re.findall(r"<tr\b.*?</tr>", html, flags=re.S)), default=0)


def fold_code(notebook_path: Path) -> None:
    """Tag an executed chapter for reading: papermill's cells removed, other code cells
    ``hide-input`` unless tagged already, a table over ``MAX_COLUMNS`` ``hide-output``."""
    import nbformat
    notebook = nbformat.read(notebook_path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if PAPERMILL_TAGS & set(tags):
            tags.append("remove-cell")
        elif not VISIBILITY_TAGS & set(tags):
            tags.append("hide-input")
            if table_columns(cell) > MAX_COLUMNS + 1:  # + 1: the index column
                tags.append("hide-output")
    nbformat.write(notebook, notebook_path)


def _generated(root: Path, parts: dict) -> list:
    """``parts`` written into ``book/_generated/`` (``template.write_parts``)."""
    return write_parts(root / "book" / "_generated", parts)


def write_environment_page(root: Path, profile: ResolvedProfile, timings: dict) -> Path:
    """The methods page's record of what built this book, and the chapters' times."""
    info = record()
    rows = [["profile", f"`{profile.name}`: {profile.description}"],
            ["git commit", f"`{info['git_commit']}`"], ["built (UTC)", info["utc_time"]],
            *map(list, info["machine"].items()), *map(list, info["packages"].items())]
    return _generated(root, {
        "environment.md": pipe(["", ""], rows) + "\n",
        "timings.md": pipe(["notebook", "seconds"],
                           [[n, f"{s:.1f}"] for n, s in timings.items()]) + "\n",
        "environment.json": json.dumps({**info, "profile": profile.name,
                                        "timings_s": timings}, indent=1)})[0]


def write_runs_page(root: Path, profile: ResolvedProfile) -> Path:
    """``book/_generated/runs-<profile>.csv``, every published run, and the methods page's
    link to it with its counts."""
    from .provenance import published_runs
    name = f"runs-{profile.name}.csv"
    runs = published_runs(profile.results, profile.evaluation.key)
    evaluations = int(runs["eval_hash"].notna().sum()) if "eval_hash" in runs else 0
    return _generated(root, {name: runs.to_csv(index=False),
                             "runs.md": f"{{download}}`{name} <_generated/{name}>`: "
                             f"{len(runs)} rows ({evaluations} evaluated), {runs.shape[1]} "
                             f"columns, from `data/results/{profile.name}/`.\n"})[1]


def _predicted(profile: ResolvedProfile) -> str:
    """The planned pretraining runs of ``profile`` and the trained ones' predicted time in
    one process, from stored throughput."""
    from ..studies.driver import predicted_seconds
    from ..engine.bench import stored_flop_rate, stored_gpu_bench
    from .rerun import planned
    trained, controls = planned(profile)
    runs = f"{len(trained)} trained + {len(controls)} zero-step controls"
    if profile.name == "smoke":
        return f"{runs}; seconds each, not predicted (start-up bound)"
    kind = "cuda" if profile.name == "gpu" else "cpu"
    seconds = predicted_seconds(trained, kind)
    time = f"{seconds / 3600:.1f} h" if seconds > 5400 else f"{seconds / 60:.1f} min"
    if kind == "cpu":
        return f"{runs}; {time} on one CPU worker (the stored cpu runs' rate)"
    source = ("the gpu-profile bench" if stored_gpu_bench().name.startswith("gpu-profile")
              else "an H200's bare training step, measured at another size than the gpu profile's")
    return (f"{runs}; {time} on one H200, at {stored_flop_rate(kind) / 1e12:.0f} TFLOP/s "
            f"({source})")


def write_profiles_page(root: Path) -> Path:
    """The methods page's table of what each profile trains, read from the code."""
    import pandas as pd

    from ..studies.conditions import CLAIM_SIZES, base, profile_claims

    def column(p: ResolvedProfile) -> dict:
        c, e, t, k = base(p), p.evaluation, p.finetune_config().protocol, CLAIM_SIZES[p.name]
        m = c.model
        return {
            "hidden size H, layers L, heads": f"{m.hidden_size}, {m.num_hidden_layers}, "
                                              f"{m.num_attention_heads}",
            "embedding size E (base; sweep)": f"{m.embedding_size}; "
                                              + ", ".join(map(str, k.embedding_sizes)),
            "sequence length x batch": f"{c.max_seq_length} x {c.batch_size}",
            "steps (warm-up)": f"{c.max_steps:,} ({c.warmup_steps})",
            "optimizer, peak learning rate": f"{c.optimizer}, {c.learning_rate:g}",
            "training documents": c.train_documents or "all",
            "held-out MLM sequences; SOP and NSP test pairs; probe training pairs":
                f"{e.mlm_sequences}; {e.pair_examples}; {e.probe_pairs}",
            "fine-tuning (sentiment): examples, epochs, length":
                f"{t.max_train_examples or 'all'}, {t.epochs}, {t.max_seq_length}",
            "fine-tuning learning rate: pretrained, random init":
                f"{t.learning_rate:g}, {t.untrained_learning_rate:g}",
            "seeds per condition": p.default_seeds,
            # "—" where the profile does not carry chapter 7
            "depth of the transition models (their share of the steps)":
                f"{k.transition_layers} ({k.transition_step_share:g})"
                if "transitions" in profile_claims(p) else "— (not carried)",
            "planned pretraining runs; the trained ones' predicted time in one process":
                _predicted(p)}
    table = pd.DataFrame({f"`{name}`": column(resolve(name)) for name in PROFILES})
    return _generated(root, {"profiles.md": table.to_markdown(
        tablefmt="pipe", disable_numparse=True) + "\n"})[0]


def write_reader_pages(root: Path, profile: ResolvedProfile | str) -> list:
    """``book/_generated/gate.md`` (the how-to-read page's gate) and the scale page's parts."""
    from .scale import two_sided_sentence, write_scale_parts
    from ..studies.count_rungs import stored as stored_two_sided
    from .text import gate_rule
    profile = resolve(profile)
    two_sided = two_sided_sentence(stored_two_sided(profile.evaluation))
    return _generated(root, {"gate.md": gate_rule(profile) + (
        " " + two_sided if two_sided else "") + " (The numbers are the `" + profile.name
        + "` profile's; each chapter gives its own profile's.)\n"}) + write_scale_parts(
        root / "book" / "_generated")


def write_forest(root: Path, profile: ResolvedProfile | str) -> Path:
    """``book/_generated/forest.png``: each chapter's headline decision, the confirmatory
    first where judged, then each profile with stored results."""
    import matplotlib
    matplotlib.use("Agg")
    from . import ledger
    from .confirmatory import with_confirmatory
    from .figures import headline_forest
    return _generated(root, {"forest.png": headline_forest(
        with_confirmatory(ledger.published_families(profile)))})[0]


def finish_chapter(target: Path, stem: str) -> None:
    """An executed chapter made ready for the book: its code folded, its rerun box added."""
    from .rerun import add_rerun_box
    fold_code(target)
    add_rerun_box(target, stem)


def _execute_and_finish(source: Path, target: Path, profile: str) -> float:
    print(f"executing {source.name} at profile {profile!r}", flush=True)
    seconds = execute(source, target, {"profile": profile}, source.parent)
    finish_chapter(target, source.stem)
    return round(seconds, 1)


def recorded_seconds(notebook: Path) -> float:
    """A committed executed notebook's papermill duration (0 where it has none)."""
    import nbformat
    if not notebook.is_file():
        return 0.0
    recorded = nbformat.read(notebook, as_version=4).metadata.get("papermill", {})
    return float(recorded.get("duration") or 0.0)


def execute_chapters(root: Path, profile: ResolvedProfile | str, workers: int | None = None,
                     with_parts: bool = False) -> dict:
    """Run every claim notebook at ``profile`` into book/chapters/, finished for the book,
    one kernel per core, the longest first; ``with_parts``: the generated page parts as one
    more job."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..studies.decisions import levels
    profile = resolve(profile)
    write_profiles_page(root)
    levels(profile)  # the rungs every chapter reads: computed once here, then read from disk
    sources = notebook_sources(root)
    jobs = [(recorded_seconds(s.with_suffix(".ipynb")), s.stem, _execute_and_finish,
             (s, root / "book" / "chapters" / (s.stem + ".ipynb"), profile.name))
            for s in sources]
    if with_parts:  # about a minute of the `cpu` build
        jobs.append((60.0, "parts", write_result_parts, (root, profile.name)))
    # spawned workers: a forked copy of this process (torch's threads started) can hang
    with ProcessPoolExecutor(workers or os.cpu_count() or 1,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(function, *arguments) for _, name, function, arguments
                   in sorted(jobs, key=lambda job: -job[0])}
        timings = {s.stem: futures[s.stem].result() for s in sources}
        if with_parts:
            futures["parts"].result()
    return timings


def render_committed_chapters(root: Path, committed: Path) -> dict:
    """The chapters as ``execute_chapters(root, "smoke")`` writes them, from the executed
    notebooks committed in ``committed`` (parameterized, not executed again); timings as
    recorded."""
    import papermill

    write_profiles_page(root)
    timings = {}
    for source in notebook_sources(root):
        executed = committed / (source.stem + ".ipynb")
        target = root / "book" / "chapters" / executed.name
        target.parent.mkdir(parents=True, exist_ok=True)
        papermill.execute_notebook(str(executed), str(target), parameters={"profile": "smoke"},
                                   kernel_name=KERNEL, prepare_only=True, progress_bar=False)
        timings[source.stem] = round(recorded_seconds(executed), 1)
        finish_chapter(target, source.stem)
    return timings


def refresh_committed_notebooks(root: Path) -> None:
    """Re-execute notebooks/*.ipynb at smoke for nbval: a fresh store, one torch thread."""
    import tempfile
    os.environ["ALBERT_RERUN_RESULTS"] = tempfile.mkdtemp(prefix="albert-rerun-smoke-")
    os.environ["ALBERT_RERUN_THREADS"] = "1"
    for source in notebook_sources(root):
        print(f"executing {source.name} at its default (smoke) parameters", flush=True)
        execute(source, source.with_suffix(".ipynb"), None, source.parent)


def write_result_parts(root: Path, profile: ResolvedProfile | str) -> None:
    """Every page part the build generates from stored results into book/_generated/."""
    profile = resolve(profile)
    for write in (write_runs_page, write_forest, write_reader_pages):
        write(root, profile)
    for write in (write_citation_page, write_preregistration_parts, write_ladder_parts):
        write(root)
    write_values(root, profile)


def write_generated_parts(root: Path, profile: ResolvedProfile | str,
                          timings: dict) -> None:
    """Every page part the build generates, after the chapters executed (``make book`` and
    the tests' smoke build alike)."""
    write_environment_page(root, resolve(profile), timings)
    write_result_parts(root, profile)


def build_html(root: Path, repository: str | None = None, output: Path | None = None) -> None:
    """jupyter-book build with warnings as errors; ``repository`` (owner/name) adds its
    buttons; ``output``: build into ``output/_build/html``."""
    from .rerun import repository_config
    jb = Path(sys.executable).with_name("jupyter-book")
    command = [str(jb) if jb.exists() else "jupyter-book", "build", str(root),
               "-W", "-n", "--keep-going"]
    if repository:
        command += ["--config", str(repository_config(root, repository))]
    if output:
        command += ["--path-output", str(output)]
    subprocess.run(command, check=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="cpu", choices=tuple(PROFILES))
    parser.add_argument("--root", type=Path, default=None, help="repository root")
    parser.add_argument("--notebooks-only", action="store_true",
                        help="refresh notebooks/*.ipynb at the smoke profile and stop")
    parser.add_argument("--no-html", action="store_true", help="execute, do not build")
    parser.add_argument("--repository", default=None, metavar="OWNER/NAME",
                        help="the GitHub repository the book is published from: its button "
                             "and the chapters' launch buttons (none without it)")
    parser.add_argument("--fresh", action="store_true",
                        help="recompute every stored run and measurement")
    args = parser.parse_args(argv)
    root = (args.root or repo_root()).resolve()
    if args.notebooks_only:
        refresh_committed_notebooks(root)
        return 0
    if (root / "_build" / "html").exists():
        shutil.rmtree(root / "_build" / "html")  # no stale page survives a rebuild
    # train first, in parallel workers; the notebooks then only read stored results
    from ..studies.driver import train_all
    profile = resolve(args.profile)  # once: every step below takes the resolved profile
    train_all(profile, fresh=args.fresh)
    timings = execute_chapters(root, profile, with_parts=True)
    write_environment_page(root, profile, timings)
    if not args.no_html:
        build_html(root, args.repository)
        print(f"book built: {root / '_build' / 'html' / 'index.html'}")
    return 0


if __name__ == "__main__":
    from ..cli import run_main
    raise SystemExit(run_main(main))

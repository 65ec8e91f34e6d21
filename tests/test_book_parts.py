"""The book's parts that need no build: the chapters' provenance footer, the runs CSV,
the folding of chapter code and the Sphinx extension that gives each script once."""
import json

import nbformat
import pandas as pd
import pytest

from albert_rerun.book.build import fold_code
from albert_rerun.book.provenance import chapter_footer, flatten, published_runs
from albert_rerun.engine.provenance import short_commit
from albert_rerun.profiles import resolve

COMMIT = "feeb047099834fc58667fadd4c43a09f45c9eea6"


def runs_frame():
    """Four rows read by a chapter: three distinct runs (one used by two conditions)."""
    return pd.DataFrame({"condition": ["a", "b", "c", "d"], "hash": ["h1", "h2", "h3", "h3"],
                         "machine": ["NVIDIA H200", "NVIDIA H200", "Intel Xeon", "Intel Xeon"],
                         "commit": [COMMIT, COMMIT, "abcdef0" * 5 + "abcde+dirty",
                                    "abcdef0" * 5 + "abcde+dirty"]})


def test_footer_counts_distinct_runs_machines_commits_and_gives_the_command():
    text = chapter_footer(runs_frame(), "cpu", ["asymmetry", "grouped"])
    assert "read 3 stored results of the `cpu` profile" in text
    assert "NVIDIA H200 (2 runs), Intel Xeon (1 run)" in text
    # a dirty tree is data in the runs CSV, not prose (issue #41)
    assert "`feeb047` (2 runs)" in text and "`abcdef0` (1 run)" in text
    assert "+dirty" not in text
    assert ("```bash\npython -m albert_rerun.studies --profile cpu --claims asymmetry "
            "grouped --fresh\n```") in text


def test_footer_refuses_what_it_cannot_describe():
    with pytest.raises(ValueError, match="machine"):
        chapter_footer(runs_frame().drop(columns="machine"), "cpu", ["dropout"])
    with pytest.raises(ValueError, match="no stored results"):
        chapter_footer(runs_frame().iloc[:0], "cpu", ["dropout"])
    with pytest.raises(ValueError, match="claims"):
        chapter_footer(runs_frame(), "cpu", ["no-such-claim"])


def test_short_commit():
    assert short_commit(COMMIT) == "feeb047"
    assert short_commit(COMMIT + "+dirty") == "feeb047+dirty"
    assert short_commit("unknown") == "unknown"


def test_flatten_keeps_scalars_and_drops_per_item_records():
    flat = flatten({"model": {"hidden_size": 64, "act": "gelu"}, "curve": [1, 2],
                    "sentiment_correct": "01" * 100, "p": None, "ok": True})
    assert flat == {"model.hidden_size": 64, "model.act": "gelu", "p": None, "ok": True}


def _store(tmp_path):
    def write(path, payload):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(payload))
    run = {"hash": "h1", "config": {"seed": 0, "model": {"hidden_size": 64}},
           "metrics": {"steps": 20, "train_seconds": 1.5}, "curve": [{"step": 1}],
           "provenance": {"git_commit": COMMIT, "machine": {"cpu": "Xeon"}},
           "wall_seconds": 2.0}
    write(tmp_path / "pretrain" / "h1.json", run)
    write(tmp_path / "pretrain" / "h2.json", {**run, "hash": "h2"})
    for key in ("e-old", "e-new"):
        write(tmp_path / "eval" / key / "h1.json",
              {"eval_hash": key, "metrics": {"mlm_accuracy": 0.5, "sop_head_correct": "1" * 99,
                                             "transition_l2": [0.1, 0.2]}})
    return tmp_path


def test_published_runs_one_row_per_run_and_evaluation(tmp_path):
    runs = published_runs(_store(tmp_path), current_eval="e-new")
    assert len(runs) == 3  # h1 twice (two evaluations), h2 not evaluated
    assert {"config.model.hidden_size", "pretrain.steps", "machine.cpu", "commit",
            "eval.mlm_accuracy"} <= set(runs.columns)
    assert not {"curve", "eval.sop_head_correct", "eval.transition_l2"} & set(runs.columns)
    h1 = runs[runs["hash"] == "h1"].set_index("eval_hash")
    assert h1.loc["e-new", "eval_current"] and not h1.loc["e-old", "eval_current"]
    assert runs.loc[runs["hash"] == "h2", "eval_hash"].isna().all()


def test_fold_code_hides_inputs_and_removes_papermills_cells(tmp_path):
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("profile = 'smoke'", metadata={"tags": ["parameters"]}),
        nbformat.v4.new_code_cell("profile = 'cpu'", metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_code_cell("print(1)"),
        nbformat.v4.new_code_cell("print(2)", metadata={"tags": ["remove-input"]})])
    path = tmp_path / "chapter.ipynb"
    nbformat.write(notebook, path)
    fold_code(path)
    tags = [c.metadata.get("tags") for c in nbformat.read(path, as_version=4).cells]
    assert tags == [None, ["parameters", "remove-cell"], ["injected-parameters", "remove-cell"],
                    ["hide-input"], ["remove-input"]]


def test_fold_code_puts_a_table_wider_than_six_columns_in_a_dropdown(tmp_path):
    import pandas as pd
    slim = pd.DataFrame({f"c{i}": [1.0] for i in range(6)})
    wide = pd.DataFrame({f"c{i}": [1.0] for i in range(7)})

    def shown(frame):
        return nbformat.v4.new_code_cell("frame", outputs=[nbformat.v4.new_output(
            "execute_result", {"text/html": frame.to_html(), "text/plain": "frame"},
            execution_count=1)])
    notebook = nbformat.v4.new_notebook(cells=[shown(slim), shown(wide)])
    path = tmp_path / "chapter.ipynb"
    nbformat.write(notebook, path)
    fold_code(path)
    tags = [c.metadata.get("tags") for c in nbformat.read(path, as_version=4).cells]
    assert tags == [["hide-input"], ["hide-input", "hide-output"]]


def test_each_script_once_whether_its_missing_file_name_is_none_or_empty():
    from sphinx.builders.html._assets import _JavaScript

    from albert_rerun.book.sphinx_assets import unique_scripts
    body = {"body": "const THEBE_JS_URL = 1"}
    scripts = [_JavaScript("_static/doctools.js", priority=200), _JavaScript(None, **body),
               _JavaScript("", **body), _JavaScript("_static/doctools.js", priority=200),
               _JavaScript("", body="const other = 2")]
    context = {"script_files": scripts}
    unique_scripts(None, "page", "page.html", context, None)
    assert context["script_files"] is scripts  # changed in place
    assert [(s.filename, s.attributes.get("body")) for s in scripts] == [
        ("_static/doctools.js", None), (None, "const THEBE_JS_URL = 1"), ("", "const other = 2")]


def test_profiles_page_gives_each_profiles_planned_runs_and_predicted_time(tmp_path):
    from albert_rerun.book.build import write_profiles_page
    from albert_rerun.studies.conditions import step_flops
    from albert_rerun.studies.driver import planned_pretraining
    from albert_rerun.engine.bench import stored_flop_rate
    from albert_rerun.profiles import PROFILES

    rows = write_profiles_page(tmp_path).read_text().splitlines()
    assert all(f"`{p}`" in rows[0] for p in PROFILES)
    predicted = next(r for r in rows if r.startswith("| planned pretraining runs;"))
    cells = dict(zip(PROFILES, [c.strip() for c in predicted.strip("|").split("|")][1:]))
    for profile, cell in cells.items():
        configs = [c for stage in planned_pretraining(resolve(profile)).values() for c in stage]
        trained = [c for c in configs if c.max_steps > 0]
        assert 0 < len(trained) < len(configs)  # every profile plans zero-step controls
        assert cell.startswith(f"{len(trained)} trained + {len(configs) - len(trained)} "
                               "zero-step controls; "), (profile, cell)
        if profile == "smoke":
            assert "not predicted" in cell
            continue
        kind = "cuda" if profile == "gpu" else "cpu"
        seconds = sum(step_flops(c) * c.max_steps for c in trained) / stored_flop_rate(kind)
        number, unit = cell.split("; ")[1].split()[:2]
        scale = {"h": 3600, "min": 60}[unit]  # printed to one decimal of its unit
        assert float(number) * scale == pytest.approx(seconds, abs=0.05 * scale)


def test_generated_parts_are_written_as_text_figure_or_placeholder(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from albert_rerun.book.template import write_parts
    fig, _ = plt.subplots()
    paths = write_parts(tmp_path / "g", {"a.md": "| x |\n", "b.png": fig, "c.png": None})
    assert [p.name for p in paths] == ["a.md", "b.png", "c.png"]
    assert paths[0].read_text() == "| x |\n"
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in paths[1:])
    assert not plt.fignum_exists(fig.number)  # closed once written


def test_the_environment_record_and_the_chapters_times_are_two_tables(tmp_path):
    from albert_rerun.book.build import write_environment_page
    page = write_environment_page(tmp_path, resolve("smoke"), {"03_asymmetry": 12.34})
    assert "| profile | `smoke`: " in page.read_text()
    times = (tmp_path / "book" / "_generated" / "timings.md").read_text()
    assert "| 03_asymmetry | 12.3 |" in times
    assert json.loads((page.parent / "environment.json").read_text())["timings_s"] == {
        "03_asymmetry": 12.34}

"""The command lines stop on bad input with one line and a non-zero status, no traceback."""
import os
import subprocess
import sys

import pytest

from albert_rerun.cli import EXIT_BAD_INPUT, one_line, run_main
from albert_rerun.data.files import DataError
from albert_rerun.engine.store import WeightsError


@pytest.mark.parametrize("error", [DataError("data/corpus/x is corrupt:\n rebuild it"),
                                   WeightsError("weights.safetensors does not match"),
                                   ValueError("parameter 'seeds' must be >= 1")])
def test_a_user_error_is_one_line_on_stderr_and_exit_2(error, capsys, monkeypatch):
    monkeypatch.delenv("ALBERT_RERUN_TRACEBACK", raising=False)

    def main(argv):
        raise error
    assert run_main(main, []) == EXIT_BAD_INPUT != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {type(error).__name__}: ")
    assert "Traceback" not in captured.err and " ".join(str(error).split()) in lines[0]


def test_a_bug_keeps_its_traceback_and_debugging_can_ask_for_one(monkeypatch):
    def broken(argv):
        raise KeyError("a bug, not the user's input")
    with pytest.raises(KeyError):
        run_main(broken)
    monkeypatch.setenv("ALBERT_RERUN_TRACEBACK", "1")

    def bad_data(argv):
        raise DataError("corrupt")
    with pytest.raises(DataError):
        run_main(bad_data)


def test_success_passes_the_status_through():
    assert run_main(lambda argv: 0) == 0 and run_main(lambda argv: 3) == 3


def test_one_line_joins_the_message_lines():
    assert one_line(DataError("a\n  b")) == "error: DataError: a b"


def test_a_corrupt_corpus_stops_the_training_command_in_one_line(data_copy, flip_byte,
                                                                 tmp_path):
    """The issue's case: `python -m albert_rerun.train` on a corrupt corpus printed the
    DataError under a traceback."""
    flip_byte(data_copy("corpus/train.jsonl.xz"))
    env = {**os.environ, "ALBERT_RERUN_ROOT": os.environ["ALBERT_RERUN_ROOT"]}
    env.pop("ALBERT_RERUN_TRACEBACK", None)
    done = subprocess.run([sys.executable, "-m", "albert_rerun.train", "--profile", "smoke",
                           "--store", str(tmp_path / "store"), "--device", "cpu"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == EXIT_BAD_INPUT, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "corpus/train.jsonl.xz is corrupt" in lines[0]
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("module", ["studies/__main__.py", "book/__main__.py", "train.py",
                                    "studies/driver.py", "studies/confirm.py",
                                    "book/build.py", "engine/bench.py",
                                    "engine/distributed.py"])
def test_every_command_line_goes_through_run_main(module):
    from albert_rerun.paths import repo_root
    text = (repo_root() / "src" / "albert_rerun" / module).read_text()
    assert "raise SystemExit(run_main(main))" in text


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--seeds", "-2"], ["--seeds", "two"],
                                  ["--workers", "0"]])
def test_a_count_below_one_stops_the_driver_before_anything_runs(argv, capsys):
    """`--seeds 0` once fell back to the profile's default seeds without a word."""
    from albert_rerun.studies.driver import main
    with pytest.raises(SystemExit) as stop:
        main(["--profile", "smoke", *argv])
    assert stop.value.code == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert argv[0] in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("usage:")]) == 1


def test_positive_int_accepts_counts():
    from albert_rerun.cli import positive_int
    assert positive_int("3") == 3

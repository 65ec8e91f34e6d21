"""The driver's wall-clock budget (``--hours``) at the smoke profile: no run starts that
its prediction says cannot end in time, what finished is stored, and the same call
later trains only what is missing."""
import time

import pytest

from albert_rerun.studies import conditions as C
from albert_rerun.studies import driver, training
from albert_rerun.engine import runner
from albert_rerun.engine.store import config_hash, results_dir, stored_pretrain
from albert_rerun.profiles import resolve

# every test in an empty results store of its own: the process's store holds the smoke
# runs and evaluations nbval's notebooks made, where this file runs on the worker that
# ran them (under load, xdist's scheduler did that)
pytestmark = pytest.mark.usefixtures("single_thread", "results")


def _echo(x):
    return x


def test_the_runner_starts_no_job_predicted_to_end_after_the_budget():
    finish_by = time.time() + 60
    jobs = [("short", _echo, (1,), 1.0), ("long", _echo, (2,), 600.0),
            ("unpredicted", _echo, (3,))]
    outcomes = dict(runner.run_many(jobs, 1, finish_by=finish_by))
    assert outcomes["short"][0] == 1 and outcomes["unpredicted"][0] == 3
    assert outcomes["long"] is None  # reported as not started, nothing run
    assert dict(runner.run_many(jobs, 1))["long"][0] == 2  # without a budget it runs


DROPOUT = C.seeded(C.dropout(resolve("smoke"))["dropout 0.1"], 0)
LONG_RUN = config_hash(DROPOUT.to_dict())


@pytest.fixture
def trained(monkeypatch) -> list:
    """The hashes of the runs the driver starts, in order; the smoke dropout run of seed
    0 is predicted at 10,000 s, every other run at 0."""
    monkeypatch.setattr(training, "remaining_seconds", lambda config, store, device: (
        10_000.0 if config_hash(config.to_dict()) == LONG_RUN else 0.0))
    started = []
    real_job = training.pretrain_job

    def spy(config_dict, *arguments):
        started.append(config_hash(config_dict))
        return real_job(config_dict, *arguments)
    monkeypatch.setattr(training, "pretrain_job", spy)
    return started


def test_a_budget_stops_between_runs_and_the_same_call_resumes(trained):
    """Base and dropout runs of one seed; the dropout run is predicted not to fit."""
    dropout, long_run = DROPOUT, LONG_RUN
    store = results_dir("smoke")
    call = dict(profile="smoke", seeds=1, names=["dropout"], workers=1,
                stages=("pretrain",))
    driver.train_all(**call, hours=1.0)  # 3,600 s: the 10,000 s run does not start
    assert long_run not in trained
    assert stored_pretrain(store, dropout) is None
    assert stored_pretrain(store, C.seeded(C.base("smoke"), 0)) is not None
    first = len(trained)
    driver.train_all(**call)  # the same call, no budget: only what is missing
    assert trained[first:] == [long_run]
    assert stored_pretrain(store, dropout) is not None


def test_fill_starts_a_run_that_cannot_end_in_the_budget_while_time_is_left(trained,
                                                                         results):
    """--fill: the 10,000 s run starts under a 1 h budget (here it ends in seconds; on a
    real budget it would stop at the deadline with a checkpoint, as the interrupted run
    of test_engine's resume tests), and nothing starts with under
    FILL_START_SECONDS left."""
    dropout, long_run = DROPOUT, LONG_RUN
    call = dict(profile="smoke", seeds=1, names=["dropout"], workers=1,
                stages=("pretrain",))
    driver.train_all(**call, hours=(training.FILL_START_SECONDS - 30) / 3600, fill=True)
    assert long_run not in trained  # under 5 minutes left when it would start
    driver.train_all(**call, hours=1.0, fill=True)
    assert trained[-1] == long_run
    assert stored_pretrain(results_dir("smoke"), dropout) is not None


def test_the_command_line_refuses_fill_without_a_budget(capsys):
    with pytest.raises(SystemExit):
        driver.main(["--profile", "smoke", "--fill"])
    assert "--fill needs --hours" in capsys.readouterr().err


def test_the_budget_bounds_training_and_the_evaluations_follow_it():
    """A stretch that trains to its deadline still evaluates what is stored (the first
    cpu-long stretches evaluated nothing: the evaluations were cut by the same
    deadline). Here the budget is already spent when the evaluate stage begins."""
    from albert_rerun.engine.store import stored_eval
    from albert_rerun.profiles import eval_config
    call = dict(profile="smoke", seeds=1, names=["dropout"], workers=1)
    driver.train_all(**call, stages=("pretrain",))
    store, evaluation = results_dir("smoke"), eval_config("smoke")
    runs = driver.planned_runs(resolve("smoke"), range(1), ["dropout"])
    assert all(stored_eval(store, config_hash(r.to_dict()), evaluation) is None for r in runs)
    driver.train_all(**call, stages=("pretrain", "evaluate"), hours=1e-9)
    for config in runs + driver.planned_controls(runs):
        assert stored_eval(store, config_hash(config.to_dict()), evaluation) is not None


def test_a_resumed_run_is_predicted_from_its_checkpoint(monkeypatch):
    config = C.seeded(C.base("cpu-long"), 0)
    store = results_dir("cpu-long")
    whole = training.remaining_seconds(config, store, "cpu")
    workdir = store / "checkpoints" / config_hash(config.to_dict())
    workdir.mkdir(parents=True)
    (workdir / "progress.json").write_text('{"step": 16200}')  # three quarters done
    assert training.remaining_seconds(config, store, "cpu") == pytest.approx(whole / 4)
    assert whole > 0


def test_the_command_line_refuses_a_budget_that_is_not_positive(capsys):
    with pytest.raises(SystemExit):
        driver.main(["--profile", "smoke", "--hours", "0"])
    assert "--hours must be a positive number" in capsys.readouterr().err

"""The ladder's descriptions after its result (book/ladder.md, amendment 10): when each
16x run's held-out curve first scores below a count rung, whether a decision's arms
left the loss plateau apart (``studies.ladder``)."""
import numpy as np
import pandas as pd
import pytest

from albert_rerun.studies import confirm_analysis as D
from albert_rerun.studies import ladder as C

SPEC = {s.key: s for s in D.PRIMARY}


def _run(arm: str, seed: int, losses: list, steps: int = 800) -> dict:
    """A run whose curve has a point every eighth of its ``steps``, scoring ``losses``."""
    curve = [{"step": steps * (k + 1) // len(losses), "examples": 256, D.CE: loss}
             for k, loss in enumerate(losses)]
    return {"condition": arm, "seed": seed, "steps": steps, "curve": curve}


def _frame(runs: list) -> pd.DataFrame:
    return pd.DataFrame(runs)


def test_the_first_point_under_the_rung_is_a_share_of_the_runs_training():
    frame = _frame([_run(D.ALBERT, 1, [6.7, 6.6, 6.1, 6.0]),
                    _run(D.DROPOUT, 1, [6.7, 6.7, 6.6, 6.5]),
                    _run(D.WIDE, 1, [6.7, 6.0], steps=400)])
    got = C.first_below(frame, 6.147).set_index("condition")["first below"]
    assert got[D.ALBERT] == 0.75  # the third of four points, at 600 of 800 steps
    assert np.isnan(got[D.DROPOUT])  # never under it
    assert got[D.WIDE] == 1.0  # a share of its own steps


def test_arms_are_apart_only_where_every_seed_of_one_passes_after_the_other():
    rows = [_run(D.ALBERT, s, [6.7, 6.0, 5.9, 5.8]) for s in (1, 2)]
    later = rows + [_run(D.DROPOUT, s, [6.7, 6.7, 6.7, 6.7]) for s in (1, 2)]
    table = C.first_below(_frame(later), 6.147)
    got = C.delay(table, SPEC["confirm/dropout"])
    assert got["apart"] and got["later"] == D.DROPOUT
    assert got["a"]["never"] == 2 and got["b"]["low"] == got["b"]["high"] == 0.5
    # one dropout seed passes as early as a no-dropout seed: not apart
    mixed = rows + [_run(D.DROPOUT, 1, [6.7, 6.0, 5.9, 5.8]),
                    _run(D.DROPOUT, 2, [6.7, 6.7, 6.7, 6.7])]
    assert not C.delay(C.first_below(_frame(mixed), 6.147), SPEC["confirm/dropout"])["apart"]
    assert C.delay(table, SPEC["confirm/sop"]) is None  # points: not what curves measure



def test_the_stored_count_rungs_are_read(monkeypatch):
    from albert_rerun.paths import repo_root
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(repo_root() / "data" / "results"))
    levels = [C.rung_level(name) for name in ("unigram", "left bigram", "two-sided")]
    assert levels == sorted(levels, reverse=True) and all(4 < v < 8 for v in levels)
    with pytest.raises(KeyError):
        C.rung_level("trigram")


def test_on_their_own_sequences_the_16x_dropout_runs_pass_the_left_bigram_rung_later(
        monkeypatch):
    """Issue #55, error 1: a 16x curve scores the first 256 held-out sequences, and the
    rung is scored there too. Every dropout run then passes it (its whole-set loss is
    under the rung's whole-set level), later than every run without dropout."""
    from albert_rerun.paths import repo_root
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(repo_root() / "data" / "results"))
    table = C.passes("16x")
    dropout = table[table["condition"] == D.DROPOUT]["first below"]
    assert dropout.notna().all() and len(dropout) == 4
    got = C.delay(table, SPEC["confirm/dropout"])
    assert got["apart"] and got["later"] == D.DROPOUT and got["a"]["never"] == 0
    assert C.rung_level("left bigram", 256) > C.rung_level("left bigram") + 0.2

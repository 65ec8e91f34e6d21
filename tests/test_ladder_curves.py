"""The ladder's descriptions after its result (book/ladder.md, amendment 10): when each
16x run's held-out curve first scores below a count rung, whether a decision's arms
left the loss plateau apart, and the words the chapters and the ladder page give them."""
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from albert_rerun.book import ladder_trend as T
from albert_rerun.studies import confirm_design as D
from albert_rerun.studies import ladder as L
from albert_rerun.studies import ladder_curves as C

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


def _trend(key: str, table=None, **fields) -> T.Trend:
    spec = SPEC[key]
    return T.Trend(key, spec.claim, spec.label, spec.unit, spec.paper_sign, 1,
                   (0.0, 0.0, 0.0, 11), None, 32, 32, 32, table, **fields)


def test_the_words_name_both_arms_and_say_what_a_delay_may_mean():
    delay = {"a": {"low": np.nan, "high": np.nan, "never": 4, "seeds": 4},
             "b": {"low": 0.5, "high": 0.625, "never": 0, "seeds": 4},
             "apart": True, "later": D.DROPOUT}
    words = T.delay_words(_trend("confirm/dropout", passes=delay))
    assert ("read against the left-bigram count rung. The model with dropout did not "
            "score below it by the end, in any of its 4 seeds. The one without first did "
            "at 50% to 62% of its training.") in words
    assert "may be a delay" in words and "cannot tell" in words
    some = {**delay, "a": {"low": 0.75, "high": 0.75, "never": 1, "seeds": 4}}
    assert ("The model with dropout first did at 75% of its training in 3 of 4 seeds, and "
            "not by the end in the rest") in T.delay_words(_trend("confirm/dropout", passes=some))
    ratios = [(3000, 0.78, "Intel(R) Xeon(R) Processor", True),
              (3003, 0.98, "AMD EPYC, Intel(R) Xeon(R) Processor", False)]
    assert T.ratio_words(ratios) == (
        "At 16x the wide arm trained for this share of its partner's seconds, by seed: "
        "3000: 0.78 (Intel Xeon); 3003: 0.98 (AMD EPYC, Intel Xeon). A run resumed on "
        "another machine names the one it finished on. 1 of 2 lie outside 0.9 to 1.1; "
        "below 1 favours BERT-style.")


def test_a_sentence_carries_the_delay_and_the_ratios_only_where_they_apply():
    from test_ladder_trend import complete_row
    row = complete_row()
    row.update({"1x-4x low": 0.001, "1x-4x high": 0.02})
    apart = {"a": {"low": np.nan, "high": np.nan, "never": 4, "seeds": 4},
             "b": {"low": 0.5, "high": 0.5, "never": 0, "seeds": 4},
             "apart": True, "later": D.DROPOUT}
    t = _trend("confirm/dropout", table=row, passes=apart)
    assert "may be a delay" in T.sentence(t)
    assert "may be a delay" not in T.sentence(replace(t, passes={**apart, "apart": False}))
    ratios = [(3000, 0.78, "AMD EPYC", True)]
    assert "At 16x the wide arm trained" in T.sentence(
        _trend("confirm/equal-time", table=row, ratios=ratios))


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

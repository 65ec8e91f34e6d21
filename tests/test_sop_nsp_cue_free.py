"""Chapter 4's analysis without the cut cue (added after a review had seen the results):
the SOP decision again on the held-out SOP pairs whose segments both begin a sentence.
On synthetic runs whose answer is known by construction, and the wiring on the real
held-out pairs: their located rows, the pairs the probes score and the correctness
strings must index the same pairs in the same order."""
import types

import numpy as np
import pandas as pd
import pytest
from synthetic import strings

from albert_rerun.book import sop_nsp
from albert_rerun.book.sop_nsp import CUE_FREE_KEY, SOP_NSP_KEY
from albert_rerun.stats.inference import holm

START_A, START_B = sop_nsp.STARTS


def located(n: int, seed: int = 0) -> pd.DataFrame:
    """``baselines.pair_locations``-like rows: each segment begins a sentence with p 0.4,
    one pair in ten not located (NaN); labels 0/1 at random."""
    rng = np.random.default_rng(seed)
    a, b = (np.where(rng.random(n) < 0.4, 1.0, 0.0) for _ in range(2))
    lost, first_half = rng.random(n) < 0.1, np.arange(n) < n // 2
    a[lost & first_half] = np.nan  # A not found in the first half,
    b[lost & ~first_half] = np.nan  # B in the second
    return pd.DataFrame({START_A: a, START_B: b, "A, B in one sentence": 0.0,
                         "label": rng.integers(0, 2, n)})


def planted(where: pd.DataFrame, p_free: dict, p_cue: dict, seeds: int = 3, seed: int = 1,
            majority: float | None = None) -> pd.DataFrame:
    """Runs of the three conditions whose SOP-probe correctness is drawn at p_free[arm]
    on the pairs without the cue and p_cue[arm] elsewhere (p 1 or 0 plants it exactly)."""
    rng = np.random.default_rng(seed)
    free = np.zeros(len(where), dtype=bool)
    free[sop_nsp.cue_free_items(where)[0]] = True
    share = float(where["label"].mean())
    rows = []
    for arm in ("sop", "nsp", "none"):
        for s in range(seeds):
            chars = np.where(free, list(strings(rng, p_free[arm], len(where))),
                             list(strings(rng, p_cue[arm], len(where))))
            rows.append({"condition": arm, "seed": s, "sop_probe_correct": "".join(chars),
                         "nsp_probe_correct": strings(rng, 0.6, len(where)),
                         "control_sop_probe_correct": strings(rng, 0.5, len(where)),
                         "sop_majority": max(share, 1 - share) if majority is None
                         else majority})
    return pd.DataFrame(rows)


def test_cue_free_items_are_the_pairs_both_of_whose_segments_begin_a_sentence():
    where = pd.DataFrame({START_A: [1.0, 1.0, 0.0, np.nan, 1.0, 1.0, 0.0],
                          START_B: [1.0, 0.0, 1.0, 1.0, np.nan, 1.0, 0.0]})
    items, unknown = sop_nsp.cue_free_items(where)
    assert items.tolist() == [0, 5]  # positions in the rows' order, not labels
    assert unknown == 2  # A or B not located: left out, and counted


def test_restrict_cuts_each_string_in_order_and_refuses_another_pair_set():
    column = pd.Series(["0110", np.nan, "1001"])
    cut = sop_nsp.restrict(column, [2, 0], 4)
    assert cut[0] == "10" and cut[2] == "01" and pd.isna(cut[1])
    with pytest.raises(ValueError, match="not the same held-out pairs"):
        sop_nsp.restrict(column, [0], 5)


def test_the_gain_is_found_where_it_was_planted_and_not_elsewhere():
    """The SOP-trained model is always right on the pairs without the cue and the
    NSP-trained model always wrong there; elsewhere both are at chance. Taken in any
    other order than the located rows', the subset would not show +100 points."""
    where = located(900)
    frame = planted(where, {"sop": 1.0, "nsp": 0.0, "none": 0.5},
                    {"sop": 0.5, "nsp": 0.5, "none": 0.5})
    check = sop_nsp.cue_free_check(frame, where, 2.0)
    free = check["decisions"][CUE_FREE_KEY]
    items, unknown = sop_nsp.cue_free_items(where)
    assert free.estimate == pytest.approx(100.0)  # exact: every item planted
    assert free.verdict() == "reproduced"
    table = check["table"]
    row = table.loc["both segments begin a sentence (no cut cue)"]
    assert row["pairs"] == len(items) and row["SOP-trained probe %"] == 100.0
    assert row["NSP-trained probe %"] == 0.0
    share = where["label"].to_numpy()[items].mean()
    assert row["majority %"] == pytest.approx(100 * max(share, 1 - share), abs=0.05)
    assert check["unknown"] == f"{unknown:,}" and check["pairs"] == f"{len(where):,}"
    # the same cut in the wrong order (the strings reversed against the rows) is not it
    reversed_ = frame.assign(sop_probe_correct=frame["sop_probe_correct"].str[::-1])
    wrong = sop_nsp.cue_free_check(reversed_, where, 2.0)["decisions"][CUE_FREE_KEY]
    assert wrong.estimate < 50
    shuffled = where.sample(frac=1, random_state=0).reset_index(drop=True)
    assert sop_nsp.cue_free_check(frame, shuffled, 2.0)["decisions"][
        CUE_FREE_KEY].estimate < 50


def test_a_gain_that_is_all_cue_does_not_survive_and_the_decision_is_recomputed_as_is():
    """The SOP-trained model is right on every pair with the cue and at chance on those
    without; the NSP-trained model is at chance everywhere: the decision reads a gain,
    the pairs without the cue none. The first row is the pre-registered decision."""
    where = located(1200, seed=2)
    frame = planted(where, {"sop": 0.5, "nsp": 0.5, "none": 0.5},
                    {"sop": 1.0, "nsp": 0.5, "none": 0.5})
    check = sop_nsp.cue_free_check(frame, where, 2.0)
    topic = pd.DataFrame([{"task": t, "seed": s, "correct": "1" * len(where), "majority": 0.5}
                          for t in ("nsp", "sop") for s in range(3)])
    registered = {d.key: d for d in sop_nsp.sop_nsp_decisions(frame, topic, {"pairs": 2.0, "chance": 4.0})}
    assert CUE_FREE_KEY not in registered  # not a decision of the chapter: not in Holm's
    family = holm(registered.values())
    assert CUE_FREE_KEY not in family.index
    full = check["decisions"][SOP_NSP_KEY]
    assert (full.estimate, full.low, full.high, full.p_difference, full.p_equivalence) == (
        registered[SOP_NSP_KEY].estimate, registered[SOP_NSP_KEY].low,
        registered[SOP_NSP_KEY].high, registered[SOP_NSP_KEY].p_difference,
        registered[SOP_NSP_KEY].p_equivalence)
    assert full.verdict() == "reproduced"
    free = check["decisions"][CUE_FREE_KEY]
    assert abs(free.estimate) < 12 and free.verdict() in ("inconclusive", "equivalent")
    assert check["table"].loc["all held-out SOP pairs (the decision)", "pairs"] == len(where)


def test_a_correctness_string_of_another_pair_set_stops_the_analysis():
    where = located(300)
    frame = planted(where, {"sop": 0.7, "nsp": 0.5, "none": 0.5},
                    {"sop": 0.7, "nsp": 0.5, "none": 0.5})
    with pytest.raises(ValueError, match="not the same held-out pairs"):
        sop_nsp.cue_free_check(frame, where.iloc[:-1], 2.0)  # one pair short
    other = planted(where, {"sop": 0.7, "nsp": 0.5, "none": 0.5},
                    {"sop": 0.7, "nsp": 0.5, "none": 0.5}, majority=0.9)
    with pytest.raises(ValueError, match="another pair set"):
        sop_nsp.cue_free_check(other, where, 2.0)


def test_without_both_arms_there_is_no_analysis():
    where = located(100)
    frame = planted(where, {"sop": 0.7, "nsp": 0.5, "none": 0.5},
                    {"sop": 0.7, "nsp": 0.5, "none": 0.5})
    check = sop_nsp.cue_free_check(frame[frame["condition"] != "nsp"], where, 2.0)
    assert check["decisions"] == {} and check["table"].empty
    assert check["pairs"] == "0"


def test_located_rows_are_the_pairs_the_probe_strings_score_in_their_order(monkeypatch):
    """The wiring on the real held-out SOP pairs (the cpu profile's evaluation, no model):
    engine.evaluate.sentence_pairs, with features that carry each pair's first piece of
    A, writes correctness strings whose item k is the pair of row k of
    baselines.held_out_pairs; pair_locations' rows are those pairs; and every pair
    cue_free_items keeps has both segments at a sentence start of the validation split,
    found here independently of locate_segments."""
    from albert_rerun.studies import baselines as B, pair_cues as PC
    from albert_rerun.data.corpus import tokenize_split
    from albert_rerun.engine import evaluate as E
    from albert_rerun.engine.finetune import correctness
    from albert_rerun.profiles import eval_config

    def features(model, inputs, device, with_head=False):
        first = inputs["input_ids"][:, 1].numpy()  # the first piece of A, row by row
        x = np.stack([first % 2, first], 1).astype(float)
        return (x, first % 2) if with_head else x

    def probe(train_x, train_y, test_x, test_y, validation=None):
        predicted = test_x[:, 0].astype(int)
        return {"accuracy": float((predicted == test_y).mean()), "C": 1.0,
                "correct": correctness(predicted, test_y)}

    monkeypatch.setattr(E, "pair_features", features)
    monkeypatch.setattr(E, "logistic_probe", probe)
    config = eval_config("cpu")
    scored = E.sentence_pairs(types.SimpleNamespace(train=lambda: None), config, "cpu")
    tokenizer, test = B.held_out_pairs("sop", config)
    where = PC.pair_locations("sop", config)
    segments = B.segment_pieces(test)
    assert len(where) == len(segments) == len(scored["sop_probe_correct"])
    assert scored["sop_probe_correct"] == correctness([a[0] % 2 for a, _ in segments],
                                                      where["label"].to_numpy())
    share = float(where["label"].mean())
    assert scored["sop_majority"] == max(share, 1 - share)
    items, unknown = sop_nsp.cue_free_items(where)
    assert len(items) > 20 and unknown < len(where) / 4
    corpus = tokenize_split("validation", tokenizer)
    tokens, starts = corpus.tokens, corpus.sentence_starts[:-1]

    def at_a_start(piece_ids) -> bool:
        n = len(piece_ids)
        candidates = starts[tokens[starts] == piece_ids[0]]
        return any(np.array_equal(tokens[s:s + n], piece_ids) for s in candidates)
    for k in items:
        a, b = segments[k]
        assert at_a_start(a) and at_a_start(b), k

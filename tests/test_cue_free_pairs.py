"""SOP and NSP pairs without the segment-cut cue (data.cue_free), their evaluation
(engine.evaluate.CueFreeEval) and their no-network baselines: every segment is whole
sentences of the split, in-order pairs are consecutive, random ones come from another
document, the probe's two halves share no document, and neither the lengths nor the
edges of the segments give the order away."""
import json

import numpy as np
import pandas as pd
import pytest
import torch

from albert_rerun.data import cue_free
from albert_rerun.data.corpus import TokenizedCorpus, tokenize_split
from albert_rerun.data.tokenizer import Tokenizer
from albert_rerun.engine import store
from albert_rerun.engine.evaluate import CueFreeEval, EvalConfig, evaluate_stored
from synthetic import stored_run

T = 64  # the cpu and cpu-long profiles' sequence length, where the pilot is evaluated
SETS = [(task, part) for task in cue_free.TASKS for part in cue_free.PARTS]


@pytest.fixture(scope="module")
def corpus():
    return tokenize_split("validation", Tokenizer(vocab_size=8000))


def _segments(data):
    """(A's pieces, B's pieces) of each pair, read back from its layout."""
    out = []
    for ids, types, mask in zip(data["input_ids"].numpy(), data["token_type_ids"].numpy(),
                                data["attention_mask"].numpy()):
        n = int(mask.sum())
        out.append((ids[:n][types[:n] == 0][1:-1], ids[:n][types[:n] == 1][:-1]))
    return out


@pytest.mark.parametrize("task,part", SETS)
def test_every_segment_is_whole_consecutive_sentences_of_one_document(corpus, task, part):
    data = cue_free.cue_free_pairs(task, part, T)
    p, s, ds = data["positions"], corpus.sentence_starts, corpus.document_starts
    tokenizer = Tokenizer(vocab_size=8000)
    assert data["input_ids"].shape == (len(data["labels"]), T)
    assert (data["input_ids"][:, 0] == tokenizer.cls_id).all()
    for k, (a, b) in enumerate(_segments(data)):
        for side, pieces in (("a", a), ("b", b)):
            d, first, stop = (int(p[f"{side}_{x}"][k]) for x in ("document", "first", "stop"))
            assert ds[d] <= first < stop <= ds[d + 1]  # whole sentences of document d
            # the pieces are exactly those sentences: begins at a sentence start, ends
            # at a sentence end, nothing cut or trimmed
            assert np.array_equal(pieces, corpus.tokens[s[first]:s[stop]])
        assert 0 < len(a) and 0 < len(b) and len(a) + len(b) <= T - 3
    mask = data["attention_mask"].numpy().astype(bool)
    assert (data["token_type_ids"].numpy()[~mask] == 0).all()


def locate_segments(corpus, segments) -> pd.DataFrame:
    """Where each pair's segments lie in ``corpus`` (the split they were drawn from),
    found by their pieces: whether A and whether B begins at a sentence start, and
    whether both lie in one sentence. A segment is found at the first place its first
    four pieces and then all its pieces match; B at the match nearest to A. Segments
    under four pieces, or not found, give NaN."""
    V = int(max(corpus.tokens.max(), max((max(a + b, default=0) for a, b in segments),
                                         default=0))) + 1
    t = corpus.tokens.astype(np.int64)
    n = len(t) - 3
    codes = ((t[:n] * V + t[1:n + 1]) * V + t[2:n + 2]) * V + t[3:n + 3]
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = corpus.sentence_starts

    def find(segment, near=None):
        if len(segment) < 4:
            return None
        code = ((segment[0] * V + segment[1]) * V + segment[2]) * V + segment[3]
        lo, hi = np.searchsorted(ordered, [code, code + 1])
        found = [int(p) for p in order[lo:hi]
                 if np.array_equal(t[p:p + len(segment)], segment)]
        if not found:
            return None
        return found[0] if near is None else min(found, key=lambda p: abs(p - near))

    def sentence(p):
        return int(np.searchsorted(starts, p, side="right") - 1)

    rows = []
    for a, b in segments:
        pa = find(a)
        pb = find(b, near=pa)
        rows.append({"A starts a sentence": np.nan if pa is None else float(
                         starts[sentence(pa)] == pa),
                     "B starts a sentence": np.nan if pb is None else float(
                         starts[sentence(pb)] == pb),
                     "A, B in one sentence": np.nan if pa is None or pb is None else float(
                         sentence(pa) == sentence(pb))})
    return pd.DataFrame(rows)


def hand_corpus() -> TokenizedCorpus:
    """One document of three sentences (ids from 10) and one of one sentence."""
    sentences = [list(range(10, 15)), list(range(15, 21)), list(range(21, 30)),
                 list(range(30, 36))]
    lengths = [len(s) for s in sentences]
    return TokenizedCorpus(np.concatenate(sentences).astype(np.int32),
                           np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                           np.array([0, 3, 4], dtype=np.int64))


def test_locate_segments_tells_sentence_starts_and_cut_sentences():
    s0, s1, s2 = list(range(10, 15)), list(range(15, 21)), list(range(21, 30))
    segments = [(s0, s1),  # two whole sentences in order
                (s1[2:], s2),  # A trimmed at its start
                (s2[:4], s2[4:]),  # one sentence cut in two
                (s2[4:], s2[:4]),  # the same, swapped
                ([10, 11], s1),  # A too short to be located
                ([99, 98, 97, 96], s1)]  # A not in the corpus
    where = locate_segments(hand_corpus(), segments)
    assert where["A starts a sentence"].tolist()[:4] == [1.0, 0.0, 1.0, 0.0]
    assert where["B starts a sentence"].tolist()[:4] == [1.0, 1.0, 0.0, 1.0]
    assert where["A, B in one sentence"].tolist()[:4] == [0.0, 0.0, 1.0, 1.0]
    assert where.iloc[4:]["A starts a sentence"].isna().all()
    assert where.iloc[4:]["A, B in one sentence"].isna().all()
    assert (where.iloc[4:]["B starts a sentence"] == 1.0).all()


@pytest.mark.parametrize("task", cue_free.TASKS)
def test_segments_are_found_at_sentence_starts_by_their_text_alone(corpus, task):
    """The same check without the recorded positions: ``locate_segments`` finds each
    segment in the split by its pieces (the check that found the cut cue)."""
    data = cue_free.cue_free_pairs(task, "test", T)
    where = locate_segments(corpus, [(a.tolist(), b.tolist())
                                     for a, b in _segments(data)[:200]])
    for column in ("A starts a sentence", "B starts a sentence"):
        found = where[column].dropna()
        assert len(found) >= 180 and found.mean() >= 0.99, column
    assert where["A, B in one sentence"].dropna().sum() == 0


@pytest.mark.parametrize("task", cue_free.TASKS)
def test_labels_say_how_b_relates_to_a(task):
    for part in cue_free.PARTS:
        data = cue_free.cue_free_pairs(task, part, T)
        p, y = data["positions"], data["labels"]
        same = p["a_document"] == p["b_document"]
        follows = same & (p["a_stop"] == p["b_first"])
        precedes = same & (p["b_stop"] == p["a_first"])
        assert follows[y == 0].all()  # in order / next: B directly after A
        if task == "sop":
            assert precedes[y == 1].all() and not follows[y == 1].any()
        else:
            assert not same[y == 1].any()  # random: B from another document


@pytest.mark.parametrize("task", cue_free.TASKS)
def test_pairs_do_not_overlap_within_a_document(task):
    for part in cue_free.PARTS:
        p = cue_free.cue_free_pairs(task, part, T)["positions"]
        used = []
        for k in range(len(p["a_first"])):
            used += list(range(p["a_first"][k], p["a_stop"][k]))
            if p["a_document"][k] == p["b_document"][k]:
                used += list(range(p["b_first"][k], p["b_stop"][k]))
        assert len(used) == len(set(used))


def test_the_probe_halves_share_no_document(corpus):
    halves = cue_free.document_parts(corpus.num_documents)
    assert not set(halves["train"]) & set(halves["test"])
    assert len(halves["train"]) + len(halves["test"]) == corpus.num_documents
    for task in cue_free.TASKS:
        seen = {}
        for part in cue_free.PARTS:
            p = cue_free.cue_free_pairs(task, part, T)["positions"]
            seen[part] = set(p["a_document"]) | set(p["b_document"])
            assert seen[part] <= set(halves[part].tolist())
        assert not seen["train"] & seen["test"]


def test_enough_pairs_near_balanced_labels_and_counts_exposed():
    counts = cue_free.cue_free_counts(T)
    for task, part in SETS:
        assert counts[f"{task}_{part}_pairs"] >= 1000  # the pre-registered minimum
        assert abs(counts[f"{task}_{part}_label1_share"] - 0.5) < 0.05
        assert counts[f"{task}_{part}_pairs"] == len(
            cue_free.cue_free_pairs(task, part, T)["labels"])


@pytest.mark.parametrize("task", cue_free.TASKS)
def test_lengths_do_not_give_the_label_away(task):
    """Segment lengths: the first segment of an in-order pair is neither longer nor
    shorter than the second on average, and a random B is as long as a following one.
    (A builder that starts each passage at the sentence that did not fit the last one
    made the first segments 3 pieces longer.)"""
    for part in cue_free.PARTS:
        data = cue_free.cue_free_pairs(task, part, T)
        lengths = np.array([(len(a), len(b)) for a, b in _segments(data)], dtype=float)
        y = data["labels"]
        a0, b0 = lengths[y == 0].mean(0)
        a1, b1 = lengths[y == 1].mean(0)
        assert abs(a0 - b0) < 1.5 and abs(a1 - b1) < 1.5
        assert abs(b0 - b1) < 1.5 and abs(a0 - a1) < 1.5


def test_deterministic_and_seeded(corpus):
    documents = cue_free.document_parts(corpus.num_documents)["test"]
    for task in cue_free.TASKS:
        first = cue_free.build_pairs(corpus, task, documents, T - 3,
                                     np.random.default_rng([1, 2]))
        again = cue_free.build_pairs(corpus, task, documents, T - 3,
                                     np.random.default_rng([1, 2]))
        other = cue_free.build_pairs(corpus, task, documents, T - 3,
                                     np.random.default_rng([1, 3]))
        assert first == again and first != other
    assert np.array_equal(cue_free.document_parts(161)["train"],
                          cue_free.document_parts(161)["train"])
    with pytest.raises(ValueError, match="part"):
        cue_free.cue_free_pairs("sop", "validation", T)
    with pytest.raises(ValueError, match="task"):
        cue_free.build_pairs(corpus, "mlm", documents, T - 3, np.random.default_rng(0))


def test_the_cut_cue_baselines_score_the_majority_on_sop():
    """On the common held-out pairs the 4 cue bits beat the majority by 16.7 points;
    here they may not beat it by more than sampling noise (3 points, about two standard
    errors at 1,400 pairs), nor may the lengths."""
    from albert_rerun.studies.pair_cues import cue_free_baselines
    out = cue_free_baselines(T)
    json.dumps(out)
    sop = out["sop"]
    for name in ("majority", "bag_of_words", "cue_bits", "lengths"):
        assert len(sop[f"{name}_correct"]) == sop["test_pairs"]
        assert sop[f"{name}_accuracy"] == pytest.approx(
            sop[f"{name}_correct"].count("1") / sop["test_pairs"])
    assert sop["cue_bits_accuracy"] - sop["majority_accuracy"] < 0.03
    assert out["nsp"]["lengths_accuracy"] - out["nsp"]["majority_accuracy"] < 0.03
    assert sop["test_pairs"] == len(cue_free.cue_free_pairs("sop", "test", T)["labels"])


def test_cue_free_eval_key_is_stable_and_apart_from_eval_config():
    config = CueFreeEval(max_seq_length=64)
    assert config.key == CueFreeEval(max_seq_length=64).key == store.config_hash(
        config.to_dict())
    assert config.key != CueFreeEval(max_seq_length=32).key
    assert config.key != CueFreeEval(max_seq_length=64, seed=1).key
    assert config.key not in (EvalConfig().key, EvalConfig(max_seq_length=64).key)
    with pytest.raises(ValueError):
        CueFreeEval(max_seq_length=True)


@pytest.mark.usefixtures("single_thread")
def test_cue_free_eval_of_a_stored_tiny_model(tmp_path):
    """A stored (initialized) smoke-sized model, evaluated through evaluate_stored: every
    metric present, per-item strings as long as the test pairs, stored under
    (pretraining hash, CueFreeEval key) and read back."""
    from albert_rerun.profiles import pretraining_config
    config = pretraining_config("smoke", max_steps=0, warmup_steps=0, seed=3)
    _, result, _ = stored_run(tmp_path, config)
    evaluation = CueFreeEval(max_seq_length=config.max_seq_length)
    stored = evaluate_stored(tmp_path, result, evaluation, torch.device("cpu"))
    metrics = stored["metrics"]
    for task in ("sop", "nsp"):
        test = cue_free.cue_free_pairs(task, "test", config.max_seq_length)
        n = len(test["labels"])
        assert metrics[f"{task}_cuefree_test_pairs"] == n
        assert metrics[f"{task}_cuefree_train_pairs"] == len(
            cue_free.cue_free_pairs(task, "train", config.max_seq_length)["labels"])
        for kind in ("probe", "head"):
            correct = metrics[f"{task}_cuefree_{kind}_correct"]
            assert len(correct) == n and set(correct) <= {"0", "1"}
            assert metrics[f"{task}_cuefree_accuracy_{kind}"] == pytest.approx(
                correct.count("1") / n)
        share = float(test["labels"].mean())
        assert metrics[f"{task}_cuefree_majority"] == pytest.approx(max(share, 1 - share))
    assert store.eval_path(tmp_path, result["hash"], evaluation).parent.name == evaluation.key
    assert stored["eval_config"] == evaluation.to_dict()
    assert evaluate_stored(tmp_path, result, evaluation, torch.device("cpu")) == stored

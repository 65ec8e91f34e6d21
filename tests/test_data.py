"""Real data: checksums, the tokenizer, ALBERT's segment pairs and n-gram masking
(the numpy reference; the torch version is tested against it in test_masking.py)."""
from collections import Counter

import numpy as np
import pytest

from albert_rerun.data import files as data
from albert_rerun.data import masking
from albert_rerun.data.corpus import create_instances, tokenize_split
from albert_rerun.data.masking import (NGRAM_PROBABILITIES, MaskingConfig, mask_sequence,
                                       tokenizer_arrays)


def test_manifest_covers_corpus_tasks_and_tokenizer():
    names = data.manifest()
    for split in data.SPLITS:
        assert f"corpus/{split}.jsonl.xz" in names
        for task in data.TASKS:
            assert f"tasks/{task}/{split}.jsonl.xz" in names
    assert any(name.startswith("tokenizer/") for name in names)


def test_corpus_is_split_by_document():
    ids = {split: {d["id"] for d in data.load_documents(split)} for split in data.SPLITS}
    assert not ids["train"] & ids["validation"] and not ids["train"] & ids["test"]
    sources = Counter(d["source"] for d in data.load_documents("train"))
    assert set(sources) == {"sotu", "brown", "kjv", "austen", "moby_dick", "python_docs"}


def test_genre_task_shares_brown_document_split():
    train_docs = {d["id"] for d in data.load_documents("train") if d["source"] == "brown"}
    texts, labels, names = data.load_task("genre", "test")
    assert len(names) == 15 and len(texts) == len(labels) > 500
    test_rows = data.read_jsonl_xz("tasks/genre/test.jsonl.xz")
    assert not {r["id"].rsplit("/", 1)[0] for r in test_rows} & train_docs


def test_every_committed_data_file_matches_the_manifest():
    data.verify_inputs(vocab_sizes=(4000, 8000))
    for split in data.SPLITS:
        data.verified(f"corpus/{split}.jsonl.xz")


def test_corrupt_file_names_file_checksums_and_fix(data_copy, flip_byte):
    target = data_copy("tasks/sentiment/validation.jsonl.xz")
    flip_byte(target)
    with pytest.raises(data.DataError) as info:
        data.load_task("sentiment", "validation")
    message = str(info.value)
    assert "tasks/sentiment/validation.jsonl.xz is corrupt" in message
    assert data.sha256(target) in message
    assert data.manifest()["tasks/sentiment/validation.jsonl.xz"] in message
    assert "data/build.py" in message
    with pytest.raises(data.DataError, match="validation.jsonl.xz is corrupt"):
        data.verify_inputs()
    target.unlink()
    with pytest.raises(data.DataError, match="is missing"):
        data.load_task("sentiment", "validation")


def test_sentence_splitter_keeps_quotes_and_abbreviations():
    assert data.sentences('Mr. Smith came. He said "Hi!" Then he left.') == \
        ["Mr. Smith came.", 'He said "Hi!"', "Then he left."]


def test_tokenizer_specials(tokenizer):
    assert (tokenizer.pad_id, tokenizer.unk_id) == (0, 1)
    assert [tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id] == [2, 3, 4]
    assert tokenizer.sp.id_to_piece(tokenizer.mask_id) == "[MASK]"


def test_tokenized_cache_is_reused_and_rebuilt_when_corrupt(tokenizer, tmp_path):
    first = tokenize_split("validation", tokenizer, cache_dir=tmp_path)
    (cached,) = tmp_path.glob("tokens-validation-*.npz")
    cached.write_bytes(b"garbage")
    again = tokenize_split("validation", tokenizer, cache_dir=tmp_path)
    assert np.array_equal(first.tokens, again.tokens)


@pytest.mark.parametrize("objective", ["sop", "nsp", "none"])
def test_instances_layout(validation, tokenizer, objective):
    inst = create_instances(validation, tokenizer, objective, 64, seed=3)
    assert len(inst) > 1000
    assert (inst.input_ids[:, 0] == tokenizer.cls_id).all()
    assert (inst.lengths <= 64).all()
    ends = inst.input_ids[np.arange(len(inst)), inst.lengths - 1]
    assert (ends == tokenizer.sep_id).all()
    # every objective lays out [CLS] A [SEP] B [SEP], B as token type 1
    assert ((inst.input_ids == tokenizer.sep_id).sum(1) == 2).all()
    first_sep = (inst.input_ids == tokenizer.sep_id).argmax(1)
    assert (inst.token_type_ids[np.arange(len(inst)), first_sep + 1] == 1).all()
    assert (inst.token_type_ids[np.arange(len(inst)), first_sep] == 0).all()
    if objective == "none":
        assert (inst.sentence_labels == -1).all()
    else:
        share = inst.sentence_labels.mean()
        # NSP: a one-sentence chunk always takes a random B (the official rule), so
        # slightly more than half the pairs are negatives at short lengths.
        low, high = (0.45, 0.55) if objective == "sop" else (0.5, 0.65)
        assert low < share < high, share
    again = create_instances(validation, tokenizer, objective, 64, seed=3)
    assert np.array_equal(inst.input_ids, again.input_ids)  # deterministic given the seed


class _Text:
    """Find token runs in a tokenized split (one bytes search per run)."""

    def __init__(self, corpus):
        self.stream = corpus.tokens.astype(np.int32).tobytes()
        self.document_ends = corpus.sentence_starts[corpus.document_starts][1:]

    def find(self, run: np.ndarray, start: int) -> int:
        key = run.astype(np.int32).tobytes()
        at = self.stream.find(key, 4 * start)
        while at >= 0 and at % 4:  # only whole tokens
            at = self.stream.find(key, at + 1)
        return -1 if at < 0 else at // 4

    def in_order(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether some occurrence of A is followed by B later in the same document
        (truncation may have cut the end of A or the start of B between them)."""
        i = self.find(a, 0)
        while i >= 0:
            end = self.document_ends[np.searchsorted(self.document_ends, i, "right")]
            j = self.find(b, i + len(a))
            if 0 <= j and j + len(b) <= end:
                return True
            i = self.find(a, i + 1)
        return False


def test_no_sentence_loss_pairs_are_in_order_and_sop_swaps_are_not(validation, tokenizer):
    """objective 'none': A then B as in the text, label -1; SOP's label-1 pairs are
    the reverse (which the same check sees: it can fail)."""
    text = _Text(validation)

    def segments(inst, k):
        ids = inst.input_ids[k, :inst.lengths[k]]
        cut = int(np.flatnonzero(ids == tokenizer.sep_id)[0])
        return ids[1:cut], ids[cut + 1:-1]

    none = create_instances(validation, tokenizer, "none", 64, seed=5)
    assert (none.sentence_labels == -1).all()
    assert all(text.in_order(*segments(none, k)) for k in range(200))
    sop = create_instances(validation, tokenizer, "sop", 64, seed=5)
    swapped = np.flatnonzero(sop.sentence_labels == 1)[:100]
    kept = np.flatnonzero(sop.sentence_labels == 0)[:100]
    assert all(text.in_order(*segments(sop, k)) for k in kept)
    assert np.mean([text.in_order(*segments(sop, k)) for k in swapped]) < 0.2


def test_corrupt_corpus_stops_tokenizing_even_with_its_cache(data_copy, flip_byte, tokenizer):
    from albert_rerun.data.corpus import _cache_key
    tokenize_split("validation", tokenizer)  # the cache exists (linked, or built here)
    key = _cache_key("validation", tokenizer)
    assert (data.data_dir() / "cache" / f"tokens-validation-{key}.npz").is_file()
    flip_byte(data_copy("corpus/validation.jsonl.xz"))
    with pytest.raises(data.DataError, match="corpus/validation.jsonl.xz is corrupt"):
        tokenize_split("validation", tokenizer)


def test_short_sequences_at_the_official_rate(validation, tokenizer):
    inst = create_instances(validation, tokenizer, "sop", 128, seed=0)
    short = (inst.lengths < 64).mean()
    assert 0.05 < short < 0.3, short  # 10% are drawn short; document ends add more


def test_sop_swaps_real_neighbours(validation, tokenizer):
    """A swapped SOP pair is the in-order pair reversed: same tokens, other order."""
    inst = create_instances(validation, tokenizer, "sop", 128, seed=1)
    k = int(np.flatnonzero(inst.sentence_labels == 1)[0])
    ids = inst.input_ids[k, :inst.lengths[k]]
    a, b = np.split(ids[1:-1], [int(np.flatnonzero(ids == tokenizer.sep_id)[0]) - 1])
    b = b[1:]
    text = tokenizer.sp.decode((b.tolist() + a.tolist()))
    corpus_text = " ".join(" ".join(d["paragraphs"]) for d in data.load_documents("validation"))
    assert tokenizer.sp.decode(b.tolist())[:30] in corpus_text
    assert len(text) > 10


def test_masking_rate_ngrams_and_whole_words(validation, tokenizer):
    arrays = tokenizer_arrays(tokenizer)
    word_start, special = arrays[0], arrays[1]
    inst = create_instances(validation, tokenizer, "sop", 128, seed=2)
    config = MaskingConfig(max_predictions=1000)  # no cap: the rate is 15%
    rng = np.random.default_rng(0)
    rates, ngrams, drawn = [], Counter(), Counter()
    replaced = Counter()
    for k in range(600):
        ids = inst.input_ids[k, :inst.lengths[k]].astype(np.int64)
        masked, labels, info = mask_sequence(ids, arrays, config, rng)
        positions = np.flatnonzero(labels != -100)
        rates.append(len(positions) / len(ids))
        ngrams.update(info["chosen"])
        drawn.update(info["drawn"])
        replaced.update(np.where(masked[positions] == tokenizer.mask_id, "mask",
                                 np.where(masked[positions] == ids[positions], "same", "random")))
        for p in positions:  # whole words: a masked continuation piece's word start is masked
            assert not special[ids[p]]
            if not word_start[ids[p]]:  # (a segment truncated at its front
                assert p - 1 in positions or special[ids[p - 1]]  # may start mid-word)
        for p in positions:  # and the word goes on masked to its end
            if p + 1 < len(ids) and not word_start[ids[p + 1]] and not special[ids[p + 1]]:
                assert p + 1 in positions
    assert abs(np.mean(rates) - 0.15) < 0.01, np.mean(rates)
    total = sum(drawn.values())
    measured = np.array([drawn[n] / total for n in (1, 2, 3)])
    assert total > 5000 and np.all(np.abs(measured - NGRAM_PROBABILITIES) < 0.02), measured
    # budget fitting and [SEP] shorten some n-grams, so masked 1-grams are more frequent
    total = sum(ngrams.values())
    realized = np.array([ngrams[n] / total for n in (1, 2, 3)])
    assert realized[0] > realized[1] > realized[2] > 0.1, realized
    share = {k: v / sum(replaced.values()) for k, v in replaced.items()}
    assert abs(share["mask"] - 0.8) < 0.03 and abs(share["same"] - 0.1) < 0.03


def test_prediction_cap(validation, tokenizer):
    arrays = tokenizer_arrays(tokenizer)
    inst = create_instances(validation, tokenizer, "sop", 128, seed=2)
    rng = np.random.default_rng(0)
    for k in range(100):
        ids = inst.input_ids[k, :inst.lengths[k]].astype(np.int64)
        _, labels, _ = mask_sequence(ids, arrays, MaskingConfig(max_predictions=5), rng)
        assert 1 <= (labels != -100).sum() <= 5


def test_ngram_draw_is_numpys_choice_draw_for_draw(validation, tokenizer, monkeypatch):
    """The fast n-gram draw gives the batches rng.choice gave, so stored runs stay valid."""
    arrays = tokenizer_arrays(tokenizer)
    inst = create_instances(validation, tokenizer, "sop", 128, seed=3)
    rows = np.arange(min(400, len(inst)))
    config = MaskingConfig(max_predictions=19)
    fast = masking.mask_batch(inst, rows, arrays, config, np.random.default_rng(11))

    def numpy_choice(rng, cdfs, available):
        p = NGRAM_PROBABILITIES[:available] / NGRAM_PROBABILITIES[:available].sum()
        return int(rng.choice(available, p=p)) + 1
    monkeypatch.setattr(masking, "draw_ngram", numpy_choice)
    reference = masking.mask_batch(inst, rows, arrays, config, np.random.default_rng(11))
    assert np.array_equal(fast[0], reference[0]) and np.array_equal(fast[1], reference[1])
    assert (fast[1] != -100).sum() > 1000  # a real test: many masked positions compared

"""The torch masking (data.device_masking) against the numpy reference (data.masking), on
real text: the same laws, not the same draws.

Tolerances: the rate is a mean over 1,500 sequences of a budget both fill (to within
one n-gram): 0.002 apart at most. The length law and 80/10/10 are shares of about
100,000 and 30,000 draws (standard errors about 0.0015 and 0.0025): 0.01.
"""
import numpy as np
import pytest
import torch

from albert_rerun.data.corpus import create_instances
from albert_rerun.data.device_masking import TokenTables, mask_tokens, words_of
from albert_rerun.data.masking import (NGRAM_PROBABILITIES, MaskingConfig, _words, mask_batch,
                                       tokenizer_arrays)

pytestmark = pytest.mark.usefixtures("single_thread")
SEQUENCES = 1500


@pytest.fixture(scope="module")
def instances(validation, tokenizer):
    inst = create_instances(validation, tokenizer, "sop", 128, seed=2)
    assert len(inst) >= SEQUENCES
    return inst


@pytest.fixture(scope="module")
def tables(tokenizer):
    return TokenTables.from_tokenizer(tokenizer, "cpu")


def _device(inst, tables, config, seed=0, rows=SEQUENCES):
    ids = torch.from_numpy(inst.input_ids[:rows].astype(np.int64))
    lengths = torch.from_numpy(inst.lengths[:rows].astype(np.int64))
    out = mask_tokens(ids, lengths, tables, config, torch.Generator().manual_seed(seed))
    return (ids, lengths, *out)


@pytest.fixture(scope="module")
def masked(instances, tables):
    """One draw over SEQUENCES sequences at T = 128, P = 20 (the budget, 15%, is at
    most 19 there: the cap never binds)."""
    return _device(instances, tables, MaskingConfig(max_predictions=20))


def _covered(labels):
    return labels != -100


def test_rate_matches_the_numpy_reference(instances, tokenizer, masked):
    config = MaskingConfig(max_predictions=20)
    rows = np.arange(SEQUENCES)
    _, numpy_labels = mask_batch(instances, rows, tokenizer_arrays(tokenizer), config,
                                 np.random.default_rng(0))
    lengths = instances.lengths[:SEQUENCES]
    numpy_rate = ((numpy_labels != -100).sum(1) / lengths).mean()
    _, _, _, _, labels, _ = masked
    device_rate = (_covered(labels).sum(1).numpy() / lengths).mean()
    assert abs(device_rate - numpy_rate) < 0.002, (device_rate, numpy_rate)
    assert abs(device_rate - 0.15) < 0.005


def test_ngram_lengths_follow_one_over_n_where_three_words_are_available(masked):
    _, _, _, _, _, drawn = masked
    n = drawn[drawn > 0].numpy()
    assert len(n) > 50_000 and set(np.unique(n)) == {1, 2, 3}
    share = np.bincount(n, minlength=4)[1:] / len(n)
    np.testing.assert_allclose(share, NGRAM_PROBABILITIES, atol=0.01)
    np.testing.assert_allclose(NGRAM_PROBABILITIES, [6 / 11, 3 / 11, 2 / 11])


def test_eighty_ten_ten(masked, tokenizer):
    ids, _, out, positions, labels, _ = masked
    real = _covered(labels)
    rows = torch.arange(len(ids))[:, None].expand_as(positions)[real]
    shown = out[rows, positions[real]]
    original = labels[real]
    share_mask = (shown == tokenizer.mask_id).float().mean().item()
    share_same = (shown == original).float().mean().item()
    assert abs(share_mask - 0.8) < 0.01 and abs(share_same - 0.1) < 0.01
    assert abs(1 - share_mask - share_same - 0.1) < 0.01  # random pieces
    random = shown[(shown != tokenizer.mask_id) & (shown != original)]
    assert (random >= 5).all() and (random < tokenizer.vocab_size).all()  # no special
    # every position not chosen is left as it was
    untouched = torch.ones_like(out, dtype=torch.bool)
    untouched[rows, positions[real]] = False
    assert torch.equal(out[untouched], ids[untouched])


def test_whole_words_only_and_never_a_special_token(masked, tokenizer):
    ids, lengths, _, positions, labels, _ = masked
    word_start, special, _, _ = tokenizer_arrays(tokenizer)
    covered_words = 0
    for row in range(len(ids)):
        sequence = ids[row, :lengths[row]].numpy()
        chosen = set(positions[row][_covered(labels[row])].tolist())
        assert not any(special[sequence[p]] for p in chosen)
        for start, end in _words(sequence, word_start, special):
            inside = [p in chosen for p in range(start, end)]
            assert all(inside) or not any(inside), (row, start, end)
            covered_words += all(inside)
    assert covered_words > 10_000


def test_words_and_ngrams_stop_at_special_tokens(tokenizer, tables, masked):
    """A word ends at [SEP] or [CLS]; no three-word n-gram is available across one.
    A text of one-word segments between specials therefore has no word with three
    available, and every n-gram there is a single word."""
    ids, lengths, _, _, _, drawn = masked
    word_start, special, _, _ = tokenizer_arrays(tokenizer)
    for row in range(200):
        sequence = ids[row, :lengths[row]].numpy()
        words = _words(sequence, word_start, special)
        for w in np.flatnonzero(drawn[row].numpy() > 0):
            start, end = words[w][0], words[w + 2][1]
            assert not special[sequence[start:end]].any(), (row, w)
    pieces = [i for i in range(5, tokenizer.vocab_size) if tokenizer.word_start[i]][:40]
    specials = [tokenizer.sep_id, tokenizer.cls_id]
    sequence = [tokenizer.cls_id]
    for k, piece in enumerate(pieces):
        sequence += [piece, specials[k % 2]]
    synthetic = torch.tensor([sequence] * 64)
    length = torch.full((64,), len(sequence))
    _, starts, ends, count = words_of(synthetic, length, tables)
    assert (count == len(pieces)).all() and ((ends - starts)[:, :len(pieces)] == 1).all()
    out = mask_tokens(synthetic, length, tables, MaskingConfig(max_predictions=20),
                      torch.Generator().manual_seed(3))
    assert (out[3] == -1).all()  # never three words available
    chosen = out[2] != -100
    assert (chosen.sum(1) == round(0.15 * len(sequence))).all()  # the budget, in 1-grams
    assert not special[synthetic[0, out[1][chosen]].numpy()].any()


@pytest.mark.parametrize("cap", [1, 5])
def test_the_cap_and_the_static_layout(instances, tables, cap):
    ids, lengths, out, positions, labels, _ = _device(instances, tables,
                                                       MaskingConfig(max_predictions=cap),
                                                       rows=300)
    assert positions.shape == labels.shape == (300, cap)
    assert out.shape == ids.shape
    real = _covered(labels)
    assert (real.sum(1) <= cap).all()
    rows = torch.arange(300)[:, None].expand_as(positions)
    assert torch.equal(labels[real], ids[rows[real], positions[real]])  # the original ids
    assert (positions[~real] == 0).all()  # padding slots: position 0, label -100
    assert (positions[real] < lengths[rows[real]]).all()
    first_free = real.sum(1, keepdim=True) <= torch.arange(cap)
    assert torch.equal(first_free, ~real)  # the real slots first, in order
    assert (positions[:, 1:] > positions[:, :-1])[real[:, 1:]].all()


@pytest.mark.parametrize("length, cap", [(32, 5), (64, 10), (64, 5)])
def test_the_budget_is_filled_as_often_as_numpy_fills_it(validation, tokenizer, tables,
                                                         length, cap):
    """At the profiles' caps (max(5, 15% of T)) the device walk fills each sequence's
    budget, min(cap, 15% of its tokens), as often as the numpy walk does."""
    inst = create_instances(validation, tokenizer, "sop", length, seed=4)
    rows = np.arange(1000)
    config = MaskingConfig(max_predictions=cap)
    _, numpy_labels = mask_batch(inst, rows, tokenizer_arrays(tokenizer), config,
                                 np.random.default_rng(0))
    labels = _device(inst, tables, config, rows=1000)[4]
    budget = np.clip(np.round(0.15 * inst.lengths[rows]), 1, cap)
    numpy_full = ((numpy_labels != -100).sum(1) == budget).mean()
    device_full = (_covered(labels).sum(1).numpy() == budget).mean()
    assert device_full > 0.99 and abs(device_full - numpy_full) < 0.005


def test_padding_and_lengths(instances, tables):
    """Tokens past a sequence's length are never chosen, whatever they hold."""
    ids = torch.from_numpy(instances.input_ids[:100].astype(np.int64))
    lengths = torch.from_numpy(instances.lengths[:100].astype(np.int64)) // 2
    out, positions, labels, _ = mask_tokens(ids, lengths, tables,
                                            MaskingConfig(max_predictions=20),
                                            torch.Generator().manual_seed(1))
    real = _covered(labels)
    assert (positions < lengths[:, None])[real].all()
    beyond = torch.arange(ids.shape[1]) >= lengths[:, None]
    assert torch.equal(out[beyond], ids[beyond])


def test_a_seeded_generator_gives_the_same_masks(instances, tables):
    config = MaskingConfig(max_predictions=10)
    first = _device(instances, tables, config, seed=5, rows=200)[2:]
    again = _device(instances, tables, config, seed=5, rows=200)[2:]
    other = _device(instances, tables, config, seed=6, rows=200)[2:]
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[1], other[1])

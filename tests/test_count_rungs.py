"""The two-sided count rung (studies.count_rungs): normalized, exact where the counts are,
and each case of visible neighbours scored by its own model."""
import numpy as np
import pytest

from albert_rerun.studies.baselines import LeftBigram
from albert_rerun.studies.count_rungs import TwoSidedCounts, two_sided_rung

V = 12
MASK = 11  # never in the stream


def stream(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 10, size=n)


def test_every_case_is_a_distribution_over_the_vocabulary():
    m = TwoSidedCounts(stream(), V)
    left, right = np.array([0, 3, 9, 10]), np.array([1, 3, 2, 10])  # 10: never seen
    d = m.distributions(left, right)
    assert d.shape == (4, V) and np.allclose(d.sum(axis=1), 1) and (d > 0).all()
    for model, context in ((m.left, 3), (m.right, 7)):
        p = model.probability(np.full(V, context), np.arange(V))
        assert np.isclose(p.sum(), 1)


def test_a_gap_the_stream_always_fills_the_same_way_is_nearly_certain():
    # 0 1 2 0 1 2 ...: between 0 and 2 there is always 1
    t = np.tile([0, 1, 2], 500)
    m = TwoSidedCounts(t, V)
    d = m.distributions(np.array([0]), np.array([2]))[0]
    assert d.argmax() == 1 and d[1] > 0.99
    # where only the right neighbour shows, the right bigram reads it: 2 always follows 1
    assert m.right.probability(np.array([2]), np.array([1]))[0] > 0.99


def test_the_trigram_counts_move_the_chain_toward_what_was_seen():
    # the chain alone cannot tell which of 5 or 6 sits between 3 and 4 when both follow
    # 3 and precede 4 equally often; the trigram counts can
    t = np.array([3, 5, 4, 9, 3, 5, 4, 9, 3, 6, 8, 9, 3, 7, 4, 9, 3, 6, 8, 9] * 50)
    m = TwoSidedCounts(t, V)
    d = m.distributions(np.array([3]), np.array([4]))[0]
    assert d[5] > d[7] > d[6]


def test_the_rung_scores_each_case_by_its_model():
    t = stream()
    ids = np.array([[0, MASK, 2, 5, MASK, MASK, 7, MASK]])
    labels = np.full_like(ids, -100)
    labels[0, [1, 4, 5, 7]] = [4, 1, 8, 3]
    out = two_sided_rung(ids, labels, t, V, MASK)
    m = TwoSidedCounts(t, V)
    expected = [m.distributions(np.array([0]), np.array([2]))[0, 4],
                m.left.probability(np.array([5]), np.array([1]))[0],
                m.right.probability(np.array([7]), np.array([8]))[0],
                m.left.probability(np.array([7]), np.array([3]))[0]]
    assert out["targets"] == 4
    assert out["two_sided_loss_at_mask"] == pytest.approx(-np.log(expected).mean())
    assert (out["both_visible"], out["only_left_visible"], out["only_right_visible"],
            out["neither_visible"]) == (0.25, 0.5, 0.25, 0.0)


def test_it_is_never_worse_than_the_left_bigram_on_a_stream_with_right_context():
    # pieces that depend on what follows them: the right side carries the information
    rng = np.random.default_rng(1)
    nxt = rng.integers(0, 10, size=4000)
    t = np.empty(8000, dtype=np.int64)
    t[1::2] = nxt
    t[0::2] = (nxt + 1) % 10  # each even piece is fixed by the piece after it
    ids = t[:400].reshape(20, 20).copy()
    labels = np.full_like(ids, -100)
    labels[:, 4::6] = ids[:, 4::6]
    ids[:, 4::6] = MASK
    two = two_sided_rung(ids, labels, t, V, MASK)
    left = LeftBigram(t, V)
    rows, cols = np.nonzero(ids == MASK)
    p_left = left.probability(ids[rows, cols - 1], labels[rows, cols])
    assert two["two_sided_loss_at_mask"] < -np.log(p_left).mean() - 1.0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="ids must lie"):
        TwoSidedCounts(np.array([0, 1, 99]), V)
    with pytest.raises(ValueError, match="no position"):
        two_sided_rung(np.zeros((1, 4), int), np.full((1, 4), -100), stream(), V, MASK)


def test_the_stored_rung_is_what_the_code_computes_on_the_common_held_out_set(tmp_path):
    from albert_rerun.studies import count_rungs
    from albert_rerun.engine.store import repo_root
    from albert_rerun.profiles import eval_config
    config = eval_config("cpu-long")
    committed = count_rungs.stored(config, repo_root() / "data" / "results" / "yardsticks")
    assert committed is not None, "run python -m albert_rerun.studies.count_rungs"
    again = count_rungs.compute(config)
    assert again["rung"] == pytest.approx(committed["rung"], rel=1e-9)
    assert again["one_sided"] == pytest.approx(committed["one_sided"], rel=1e-9)
    # a two-sided table of counts reads more than the left one
    assert committed["rung"]["two_sided_loss_at_mask"] < committed["one_sided"][
        "bigram_loss_at_mask"]


def test_the_rungs_on_a_curves_sequences_are_those_of_the_sets_first_sequences():
    """A curve point of k sequences scores ``mlm_set(k)``, which is the first k sequences
    of the whole held-out set with the same masks; ``levels_on`` scores the rungs there,
    and on every sequence it gives the stored levels."""
    from albert_rerun.engine.evaluate import mlm_set
    from albert_rerun.engine.store import repo_root
    from albert_rerun.profiles import eval_config
    from albert_rerun.studies import count_rungs as R
    config = eval_config("cpu")
    whole = mlm_set(config.max_seq_length, config.max_predictions, config.mlm_sequences,
                    config.vocab_size)
    part = mlm_set(config.max_seq_length, config.max_predictions, 256, config.vocab_size)
    for key in ("input_ids", "mlm_labels"):
        assert np.array_equal(whole[key][:256].numpy(), part[key].numpy())
    stored = R.stored(config, repo_root() / "data" / "results" / "yardsticks")
    assert R.levels_on(config, config.mlm_sequences) == pytest.approx(R.levels(stored),
                                                                      rel=1e-9)
    small = R.levels_on(config, 256)
    assert small["unigram"] > small["left bigram"] > small["two-sided"]
    assert small != pytest.approx(R.levels(stored), abs=0.05)  # other targets, other levels
    with pytest.raises(ValueError):
        R.levels_on(config, config.mlm_sequences + 1)

"""The disk cache of pure statistics (stats.cache): a value read back from disk is the
same bits as the one computed, so caching changes no number a reader sees."""
import numpy as np
from joblib import Memory

from albert_rerun.stats import cache, inference, power


def test_resampling_counts_read_back_from_disk_are_the_drawn_ones(tmp_path):
    draw = Memory(str(tmp_path), verbose=0).cache(inference._resampling_counts.uncached)
    first = draw(3, 50, 200, 0)
    again = draw(3, 50, 200, 0)  # from disk
    fresh = inference._resampling_counts.uncached(3, 50, 200, 0)
    assert any(tmp_path.rglob("output.pkl"))  # it was written
    for a, b, c in zip(first, again, fresh):
        assert a.dtype == b.dtype == c.dtype == np.uint8
        assert np.array_equal(a, c) and np.array_equal(b, c)
    # the weights are the counts' and each resample draws every seed and item once
    seeds, items = (c.astype(float) for c in fresh)
    assert np.all(seeds.sum(0) == 3) and np.all(items.sum(0) == 50)
    # another seed of the generator draws other resamples
    assert not np.array_equal(fresh[1], inference._resampling_counts.uncached(3, 50, 200, 1)[1])


def test_exact_power_read_back_from_disk_is_the_integrated_one(tmp_path):
    integrate = Memory(str(tmp_path), verbose=0).cache(power.tost_power.uncached)
    value = power.tost_power.uncached(1.2, 6, 0.05)
    assert integrate(1.2, 6, 0.05) == value == integrate(1.2, 6, 0.05)
    assert 0.0 < value < 1.0


def test_the_cache_can_be_moved_or_turned_off(monkeypatch, tmp_path):
    cache.memory.cache_clear()
    try:
        monkeypatch.setenv("ALBERT_RERUN_STATS_CACHE", cache.OFF)
        assert cache.memory().location is None
        monkeypatch.setenv("ALBERT_RERUN_STATS_CACHE", str(tmp_path))
        cache.memory.cache_clear()
        assert cache.memory().location == str(tmp_path)
    finally:
        cache.memory.cache_clear()

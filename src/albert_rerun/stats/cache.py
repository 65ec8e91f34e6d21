"""A disk cache (joblib's ``Memory``) for pure, expensive statistics every process needs
alike (bootstrap resampling counts, exact power integrals): ``data/cache/stats/``, moved
by ``$ALBERT_RERUN_STATS_CACHE``, ``off`` turning it off."""
from __future__ import annotations

import functools
import os

OFF = "off"


@functools.lru_cache(maxsize=1)
def memory():
    """joblib's Memory at the cache's folder (``location=None``: no caching)."""
    from joblib import Memory
    location = os.environ.get("ALBERT_RERUN_STATS_CACHE")
    if location is None:
        from ..paths import repo_root
        location = str(repo_root() / "data" / "cache" / "stats")
    return Memory(None if location == OFF else location, verbose=0)


def cached(function):
    """``function``, its values kept on disk; the cache is chosen at the first call, so
    that $ALBERT_RERUN_STATS_CACHE set after import counts."""
    wrapped = None

    @functools.wraps(function)
    def call(*args, **kwargs):
        nonlocal wrapped
        if wrapped is None:
            wrapped = memory().cache(function)
        return wrapped(*args, **kwargs)
    call.uncached = function
    return call

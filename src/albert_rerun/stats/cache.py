"""A disk cache for pure, expensive statistics (joblib's ``Memory``): every process
(each notebook's kernel, the page builder, each test worker) needs the same bootstrap
resampling counts and exact power integrals, keyed by the function's code and arguments.
It lives in ``data/cache/stats/`` (ignored by git); ``$ALBERT_RERUN_STATS_CACHE`` moves
it, ``off`` turns it off.
"""
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

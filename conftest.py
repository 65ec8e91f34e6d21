"""Test-wide settings, for tests/ and for the notebooks nbval executes (this file is
loaded whatever part of the suite runs).

CI never reads stored pretraining results: every pytest process (each xdist worker) gets
a fresh temporary results store, removed at its exit. nbval, run first, executes the
committed notebooks there, training their smoke runs afresh as `make notebooks` did;
the smoke book (tests/test_book.py), next on the same worker, renders those committed
notebooks and reads the runs for its generated pages, and nbval under other CPU kernels
(tests/test_nbval_variants.py) reads them too.
"""
import atexit
import collections
import os
import shutil
import tempfile

import pytest

_STORE = tempfile.mkdtemp(prefix="albert-rerun-results-")
os.environ["ALBERT_RERUN_RESULTS"] = _STORE
atexit.register(shutil.rmtree, _STORE, ignore_errors=True)
os.environ.setdefault("TQDM_DISABLE", "1")
# One torch thread in every test and every process a test starts (kernels, torchrun
# ranks, scripts; the driver's parallel workers take cores // workers): two xdist
# workers share two cores here, and a thread more only spins against the other worker.
# `make notebooks` computes the committed outputs at one thread too, so they do not
# depend on the cores of the machine that made them.
os.environ.setdefault("ALBERT_RERUN_THREADS", "1")


BOOK_GROUP = ("tests/test_book.py", "tests/test_nbval_variants.py")
# Files of few tests but long ones (torchrun ranks, subprocesses, whole stores built),
# which xdist would leave to the end (it orders work units by their number of tests), so
# that one worker still runs them while the other has finished: measured with
# --durations=0 on 2 busy cores (2026-12-06): 70 to 200 s of one worker each.
LONG_FEW = ("tests/test_distributed.py", "tests/test_bench.py", "tests/test_rerun.py",
            "tests/test_ladder_rehearsal.py", "tests/test_figure_text.py",
            "tests/test_confirm_rehearsal.py")
NBVAL_CELLS_RUN = collections.Counter()  # notebook path: cells nbval ran in this process


def _is_notebook(nodeid: str) -> bool:
    return nodeid.startswith("notebooks/")


def pytest_collection_modifyitems(session, config, items):
    """nbval's notebooks first (a stable sort: every other test keeps its order), in
    every process alike, as xdist needs: they train the smoke runs into this process's
    store, which the smoke book and nbval under other kernels then read."""
    items.sort(key=lambda item: not _is_notebook(item.nodeid))


def pytest_runtest_logreport(report):
    if report.when == "call" and _is_notebook(report.nodeid):
        NBVAL_CELLS_RUN[report.nodeid.split("::")[0]] += 1


@pytest.fixture(scope="session")
def nbval_executed(request) -> set:
    """The notebooks/*.ipynb paths whose every collected cell nbval has run in this
    process (what they store is in this process's store)."""
    cells = collections.Counter(item.nodeid.split("::")[0] for item in request.session.items
                                if _is_notebook(item.nodeid))
    return {path for path, count in cells.items() if NBVAL_CELLS_RUN[path] == count}


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's work units for `make test` (-n 2): a test file runs on one worker,
    so that its module fixtures are built once; nbval's notebooks, the smoke book's
    build (tests/test_book.py) and nbval under other CPU kernels
    (tests/test_nbval_variants.py) are one unit, started first (the longest) and run in
    that order (``pytest_collection_modifyitems``), because the book and the variants
    read the smoke runs that nbval's notebooks trained into this worker's store. The
    files of ``LONG_FEW`` come next, so that the last units to finish are short ones.
    (xdist's own --dist loadgroup marks do not take under pytest 9.2, whose node ids
    xdist 3.8 cannot rename.)"""
    from xdist.scheduler import LoadScopeScheduling

    class BookThenNotebooks(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::")[0]
            return "book" if path.startswith("notebooks/") or path in BOOK_GROUP else path

        def _assign_work_unit(self, node):
            for unit in (*reversed(LONG_FEW), "book"):  # the book first, then LONG_FEW
                if unit in self.workqueue:
                    self.workqueue.move_to_end(unit, last=False)
            super()._assign_work_unit(node)
    return BookThenNotebooks(config, log)

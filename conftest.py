"""Test-wide settings, for tests/ and for the notebooks nbval executes (this file is
loaded whatever part of the suite runs).

CI never reads stored pretraining results: every pytest process (each xdist worker) gets
a fresh temporary results store, removed at its exit. The smoke book's build
(tests/test_book.py) trains its runs there, and nbval, run next on the same worker,
reads them.
"""
import atexit
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


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's work units for `make test` (-n 2): a test file runs on one worker,
    so that its module fixtures are built once; the smoke book's build
    (tests/test_book.py), nbval under other CPU kernels (tests/test_nbval_variants.py)
    and nbval's notebooks are one unit, started first (the longest) and run in that
    order, because the nbval runs read the smoke runs that the book's notebooks trained
    into this worker's store. (xdist's own --dist loadgroup marks do not take
    under pytest 9.2, whose node ids xdist 3.8 cannot rename.)"""
    from xdist.scheduler import LoadScopeScheduling

    class BookThenNotebooks(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::")[0]
            return "book" if path.startswith("notebooks/") or path in BOOK_GROUP else path

        def _assign_work_unit(self, node):
            if "book" in self.workqueue:
                self.workqueue.move_to_end("book", last=False)
            super()._assign_work_unit(node)
    return BookThenNotebooks(config, log)

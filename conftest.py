"""Test-wide settings, for tests/ and for the notebooks nbval executes.

CI never reads stored pretraining results: every run a test or a smoke-profile
notebook makes goes to a fresh temporary directory.
"""
import os
import tempfile

os.environ["ALBERT_RERUN_RESULTS"] = tempfile.mkdtemp(prefix="albert-rerun-results-")
os.environ.setdefault("TQDM_DISABLE", "1")

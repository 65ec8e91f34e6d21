# Two commands set everything up on a fresh machine (Python 3.11):
#   make book   -> virtual environment, pinned packages, notebooks at PROFILE, HTML book
#   make test   -> the same set-up, then the whole test suite
PYTHON ?= python3.11
VENV ?= .venv
PROFILE ?= cpu
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pip installs without byte-compiling every module of every package (more than half of
# the set-up's time, and most of those modules are never imported): Python compiles each
# module on its first import and keeps it. That needs bytecode writing on, which some
# machines turn off (PYTHONDONTWRITEBYTECODE=1), so make's commands run without it (a
# .venv/bin/python run outside make on such a machine compiles what make has not).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: book test test-long notebooks nbval-variants claims bench venv clean

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --no-compile -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-compile --no-deps -e .
	touch $(STAMP)

# REPOSITORY=owner/name (the Pages workflow passes $GITHUB_REPOSITORY): the book's
# repository button and the chapters' launch buttons (Colab, Binder); none without it.
book: $(STAMP)
	$(BIN)/python -m albert_rerun.book --profile $(PROFILE) $(if $(FRESH),--fresh,) \
		$(if $(REPOSITORY),--repository $(REPOSITORY),)

# Two pytest-xdist workers (one per core here; 0: one process); tests/conftest.py
# groups the tests.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS)

# The opt-in tests (marked long, left out of `make test` to keep it under 10 minutes):
# the device script's dry run on the CPU (scripts/device_gpu.sh --dry-run, two calls,
# about 2 minutes). Run it before a session with a lent GPU and after changing the script.
test-long: $(STAMP)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) -m long

# Refresh the committed smoke-profile outputs that nbval compares against.
notebooks: $(STAMP)
	$(BIN)/python -m albert_rerun.book --notebooks-only

# nbval under another OpenBLAS kernel, PyTorch's other vector kernels and two torch
# threads (issue #39), each variant training the smoke runs afresh: the committed outputs
# must not depend on the CPU that wrote them. NBVAL_NOTEBOOKS: a sample (default: all,
# about an hour on 2 busy cores); `make test` runs chapter 4 under each variant.
NBVAL_NOTEBOOKS ?=
nbval-variants: $(STAMP)
	$(BIN)/python tests/nbval_variants.py $(NBVAL_NOTEBOOKS)

# Train every run the empirical chapters need at PROFILE (parallel workers; stored
# results reused, FRESH=1 recomputes). `make book` does this first by itself.
claims: $(STAMP)
	$(BIN)/python -m albert_rerun.studies --profile $(PROFILE) $(if $(FRESH),--fresh,)

# At the cpu profile's size, in one run: the training loop beside the bare step, HF
# transformers' models and the loop of commit be70d44, torch.compile off and on, the
# matmul peak (minutes, most of them compiling; ratios in the JSON). On a GPU:
# scripts/device_gpu.sh.
bench: $(STAMP)
	$(BIN)/python -m albert_rerun.engine.bench --output data/results/bench/$$(hostname)-cpu.json

clean:
	rm -rf _build book/chapters book/_generated

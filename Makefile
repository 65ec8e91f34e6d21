# Two commands set everything up on a fresh machine (Python 3.11):
#   make book   -> virtual environment, pinned packages, notebooks at PROFILE, HTML book
#   make test   -> the same set-up, then the whole test suite
PYTHON ?= python3.11
VENV ?= .venv
PROFILE ?= cpu
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: book test notebooks venv clean

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/python -m albert_rerun.book --profile $(PROFILE)

test: $(STAMP)
	$(BIN)/python -m pytest

# Refresh the committed smoke-profile outputs that nbval compares against.
notebooks: $(STAMP)
	$(BIN)/python -m albert_rerun.book --notebooks-only

clean:
	rm -rf _build book/chapters book/_generated

# The two commands of the quick start: `make course` and `make test`.
# Each creates .venv when it is missing and installs the project into it.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# nbgrader runs alembic (and jupyter) as subprocesses: the venv's bin/ must be on PATH.
export PATH := $(abspath $(BIN)):$(PATH)
# Plots render to files, never to a screen.
export MPLBACKEND := Agg
# Grading and tests never touch the network: 07 takes its offline path (bundled data).
export PYTORCH_COURSE_OFFLINE ?= 1

.PHONY: course test release check lint site clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall when the dependencies change.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

# --jobs 3 on 2 cores: warm kernels leave the cores partly idle between runs (measured here:
# 135-167 s for the full check against 183-185 s with 2 jobs).
course: $(VENV)/.installed  ## release every assignment, prove its tests, print the table
	$(BIN)/python -m autograder release
	$(BIN)/python -m autograder check --jobs 3

test: $(VENV)/.installed  ## unit tests, pipeline gates, lecture notebooks, ruff
	$(BIN)/ruff check .
	$(BIN)/actionlint
	$(BIN)/python -m pytest

release: $(VENV)/.installed
	$(BIN)/python -m autograder release

check: $(VENV)/.installed
	$(BIN)/python -m autograder check --jobs 3

site: $(VENV)/.installed  ## the course website under build/site/ (lecture notebooks executed)
	$(BIN)/python -m autograder site --out build/site

lint: $(VENV)/.installed
	$(BIN)/ruff check .

clean:
	rm -rf build

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

# Tests run in three workers on two cores (much of the time is spent waiting on kernels and
# subprocesses), each test file whole in one worker, the longest files first (tests/conftest.py).
# (xdist's --dist loadgroup would let one assignment's tests form a group; with pytest 9.2 and
# xdist 3.8 here it groups nothing, not even a static xdist_group mark.) --durations: the slowest
# tests are named in every run. Measured on a fresh clone, quiet, 2026-11-25 evening: 13 min 22 s
# with three workers, 14 min 2 s with four (over the 10 minutes it should take; see docs/design.md).
# The suite is CPU-bound (about 2 cores busy throughout): splitting test_grading_folders into one
# unit per assignment (a pytest_xdist_make_scheduler hook) made it slower, 1047 s against 938 s
# (2026-11-27), so files stay whole.
PYTEST_JOBS ?= -n 3 --dist loadfile --no-loadscope-reorder --durations=15

.PHONY: course test release check lint site clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# What pip reads of pyproject.toml: all of it but the [tool.course] tables (the student repository,
# the term's calendar, Canvas ids), which the commands read from pyproject.toml itself. The copy is
# rewritten only when it differs, so that editing the calendar reinstalls nothing (it reinstalled
# the whole environment, 44 s). GNU make sees that an unchanged prerequisite kept its time.
$(VENV)/.pip-inputs.toml: pyproject.toml | $(BIN)/python
	@awk '/^\[/ { course = ($$0 ~ /^\[tool\.course[].]/) } !course' pyproject.toml > $@.new
	@if cmp -s $@.new $@; then rm $@.new; else mv $@.new $@; fi

# Reinstall when the dependencies change. pip byte-compiles what it installs one file after
# another; compileall does it on every core (measured here: 64 s for the environment against
# 73 s). The .pyc files must be there: where PYTHONDONTWRITEBYTECODE is set (as on this
# project's machines), every kernel and subprocess would otherwise compile torch again. A module
# that does not compile on this Python (torch's py312_intrinsics.py on 3.11) is skipped, as pip
# skips it.
$(VENV)/.installed: $(VENV)/.pip-inputs.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]'
	$(BIN)/python -m compileall -q -j 0 $(VENV)/lib > /dev/null || true
	touch $@

# --jobs 3 on 2 cores: warm kernels leave the cores partly idle between runs (measured here:
# 135-167 s for the full check against 183-185 s with 2 jobs).
course: $(VENV)/.installed  ## release every assignment, prove its tests, print the table
	$(BIN)/python -m autograder release
	$(BIN)/python -m autograder check --jobs 3

test: $(VENV)/.installed  ## unit tests, pipeline gates, lecture notebooks, ruff
	$(BIN)/ruff check .
	$(BIN)/actionlint
	$(BIN)/python -m pytest $(PYTEST_JOBS)

release: $(VENV)/.installed
	$(BIN)/python -m autograder release

check: $(VENV)/.installed
	$(BIN)/python -m autograder check --jobs 3

# The website: Sphinx, myst-nb and sphinx-book-theme come with the `site` extra, part of `dev`.
site: $(VENV)/.installed  ## the course website under build/site/ (lecture notebooks executed)
	$(BIN)/python -m autograder site --out build/site

lint: $(VENV)/.installed
	$(BIN)/ruff check .

clean:
	rm -rf build

# The course on the oldest PyTorch that pyproject.toml claims (constraints/oldest.txt), in a venv
# of its own outside the checkout: not part of `make test`, since the old wheels bring their CUDA
# libraries (about 5 GB). Results and what they prove: docs/compatibility.md.
# torch 2.4 has wheels for Python 3.8 to 3.12.
OLDEST_PYTHON ?= python3.11
OLDEST_VENV ?= $(HOME)/.cache/pytorch-course/oldest-torch
# Its installs build this distribution's whole wheel, which build_backend/course_build.py refuses
# unless asked for by name: this venv is the instructor's own.
OLDEST := PYTORCH_COURSE_INSTRUCTOR_BUILD=1 PATH=$(abspath $(OLDEST_VENV))/bin:$$PATH $(OLDEST_VENV)/bin/python

$(OLDEST_VENV)/bin/python:
	$(OLDEST_PYTHON) -m venv $(OLDEST_VENV)

# The pinned torch first, so that installing the course keeps it.
$(OLDEST_VENV)/.installed: constraints/oldest.txt pyproject.toml | $(OLDEST_VENV)/bin/python
	$(OLDEST) -m pip install --quiet -c constraints/oldest.txt torch torchvision numpy
	$(OLDEST) -m pip install --quiet -c constraints/oldest.txt '.[dev]'
	touch $@

.PHONY: oldest-torch
oldest-torch: $(OLDEST_VENV)/.installed  ## release, check, unit and lecture tests on the oldest torch
	$(OLDEST) -m pip install --quiet --no-deps --force-reinstall .  # this checkout's helpers, not editable
	$(OLDEST) -c "import numpy, torch, torchvision; print('torch', torch.__version__, 'torchvision', torchvision.__version__, 'numpy', numpy.__version__)"
	$(OLDEST) -m autograder release
	git diff --exit-code --stat -- source release
	$(OLDEST) -m autograder check --jobs 2 --report build/oldest-torch-report.json
	$(OLDEST) -m pytest -q tests/test_helpers.py tests/test_graph.py tests/test_images.py \
	    tests/test_parallel.py tests/test_reference_*.py tests/test_grading_folders.py \
	    tests/test_grading_particular.py tests/test_lecture_notebooks.py

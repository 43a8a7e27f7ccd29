#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder's image (Ubuntu, with the
# contents of autograder.zip in /autograder/source). It installs the course into a virtual
# environment: CPU PyTorch from PyTorch's own index (Gradescope has no GPU; the CUDA wheels are
# gigabytes), then the course's wheel from dist/ with its `grading` extra (nbgrader, nbclient...).
# AUTOGRADER_GRADESCOPE_ROOT moves /autograder elsewhere (a test lays one out in a temporary folder).
set -euo pipefail
ROOT="${AUTOGRADER_GRADESCOPE_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"

if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-venv python3-pip
fi
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet --index-url https://download.pytorch.org/whl/cpu \
    torch torchvision
wheels=("$SOURCE"/dist/pytorch_course-*.whl)
"$VENV/bin/python" -m pip install --quiet "${wheels[0]}[grading]"
# The wheel holds helpers.reference (the answers, for the trusted run). Once installed, the
# grader hides the installed copy from every kernel; this copy would not be, so it goes.
rm -rf "$SOURCE/dist"
"$VENV/bin/python" -c "import autograder.gradescope.results, helpers.reference, nbgrader"

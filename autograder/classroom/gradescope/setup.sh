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
# Where the container forbids namespaces, grading kernels run as a user of their own: make it and
# close the course, the references and results/ to it (kernel_user.py; checked again at each run).
"$VENV/bin/python" -m autograder.classroom.gradescope.kernel_user --root "$ROOT"
# The last word, as grading will import them: torch and torchvision together (a mismatched pair
# installs without a word and fails only at import, or at its first C++ operator), the course's
# helpers and grader.
"$VENV/bin/python" -c "import torch, torchvision, torchvision.ops; torchvision.ops.nms(torch.zeros((1, 4)), torch.zeros(1), 0.5); import helpers, helpers.checks, autograder.classroom.gradescope.results, nbgrader, nbclient; print('setup: torch', torch.__version__, 'torchvision', torchvision.__version__)"

#!/usr/bin/env bash
# On a machine with a CUDA GPU (the self-hosted runner labelled `gpu`): the tests marked gpu, and
# notebook 08 (the solution) executed top to bottom; the executed copy goes to build/gpu/.
# Fails when no CUDA device is visible: a GPU run that silently used the CPU proves nothing.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-.venv/bin/python}"
if [ ! -x "$PYTHON" ]; then
    python3 -m venv .venv
    PYTHON=.venv/bin/python
fi
"$PYTHON" -m pip install --quiet --upgrade pip
"$PYTHON" -m pip install --quiet -e '.[dev]'
PATH="$(dirname "$PYTHON"):$PATH"
export PATH MPLBACKEND=Agg
"$PYTHON" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device visible'; print(torch.cuda.get_device_name(0))"
"$PYTHON" -m pytest -m gpu -q
"$PYTHON" .github/scripts/execute_notebook.py source/08_gpu_batch_timing/08_gpu_batch_timing.ipynb \
    build/gpu/08_gpu_batch_timing.ipynb

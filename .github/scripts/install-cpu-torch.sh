#!/usr/bin/env bash
# Create .venv (as the Makefile would) with the CPU build of PyTorch: the hosted runners have no
# GPU, and the default CUDA wheels would add gigabytes to every run and to the pip cache.
set -euo pipefail
cd "$(dirname "$0")/../.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet --index-url https://download.pytorch.org/whl/cpu torch torchvision

"""The setup every notebook runs first: seeds, device, inline plots."""

from __future__ import annotations

import os
import random

import numpy as np
import torch

from helpers.device import describe_device, pick_device

DEFAULT_SEED = 0


def seed_everything(seed: int = DEFAULT_SEED) -> None:
    """Seed Python, NumPy and PyTorch (CPU and every GPU) so results repeat."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    os.environ["PYTHONHASHSEED"] = str(seed)


def setup(seed: int = DEFAULT_SEED, device: str | None = None, quiet: bool = False) -> torch.device:
    """Seed everything, pick the device, turn on inline plots; returns the device."""
    seed_everything(seed)
    chosen = pick_device(device)
    _inline_plots()
    if not quiet:
        print(describe_device(chosen))
    return chosen


def _inline_plots() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing to configure
        return
    shell = get_ipython()
    if shell is not None and getattr(shell, "kernel", None) is not None:
        shell.run_line_magic("matplotlib", "inline")

"""The setup every notebook runs first: seeds, device, inline plots, and, on request, determinism.

What repeats after `setup(seed)`, run again in a fresh kernel on the same machine and software:
every random draw (Python's `random`, NumPy's global generator, PyTorch's CPU and CUDA
generators), hence the same initial weights, data splits and shuffles, and the same results of
CPU computations. What does not repeat by seeding alone:
- GPU results in the last bits: some CUDA kernels add in a different order from run to run
  (atomic additions in `index_add_`, scatter, some convolution backward passes), and cuDNN may
  pick a different algorithm. `setup(deterministic=True)` asks PyTorch for deterministic
  algorithms where they exist (and warns where an operation has none).
- Anything across machines, thread counts or PyTorch versions: a different order of summation
  gives different rounding.
- The order of a `set` of strings: Python fixes its string hashing when the interpreter starts,
  from the PYTHONHASHSEED environment variable; setting it inside a running kernel has no effect.
"""

from __future__ import annotations

import os
import random
import warnings

import numpy as np
import torch

from helpers import tracebacks
from helpers.device import describe_device, pick_device

DEFAULT_SEED = 0

# cuBLAS needs a fixed workspace to be deterministic (CUDA >= 10.2); read when CUDA starts.
CUBLAS_WORKSPACE_CONFIG = ":4096:8"


def seed_everything(seed: int = DEFAULT_SEED) -> None:
    """Seed Python's `random`, NumPy's global generator and PyTorch (CPU and every GPU)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device


def make_deterministic() -> None:
    """Ask PyTorch for deterministic algorithms, so that GPU results repeat bit for bit.

    Sets CUBLAS_WORKSPACE_CONFIG (effective only if CUDA has not started yet: call this first),
    `torch.use_deterministic_algorithms(True, warn_only=True)` (an operation with no deterministic
    version warns instead of failing) and turns off cuDNN's autotuner (`cudnn.benchmark`), which
    may pick a different convolution algorithm in each run. Costs speed on a GPU; nothing on a CPU.
    """
    if "CUBLAS_WORKSPACE_CONFIG" not in os.environ:
        if torch.cuda.is_initialized():
            warnings.warn("CUDA has already started, so CUBLAS_WORKSPACE_CONFIG cannot take effect in "
                          "this process: run helpers.setup(deterministic=True) first, in a fresh kernel.",
                          stacklevel=2)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = CUBLAS_WORKSPACE_CONFIG
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.deterministic = True


PROFILER_CYCLE_WARNING = r"Warning: Profiler clears events at the end of each cycle"


def setup(seed: int = DEFAULT_SEED, device: str | None = None, quiet: bool = False,
          deterministic: bool = False) -> torch.device:
    """Seed everything, pick the device, turn on inline plots and, in IPython, tracebacks that show the
    student's lines and the course's hint (`helpers.tracebacks`); returns the device.

    `deterministic=True` also calls `make_deterministic()` (see the module's docstring for what
    repeats with and without it).
    """
    if deterministic:
        make_deterministic()  # before anything starts CUDA
    # torch.profiler's Kineto logs its stages ("profiler_start") to stderr, which nbgrader counts as an error in a
    # graded cell; level 6 keeps it quiet. Read when the profiler first starts, so setting it here is early enough.
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    # For the same reason: torch.profiler warns (seen with torch 2.11 on a GPU) that it "clears events at the end of
    # each cycle" around one profiled call, which has one cycle; nothing a student can act on.
    warnings.filterwarnings("ignore", message=PROFILER_CYCLE_WARNING, category=UserWarning)
    seed_everything(seed)
    chosen = pick_device(device)
    _inline_plots()
    tracebacks.install()  # in IPython: an error raised through PyTorch shows the student's lines and a hint
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

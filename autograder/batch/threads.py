"""How many threads a grading kernel gets, and that its idle threads never spin.

Every kernel would otherwise start one BLAS/OpenMP thread per core: N parallel kernels on N cores
then fight over them, and small models run 15-20x slower (measured here: a digits epoch 6.9 s
instead of 0.39 s), enough to push a correct notebook past the cell timeout. So each kernel gets
its share of the cores (at least one thread). And a thread that has finished its part of a
product waits for the next one by spinning, by default: OpenBLAS (NumPy) for about 2^28 cycles
(0.1 s here), GNU OpenMP (PyTorch) for 300,000 turns. On a shared machine that is a core taken
from another kernel for nothing: measured here, one 01 kernel with two threads used 14.8 CPU-s
against 1.7 with one; 0.5 s of sleep after a NumPy product cost 0.10 CPU-s with the defaults and
0.00 with NEVER_SPIN, which makes idle threads sleep at once.

Only the standard library: tests/conftest.py reads these before anything imports torch.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
# Read once, where the library loads (for a warm kernel: in the kernel server, which imports
# numpy and torch). PASSIVE: OpenMP's idle threads sleep (GNU's libgomp and Intel's libiomp alike;
# GOMP_SPINCOUNT and KMP_BLOCKTIME, left alone, would override it). OPENBLAS_THREAD_TIMEOUT: its
# smallest, 2^4 cycles of waiting before a thread sleeps.
NEVER_SPIN = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_THREAD_TIMEOUT": "4"}


@contextmanager
def limit_kernel_threads(n_jobs: int | None) -> Iterator[int]:
    """In the block, grading kernels get their share of the cores (at least one thread) and
    threads that never spin (NEVER_SPIN).

    Enter it before the kernel server and the workers start, so every kernel inherits it. A
    value the instructor already exported wins (OMP_WAIT_POLICY=ACTIVE gives spinning back); the
    environment is restored on exit.
    """
    from autograder.engine.job import default_jobs

    share = max(1, default_jobs() // max(1, n_jobs or default_jobs()))
    wanted = {**dict.fromkeys(THREAD_VARIABLES, str(share)), **NEVER_SPIN}
    saved = {name: os.environ.get(name) for name in wanted}
    for name, value in wanted.items():
        os.environ.setdefault(name, value)
    try:
        yield share
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value

"""Grading kernels share the cores instead of each taking all of them, and never spin
(autograder/batch/threads.py)."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from autograder.batch import threads
from autograder.engine import job
from autograder.engine.execute import GradingExecute
from autograder.engine.kernel_server import KernelServer

WANTED = (*threads.THREAD_VARIABLES, *threads.NEVER_SPIN)


@pytest.fixture
def clean_environment(monkeypatch):
    for name in WANTED:
        monkeypatch.delenv(name, raising=False)


def test_each_kernel_gets_its_share_of_the_cores_and_the_environment_comes_back(clean_environment, monkeypatch):
    monkeypatch.setattr(job, "default_jobs", lambda: 8)
    with threads.limit_kernel_threads(4) as share:
        assert share == 2
        assert all(os.environ[name] == "2" for name in threads.THREAD_VARIABLES)
        assert {name: os.environ[name] for name in threads.NEVER_SPIN} == threads.NEVER_SPIN
    assert not any(name in os.environ for name in WANTED)


def test_never_below_one_thread_and_the_instructors_setting_wins(clean_environment, monkeypatch):
    monkeypatch.setattr(job, "default_jobs", lambda: 2)
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    with threads.limit_kernel_threads(16) as share:
        assert share == 1
        assert (os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]) == ("3", "1")
        assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"
    assert (os.environ["OMP_NUM_THREADS"], os.environ["OMP_WAIT_POLICY"]) == ("3", "ACTIVE")


# Products in NumPy (OpenBLAS) and PyTorch (OpenMP) on two threads, then half a second of sleep: the
# CPU time the kernel spends meanwhile is its idle threads' (0.10 s with the libraries' defaults).
IDLE = """
import json, time
import numpy as np
import torch
a = np.random.default_rng(0).random((400, 400))
x = torch.rand(400, 400)
for _ in range(5):
    a @ a
    x @ x
start = time.process_time()
time.sleep(0.5)
print(json.dumps([time.process_time() - start, torch.get_num_threads(),
                  "OMP_WAIT_POLICY=PASSIVE" in open("/proc/self/environ").read()]))
"""


@pytest.mark.slow
def test_a_kernels_idle_threads_never_spin(clean_environment, monkeypatch, outside_tmp):
    """A kernel of `grade --jobs 1` on two cores gets two threads, and they sleep when idle: its
    environment as the libraries read it at load (the kernel server's, /proc/self/environ) says so
    (before: OMP_WAIT_POLICY was not among the variables a kernel keeps, and the idle threads spun)."""
    monkeypatch.setattr(job, "default_jobs", lambda: 2)
    with threads.limit_kernel_threads(1), KernelServer(enabled=True) as server:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(IDLE)])
        GradingExecute(kernel_name="python3", timeout=60, kernel_server=server.socket).preprocess(
            nb, {"metadata": {"path": str(outside_tmp)}})
    idle, count, passive = json.loads("".join(o.get("text", "") for o in nb.cells[0].outputs))
    assert (count, passive) == (2, True), nb.cells[0].outputs
    assert idle < 0.03, f"the kernel's idle threads used {idle:.3f} CPU-s in 0.5 s of sleep"

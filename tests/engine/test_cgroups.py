"""A kernel is one unit: its cgroup caps its memory and tasks as a whole, and everything in it ends with it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from autograder.engine import cgroups
from autograder.engine.cgroups import PREFIX, KernelCgroup


def test_where_no_hierarchy_can_be_written_the_problem_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(cgroups, "_own_cgroups", dict)
    assert KernelCgroup(1 << 30, 64).problem == (
        "kernels' memory and process count are capped per process, not per kernel: no cgroup for memory, pids")
    assert KernelCgroup(None, 64).problem.endswith("no cgroup for pids")
    assert KernelCgroup(None, None).problem is None  # nothing asked, nothing missing


def test_the_caps_are_written_in_the_file_of_each_version(tmp_path, monkeypatch):
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    v1.mkdir()
    v2.mkdir()
    monkeypatch.setattr(cgroups, "_own_cgroups", lambda: {"memory": (str(v1), 1), "pids": (str(v2), 2)})
    group = KernelCgroup(123456, 17)
    assert group.problem is None and len(group.folders) == 2
    (memory,) = v1.iterdir()
    (pids,) = v2.iterdir()
    assert memory.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert (memory / "memory.limit_in_bytes").read_text() == "123456"
    assert (pids / "pids.max").read_text() == "17"


@pytest.mark.skipif(cgroups.problem() is not None, reason="no writable cgroup here")
def test_a_process_that_joined_is_capped_and_killed_with_the_kernel():
    group = KernelCgroup(256 << 20, 16)
    fds = group.fds()
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], pass_fds=fds,
                             preexec_fn=lambda: cgroups.join(fds))
    for fd in fds:
        os.close(fd)
    try:
        for folder in group.folders:
            with open(os.path.join(folder, "cgroup.procs")) as f:
                assert str(child.pid) in f.read().split()
        folders = list(group.folders)
        group.close()
        assert child.wait(timeout=30) == -9  # killed with the kernel, not left running
        assert not any(os.path.isdir(folder) for folder in folders) and group.folders == []
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


@pytest.mark.skipif(cgroups.problem() is not None, reason="no writable cgroup here")
def test_a_sweep_removes_the_cgroups_of_launchers_that_are_gone():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    parents = {parent for parent, _ in cgroups._own_cgroups().values()}
    left = [os.path.join(parent, f"{PREFIX}{dead.pid}-1") for parent in parents]
    mine = [os.path.join(parent, f"{PREFIX}{os.getpid()}-1") for parent in parents]
    for folder in left + mine:
        os.mkdir(folder)
    try:
        cgroups.sweep()
        assert not any(os.path.isdir(folder) for folder in left)
        assert all(os.path.isdir(folder) for folder in mine)  # its launcher (this process) is alive
    finally:
        for folder in left + mine:
            cgroups.kill_all(folder)

"""Warm kernels: forked from the kernel server, the same kernels as cold ones, and a safe fallback."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.engine.kernel_server import KernelServer
from autograder.engine.warm_kernel import WarmKernelManager

pytestmark = pytest.mark.slow

PROBE = """import os, sys
print("torch" in sys.modules and "torch._dynamo" in sys.modules, os.getppid(),
      os.getcwd() == os.path.realpath({folder!r}))
import torch
torch.manual_seed(0)
print(float(torch.randn(1)))"""


def run_probe(tmp_path, monkeypatch, server: str | None) -> list[str]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(PROBE.format(folder=str(tmp_path)))])
    client = NotebookClient(nb, kernel_name="python3", kernel_manager_class=WarmKernelManager,
                            resources={"metadata": {"path": str(tmp_path)}})
    client.create_kernel_manager().server = server or ""
    client.execute()
    return "".join(o.get("text", "") for o in nb.cells[0].outputs).split()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kernel server forks")
def test_a_warm_kernel_is_forked_from_the_server_and_behaves_like_a_cold_one(tmp_path, monkeypatch):
    with KernelServer(enabled=True) as server:
        assert server.socket is not None
        # Beside a busy neighbour, preloading took past the launcher's 30 s and the kernel started
        # cold (as it should): what is tested here is the warm kernel, so it waits for one.
        assert server.wait_preloaded()
        preloaded, parent, in_folder, number = run_probe(tmp_path, monkeypatch, server.socket)
        # torch came with the fork, and torch._dynamo, which a meta tensor's mean imports; cwd is right
        assert (preloaded, in_folder) == ("True", "True")
        assert int(parent) == server._process.pid
        leaving = time.monotonic()
    # Stopped without the interpreter's teardown, which took 2.0-2.3 s here with torch and
    # torch._dynamo loaded: every grading session waited for it at its end.
    assert time.monotonic() - leaving < 1.0
    cold_preloaded, cold_parent, cold_in_folder, cold_number = run_probe(tmp_path, monkeypatch, None)
    assert (cold_preloaded, cold_in_folder) == ("False", "True")
    assert number == cold_number  # seeded the same, computes the same


def test_without_a_server_the_launcher_runs_the_ordinary_kernel_command(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "autograder.engine.kernel_server", "launch", str(tmp_path / "no-server"),
         "--", sys.executable, "-m", "ipykernel_launcher", "--version"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip()[0].isdigit(), out.stderr


def test_the_server_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("AUTOGRADER_WARM_KERNELS", "0")
    with KernelServer() as server:
        assert server.socket is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kernel server forks")
def test_a_warm_kernel_imports_what_the_grader_skips(tmp_path):
    """The grader's processes skip a costly import jsonschema makes (autograder/__init__.py); the
    server forks kernels without that entry, so a student's `import` finds the module as anywhere."""
    from autograder import SKIPPED_IMPORTS

    assert all(sys.modules.get(name, "absent") is None for name in SKIPPED_IMPORTS)  # here, the grader
    code = f"import sys\nprint(*[sys.modules.get(m, 'absent') is None for m in {SKIPPED_IMPORTS!r}])"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    with KernelServer(enabled=True) as server:
        client = NotebookClient(nb, kernel_name="python3", kernel_manager_class=WarmKernelManager,
                                resources={"metadata": {"path": str(tmp_path)}})
        client.create_kernel_manager().server = server.socket
        client.execute()
    assert "".join(o.get("text", "") for o in nb.cells[0].outputs).split() == ["False"] * len(SKIPPED_IMPORTS)

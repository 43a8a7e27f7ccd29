"""Grading kernels have no network (autograder/engine/sandbox.py): not even the grader's 127.0.0.1."""

from __future__ import annotations

import socket
import threading

import nbformat
import pytest

from autograder.engine import sandbox
from autograder.engine.execute import GradingExecute
from autograder.engine.kernel_server import KernelServer

PROBLEM = "; ".join(p for p in sandbox.problems() if "network" in p or "not sandboxed" in p)
needs_namespaces = pytest.mark.skipif(bool(PROBLEM), reason=PROBLEM)

CONNECT = """import socket
try:
    with socket.create_connection(("127.0.0.1", {port}), timeout=5) as conn:
        print("reached:", conn.recv(16).decode())
except OSError as error:
    print("refused:", type(error).__name__)"""


@pytest.fixture
def server():
    """A TCP server on 127.0.0.1 in this process (outside any namespace) that says hello."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def run_cell(job, code: str, **settings) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    GradingExecute(kernel_name="python3", timeout=60, **settings).preprocess(
        nb, {"metadata": {"path": str(job)}})
    assert not [o for o in nb.cells[0].outputs if o.output_type == "error"], nb.cells[0].outputs
    return "".join(o.get("text", "") for o in nb.cells[0].outputs).strip()


def test_an_unsandboxed_kernel_reaches_the_server(server, tmp_path):
    """The control: the cell does connect where nothing cuts it off."""
    assert run_cell(tmp_path, CONNECT.format(port=server), sandbox=False) == "reached: hello"


@needs_namespaces
def test_a_sandboxed_cold_kernel_cannot_connect(server, tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    out = run_cell(tmp_path, CONNECT.format(port=server), hide=[str(hidden)])
    assert out.startswith("refused:"), out


@needs_namespaces
def test_a_sandboxed_warm_kernel_cannot_connect(server, tmp_path):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    with KernelServer(enabled=True) as warm:
        assert warm.socket is not None
        out = run_cell(tmp_path, CONNECT.format(port=server), hide=[str(hidden)],
                       kernel_server=warm.socket)
    assert out.startswith("refused:"), out

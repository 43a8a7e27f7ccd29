"""A kernel writes nothing the grader's machine keeps through its socket folder (finding 5 of issue 37).

A sandboxed kernel talks to the grader over Unix sockets (it has no network). The grader's socket
folder (/tmp/agk-ipc-*) is on the machine's real /tmp: a kernel that could write there wrote 1.5 GB
in 20,009 files, past every cap. Each test grades a notebook as the engine does (GradingExecute,
warm and cold), whose cell tries to write a benign marker and then 8 MiB into the folder its
connection file names; after the cell, while the kernel still runs, the test looks at the grader's
folder from outside: no marker, closed to every other user, and gone after the run.
"""

from __future__ import annotations

import os
import secrets
import stat

import nbformat
import pytest

from autograder.engine import sandbox
from autograder.engine.execute import GradingExecute
from autograder.engine.kernel_server import KernelServer

PROBLEM = "; ".join(p for p in sandbox.problems() if "not sandboxed" in p or "can read" in p)
needs_namespaces = pytest.mark.skipif(bool(PROBLEM), reason=PROBLEM)
MARKER = f"agk-marker-{secrets.token_hex(6)}"

WRITE = f"""import os
from ipykernel import get_connection_file
folder = os.path.dirname(get_connection_file())
def attempt(what, action):
    try:
        action()
        print("ATTACK", what, "ok")
    except OSError as error:
        print("ATTACK", what, "denied", type(error).__name__)
def marker():
    with open(os.path.join(folder, {MARKER!r}), "w") as f:
        f.write("a benign marker\\n")
def fill():
    with open(os.path.join(folder, {MARKER!r} + ".bin"), "wb") as f:
        for _ in range(8):
            f.write(b"0" * (1 << 20))
            f.flush()
attempt("marker", marker)
attempt("fill", fill)
print("ATTACK folder", folder)"""


class Watched(GradingExecute):
    """GradingExecute that looks at the kernel's socket folder after each cell, from outside,
    while the kernel still runs: (folder, owner, mode, names)."""

    seen: list = []

    def preprocess_cell(self, cell, resources, index):
        cell, resources = super().preprocess_cell(cell, resources, index)
        folder = os.path.dirname(self.km.connection_file)
        info = os.lstat(folder)
        self.seen.append((folder, info.st_uid, stat.S_IMODE(info.st_mode), sorted(os.listdir(folder))))
        return cell, resources


@pytest.fixture(scope="module")
def server():
    with KernelServer(enabled=True) as server:
        yield server


@needs_namespaces
@pytest.mark.slow
@pytest.mark.parametrize("warm", [False, True])
def test_a_kernel_cannot_write_into_its_socket_folder_on_the_graders_machine(server, tmp_path, warm):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(WRITE)])
    executor = Watched(kernel_name="python3", timeout=60, hide=[str(tmp_path / "nothing")],
                       kernel_server=server.socket if warm else "")
    executor.seen = []
    executor.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs if o.get("output_type") == "stream")
    report = dict(line.split(" ", 2)[1:] for line in printed.splitlines() if line.startswith("ATTACK "))
    (folder, owner, mode, names), = executor.seen
    assert report["folder"] == folder, printed  # the kernel looked where the grader's folder is
    assert MARKER not in names and MARKER + ".bin" not in names, names  # nothing reached the machine
    assert owner == os.geteuid() and not mode & 0o077, (owner, oct(mode))  # closed to other users
    assert report["fill"].startswith("denied"), printed  # what it writes there is its own, capped
    assert not os.path.exists(folder)  # and the folder goes with the kernel

"""The kernel side of a mutant family: run some cells in a fork of the kernel, report each outcome.

`check` proves that every mutant loses points on the tests it names (autograder/authoring/families.py).
Grading each mutant as a notebook of its own ran the notebook's first cells once per mutant: most of
check's time. A family instead runs the source notebook once; just before the cell a mutant replaces,
a cell of the family calls `run` with the mutant's code and the notebook's cells after it, up to the
last test the mutant names. `run` forks the kernel: the child holds the state the notebook has at that
point, exactly, runs the cells one after another as the kernel would, and dies; the parent goes on
with the notebook as written.

The child never touches the kernel's sockets (a fork shares them): what it prints is dropped (grading
drops stderr, and stdout scores nothing), what it displays goes nowhere, `input()` raises as it does in
a grading kernel, and OpenMP gets one thread (GNU OpenMP's pool does not survive a fork). Each cell has
`timeout` seconds (then KeyboardInterrupt, as the grader's interrupt); a child that outlives all its
cells' time is killed. The parent returns one JSON line: for each cell that ran, its error
("Type: message") or the text of its last expression's value (nbgrader reads partial credit from it),
and how the child ended; the grader scores it with nbgrader's own rule.

Standard library only: it is imported in kernels.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import math
import os
import select
import signal
import sys
import time

MARK = "autograder_forked"
_ERROR_CHARS = 500
_GRACE = 10.0  # seconds past the cells' own time before the child is killed


class CellTimedOut(KeyboardInterrupt):
    """A cell ran past its time (what the grader's interrupt raises in a kernel)."""


def run(cells: list[str], timeout: float, label: str = "") -> str:
    """Run `cells` in a forked child of this process; one JSON line saying how each went."""
    started = time.perf_counter()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(read_end)
            _child(cells, timeout, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    data, killed = _read_until(read_end, time.monotonic() + timeout * len(cells) + _GRACE, pid)
    _, status = os.waitpid(pid, 0)
    ran = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            ran.append(json.loads(line))
        except ValueError:
            break  # a line cut by the child's death
    if killed:
        ended = f"killed after {timeout * len(cells) + _GRACE:g} s"
    elif os.WIFSIGNALED(status):
        ended = f"died of signal {os.WTERMSIG(status)}"
    else:
        ended = "exited" if len(ran) == len(cells) else f"exited with status {os.WEXITSTATUS(status)}"
    return json.dumps({MARK: {"label": label, "ran": ran, "cells": len(cells), "ended": ended,
                              "seconds": round(time.perf_counter() - started, 3)}})


def _read_until(fd: int, deadline: float, pid: int) -> tuple[bytes, bool]:
    chunks = []
    with os.fdopen(fd, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                os.kill(pid, signal.SIGKILL)
                return b"".join(chunks), True
            ready, _, _ = select.select([pipe], [], [], min(left, 1.0))
            if ready:
                chunk = pipe.read(65536)
                if not chunk:
                    return b"".join(chunks), False
                chunks.append(chunk)


class _Sink(io.TextIOBase):
    """Where the child's prints go: nowhere (a fork's stdout would be the kernel's socket)."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


def _no_input(prompt: str = "") -> str:
    raise RuntimeError("input() is not available while grading")


def _timed_out(signum, frame):
    raise CellTimedOut("the cell ran past its time")


def _child(cells: list[str], timeout: float, fd: int) -> None:
    out = os.fdopen(fd, "w", buffering=1)
    null = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        os.dup2(null, target)
    sys.stdin, sys.stdout, sys.stderr = io.StringIO(), _Sink(), _Sink()
    builtins.input = _no_input
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    shell = None
    if "IPython" in sys.modules:
        shell = sys.modules["IPython"].get_ipython()
    if shell is not None:
        from IPython.core.displaypub import DisplayPublisher

        class Dropped(DisplayPublisher):
            def publish(self, *args, **kwargs):
                pass

            def clear_output(self, *args, **kwargs):
                pass

        shell.display_pub = Dropped()
        names = shell.user_ns
    else:
        names = sys.modules["__main__"].__dict__
    signal.signal(signal.SIGALRM, _timed_out)
    for index, text in enumerate(cells):
        record: dict = {"index": index}
        began = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, max(1, math.ceil(timeout)))
        try:
            value = _execute(shell, text, names)
            signal.setitimer(signal.ITIMER_REAL, 0)
            if value is not None:
                record["text"] = _plain_text(shell, value)
        except BaseException as error:  # noqa: BLE001 - every error is the cell's outcome
            signal.setitimer(signal.ITIMER_REAL, 0)
            record["error"] = f"{type(error).__name__}: {str(error)[:_ERROR_CHARS]}"
        record["seconds"] = round(time.perf_counter() - began, 3)
        out.write(json.dumps(record) + "\n")
    out.flush()


def _execute(shell, text: str, names: dict):
    """Run one cell's code as IPython would (magics, the last expression's value); return that value."""
    code = shell.transform_cell(text) if shell is not None else text
    tree = ast.parse(code)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
        last = ast.Expression(tree.body.pop().value)
    exec(compile(tree, "<cell>", "exec"), names)
    return eval(compile(last, "<cell>", "eval"), names) if last is not None else None


def _plain_text(shell, value) -> str:
    if shell is not None:
        data, _ = shell.display_formatter.format(value)
        if "text/plain" in data:
            return str(data["text/plain"])[:_ERROR_CHARS]
    return repr(value)[:_ERROR_CHARS]

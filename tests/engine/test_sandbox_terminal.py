"""A kernel never writes to the grader's terminal (part of finding 9 of issue 37).

`os.write(1, ...)` from a kernel once printed a coloured fake "control/05_optim: 14/14" line in
grade's own output: the kernel inherited the grader's standard output and error, and ipykernel
echoes what reaches its descriptors there. Graded here with `python -m autograder grade`, as an
instructor runs it, a submission writes a benign marker to its descriptors 1 and 2, from the
kernel and from a child process; grade's own output must not hold it.
"""

from __future__ import annotations

import copy
import secrets
import subprocess
import sys

import nbformat
import pytest

from autograder.course.notebooks import grade_id, read_notebook

pytestmark = pytest.mark.slow
MARKER = f"kernel-marker-{secrets.token_hex(6)}"
WRITES = f"""import os, subprocess, sys
fake = "\\x1b[32mcontrol/00_fixture: 6/6 {MARKER}\\x1b[0m\\n".encode()
os.write(1, fake)
os.write(2, fake)
subprocess.run([sys.executable, "-c", "import os; os.write(1, {MARKER!r}.encode()); os.write(2, {MARKER!r}.encode())"])
def scale(x, factor):
    return x * factor"""


def test_what_a_kernel_writes_to_its_descriptors_never_reaches_grades_output(released_course, tmp_path):
    nb = copy.deepcopy(read_notebook(released_course.source_notebook("00_fixture")))
    next(c for c in nb.cells if grade_id(c) == "scale").source = WRITES
    path = tmp_path / "submitted" / "mallory" / "00_fixture" / "00_fixture.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(nb, path)
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(tmp_path / "submitted"), "--root",
         str(released_course.root), "--out", str(tmp_path / "out"), "--jobs", "1", "--timeout", "60"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 of 1 rows graded" in run.stdout, run.stdout + run.stderr
    assert MARKER not in run.stdout and MARKER not in run.stderr, run.stdout + run.stderr

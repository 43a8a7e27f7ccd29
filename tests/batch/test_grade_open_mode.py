"""No open mode (issue 37, item 4): where kernels can get neither the namespace sandbox nor a user of
their own, `grade` refuses before any submission runs, and says how to grade anyway.

The attack: on such a machine (AUTOGRADER_NO_NAMESPACES=1 acts as one), a submission reads the
course's source notebook, answers and all, and leaves what it read in a folder of its own (a benign
marker). Before: the kernel ran unsandboxed with a warning, graded, and the marker held the
solution. Now nothing runs; AUTOGRADER_UNSANDBOXED=1, set by hand for notebooks one trusts, grades.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys

import nbformat
import pytest

from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine import privsep

pytestmark = pytest.mark.slow

READS_THE_SOURCE = '''\
from pathlib import Path

try:
    Path({marker!r}).write_text(Path({source!r}).read_text())
except OSError as error:
    Path({marker!r}).write_text("refused: " + type(error).__name__)

def scale(x, factor):
    return x * factor
'''


def graded(course, folder, env_extra: dict) -> tuple[subprocess.CompletedProcess, str | None]:
    """grade a batch of one submission that tries to read the source notebook; (the run, what the
    submission left in its marker, or None where it never ran)."""
    marker = folder / "marker.txt"
    nb = copy.deepcopy(read_notebook(course.release_notebook("00_fixture")))
    for cell in nb.cells:
        if grade_id(cell) == "scale":
            cell.source = READS_THE_SOURCE.format(marker=str(marker), source=str(course.source_notebook("00_fixture")))
    submitted = folder / "submitted" / "mallory" / "00_fixture"
    submitted.mkdir(parents=True)
    nbformat.write(nb, submitted / "00_fixture.ipynb")
    env = {k: v for k, v in os.environ.items() if k not in (privsep.USER_SETTING, privsep.UNSANDBOXED_SETTING)}
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(folder / "submitted"), "--root", str(course.root),
         "--out", str(folder / "grades"), "--jobs", "1"],
        capture_output=True, text=True, timeout=600, env={**env, privsep.NO_NAMESPACES_SETTING: "1", **env_extra})
    return run, marker.read_text() if marker.exists() else None


def test_without_namespaces_or_a_kernel_user_grade_refuses_and_nothing_runs(released_course, outside_tmp):
    run, leaked = graded(released_course, outside_tmp, {})
    assert leaked is None, f"the submission ran and left: {leaked[:200]}"
    assert run.returncode == 2, run.stdout + run.stderr
    said = run.stdout + run.stderr
    assert "unsandboxed" in said and privsep.USER_SETTING in said and privsep.UNSANDBOXED_SETTING in said, said
    assert not (outside_tmp / "grades" / "grades.csv").exists()


def test_grading_unsandboxed_is_asked_for_by_name_and_said(released_course, outside_tmp):
    run, leaked = graded(released_course, outside_tmp, {privsep.UNSANDBOXED_SETTING: "1"})
    assert run.returncode == 0, run.stdout + run.stderr
    assert leaked is not None  # what asking for it means: the kernel ran as the grader
    assert "unsandboxed" in run.stdout + run.stderr
    assert (outside_tmp / "grades" / "grades.csv").exists()

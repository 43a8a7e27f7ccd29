"""A kernel that dies late costs only the exercises at and after the crash, in both runs.

The source notebook (every answer right) with `os._exit(1)` at the end of its last solution
cell: nbgrader's run keeps the points of the test cells before that cell (autograder/engine/execute.py),
and the trusted run (autograder/engine/verify.py) must confirm them instead of failing every exercise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder.batch.grade import grade
from autograder.course import exercises
from autograder.course.layout import Course
from autograder.course.notebooks import (
    grade_id,
    is_solution,
    is_test,
    read_notebook,
    write_notebook,
)

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENTS = ("01_numpy_mlp", "03_custom_functions")
CRASH = "\n\nimport os\n\nos._exit(1)\n"


def crashed_late(assignment: str):
    """(the source notebook with os._exit at the end of its last solution cell, points kept,
    the exercises that cell defines)."""
    nb = read_notebook(Course(ROOT).source_notebook(assignment))
    last = max(i for i, c in enumerate(nb.cells) if is_solution(c))
    nb.cells[last].source += CRASH
    points = exercises.read(nb).test_points()
    kept = sum(points[grade_id(c)] for c in nb.cells[:last] if is_test(c) and grade_id(c) in points)
    return nb, kept, grade_id(nb.cells[last])


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("submitted")
    expected = {}
    for assignment in ASSIGNMENTS:
        nb, kept, last = crashed_late(assignment)
        write_notebook(nb, root / "crasher" / assignment / f"{assignment}.ipynb")
        expected[assignment] = (kept, last)
    out = tmp_path_factory.mktemp("graded")
    grade(Course(ROOT), root, out, list(ASSIGNMENTS), n_jobs=2)
    records = {r["assignment"]: r for r in json.loads((out / "grades.json").read_text())}
    return records, expected


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_late_crash_keeps_the_points_before_it(graded, assignment):
    records, expected = graded
    record = records[assignment]
    kept, last = expected[assignment]
    assert record["status"] == "graded", record["reason"]
    assert 0 < kept < record["max_score"]
    assert record["score"] == kept, (record["score"], record["verification"], record["cells"])


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_trusted_run_passes_the_exercises_before_the_crash(graded, assignment):
    records, expected = graded
    verification = records[assignment]["verification"]
    _, last = expected[assignment]
    before = {name: why for name, why in verification.items() if name != last}
    assert before and all(why == "passed" for why in before.values()), verification
    assert "kernel died" in verification[last], verification

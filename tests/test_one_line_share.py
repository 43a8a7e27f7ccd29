"""Issue 20 §1: exercises whose answer is a line or two earn at most 10 % of a notebook's points.

An exercise's length is the number of lines of code (blank lines and comments left out) between
`### BEGIN SOLUTION` and `### END SOLUTION` in its solution cell, every region of the cell together;
at most two such lines (`with torch.autocast(...):` and its `return`) make a one-line exercise.
Checked here for 04-08 (01-03 are being rewritten beside this file).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from autograder.points import exercise_points

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [path for path in sorted((ROOT / "source").glob("0[4-8]_*/*.ipynb"))]
REGION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


def solution_lines(source: str) -> int:
    """Lines of code inside the solution regions of one cell."""
    return sum(1 for region in REGION.findall(source) for line in region.splitlines()
               if line.strip() and not line.strip().startswith("#"))


def one_line_points(nb) -> tuple[float, float, list[str]]:
    """(points of one-line exercises, all points, their names)."""
    points = exercise_points(nb)
    short = [cell.metadata.nbgrader["grade_id"] for cell in nb.cells
             if cell.metadata.get("nbgrader", {}).get("solution") and solution_lines(cell.source) <= 2]
    return sum(points.get(name, 0.0) for name in short), sum(points.values()), short


def test_the_measure_counts_a_two_line_autocast_and_not_a_loop():
    assert solution_lines("def f():\n    ### BEGIN SOLUTION\n    with a:\n        return b\n    ### END SOLUTION\n") == 2
    loop = "### BEGIN SOLUTION\nfor x in y:\n    # note\n\n    z(x)\nreturn 1\n### END SOLUTION\n"
    assert solution_lines(loop) == 3


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_one_line_exercises_are_at_most_a_tenth_of_the_points(path):
    short, total, names = one_line_points(nbformat.read(path, as_version=4))
    assert total > 0
    assert short <= 0.1 * total, f"{path.stem}: one-line exercises {names} earn {short:g} of {total:g} points"

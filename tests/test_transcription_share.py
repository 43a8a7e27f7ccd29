"""Students derive or design at least three quarters of the course's points (issue 38, 2; DESIGN's gates).

Every exercise of every source notebook has a kind in its grading folder's kinds.toml
(autograder/course/kinds.py): derived, designed, transcribed (the formula, code or step list is in the
prose above, or verbatim in a slide the notebook cites) or one_line. The transcribed and one-line
exercises carry at most 25 % of the course's points, the one-line ones at most 10 % of each notebook's
(tests/test_one_line_share.py measures the same from the solutions' lines; a kind must agree with it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.course import exercises, kinds
from autograder.course.notebooks import grade_id, is_solution, read_notebook

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "source").glob("*/*.ipynb"))
COURSE_LIMIT = 0.25
ONE_LINE_LIMIT = 0.10


def classified(path: Path) -> tuple[dict[str, float], dict[str, kinds.Kind]]:
    """(exercise -> points, exercise -> kind) of one source notebook."""
    return exercises.read(read_notebook(path)).points(), kinds.read(ROOT, path.parent.name)


def _ids(path: Path) -> str:
    return path.parent.name


def test_every_assignment_is_here():
    assert [p.parent.name for p in SOURCES] == sorted(p.name for p in (ROOT / "grading").iterdir() if p.is_dir())


@pytest.mark.parametrize("path", SOURCES, ids=_ids)
def test_every_exercise_has_a_kind_and_every_kind_an_exercise(path):
    points, found = classified(path)
    assert kinds.problems(found, points, path.parent.name) == []


@pytest.mark.parametrize("path", SOURCES, ids=_ids)
def test_one_line_is_the_kind_of_exactly_the_one_line_solutions(path):
    """The kind agrees with the measure: a solution of one line (questions answered as values apart) is
    one_line, and nothing longer is."""
    nb = read_notebook(path)
    lines = {grade_id(c): kinds.solution_lines(c.source) for c in nb.cells if c.cell_type == "code" and is_solution(c)}
    _, found = classified(path)
    wrong = {name: (kind.kind, lines.get(name)) for name, kind in found.items()
             if not name.startswith("answer_") and (lines.get(name, 0) <= 1) != (kind.kind == "one_line")}
    assert not wrong, f"{path.parent.name}: kind against solution lines: {wrong}"


@pytest.mark.parametrize("path", SOURCES, ids=_ids)
def test_one_line_exercises_carry_at_most_a_tenth_of_each_notebook(path):
    points, found = classified(path)
    one_line = sum(value for name, value in points.items() if found[name].kind == "one_line")
    assert one_line <= ONE_LINE_LIMIT * sum(points.values()), (path.parent.name, one_line, sum(points.values()))


def course_share() -> tuple[float, float]:
    copied = total = 0.0
    for path in SOURCES:
        points, found = classified(path)
        copied += kinds.copied_points(found, points)
        total += sum(points.values())
    return copied, total


def test_the_course_transcribes_at_most_a_quarter_of_its_points():
    """Issue 38, 2: 124 of 189 points (66 %) when first measured; 46 of 203 (23 %) when 03 and 04 were rewritten."""
    copied, total = course_share()
    assert copied <= COURSE_LIMIT * total, f"{copied:g} of {total:g} points transcribed or one line ({copied / total:.0%})"

"""grades.csv read back for export and feedback: checked against the course, late penalties applied,
a student's own due date honoured, and one rule for what an LMS gets for a row not graded."""

from __future__ import annotations

import csv
from datetime import datetime, timedelta, timezone

import pytest

from autograder.classroom.results import Result, assignments_in, read_results, reported, total
from autograder.course.layout import CourseError

COLUMNS = ["student_id", "assignment", "score", "max_score", "status", "reason", "submitted_at", "due_at"]


def grades(tmp_path, *rows, columns=COLUMNS):
    folder = tmp_path / "grades"
    folder.mkdir(exist_ok=True)
    with open(folder / "grades.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(rows)
    return folder


@pytest.fixture
def course(fixture_course):
    (fixture_course.root / "pyproject.toml").write_text(
        '[tool.course]\nlate_penalty_per_day = 0.1\n[tool.course.due]\n"00_fixture" = "2026-12-01T23:59:00+00:00"\n')
    return fixture_course


def test_penalties_follow_the_policy_and_a_students_own_due_date(course, tmp_path):
    folder = grades(tmp_path,
                    ["bob", "00_fixture", "6", "6", "graded", "", "2026-12-03T10:00:00+00:00", ""],
                    ["ann", "00_fixture", "5", "6", "graded", "", "2026-12-03T10:00:00+00:00",
                     "2026-12-05T23:59:00+00:00"],
                    ["cat", "00_fixture", "0", "6", "missing", "no notebook", "", ""],
                    ["eve", "notes", "0", "0", "unknown_assignment", "not an assignment", "", ""])
    results, policy = read_results(folder, course)
    assert [r.student_id for r in results] == ["ann", "bob", "cat"]  # unknown folders left out
    ann, bob, cat = results
    assert (bob.days_late, bob.penalty, bob.final) == (2, 1.2, 4.8)
    assert ann.extended and ann.days_late == 0 and ann.final == 5.0
    assert ann.due == datetime(2026, 12, 5, 23, 59, tzinfo=timezone.utc)
    assert bob.lateness == timedelta(days=1, hours=10, minutes=1) and cat.lateness == timedelta(0)
    assert policy.per_day == 0.1 and assignments_in(results, course) == ["00_fixture"]


def test_an_lms_gets_the_final_score_and_for_a_row_not_graded_nothing_or_zero():
    graded = Result("a", "01", 5, 6, "graded", "", None, None, 0, 1.0)
    missing = Result("b", "01", 0, 6, "missing", "", None, None, 0, 0.0)
    assert reported(graded) == 4.0 and reported(missing) is None and reported(missing, "zero") == 0.0
    assert total([graded, missing]) == 4.0 and total([missing]) is None and total([missing], "zero") == 0.0


@pytest.mark.parametrize("rows,message", [
    ([["bob", "00_fixture", "six", "6", "graded", "", "", ""]], "row 2: score = 'six' is not a number"),
    ([["bob", "00_fixture", "6", "6", "graded", "", "yesterday", ""]], "row 2: submitted_at = 'yesterday'"),
    ([["bob", "00_fixture", "6", "6", "graded", "", "", ""]] * 2, "rows 2 and 3: bob graded twice for 00_fixture"),
    ([[" ", "00_fixture", "6", "6", "graded", "", "", ""]], "row 2: student_id is empty"),
    ([["bob", "09_other_course", "6", "6", "graded", "", "", ""]], "another course's grades folder"),
])
def test_a_row_that_is_wrong_is_named(course, tmp_path, rows, message):
    with pytest.raises(CourseError, match=message):
        read_results(grades(tmp_path, *rows), course)


def test_a_folder_without_grades_csv_or_not_grades_is_named(course, tmp_path):
    with pytest.raises(CourseError, match="holds no grades.csv"):
        read_results(tmp_path, course)
    with pytest.raises(CourseError, match="no column score, max_score, status"):
        read_results(grades(tmp_path, ["bob", "00_fixture"], columns=["student_id", "assignment"]), course)

"""`python -m autograder export`: grades.csv to Canvas, Gradescope and a wide table, late penalties.

grades.csv is written here in grade's format (autograder/batch/grade.py's CSV_COLUMNS); the rosters are
tests/fixtures/lms/ (Canvas's gradebook export, Gradescope's roster). No notebook is executed.
"""

from __future__ import annotations

import csv
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.batch.grade import CSV_COLUMNS
from autograder.course.lateness import LatePolicy, load_policy, parse_due
from autograder.course.layout import CourseError

LMS = Path(__file__).parents[1] / "fixtures" / "lms"
A = "00_fixture"
DUE = "2026-12-01T23:59:00+00:00"
POLICY = f"""
[tool.course]
late_penalty_per_day = 0.1
late_penalty_cap = 0.5

[tool.course.due]
"{A}" = "{DUE}"
"""


def write_grades(folder: Path, rows: list[tuple]) -> Path:
    """grades.csv with (student_id, score, submitted_at[, assignment, status, due_at]) rows."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for student, score, when, *rest in rows:
            assignment, status, due = (rest + [A, "graded", ""][len(rest):])[:3]
            writer.writerow({"student_id": student, "assignment": assignment, "score": score,
                             "max_score": "6", "status": status, "reason": "", "warnings": "",
                             "submitted_at": when, "due_at": due})
    return folder


@pytest.fixture
def course(fixture_course):
    (fixture_course.root / "pyproject.toml").write_text(POLICY)
    return fixture_course


def export(course, *args) -> int:
    return main(["export", *map(str, args), "--root", str(course.root)])


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows([header, *rows])


def read(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def at(days: float) -> datetime:
    """`days` after the due date (negative: before)."""
    return datetime.fromisoformat(DUE) + timedelta(days=days)


@pytest.mark.parametrize("late_by_days, score, penalty", [
    (-3, 6, 0),  # early
    (0, 6, 0),  # exactly at the due date
    (1 / 86400, 6, 0.6),  # one second late is a started day: 10 % of 6
    (2 + 1 / 24, 6, 1.8),  # 2 days and an hour: 3 started days
    (10, 6, 3.0),  # capped at 50 %
    (3, 0.5, 0.5),  # never more than the score
])
def test_late_penalty_is_a_fraction_of_max_score_per_started_day(late_by_days, score, penalty):
    policy = load_policy({"due": {A: DUE}, "late_penalty_per_day": 0.1, "late_penalty_cap": 0.5}, [A])
    assert policy.penalty(A, at(late_by_days), score, 6.0) == pytest.approx(penalty)


def test_no_due_date_or_no_time_means_no_penalty():
    policy = LatePolicy({A: parse_due(A, DUE)}, 0.1, 0.5)
    assert policy.penalty(A, None, 6, 6) == 0
    assert policy.penalty("01_other", at(5), 6, 6) == 0


def test_canvas_import_keeps_the_roster_its_ids_and_the_points_row(course, tmp_path, capsys):
    grades = write_grades(tmp_path / "grades", [
        ("1001", "6", "2026-11-30T10:00:00+00:00"),
        ("1002", "5", "2026-12-03T12:00:00+00:00"),  # 1 day 12 h late: 2 started days, -1.2
        ("jdoe_dup", "4", ""),
        ("9999", "6", ""),  # graded, but not on the roster
    ])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", LMS / "canvas_gradebook.csv",
                  "--out", out) == 0
    rows = read(out)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", f"{A} (4242)"]
    assert rows[1] == ["Points Possible", "", "", "", "", "6"]
    assert rows[2:] == [
        ["Doe, Jane", "1001", "S1001", "jdoe", "Lab A", "6"],
        ["Smith, Bob", "1002", "S1002", "bsmith", "Lab A", "3.8"],
        ["Lee, Carl", "1003", "S1003", "clee", "Lab B", ""],  # no submission: left empty
        ["Student, Test", "1999", "", "", "Lab A", ""],
    ]
    err = capsys.readouterr().err
    assert "not on the roster: 9999" in err and "not on the roster: jdoe_dup" in err
    unmatched = read(tmp_path / "canvas.unmatched.csv")
    assert unmatched[0][:3] == ["student_id", "assignment", "score"]
    assert sorted(r[0] for r in unmatched[1:]) == ["9999", "jdoe_dup"]


def canvas_course(course, points: str = "") -> None:
    """The course with its Canvas assignment id, 4242 (the fixture gradebooks' column)."""
    (course.root / "pyproject.toml").write_text(POLICY + f'\n[tool.course.canvas_id]\n"{A}" = 4242\n')


def test_a_gradebook_with_a_manual_posting_row_is_imported_as_canvas_wrote_it(course, tmp_path,
                                                                               capsys):
    """canvas-lms's lib/gradebook_exporter.rb: every student information column, a custom column,
    a "Manual Posting" row before "    Points Possible" (points as "6.00"), read-only totals, EX
    and N/A. Before, export stopped on it: "row 2: no ID", and wrote nothing."""
    canvas_course(course)
    grades = write_grades(tmp_path / "grades", [("1001", "6", "2026-11-30T10:00:00+00:00"),
                                                ("1002", "5", "2026-12-03T12:00:00+00:00")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", LMS / "canvas_gradebook_posting.csv",
                  "--out", out) == 0
    rows = read(out)
    identity = ["Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Root Account",
                "Section"]
    assert rows[0] == identity + ["HW0 - Fixture (4242)"]
    assert rows[1] == [""] * 7 + ["Manual Posting"]  # where and how Canvas wrote it
    assert rows[2] == ["Points Possible"] + [""] * 6 + ["6"]
    assert rows[3:] == [
        ["Doe, Jane", "1001", "S1001", "jdoe", "int-1", "canvas.uni.edu", "Lab A", "6"],
        ["Smith, Bob", "1002", "S1002", "bsmith", "int-2", "canvas.uni.edu", "Lab A", "3.8"],
        ["Lee, Carl", "1003", "S1003", "clee", "int-3", "canvas.uni.edu", "Lab B and Lab C", ""],
        ["Student, Test", "1999", "", "", "", "canvas.uni.edu", "Lab A", ""],
    ]
    err = capsys.readouterr().err
    assert ("HW0 - Fixture (4242): Canvas posts this assignment's grades by hand (\"Manual "
            "Posting\"): students see the imported grades once you post them") in err
    assert "worth" not in err  # 6.00 is 6


def test_canvas_is_told_what_its_import_would_change_or_skip(course, tmp_path, capsys):
    """An assignment graded anonymously and not yet posted: Canvas imports no grade into it. One
    worth 10 points in Canvas: the import's Points Possible row makes it 6."""
    canvas_course(course)
    text = (LMS / "canvas_gradebook_posting.csv").read_text(encoding="utf-8-sig")
    text = text.replace(",Manual Posting,", ",Manual Posting (scores hidden from instructors),")
    (tmp_path / "gradebook.csv").write_text(text.replace(",6.00,", ",10.00,"))
    grades = write_grades(tmp_path / "grades", [("1001", "6", "")])
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "gradebook.csv",
                  "--out", tmp_path / "canvas.csv") == 0
    err = capsys.readouterr().err
    assert ("Canvas says \"Manual Posting (scores hidden from instructors)\": it imports no grade "
            "into this column until its anonymous submissions are posted") in err
    assert ("Canvas has it worth 10.00 points, the notebook 6: the import's Points Possible row "
            "sets it to 6") in err


@pytest.mark.parametrize("form", ["last and first names apart", "semicolons"])
def test_every_form_of_canvas_gradebook_export_is_read(course, tmp_path, form):
    """Canvas exports "LastName","FirstName" instead of "Student" when the course shows them
    apart, and `;` between cells for a user whose CSV settings ask for it."""
    canvas_course(course)
    rows = read(LMS / "canvas_gradebook_posting.csv")
    rows[0][0] = rows[0][0].removeprefix("\ufeff")
    if form == "semicolons":
        with open(tmp_path / "gradebook.csv", "w", newline="") as f:
            csv.writer(f, delimiter=";").writerows(rows)
        expected_identity = ["Student"]
    else:
        header, posting, points, *students = rows
        names = [student[0].split(", ") for student in students]
        write_csv(tmp_path / "gradebook.csv", ["LastName", "FirstName", *header[1:]],
                  [["", "", *posting[1:]], [points[0], "", *points[1:]],
                   *([last, first, *student[1:]] for (last, first), student in zip(names, students))])
        expected_identity = ["LastName", "FirstName"]
    grades = write_grades(tmp_path / "grades", [("1001", "6", "")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "gradebook.csv",
                  "--out", out) == 0
    written = read(out)
    assert written[0][:len(expected_identity)] == expected_identity
    assert written[0][-1] == "HW0 - Fixture (4242)" and written[1][-1] == "Manual Posting"
    assert written[2][0] == "Points Possible" and written[3][-1] == "6"
    assert len(written) == 7


def test_a_students_own_due_date_replaces_the_assignments(course, tmp_path):
    """Canvas's cached_due_date (an extension), which collect writes to due.txt and grade to
    grades.csv's due_at. Before, 1002 lost 2 days' penalty handing in before their own date."""
    grades = write_grades(tmp_path / "grades", [
        ("1001", "6", "2026-12-03T12:00:00+00:00"),  # no extension: 2 started days late
        ("1002", "6", "2026-12-03T12:00:00+00:00", A, "graded", "2026-12-05T05:59:00+00:00"),
        ("1003", "6", "2026-12-05T06:00:00+00:00", A, "graded", "2026-12-05T05:59:00+00:00"),
    ])
    out = tmp_path / "wide.csv"
    assert export(course, grades, "--to", "csv", "--out", out) == 0
    rows = {row[0]: row for row in read(out)[1:]}
    assert [rows[s][1] for s in ("1001", "1002", "1003")] == ["4.8", "6", "5.4"]
    assert [rows[s][5] for s in ("1001", "1002", "1003")] == ["2", "0", "1"]  # days late


def test_students_match_on_the_declared_key_only_never_another_column(course, tmp_path, capsys):
    """`clee` is the SIS Login ID of the row with ID 1003: no fallback between columns, the export
    stops; --roster-key sis matches the SIS User ID, and only it."""
    grades = write_grades(tmp_path / "grades", [("clee", "2", "")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", LMS / "canvas_gradebook.csv",
                  "--out", out) == 2
    assert "'clee' is no ID of the roster but is in row 5 (SIS Login ID)" in capsys.readouterr().err
    assert not out.exists()
    grades = write_grades(tmp_path / "grades", [("S1003", "2", "")])
    assert export(course, grades, "--to", "canvas", "--roster", LMS / "canvas_gradebook.csv",
                  "--roster-key", "sis", "--out", out) == 0
    assert read(out)[4] == ["Lee, Carl", "1003", "S1003", "clee", "Lab B", "2"]
    assert not (tmp_path / "canvas.unmatched.csv").exists()


def test_an_id_that_is_another_rows_sis_id_stops_the_export_naming_both_rows(
        course, tmp_path, capsys):
    """The grade of user 101 went to the row of ID 555, whose SIS User ID is 101, and the row of
    ID 101 stayed empty."""
    (tmp_path / "roster.csv").write_text(
        f"Student,ID,SIS User ID,SIS Login ID,Section,{A} (4242)\n"
        "\"Roe, Rick\",555,101,rroe,Lab A,\n"
        "\"Doe, Jane\",101,S9,jdoe,Lab A,\n")
    grades = write_grades(tmp_path / "grades", [("101", "6", "")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", out) == 2
    assert ("'101' is the ID of row 3 and also in row 2 (SIS User ID): which student it is "
            "cannot be told") in capsys.readouterr().err
    assert not out.exists()


def two_assignments(course) -> str:
    """A second assignment in the fixture course's source/; its name."""
    second = "01_second"
    (course.source_dir / second).mkdir()
    (course.source_dir / second / f"{second}.ipynb").write_bytes(course.source_notebook(A).read_bytes())
    return second


def test_a_column_is_written_only_for_an_assignment_with_graded_rows(course, tmp_path, capsys):
    """grade's rows of an assignment nobody handed in are all 'missing': the roster's column for
    it (which holds grades already) is not in the import, so Canvas keeps them."""
    second = two_assignments(course)
    (tmp_path / "roster.csv").write_text(
        f"Student,ID,SIS User ID,{A} (4242),{second} (4343)\n"
        "\"Doe, Jane\",1001,S1,,18\n\"Smith, Bob\",1002,S2,,10\n")
    grades = write_grades(tmp_path / "grades", [
        ("1001", "6", "", A), ("1002", "5", "", A),
        ("1001", "0", "", second, "missing"), ("1002", "0", "", second, "missing")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", out) == 0
    assert read(out) == [["Student", "ID", "SIS User ID", f"{A} (4242)"],
                         ["Doe, Jane", "1001", "S1", "6"], ["Smith, Bob", "1002", "S2", "5"]]
    assert f"no column for {second}: none of its rows was graded" in capsys.readouterr().err


def test_canvas_column_is_found_by_the_canvas_id_of_tool_course(course, tmp_path, capsys):
    """A column a person titled ("HW0 - Fixture (5501)") is found by its id, not a new column."""
    (course.root / "pyproject.toml").write_text(POLICY + f'[tool.course.canvas_id]\n"{A}" = 5501\n')
    (tmp_path / "roster.csv").write_text(
        "Student,ID,SIS User ID,HW0 - Fixture (5501),Old quiz (77)\n\"Doe, Jane\",1001,S1,,9\n")
    grades = write_grades(tmp_path / "grades", [("1001", "6", "")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", out) == 0
    assert read(out) == [["Student", "ID", "SIS User ID", "HW0 - Fixture (5501)"],
                         ["Doe, Jane", "1001", "S1", "6"]]
    assert "new column" not in capsys.readouterr().err
    (course.root / "pyproject.toml").write_text(POLICY + f'[tool.course.canvas_id]\n"{A}" = 6000\n')
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", tmp_path / "other.csv") == 2
    assert f"no column for {A}'s Canvas assignment id 6000" in capsys.readouterr().err
    assert not (tmp_path / "other.csv").exists()


def test_a_new_canvas_column_is_said(course, tmp_path, capsys):
    (tmp_path / "roster.csv").write_text("Student,ID,HW0 - Fixture (5501)\n\"Doe, Jane\",1001,\n")
    grades = write_grades(tmp_path / "grades", [("1001", "6", "")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", out) == 0
    assert read(out)[0] == ["Student", "ID", A]
    assert f"new column '{A}'" in capsys.readouterr().err


@pytest.mark.parametrize("flag, written", [((), ""), (("--ungraded", "zero"), "0")])
def test_a_broken_submission_is_reported_and_never_a_silent_zero(course, tmp_path, capsys,
                                                                flag, written):
    grades = tmp_path / "grades"
    write_grades(grades, [("1001", "6", ""), ("1002", "0", "", A, "error")])
    text = (grades / "grades.csv").read_text().replace(
        "1002,00_fixture,0,6,error,,", "1002,00_fixture,0,6,error,not valid JSON: line 3,")
    (grades / "grades.csv").write_text(text)
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", LMS / "canvas_gradebook.csv",
                  "--out", out, *flag) == 0
    assert read(out)[3] == ["Smith, Bob", "1002", "S1002", "bsmith", "Lab A", written]
    err = capsys.readouterr().err
    assert "1 row(s) not graded" in err
    assert f"1002/{A}: error: not valid JSON: line 3" in err


HOSTILE = ["=HYPERLINK(\"http://x.example\",\"y\")", "=cmd|' /C calc'!A0", "+SUM(1+1)",
           "@SUM(1+1)", "\t=1", "-2+3", "\r=1"]


def test_every_cell_of_every_export_is_neutralized_against_formula_injection(course, tmp_path):
    write_csv(tmp_path / "roster.csv", ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                                         f"{A} (4242)"],
              [[name, 100 + k, f"S{k}", f"login{k}", "Lab A", ""] for k, name in enumerate(HOSTILE)])
    grades = write_grades(tmp_path / "grades", [("100", "6", ""), ("=1+1", "6", "")])
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", out) == 0
    names = [r[0] for r in read(out)[1:]]
    assert names == ["'" + n.strip() for n in HOSTILE]  # the roster's cells are read stripped
    assert read(tmp_path / "canvas.unmatched.csv")[1][0] == "'=1+1"
    write_csv(tmp_path / "gs.csv", ["First Name", "Last Name", "SID", "Email"],
              [[name, "x", f"G{k}", name] for k, name in enumerate(HOSTILE)])
    grades = write_grades(tmp_path / "grades", [("G0", "6", "")])
    assert export(course, grades, "--to", "gradescope", "--roster", tmp_path / "gs.csv",
                  "--out", tmp_path / "gs-out.csv") == 0
    cells = [c for row in read(tmp_path / "gs-out.csv")[1:] for c in (row[0], row[3])]
    assert cells and all(c.startswith("'") for c in cells)


def test_gradescope_csv_matches_sid_or_email_and_shows_lateness(course, tmp_path):
    grades = write_grades(tmp_path / "grades", [
        ("A100", "6", "2026-11-20T17:03:00+00:00"),
        ("A200", "6", "2026-12-03T10:30:00+00:00"),  # 1 day 10 h 31 min late: 2 days, -1.2
        ("alan@uni.edu", "3", "2026-11-30T23:00:00+00:00"),
    ])
    out = tmp_path / "gs.csv"
    assert export(course, grades, "--to", "gradescope", "--roster", LMS / "gradescope_roster.csv",
                  "--out", out) == 0
    rows = read(out)
    assert rows[0] == ["First Name", "Last Name", "SID", "Email", A, f"{A} - Max Points",
                       f"{A} - Submission Time", f"{A} - Lateness (H:M:S)"]
    by_name = {r[0]: r[4:] for r in rows[1:]}
    assert by_name["Ada"] == ["6", "6", "2026-11-20T17:03:00+00:00", "00:00:00"]
    assert by_name["Grace"] == ["4.8", "6", "2026-12-03T10:30:00+00:00", "34:31:00"]
    assert by_name["Alan"][0] == "3"
    assert by_name["Edsger"] == ["", "", "", ""]


def test_wide_csv_has_a_row_per_student_and_the_total(course, tmp_path):
    grades = write_grades(tmp_path / "grades", [
        ("alice", "6", "2026-12-02T00:30:00+00:00"), ("bob", "0", "", A, "missing")])
    assert export(course, grades, "--to", "csv") == 0
    rows = read(grades / "export-csv.csv")
    assert rows[0] == ["student_id", A, "total", "max_total", f"{A} submitted_at",
                       f"{A} days late", f"{A} late penalty"]
    assert rows[1] == ["alice", "5.4", "5.4", "6", "2026-12-02T00:30:00+00:00", "1", "0.6"]
    assert rows[2] == ["bob", "", "", "6", "", "0", "0"]  # missing: blank, and listed
    assert export(course, grades, "--to", "csv", "--ungraded", "zero") == 0
    assert read(grades / "export-csv.csv")[2] == ["bob", "0", "0", "6", "", "0", "0"]


@pytest.mark.parametrize("roster_text, message", [
    ("Student,SIS User ID\nDoe,1\n", "roster.csv: no column ID (columns: Student, SIS User ID)"),
    ("Student,ID\n\"Doe, Jane\",1001\n\"Roe, Rick\",1001\n", "rows 2 and 3: ID '1001' twice"),
    ("Student,ID\n\"Doe, Jane\",1001\n\"Roe, Rick\",\n", "row 3: no ID"),
])
def test_a_bad_roster_is_refused_naming_the_row_and_nothing_is_written(
        course, tmp_path, capsys, roster_text, message):
    grades = write_grades(tmp_path / "grades", [("1001", "6", "")])
    (tmp_path / "roster.csv").write_text(roster_text)
    out = tmp_path / "canvas.csv"
    assert export(course, grades, "--to", "canvas", "--roster", tmp_path / "roster.csv",
                  "--out", out) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_grades_of_another_course_are_refused(course, tmp_path, capsys):
    grades = write_grades(tmp_path / "grades", [("alice", "6", ""), ("bob", "3", "", "07_other")])
    assert export(course, grades, "--to", "csv") == 2
    err = capsys.readouterr().err
    assert "07_other (rows 3) are not in" in err and "another course's grades folder" in err
    assert not (grades / "export-csv.csv").exists()


def test_an_assignment_not_in_source_is_refused(course, tmp_path, capsys):
    grades = write_grades(tmp_path / "grades", [("alice", "6", "")])
    assert export(course, grades, "--to", "csv", "--assignment", "99_nope") == 2
    assert "no assignment 99_nope" in capsys.readouterr().err


@pytest.mark.parametrize("setting, message", [
    (f'[tool.course.due]\n"{A}" = "next friday"\n', f'"{A}" = \'next friday\' in pyproject.toml: not an ISO 8601'),
    (f'[tool.course.due]\n"{A}" = "2026-12-01T23:59:00"\n', "no UTC offset"),
    ('[tool.course.due]\n"01_gone" = "2026-12-01T23:59:00+00:00"\n', "names 01_gone, not an assignment"),
    ("[tool.course]\nlate_penalty_per_day = 10\n", "late_penalty_per_day = 10 in pyproject.toml: expected a fraction"),
])
def test_a_bad_late_policy_is_refused_naming_the_setting(fixture_course, tmp_path, capsys,
                                                         setting, message):
    (fixture_course.root / "pyproject.toml").write_text(setting)
    grades = write_grades(tmp_path / "grades", [("alice", "6", "")])
    assert export(fixture_course, grades, "--to", "csv") == 2
    assert message in capsys.readouterr().err
    assert not (grades / "export-csv.csv").exists()


def test_a_bad_number_in_grades_csv_names_its_row(course, tmp_path, capsys):
    grades = write_grades(tmp_path / "grades", [("alice", "6", ""), ("bob", "six", "")])
    assert export(course, grades, "--to", "csv") == 2
    assert "grades.csv row 3: score = 'six' is not a number" in capsys.readouterr().err


def test_the_course_pyproject_declares_a_valid_late_policy():
    """This repository's own [tool.course] due dates parse and name real assignments."""
    from autograder.course.lateness import course_policy
    from autograder.course.layout import Course
    from autograder.course.settings import REPO_ROOT

    policy = course_policy(REPO_ROOT, Course(REPO_ROOT).assignments())
    assert 0 <= policy.per_day <= policy.cap <= 1
    assert all(when.tzinfo is not None for when in policy.due.values())


def test_a_due_date_that_is_no_string_is_refused():
    with pytest.raises(CourseError, match="expected a string like"):
        parse_due(A, 20261201)

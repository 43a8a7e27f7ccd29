"""LMS rosters: keyed by one declared column, a clash of identities refused, Canvas's rows that are no
student set aside, names as people read them (the whole export: test_export.py)."""

from __future__ import annotations

import pytest

from autograder.classroom.roster import (
    canvas_label,
    display_name,
    load_roster,
    read_roster,
    roster_people,
)
from autograder.course.layout import CourseError

CANVAS = ("Student,ID,SIS User ID,SIS Login ID,Section,HW1 (5501)\n"
          "    Points Possible,,,,,10.00\n"
          '"Doe, Jane",101,S1,jane@uni.edu,A,\n'
          '"Roe, Rick",102,,rick,A,\n')


def write(tmp_path, text: str, name: str = "roster.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_canvas_rows_are_keyed_by_id_and_points_possible_is_set_aside(tmp_path):
    roster = load_roster("canvas", write(tmp_path, "\ufeff" + CANVAS))  # Excel's byte-order mark too
    assert roster.key == "ID" and roster.points_row
    assert roster.find("101") == 0 and roster.find("102") == 1 and roster.lines == [3, 4]
    by_sis = load_roster("canvas", write(tmp_path, CANVAS), "sis")
    assert by_sis.find("S1") == 0 and by_sis.find("102") is None  # Rick has no SIS id: no grade


def test_a_semicolon_roster_and_a_manual_posting_row_are_read_as_canvas_writes_them(tmp_path):
    text = ("Student;ID;SIS User ID;HW1 (5501)\n;;;Manual Posting\n    Points Possible;;;10,00\n"
            '"Doe, Jane";101;S1;\n')
    roster = load_roster("canvas", write(tmp_path, text))
    assert list(roster.index) == ["101"] and set(roster.labels) == {"Manual Posting", "Points Possible"}
    assert canvas_label(["Student"], {"Student": "Ann", "HW1": "Muted"}) == ""


def test_a_graded_id_that_is_another_rows_identity_is_a_clash_and_nothing_is_written(tmp_path):
    text = 'Student,ID,SIS User ID\n"Doe, Jane",101,102\n"Roe, Rick",102,S2\n'
    roster = load_roster("canvas", write(tmp_path, text))
    with pytest.raises(CourseError, match=r"'102' is the ID of row 3 and also in row 2 \(SIS User ID\)"):
        roster.check(["102"])
    with pytest.raises(CourseError, match=r"'S2' is no ID of the roster but is in row 3 \(SIS User ID\)"):
        roster.check(["S2"])
    roster.check(["101"])  # no clash: nothing raised


@pytest.mark.parametrize("text,message", [
    ("Name,Email\nA,a@x\n", "no column SID"),
    ("SID,Email\n7,a@x\n7,b@x\n", r"rows 2 and 3: SID '7' twice"),
])
def test_a_broken_roster_is_named_with_its_row(tmp_path, text, message):
    with pytest.raises(CourseError, match=message):
        read_roster(write(tmp_path, text), "SID")


def test_a_missing_roster_or_key_is_named(tmp_path):
    with pytest.raises(CourseError, match="--to canvas needs --roster"):
        load_roster("canvas", None)
    assert load_roster("csv", None) is None
    with pytest.raises(CourseError, match="--roster-key sid is not one for --to canvas"):
        load_roster("canvas", write(tmp_path, CANVAS), "sid")
    with pytest.raises(CourseError, match="does not exist"):
        load_roster("canvas", tmp_path / "nope.csv")
    with pytest.raises(CourseError, match="no ID"):
        load_roster("canvas", write(tmp_path, 'Student,ID\n"Doe, Jane",\n'))


def test_a_gradescope_student_without_an_sid_is_known_by_the_email(tmp_path):
    text = "First Name,Last Name,SID,Email\nJane,Doe,7,jane@uni.edu\nRick,Roe,,rick@uni.edu\n"
    roster = load_roster("gradescope", write(tmp_path, text))
    assert sorted(roster.index) == ["7", "rick@uni.edu"]
    assert roster_people("gradescope", write(tmp_path, text)) == {
        "7": ("Jane Doe", "jane@uni.edu"), "rick@uni.edu": ("Rick Roe", "rick@uni.edu")}


def test_names_read_as_people_write_them_and_canvas_email_from_the_login():
    assert display_name("canvas", {"Student": "Doe, Jane"}) == "Jane Doe"
    assert display_name("canvas", {"Student": "Doe, Jane, Jr."}) == "Doe, Jane, Jr."
    assert display_name("canvas", {"FirstName": "Jane", "LastName": "Doe"}) == "Jane Doe"
    assert display_name("gradescope", {"Name": "Jane Doe"}) == "Jane Doe"


def test_canvas_people_take_the_login_as_email_only_when_it_is_one(tmp_path):
    assert roster_people("canvas", write(tmp_path, CANVAS)) == {
        "101": ("Jane Doe", "jane@uni.edu"), "102": ("Rick Roe", "")}
    with pytest.raises(CourseError, match="--lms csv: choose canvas or gradescope"):
        roster_people("csv", write(tmp_path, CANVAS))

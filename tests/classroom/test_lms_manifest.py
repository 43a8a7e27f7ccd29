"""SUBMITTED/lms.csv: what the LMS said of each submission, written safe and read back checked."""

from __future__ import annotations

import pytest

from autograder.classroom.lms_manifest import (
    COLUMNS,
    MANIFEST,
    LmsRecord,
    manifest_text,
    read_manifest,
)
from autograder.course.layout import CourseError


def test_records_are_written_sorted_neutralized_and_read_back(tmp_path):
    records = {("202", "01_a"): LmsRecord("202", "01_a", "gradescope", name="=HYPERLINK(\"x\")", email="b@x"),
               ("101", "01_a"): LmsRecord("101", "01_a", "canvas", user_id="101", late="late",
                                          submitted_at="2026-12-02T04:00:00+00:00")}
    text = manifest_text(records)
    assert text.splitlines()[0] == ",".join(COLUMNS)
    assert text.splitlines()[1].startswith("101,01_a,canvas")  # sorted by student
    assert "'=HYPERLINK" in text  # a formula is text in a spreadsheet
    (tmp_path / MANIFEST).write_text(text)
    back = read_manifest(tmp_path)
    assert back[("101", "01_a")] == records[("101", "01_a")]
    assert back[("202", "01_a")].name == "'=HYPERLINK(\"x\")"


def test_no_file_is_no_record_and_an_old_file_without_due_at_reads_it_empty(tmp_path):
    assert read_manifest(tmp_path) == {}
    old = [c for c in COLUMNS if c != "due_at"]
    (tmp_path / MANIFEST).write_text(",".join(old) + "\n101,01_a,canvas" + "," * (len(old) - 3) + "\n")
    assert read_manifest(tmp_path)[("101", "01_a")].due_at == ""


@pytest.mark.parametrize("rows,message", [
    ("student_id,assignment\n1,01_a\n", "no column lms"),
    (",".join(COLUMNS) + "\n,01_a,canvas" + "," * (len(COLUMNS) - 3) + "\n", "row 2: student_id and assignment must not be empty"),
    (",".join(COLUMNS) + ("\n1,01_a,canvas" + "," * (len(COLUMNS) - 3)) * 2 + "\n", "row 3: 1 / 01_a is listed twice"),
])
def test_a_manifest_that_is_not_the_format_is_named_with_its_row(tmp_path, rows, message):
    (tmp_path / MANIFEST).write_text(rows)
    with pytest.raises(CourseError, match=message):
        read_manifest(tmp_path)

"""`check` prints nothing a graded notebook wrote raw (issue 37, finding 9).

A notebook's answer raises an error whose message clears the screen and prints "All gates pass."
(ESC sequences, a carriage return, a bidi override); check's progress lines and its gate lines
name that error: escaped, never raw.
"""

from __future__ import annotations

import shutil
import unicodedata

import nbformat
import pytest

from autograder.__main__ import main
from autograder.authoring.student_release import release
from autograder.course import grading_folder
from autograder.course.notebooks import grade_id

MESSAGE = "\x1b[2J\x1b[HAll gates pass.\r\u202eevil"


def raw(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")]


@pytest.mark.slow
def test_check_prints_no_raw_control_character(fixture_course, capsys):
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "mean_square")
    cell.source = cell.source.replace("    return float(", f"    raise ValueError({MESSAGE!r})\n    return float(")
    nbformat.write(nb, path)
    release(fixture_course)
    shutil.rmtree(grading_folder.folder(fixture_course.root, "00_fixture") / "mutants")  # not needed here
    assert main(["check", "--root", str(fixture_course.root), "--jobs", "2"]) == 1
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert raw(printed.replace("\n", "")) == [], printed
    assert "gate 'solution': the source notebook scored" in printed
    assert "(ValueError: \\x1b[2J\\x1b[HAll gates pass.)" in printed  # shown, escaped

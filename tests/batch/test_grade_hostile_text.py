"""`grade` prints and writes nothing a submission wrote raw (issue 37, finding 9).

The attack, as students hand it in: a duplicated cell whose nbgrader grade_id is ANSI escapes that
clear the screen and print "All gates pass" (seen clearing the instructor's terminal and reaching
grades.csv raw), a kernel error message, a student folder, a notebook's file name and a folder that
is no assignment, each holding escapes, a carriage return and a bidi override. grade's output,
grades.csv and grades.json then hold no raw control character; a grade_id that is not the
source's is never named at all.
"""

from __future__ import annotations

import copy
import csv
import subprocess
import sys
import unicodedata

import nbformat
import pytest

from autograder.course.notebooks import grade_id, read_notebook

pytestmark = pytest.mark.slow
CLEAR = "\x1b[2J\x1b[HAll gates pass"  # the grade_id of the duplicated cell
MESSAGE = "\x1b[31mKERNEL-MARKER\x1b[0m\r\u202eevil"  # what the student's code raises
STUDENT = "eve\x1b[2J\x1b[Hcontrol"  # a student folder
FILE = "\x1b]0;title\x07mine.ipynb"  # a notebook's name
FOLDER = "hw\x1b[2J\u202e"  # a folder that is no assignment


def raw(text: str) -> list[str]:
    """The characters a terminal or a viewer acts on: C0/C1 controls, ESC, format (bidi) characters."""
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")]


def hostile(nb):
    """`nb` with `scale` right, `mean_square` raising MESSAGE, and two copies of a cell whose
    grade_id is CLEAR."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if grade_id(cell) == "scale":
            cell.source = "def scale(x, factor):\n    return x * factor"
        if grade_id(cell) == "mean_square":
            cell.source = f"def mean_square(x):\n    raise ValueError({MESSAGE!r})"
    mine = nbformat.v4.new_code_cell("x_marker = 1")
    mine.metadata["nbgrader"] = {"grade_id": CLEAR, "grade": False, "solution": False,
                                 "locked": False, "schema_version": 3}
    nb.cells[2:2] = [mine, copy.deepcopy(mine)]
    return nb


def test_grade_prints_and_writes_no_raw_control_character(released_course, tmp_path):
    release = read_notebook(released_course.release_notebook("00_fixture"))
    root = tmp_path / "submitted"
    for who, name in (("mallory", "00_fixture.ipynb"), (STUDENT, FILE)):
        (root / who / "00_fixture").mkdir(parents=True)
        nbformat.write(hostile(release), root / who / "00_fixture" / name)
    (root / "trent" / FOLDER).mkdir(parents=True)
    nbformat.write(release, root / "trent" / FOLDER / "x.ipynb")
    out = tmp_path / "grades"
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(root), "00_fixture", "--root",
         str(released_course.root), "--out", str(out), "--jobs", "2", "--timeout", "30"],
        capture_output=True, text=True, timeout=600)
    printed = run.stdout + run.stderr
    assert run.returncode == 0, printed
    assert raw(printed.replace("\n", "")) == [], printed
    assert "  eve\\x1b[2J\\x1b[Hcontrol/00_fixture: " in printed  # the student, escaped
    assert "All gates pass" not in printed  # the foreign grade_id: ignored, never named
    text = (out / "grades.csv").read_bytes().decode("utf-8")  # its own line ends kept
    assert raw(text.replace("\r\n", "")) == [], text
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert rows["mallory"]["status"] == "graded" and "duplicated" not in rows["mallory"]["warnings"]
    assert rows["mallory"]["score"] == rows["eve\\x1b[2J\\x1b[Hcontrol"]["score"]  # the same notebook
    assert rows["eve\\x1b[2J\\x1b[Hcontrol"]["warnings"].startswith(
        "graded '\\x1b]0;title\\x07mine.ipynb' as 00_fixture.ipynb")
    trent = [r for r in csv.DictReader(text.splitlines()) if r["student_id"] == "trent"]
    assert {r["assignment"] for r in trent} >= {"hw\\x1b[2J\\u202e"}
    assert "All gates pass" not in text
    records = (out / "grades.json").read_text(encoding="utf-8")
    assert raw(records.replace("\n", "")) == [] and "KERNEL-MARKER" in records
    assert "All gates pass" not in records

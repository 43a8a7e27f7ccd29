"""`python -m autograder grade`: what students really hand in, graded in one batch.

The batch runs once for the module (kernels: about ten notebooks of the fixture course), then
`python -m autograder feedback` makes the pages, as an instructor runs them; each test then reads
its row of grades.csv, its feedback and the commands' output.
"""

from __future__ import annotations

import copy
import csv
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.batch.grade import CSV_COLUMNS, grade
from autograder.course.notebooks import grade_id, is_test, read_notebook
from autograder.course.submitted import assignment_of, collect
from autograder.engine.restore_missing_cells import restore_missing_cells

pytestmark = pytest.mark.slow
TIMEOUT = 30  # seconds per cell: the infinite loop below stops after this. 10 was too short beside a
# `make course` loop: the setup cell of every notebook of a batch ran past it (2026-11-28, 5 tests failed).


def with_code(nb, **sources):
    """A copy of `nb` whose solution cells named in `sources` hold that code."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if grade_id(cell) in sources:
            cell.source = sources[grade_id(cell)]
    return nb


SCALE = "def scale(x, factor):\n    return x * factor"


@pytest.fixture(scope="module")
def batch(released_course, tmp_path_factory):
    """Grade a batch covering every case; returns (rows by (student, assignment), output, out dir)."""
    source = read_notebook(released_course.source_notebook("00_fixture"))
    student = read_notebook(released_course.release_notebook("00_fixture"))
    root = tmp_path_factory.mktemp("submitted")

    def put(who, nb, name="00_fixture.ipynb", folder="00_fixture"):
        path = root / who / folder / name if folder else root / who / name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)

    put("alice", source)  # every answer right
    (root / "bob" / "00_fixture").mkdir(parents=True)
    (root / "bob" / "00_fixture" / "00_fixture.ipynb").write_text('{"cells": [ {"cell_type": ')
    (root / "carol").mkdir()
    put("dave", with_code(student, scale=SCALE), name="Copy of 00_fixture.ipynb")
    wrong = with_code(student, scale="def scale(x, factor):\n    return x + factor",
                      mean_square="def mean_square(x):\n    return 5.0")
    wrong.cells = [c for c in wrong.cells if not is_test(c)]  # and the tests deleted
    put("erin", wrong)
    put("frank", with_code(student, scale="import os\n\nos._exit(1)"))
    put("grace", with_code(student, scale=SCALE, mean_square="while True:\n    pass"))
    put("heidi", student, name="homework.ipynb", folder="hw1")
    # Right, but noisy: every call writes to stderr, inside the test cells too (nbgrader alone zeroes them).
    put("ivan", with_code(source, scale="import sys\n\ndef scale(x, factor):\n"
                                        "    print('scale: a note on stderr', file=sys.stderr)\n"
                                        "    return x * factor"), name="00_fixture (1).ipynb", folder=None)
    out = tmp_path_factory.mktemp("grades")
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(root), "--root", str(released_course.root),
         "--out", str(out), "--jobs", "2", "--timeout", str(TIMEOUT)],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    with open(out / "grades.csv", newline="") as f:
        rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    pages_while_grading = sorted(p.name for p in out.rglob("*.html"))
    feedback = subprocess.run(
        [sys.executable, "-m", "autograder", "feedback", str(out), "--root", str(released_course.root)],
        capture_output=True, text=True, timeout=600)
    assert feedback.returncode == 0, feedback.stdout + feedback.stderr
    return rows, run.stdout + run.stderr, out, root, pages_while_grading


def test_grade_makes_no_feedback_html_and_feedback_makes_each_graded_students(batch):
    """The feedback HTML is off the grading path: grade writes none, `feedback` makes one page per
    graded submission (from the executed notebook grade kept) and none for the others."""
    rows, output, out, _, pages_while_grading = batch
    assert pages_while_grading == []
    assert "python -m autograder feedback" in output
    made = {(p.parent.parent.name, p.parent.name) for p in (out / "feedback").rglob("*.html")}
    assert made == {key for key, row in rows.items() if row["status"] == "graded"}
    assert ("bob", "00_fixture") not in made and ("carol", "00_fixture") not in made


def test_the_page_feedback_makes_is_the_page_grade_makes_while_grading(batch, released_course, tmp_path):
    """`grade --feedback` (the page made in the grading job, nbgrader's gradebook of that run) and
    `feedback` (made later from what grade kept) give the same page, byte for byte: a right answer,
    one with a failed hidden test, one the trusted run withdrew points from."""
    _, _, out, root, _ = batch
    some = tmp_path / "submitted"
    for who in ("alice", "dave", "erin"):
        shutil.copytree(root / who, some / who)
    again = tmp_path / "grades"
    (again / ".journal").mkdir(parents=True)  # the same secret: the trusted run draws the same inputs
    shutil.copyfile(out / ".journal" / "key", again / ".journal" / "key")
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(some), "--root", str(released_course.root),
         "--out", str(again), "--jobs", "2", "--timeout", str(TIMEOUT), "--feedback"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    for who in ("alice", "dave", "erin"):
        page = Path("feedback") / who / "00_fixture" / "00_fixture.html"
        assert (again / page).read_text() == (out / page).read_text(), who


def test_csv_has_nbgraders_columns_and_one_row_per_student_and_assignment(batch):
    rows, _, out, *_ = batch
    with open(out / "grades.csv", newline="") as f:
        assert tuple(csv.DictReader(f).fieldnames) == CSV_COLUMNS
    assert {"student_id", "assignment", "score", "max_score"} <= set(CSV_COLUMNS)
    students = {"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"}
    assert {s for s, _ in rows} == students
    assert all((s, "00_fixture") in rows for s in students)
    assert (out / "grades.json").is_file()


def test_a_correct_submission_gets_full_marks_and_feedback_without_hidden_tests(batch):
    rows, _, out, *_ = batch
    assert rows["alice", "00_fixture"] == {
        "student_id": "alice", "assignment": "00_fixture", "score": "6", "max_score": "6",
        "status": "graded", "reason": "", "warnings": "", "submitted_at": "", "due_at": ""}
    html = (out / "feedback" / "alice" / "00_fixture" / "00_fixture.html").read_text()
    assert "Hidden: scale keeps the sign" in html  # the test's docstring stays
    for secret in ("x_hidden", "BEGIN HIDDEN TESTS", "-0.5 * x"):
        assert secret not in html
    assert (out / "autograded" / "alice" / "00_fixture" / "00_fixture.ipynb").is_file()


def test_a_failed_hidden_test_shows_its_message_not_its_code(batch):
    _, _, out, *_ = batch
    html = (out / "feedback" / "dave" / "00_fixture" / "00_fixture.html").read_text()
    assert "NotImplementedError" in html
    assert "the hidden test&#39;s code is not shown" in html or "hidden test's code is not shown" in html
    assert "mean_square([-2, 0, 2, 4])" not in html


def test_malformed_json_gets_a_zero_row_with_the_reason(batch):
    rows, output, *_ = batch
    row = rows["bob", "00_fixture"]
    assert (row["score"], row["status"]) == ("0", "error")
    assert "not a readable notebook" in row["reason"]
    assert "bob/00_fixture: error: 00_fixture.ipynb is not a readable notebook" in output


def test_an_empty_student_folder_gets_a_missing_row(batch):
    rows, output, *_ = batch
    row = rows["carol", "00_fixture"]
    assert (row["score"], row["max_score"], row["status"]) == ("0", "6", "missing")
    assert row["reason"] == "the student's folder is empty"
    assert "carol/00_fixture: missing" in output


def test_a_renamed_notebook_is_graded_as_its_assignment_with_a_warning(batch):
    rows, output, *_ = batch
    row = rows["dave", "00_fixture"]
    assert (row["score"], row["status"]) == ("3", "graded")  # scale right, mean_square untouched
    assert "Copy of 00_fixture.ipynb" in row["warnings"]
    assert "Copy of 00_fixture.ipynb" in output
    loose = rows["ivan", "00_fixture"]  # and what its answer wrote to stderr cost nothing
    assert (loose["score"], loose["status"]) == ("6", "graded")
    assert "outside an 00_fixture/ folder" in loose["warnings"]


def test_deleted_test_cells_are_restored_and_graded_not_skipped(batch):
    rows, _, out, *_ = batch
    row = rows["erin", "00_fixture"]
    # nbgrader alone: grades None and "needs manual grading", i.e. no automatic score at all.
    # In the kernel only the visible mean_square test passes (1 point); the trusted run then finds
    # mean_square wrong on unseen inputs and withdraws that point too.
    assert (row["score"], row["status"]) == ("0", "graded")
    assert "restored" in row["warnings"] and "test_scale_hidden" in row["warnings"]
    assert "points withdrawn" in row["warnings"] and "test_mean_square" in row["warnings"]
    graded = read_notebook(out / "autograded" / "erin" / "00_fixture" / "00_fixture.ipynb")
    assert [grade_id(c) for c in graded.cells if is_test(c)] == [
        "test_scale", "test_scale_hidden", "test_mean_square", "test_mean_square_hidden"]


def test_a_dying_kernel_gets_its_row_and_the_batch_goes_on(batch):
    rows, output, out, *_ = batch
    row = rows["frank", "00_fixture"]
    # Graded up to the crash (autograder/engine/execute.py): nothing before scale earns points here.
    assert (row["score"], row["status"]) == ("0", "graded")
    assert "the kernel died in scale" in row["warnings"]
    graded = read_notebook(out / "autograded" / "frank" / "00_fixture" / "00_fixture.ipynb")
    scale = next(c for c in graded.cells if grade_id(c) == "scale")
    assert scale.outputs[-1].ename == "KernelDied"
    assert rows["grace", "00_fixture"]["status"] == "graded"  # graded after frank's crash


def test_an_infinite_loop_stops_at_the_cell_timeout_and_costs_only_its_cells(batch):
    rows, *_ = batch
    row = rows["grace", "00_fixture"]
    assert (row["score"], row["status"]) == ("3", "graded")  # scale's 3 points are kept
    assert f"stopped after the {TIMEOUT} s limit: mean_square" in row["warnings"]


def test_unknown_folders_and_missing_assignments_get_rows(batch):
    rows, output, *_ = batch
    unknown = rows["heidi", "hw1"]
    assert (unknown["status"], unknown["score"], unknown["max_score"]) == ("unknown_assignment", "0", "")
    assert "hw1/ is not an assignment" in unknown["reason"] and "homework.ipynb" in unknown["reason"]
    missing = rows["heidi", "00_fixture"]
    assert (missing["status"], missing["reason"]) == ("missing", "no 00_fixture/ folder in the submission")
    assert "heidi/hw1: unknown_assignment" in output


@pytest.mark.parametrize("name, expected", [
    ("00_fixture.ipynb", "00_fixture"), ("Copy of 00_fixture.ipynb", "00_fixture"),
    ("Copy of Copy of 00_fixture.ipynb", "00_fixture"), ("00_fixture (2).ipynb", "00_fixture"),
    ("00_fixture-1.ipynb", "00_fixture"), ("homework.ipynb", None), ("01_other.ipynb", None),
])
def test_assignment_of_sees_through_colab_and_browser_renames(name, expected):
    assert assignment_of(name, ["00_fixture"]) == expected


def test_collect_refuses_to_guess_between_several_notebooks(tmp_path):
    folder = tmp_path / "zoe" / "00_fixture"
    folder.mkdir(parents=True)
    (folder / "draft.ipynb").write_text("{}")
    (folder / "final.ipynb").write_text("{}")
    (found,) = collect(tmp_path, ["00_fixture"])
    assert (found.notebook, found.status) == (None, "error")
    assert "draft.ipynb, final.ipynb" in found.reason
    (folder / "00_fixture.ipynb").write_text("{}")
    (found,) = collect(tmp_path, ["00_fixture"])
    assert found.notebook == folder / "00_fixture.ipynb"
    assert "ignored other notebooks" in found.warnings[0]


def test_cold_kernels_grade_the_same_as_warm_ones(released_course, batch, tmp_path):
    """The kernel server only makes kernels start faster; the grades are the same."""
    rows, *_ = batch
    for who, nb_path in (("alice", released_course.source_notebook("00_fixture")),):
        folder = tmp_path / "in" / who / "00_fixture"
        folder.mkdir(parents=True)
        (folder / "00_fixture.ipynb").write_bytes(nb_path.read_bytes())
    (cold,) = grade(released_course, tmp_path / "in", tmp_path / "out", n_jobs=1,
                    warm_kernels=False)
    assert (cold["score"], cold["status"]) == (rows["alice", "00_fixture"]["score"], "graded")


def test_restore_missing_cells_puts_tests_back_in_place_and_never_an_answer(released_course):
    source = read_notebook(released_course.source_notebook("00_fixture"))
    student = read_notebook(released_course.release_notebook("00_fixture"))
    order = [grade_id(c) for c in source.cells]
    gone = {"setup", "scale", "test_scale", "test_scale_hidden", "test_mean_square_hidden"}
    student.cells = [c for c in student.cells if grade_id(c) not in gone]
    restored = restore_missing_cells(student, source)
    assert restored == ["setup", "test_scale", "test_scale_hidden", "test_mean_square_hidden"]
    assert [grade_id(c) for c in student.cells] == [g for g in order if g != "scale"]
    assert all(c.get("outputs", []) == [] for c in student.cells)

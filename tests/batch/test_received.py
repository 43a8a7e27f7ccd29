"""`grade` grades a notebook by the version of its assignment the student received (issue 39, 8).

The fixture course in a git repository, released and committed twice: in v2 `scale` gains a
default factor and a test of it. A right answer to v1, handed in from a v1 copy, lost that test's
point when graded by v2 (6 of 7); it is graded by v1 (6 of 6, 7 of 7 on v2's points), and its row
says so. The course has no
grading folder: what is tested is the version each notebook is graded by, with nbgrader's scores
alone (the trusted run's probe is the same for both versions).
"""

from __future__ import annotations

import copy
import csv
import shutil
import subprocess

import nbformat
import pytest

from autograder.authoring.student_release import release
from autograder.batch.grade import grade
from autograder.course.notebooks import grade_id, read_notebook, write_notebook
from tests.conftest import copy_fixture_course

pytestmark = pytest.mark.slow  # nbgrader generates and grades (seconds each)

V1_SCALE = "def scale(x, factor):\n    return x * factor"
V2_SCALE = "def scale(x, factor=2.0):\n    return x * factor"
MEAN_SQUARE = "def mean_square(x):\n    return float(np.mean(np.asarray(x, dtype=float) ** 2))"


def git(root, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=Instructor", "-c", "user.email=i@example.org", *args],
                   cwd=root, check=True, capture_output=True)


def answered(nb, **answers):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
    return nb


def to_v2(path) -> None:
    """scale(x, factor=2.0), a visible test of the default worth 1 point, the summary with it."""
    nb = read_notebook(path)
    at = next(i for i, c in enumerate(nb.cells) if grade_id(c) == "test_scale")
    solution = next(c for c in nb.cells if grade_id(c) == "scale")
    assert "def scale(x, factor):" in solution.source
    solution.source = solution.source.replace("def scale(x, factor):", "def scale(x, factor=2.0):")
    test = nbformat.v4.new_code_cell(
        '"""scale doubles when no factor is given."""\n'
        'check_close(scale(np.array([1.0, -3.0])), np.array([2.0, -6.0]), "scale(x)")\n'
        'passed("scale default")')
    test.metadata["nbgrader"] = {"grade": True, "grade_id": "test_scale_default", "locked": True,
                                 "points": 1, "schema_version": 3, "solution": False, "task": False}
    nb.cells.insert(at + 1, test)
    summary = next(c for c in nb.cells if grade_id(c) == "summary")
    summary.source = summary.source.replace('"scale": 3', '"scale": 3, "scale default": 1')
    write_notebook(nb, path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("versions")
    course = copy_fixture_course(folder / "course")
    shutil.rmtree(course.grading_dir)
    git(course.root, "init", "--quiet")
    release(course)
    git(course.root, "add", "-A")
    git(course.root, "commit", "--quiet", "-m", "v1")
    v1 = read_notebook(course.release_notebook("00_fixture"))
    to_v2(course.source_notebook("00_fixture"))
    release(course)
    git(course.root, "commit", "--quiet", "-am", "v2: scale's default factor")
    v2 = read_notebook(course.release_notebook("00_fixture"))
    tampered = answered(v1, scale=V1_SCALE, mean_square=MEAN_SQUARE)
    next(c for c in tampered.cells if grade_id(c) == "test_scale").metadata["nbgrader"]["checksum"] = "0" * 32
    submitted = folder / "submitted"
    for who, nb in (("old", answered(v1, scale=V1_SCALE, mean_square=MEAN_SQUARE)),
                    ("new", answered(v2, scale=V2_SCALE, mean_square=MEAN_SQUARE)),
                    ("odd", tampered)):
        (submitted / who / "00_fixture").mkdir(parents=True)
        nbformat.write(nb, submitted / who / "00_fixture" / "00_fixture.ipynb")
    grade(course, submitted, folder / "out", n_jobs=2, timeout=60)
    with open(folder / "out" / "grades.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_a_copy_of_the_first_version_is_graded_by_it_on_the_current_points(graded):
    """Full marks by v1 (6 of 6) are full marks in grades.csv, whose maximum is the assignment's."""
    old = graded["old"]
    assert (old["status"], old["score"], old["max_score"]) == ("graded", "7", "7"), old
    assert "graded by 00_fixture as released at" in old["warnings"] and "test_scale_default" in old["warnings"]
    assert "scored 6 of 6 by that version: 7 of 7" in old["warnings"]


def test_a_copy_of_the_current_version_is_graded_by_it_without_a_word(graded):
    new = graded["new"]
    assert (new["status"], new["score"], new["max_score"]) == ("graded", "7", "7"), new
    assert "released at" not in new["warnings"] and "match no version" not in new["warnings"]


def test_a_notebook_that_matches_no_version_is_graded_by_the_current_one_and_marked(graded):
    odd = graded["odd"]
    assert odd["max_score"] == "7" and "match no version of 00_fixture" in odd["warnings"], odd


def test_two_assignments_received_at_the_same_earlier_commit_are_each_graded_by_it(tmp_path):
    """Each earlier version's template is built in a folder of its own: two assignments released
    by one commit shared one, and the second template's gradebook stopped the whole batch (before:
    sqlalchemy OperationalError 'table alembic_version already exists', grade ended)."""
    course = copy_fixture_course(tmp_path / "course")
    shutil.rmtree(course.grading_dir)
    second = course.source_dir / "00_again"
    second.mkdir()
    shutil.copyfile(course.source_notebook("00_fixture"), second / "00_again.ipynb")
    git(course.root, "init", "--quiet")
    release(course)
    git(course.root, "add", "-A")
    git(course.root, "commit", "--quiet", "-m", "v1")
    v1 = {name: read_notebook(course.release_notebook(name)) for name in ("00_fixture", "00_again")}
    for name in v1:
        to_v2(course.source_notebook(name))
    release(course)
    git(course.root, "commit", "--quiet", "-am", "v2: scale's default factor")
    for name, nb in v1.items():
        (tmp_path / "submitted" / "old" / name).mkdir(parents=True)
        nbformat.write(answered(nb, scale=V1_SCALE, mean_square=MEAN_SQUARE),
                       tmp_path / "submitted" / "old" / name / f"{name}.ipynb")
    rows = grade(course, tmp_path / "submitted", tmp_path / "out", n_jobs=2, timeout=60)
    assert [(r["assignment"], r["status"], r["score"], r["max_score"]) for r in rows] == [
        ("00_again", "graded", "7", "7"), ("00_fixture", "graded", "7", "7")], rows
    assert all("graded by" in r["warnings"] and "as released at" in r["warnings"] for r in rows)

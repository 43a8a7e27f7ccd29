"""docs/design.md's quality gates over the real course: source/, release/, grading/, notebooks/.

`check` runs once per assignment, when a test of that assignment first asks for it (parallel
jobs, warm kernels), so `pytest -k nn_modules` checks 04 alone; each gate is a separate test, so
a failure names the assignment and the gate. Skipped where source/ holds no assignment yet.
After `make course`, an assignment whose entry in build/course-report.json was made on the same bytes
(autograder/authoring/proofs.py: its folders, the grading code, helpers, versions) is that proof, not
checked again; `make test` alone (CI) checks everything.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.authoring.check import MIN_MUTANTS, REPORT_NAME, check
from autograder.course import grading_folder
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.settings import REPO_ROOT

pytestmark = pytest.mark.slow

COURSE = Course(REPO_ROOT)
ASSIGNMENTS = COURSE.assignments()
NONE_YET = pytest.mark.skipif(not ASSIGNMENTS, reason="no assignment in source/ yet")
PER_ASSIGNMENT = ASSIGNMENTS or [pytest.param("none", marks=pytest.mark.skip(
    reason="no assignment in source/ yet"))]


@pytest.fixture(scope="session")
def reports(request):
    """assignment -> its `python -m autograder check` report, made when first asked for: one `check`
    of every assignment this session's tests ask about (one grading session, its runs spread over
    all of them), so `pytest -k nn_modules` checks 04 alone."""
    wanted = sorted({item.callspec.params["assignment"] for item in request.session.items
                     if item.path == Path(__file__) and hasattr(item, "callspec")
                     and item.callspec.params.get("assignment") in ASSIGNMENTS})

    class Reports(dict):
        def __missing__(self, assignment):
            # 3 jobs on 2 cores: warm kernels leave the cores partly idle between runs (see the Makefile).
            todo = [a for a in wanted if a not in self] if assignment in wanted else [assignment]
            self.update({report.assignment: report for report in check(
                COURSE, todo, n_jobs=3, reuse=COURSE.build_dir / REPORT_NAME)})
            return self[assignment]

    return Reports()


def failures(report, gate: str) -> str:
    lines = [f for f in report.failures if f.startswith(f"gate '{gate}'")]
    return "\n".join(lines) or "(no message)"


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_solution_scores_full_marks(reports, assignment):
    report = reports[assignment]
    assert report.solution_score == report.max_score > 0, failures(report, "solution")


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_nbgraders_validator_would_pass_the_source_notebook(reports, assignment):
    """No test cell of the solution writes to stderr (nbgrader's rule; see tests/test_nbgrader_validate.py)."""
    assert not [f for f in reports[assignment].failures if f.startswith("gate 'validate'")], failures(
        reports[assignment], "validate")


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_every_gate_of_check_passes(reports, assignment):
    """All of check's gates, those without a test of their own above included (points, tests, probe,
    grading folder, release sync, no leaks, ...): the report names none."""
    assert reports[assignment].failures == [], "\n".join(reports[assignment].failures)


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_untouched_release_scores_zero(reports, assignment):
    report = reports[assignment]
    assert report.release_score == 0, failures(report, "release")


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_every_mutant_loses_points_on_the_tests_it_names(reports, assignment):
    report = reports[assignment]
    assert report.mutants_caught == report.mutants_total, failures(report, "mutants")
    assert not [f for f in report.failures if f.startswith("gate 'mutants'")], failures(
        report, "mutants")


def each_answer(kind: str) -> list:
    """(assignment, file) for every file of grading/*/<kind>/, with readable ids."""
    return [pytest.param(a, path, id=f"{a}-{path.stem}")
            for a in ASSIGNMENTS for path in grading_folder.files(COURSE.root, a, kind)]


def graded_answer(report, path: Path) -> dict:
    """check's record of one right or wrong answer (its gates 'right answers' and 'wrong answers')."""
    file = path.relative_to(COURSE.root).as_posix()
    found = [record for record in report.samples if record["file"] == file]
    assert len(found) == 1, f"check graded {file} {len(found)} times:\n{failures(report, 'variants')}"
    return found[0]


@pytest.mark.parametrize("assignment, path", each_answer("variants"))
def test_every_right_answer_written_another_way_scores_full_marks(reports, assignment, path):
    """Graded as a student's notebook: the notebook's own tests (visible and hidden) and the trusted run."""
    record = graded_answer(reports[assignment], path)
    assert record["ok"], f"{record['file']}: {record['why']}"


@pytest.mark.parametrize("assignment, path", each_answer("wrong"))
def test_every_other_wrong_answer_loses_points_with_its_words(reports, assignment, path):
    record = graded_answer(reports[assignment], path)
    assert record["ok"], f"{record['file']}: {record['why']}"


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_at_least_four_mutants(reports, assignment):
    assert reports[assignment].mutants_total >= MIN_MUTANTS, failures(reports[assignment],
                                                                      "mutant count")


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_release_equals_a_fresh_generation(reports, assignment):
    """check's gate 'release sync': release/<assignment>/ is what nbgrader generates from source/ today."""
    assert not [f for f in reports[assignment].failures if f.startswith("gate 'release sync'")], failures(
        reports[assignment], "release sync")


@NONE_YET
def test_release_holds_no_folder_without_a_source():
    stale = sorted(p.name for p in COURSE.release_dir.iterdir()
                   if p.is_dir() and p.name not in ASSIGNMENTS) if COURSE.release_dir.is_dir() else []
    assert not stale, f"release/ holds folders with no source: {stale}"


def committed_notebooks():
    return sorted(p for folder in ("source", "release", "notebooks")
                  for p in (REPO_ROOT / folder).rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts)


def test_no_outputs_committed():
    dirty = []
    for path in committed_notebooks():
        for index, cell in enumerate(read_notebook(path).cells):
            if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None):
                dirty.append(f"{path.relative_to(REPO_ROOT)}, cell {index + 1}")
    assert not dirty, ("notebooks committed with outputs or execution counts "
                       "(`python -m autograder release` strips source/ and release/):\n"
                       + "\n".join(dirty))


@pytest.mark.parametrize("assignment", PER_ASSIGNMENT)
def test_no_solution_and_no_hidden_test_under_release(reports, assignment):
    """check's gate 'no leaks' (autograder/authoring/leaks.py)."""
    assert not [f for f in reports[assignment].failures if f.startswith("gate 'no leaks'")], failures(
        reports[assignment], "no leaks")

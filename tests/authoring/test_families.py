"""check grades mutants in families (autograder/authoring/families.py): one run of the source notebook,
a forked child per mutant. Each test is a mutant doing what a real one can do (loop, kill its process,
earn partial credit) or a notebook the fork cannot reproduce, graded by the real `check`."""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring import families
from autograder.authoring.check import check
from autograder.authoring.student_release import release
from autograder.course import grading_folder
from autograder.course.mutants import load_mutants
from autograder.course.notebooks import cell_index, grade_id, read_notebook

pytestmark = pytest.mark.slow
ASSIGNMENT = "00_fixture"


def add_mutant(course, name: str, replaces: str, caught_by: str, code: str) -> None:
    folder = grading_folder.folder(course.root, ASSIGNMENT) / "mutants"
    (folder / f"{name}.py").write_text(f'"""{name}."""\n# replaces: {replaces}\n# caught by: {caught_by}\n{code}')


def edit_source(course, gid: str, source: str) -> None:
    path = course.source_notebook(ASSIGNMENT)
    nb = nbformat.read(path, as_version=4)
    nb.cells[cell_index(nb, gid)].source = source
    nbformat.write(nb, path)


def runs(report) -> dict[str, dict]:
    return {r["label"]: r for r in report.runs}


def test_one_run_forks_a_child_per_mutant_in_notebook_order(fixture_course):
    source = read_notebook(fixture_course.source_notebook(ASSIGNMENT))
    mutants = load_mutants(grading_folder.folder(fixture_course.root, ASSIGNMENT) / "mutants")
    (family,) = families.families(source, mutants, 60)
    forks = [i for i, cell in enumerate(family.notebook.cells) if "forked_cells import" in cell.source]
    ids = [grade_id(cell) for cell in family.notebook.cells]
    # the control and the two scale mutants before scale; the mean_square ones before mean_square,
    # where the family's notebook ends: the children run the rest.
    assert forks == [2, 3, 4, 8, 9] and len(ids) == 10
    assert ids[5:8] == ["scale", "test_scale", "test_scale_hidden"]
    assert "test_mean_square" not in ids
    control = family.members[0]
    assert control.mutant is None and [grade_id(c) for c in control.cells] == [
        "scale", "test_scale", "test_scale_hidden", "mean_square", "test_mean_square", "test_mean_square_hidden"]
    sum_not_mean = next(m for m in family.members if m.label == "mutant:sum_not_mean")
    assert sum_not_mean.cells[0].source.startswith("def mean_square(x):\n    return float(sum(v * v")
    assert sum_not_mean.tests_before == {"test_scale", "test_scale_hidden"}
    assert family.timeout == 60 * 6 + 30


def test_a_mutant_that_never_ends_or_kills_its_process_is_caught_and_its_family_goes_on(fixture_course):
    """A mutant that never returns (stopped by the cell's timeout) and one that kills its process
    outright: each loses its tests' points; the other mutants of the family are graded as before.
    (A child that swallows the interrupt: test_a_child_that_ignores_the_interrupt_is_killed.)"""
    add_mutant(fixture_course, "loops", "scale", "test_scale",  # asleep: its time costs no CPU
               "import time\n\n\ndef scale(x, factor):\n    while True:\n        time.sleep(0.05)\n")
    add_mutant(fixture_course, "kills_itself", "scale", "test_scale",
               "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    release(fixture_course)
    # 30 s a cell: the loop's child waits it out asleep; a busy machine must not stop a real cell.
    (report,) = check(fixture_course, [ASSIGNMENT], n_jobs=2, timeout=30)
    assert report.mutants_caught == report.mutants_total == 6, report.failures
    by_label = runs(report)
    assert by_label["mutant:kills_itself"]["score"] == 0  # nothing it runs passes: every test it names is 0
    assert by_label["mutant:loops"]["status"] == "graded"
    # the children are no runs of their own (check's count of graded runs leaves them out); the family is
    assert {r["label"] for r in report.runs if r["forked"]} == {
        r["label"] for r in report.runs if r["label"].startswith("mutant:")} and not by_label["mutants:1"]["forked"]
    assert by_label["mutant:sum_not_mean"]["score"] == 3  # scale's 3 points, then mean_square's tests lost


def test_a_test_that_gives_partial_credit_scores_it_in_the_child(fixture_course):
    """nbgrader's rule: a number as a test cell's last value is its score. A mutant that earns part of
    test_scale_hidden's 2 points is caught, and its run says how much it earned."""
    edit_source(fixture_course, "test_scale_hidden",
                "### BEGIN HIDDEN TESTS\nx_hidden = np.arange(6.0).reshape(2, 3)\n"
                "ok = np.allclose(scale(x_hidden, -2.0), -2.0 * x_hidden)\n2.0 if ok else 1.5\n"
                "### END HIDDEN TESTS")
    release(fixture_course)
    (report,) = check(fixture_course, [ASSIGNMENT], n_jobs=2)
    assert report.solution_score == 6, report.failures
    # drops_the_sign keeps test_scale (1 point) and earns 1.5 of test_scale_hidden's 2; forked before
    # scale, it runs no test of mean_square.
    assert runs(report)["mutant:drops_the_sign"]["score"] == 1 + 1.5
    assert report.mutants_caught == report.mutants_total == 4, report.failures


def test_a_notebook_the_fork_cannot_reproduce_fails_its_mutants_loudly(fixture_course):
    """The control child runs the unmutated cells: where it loses points (here a test that knows its
    process), no mutant of the family counts as caught, and the gate says why."""
    path = fixture_course.source_notebook(ASSIGNMENT)
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(cell_index(nb, "scale"), nbformat.v4.new_code_cell("import os\nKERNEL_PID = os.getpid()"))
    test = nb.cells[cell_index(nb, "test_scale")]
    test.source += "\nassert os.getpid() == KERNEL_PID, 'not the kernel'"
    nbformat.write(nb, path)
    release(fixture_course)
    (report,) = check(fixture_course, [ASSIGNMENT], n_jobs=2)
    assert report.solution_score == 6
    assert report.mutants_caught == 0
    problems = [f for f in report.failures if f.startswith("gate 'mutants'")]
    assert len(problems) == 4 and all("the forked run is not the notebook's" in p and "test_scale 0/1" in p
                                      for p in problems), problems


def test_where_kernels_can_use_cuda_each_mutant_is_graded_in_a_run_of_its_own(fixture_course, monkeypatch):
    """CUDA cannot be initialized again in a forked child, and on a GPU every setup cell initializes
    it: on an H200 every control child of 08's family lost its CUDA tests and all 41 mutants were
    reported not graded. Where CUDA is available (this process sees what its kernels see), check
    forks nothing: each mutant is a run of its own, cut after its last test, and is still caught."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    release(fixture_course)
    (report,) = check(fixture_course, [ASSIGNMENT], n_jobs=2)
    assert report.mutants_caught == report.mutants_total == 4, report.failures
    by_label = runs(report)
    assert not [label for label in by_label if label.startswith("mutants:")], "a family was forked"
    assert sorted(label for label in by_label if label.startswith("mutant:")) == sorted(
        f"mutant:{m.name}" for m in load_mutants(grading_folder.folder(fixture_course.root, ASSIGNMENT) / "mutants"))
    assert by_label["mutant:sum_not_mean"]["score"] == 3  # scale's tests kept, mean_square's lost
    assert not [r for r in report.runs if r["forked"]]  # each a run of its own: counted, timed

"""RestoreMissingCells on a notebook whose nbgrader metadata an editor stripped from every cell.

Some editors and converters drop every cell's `metadata.nbgrader`. The cells are all still there,
in their place; the restoration must find them by their text, not put the source's copies at the
top, where every test ran before the code it tests (issue 39, item 4: a correct notebook 0/40).
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

from autograder.batch.grade import grade
from autograder.course.notebooks import grade_id, is_solution, is_test, read_notebook
from autograder.engine.restore_missing_cells import restore_missing_cells

ROOT = Path(__file__).resolve().parents[2]


def answered_and_stripped(source: nbformat.NotebookNode, release: nbformat.NotebookNode):
    """What a student hands in after a metadata-stripping editor: the release with the source's
    answers in its solution cells, then every cell's nbgrader metadata gone."""
    answers = {grade_id(c): c.source for c in source.cells if is_solution(c)}
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if grade_id(cell) in answers:
            cell.source = answers[grade_id(cell)]
        cell.metadata.pop("nbgrader", None)
    return nb


def test_a_stripped_real_notebook_gets_its_cells_back_in_their_places():
    source = read_notebook(ROOT / "source" / "01_numpy_mlp" / "01_numpy_mlp.ipynb")
    release = read_notebook(ROOT / "release" / "01_numpy_mlp" / "01_numpy_mlp.ipynb")
    student = answered_and_stripped(source, release)
    assert not any(grade_id(c) for c in student.cells)
    restored = restore_missing_cells(student, source)
    assert restored
    # Every cell in its place, no copy added: the ids of the source, solution cells unlabelled.
    assert [grade_id(c) for c in student.cells] == [
        None if is_solution(c) else grade_id(c) for c in source.cells]
    by_id = {grade_id(c): c for c in source.cells}
    for cell in student.cells:
        if is_test(cell):  # the source's, hidden tests included
            assert cell.source == by_id[grade_id(cell)].source


def test_a_stripped_cell_the_student_edited_comes_back_after_the_code_it_tests():
    """A test cell edited past recognition is missing: it comes back after the student's copy and
    after the (unlabelled) solution cell before it, not ahead of the code it tests."""
    source = read_notebook(ROOT / "source" / "01_numpy_mlp" / "01_numpy_mlp.ipynb")
    release = read_notebook(ROOT / "release" / "01_numpy_mlp" / "01_numpy_mlp.ipynb")
    student = answered_and_stripped(source, release)
    first_test = next(i for i, c in enumerate(release.cells) if is_test(c))
    student.cells[first_test].source = "print('my own check')"
    restore_missing_cells(student, source)
    ids = [grade_id(c) for c in student.cells]
    tested = grade_id(release.cells[first_test])
    assert ids.count(tested) == 1
    # Right after the student's edited copy, which stands where the test stood.
    assert student.cells[ids.index(tested) - 1].source == "print('my own check')"
    answer = next(i for i, c in enumerate(student.cells) if c.source.startswith("def relu("))
    assert answer < ids.index(tested)


@pytest.mark.slow
def test_a_correct_notebook_stripped_of_its_metadata_scores_full_marks(released_course, tmp_path):
    source = read_notebook(released_course.source_notebook("00_fixture"))
    release = read_notebook(released_course.release_notebook("00_fixture"))
    folder = tmp_path / "submitted" / "judy" / "00_fixture"
    folder.mkdir(parents=True)
    nbformat.write(answered_and_stripped(source, release), folder / "00_fixture.ipynb")
    (row,) = grade(released_course, tmp_path / "submitted", tmp_path / "out", n_jobs=1, timeout=60)
    assert (row["status"], float(row["score"]), float(row["max_score"])) == ("graded", 6.0, 6.0), row

"""NeutralizeMarkers: nbgrader's markers in a student's own cells become text nbgrader no longer sees."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.preprocessors import ClearHiddenTests

from autograder.engine.neutralize_markers import (
    JOINER,
    MARKERS,
    NeutralizeMarkers,
    neutralize_markers,
)

TEST_CELL = {"nbgrader": {"grade": True, "solution": False, "grade_id": "test_a", "points": 1, "locked": True}}
LOCKED = {"nbgrader": {"grade": False, "solution": False, "grade_id": "setup", "locked": True}}
ANSWER = {"nbgrader": {"grade": False, "solution": True, "grade_id": "a"}}


def test_the_students_cells_lose_the_markers_and_read_the_same():
    note = "I wrote ### BEGIN HIDDEN TESTS here, and END SOLUTION."
    nb = new_notebook(cells=[new_markdown_cell(note), new_code_cell("# BEGIN SOLUTION\nx = 1", metadata=ANSWER),
                             new_code_cell("### BEGIN HIDDEN TESTS\nsecret\n### END HIDDEN TESTS", metadata=TEST_CELL),
                             new_code_cell("# BEGIN MARK SCHEME", metadata=LOCKED)])
    assert neutralize_markers(nb) == 2
    assert nb.cells[0].source.replace(JOINER, "") == note
    assert not any(marker in cell.source for cell in nb.cells[:2] for marker in MARKERS)
    assert "### BEGIN HIDDEN TESTS" in nb.cells[2].source  # the course's own test cell keeps its region
    assert nb.cells[3].source == "# BEGIN MARK SCHEME"  # and a locked cell its text


def test_nbgrader_finds_no_region_where_a_student_wrote_a_marker(caplog):
    """Before: GenerateFeedback failed the whole row ("No end hidden tests statement found")."""
    nb = new_notebook(cells=[new_markdown_cell("### BEGIN HIDDEN TESTS (a student's note)")])
    with caplog.at_level("WARNING"):
        NeutralizeMarkers().preprocess(nb, {})
    assert "made plain text" in caplog.text
    cell, _ = ClearHiddenTests(enforce_metadata=False).preprocess_cell(nb.cells[0], {}, 0)
    assert "a student's note" in cell.source
    assert neutralize_markers(nb) == 0  # once is enough

"""DropDuplicateCells: a course grade_id twice in a submission keeps its first cell, the copies go."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from traitlets.config import Config

from autograder.course.notebooks import write_notebook
from autograder.engine.drop_duplicate_cells import DropDuplicateCells, drop_duplicate_cells


def cell(source: str, gid: str | None = None):
    metadata = {"nbgrader": {"grade_id": gid, "grade": True, "solution": False, "points": 1}} if gid else {}
    return new_code_cell(source, metadata=metadata)


def test_the_first_copy_stays_and_every_later_one_goes():
    nb = new_notebook(cells=[cell("answer = 1", "test_a"), new_markdown_cell("prose"), cell("real", "test_a"),
                             cell("again", "test_a"), cell("b", "test_b")])
    assert drop_duplicate_cells(nb, None) == ["test_a", "test_a"]
    assert [c.source for c in nb.cells] == ["answer = 1", "prose", "b"]


def test_only_the_sources_ids_count_a_students_own_id_is_never_a_key():
    source = new_notebook(cells=[cell("s", "test_a")])
    hostile = "\x1b[2J\x1b[H All gates pass"
    nb = new_notebook(cells=[cell("x", hostile), cell("y", hostile), cell("t", "test_a"), cell("u", "test_a")])
    assert drop_duplicate_cells(nb, source) == ["test_a"]
    assert [c.source for c in nb.cells] == ["x", "y", "t"]


def test_the_preprocessor_reads_the_courses_source_and_warns_naming_what_it_dropped(tmp_path, caplog):
    """As Autograde runs it: the source notebook found through nbgrader's course directory."""
    write_notebook(new_notebook(cells=[cell("s", "test_a")]), tmp_path / "source" / "01_a" / "01_a.ipynb")
    nb = new_notebook(cells=[cell("copy", "test_a"), cell("real", "test_a"), cell("mine", "x"), cell("x2", "x")])
    step = DropDuplicateCells(config=Config({"CourseDirectory": {"root": str(tmp_path)}}))
    with caplog.at_level("WARNING"):
        step.preprocess(nb, {"nbgrader": {"assignment": "01_a", "notebook": "01_a"}})
    assert [c.source for c in nb.cells] == ["copy", "mine", "x2"]  # x is no id of the source
    assert "Duplicated cells dropped (the first copy is graded): test_a" in caplog.text

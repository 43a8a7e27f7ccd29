"""The exercise table of docs/design.md, written from the source notebooks' metadata, never typed."""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring import exercise_table
from autograder.authoring.readme import ReadmeError, block_text
from autograder.course import exercises
from autograder.course.layout import Course
from autograder.course.settings import REPO_ROOT as ROOT
from tests.conftest import copy_fixture_course


def _read(path):
    return nbformat.read(path, as_version=4)


def test_the_design_docs_exercise_table_is_what_the_notebooks_say():
    assert not exercise_table.stale(Course(ROOT)), (
        "docs/design.md's exercise table differs from the source notebooks: "
        "run `python -m autograder release`")


def test_release_writes_the_exercise_table_from_the_metadata(tmp_path):
    course = copy_fixture_course(tmp_path / "course")
    doc = course.root / exercise_table.DOC
    doc.parent.mkdir()
    doc.write_text("# Design\n\n<!-- begin exercises -->\nstale\n<!-- end exercises -->\n\nafter\n")
    assert exercise_table.stale(course)
    assert exercise_table.update(course) == [str(exercise_table.DOC)]
    nb = _read(course.source_notebook("00_fixture"))
    points = exercises.read(nb).points()
    text = doc.read_text()
    assert text.endswith("after\n") and not exercise_table.stale(course)
    for name, value in points.items():
        assert f"`{name}` ({value:g})" in block_text(text, "exercises")
    assert exercise_table.update(course) == []  # nothing changes twice

    test = next(c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("points"))
    test.metadata["nbgrader"]["points"] += 5
    nbformat.write(nb, course.source_notebook("00_fixture"))
    assert exercise_table.stale(course)  # the metadata moved: the table is stale

    doc.write_text("# Design without the block\n")
    assert exercise_table.update(course) == []  # a course without the table is left alone
    with pytest.raises(ReadmeError, match="exercises"):
        exercise_table.render(doc.read_text(), course)

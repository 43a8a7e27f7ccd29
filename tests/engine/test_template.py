"""The template: nbgrader's generation made once, serving the gradebook, the student versions and points."""

from __future__ import annotations

import sqlite3

import pytest

from autograder.course.notebooks import read_notebook
from autograder.engine.template import (
    GenerationError,
    build_template,
    course_from_template,
    new_gradebook,
)

pytestmark = pytest.mark.slow  # nbgrader generates the assignment (seconds)


def test_the_template_holds_the_gradebook_the_student_version_and_the_points(fixture_course, tmp_path):
    template = build_template(fixture_course.source_dir, ["00_fixture"], tmp_path / "template")
    info = template.assignments["00_fixture"]
    assert info.max_score == 6 and info.exercises.max_score == 6
    assert template.source_notebook("00_fixture").resolve() == fixture_course.source_notebook("00_fixture").resolve()
    student = read_notebook(template.release_notebook("00_fixture"))
    text = "\n".join(cell.source for cell in student.cells)
    assert "return x * factor" not in text and "BEGIN HIDDEN TESTS" not in text and "NotImplementedError" in text
    with sqlite3.connect(template.gradebook) as db:
        assert db.execute("select name from assignment").fetchall() == [("00_fixture",)]
        assert db.execute("select count(*) from grade_cells").fetchone()[0] == 4

    job = tmp_path / "job"
    job.mkdir()
    course_from_template(job, template.dir, "00_fixture", job / "gradebook.db")
    assert (job / "source" / "00_fixture").is_symlink()
    assert (job / "gradebook.db").read_bytes() == template.gradebook.read_bytes()


def test_a_new_gradebook_is_stamped_with_nbgraders_head_without_alembics_subprocess(tmp_path, monkeypatch):
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    monkeypatch.setenv("PATH", "")  # no alembic to run: the stamp is read in this process
    new_gradebook(tmp_path / "gradebook.db")
    with sqlite3.connect(tmp_path / "gradebook.db") as db:
        (version,) = db.execute("select version_num from alembic_version").fetchone()
    assert version == ScriptDirectory(ALEMBIC_DIR).get_current_head()


def test_a_notebook_nbgrader_cannot_generate_fails_with_its_log(fixture_course, tmp_path):
    path = fixture_course.source_notebook("00_fixture")
    path.write_text(path.read_text().replace("### END SOLUTION", "", 1))  # a region left open
    with pytest.raises(GenerationError, match="nbgrader generate_assignment 00_fixture failed"):
        build_template(fixture_course.source_dir, ["00_fixture"], tmp_path / "template")

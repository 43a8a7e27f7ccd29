"""The release steps `release`, `new`, `configure` and `publish` share: validate and normalize the sources,
generate the student versions (the command line and its byte-stable output: test_release.py)."""

from __future__ import annotations

import shutil

import pytest

from autograder.authoring.setup_cell import first_code_cell
from autograder.authoring.student_release import (
    SourceError,
    generate_release,
    prepare_sources,
    release,
)
from autograder.course.notebooks import read_notebook, write_notebook

pytestmark = pytest.mark.slow  # nbgrader generates the assignments (seconds)


def second_assignment(course, name="01_second"):
    (course.source_dir / name).mkdir()
    shutil.copyfile(course.source_notebook("00_fixture"), course.source_notebook(name))


def test_every_problem_of_every_notebook_is_listed_and_nothing_is_written(fixture_course):
    second_assignment(fixture_course)
    broken = fixture_course.source_notebook("01_second")
    broken.write_text("{ not a notebook")
    path = fixture_course.source_notebook("00_fixture")
    nb = read_notebook(path)
    first_code_cell(nb).source = "import helpers"  # no setup cell any more
    write_notebook(nb, path)
    before = path.read_bytes()
    with pytest.raises(SourceError) as raised:
        prepare_sources(fixture_course, ["00_fixture", "01_second"])
    errors = raised.value.errors
    assert any(e.startswith("source/00_fixture/00_fixture.ipynb: the first code cell must be the setup cell")
               for e in errors), errors
    assert any(e.startswith("source/01_second/01_second.ipynb: not a readable notebook") for e in errors), errors
    assert path.read_bytes() == before


def test_generation_writes_only_what_changed_and_removes_what_nbgrader_did_not_make(fixture_course, tmp_path):
    out = tmp_path / "out"
    assert generate_release(fixture_course, ["00_fixture"], out) == ["00_fixture/00_fixture.ipynb"]
    (out / "00_fixture" / "notes").mkdir()
    (out / "00_fixture" / "notes" / "old.txt").write_text("stale")
    assert generate_release(fixture_course, ["00_fixture"], out) == ["00_fixture/notes/old.txt (removed)"]
    assert sorted(p.name for p in (out / "00_fixture").iterdir()) == ["00_fixture.ipynb"]


def test_a_release_of_every_assignment_removes_the_release_of_one_gone_from_source(fixture_course):
    second_assignment(fixture_course)
    release(fixture_course)
    assert fixture_course.release_notebook("01_second").is_file()
    shutil.rmtree(fixture_course.source_dir / "01_second")
    assert "release/01_second/ (removed: no such assignment in source/)" in release(fixture_course)
    assert not (fixture_course.release_dir / "01_second").exists()
    second_assignment(fixture_course, "02_third")
    release(fixture_course, ["02_third"])
    assert fixture_course.release_notebook("00_fixture").is_file()  # a release of one removes nothing

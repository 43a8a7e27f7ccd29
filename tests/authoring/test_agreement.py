"""Whether the course's files agree with `[tool.course]`: every setup cell and README.md's generated blocks
(`configure` makes them agree, tests/authoring/test_configure.py; `publish` refuses a course that does not)."""

from __future__ import annotations

import pytest

from autograder.authoring.agreement import disagreements, notebook_paths
from autograder.authoring.setup_cell import first_code_cell
from autograder.course.notebooks import read_notebook, write_notebook
from autograder.course.settings import CourseSettings, course_settings
from tests.authoring.test_configure import full_course_copy


@pytest.fixture
def course(tmp_path):
    return full_course_copy(tmp_path / "course")


def test_a_disagreeing_file_is_named_with_what_it_has(course):
    settings = course_settings(course.root)
    assert disagreements(course) == []
    lecture = course.root / "notebooks" / "02_computation_graph.ipynb"
    nb = read_notebook(lecture)
    other = CourseSettings("someone/else", "main", settings.version)
    first_code_cell(nb).source = first_code_cell(nb).source.replace(settings.wheel_url, other.wheel_url)
    write_notebook(nb, lecture)
    readme = course.root / "README.md"
    readme.write_text(readme.read_text().replace("/blob/main/", "/blob/old/", 1))
    problems = disagreements(course)
    assert len(problems) == 2, problems
    assert any(p.startswith("notebooks/02_computation_graph.ipynb: its setup cell installs "
                            f"{other.wheel_url}; [tool.course] gives {settings.wheel_url}")
               for p in problems), problems
    assert any(p.startswith("README.md: the generated block 'colab-links'") for p in problems)


def test_the_notebooks_that_carry_a_setup_cell_are_the_sources_releases_and_lectures(course):
    (course.release_dir / "00_fixture").mkdir(parents=True)
    write_notebook(read_notebook(course.source_notebook("00_fixture")), course.release_notebook("00_fixture"))
    paths = [p.relative_to(course.root).as_posix() for p in notebook_paths(course)]
    assert paths[:2] == ["source/00_fixture/00_fixture.ipynb", "release/00_fixture/00_fixture.ipynb"]
    assert all(p.startswith("notebooks/") for p in paths[2:]) and len(paths) > 3
    assert "release/00_fixture/00_fixture.ipynb" not in [
        p.relative_to(course.root).as_posix() for p in notebook_paths(course, release=False)]


def test_a_notebook_without_its_setup_cell_or_unreadable_is_named(course):
    path = course.source_notebook("00_fixture")
    nb = read_notebook(path)
    first_code_cell(nb).source = "import helpers"
    write_notebook(nb, path)
    lecture = sorted((course.root / "notebooks").glob("*.ipynb"))[0]
    lecture.write_text("{not json")
    problems = disagreements(course)
    assert any(p.startswith("source/00_fixture/00_fixture.ipynb: the first code cell must be the setup cell")
               for p in problems), problems
    assert any(p.startswith(f"notebooks/{lecture.name}: not a readable notebook") for p in problems), problems


def test_settings_that_cannot_be_read_are_the_one_problem(course):
    (course.root / "pyproject.toml").write_text("[tool.course]\n")
    (problem,) = disagreements(course)
    assert "student_repository" in problem

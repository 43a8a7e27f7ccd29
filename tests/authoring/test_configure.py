"""`configure`, [tool.course] and the setup cell: one student repository, named once, agreed on everywhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import copy_fixture_course

from autograder.__main__ import main
from autograder.authoring.agreement import disagreements
from autograder.authoring.configure import set_course_table
from autograder.authoring.readme import block_text, render_readme
from autograder.authoring.setup_cell import apply_setup_cell, first_code_cell, render_head
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook, write_notebook
from autograder.course.settings import (
    REPO_ROOT,
    CourseSettings,
    SettingsError,
    check_repository,
    course_settings,
    load_settings,
    tomllib,
)

LEGACY_TABLE = '''[tool.course]
# Where students get the course.
repository = "pytorch-course/pytorch-course"  # GitHub owner/name that hosts release/
branch = "main"
# The student wheel.
helpers_wheel_url = "https://github.com/pytorch-course/pytorch-course/releases/latest/download/x.whl"
'''


def full_course_copy(dest: Path) -> Course:
    """The fixture course with this repository's pyproject.toml, README.md, LICENSE and lectures,
    its setup cell and README blocks as `configure` leaves them (release/ not generated)."""
    course = copy_fixture_course(dest)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(REPO_ROOT / name, dest / name)
    # The calendar's tables name this course's assignments, not the fixture's: left out.
    text = (dest / "pyproject.toml").read_text()
    (dest / "pyproject.toml").write_text(text[:text.index("\n[tool.course.due]")] + "\n")
    shutil.copytree(REPO_ROOT / "notebooks", dest / "notebooks")
    settings = course_settings(course.root)
    path = course.source_notebook("00_fixture")
    nb = read_notebook(path)
    apply_setup_cell(nb, render_head(settings))
    write_notebook(nb, path)
    readme = dest / "README.md"
    readme.write_text(render_readme(readme.read_text(), course, settings))
    return course


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "build" not in p.relative_to(folder).parts}


# -- [tool.course] ----------------------------------------------------------------------------------

def test_the_real_course_agrees_with_tool_course():
    """Every setup cell and README link of this repository derives from [tool.course]."""
    problems = disagreements(Course(REPO_ROOT))
    assert not problems, ("these files disagree with [tool.course] in pyproject.toml; run "
                          "`python -m autograder configure`:\n  - " + "\n  - ".join(problems))


def test_the_wheel_url_derives_from_repository_and_version():
    settings = CourseSettings("my-uni/dl-course", "fall", "1.2.0rc1")
    assert settings.wheel_url == ("https://github.com/my-uni/dl-course/releases/download/v1.2.0rc1/"
                                  "pytorch_course_helpers-1.2.0rc1-py3-none-any.whl")
    assert settings.colab_url("release/a/a.ipynb") == (
        "https://colab.research.google.com/github/my-uni/dl-course/blob/fall/release/a/a.ipynb")
    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"/v{version}/" in course_settings(REPO_ROOT).wheel_url
    assert "helpers_wheel_url" not in (REPO_ROOT / "pyproject.toml").read_text()


@pytest.mark.parametrize("value", ["my-uni/dl-course", "a/b", "Org-1/name.with_dots-2"])
def test_repository_names_github_accepts(value):
    assert check_repository(value) == value


@pytest.mark.parametrize("value", ["dl-course", "my uni/course", "-org/x", "org/", "org/x/y",
                                   "https://github.com/org/x", "org/..", "org/a b"])
def test_repository_names_github_refuses(value):
    with pytest.raises(SettingsError, match="is not a GitHub OWNER/NAME"):
        check_repository(value)


def test_the_table_edit_keeps_comments_and_the_rest_of_the_file():
    text = (REPO_ROOT / "pyproject.toml").read_text()
    new = set_course_table(text, {"student_repository": "my-uni/dl-course", "branch": "fall"})
    old_lines, new_lines = text.splitlines(), new.splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines) if a != b]
    assert len(old_lines) == len(new_lines) and len(changed) == 2, changed
    assert 'student_repository = "my-uni/dl-course"' in new
    assert 'branch = "fall"  # the student repository\'s branch that Colab opens' in new
    assert set_course_table(new, {"student_repository": "my-uni/dl-course", "branch": "fall"}) == new


def test_the_table_edit_migrates_the_old_keys_and_adds_a_missing_table():
    text = '[project]\nname = "x"\nversion = "0.1.0"\n\n' + LEGACY_TABLE + "\n[tool.other]\nkey = 1\n"
    new = set_course_table(text, {"student_repository": "my-uni/dl-course", "branch": "main"})
    table = tomllib.loads(new)["tool"]["course"]
    assert table == {"student_repository": "my-uni/dl-course", "branch": "main"}
    assert "# Where students get the course." in new and "[tool.other]\nkey = 1" in new
    bare = set_course_table('[project]\nversion = "1.0"\n', {"student_repository": "a/b", "branch": "b"})
    assert tomllib.loads(bare)["tool"]["course"] == {"student_repository": "a/b", "branch": "b"}


def test_old_settings_are_a_clear_error_pointing_at_configure(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nversion = "0.1.0"\n\n' + LEGACY_TABLE)
    with pytest.raises(SettingsError, match="no student_repository.*python -m autograder configure"):
        load_settings(tmp_path)


# -- configure on a copy of the course ------------------------------------------------------------

@pytest.mark.slow
def test_configure_makes_every_file_agree_and_is_idempotent(tmp_path, capsys):
    course = full_course_copy(tmp_path / "course")
    root = course.root
    assert main(["configure", "--root", str(root), "--student-repository", "my-uni/dl-course",
                 "--branch", "fall-2026"]) == 0
    settings = load_settings(root)
    assert (settings.student_repository, settings.branch) == ("my-uni/dl-course", "fall-2026")
    head = render_head(settings)
    notebooks = ([course.source_notebook("00_fixture"), course.release_notebook("00_fixture")]
                 + sorted((root / "notebooks").glob("*.ipynb")))
    for path in notebooks:
        cell = first_code_cell(read_notebook(path))
        assert cell.source.startswith(head + "\n"), path
        assert settings.wheel_url in cell.source and "pytorch-course/" not in cell.source, path
    readme = (root / "README.md").read_text()
    links = block_text(readme, "colab-links")
    for rel in ["release/00_fixture/00_fixture.ipynb", "notebooks/01_hardware.ipynb"]:
        assert ("https://colab.research.google.com/github/my-uni/dl-course/blob/fall-2026/"
                f"{rel}") in links
    assert f"pip install {settings.wheel_url} jupyterlab" in block_text(readme, "local-install")
    assert "pytorch-course/pytorch-course" not in readme
    assert disagreements(course) == []
    before = snapshot(root)
    capsys.readouterr()
    assert main(["configure", "--root", str(root)]) == 0
    assert "No file(s) changed" in capsys.readouterr().out
    assert snapshot(root) == before


@pytest.mark.slow
def test_configure_refuses_a_bad_name_and_writes_nothing(tmp_path, capsys):
    course = full_course_copy(tmp_path / "course")
    before = snapshot(course.root)
    assert main(["configure", "--root", str(course.root), "--student-repository", "my uni"]) == 2
    err = capsys.readouterr().err
    assert "'my uni' is not a GitHub OWNER/NAME" in err
    assert snapshot(course.root) == before


def test_configure_has_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["configure", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--student-repository OWNER/NAME" in out and "--branch" in out

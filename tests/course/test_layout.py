"""`Course`: where things are in a course folder; the assignment selection every command shares."""

from __future__ import annotations

import argparse

import pytest

from autograder.course.layout import (
    ROOT_ENV,
    Course,
    CourseError,
    add_assignment_options,
    default_root,
    selected,
)
from autograder.course.settings import REPO_ROOT


def course_of(tmp_path, *names, loose=()):
    for name in names:
        (tmp_path / "source" / name).mkdir(parents=True)
        (tmp_path / "source" / name / f"{name}.ipynb").write_text("{}")
    for name in loose:  # a folder without its notebook is no assignment
        (tmp_path / "source" / name).mkdir(parents=True)
    return Course(tmp_path)


def test_the_folders_and_notebooks_are_nbgraders_layout(tmp_path):
    course = Course(tmp_path)
    assert (course.source_dir, course.release_dir, course.grading_dir, course.build_dir) == (
        tmp_path / "source", tmp_path / "release", tmp_path / "grading", tmp_path / "build")
    assert course.source_notebook("01_a") == tmp_path / "source" / "01_a" / "01_a.ipynb"
    assert course.release_notebook("01_a") == tmp_path / "release" / "01_a" / "01_a.ipynb"


def test_the_assignments_are_the_folders_holding_a_notebook_named_after_them(tmp_path):
    assert Course(tmp_path).assignments() == []  # no source/ at all
    course = course_of(tmp_path, "02_b", "01_a", loose=["03_draft"])
    (tmp_path / "source" / "notes.txt").write_text("not a folder")
    assert course.assignments() == ["01_a", "02_b"]


def test_select_keeps_the_order_asked_once_each_and_names_the_unknown(tmp_path):
    course = course_of(tmp_path, "01_a", "02_b")
    assert course.select(None) == ["01_a", "02_b"]
    assert course.select(["02_b", "01_a", "02_b"]) == ["02_b", "01_a"]
    with pytest.raises(CourseError, match=r"no assignment 03_c, 04_d in .*found: 01_a, 02_b"):
        course.select(["03_c", "01_a", "04_d"])


def test_every_command_takes_the_assignments_the_same_way(tmp_path):
    course = course_of(tmp_path, "01_a", "02_b", "03_c")
    parser = argparse.ArgumentParser()
    add_assignment_options(parser, default="what SUBMITTED holds")
    assert "what SUBMITTED holds" in parser.format_help()
    assert selected(parser.parse_args([]), course) == ["01_a", "02_b", "03_c"]
    assert selected(parser.parse_args(["03_c", "-a", "01_a", "--assignment", "03_c"]), course) == [
        "03_c", "01_a"]
    named_only = argparse.ArgumentParser()
    add_assignment_options(named_only, positional=False)
    with pytest.raises(SystemExit):
        named_only.parse_args(["01_a"])
    with pytest.raises(CourseError, match="no assignment 09_z"):
        selected(named_only.parse_args(["-a", "09_z"]), course)


def test_the_root_is_the_environments_else_this_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv(ROOT_ENV, raising=False)
    assert default_root() == REPO_ROOT.resolve()
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    assert default_root() == tmp_path.resolve()


def test_a_course_of_notebooks_alone_uses_this_checkouts_settings_and_packages(tmp_path):
    course = Course(tmp_path)
    assert course.settings_root == REPO_ROOT and course.package_root == REPO_ROOT
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "helpers").mkdir()
    assert course.settings_root == tmp_path and course.package_root == tmp_path

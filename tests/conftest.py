"""Shared fixtures: a private copy of the fixture course (tests/fixtures/course)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from autograder.layout import Course

FIXTURE_COURSE = Path(__file__).parent / "fixtures" / "course"

# Grading shells out (kernels, nbgrader); both must find this environment's tools.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
os.environ.setdefault("MPLBACKEND", "Agg")


def copy_fixture_course(dest: Path) -> Course:
    """A writable copy of the fixture course at `dest` (release and check write into it)."""
    shutil.copytree(FIXTURE_COURSE, dest, ignore=shutil.ignore_patterns("build", "release"))
    return Course(dest.resolve())


@pytest.fixture
def fixture_course(tmp_path) -> Course:
    """A fresh copy of the fixture course, not yet released."""
    return copy_fixture_course(tmp_path / "course")


@pytest.fixture(scope="session")
def released_course(tmp_path_factory) -> Course:
    """A copy of the fixture course with release/ generated; shared, so treat it as read-only."""
    from autograder.release import release

    course = copy_fixture_course(tmp_path_factory.mktemp("released") / "course")
    release(course)
    return course

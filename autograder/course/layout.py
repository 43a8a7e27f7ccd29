"""Where things are in a course folder: source/, release/, grading/, build/; and which
assignments a command works on, chosen the same way by every command."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from autograder.course.settings import (
    REPO_ROOT,
    CourseSettings,
    course_settings,
    package_root,
    settings_root,
)

ROOT_ENV = "AUTOGRADER_ROOT"


class CourseError(Exception):
    """The course folder or a request about it is wrong; the message says how."""


def default_root() -> Path:
    """$AUTOGRADER_ROOT if set, else this checkout."""
    return Path(os.environ.get(ROOT_ENV) or REPO_ROOT).resolve()


@dataclass(frozen=True)
class Course:
    """A course folder laid out as docs/design.md says (nbgrader's layout for source/ and release/)."""

    root: Path

    @property
    def source_dir(self) -> Path:
        return self.root / "source"

    @property
    def release_dir(self) -> Path:
        return self.root / "release"

    @property
    def grading_dir(self) -> Path:
        """grading/: one folder per assignment with its probe, mutants, variants and wrong answers."""
        return self.root / "grading"

    @property
    def build_dir(self) -> Path:
        return self.root / "build"

    @property
    def settings_root(self) -> Path:
        """The folder whose pyproject.toml holds [tool.course] (autograder/course/settings.py)."""
        return settings_root(self.root)

    @property
    def package_root(self) -> Path:
        """The folder the course's packages (helpers/, autograder/) and wheels are built from."""
        return package_root(self.root)

    def settings(self) -> CourseSettings:
        """[tool.course], checked (SettingsError says what is wrong)."""
        return course_settings(self.root)

    def source_notebook(self, assignment: str) -> Path:
        return self.source_dir / assignment / f"{assignment}.ipynb"

    def release_notebook(self, assignment: str) -> Path:
        return self.release_dir / assignment / f"{assignment}.ipynb"

    def assignments(self) -> list[str]:
        """Every folder of source/ holding a notebook named after it, sorted."""
        if not self.source_dir.is_dir():
            return []
        return sorted(p.name for p in self.source_dir.iterdir()
                      if p.is_dir() and (p / f"{p.name}.ipynb").is_file())

    def select(self, requested: list[str] | None) -> list[str]:
        """The requested assignments (all when none), each checked to exist."""
        known = self.assignments()
        if not requested:
            return known
        unknown = [a for a in requested if a not in known]
        if unknown:
            raise CourseError(
                f"no assignment {', '.join(unknown)} in {self.source_dir} "
                f"(each needs source/NAME/NAME.ipynb; found: {', '.join(known) or 'none'})")
        return list(dict.fromkeys(requested))


def add_assignment_options(parser: argparse.ArgumentParser, positional: bool = True,
                           default: str = "every folder of source/") -> None:
    """The assignment selection every command takes: `ASSIGNMENT...` after the command's own
    positional arguments (when `positional`) and `--assignment/-a NAME`, repeatable. `default`:
    what the command works on when none is named, as its help says it."""
    if positional:
        parser.add_argument("assignments", nargs="*", metavar="ASSIGNMENT", default=[],
                            help=f"assignments to work on (default: {default})")
    parser.add_argument("--assignment", "-a", action="append", default=[], metavar="NAME",
                        dest="assignment",
                        help=f"work on this assignment (repeatable; default: {default})")


def selected(args: argparse.Namespace, course: Course) -> list[str]:
    """The assignments `args` names (positional first, then --assignment; each once, in order),
    each checked to exist in `course`; every assignment when none is named. Raises CourseError
    naming the unknown ones."""
    wanted = [*(getattr(args, "assignments", None) or []), *(getattr(args, "assignment", None) or [])]
    return course.select(list(dict.fromkeys(wanted)) or None)

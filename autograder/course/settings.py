"""The course's own settings: `[project]` and `[tool.course]` in pyproject.toml.

`[tool.course]` names the student repository (the public GitHub repository that `publish`
writes); every address students use is derived here from it and from `[project] version`:
the Colab links, and the student wheel attached to the release `v<version>` of that repository.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

REPO_ROOT = Path(__file__).resolve().parents[2]
# The student wheel's distribution name as it appears in file names (autograder/authoring/wheel.py builds it).
WHEEL_DIST = "pytorch_course_helpers"
# GitHub's rules: an owner is 1-39 letters, digits or inner hyphens; a name is letters, digits, . _ -
REPOSITORY = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}$")
# A branch name git accepts in a URL path: no spaces, no `..`, no control or special characters.
BRANCH = re.compile(r"^(?!.*\.\.)(?!/)(?!.*/$)[A-Za-z0-9._/-]{1,200}$")
CONFIGURE = "python -m autograder configure --student-repository OWNER/NAME [--branch BRANCH]"


class SettingsError(ValueError):
    """[tool.course] or [project] in pyproject.toml is missing or wrong; the message says which."""


def _pyproject(root: Path) -> dict:
    path = Path(root) / "pyproject.toml"
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise SettingsError(f"{path}: no such file; the course's settings live there") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: not valid TOML ({error})") from None


def project_metadata(root: Path) -> dict:
    """`[project]`: name, version, dependencies."""
    return _pyproject(root)["project"]


def settings_root(root: Path) -> Path:
    """Where a course folder's settings live: its own pyproject.toml, else this checkout's."""
    return Path(root) if (Path(root) / "pyproject.toml").is_file() else REPO_ROOT


def package_root(root: Path) -> Path:
    """Where a course folder's packages live (helpers/, autograder/, the pyproject.toml that builds
    them): the course folder when it holds helpers/, else this checkout (a course of notebooks alone)."""
    return Path(root) if (Path(root) / "helpers").is_dir() else REPO_ROOT


def check_repository(value: str) -> str:
    """`value` if it is a GitHub OWNER/NAME; SettingsError saying what is wrong otherwise."""
    if not isinstance(value, str) or not REPOSITORY.match(value) or value.split("/")[1] in (".", ".."):
        raise SettingsError(
            f"student repository {value!r} is not a GitHub OWNER/NAME (for example "
            "'my-university/pytorch-course': an owner of letters, digits and inner hyphens, "
            "a slash, a name of letters, digits, '.', '_' or '-')")
    return value


def check_branch(value: str) -> str:
    """`value` if it is a usable branch name; SettingsError otherwise."""
    if not isinstance(value, str) or not BRANCH.match(value):
        raise SettingsError(f"branch {value!r} is not a branch name (letters, digits, . _ / -)")
    return value


def wheel_filename(version: str) -> str:
    """The student wheel's file name for `version`, normalized as setuptools names it."""
    try:
        from packaging.version import Version

        version = str(Version(version))
    except ImportError:  # packaging ships with pip and setuptools; without it, trust the text
        pass
    return f"{WHEEL_DIST}-{version}-py3-none-any.whl"


@dataclass(frozen=True)
class CourseSettings:
    """Where students get the course; every student-facing address derives from these three."""

    student_repository: str  # GitHub OWNER/NAME of the public student repository
    branch: str  # its branch that Colab opens
    version: str  # [project] version: the student wheel's version and release tag v<version>

    @property
    def release_tag(self) -> str:
        return f"v{self.version}"

    @property
    def wheel_name(self) -> str:
        return wheel_filename(self.version)

    @property
    def wheel_url(self) -> str:
        """The student wheel, attached to the release v<version> of the student repository."""
        return (f"https://github.com/{self.student_repository}/releases/download/"
                f"{self.release_tag}/{self.wheel_name}")

    @property
    def repository_url(self) -> str:
        return f"https://github.com/{self.student_repository}"

    def colab_url(self, notebook: str) -> str:
        """The Open-in-Colab address of `notebook`, a path relative to the student repository."""
        return (f"https://colab.research.google.com/github/{self.student_repository}/blob/"
                f"{self.branch}/{notebook}")


def load_settings(root: Path) -> CourseSettings:
    """[tool.course] and [project] version of the pyproject.toml in `root`, checked."""
    data = _pyproject(root)
    where = f"{Path(root) / 'pyproject.toml'}"
    course = data.get("tool", {}).get("course")
    if not isinstance(course, dict):
        raise SettingsError(f"{where}: no [tool.course] table; run `{CONFIGURE}`")
    if "student_repository" not in course:
        old = " (the old key `repository` named one repository for both sides)" if (
            "repository" in course) else ""
        raise SettingsError(f"{where}: [tool.course] has no student_repository{old}; "
                            f"run `{CONFIGURE}`")
    if "helpers_wheel_url" in course:
        raise SettingsError(f"{where}: [tool.course] helpers_wheel_url is derived now (from "
                            f"student_repository and [project] version); run `{CONFIGURE}` "
                            "to remove it")
    version = data.get("project", {}).get("version")
    if not isinstance(version, str) or not version:
        raise SettingsError(f"{where}: [project] version is missing; the student wheel needs it")
    try:
        return CourseSettings(check_repository(course["student_repository"]),
                              check_branch(course.get("branch", "main")), version)
    except SettingsError as error:
        raise SettingsError(f"{where}: [tool.course] {error}; run `{CONFIGURE}`") from None


def course_settings(root: Path) -> CourseSettings:
    """The settings of the course folder `root` (its pyproject.toml, else this checkout's)."""
    return load_settings(settings_root(root))

"""Print OWNER/NAME of the student repository: [tool.course] student_repository in pyproject.toml;
with --branch, its branch instead ([tool.course] branch, default main).

usage: python .github/scripts/student_repository.py [--branch] [PYPROJECT]
Exits 1 naming the file when it is missing or not OWNER/NAME (`configure` writes it).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

OWNER_NAME = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
BRANCH = re.compile(r"^[A-Za-z0-9._/-]{1,200}$")


def student_repository(pyproject: Path) -> str:
    """OWNER/NAME from `pyproject`; ValueError naming the file and key when missing or malformed."""
    with open(pyproject, "rb") as f:
        course = tomllib.load(f).get("tool", {}).get("course", {})
    name = course.get("student_repository") or ""
    if not OWNER_NAME.match(name):
        raise ValueError(f"{pyproject}: [tool.course] student_repository should be OWNER/NAME, "
                         f"found {name!r}")
    return name


def student_branch(pyproject: Path) -> str:
    """[tool.course] branch (default main); ValueError when it is no branch name."""
    with open(pyproject, "rb") as f:
        branch = tomllib.load(f).get("tool", {}).get("course", {}).get("branch", "main")
    if not isinstance(branch, str) or not BRANCH.match(branch) or ".." in branch:
        raise ValueError(f"{pyproject}: [tool.course] branch {branch!r} is not a branch name")
    return branch


def main(argv: list[str]) -> int:
    branch = "--branch" in argv
    argv = [a for a in argv if a != "--branch"]
    path = Path(argv[0]) if argv else Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        print(student_branch(path) if branch else student_repository(path))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

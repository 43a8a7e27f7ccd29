"""Fail unless a release tag, [project] version and every setup cell's wheel URL agree.

usage: python .github/scripts/check_release_tag.py TAG [COURSE_ROOT]

One source of truth, the version: the tag must be v<[project] version> (the release that carries
the wheel `pytorch_course_helpers-<version>-...whl`), and every setup cell must install that wheel
from releases/download/v<version>/ (autograder/authoring/configure.py's check; `python -m autograder
configure` rewrites the cells). `git tag v1.0.0` on a course at version 0.1.0 would publish a
release no setup cell installs from: every student's first cell would fail.
"""

from __future__ import annotations

import sys
from pathlib import Path


def problems(tag: str, root: Path) -> list[str]:
    from autograder.authoring.agreement import disagreements
    from autograder.course.layout import Course
    from autograder.course.settings import SettingsError, course_settings

    try:
        settings = course_settings(root)
    except SettingsError as error:
        return [str(error)]
    found = []
    if tag != settings.release_tag:
        found.append(f"the tag {tag} is not v<[project] version> = {settings.release_tag} (set "
                     f"version = \"{tag.removeprefix('v')}\" in pyproject.toml and run `python -m "
                     f"autograder configure`, or tag {settings.release_tag})")
    found += disagreements(Course(Path(root)))
    return found


def main(argv: list[str]) -> int:
    if not argv or len(argv) > 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2]
    found = problems(argv[0], root)
    for line in found:
        print(f"check_release_tag: {line}", file=sys.stderr)
    if not found:
        print(f"check_release_tag: {argv[0]}, [project] version and every setup cell agree")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""`python -m autograder release [ASSIGNMENT...]`: source/ -> release/ with nbgrader
(autograder/authoring/student_release.py: the steps, shared with `new`, `configure`, `publish`)."""

from __future__ import annotations

import argparse

from autograder.authoring.student_release import SourceError, release
from autograder.course.layout import Course
from autograder.engine.template import GenerationError


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignments", nargs="*", metavar="ASSIGNMENT",
                        help="assignments to release (default: every folder of source/)")


def run(args: argparse.Namespace, course: Course) -> int:
    assignments = course.select(args.assignments)
    if not assignments:
        print(f"No assignment in {course.source_dir}: nothing to release.")
        return 0
    try:
        changed = release(course, args.assignments)
    except SourceError as error:
        print(f"release stopped: {len(error.errors)} problem(s) in the source notebooks; "
              "nothing was written.")
        for line in error.errors:
            print(f"  - {line}")
        return 2
    except GenerationError as error:
        print(f"release stopped: {error}")
        return 2
    for line in changed:
        print(f"  updated {line}")
    print(f"Released {len(assignments)} assignment(s) into {course.release_dir}"
          f" ({len(changed)} file(s) changed).")
    return 0

"""`python -m autograder {release,check,grade,bench,configure,publish,wheel}`: the instructor's pipeline on nbgrader."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder.authoring import check, configure, new, publish, release, site, wheel
from autograder.batch import bench, grade
from autograder.classroom import collect, export, feedback, gradescope
from autograder.course.layout import ROOT_ENV, Course, CourseError, default_root

COMMANDS = {
    "release": (release, "generate release/ from source/ with nbgrader (and normalize both)"),
    "check": (check, "prove every assignment's tests: solution, release, mutants; print the table"),
    "grade": (grade, "autograde a folder of submissions into grades.csv (feedback HTML: `feedback`, or --feedback)"),
    "collect": (collect, "lay an LMS bulk download (Canvas, Gradescope, a zip) out as SUBMITTED/"),
    "export": (export, "grades.csv to a Canvas or Gradescope import, or one wide table, with late penalties"),
    "feedback": (feedback, "make the feedback pages grade did not, then one zip per student with an index of scores and penalties"),
    "bench": (bench, "time `grade --jobs N` against plain `nbgrader autograde` on one batch"),
    "new": (new, "scaffold an assignment: source notebook, reference, grading folder; check passes at once"),
    "configure": (configure, "point the course at its student repository (pyproject, setup cells, README)"),
    "publish": (publish, "write the student repository's tree (release/, lectures, README, LICENSE)"),
    "gradescope": (gradescope, "build Gradescope's autograder.zip for one assignment"),
    "site": (site, "build the course website (lecture notebooks executed) into build/site/"),
    "wheel": (wheel, "build the helpers wheel students install (no answers) into build/dist/"),
}


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", type=Path, default=argparse.SUPPRESS,
                        help=f"course folder holding source/ and release/ (default: ${ROOT_ENV}, "
                             "else this checkout)")
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__,
                                     parents=[common])
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module, summary) in COMMANDS.items():
        sub = commands.add_parser(name, parents=[common], help=summary, description=module.__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    root = (getattr(args, "root", None) or default_root()).resolve()
    if not (root / "source").is_dir():
        print(f"autograder: {root} has no source/ folder; pass --root or set {ROOT_ENV}",
              file=sys.stderr)
        return 2
    os.environ.setdefault("MPLBACKEND", "Agg")  # kernels draw into files, never onto a screen
    module, _ = COMMANDS[args.command]
    try:
        return module.run(args, Course(root))
    except CourseError as error:
        print(f"autograder {args.command}: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())

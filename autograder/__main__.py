"""`python -m autograder COMMAND`: the instructor's pipeline on nbgrader (`COMMAND --help` for each)."""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
from pathlib import Path

from autograder.course.layout import ROOT_ENV, Course, CourseError, default_root
from autograder.course.safe_text import safe_lines

# Each command's module is imported when that command runs, not before: importing them all (and
# nbgrader with the grading ones) cost every command 1.5-2.2 CPU-s at start, `export` and
# `collect` included, which need none of it.
COMMANDS = {
    "release": ("autograder.authoring.release", "generate release/ from source/ with nbgrader (and normalize both)"),
    "check": ("autograder.authoring.check", "prove every assignment's tests: solution, release, mutants; print the table"),
    "grade": ("autograder.batch.grade", "autograde a folder of submissions into grades.csv (feedback HTML: `feedback`, or --feedback)"),
    "collect": ("autograder.classroom.collect", "lay an LMS bulk download (Canvas, Gradescope, a zip) out as SUBMITTED/"),
    "export": ("autograder.classroom.export", "grades.csv to a Canvas or Gradescope import, or one wide table, with late penalties"),
    "feedback": ("autograder.classroom.feedback", "make the feedback pages grade did not, then one zip per student with an index of scores and penalties"),
    "bench": ("autograder.batch.bench", "time `grade --jobs N` against plain `nbgrader autograde` on one batch"),
    "new": ("autograder.authoring.new", "scaffold an assignment: source notebook, reference, grading folder; check passes at once"),
    "configure": ("autograder.authoring.configure", "point the course at its student repository (pyproject, setup cells, README)"),
    "publish": ("autograder.authoring.publish", "write the student repository's tree (release/, lectures, README, LICENSE)"),
    "gradescope": ("autograder.classroom.gradescope", "build Gradescope's autograder.zip for one assignment"),
    "site": ("autograder.authoring.site", "build the course website (lecture notebooks executed) into build/site/"),
    "wheel": ("autograder.authoring.wheel", "build the helpers wheel students install (no answers) into build/dist/"),
}


def chosen_command(argv: list[str]) -> str | None:
    """The command `argv` names: its first word that is one (the value of --root skipped)."""
    words = iter(argv)
    for word in words:
        if word == "--root":
            next(words, None)
        elif word in COMMANDS:
            return word
    return None


def build_parser(argv: list[str]) -> argparse.ArgumentParser:
    """The command line; only the command `argv` names is imported, for its options."""
    chosen = chosen_command(argv)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--root", type=Path, default=argparse.SUPPRESS,
                        help=f"course folder holding source/ and release/ (default: ${ROOT_ENV}, "
                             "else this checkout)")
    parser = argparse.ArgumentParser(prog="python -m autograder", parents=[common],
                                     description=f"{__doc__} Commands: {', '.join(COMMANDS)}.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, summary) in COMMANDS.items():
        if name != chosen:
            commands.add_parser(name, parents=[common], help=summary)
            continue
        module = importlib.import_module(module_name)
        sub = commands.add_parser(name, parents=[common], help=summary, description=module.__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
        module.configure(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(argv).parse_args(argv)
    root = (getattr(args, "root", None) or default_root()).resolve()
    if not (root / "source").is_dir():
        print(f"autograder: {root} has no source/ folder; pass --root or set {ROOT_ENV}",
              file=sys.stderr)
        return 2
    os.environ.setdefault("MPLBACKEND", "Agg")  # kernels draw into files, never onto a screen
    module = importlib.import_module(COMMANDS[args.command][0])
    try:
        return module.run(args, Course(root))
    except CourseError as error:
        print(safe_lines(f"autograder {args.command}: {error}"), file=sys.stderr)  # may name a student's file
        return 2


def leave(code: int | None) -> None:
    """Exit with `code` after what any exit runs (threads joined, as the interpreter joins them,
    then the exit functions: temporary folders, logging, multiprocessing), without the interpreter's
    teardown of every module: with torch loaded that took 1-2 CPU-s here, at the end of every
    command that grades."""
    getattr(threading, "_shutdown", lambda: None)()  # what the interpreter calls first at exit
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`| head`), a closed stream: nothing to keep
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    leave(main())

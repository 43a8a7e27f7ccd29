"""Write a batch of honest submissions for `python -m autograder bench`: `python scripts/honest_batch.py OUT`.

Each student hands in the release notebook with the source's solution cells filled in (what a
student who solved every exercise hands in), laid out as `grade` and `bench` read a batch:
OUT/<student>/<assignment>/<assignment>.ipynb. Default: 4 students x 01, 02, 03 and 05 (16
submissions).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from autograder.course.layout import Course
from autograder.course.notebooks import grade_id, is_solution, read_notebook, write_notebook
from autograder.course.settings import REPO_ROOT

DEFAULT = ("01_numpy_mlp", "02_autograd", "03_custom_functions", "05_optim")


def solved_release(course: Course, assignment: str):
    """The release notebook with every solution cell holding the source's answer."""
    answers = {grade_id(c): c.source for c in read_notebook(course.source_notebook(assignment)).cells
               if is_solution(c)}
    nb = read_notebook(course.release_notebook(assignment))
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = answers[grade_id(cell)]
    return nb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--students", type=int, default=4)
    parser.add_argument("--assignment", action="append", dest="assignments")
    args = parser.parse_args(argv)
    course = Course(REPO_ROOT)
    for assignment in args.assignments or DEFAULT:
        nb = solved_release(course, assignment)
        for n in range(args.students):
            write_notebook(nb, args.out / f"student{n + 1:02d}" / assignment / f"{assignment}.ipynb")
    print(f"{args.students * len(args.assignments or DEFAULT)} submissions under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

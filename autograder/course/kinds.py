"""How each exercise is asked: derived, designed, transcribed or one line (issue 38; DESIGN, "Quality gates").

A student earns a point by working something out, or by copying what the page already shows. Each
grading folder says which, exercise by exercise, in `grading/<assignment>/kinds.toml`:

    [mlp_backward]                      the exercise: its solution cell's grade_id (the points table's name)
    kind = "derived"                    one of KINDS
    why = "the prose gives shapes ..."  one line: what the student works out, or where the answer stands

The kinds:

    derived      the student derives the rule (a gradient, an identity, a count) from what the prose states
    designed     the prose states what must hold (a contract, invariants, a check to run); the algorithm
                 is the student's
    transcribed  the formula, the code or the step list is in the prose above the exercise, or verbatim in
                 a slide the notebook cites (../shared/seeds/)
    one_line     the solution is one line (a wrapper, one call)

The transcription share of an assignment is the points of its transcribed and one-line exercises over
all its points; the course's, the same over every assignment. `check` reports it (its table's column
`transcribed`, the report's key `transcribed_share`); tests/test_transcription_share.py holds the course
to at most a quarter and one-line exercises to a tenth of each notebook.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from autograder.course.settings import tomllib  # tomli before Python 3.11

KINDS = ("derived", "designed", "transcribed", "one_line")
COPIED = frozenset({"transcribed", "one_line"})  # what the share counts
FILE = "kinds.toml"
_REGION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)


class KindsError(ValueError):
    """A kinds.toml that cannot be read as the module doc says; the message names the file and the fix."""


@dataclass(frozen=True)
class Kind:
    """How one exercise is asked, and why."""

    exercise: str
    kind: str
    why: str

    @property
    def copied(self) -> bool:
        return self.kind in COPIED


def path(root: Path, assignment: str) -> Path:
    """grading/<assignment>/kinds.toml of the course at `root`."""
    return Path(root) / "grading" / assignment / FILE


def read(root: Path, assignment: str) -> dict[str, Kind]:
    """The classification of `assignment`, in the file's order; {} when the file is missing."""
    where = path(root, assignment)
    if not where.is_file():
        return {}
    try:
        table = tomllib.loads(where.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise KindsError(f"{where}: not TOML ({error})") from error
    kinds = {}
    for exercise, entry in table.items():
        if not isinstance(entry, dict) or set(entry) != {"kind", "why"}:
            raise KindsError(f"{where}: [{exercise}] must hold exactly kind = \"...\" and why = \"...\"")
        kind, why = entry["kind"], entry["why"]
        if kind not in KINDS:
            raise KindsError(f"{where}: [{exercise}] kind = {kind!r}; one of {', '.join(KINDS)}")
        if not isinstance(why, str) or not why.strip():
            raise KindsError(f"{where}: [{exercise}] says no why: one line, what the student works out "
                             "or where the answer stands")
        kinds[exercise] = Kind(exercise, kind, why.strip())
    return kinds


def problems(kinds: Mapping[str, Kind], points: Mapping[str, float], assignment: str) -> list[str]:
    """One line per exercise of `points` (grade_id -> points) without a kind, and per kind of no exercise."""
    where = f"grading/{assignment}/{FILE}"
    return ([f"{where}: exercise {name} has no kind" for name in points if name not in kinds]
            + [f"{where}: [{name}] is no exercise of the notebook" for name in kinds if name not in points])


def copied_points(kinds: Mapping[str, Kind], points: Mapping[str, float]) -> float | None:
    """The points of the transcribed and one-line exercises; None when an exercise has no kind."""
    if any(name not in kinds for name in points):
        return None
    return float(sum(value for name, value in points.items() if kinds[name].copied))


def share(kinds: Mapping[str, Kind], points: Mapping[str, float]) -> float | None:
    """copied_points over all the points (0 for a notebook without points); None as copied_points."""
    copied = copied_points(kinds, points)
    total = sum(points.values())
    return None if copied is None else (copied / total if total else 0.0)


def solution_lines(source: str) -> int:
    """Lines of code between a solution cell's `### BEGIN SOLUTION` and `### END SOLUTION`, every region
    added up: blank lines and comments do not count. One line or none is a one-line exercise."""
    return sum(1 for region in _REGION.findall(source) for line in region.splitlines()
               if line.strip() and not line.strip().startswith("#"))

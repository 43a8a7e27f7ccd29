"""What SUBMITTED holds: nbgrader's layout, `SUBMITTED/<student>/<assignment>/<assignment>.ipynb`,
as students really hand it in (renamed notebooks, loose files, empty folders, timestamps).

`grade` grades what `collect` here finds; `bench` times the same batch; Gradescope's runner names
its one notebook's assignment with `assignment_of`. A part of the course on disk, read by commands
of every layer above, so it imports nothing of theirs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.lateness import DUE_FILE, read_timestamp

_IGNORED = re.compile(r"^(\.|__)")  # .ipynb_checkpoints, .DS_Store, __MACOSX


@dataclass
class Submission:
    """What was found for one student and one assignment, before grading."""

    student_id: str
    assignment: str
    notebook: Path | None = None
    status: str = ""  # set when there is nothing to grade: missing, error, unknown_assignment
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    submitted_at: str = ""  # ISO 8601, from timestamp.txt beside the notebook (`collect` writes it)
    due_at: str = ""  # ISO 8601, the student's own due date: due.txt beside it (an extension)


def assignment_of(filename: str, assignments: list[str]) -> str | None:
    """The assignment a notebook's name refers to, allowing for Colab and browser renames:
    'Copy of 01_numpy_mlp.ipynb', '01_numpy_mlp (1).ipynb', '01_numpy_mlp-2.ipynb'."""
    stem = filename[:-len(".ipynb")] if filename.endswith(".ipynb") else filename
    stem = re.sub(r"^(Copy of )+", "", stem.strip())
    stem = re.sub(r"(\s*\(\d+\)|-\d+)$", "", stem).strip()
    return stem if stem in assignments else None


def _notebooks(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix == ".ipynb"
                  and not _IGNORED.match(p.name))


def _pick(student: str, assignment: str, folder: Path, assignments: list[str]) -> Submission:
    """The notebook to grade in one assignment folder."""
    found = Submission(student, assignment)
    exact = folder / f"{assignment}.ipynb"
    notebooks = _notebooks(folder)
    if exact.is_file():
        found.notebook = exact
        others = [p.name for p in notebooks if p != exact]
        if others:
            found.warnings.append(f"ignored other notebooks in {assignment}/: {', '.join(others)}")
    elif len(notebooks) == 1:
        found.notebook = notebooks[0]
        found.warnings.append(f"graded {notebooks[0].name!r} as {assignment}.ipynb "
                              "(renamed notebook, e.g. a Colab download)")
    elif not notebooks:
        found.status, found.reason = "missing", f"the folder {assignment}/ holds no notebook"
    else:
        named = [p for p in notebooks if assignment_of(p.name, assignments) == assignment]
        if len(named) == 1:
            found.notebook = named[0]
            found.warnings.append(f"graded {named[0].name!r} as {assignment}.ipynb; ignored "
                                  + ", ".join(p.name for p in notebooks if p != named[0]))
        else:
            found.status = "error"
            found.reason = (f"{assignment}/ holds {len(notebooks)} notebooks and none is "
                            f"{assignment}.ipynb: {', '.join(p.name for p in notebooks)}")
    return found


def handed_in(submitted: Path, known: list[str]) -> list[str]:
    """The assignments of `known` that SUBMITTED holds for at least one student (a folder named
    for it, or a notebook named for it loose in a student's folder), in the course's order."""
    found = set()
    for student_dir in Path(submitted).iterdir():
        if not student_dir.is_dir() or _IGNORED.match(student_dir.name):
            continue
        for entry in student_dir.iterdir():
            if entry.is_dir() and entry.name in known:
                found.add(entry.name)
            elif entry.is_file() and entry.suffix == ".ipynb":
                found.add(assignment_of(entry.name, known))
    return [a for a in known if a in found]


def collect(submitted: Path, assignments: list[str], known: list[str] | None = None
            ) -> list[Submission]:
    """One Submission per student and assignment, plus one per unknown folder; sorted.

    known: every assignment of the course (default `assignments`); folders of the ones not
    being graded are passed over, not reported as unknown.
    """
    known = list(known or assignments)
    found: list[Submission] = []
    students = sorted(p for p in Path(submitted).iterdir() if p.is_dir() and not _IGNORED.match(p.name))
    for student_dir in students:
        student = student_dir.name
        entries = [p for p in student_dir.iterdir() if not _IGNORED.match(p.name)]
        mine: dict[str, Submission] = {}
        for folder in sorted(p for p in entries if p.is_dir()):
            if folder.name in assignments:
                mine[folder.name] = _pick(student, folder.name, folder, assignments)
                _read_time(mine[folder.name], folder)
            elif folder.name not in known:
                inside = ", ".join(p.name for p in sorted(folder.iterdir())[:5]) or "empty"
                found.append(Submission(student, folder.name, status="unknown_assignment",
                                        reason=f"{folder.name}/ is not an assignment of this course "
                                               f"(holds: {inside}; assignments: {', '.join(assignments)})"))
        for loose in sorted(p for p in entries if p.is_file() and p.suffix == ".ipynb"):
            assignment = assignment_of(loose.name, assignments)
            if assignment and assignment not in mine:
                mine[assignment] = Submission(
                    student, assignment, loose,
                    warnings=[f"graded {loose.name!r}, found outside an {assignment}/ folder"])
        for assignment in assignments:
            if assignment not in mine:
                why = ("the student's folder is empty" if not entries
                       else f"no {assignment}/ folder in the submission")
                mine[assignment] = Submission(student, assignment, status="missing", reason=why)
        found.extend(mine[a] for a in assignments)
    return sorted(found, key=lambda s: (s.student_id, s.assignment))


def _read_time(sub: Submission, folder: Path) -> None:
    try:
        when = read_timestamp(folder)
    except ValueError as error:
        sub.warnings.append(f"submission time unknown: {error}")
    else:
        sub.submitted_at = when.isoformat() if when else ""
    try:
        due = read_timestamp(folder, DUE_FILE)
    except ValueError as error:
        sub.warnings.append(f"the student's own due date unknown, the assignment's applies: {error}")
    else:
        sub.due_at = due.isoformat() if due else ""

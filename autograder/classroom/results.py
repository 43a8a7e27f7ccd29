"""grades.csv read back, checked against the course, with the late penalties applied.

`export` and `feedback` start here: one `Result` per row of grades.csv whose assignment is in
source/ (rows of folders that are no assignment, status "unknown_assignment", are left out).
A row's `due_at` (a student's own due date, from collect's due.txt) replaces the assignment's.
A grades folder from another course, a row with a number that is not one, a student graded
twice for one assignment: CourseError naming the file, the row and the field.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.course.lateness import LatePolicy, course_policy
from autograder.course.layout import Course, CourseError

REQUIRED = ("student_id", "assignment", "score", "max_score", "status")
UNGRADED = ("blank", "zero")  # what an LMS gets for a row grade could not grade (--ungraded)


@dataclass(frozen=True)
class Result:
    """One student's grade for one assignment, before and after the late penalty."""

    student_id: str
    assignment: str
    score: float  # what the autograder gave
    max_score: float
    status: str  # graded, missing, error (grade.py)
    reason: str
    submitted_at: datetime | None
    due: datetime | None
    days_late: int
    penalty: float  # points withdrawn for lateness
    extended: bool = False  # `due` is the student's own (grades.csv's due_at), not the assignment's

    @property
    def final(self) -> float:
        return round(self.score - self.penalty, 6)

    @property
    def lateness(self) -> timedelta:
        if self.submitted_at is None or self.due is None or self.submitted_at <= self.due:
            return timedelta(0)
        return self.submitted_at - self.due


def reported(r: Result, ungraded: str = "blank") -> float | None:
    """What the LMS gets for `r`, one rule for every file written (Canvas's import, Gradescope's
    columns, the wide table, feedback.csv and the students' pages): the score after the late
    penalty when it was graded; for a row that was not (missing, error), 0 with --ungraded zero,
    else None: an empty cell, so that the LMS keeps what it has."""
    if r.status == "graded":
        return r.final
    return 0.0 if ungraded == "zero" else None


def total(results: list[Result], ungraded: str = "blank") -> float | None:
    """The sum of what the LMS gets for `results`; None when it gets nothing for any of them."""
    scores = [s for s in (reported(r, ungraded) for r in results) if s is not None]
    return round(sum(scores), 6) if scores else None


def _number(path: Path, line: int, row: dict, key: str) -> float:
    try:
        return float(row[key])
    except (TypeError, ValueError):
        raise CourseError(f"{path} row {line}: {key} = {row[key]!r} is not a number") from None


def _time(path: Path, line: int, row: dict, key: str) -> datetime | None:
    """Column `key` (submitted_at, due_at: an extension) as an aware time; None when empty."""
    text = (row.get(key) or "").strip()
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise CourseError(f"{path} row {line}: {key} = {text!r} is not an ISO 8601 time") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def read_results(grades_dir: Path, course: Course, requested: list[str] | None = None
                 ) -> tuple[list[Result], LatePolicy]:
    """The rows of GRADES_DIR/grades.csv for `requested` assignments (default: all in it),
    with the course's late policy applied; sorted by student, then assignment."""
    path = Path(grades_dir) / "grades.csv"
    if not path.is_file():
        raise CourseError(f"{grades_dir} holds no grades.csv (run `python -m autograder grade` "
                          "with --out there first)")
    known = course.assignments()
    wanted = course.select(requested) if requested else known
    policy = course_policy(course.root, known)
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise CourseError(f"{path}: no column {', '.join(missing)} (is it grade's grades.csv?)")
        rows = list(enumerate(reader, start=2))
    foreign = sorted({r["assignment"] for _, r in rows
                      if r["assignment"] not in known and r["status"] != "unknown_assignment"})
    if foreign:
        lines = [str(n) for n, r in rows if r["assignment"] in foreign][:10]
        raise CourseError(f"{path}: assignment(s) {', '.join(foreign)} (rows {', '.join(lines)}) "
                          f"are not in {course.source_dir}; is this another course's grades "
                          f"folder? This course has: {', '.join(known) or 'none'}")
    results, seen = [], {}
    for line, row in rows:
        if row["assignment"] not in wanted:
            continue
        key = (row["student_id"], row["assignment"])
        if not row["student_id"].strip():
            raise CourseError(f"{path} row {line}: student_id is empty")
        if key in seen:
            raise CourseError(f"{path} rows {seen[key]} and {line}: {key[0]} graded twice for {key[1]}")
        seen[key] = line
        score, max_score = _number(path, line, row, "score"), _number(path, line, row, "max_score")
        when, own = (_time(path, line, row, key) for key in ("submitted_at", "due_at"))
        assignment = row["assignment"]
        results.append(Result(row["student_id"], assignment, score, max_score, row["status"],
                              row.get("reason", ""), when, policy.due_for(assignment, own),
                              policy.days_late(assignment, when, own),
                              policy.penalty(assignment, when, score, max_score, own),
                              own is not None))
    results.sort(key=lambda r: (r.student_id, known.index(r.assignment)))
    return results, policy


def assignments_in(results: list[Result], course: Course) -> list[str]:
    """The assignments that `results` grade, in the course's order."""
    present = {r.assignment for r in results}
    return [a for a in course.assignments() if a in present]

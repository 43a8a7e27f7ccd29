"""`python -m autograder export GRADES_DIR --to canvas|gradescope|csv [--roster FILE] [--out FILE]`.

Turns grade's GRADES_DIR/grades.csv into what an LMS imports, late penalties applied
(autograder/lateness.py: due dates in `[tool.course.due]` of pyproject.toml, times from
`timestamp.txt`). Scores are after the penalty. Assignments: --assignment, else those graded.

  canvas      Canvas's gradebook import. The roster is Canvas's own gradebook export (Grades >
              Export): its identity columns `Student`, `ID`, `SIS User ID`, `SIS Login ID`,
              (`Integration ID`), `Section` are copied, one row per roster student, in its order; each assignment
              keeps the roster's column header `Name (assignment id)` where one starts with the
              assignment's name (else a new column: Canvas creates the assignment); the
              "Points Possible" row is written when the roster has one. Students match on `ID`
              (collect's student folders for Canvas), else `SIS Login ID`, else `SIS User ID`.
              Late penalties and times go in no extra column: Canvas would import each as an
              assignment. Required: --roster.
  gradescope  The columns of Gradescope's "Download Grades" CSV, which its roster and grade
              tools read: `Name` (or `First Name`, `Last Name`), `SID`, `Email`, then per
              assignment its score, `- Max Points`, `- Submission Time`, `- Lateness (H:M:S)`.
              Students match on `SID`, else `Email` (collect's student folders for Gradescope).
              Gradescope documents no score import for programming assignments; this file is
              for gradebook tools and for checking against Gradescope's own export.
              Required: --roster, a CSV with SID and/or Email (Gradescope's roster download).
  csv         A wide table: `student_id`, a column per assignment, `total`, `max_total`, then
              per assignment `submitted_at`, `days late`, `late penalty`. --roster (a CSV with
              a `student_id` column) is optional: without one, every graded student.

A roster student with no row in grades.csv gets an empty cell, not 0: the LMS then keeps what it
has (an extension, a grade entered by hand) and applies its own missing-work policy; a student
whose folder lacked the assignment has grade's row with 0 and gets 0. A graded student who is not
on the roster is never dropped: each is named on stderr and written to OUT's `.unmatched.csv`.
Default OUT: GRADES_DIR/export-<to>.csv. Written whole or not at all.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder.journal import atomic_write
from autograder.layout import Course, CourseError
from autograder.results import Result, assignments_in, read_results

TARGETS = ("canvas", "gradescope", "csv")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section")
CANVAS_LABELS = ("Points Possible", "Manual Posting")  # rows of Canvas's export that are no student


@dataclass
class Roster:
    """A roster CSV: its columns, its student rows, and how a student_id finds its row."""

    path: Path
    columns: list[str]
    rows: list[dict]
    index: dict[str, int]  # student id (or an alias: SIS login, email) -> row position
    points_row: bool = False  # Canvas's "Points Possible" row was there

    def find(self, student_id: str) -> int | None:
        return self.index.get(student_id)


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    if not Path(path).is_file():
        raise CourseError(f"roster {path} does not exist")
    with open(path, newline="", encoding="utf-8-sig") as f:  # Excel and Canvas add a BOM
        reader = csv.DictReader(f)
        columns = [c.strip() for c in (reader.fieldnames or [])]
        rows = [(n, {k.strip(): (v or "").strip() for k, v in r.items() if k})
                for n, r in enumerate(reader, start=2)]
    return columns, rows


def read_roster(path: Path, key: str, aliases: Iterable[str] = (), skip_labels: tuple = (),
                label_column: str = "", key_required: bool = False) -> Roster:
    """A roster keyed by column `key` (also found through `aliases`); CourseError naming the row
    of a missing or duplicated id, or the missing column (`key` itself when `key_required`)."""
    columns, numbered = _read_csv(path)
    usable = [c for c in (key, *aliases) if c in columns]
    if key_required and key not in columns:
        raise CourseError(f"roster {path}: no column {key} (columns: {', '.join(columns) or 'none'}"
                          "); export the gradebook from the LMS again")
    if not usable:
        raise CourseError(f"roster {path}: no column {' or '.join((key, *aliases))} "
                          f"(columns: {', '.join(columns) or 'none'})")
    rows, index, points, first_seen = [], {}, False, {}
    for line, row in numbered:
        if label_column and row.get(label_column, "") in skip_labels and not row.get(key):
            points |= row.get(label_column) == "Points Possible"
            continue
        ids = {c: row.get(c, "") for c in usable}
        if not any(ids.values()):
            raise CourseError(f"roster {path} row {line}: no {' or '.join(usable)}")
        for column, value in ids.items():
            if not value:
                continue
            if (column, value) in first_seen:
                raise CourseError(f"roster {path} rows {first_seen[column, value]} and {line}: "
                                  f"{column} {value!r} twice")
            first_seen[column, value] = line
            index.setdefault(value, len(rows))
        rows.append(row)
    return Roster(Path(path), columns, rows, index, points)


def fmt_score(value: float) -> str:
    return f"{value:g}"


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def csv_text(columns: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow(columns)
    writer.writerows(rows)
    return buffer.getvalue()


def _by_student(results: list[Result]) -> dict[str, dict[str, Result]]:
    table: dict[str, dict[str, Result]] = {}
    for r in results:
        table.setdefault(r.student_id, {})[r.assignment] = r
    return table


def canvas_column(roster: Roster, assignment: str) -> str:
    """The roster's `assignment (12345)` header for `assignment`, else the bare name."""
    pattern = re.compile(re.escape(assignment) + r"\b.*\(\d+\)$")
    return next((c for c in roster.columns if pattern.match(c)), assignment)


def to_canvas(results: list[Result], assignments: list[str], roster: Roster) -> tuple[str, list[str]]:
    """Canvas's gradebook import CSV; also the student ids not on the roster."""
    identity = [c for c in CANVAS_IDENTITY if c in roster.columns]
    columns = identity + [canvas_column(roster, a) for a in assignments]
    grades = _by_student(results)
    cells: list[dict[str, str]] = [{} for _ in roster.rows]
    unmatched = []
    for student, mine in grades.items():
        at = roster.find(student)
        if at is None:
            unmatched.append(student)
            continue
        for a, r in mine.items():
            cells[at][a] = fmt_score(r.final)
    rows = []
    if roster.points_row:
        maxima = {r.assignment: r.max_score for r in results}
        rows.append(["Points Possible" if c == "Student" else "" for c in identity]
                    + [fmt_score(maxima[a]) for a in assignments])
    for row, mine in zip(roster.rows, cells):
        rows.append([row.get(c, "") for c in identity] + [mine.get(a, "") for a in assignments])
    return csv_text(columns, rows), unmatched


def to_gradescope(results: list[Result], assignments: list[str], roster: Roster
                  ) -> tuple[str, list[str]]:
    """Gradescope's grade-export columns for the roster's students; also those not on it."""
    names = [c for c in ("First Name", "Last Name") if c in roster.columns] or ["Name"]
    identity = names + ["SID", "Email"]
    columns = identity + [f"{a}{suffix}" for a in assignments
                          for suffix in ("", " - Max Points", " - Submission Time",
                                         " - Lateness (H:M:S)")]
    grades = _by_student(results)
    unmatched = [s for s in grades if roster.find(s) is None]
    by_row = {roster.find(s): mine for s, mine in grades.items() if roster.find(s) is not None}
    rows = []
    for at, row in enumerate(roster.rows):
        line = [row.get(c, "") for c in identity]
        for a in assignments:
            r = by_row.get(at, {}).get(a)
            line += ["", "", "", ""] if r is None else [
                fmt_score(r.final), fmt_score(r.max_score),
                r.submitted_at.isoformat() if r.submitted_at else "",
                _hms(r.lateness.total_seconds())]
        rows.append(line)
    return csv_text(columns, rows), unmatched


def to_wide(results: list[Result], assignments: list[str], roster: Roster | None
            ) -> tuple[str, list[str]]:
    """One row per student: a score per assignment, the total, then times and penalties."""
    grades = _by_student(results)
    if roster is None:
        students, unmatched = sorted(grades), []
    else:
        students = [row["student_id"] for row in roster.rows]
        unmatched = [s for s in grades if roster.find(s) is None]
    maxima = {r.assignment: r.max_score for r in results}
    columns = (["student_id", *assignments, "total", "max_total"]
               + [f"{a} {what}" for a in assignments
                  for what in ("submitted_at", "days late", "late penalty")])
    rows = []
    for student in students:
        mine = grades.get(student, {})
        scores = [fmt_score(mine[a].final) if a in mine else "" for a in assignments]
        total = sum(mine[a].final for a in assignments if a in mine)
        details = []
        for a in assignments:
            r = mine.get(a)
            details += ["", "", ""] if r is None else [
                r.submitted_at.isoformat() if r.submitted_at else "", str(r.days_late),
                fmt_score(r.penalty)]
        rows.append([student, *scores, fmt_score(total) if mine else "",
                     fmt_score(sum(maxima[a] for a in assignments)), *details])
    return csv_text(columns, rows), unmatched


def load_roster(target: str, path: Path | None) -> Roster | None:
    """The roster for `target`, read and checked; None for csv without one."""
    if path is None:
        if target != "csv":
            raise CourseError(f"--to {target} needs --roster: "
                              + ("Canvas's gradebook export (Grades > Export)" if target == "canvas"
                                 else "Gradescope's roster CSV (SID and/or Email columns)"))
        return None
    if target == "canvas":
        return read_roster(path, "ID", ("SIS Login ID", "SIS User ID"), CANVAS_LABELS, "Student",
                           key_required=True)
    if target == "gradescope":
        return read_roster(path, "SID", ("Email",))
    return read_roster(path, "student_id")


def export(grades_dir: Path, course: Course, target: str, roster_path: Path | None = None,
           out: Path | None = None, requested: list[str] | None = None) -> tuple[Path, list[Result]]:
    """Write the export; returns its path and the results of students not on the roster
    (also written to <out>.unmatched.csv, which is removed when there are none)."""
    roster = load_roster(target, roster_path)
    results, _ = read_results(grades_dir, course, requested)
    if not results:
        raise CourseError(f"{Path(grades_dir) / 'grades.csv'} holds no grade for "
                          f"{', '.join(requested or []) or 'any assignment of this course'}")
    assignments = assignments_in(results, course)
    writer = {"canvas": to_canvas, "gradescope": to_gradescope, "csv": to_wide}[target]
    text, unmatched = writer(results, assignments, roster)
    out = Path(out) if out else Path(grades_dir) / f"export-{target}.csv"
    left = [r for r in results if r.student_id in set(unmatched)]
    side = out.with_name(out.stem + ".unmatched.csv")
    out.parent.mkdir(parents=True, exist_ok=True)
    if left:
        atomic_write(side, csv_text(
            ["student_id", "assignment", "score", "late penalty", "final", "max_score", "status"],
            [[r.student_id, r.assignment, fmt_score(r.score), fmt_score(r.penalty), fmt_score(r.final),
              fmt_score(r.max_score), r.status] for r in left]))
    elif side.exists():
        side.unlink()
    atomic_write(out, text)
    return out, left


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grades_dir", type=Path, metavar="GRADES_DIR",
                        help="grade's output folder, holding grades.csv")
    parser.add_argument("--to", dest="target", choices=TARGETS, required=True,
                        help="canvas: gradebook import; gradescope: its grade CSV; csv: wide table")
    parser.add_argument("--roster", type=Path, default=None, metavar="FILE",
                        help="the LMS's roster (see above); required for canvas and gradescope")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE",
                        help="the file to write (default: GRADES_DIR/export-<to>.csv)")
    parser.add_argument("--assignment", "-a", action="append", default=None, metavar="ASSIGNMENT",
                        help="export only this assignment (repeatable; default: every one graded)")


def run(args: argparse.Namespace, course: Course) -> int:
    out, left = export(args.grades_dir, course, args.target, args.roster, args.out, args.assignment)
    for student in sorted({r.student_id for r in left}):
        print(f"  not on the roster: {student} (kept in {out.stem}.unmatched.csv)", file=sys.stderr)
    print(f"export: {out}" + (f"; {len({r.student_id for r in left})} graded student(s) not on "
                              f"the roster: {out.with_name(out.stem + '.unmatched.csv')}" if left else ""))
    return 0

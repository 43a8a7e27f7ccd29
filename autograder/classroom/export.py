"""`python -m autograder export GRADES_DIR --to canvas|gradescope|csv [--roster FILE] [--out FILE]`.

Turns grade's GRADES_DIR/grades.csv into what an LMS imports, late penalties applied
(autograder/course/lateness.py: due dates in `[tool.course.due]` of pyproject.toml, times from
`timestamp.txt`). Scores are after the penalty. Assignments: --assignment, else those in
grades.csv; of those, only the ones with at least one graded row get a column (an assignment
nobody handed in or that failed for everyone is named on stderr, and the LMS keeps its column).

  canvas      Canvas's gradebook import. The roster is Canvas's own gradebook export (Grades >
              Export, canvas-lms lib/gradebook_exporter.rb): its identity columns (`Student` or
              `LastName`, `FirstName`; `ID`, `SIS User ID`, `SIS Login ID`, `Integration ID`,
              `Root Account`, `Section`: what it has, in its order, as canvas-lms's importer
              lib/gradebook_importer.rb reads them) are copied, one row per roster student.
              Each assignment goes to the roster's column whose header ends with its Canvas id,
              `Anything (5501)`, when `[tool.course.canvas_id]` gives one (autograder/course/term.py);
              else to the column named `<assignment> ... (id)`; else to a new column, which
              Canvas imports as a new assignment (said on stderr). The roster's other columns
              (grades of other assignments) are not written, so Canvas leaves them as they are.
              Its rows that are no student are written back in Canvas's order: the "Manual
              Posting" row (Canvas adds it when an assignment posts grades manually; its cell of
              an assignment column says so, and stderr says that students see those grades once
              you post them, or, for "scores hidden from instructors", that Canvas imports no
              grade into that column until they are posted), then "Points Possible" with each
              assignment's max score (stderr names a column whose points Canvas has otherwise:
              the import changes them). Excused (`EX`), `N/A` and the other columns' cells are
              not written. A roster saved with `;` between cells is read as well. Students match on
              one column: `ID` (collect's student folders for Canvas), or `SIS User ID` with
              --roster-key sis. Late penalties and times go in no extra column: Canvas would
              import each as an assignment. Required: --roster.
  gradescope  The columns of Gradescope's "Download Grades" CSV, which its roster and grade
              tools read: `Name` (or `First Name`, `Last Name`), `SID`, `Email`, then per
              assignment (its `[tool.course.gradescope_name]`, else its folder name) its score,
              `- Max Points`, `- Submission Time`, `- Lateness (H:M:S)`. Students match on what
              collect names their folders by: the `SID`, the `Email` for a row without one; or
              on `Email` alone with --roster-key email. Gradescope documents no score import for
              programming assignments; this file is for gradebook tools and for checking against
              Gradescope's own export. Required: --roster (Gradescope's roster download).
  csv         A wide table: `student_id`, a column per assignment, `total`, `max_total`, then
              per assignment `submitted_at`, `days late`, `late penalty`. --roster (a CSV with
              a `student_id` column) is optional: without one, every graded student.

Identity is exact: a roster without the key column, a row without a key, a key twice, or a graded
id that is also another row's identity in another column (one row's `ID` is another's `SIS User
ID`) stops the export naming the rows, and nothing is written.

A roster student with no row in grades.csv gets an empty cell, not 0: the LMS then keeps what it
has (an extension, a grade entered by hand) and applies its own missing-work policy. A row grade
could not grade (status missing: no notebook; error: a notebook that is not valid JSON, ...) is
listed on stderr with its reason and written as an empty cell, or as 0 with --ungraded zero. A
graded student who is not on the roster is never dropped: each is named on stderr and written to
OUT's `.unmatched.csv`. Every cell of every file written is neutralized against formula injection
(OWASP: a cell starting with = + - @ tab or carriage return gets a leading `'`).
Default OUT: GRADES_DIR/export-<to>.csv. Written whole or not at all.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder.classroom.results import (
    UNGRADED,
    Result,
    assignments_in,
    read_results,
    reported,
    total,
)
from autograder.classroom.roster import ROSTER_KEYS, Roster, csv_text, fmt_score, load_roster
from autograder.course.atomic import atomic_write
from autograder.course.layout import Course, CourseError
from autograder.course.term import course_term

TARGETS = ("canvas", "gradescope", "csv")
# The student information columns canvas-lms's exporter can write, which its importer skips
# (lib/gradebook_importer.rb, GRADEBOOK_IMPORTER_RESERVED_NAMES); copied in the roster's order.
CANVAS_IDENTITY = ("Student", "LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID",
                   "Integration ID", "Root Account", "Section")
HIDDEN_FROM_INSTRUCTORS = "scores hidden from instructors"  # canvas-lms: unposted anonymous grading


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _by_student(results: list[Result]) -> dict[str, dict[str, Result]]:
    table: dict[str, dict[str, Result]] = {}
    for r in results:
        table.setdefault(r.student_id, {})[r.assignment] = r
    return table


def cell(r: Result, ungraded: str) -> str:
    """What an LMS gets for `r` (results.reported: the rule feedback.csv follows too)."""
    score = reported(r, ungraded)
    return "" if score is None else fmt_score(score)


@dataclass(frozen=True)
class Column:
    """The roster's column an assignment's grades go to, and how it was found."""

    header: str
    how: str  # "canvas id", "name" or "new"


def canvas_column(roster: Roster, assignment: str, canvas_id: str | None = None) -> Column:
    """The column of Canvas's gradebook export for `assignment`: the one whose header ends with
    `(canvas_id)` when [tool.course.canvas_id] gives one (CourseError when the roster has none:
    a gradebook of another course, or a wrong id), else the one named `assignment ... (id)`, else
    a new column named `assignment` (Canvas creates an assignment on import). Two candidates:
    CourseError naming them."""
    if canvas_id:
        found = [c for c in roster.columns if re.search(rf"\({re.escape(canvas_id)}\)$", c)]
        if not found:
            raise CourseError(f"roster {roster.path}: no column for {assignment}'s Canvas "
                              f"assignment id {canvas_id} ([tool.course.canvas_id]); its columns "
                              f"end with: {', '.join(c for c in roster.columns if c.endswith(')'))}"
                              "; is it this course's gradebook export?")
        how = "canvas id"
    else:
        pattern = re.compile(re.escape(assignment) + r"\b.*\(\d+\)$")
        found = [c for c in roster.columns if pattern.match(c)]
        how = "name"
    if len(found) > 1:
        raise CourseError(f"roster {roster.path}: {len(found)} columns could be {assignment}'s "
                          f"({'; '.join(found)}); set its id in [tool.course.canvas_id]")
    return Column(found[0], how) if found else Column(assignment, "new")


def canvas_notes(roster: Roster, assignments: list[str], columns: dict[str, Column],
                 maxima: dict[str, float]) -> list[str]:
    """What the instructor must know before importing: columns Canvas posts by hand or hides
    from instructors (its "Manual Posting" row), points possible the import would change."""
    notes = []
    posting, points = roster.labels.get("Manual Posting", {}), roster.labels.get("Points Possible", {})
    for a in assignments:
        header = columns[a].header
        marked = posting.get(header, "")
        if HIDDEN_FROM_INSTRUCTORS in marked:
            notes.append(f"{header}: Canvas says \"{marked}\": it imports no grade into this column "
                         "until its anonymous submissions are posted (Canvas: the column's menu > "
                         "Post grades), then import again")
        elif marked:
            notes.append(f"{header}: Canvas posts this assignment's grades by hand (\"{marked}\"): "
                         "students see the imported grades once you post them (the column's menu "
                         "> Post grades)")
        had = points.get(header, "").strip()
        try:
            differs = bool(had) and float(had.replace(",", ".")) != maxima[a]
        except ValueError:
            differs = False
        if differs:
            notes.append(f"{header}: Canvas has it worth {had} points, the notebook "
                         f"{fmt_score(maxima[a])}: the import's Points Possible row sets it to "
                         f"{fmt_score(maxima[a])} (edit that row to keep {had})")
    return notes


def to_canvas(results: list[Result], assignments: list[str], roster: Roster,
              columns: dict[str, Column], ungraded: str) -> tuple[str, list[str]]:
    """Canvas's gradebook import CSV; also the student ids not on the roster."""
    identity = [c for c in roster.columns if c in CANVAS_IDENTITY]
    header = identity + [columns[a].header for a in assignments]
    grades = _by_student(results)
    cells: list[dict[str, str]] = [{} for _ in roster.rows]
    unmatched = []
    for student, mine in grades.items():
        at = roster.find(student)
        if at is None:
            unmatched.append(student)
            continue
        for a, r in mine.items():
            cells[at][a] = cell(r, ungraded)
    rows = []
    posting = roster.labels.get("Manual Posting")
    if posting is not None:  # before Points Possible, where canvas-lms's exporter puts it
        rows.append(["" for _ in identity] + [posting.get(columns[a].header, "") for a in assignments])
    if roster.points_row:
        maxima = {r.assignment: r.max_score for r in results}
        rows.append(["Points Possible" if at == 0 else "" for at, _ in enumerate(identity)]
                    + [fmt_score(maxima[a]) for a in assignments])
    for row, mine in zip(roster.rows, cells):
        rows.append([row.get(c, "") for c in identity] + [mine.get(a, "") for a in assignments])
    return csv_text(header, rows), unmatched


def to_gradescope(results: list[Result], assignments: list[str], roster: Roster,
                  names: dict[str, str], ungraded: str) -> tuple[str, list[str]]:
    """Gradescope's grade-export columns for the roster's students; also those not on it."""
    people = [c for c in ("First Name", "Last Name") if c in roster.columns] or ["Name"]
    identity = people + ["SID", "Email"]
    header = identity + [f"{names.get(a, a)}{suffix}" for a in assignments
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
                cell(r, ungraded), fmt_score(r.max_score),
                r.submitted_at.isoformat() if r.submitted_at else "",
                _hms(r.lateness.total_seconds())]
        rows.append(line)
    return csv_text(header, rows), unmatched


def to_wide(results: list[Result], assignments: list[str], roster: Roster | None,
            ungraded: str) -> tuple[str, list[str]]:
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
        mine = {a: r for a, r in grades.get(student, {}).items() if a in assignments}
        scores = [cell(mine[a], ungraded) if a in mine else "" for a in assignments]
        summed = total(list(mine.values()), ungraded)
        details = []
        for a in assignments:
            r = mine.get(a)
            details += ["", "", ""] if r is None else [
                r.submitted_at.isoformat() if r.submitted_at else "", str(r.days_late),
                fmt_score(r.penalty)]
        rows.append([student, *scores, "" if summed is None else fmt_score(summed),
                     fmt_score(sum(maxima[a] for a in assignments)), *details])
    return csv_text(columns, rows), unmatched


@dataclass
class Exported:
    """What export wrote and what the instructor must read."""

    out: Path
    unmatched: list[Result]  # results of students not on the roster (OUT's .unmatched.csv)
    ungraded: list[Result]  # rows written as blank or 0 because they were not graded
    no_column: list[str]  # assignments with no graded row: no column written
    columns: dict[str, Column] = field(default_factory=dict)  # canvas: where each went
    notes: list[str] = field(default_factory=list)  # canvas: posting policies, points possible


def export(grades_dir: Path, course: Course, target: str, roster_path: Path | None = None,
           out: Path | None = None, requested: list[str] | None = None,
           ungraded: str = "blank", roster_key: str | None = None) -> Exported:
    """Write the export of the assignments that have at least one graded row (of `requested`,
    default all in grades.csv), the unmatched students to <out>.unmatched.csv (removed when
    there are none). Nothing is written when the roster or the course's settings are wrong."""
    if ungraded not in UNGRADED:
        raise CourseError(f"--ungraded {ungraded}: choose blank or zero")
    roster = load_roster(target, roster_path, roster_key)
    results, _ = read_results(grades_dir, course, requested)
    if not results:
        raise CourseError(f"{Path(grades_dir) / 'grades.csv'} holds no grade for "
                          f"{', '.join(requested or []) or 'any assignment of this course'}")
    present = assignments_in(results, course)
    graded = {r.assignment for r in results if r.status == "graded"}
    assignments = [a for a in present if a in graded]
    no_column = [a for a in present if a not in graded]
    if not assignments:
        raise CourseError(f"{Path(grades_dir) / 'grades.csv'}: no submission of "
                          f"{', '.join(present)} was graded; nothing to export (see grade's "
                          "report.json for why)")
    results = [r for r in results if r.assignment in graded]
    term = course_term(course.root, course.assignments())
    if roster is not None:
        roster.check(r.student_id for r in results)
    columns: dict[str, Column] = {}
    notes: list[str] = []
    if target == "canvas":
        columns = {a: canvas_column(roster, a, term.canvas_id.get(a)) for a in assignments}
        taken: dict[str, str] = {}
        for a, column in columns.items():
            if column.header in taken:
                raise CourseError(f"roster {roster.path}: {taken[column.header]} and {a} would both "
                                  f"go to the column {column.header!r}; set their ids in "
                                  "[tool.course.canvas_id]")
            taken[column.header] = a
        text, unmatched = to_canvas(results, assignments, roster, columns, ungraded)
        notes = canvas_notes(roster, assignments, columns, {r.assignment: r.max_score for r in results})
    elif target == "gradescope":
        text, unmatched = to_gradescope(results, assignments, roster, term.gradescope_name, ungraded)
    else:
        text, unmatched = to_wide(results, assignments, roster, ungraded)
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
    not_graded = [r for r in results if r.status != "graded" and r.student_id not in set(unmatched)]
    return Exported(out, left, not_graded, no_column, columns, notes)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grades_dir", type=Path, metavar="GRADES_DIR",
                        help="grade's output folder, holding grades.csv")
    parser.add_argument("--to", dest="target", choices=TARGETS, required=True,
                        help="canvas: gradebook import; gradescope: its grade CSV; csv: wide table")
    parser.add_argument("--roster", type=Path, default=None, metavar="FILE",
                        help="the LMS's roster (see above); required for canvas and gradescope")
    parser.add_argument("--roster-key", default=None, metavar="KEY",
                        choices=sorted({k for keys in ROSTER_KEYS.values() for k in keys}),
                        help="the roster column student folders are named by: canvas: id (ID, "
                             "the default) or sis (SIS User ID); gradescope: sid (SID, the "
                             "default; Email for a student without one) or email (Email)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE",
                        help="the file to write (default: GRADES_DIR/export-<to>.csv)")
    parser.add_argument("--assignment", "-a", action="append", default=None, metavar="ASSIGNMENT",
                        help="export only this assignment (repeatable; default: every one graded)")
    parser.add_argument("--ungraded", choices=UNGRADED, default="blank",
                        help="what a row grade could not grade (missing, error) gets: blank (the "
                             "default: the LMS keeps what it has) or zero; each is listed")


def run(args: argparse.Namespace, course: Course) -> int:
    done = export(args.grades_dir, course, args.target, args.roster, args.out, args.assignment,
                  args.ungraded, args.roster_key)
    out, left = done.out, done.unmatched
    for a in done.no_column:
        print(f"  no column for {a}: none of its rows was graded", file=sys.stderr)
    for a, column in done.columns.items():
        if column.how == "new":
            print(f"  new column {column.header!r}: the roster has no column for {a}, so Canvas "
                  "creates a new assignment on import (give its id in [tool.course.canvas_id] to "
                  "fill an existing one)", file=sys.stderr)
    for note in done.notes:
        print(f"  {note}", file=sys.stderr)
    if done.ungraded:
        written = "0" if args.ungraded == "zero" else "an empty cell"
        print(f"  {len(done.ungraded)} row(s) not graded, each written as {written}"
              + (" (--ungraded zero writes 0)" if args.ungraded == "blank" else "") + ":",
              file=sys.stderr)
        for r in done.ungraded:
            print(f"    {r.student_id}/{r.assignment}: {r.status}: {r.reason}", file=sys.stderr)
    for student in sorted({r.student_id for r in left}):
        print(f"  not on the roster: {student} (kept in {out.stem}.unmatched.csv)", file=sys.stderr)
    print(f"export: {out}" + (f"; {len({r.student_id for r in left})} graded student(s) not on "
                              f"the roster: {out.with_name(out.stem + '.unmatched.csv')}" if left else ""))
    return 0

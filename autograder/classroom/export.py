"""`python -m autograder export GRADES_DIR --to canvas|gradescope|csv [--roster FILE] [--out FILE]`.

Turns grade's GRADES_DIR/grades.csv into what an LMS imports, late penalties applied
(autograder/course/lateness.py: due dates in `[tool.course.due]` of pyproject.toml, times from
`timestamp.txt`). Scores are after the penalty. Assignments: --assignment, else those in
grades.csv; of those, only the ones with at least one graded row get a column (an assignment
nobody handed in or that failed for everyone is named on stderr, and the LMS keeps its column).

  canvas      Canvas's gradebook import. The roster is Canvas's own gradebook export (Grades >
              Export): its identity columns `Student`, `ID`, `SIS User ID`, `SIS Login ID`,
              (`Integration ID`), `Section` are copied, one row per roster student, in its order.
              Each assignment goes to the roster's column whose header ends with its Canvas id,
              `Anything (5501)`, when `[tool.course.canvas_id]` gives one (autograder/course/term.py);
              else to the column named `<assignment> ... (id)`; else to a new column, which
              Canvas imports as a new assignment (said on stderr). The roster's other columns
              (grades of other assignments) are not written, so Canvas leaves them as they are.
              The "Points Possible" row is written when the roster has one. Students match on
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
import csv
import io
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.classroom.results import Result, assignments_in, read_results
from autograder.course.atomic import atomic_write
from autograder.course.layout import Course, CourseError
from autograder.course.term import course_term

TARGETS = ("canvas", "gradescope", "csv")
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section")
CANVAS_LABELS = ("Points Possible", "Manual Posting")  # rows of Canvas's export that are no student
# --roster-key: the one roster column a student folder's name is looked up in, per target.
ROSTER_KEYS = {"canvas": {"id": "ID", "sis": "SIS User ID"},
               "gradescope": {"sid": "SID", "email": "Email"},
               "csv": {"student_id": "student_id"}}
# The other columns that name a student: a graded id found there too is a clash, never a match.
OTHER_IDS = {"canvas": ("ID", "SIS User ID", "SIS Login ID", "Integration ID"),
             "gradescope": ("SID", "Email"), "csv": ()}
ALWAYS_THERE = ("ID", "student_id")  # every row has one; an empty one is a broken roster
UNGRADED = ("blank", "zero")
# OWASP "CSV Injection": a cell starting with one of these is read as a formula by spreadsheets.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?(e[-+]?\d+)?$")


def safe_cell(value) -> str:
    """`value` as text that no spreadsheet runs: a leading = + - @ tab or carriage return gets
    a `'` before it (OWASP's rule); a plain number such as -1.5 stays a number."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_START) and not _NUMBER.match(text):
        return "'" + text
    return text


@dataclass
class Roster:
    """A roster CSV: its columns, its student rows (with their line numbers) and the key column."""

    path: Path
    columns: list[str]
    rows: list[dict]
    lines: list[int]  # the CSV line of each row (the header is line 1)
    key: str  # the one column a student id is looked up in
    index: dict[str, int]  # key value -> row position
    others: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # other id -> (column, row)
    points_row: bool = False  # Canvas's "Points Possible" row was there

    def find(self, student_id: str) -> int | None:
        return self.index.get(student_id)

    def check(self, student_ids: Iterable[str]) -> None:
        """CourseError naming the rows when a graded id is also another row's other identity
        (Canvas: one row's `ID` is another's `SIS User ID`) or is found only in another column:
        such a grade could land on the wrong student, so nothing is written."""
        problems = []
        for student in sorted(set(student_ids)):
            at = self.index.get(student)
            elsewhere = [(c, n) for c, n in self.others.get(student, []) if n != at]
            if not elsewhere:
                continue
            where = ", ".join(f"row {self.lines[n]} ({c})" for c, n in elsewhere)
            if at is None:
                problems.append(f"{student!r} is no {self.key} of the roster but is in {where}; "
                                f"grades are matched on {self.key} only (--roster-key chooses the "
                                "column collect's student folders are named by)")
            else:
                problems.append(f"{student!r} is the {self.key} of row {self.lines[at]} and also "
                                f"in {where}: which student it is cannot be told")
        if problems:
            raise CourseError(f"roster {self.path}: " + "; ".join(problems)
                              + ". Nothing was written.")


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    if not Path(path).is_file():
        raise CourseError(f"roster {path} does not exist")
    with open(path, newline="", encoding="utf-8-sig") as f:  # Excel and Canvas add a BOM
        reader = csv.DictReader(f)
        columns = [c.strip() for c in (reader.fieldnames or [])]
        rows = [(n, {k.strip(): (v or "").strip() for k, v in r.items() if isinstance(k, str)})
                for n, r in enumerate(reader, start=2)]
    return columns, rows


def read_roster(path: Path, key: str, others: Iterable[str] = (), skip_labels: tuple = (),
                label_column: str = "", blank_key_from: str = "") -> Roster:
    """A roster keyed by column `key` alone; CourseError naming the missing column, or the row
    of a repeated key or an empty one in a column that is never empty (Canvas's `ID`); a row
    without an optional key (SIS User ID) is kept and receives no grade. `blank_key_from`: the
    column that is a row's key when `key` is empty in it (Gradescope: a student without an SID
    is known by the email, as collect names the folder). `others`: the columns that also name students (for clashes)."""
    columns, numbered = _read_csv(path)
    if key not in columns:
        raise CourseError(f"roster {path}: no column {key} (columns: {', '.join(columns) or 'none'}"
                          "); export the roster from the LMS again")
    rows, lines, index, points = [], [], {}, False
    other_ids: dict[str, list[tuple[str, int]]] = {}
    for line, row in numbered:
        if label_column and row.get(label_column, "") in skip_labels and not row.get(key):
            points |= row.get(label_column) == "Points Possible"
            continue
        value = row.get(key, "") or row.get(blank_key_from, "")
        if not value and key in ALWAYS_THERE:
            raise CourseError(f"roster {path} row {line}: no {key}")
        if value in index:
            raise CourseError(f"roster {path} rows {lines[index[value]]} and {line}: "
                              f"{key} {value!r} twice")
        if value:
            index[value] = len(rows)
        for column in others:
            if column != key and row.get(column):
                other_ids.setdefault(row[column], []).append((column, len(rows)))
        rows.append(row)
        lines.append(line)
    return Roster(Path(path), columns, rows, lines, key, index, other_ids, points)


def fmt_score(value: float) -> str:
    return f"{value:g}"


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def csv_text(columns: list[str], rows: list[list[str]]) -> str:
    """A CSV file's text, every cell (the header too) neutralized by `safe_cell`."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow([safe_cell(c) for c in columns])
    writer.writerows([safe_cell(c) for c in row] for row in rows)
    return buffer.getvalue()


def _by_student(results: list[Result]) -> dict[str, dict[str, Result]]:
    table: dict[str, dict[str, Result]] = {}
    for r in results:
        table.setdefault(r.student_id, {})[r.assignment] = r
    return table


def cell(r: Result, ungraded: str) -> str:
    """What an LMS gets for `r`: the score after the late penalty when it was graded; for a
    row that was not (missing, error), 0 with --ungraded zero and an empty cell otherwise."""
    if r.status == "graded":
        return fmt_score(r.final)
    return "0" if ungraded == "zero" else ""


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


def to_canvas(results: list[Result], assignments: list[str], roster: Roster,
              columns: dict[str, Column], ungraded: str) -> tuple[str, list[str]]:
    """Canvas's gradebook import CSV; also the student ids not on the roster."""
    identity = [c for c in CANVAS_IDENTITY if c in roster.columns]
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
    if roster.points_row:
        maxima = {r.assignment: r.max_score for r in results}
        rows.append(["Points Possible" if c == "Student" else "" for c in identity]
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
        total = sum(mine[a].final for a in mine if mine[a].status == "graded")
        details = []
        for a in assignments:
            r = mine.get(a)
            details += ["", "", ""] if r is None else [
                r.submitted_at.isoformat() if r.submitted_at else "", str(r.days_late),
                fmt_score(r.penalty)]
        counted = any(r.status == "graded" for r in mine.values()) or (mine and ungraded == "zero")
        rows.append([student, *scores, fmt_score(total) if counted else "",
                     fmt_score(sum(maxima[a] for a in assignments)), *details])
    return csv_text(columns, rows), unmatched


def load_roster(target: str, path: Path | None, key: str | None = None) -> Roster | None:
    """The roster for `target`, read and checked; None for csv without one. `key`: a name of
    ROSTER_KEYS[target] (default: its first)."""
    keys = ROSTER_KEYS[target]
    key = key or next(iter(keys))
    if key not in keys:
        raise CourseError(f"--roster-key {key} is not one for --to {target} "
                          f"(choose from: {', '.join(keys)})")
    if path is None:
        if target != "csv":
            raise CourseError(f"--to {target} needs --roster: "
                              + ("Canvas's gradebook export (Grades > Export)" if target == "canvas"
                                 else "Gradescope's roster CSV (SID and/or Email columns)"))
        return None
    if target == "canvas":
        return read_roster(path, keys[key], OTHER_IDS[target], CANVAS_LABELS, "Student")
    if target == "gradescope" and key == "sid":
        return read_roster(path, "SID", OTHER_IDS[target], blank_key_from="Email")
    return read_roster(path, keys[key], OTHER_IDS[target])


def display_name(target: str, row: dict) -> str:
    """A roster row's student as a person reads the name: Canvas's `Student` "Doe, Jane" becomes
    "Jane Doe"; Gradescope's `First Name` and `Last Name`, else its `Name`."""
    if target == "canvas":
        name = row.get("Student", "")
        last, comma, first = name.partition(", ")
        return f"{first} {last}" if comma and "," not in first else name
    both = " ".join(p for p in (row.get("First Name", ""), row.get("Last Name", "")) if p)
    return both or row.get("Name", "")


def roster_people(target: str, path: Path, key: str | None = None) -> dict[str, tuple[str, str]]:
    """student id -> (name, email) from an LMS roster, matched as export matches (one key
    column). Email: Gradescope's `Email`; Canvas's gradebook export has none, so its `Email`
    column when one was added, else its `SIS Login ID` when that is an address."""
    if target not in ("canvas", "gradescope"):
        raise CourseError(f"--lms {target}: choose canvas or gradescope")
    roster = load_roster(target, path, key)
    people = {}
    for student, at in roster.index.items():
        row = roster.rows[at]
        login = row.get("SIS Login ID", "")
        email = row.get("Email", "") or (login if target == "canvas" and "@" in login else "")
        people[student] = (display_name(target, row), email)
    return people


@dataclass
class Exported:
    """What export wrote and what the instructor must read."""

    out: Path
    unmatched: list[Result]  # results of students not on the roster (OUT's .unmatched.csv)
    ungraded: list[Result]  # rows written as blank or 0 because they were not graded
    no_column: list[str]  # assignments with no graded row: no column written
    columns: dict[str, Column] = field(default_factory=dict)  # canvas: where each went


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
    return Exported(out, left, not_graded, no_column, columns)


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

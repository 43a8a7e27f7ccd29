"""The LMS rosters and the CSV cells every classroom file is written with.

A roster is Canvas's gradebook export or Gradescope's roster, keyed by one declared column
(`--roster-key`); a graded id found in another identity column too is a clash, never a match.
Every cell written is made safe by autograder/course/safe_text.py (`safe_cell`, `csv_text`, one model
for every CSV the grader writes, grades.csv included): control characters escaped, and a leading
= + - @ gets a `'` (OWASP's rule against formula injection). `export`, `feedback` and `collect`'s
lms.csv read and write through this module, so no command imports another for it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.layout import CourseError
from autograder.course.safe_text import csv_text, safe_cell  # noqa: F401 (export, feedback, lms.csv write through here)

# Rows of Canvas's gradebook export that are no student, told apart as canvas-lms's importer does
# (lib/gradebook_importer.rb, check_for_non_student_row): "Points Possible" in the first column, or
# every cell empty or "Muted"/"Manual Posting..." (lib/gradebook_exporter.rb writes that row, before
# Points Possible, when an assignment posts its grades manually).
CANVAS_POSTING = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)


def canvas_label(columns: list[str], row: dict) -> str:
    """"Points Possible", "Manual Posting" (or a "Muted" row of older Canvas) for a row of Canvas's
    gradebook export that is no student; "" for a student's."""
    if columns and "Points Possible" in row.get(columns[0], ""):
        return "Points Possible"
    if any(row.values()) and all(CANVAS_POSTING.match(v or "") for v in row.values()):
        return "Manual Posting"
    return ""


# --roster-key: the one roster column a student folder's name is looked up in, per target.
ROSTER_KEYS = {"canvas": {"id": "ID", "sis": "SIS User ID"},
               "gradescope": {"sid": "SID", "email": "Email"},
               "csv": {"student_id": "student_id"}}
# The other columns that name a student: a graded id found there too is a clash, never a match.
OTHER_IDS = {"canvas": ("ID", "SIS User ID", "SIS Login ID", "Integration ID"),
             "gradescope": ("SID", "Email"), "csv": ()}
ALWAYS_THERE = ("ID", "student_id")  # every row has one; an empty one is a broken roster


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
    labels: dict[str, dict] = field(default_factory=dict)  # Canvas's rows that are no student, by label

    @property
    def points_row(self) -> bool:
        """Whether Canvas's "Points Possible" row was there."""
        return "Points Possible" in self.labels

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
        first = f.readline()
        f.seek(0)
        # Canvas writes `;` for a user whose CSV settings (or locale's decimal comma) ask for it;
        # its importer reads either (lib/gradebook_importer.rb, identify_delimiter)
        delimiter = ";" if len(next(csv.reader([first], delimiter=";"), [])) > len(
            next(csv.reader([first]), [])) else ","
        reader = csv.DictReader(f, delimiter=delimiter)
        columns = [c.strip() for c in (reader.fieldnames or [])]
        rows = [(n, {k.strip(): (v or "").strip() for k, v in r.items() if isinstance(k, str)})
                for n, r in enumerate(reader, start=2)]
    return columns, rows


def read_roster(path: Path, key: str, others: Iterable[str] = (),
                label: Callable[[list[str], dict], str] | None = None,
                blank_key_from: str = "") -> Roster:
    """A roster keyed by column `key` alone; CourseError naming the missing column, or the row
    of a repeated key or an empty one in a column that is never empty (Canvas's `ID`); a row
    without an optional key (SIS User ID) is kept and receives no grade. `blank_key_from`: the
    column that is a row's key when `key` is empty in it (Gradescope: a student without an SID
    is known by the email, as collect names the folder). `others`: the columns that also name students (for clashes).
    `label`: names a row that is no student (Canvas's canvas_label); such rows are kept aside."""
    columns, numbered = _read_csv(path)
    if key not in columns:
        raise CourseError(f"roster {path}: no column {key} (columns: {', '.join(columns) or 'none'}"
                          "); export the roster from the LMS again")
    rows, lines, index, labels = [], [], {}, {}
    other_ids: dict[str, list[tuple[str, int]]] = {}
    for line, row in numbered:
        named = label(columns, row) if label and not row.get(key) else ""
        if named:
            labels.setdefault(named, row)
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
    return Roster(Path(path), columns, rows, lines, key, index, other_ids, labels)


def fmt_score(value: float) -> str:
    return f"{value:g}"


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
        return read_roster(path, keys[key], OTHER_IDS[target], canvas_label)
    if target == "gradescope" and key == "sid":
        return read_roster(path, "SID", OTHER_IDS[target], blank_key_from="Email")
    return read_roster(path, keys[key], OTHER_IDS[target])


def display_name(target: str, row: dict) -> str:
    """A roster row's student as a person reads the name: Canvas's `Student` "Doe, Jane" becomes
    "Jane Doe"; Gradescope's `First Name` and `Last Name`, else its `Name`."""
    if target == "canvas" and "Student" not in row:  # exported with first and last names apart
        return " ".join(p for p in (row.get("FirstName", ""), row.get("LastName", "")) if p)
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

"""SUBMITTED/lms.csv: what the LMS said of each collected submission, for returning feedback.

`collect` writes it; `feedback --submitted SUBMITTED` reads it. One row per student and
assignment (a later collect of the same pair replaces its row), UTF-8 CSV with a header:

  student_id     the folder name in SUBMITTED (Canvas user id, Gradescope SID or email, ...)
  assignment     the assignment of source/
  lms            canvas, gradescope or zip: where the download came from
  name           the student's name as the LMS gave it (Canvas: its file-name form, `doejane`)
  email          Gradescope's :email: (Canvas's download has none)
  user_id        Canvas user id
  submission_id  Canvas submission id (from --times) or Gradescope's submission_<id>
  file_id        Canvas's id of the uploaded file (the second number of its download names)
  file           the file's name in the download
  submitted_at   ISO 8601 in UTC, empty when the download gave none
  late           "late" when Canvas's download marked it so (`LATE` in its names)
  due_at         the student's own due date (Canvas's cached_due_date, with any extension), ISO
                 8601 in UTC; empty when the LMS gave none. Files written before it: read as empty

grade passes over files at the top of SUBMITTED (it reads folders only), so the file stays there.
"""

from __future__ import annotations

import csv
import io
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from autograder.classroom.roster import safe_cell
from autograder.course.layout import CourseError

MANIFEST = "lms.csv"


@dataclass(frozen=True)
class LmsRecord:
    """One row of lms.csv (fields as documented above; empty string when unknown)."""

    student_id: str
    assignment: str
    lms: str
    name: str = ""
    email: str = ""
    user_id: str = ""
    submission_id: str = ""
    file_id: str = ""
    file: str = ""
    submitted_at: str = ""
    late: str = ""
    due_at: str = ""


COLUMNS = tuple(f.name for f in fields(LmsRecord))
ADDED = ("due_at",)  # columns a file written before them lacks: read as empty


def read_manifest(submitted: Path) -> dict[tuple[str, str], LmsRecord]:
    """SUBMITTED/lms.csv by (student_id, assignment); {} when there is none. CourseError naming
    the row and the column when it is not the format above."""
    path = Path(submitted) / MANIFEST
    if not path.is_file():
        return {}
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or []) and c not in ADDED]
        if missing:
            raise CourseError(f"{path}: no column {', '.join(missing)} (columns: {', '.join(COLUMNS)})")
        found: dict[tuple[str, str], LmsRecord] = {}
        for line, row in enumerate(reader, start=2):
            key = (row["student_id"] or "", row["assignment"] or "")
            if not all(key):
                raise CourseError(f"{path} row {line}: student_id and assignment must not be empty")
            if key in found:
                raise CourseError(f"{path} row {line}: {key[0]} / {key[1]} is listed twice")
            found[key] = LmsRecord(**{c: row.get(c) or "" for c in COLUMNS})
    return found


def manifest_text(records: dict[tuple[str, str], LmsRecord]) -> str:
    """lms.csv's text for `records`, sorted by student then assignment; every cell neutralized
    against formula injection (a Gradescope :name: such as `=HYPERLINK(...)` gets a `'`)."""
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows({k: safe_cell(v) for k, v in asdict(records[key]).items()}
                     for key in sorted(records))
    return buffer.getvalue()

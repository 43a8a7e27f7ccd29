"""Due dates and late penalties: `[tool.course]` in pyproject.toml, times from `timestamp.txt`.

    [tool.course]
    late_penalty_per_day = 0.1   # fraction of the assignment's max score, per started day late
    late_penalty_cap = 0.5       # the most a late submission can lose, same unit

    [tool.course.due]
    "01_numpy_mlp" = "2026-12-01T23:59:00+00:00"   # ISO 8601 with its UTC offset

A submission handed in `t` after its due date is late by ceil(t / 1 day) started days (one
second late is one day); it loses min(per_day * days, cap) * max_score points, never more than
it scored. An assignment without a due date, or a submission without a time, is never late.
Submission times are nbgrader's `timestamp.txt` (`2026-11-20 17:03:00.000000 UTC`, the format
of nbgrader's exchange, `%Y-%m-%d %H:%M:%S.%f %Z`), read with nbgrader's own parser.

A student's own due date (an extension; Canvas's `cached_due_date`, which `collect --times`
reads) is `due.txt` beside `timestamp.txt`, in the same format; `grade` copies it into grades.csv's
`due_at`, and it replaces the assignment's due date for that student alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.course.layout import CourseError

TIMESTAMP_FILE = "timestamp.txt"  # nbgrader's name, beside the submitted notebook
DUE_FILE = "due.txt"  # a student's own due date (an extension), beside it, in the same format
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"  # nbgrader's Exchange.timestamp_format default
DAY = timedelta(days=1)


def format_timestamp(when: datetime) -> str:
    """`when` (aware) as nbgrader writes timestamp.txt, in UTC: '2026-11-20 17:03:00.000000 UTC'."""
    return when.astimezone(timezone.utc).strftime(TIMESTAMP_FORMAT)


def parse_timestamp(text: str) -> datetime:
    """A timestamp.txt's text (or ISO 8601) as an aware UTC datetime; ValueError if unreadable."""
    from nbgrader.utils import parse_utc  # nbgrader's reader of its own files: naive UTC

    text = text.strip()
    if not text:
        raise ValueError("empty timestamp")
    return parse_utc(text).replace(tzinfo=timezone.utc)


def read_timestamp(folder: Path, name: str = TIMESTAMP_FILE) -> datetime | None:
    """The time in `folder`/timestamp.txt (or `name`, e.g. DUE_FILE); None when there is none.
    ValueError if unreadable."""
    path = Path(folder) / name
    if not path.is_file():
        return None
    try:
        return parse_timestamp(path.read_text(encoding="utf-8"))
    except (ValueError, OverflowError) as error:
        raise ValueError(f"{path.name} holds {path.read_text(errors='replace').strip()[:60]!r}, "
                         f"not a time like '2026-11-20 17:03:00.000000 UTC' ({error})") from None


@dataclass(frozen=True)
class LatePolicy:
    """Due dates per assignment and the penalty per started day late (fractions of max score)."""

    due: dict[str, datetime] = field(default_factory=dict)
    per_day: float = 0.0
    cap: float = 1.0

    def due_for(self, assignment: str, own: datetime | None = None) -> datetime | None:
        """The due date that holds for one student: `own` (their extension) when they have one,
        else the assignment's."""
        return own if own is not None else self.due.get(assignment)

    def days_late(self, assignment: str, submitted: datetime | None,
                  own: datetime | None = None) -> int:
        """Started days between the due date (`own`, the student's, when given) and `submitted`;
        0 when on time or unknown."""
        due = self.due_for(assignment, own)
        if due is None or submitted is None or submitted <= due:
            return 0
        return math.ceil((submitted - due) / DAY)

    def penalty(self, assignment: str, submitted: datetime | None, score: float,
                max_score: float, own: datetime | None = None) -> float:
        """Points withdrawn for lateness: min(per_day * days, cap) * max_score, at most `score`."""
        days = self.days_late(assignment, submitted, own)
        if not days:
            return 0.0
        return round(min(min(self.per_day * days, self.cap) * max_score, max(score, 0.0)), 6)


def _fraction(settings: dict, key: str, default: float) -> float:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise CourseError(f"[tool.course] {key} = {value!r} in pyproject.toml: expected a fraction "
                          "of the max score between 0 and 1, e.g. 0.1")
    return float(value)


def parse_due(assignment: str, value, table: str = "due") -> datetime:
    """One `[tool.course.due]` (or `table`) entry as an aware datetime; CourseError naming it."""
    where = f'[tool.course.{table}] "{assignment}" = {value!r} in pyproject.toml'
    if isinstance(value, datetime):  # a bare TOML datetime
        when = value
    elif isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise CourseError(f"{where}: not an ISO 8601 date and time; write it like "
                              '"2026-12-01T23:59:00+00:00"') from None
    else:
        raise CourseError(f'{where}: expected a string like "2026-12-01T23:59:00+00:00"')
    if when.tzinfo is None:
        raise CourseError(f"{where}: no UTC offset; add one (+00:00 for UTC) so that the due "
                          "date means the same on every machine")
    return when


def load_policy(settings: dict, assignments: list[str]) -> LatePolicy:
    """The late policy of `[tool.course]` (`settings`), checked against the course's assignments."""
    due_table = settings.get("due", {})
    if not isinstance(due_table, dict):
        raise CourseError("[tool.course] due in pyproject.toml must be a table: "
                          '[tool.course.due] "01_numpy_mlp" = "2026-12-01T23:59:00+00:00"')
    unknown = sorted(set(due_table) - set(assignments))
    if unknown:
        raise CourseError(f"[tool.course.due] in pyproject.toml names {', '.join(unknown)}, not an "
                          f"assignment of source/ ({', '.join(assignments) or 'none'})")
    due = {name: parse_due(name, value) for name, value in due_table.items()}
    return LatePolicy(due, _fraction(settings, "late_penalty_per_day", 0.0),
                      _fraction(settings, "late_penalty_cap", 1.0))


def course_policy(root: Path, assignments: list[str]) -> LatePolicy:
    """The late policy of the course at `root` (none when its pyproject.toml has no [tool.course])."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib

    path = Path(root) / "pyproject.toml"
    if not path.is_file():
        return LatePolicy()
    try:
        with open(path, "rb") as f:
            settings = tomllib.load(f).get("tool", {}).get("course", {})
    except tomllib.TOMLDecodeError as error:
        raise CourseError(f"{path}: not valid TOML ({error})") from None
    return load_policy(settings, assignments)

"""The term's calendar and the LMS's names for each assignment: tables of `[tool.course]`.

    [tool.course.release]      # the time `publish` may hand the assignment out
    "01_numpy_mlp" = "2026-11-24T09:00:00+00:00"

    [tool.course.due]          # its due date (late penalties: autograder/course/lateness.py)
    "01_numpy_mlp" = "2026-12-01T23:59:00+00:00"

    [tool.course.canvas_id]    # the Canvas assignment id: the number in its gradebook column,
    "01_numpy_mlp" = 5501      # "HW1 - NumPy MLP (5501)", and in its address .../assignments/5501

    [tool.course.gradescope_name]   # the assignment's name on Gradescope
    "01_numpy_mlp" = "HW1 - NumPy MLP"

    [tool.course]
    timezone = "America/Chicago"    # the zone every time is shown in (an IANA name)

Each table is keyed by the assignment's folder name in source/; a key that names no assignment,
a time without its UTC offset, an id that is no number: CourseError naming the setting. An
assignment without a release time is released whenever `publish` runs (the course without a
calendar); without a Canvas id, `export --to canvas` finds its column by the folder name.

The course's zone is where its students read times (feedback pages): `timezone`, else the one UTC
offset every release and due time is written with (`-05:00`, named "UTC-05:00"), else UTC. Times
are kept as instants; the zone only says how they are shown, always with its name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone, tzinfo
from pathlib import Path

from autograder.course.lateness import parse_due
from autograder.course.layout import CourseError

TABLES = ("release", "due", "canvas_id", "gradescope_name")


def course_table(root: Path) -> dict:
    """`[tool.course]` of `root`/pyproject.toml; {} when there is no such file or table."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib

    path = Path(root) / "pyproject.toml"
    if not path.is_file():
        return {}
    try:
        with open(path, "rb") as f:
            return tomllib.load(f).get("tool", {}).get("course", {}) or {}
    except tomllib.TOMLDecodeError as error:
        raise CourseError(f"{path}: not valid TOML ({error})") from None


@dataclass(frozen=True)
class Term:
    """Release and due times, Canvas ids and Gradescope names, per assignment."""

    release: dict[str, datetime] = field(default_factory=dict)
    due: dict[str, datetime] = field(default_factory=dict)
    canvas_id: dict[str, str] = field(default_factory=dict)
    gradescope_name: dict[str, str] = field(default_factory=dict)
    zone: tzinfo = timezone.utc  # where times are shown (course_zone)

    def show(self, when: datetime | None) -> str:
        """`when` in the course's zone, with the zone's name: '2026-11-09 23:59 CST'; ""."""
        if when is None:
            return ""
        here = when.astimezone(self.zone)
        return f"{here:%Y-%m-%d %H:%M} {here.tzname()}"

    def released(self, assignment: str, now: datetime) -> bool:
        """Whether `assignment` may be handed out at `now` (no release time: always)."""
        when = self.release.get(assignment)
        return when is None or when <= now

    def due_passed(self, assignment: str, now: datetime) -> bool:
        """Whether `assignment`'s due date has passed at `now` (no due date: never)."""
        when = self.due.get(assignment)
        return when is not None and when <= now


def _table(settings: dict, name: str, assignments: list[str]) -> dict:
    table = settings.get(name, {})
    if not isinstance(table, dict):
        raise CourseError(f"[tool.course] {name} in pyproject.toml must be a table: "
                          f'[tool.course.{name}] "01_numpy_mlp" = ...')
    unknown = sorted(set(table) - set(assignments))
    if unknown:
        raise CourseError(f"[tool.course.{name}] in pyproject.toml names {', '.join(unknown)}, not "
                          f"an assignment of source/ ({', '.join(assignments) or 'none'})")
    return table


def course_zone(settings: dict, times: list[datetime]) -> tzinfo:
    """`[tool.course] timezone` (an IANA name: "America/Chicago"), else the one UTC offset all
    `times` (the calendar's) share, else UTC; CourseError naming a zone that does not exist."""
    name = settings.get("timezone")
    if name is not None:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            if not isinstance(name, str) or not name.strip():
                raise ValueError(name)
            return ZoneInfo(name.strip())
        except (ZoneInfoNotFoundError, ValueError):
            raise CourseError(f"[tool.course] timezone = {name!r} in pyproject.toml: not a time zone "
                              'name; write an IANA name such as "America/Chicago" or "UTC"') from None
    offsets = {t.utcoffset() for t in times}
    if len(offsets) == 1:
        (offset,) = offsets
        return timezone(offset) if offset else timezone.utc
    return timezone.utc


def load_term(settings: dict, assignments: list[str]) -> Term:
    """The term of `[tool.course]` (`settings`), checked against the course's assignments."""
    release = {a: parse_due(a, v, table="release")
               for a, v in _table(settings, "release", assignments).items()}
    due = {a: parse_due(a, v) for a, v in _table(settings, "due", assignments).items()}
    canvas = {}
    for a, value in _table(settings, "canvas_id", assignments).items():
        text = str(value).strip() if not isinstance(value, bool) else ""
        if not text.isdigit():
            raise CourseError(f'[tool.course.canvas_id] "{a}" = {value!r} in pyproject.toml: a '
                              "Canvas assignment id is a number (the one in its gradebook column "
                              "header and its address)")
        canvas[a] = text
    names = {}
    for a, value in _table(settings, "gradescope_name", assignments).items():
        if not isinstance(value, str) or not value.strip():
            raise CourseError(f'[tool.course.gradescope_name] "{a}" = {value!r} in pyproject.toml:'
                              " expected the assignment's name on Gradescope")
        names[a] = value.strip()
    for a in release.keys() & due.keys():
        if release[a] > due[a]:
            raise CourseError(f'[tool.course] "{a}": released {release[a].isoformat()} after its '
                              f"due date {due[a].isoformat()}")
    return Term(release, due, canvas, names,
                course_zone(settings, [*release.values(), *due.values()]))


def course_term(root: Path, assignments: list[str]) -> Term:
    """The term of the course at `root` (empty when its pyproject.toml has no [tool.course])."""
    return load_term(course_table(root), assignments)

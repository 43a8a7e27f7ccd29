"""Canvas submission times for `collect --from canvas --times FILE|FOLDER`: Canvas's Submissions API.

Canvas's "Download Submissions" zip carries no submission time. Its entry names are built by
canvas-lms `ContentZipper#get_filename` and `#add_upload_submission` (lib/content_zipper.rb):
`[sortable name, "LATE" if late, user id]` joined by `_` with every non-word character removed
(only the name is downcased, so the marker reads `LATE`; downloads made before that change read
`late`), then `_{file id}_{file's display name}`; the second number is the id of the uploaded file
(Canvas's attachment), not of the submission. The entries are written with rubyzip's
`get_output_stream`, which stamps them with the time the zip was made, not the submission time.
Canvas's gradebook export (CSV) has no submission time either.

What does carry it is Canvas's documented Submissions API, "List assignment submissions"
(https://canvas.instructure.com/doc/api/submissions.html):

    GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions?per_page=100

a JSON list of Submission objects (canvas-lms lib/api/v1/submission.rb), of which this reads
`user_id`, `submitted_at` (ISO 8601, UTC), `cached_due_date` (the student's own due date: the
assignment's, or the one an extension or a section's override gives them), `id` (the submission),
`attachments` (the files of the current attempt, each with its `id`), `late` and `assignment_id`.
The answer comes in pages (at most 100 submissions each, canvas-lms lib/api.rb `paginate`), the
next one named by the response's `Link: <...>; rel="next"` header: a class of 120 is two
requests. So this reads several files, or every `*.json` of a folder, each one page (a list; a
list of lists is pages saved together), and merges them; a user listed twice must be listed the
same way each time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from autograder.course.layout import CourseError

API = "GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions"
PAGE_SIZE = 100  # canvas-lms's largest per_page for this list (Api.per_page_for's default maximum)
PAGING = ("Canvas's Submissions API answers in pages of at most 100 submissions, the next one "
          "named by its Link: rel=\"next\" header, so a file saved from one request may be one page "
          "of several: save every page (docs/instructors.md, \"Collect submissions\") and pass the "
          "folder that holds them, or --times once per page")


@dataclass(frozen=True)
class CanvasSubmission:
    """What Canvas's Submissions API says of one student's submission to one assignment."""

    user_id: str
    submission_id: str
    submitted_at: datetime | None
    file_ids: tuple[str, ...] | None  # None when the record lists no attachments at all
    late: bool
    item: str  # where it is, for messages: "page-2.json item 17"
    due_at: datetime | None = None  # cached_due_date: this student's due date in Canvas


@dataclass
class CanvasTimes:
    """Every page of the Submissions API's answer, merged: the records by Canvas user id, and
    which user each uploaded file belongs to."""

    records: dict[str, CanvasSubmission]
    owners: dict[str, str]  # Canvas file id -> user id
    files: list[Path]  # the pages read
    sizes: list[int]  # how many submissions each page held

    def describe(self) -> str:
        """'121 submissions in 2 files (times/page-1.json, times/page-2.json)'."""
        names = ", ".join(str(p) for p in self.files[:4]) + (", ..." if len(self.files) > 4 else "")
        return f"{len(self.records)} submission(s) in {len(self.files)} file(s) ({names})"


def _time(where: str, field: str, value) -> datetime | None:
    if value is None or value == "":
        return None
    text = f"{where}: {field} = {value!r} is not an ISO 8601 time like \"2026-11-20T17:03:00Z\""
    if not isinstance(value, str):
        raise CourseError(text)
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CourseError(text) from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _pages(paths: list[Path]) -> list[Path]:
    """The files to read: each file given, and every *.json of each folder given (by name)."""
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            inside = sorted(p for p in path.iterdir() if p.suffix.lower() == ".json" and p.is_file()
                            and not p.is_symlink())
            if not inside:
                raise CourseError(f"--times {path}: a folder with no .json file (expected the pages "
                                  f"of Canvas's {API}, one JSON file each)")
            files += inside
        elif path.is_file():
            files.append(path)
        else:
            raise CourseError(f"--times {path}: no such file or folder")
    return files


def _records(path: Path) -> list:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CourseError(f"{path}: not JSON ({error}); expected the answer of Canvas's {API}") from None
    if isinstance(data, list) and data and all(isinstance(page, list) for page in data):
        data = [record for page in data for record in page]  # pages saved one list each
    if not isinstance(data, list):
        raise CourseError(f"{path}: expected a JSON list of Canvas Submission objects (the answer "
                          f"of {API}), found a JSON {type(data).__name__}")
    return data


def _submission(path: Path, item: int, record) -> CanvasSubmission:
    where = f"{path} item {item}"
    if not isinstance(record, dict):
        raise CourseError(f"{where}: expected a Submission object, found {record!r:.60}")
    user = record.get("user_id")
    if isinstance(user, bool) or not isinstance(user, (int, str)) or not str(user).strip().isdigit():
        raise CourseError(f"{where}: user_id = {user!r} is not a Canvas user id")
    user = str(user).strip()
    attachments = record.get("attachments")
    if attachments is not None and not (isinstance(attachments, list) and all(
            isinstance(a, dict) and "id" in a for a in attachments)):
        raise CourseError(f"{where} (user {user}): attachments is not a list of files with an id")
    return CanvasSubmission(
        user, str(record.get("id") or ""),
        _time(f"{where} (user {user})", "submitted_at", record.get("submitted_at")),
        None if attachments is None else tuple(str(a["id"]) for a in attachments),
        bool(record.get("late")), where,
        _time(f"{where} (user {user})", "cached_due_date", record.get("cached_due_date")))


def _same(a: CanvasSubmission, b: CanvasSubmission) -> bool:
    return (a.submission_id, a.submitted_at, a.file_ids, a.due_at) == (
        b.submission_id, b.submitted_at, b.file_ids, b.due_at)


def read_canvas_times(paths: Path | list[Path]) -> CanvasTimes:
    """The Submissions API's answer saved in `paths` (files, or folders of `*.json` pages),
    merged by Canvas user id; CourseError naming the file, the item and the field for anything
    else (not JSON, no user_id, a bad time, a user listed twice differently, a file claimed by two
    users, submissions of several assignments)."""
    files = _pages([paths] if isinstance(paths, (str, Path)) else list(paths))
    found: dict[str, CanvasSubmission] = {}
    owners: dict[str, str] = {}
    assignments: dict[str, str] = {}
    sizes = []
    for path in files:
        records = _records(path)
        sizes.append(len(records))
        for item, record in enumerate(records, start=1):
            submission = _submission(path, item, record)
            user = submission.user_id
            if record.get("assignment_id") is not None:
                assignments.setdefault(str(record["assignment_id"]), submission.item)
            if user in found:
                if _same(found[user], submission):  # a page saved twice, or lists that overlap
                    continue
                raise CourseError(f"{found[user].item} and {submission.item}: user {user} twice, "
                                  "differently (one assignment's submissions list each student "
                                  "once; were the pages saved at different times?)")
            found[user] = submission
            for file_id in submission.file_ids or ():
                if owners.setdefault(file_id, user) != user:
                    raise CourseError(f"{submission.item}: Canvas file {file_id} is listed for "
                                      f"users {owners[file_id]} and {user}")
    if len(assignments) > 1:
        listed = ", ".join(f"{a} ({where})" for a, where in assignments.items())
        raise CourseError(f"--times: submissions of {len(assignments)} assignments ({listed}); save "
                          "the list of the one assignment you collect")
    return CanvasTimes(found, owners, files, sizes)


def record_of(times: CanvasTimes, user: str, entry: str) -> CanvasSubmission:
    """The record of `user`, whose `entry` is in the download; CourseError when there is none
    (most often: the times are one page of several) or when it has no submission time."""
    record = times.records.get(user)
    if record is None:
        full = [p for p, n in zip(times.files, times.sizes) if n >= PAGE_SIZE]
        hint = (f"; {', '.join(map(str, full))} hold{'s' if len(full) == 1 else ''} "
                f"{PAGE_SIZE} or more, a full page" if full else "")
        raise CourseError(f"--times: no submission of Canvas user {user}, whose {entry} is in the "
                          f"download, among {times.describe()}{hint}. {PAGING}. Or were the "
                          "download and the times saved for different assignments?")
    if record.submitted_at is None:
        raise CourseError(f"{record.item} (user {user}): submitted_at is empty, yet the download "
                          f"holds {entry}")
    return record


def file_mismatch(times: CanvasTimes, user: str, file_id: str) -> str:
    """Why the download's Canvas file `file_id`, named as user `user`'s, is not theirs by the
    Submissions API; "" when it is one of their current files (or the API lists none)."""
    record = times.records.get(user)
    if record is None or record.file_ids is None or file_id in record.file_ids:
        return ""
    owner = times.owners.get(file_id)
    if owner is not None:
        return (f"its name says user {user}, but --times lists Canvas file {file_id} as user "
                f"{owner}'s upload; not placed for either")
    return (f"Canvas file {file_id} is not one of user {user}'s current files by --times "
            f"({', '.join(record.file_ids) or 'none'}): the student handed in again after the "
            "download, or the name is not Canvas's; download the submissions and save the times "
            "again")

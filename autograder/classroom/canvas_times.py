"""Canvas submission times for `collect --from canvas --times FILE`: Canvas's Submissions API.

Canvas's "Download Submissions" zip carries no submission time. Its entry names are built by
canvas-lms `ContentZipper#get_filename` and `#add_upload_submission`
(app/models/content_zipper.rb): `[sortable name, "LATE" if late, user id]` joined by `_`, every
non-word character removed and the whole DOWNCASED (so the marker reads `late`), then
`_{file id}_{file's display name}`; the second number is the id of the uploaded file (Canvas's
attachment), not of the submission. The entries are written with rubyzip's
`get_output_stream`, which stamps them with the time the zip was made, not the submission
time. Canvas's gradebook export (CSV) has no submission time either.

What does carry it is Canvas's documented Submissions API, "List assignment submissions"
(https://canvas.instructure.com/doc/api/submissions.html):

    GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions?per_page=100

a JSON list of Submission objects, of which this reads `user_id`, `submitted_at` (ISO 8601,
UTC), `id` (the submission), `attachments` (the files of the current attempt, each with its
`id`), `late` and `assignment_id`. Pages saved separately may be given as a list of lists.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from autograder.course.layout import CourseError

API = "GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions"


@dataclass(frozen=True)
class CanvasSubmission:
    """What Canvas's Submissions API says of one student's submission to one assignment."""

    user_id: str
    submission_id: str
    submitted_at: datetime | None
    file_ids: tuple[str, ...] | None  # None when the record lists no attachments at all
    late: bool
    item: int  # its place in the file (1-based), for messages


def _when(path: Path, item: int, user: str, value) -> datetime | None:
    if value is None or value == "":
        return None
    where = f"{path} item {item} (user {user}): submitted_at = {value!r}"
    if not isinstance(value, str):
        raise CourseError(f"{where} is not an ISO 8601 time like \"2026-11-20T17:03:00Z\"")
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CourseError(f"{where} is not an ISO 8601 time like \"2026-11-20T17:03:00Z\"") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def read_canvas_times(path: Path) -> dict[str, CanvasSubmission]:
    """The Submissions API's answer saved in `path`, by Canvas user id; CourseError naming the
    item and the field for anything else (not JSON, no user_id, a bad time, a user twice,
    submissions of several assignments)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"--times {path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise CourseError(f"{path}: not JSON ({error}); expected the answer of Canvas's {API}") from None
    if isinstance(data, list) and data and all(isinstance(page, list) for page in data):
        data = [record for page in data for record in page]  # pages saved one list each
    if not isinstance(data, list):
        raise CourseError(f"{path}: expected a JSON list of Canvas Submission objects (the answer "
                          f"of {API}), found a JSON {type(data).__name__}")
    found: dict[str, CanvasSubmission] = {}
    assignments: dict[str, int] = {}
    for item, record in enumerate(data, start=1):
        if not isinstance(record, dict):
            raise CourseError(f"{path} item {item}: expected a Submission object, found {record!r:.60}")
        user = record.get("user_id")
        if isinstance(user, bool) or not isinstance(user, (int, str)) or not str(user).strip().isdigit():
            raise CourseError(f"{path} item {item}: user_id = {user!r} is not a Canvas user id")
        user = str(user).strip()
        if user in found:
            raise CourseError(f"{path} items {found[user].item} and {item}: user {user} twice "
                              "(one assignment's submissions list each student once)")
        if record.get("assignment_id") is not None:
            assignments.setdefault(str(record["assignment_id"]), item)
        attachments = record.get("attachments")
        if attachments is not None and not (isinstance(attachments, list) and all(
                isinstance(a, dict) and "id" in a for a in attachments)):
            raise CourseError(f"{path} item {item} (user {user}): attachments is not a list of "
                              "files with an id")
        found[user] = CanvasSubmission(
            user, str(record.get("id") or ""), _when(path, item, user, record.get("submitted_at")),
            None if attachments is None else tuple(str(a["id"]) for a in attachments),
            bool(record.get("late")), item)
    if len(assignments) > 1:
        listed = ", ".join(f"{a} (item {i})" for a, i in assignments.items())
        raise CourseError(f"{path}: submissions of {len(assignments)} assignments ({listed}); save "
                          "the list of the one assignment you collect")
    return found


def time_of(times: dict[str, CanvasSubmission], source: Path, user: str, file_id: str,
            entry: str) -> CanvasSubmission:
    """The record of `user` whose current files include `file_id` (the download's `entry`);
    CourseError saying what disagrees otherwise."""
    record = times.get(user)
    if record is None:
        raise CourseError(f"{source}: no submission of Canvas user {user}, whose {entry} is in the "
                          "download; were both saved for the same assignment?")
    if record.submitted_at is None:
        raise CourseError(f"{source} item {record.item} (user {user}): submitted_at is empty, yet "
                          f"the download holds {entry}")
    if record.file_ids is not None and file_id not in record.file_ids:
        raise CourseError(f"{source} item {record.item} (user {user}): the download's {entry} is "
                          f"Canvas file {file_id}, not one of this submission's files "
                          f"({', '.join(record.file_ids) or 'none'}); the student submitted again "
                          "in between? Download the submissions and save the list again.")
    return record

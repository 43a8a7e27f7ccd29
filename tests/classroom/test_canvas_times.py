"""Canvas's Submissions API saved as pages, merged by user, checked; what a download's file is owed
(paging against a server as canvas-lms pages: test_canvas_paging.py; collect itself: test_collect.py)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from autograder.classroom.canvas_times import PAGE_SIZE, file_mismatch, read_canvas_times, record_of
from autograder.course.layout import CourseError


def submission(user, files=(700,), when="2026-12-01T20:00:00Z", **more):
    return {"id": f"90{user}", "user_id": user, "assignment_id": 55, "submitted_at": when,
            "attachments": [{"id": f} for f in files], "late": False, **more}


def page(folder, name, records):
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(records))
    return folder / name


def test_the_pages_of_a_folder_are_merged_by_user(tmp_path):
    times = tmp_path / "times"
    page(times, "page-1.json", [submission(1, (701,)), submission(2, (702,),
                                                                 cached_due_date="2026-12-04T04:59:00Z")])
    page(times, "page-2.json", [submission(3, (703,), late=True), submission(1, (701,))])  # 1 again, the same
    (times / "notes.txt").write_text("not a page")
    found = read_canvas_times(times)
    assert sorted(found.records) == ["1", "2", "3"] and found.owners == {"701": "1", "702": "2", "703": "3"}
    assert found.records["2"].due_at == datetime(2026, 12, 4, 4, 59, tzinfo=timezone.utc)
    assert found.records["3"].late and found.sizes == [2, 2]
    assert found.describe().startswith("3 submission(s) in 2 file(s)")
    both = page(tmp_path, "both.json", [[submission(4)], [submission(5, (705,))]])  # pages saved together
    assert sorted(read_canvas_times([both]).records) == ["4", "5"]


@pytest.mark.parametrize("records,message", [
    ([submission(1), submission(1, when="2026-12-02T00:00:00Z")], "user 1 twice, differently"),
    ([submission(1, (700,)), submission(2, (700,))], "Canvas file 700 is listed for users 1 and 2"),
    ([submission(1), {**submission(2, (702,)), "assignment_id": 56}], "submissions of 2 assignments"),
    ([submission("x1")], "user_id = 'x1' is not a Canvas user id"),
    ([submission(1, when="yesterday")], "submitted_at = 'yesterday' is not an ISO 8601 time"),
    ([{**submission(1), "attachments": [{"name": "a.ipynb"}]}], "attachments is not a list of files"),
    ({"errors": [{"message": "unauthorized"}]}, "found a JSON dict"),
])
def test_anything_else_is_named_with_its_file_and_item(tmp_path, records, message):
    with pytest.raises(CourseError, match=message):
        read_canvas_times(page(tmp_path, "times.json", records))


def test_a_user_missing_from_a_full_page_says_the_times_may_be_one_page_of_several(tmp_path):
    times = read_canvas_times(page(tmp_path, "p.json", [submission(u, (u,)) for u in range(1, PAGE_SIZE + 1)]))
    with pytest.raises(CourseError, match=r"no submission of Canvas user 999.*p.json holds 100 or more, a full page"):
        record_of(times, "999", "a notebook")
    assert record_of(times, "7", "a notebook").submission_id == "907"
    empty = read_canvas_times(page(tmp_path, "q.json", [submission(8, when=None)]))
    with pytest.raises(CourseError, match="submitted_at is empty"):
        record_of(empty, "8", "x.ipynb")


def test_a_file_that_is_not_the_users_current_one_is_named_and_never_placed(tmp_path):
    times = read_canvas_times(page(tmp_path, "p.json", [submission(1, (701,)), submission(2, (702,))]))
    assert file_mismatch(times, "1", "701") == ""
    assert "lists Canvas file 702 as user 2's upload; not placed for either" in file_mismatch(times, "1", "702")
    assert "handed in again after the download" in file_mismatch(times, "1", "799")
    with pytest.raises(CourseError, match="no such file or folder"):
        read_canvas_times(tmp_path / "nope")

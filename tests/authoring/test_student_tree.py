"""What the student repository holds at a moment (publish and site share it): the assignments released
or published before, what an earlier publish wrote, no link followed, and the calendar gate's reading
of the one leak rule (the whole tree published: test_publish.py; the rule: test_leaks.py)."""

from __future__ import annotations

import argparse
import json
import shutil
from datetime import datetime, timezone

import nbformat
import pytest

from autograder.authoring.student_tree import (
    MARKER,
    PublishError,
    choose,
    iso_time,
    links_in_course,
    previous_files,
    published_assignments,
    shown_answers,
)
from autograder.course.notebooks import read_notebook, write_notebook
from autograder.course.term import Term

UTC = timezone.utc


def day(n: int) -> datetime:
    return datetime(2026, 12, n, 9, tzinfo=UTC)


@pytest.fixture
def course(fixture_course):
    """00_fixture and 01_second (a copy), released on December 1 and 8, due on the 7th and 14th."""
    (fixture_course.source_dir / "01_second").mkdir()
    shutil.copyfile(fixture_course.source_notebook("00_fixture"), fixture_course.source_notebook("01_second"))
    return fixture_course


TERM = Term(release={"00_fixture": day(1), "01_second": day(8)}, due={"00_fixture": day(7), "01_second": day(14)})


def test_the_released_or_named_assignments_and_every_one_published_before(course, tmp_path):
    assert choose(course, None, None, TERM, day(2)) == ["00_fixture"]
    assert choose(course, None, None, TERM, day(9)) == ["00_fixture", "01_second"]
    with pytest.raises(PublishError, match=r"not released yet: 01_second \(on 2026-12-08T09:00:00\+00:00\)"):
        choose(course, None, ["01_second"], TERM, day(2))
    out = tmp_path / "out"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"files": ["release/01_second/01_second.ipynb", "README.md"]}))
    assert published_assignments(out, course) == ["01_second"]
    assert choose(course, out, ["00_fixture"], TERM, day(9)) == ["00_fixture", "01_second"]


def test_an_earlier_publish_is_read_and_anything_else_in_out_stops_it(tmp_path):
    out = tmp_path / "out"
    assert previous_files(out) is None
    out.mkdir()
    (out / ".git").mkdir()
    assert previous_files(out) is None  # a fresh clone counts as empty
    (out / "notes.md").write_text("mine")
    with pytest.raises(PublishError, match="is not empty and holds no earlier publish"):
        previous_files(out)
    (out / MARKER).write_text(json.dumps({"files": ["README.md", "release/a/a.ipynb"]}))
    assert previous_files(out) == {"README.md", "release/a/a.ipynb"}
    for files in (["../outside"], ["/etc/passwd"], [3], "README.md"):
        (out / MARKER).write_text(json.dumps({"files": files}))
        with pytest.raises(PublishError, match="not a publish record"):
            previous_files(out)


def test_every_link_in_what_publish_reads_is_named(course):
    (course.root / "README.md").symlink_to("/etc/hostname")
    (course.root / "LICENSE").write_text("MIT")
    (course.root / "notebooks").mkdir()
    (course.root / "notebooks" / "data.csv").symlink_to(course.source_notebook("00_fixture"))
    assert links_in_course(course, ["00_fixture"]) == [
        "README.md -> /etc/hostname", f"notebooks/data.csv -> {course.source_notebook('00_fixture')}"]


def test_the_calendar_gate_names_an_answer_readable_before_its_due_date_and_not_after(course):
    path = course.source_notebook("01_second")
    nb = read_notebook(path)
    nb.cells.append(nbformat.v4.new_markdown_cell("Last week: `return float(np.mean(np.asarray(x, dtype=float) ** 2))`"))
    write_notebook(nb, path)
    (problem,) = shown_answers(course, ["00_fixture", "01_second"], TERM, day(6))
    assert problem.startswith("01_second shows 00_fixture's answer mean_square (1 of its 1 lines")
    assert problem.endswith("before 00_fixture is due: release 01_second after 2026-12-07T09:00:00+00:00")
    assert shown_answers(course, ["00_fixture", "01_second"], TERM, day(8)) == []  # 00_fixture is due
    earlier = Term(release={"00_fixture": day(9), "01_second": day(8)}, due=TERM.due)
    assert shown_answers(course, ["01_second"], earlier, day(8)) == []  # handed out before: given


def test_times_on_the_command_line_carry_their_offset():
    assert iso_time("2026-12-01T09:00:00Z") == day(1)
    with pytest.raises(argparse.ArgumentTypeError, match="has no UTC offset"):
        iso_time("2026-12-01T09:00:00")
    with pytest.raises(argparse.ArgumentTypeError, match="is not an ISO 8601 time"):
        iso_time("next monday")

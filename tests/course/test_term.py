"""The term's calendar (`[tool.course]` release, due, canvas_id, gradescope_name, timezone)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from autograder.course.layout import CourseError
from autograder.course.term import Term, course_table, course_term, course_zone, load_term

A = ["01_a", "02_b"]
UTC = timezone.utc


def test_a_full_calendar_is_read_as_instants_with_ids_and_names():
    term = load_term({"release": {"01_a": "2026-11-24T09:00:00-05:00"},
                      "due": {"01_a": "2026-12-01T23:59:00-05:00", "02_b": "2026-12-08T23:59:00-05:00"},
                      "canvas_id": {"01_a": 5501, "02_b": " 5502 "},
                      "gradescope_name": {"01_a": "  HW1 - NumPy MLP "}}, A)
    assert term.release == {"01_a": datetime(2026, 11, 24, 14, tzinfo=UTC)}
    assert term.due["02_b"] == datetime(2026, 12, 9, 4, 59, tzinfo=UTC)
    assert term.canvas_id == {"01_a": "5501", "02_b": "5502"}
    assert term.gradescope_name == {"01_a": "HW1 - NumPy MLP"}
    assert term.zone.utcoffset(None) == timedelta(hours=-5)  # every time written at -05:00


def test_released_and_due_passed_at_a_moment():
    term = load_term({"release": {"01_a": "2026-11-24T09:00:00+00:00"},
                      "due": {"01_a": "2026-12-01T23:59:00+00:00"}}, A)
    before, between, after = (datetime(2026, 11, 20, tzinfo=UTC), datetime(2026, 11, 25, tzinfo=UTC),
                              datetime(2026, 12, 2, tzinfo=UTC))
    assert [term.released("01_a", t) for t in (before, between, after)] == [False, True, True]
    assert [term.due_passed("01_a", t) for t in (before, between, after)] == [False, False, True]
    assert term.released("02_b", before) and not term.due_passed("02_b", after)  # no calendar


@pytest.mark.parametrize("settings,message", [
    ({"due": {"09_z": "2026-12-01T23:59:00+00:00"}}, r"\[tool.course.due\] .* names 09_z, not an assignment"),
    ({"release": {"01_a": "2026-12-01T23:59:00"}}, r'\[tool.course.release\] "01_a" .* no UTC offset'),
    ({"canvas_id": {"01_a": "HW1"}}, r"a Canvas assignment id is a number"),
    ({"canvas_id": {"01_a": True}}, r"a Canvas assignment id is a number"),
    ({"gradescope_name": {"01_a": "  "}}, r"expected the assignment's name on Gradescope"),
    ({"due": "2026-12-01"}, r"must be a table"),
    ({"release": {"01_a": "2026-12-09T00:00:00+00:00"}, "due": {"01_a": "2026-12-01T00:00:00+00:00"}},
     r'"01_a": released 2026-12-09.* after its due date'),
    ({"timezone": "Mars/Olympus"}, r"not a time zone name"),
])
def test_a_wrong_setting_is_named(settings, message):
    with pytest.raises(CourseError, match=message):
        load_term(settings, A)


def test_the_zone_is_the_named_one_else_the_shared_offset_else_utc():
    eastern = timezone(timedelta(hours=-5))
    times = [datetime(2026, 12, 1, tzinfo=eastern), datetime(2026, 12, 8, tzinfo=eastern)]
    assert str(course_zone({"timezone": "America/Chicago"}, times)) == "America/Chicago"
    assert course_zone({}, times) == eastern
    assert course_zone({}, [times[0], datetime(2026, 12, 8, tzinfo=UTC)]) == UTC
    assert course_zone({}, []) == UTC


def test_shown_times_carry_the_zones_name():
    term = Term(zone=timezone(timedelta(hours=-5)))
    assert term.show(datetime(2026, 12, 2, 4, 59, tzinfo=UTC)).startswith("2026-12-01 23:59")
    assert "UTC-05:00" in term.show(datetime(2026, 12, 2, 4, 59, tzinfo=UTC))
    assert term.show(None) == ""


def test_the_table_is_read_from_pyproject_and_a_course_without_one_has_no_calendar(tmp_path):
    assert course_table(tmp_path) == {} and course_term(tmp_path, A) == Term()
    (tmp_path / "pyproject.toml").write_text('[tool.course.due]\n"02_b" = "2026-12-08T23:59:00+00:00"\n')
    assert course_term(tmp_path, A).due == {"02_b": datetime(2026, 12, 8, 23, 59, tzinfo=UTC)}
    (tmp_path / "pyproject.toml").write_text("[tool.course\n")
    with pytest.raises(CourseError, match="not valid TOML"):
        course_table(tmp_path)

"""Late penalties: started days after the due date (a student's own, when they have one), capped."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from autograder.course.lateness import (
    DUE_FILE,
    LatePolicy,
    course_policy,
    format_timestamp,
    load_policy,
    parse_due,
    parse_timestamp,
    read_timestamp,
)
from autograder.course.layout import CourseError

UTC = timezone.utc
DUE = datetime(2026, 12, 1, 23, 59, tzinfo=UTC)
POLICY = LatePolicy({"01_a": DUE}, per_day=0.1, cap=0.5)


@pytest.mark.parametrize("late,days", [
    (timedelta(0), 0), (-timedelta(hours=5), 0), (timedelta(seconds=1), 1), (timedelta(days=1), 1),
    (timedelta(days=1, seconds=1), 2), (timedelta(days=30), 30)])
def test_one_second_late_is_one_started_day(late, days):
    assert POLICY.days_late("01_a", DUE + late) == days


def test_the_penalty_is_per_started_day_capped_and_never_more_than_the_score():
    assert POLICY.penalty("01_a", DUE + timedelta(hours=1), score=8, max_score=10) == 1.0
    assert POLICY.penalty("01_a", DUE + timedelta(days=2, hours=1), score=8, max_score=10) == 3.0
    assert POLICY.penalty("01_a", DUE + timedelta(days=9), score=8, max_score=10) == 5.0  # the cap
    assert POLICY.penalty("01_a", DUE + timedelta(days=9), score=2, max_score=10) == 2.0
    assert POLICY.penalty("01_a", None, score=8, max_score=10) == 0.0  # no time: never late
    assert POLICY.penalty("02_b", DUE + timedelta(days=9), score=8, max_score=10) == 0.0  # no due date


def test_a_students_own_due_date_replaces_the_assignments():
    extension = DUE + timedelta(days=3)
    assert POLICY.due_for("01_a", extension) == extension and POLICY.due_for("01_a") == DUE
    assert POLICY.days_late("01_a", DUE + timedelta(days=2), own=extension) == 0
    assert POLICY.days_late("01_a", extension + timedelta(minutes=1), own=extension) == 1


def test_timestamps_are_nbgraders_format_in_utc_and_read_back(tmp_path):
    when = datetime(2026, 11, 20, 12, 3, tzinfo=timezone(timedelta(hours=-5)))
    text = format_timestamp(when)
    assert text == "2026-11-20 17:03:00.000000 UTC"
    assert parse_timestamp(text) == when
    assert parse_timestamp("2026-11-20T17:03:00+00:00") == when
    assert read_timestamp(tmp_path) is None
    (tmp_path / DUE_FILE).write_text(text + "\n")
    assert read_timestamp(tmp_path, DUE_FILE) == when
    (tmp_path / "timestamp.txt").write_text("yesterday-ish")
    with pytest.raises(ValueError, match=r"timestamp.txt holds 'yesterday-ish', not a time like"):
        read_timestamp(tmp_path)
    with pytest.raises(ValueError, match="empty"):
        parse_timestamp("  ")


@pytest.mark.parametrize("settings,message", [
    ({"late_penalty_per_day": 1.5}, r"late_penalty_per_day = 1.5 .* between 0 and 1"),
    ({"late_penalty_cap": True}, r"late_penalty_cap = True"),
    ({"due": {"09_z": "2026-12-01T23:59:00+00:00"}}, r"names 09_z, not an assignment"),
    ({"due": {"01_a": "tomorrow"}}, r'"01_a" = .tomorrow. .* not an ISO 8601 date'),
    ({"due": {"01_a": 20261201}}, r"expected a string like"),
    ({"due": ["01_a"]}, r"must be a table"),
])
def test_a_wrong_policy_is_named(settings, message):
    with pytest.raises(CourseError, match=message):
        load_policy(settings, ["01_a"])


def test_the_policy_is_read_from_pyproject(tmp_path):
    assert course_policy(tmp_path, ["01_a"]) == LatePolicy()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.course]\nlate_penalty_per_day = 0.1\n[tool.course.due]\n"01_a" = 2026-12-01T23:59:00Z\n')
    policy = course_policy(tmp_path, ["01_a"])
    assert (policy.due, policy.per_day, policy.cap) == ({"01_a": DUE}, 0.1, 1.0)
    assert parse_due("01_a", "2026-12-01T23:59:00Z") == DUE

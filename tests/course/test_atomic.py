"""`atomic_write`: a reader sees the old file or the new one, never half; nothing left beside it."""

from __future__ import annotations

import os
import stat

import pytest

from autograder.course import atomic
from autograder.course.atomic import atomic_write


def test_it_writes_the_text_whole_into_new_folders_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "a" / "b" / "grades.csv"
    atomic_write(path, "id,score\r\nalice,3\n")
    assert path.read_bytes() == b"id,score\r\nalice,3\n"  # newline="": the text as given
    atomic_write(path, "id,score\nbob,4\n")
    assert path.read_text() == "id,score\nbob,4\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["grades.csv"]


def test_a_failed_write_keeps_the_old_file_and_removes_its_temporary(tmp_path, monkeypatch):
    path = tmp_path / "report.json"
    atomic_write(path, "old")

    def no_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", no_replace)
    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, "new")
    assert path.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_the_file_gets_the_umasks_mode_not_mkstemps_private_0600(tmp_path):
    """Co-instructors read grades.csv: mkstemp makes 0600, the write gives the process's usual mode."""
    atomic_write(tmp_path / "grades.csv", "x")
    assert stat.S_IMODE((tmp_path / "grades.csv").stat().st_mode) == 0o666 & ~atomic._UMASK

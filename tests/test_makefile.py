"""The Makefile's install step: what makes `make` reinstall the environment, and what does not."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def checkout(tmp_path):
    """The Makefile and pyproject.toml, with a stand-in .venv whose python logs what it is asked."""
    if shutil.which("make") is None:
        pytest.skip("no make on PATH")
    for name in ("Makefile", "pyproject.toml"):
        shutil.copyfile(ROOT / name, tmp_path / name)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    python = tmp_path / ".venv" / "bin" / "python"
    python.write_text('#!/bin/sh\necho "$*" >> "$(dirname "$0")/../calls.log"\n')
    python.chmod(0o755)
    return tmp_path


def installs(folder: Path) -> int:
    """`make .venv/.installed` in `folder`; how many times pip installed the course so far."""
    done = subprocess.run(["make", "--no-print-directory", ".venv/.installed"], cwd=folder,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    log = folder / ".venv" / "calls.log"
    return log.read_text().count("install --quiet --no-compile -e") if log.is_file() else 0


def edit(path: Path, old: str, new: str, at: float) -> None:
    """Replace `old` with `new` in `path` and date it `at` (no sleeping for mtimes to differ)."""
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    os.utime(path, (at, at))


def test_editing_the_calendar_reinstalls_nothing_and_a_dependency_reinstalls(checkout):
    """issue 39, 6: a new due date in [tool.course.due] reinstalled the whole environment (44 s)."""
    pyproject, start = checkout / "pyproject.toml", time.time() - 100  # every edit dated in the past
    os.utime(pyproject, (start, start))
    assert installs(checkout) == 1
    for path in (checkout / ".venv").glob(".*"):  # .installed and what it depends on
        os.utime(path, (start + 10, start + 10))
    edit(pyproject, '"01_numpy_mlp" = "2026-12-01T23:59:00+00:00"',
         '"01_numpy_mlp" = "2026-12-02T23:59:00+00:00"', start + 20)
    edit(pyproject, 'branch = "main"', 'branch = "fall"', start + 20)
    assert installs(checkout) == 1
    assert installs(checkout) == 1  # and again: still nothing to install
    edit(pyproject, '[project]\n', '[project]\n# a comment pip reads past\n', start + 30)
    assert installs(checkout) == 2

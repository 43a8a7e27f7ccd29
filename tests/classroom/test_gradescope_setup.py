"""Gradescope's setup.sh ends by importing what grading imports: torch and torchvision together,
the course's helpers and grader (issue 19: a mismatched pair passed setup and failed at grading)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from autograder.course.settings import REPO_ROOT

SETUP = REPO_ROOT / "autograder" / "classroom" / "gradescope" / "setup.sh"


def final_check() -> str:
    """The Python code of setup.sh's last command, `"$VENV/bin/python" -c "..."`."""
    last = [line for line in SETUP.read_text().splitlines() if line.strip()][-1]
    assert last.startswith('"$VENV/bin/python" -c "') and last.endswith('"'), last
    return last[len('"$VENV/bin/python" -c "'):-1]


def run_check(tmp_path: Path, first_on_path: Path | None = None) -> subprocess.CompletedProcess:
    path = [str(first_on_path)] if first_on_path else []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*path, str(REPO_ROOT)]))
    return subprocess.run([sys.executable, "-c", final_check()], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_setup_ends_by_importing_torch_torchvision_and_the_course(tmp_path):
    done = run_check(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "setup: torch" in done.stdout and "torchvision" in done.stdout


def test_setup_fails_on_a_torchvision_that_does_not_match_torch(tmp_path):
    """A torchvision built for another torch: its import raises (here a stand-in that does)."""
    stub = tmp_path / "stub" / "torchvision"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text(
        'raise RuntimeError("operator torchvision::nms does not exist")\n')
    done = run_check(tmp_path, stub.parent)
    assert done.returncode != 0 and "torchvision::nms does not exist" in done.stderr

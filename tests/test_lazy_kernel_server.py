"""The test run's shared kernel server starts with the first kernel asked for (tests/conftest.py,
tests/lazy_kernel_server.py): a test file that grades nothing never pays for its preloading."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest
from conftest import lazy_kernel_server

from autograder.batch.grade import grade
from autograder.engine.kernel_server import SHARED

TESTS = Path(__file__).parent
SERVE = ["-I", "-m", "autograder.engine.kernel_server", "serve"]  # the server's command after python
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="kernels are forked from the server")


def _servers(pid: int) -> list[str]:
    """The kernel servers (`kernel_server serve`) under process `pid`."""
    found = []
    for process in psutil.Process(pid).children(recursive=True):
        try:
            command = process.cmdline()
        except psutil.Error:
            continue
        if command[1:5] == SERVE:
            found.append(" ".join(command))
    return found


def test_a_test_file_that_grades_nothing_starts_no_kernel_server(tmp_path):
    """pytest on a file that grades nothing, in a process of its own: no kernel server runs under
    it while its tests run (before: one per test process, whatever ran: about 5 CPU-seconds)."""
    plugin = tmp_path / "server_watch.py"
    plugin.write_text(textwrap.dedent("""
        import os
        import psutil

        seen = []

        def pytest_runtest_call(item):
            for p in psutil.Process(os.getpid()).children(recursive=True):
                try:
                    command = p.cmdline()
                except psutil.Error:
                    continue
                if command[1:5] == ["-I", "-m", "autograder.engine.kernel_server", "serve"]:
                    seen.append(" ".join(command))

        def pytest_sessionfinish(session):
            print(f"kernel servers seen: {len(seen)}")
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    env.pop(SHARED, None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "server_watch", "-p", "no:cacheprovider",
         "-p", "no:xdist", str(TESTS / "course" / "test_safe_text.py")],
        capture_output=True, text=True, env=env, cwd=TESTS.parent, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kernel servers seen: 0" in done.stdout, done.stdout


@pytest.mark.slow
def test_the_first_kernel_starts_the_shared_server_and_later_ones_reuse_it(released_course, tmp_path,
                                                                          monkeypatch):
    with lazy_kernel_server() as (relay, shared):
        assert shared, "the relay did not listen"
        assert _servers(relay.pid) == []  # nothing preloaded yet
        monkeypatch.setenv(SHARED, shared)
        submitted = tmp_path / "in"
        for who in ("alice", "bob"):
            (submitted / who / "00_fixture").mkdir(parents=True)
            (submitted / who / "00_fixture" / "00_fixture.ipynb").write_bytes(
                released_course.source_notebook("00_fixture").read_bytes())
        rows = grade(released_course, submitted, tmp_path / "out", n_jobs=2)
        assert [(r["student_id"], r["score"]) for r in rows] == [("alice", "6"), ("bob", "6")]
        first = _servers(relay.pid)
        assert len(first) == 1, first  # started for the first kernel, still there for the next
        rows = grade(released_course, submitted, tmp_path / "again", n_jobs=1)
        assert [r["score"] for r in rows] == ["6", "6"]
        assert _servers(relay.pid) == first
    assert not psutil.pid_exists(relay.pid) or psutil.Process(relay.pid).status() == psutil.STATUS_ZOMBIE

"""One grading session for check and grade (autograder/batch/session.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.authoring import check
from autograder.batch import grade, session
from autograder.course.layout import Course
from autograder.engine import cgroups, execute, privsep, sandbox


def test_kernels_never_see_the_course_the_checkout_home_or_the_output(tmp_path):
    import helpers.reference
    from autograder.course.settings import REPO_ROOT

    hidden = execute.hidden_paths(tmp_path, tmp_path / "out")
    for path in (tmp_path, tmp_path / "out", REPO_ROOT, Path.home(),
                 Path(helpers.reference.__file__).parent):
        assert str(path.resolve()) in hidden


def test_check_and_grade_run_in_the_same_session_class():
    assert check.GradingSession is grade.GradingSession is session.GradingSession


def test_a_session_says_once_what_it_cannot_do_and_cleans_up(fixture_course: Course, monkeypatch):
    monkeypatch.setattr(sandbox, "problems", lambda: ["grading kernels can reach the network (test)"])
    monkeypatch.setattr(cgroups, "problem", lambda: None)
    lines = []
    with session.GradingSession(fixture_course, "check", warm_kernels=False, hidden=[fixture_course.root / "x"],
                                warn=lines.append) as run:
        assert run.dir.is_dir() and str(run.dir.resolve()) in run.hide
        assert str(fixture_course.root.resolve()) in run.hide
        assert run.kernel_server is None
        folder = run.dir
    assert not folder.exists()
    assert lines == ["grading kernels can reach the network (test)"]


def test_without_isolation_a_session_refuses_unless_trusted(fixture_course: Course, monkeypatch):
    """Never the open mode unasked: where kernels would get neither namespaces nor a user of their own,
    grade's session refuses before it starts anything; check's (trusted: the course's own files)
    runs them unsandboxed, says so, and asks for it only inside its block."""
    monkeypatch.setenv(privsep.NO_NAMESPACES_SETTING, "1")
    monkeypatch.delenv(privsep.USER_SETTING, raising=False)
    monkeypatch.delenv(privsep.UNSANDBOXED_SETTING, raising=False)
    with pytest.raises(privsep.Refusal, match=f"unsandboxed.*{privsep.USER_SETTING}.*{privsep.UNSANDBOXED_SETTING}=1"):
        with session.GradingSession(fixture_course, "grade", warm_kernels=False, warn=lambda line: None):
            pytest.fail("the session started")
    lines = []
    with session.GradingSession(fixture_course, "check", warm_kernels=False, warn=lines.append, trusted=True):
        assert os.environ[privsep.UNSANDBOXED_SETTING] == "1"  # the workers and the kernels inherit it
    assert privsep.UNSANDBOXED_SETTING not in os.environ
    assert any("kernels run unsandboxed" in line for line in lines), lines
    monkeypatch.setenv(privsep.USER_SETTING, "agk-kernel")  # a user to run them as: the kernel decides
    assert privsep.open_refusal() is None


@pytest.mark.parametrize("module", [check, grade])
def test_check_and_grade_select_assignments_the_same_way(module):
    import argparse

    parser = argparse.ArgumentParser()
    module.configure(parser)
    args = ["--assignment", "b", "-a", "a"] + (["SUBMITTED"] if module is grade else [])
    parsed = parser.parse_args(args)
    course = type("FakeCourse", (), {"select": lambda self, wanted: wanted})()
    from autograder.course.layout import selected

    assert selected(parsed, course) == ["b", "a"]


def test_a_job_folder_that_will_not_go_away_at_once_fails_nothing(tmp_path, monkeypatch):
    """A file that appears while a job's folder is removed (seen at load 8: SQLite's journal)
    must not turn the job into "could not be graded"."""
    import errno
    import shutil

    from autograder.engine import job as engine

    real, calls = shutil.rmtree, []

    def racing(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            raise OSError(errno.ENOTEMPTY, "Directory not empty", path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(engine.shutil, "rmtree", racing)
    with engine.scratch_folder(tmp_path, prefix="job-") as folder:
        (Path(folder) / "gradebook.db").write_text("")
    assert len(calls) == 2 and not Path(folder).exists()

    def never(path, *args, **kwargs):
        raise OSError(errno.ENOTEMPTY, "Directory not empty", path)

    monkeypatch.setattr(engine.shutil, "rmtree", never)
    monkeypatch.setattr(engine.time, "sleep", lambda seconds: None)
    with engine.scratch_folder(tmp_path) as folder:
        pass
    assert Path(folder).exists()  # left for the session's own folder, which goes at its end


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the kernel server forks")
def test_sessions_share_the_server_a_caller_started_while_their_kernels_get_its_environment(
        fixture_course: Course, monkeypatch):
    """A test run starts one kernel server per worker (tests/conftest.py) and every session
    forks its kernels from it; a session whose kernels would get another environment starts its
    own, so no kernel ever runs with a variable its session did not give it."""
    from autograder.engine.kernel_server import SHARED, KernelServer

    monkeypatch.setattr(cgroups, "problem", lambda: None)
    with KernelServer(enabled=True) as shared:
        monkeypatch.setenv(SHARED, shared.shared)
        with session.GradingSession(fixture_course, "check", warn=lambda line: None) as run:
            assert run.kernel_server == shared.socket
        assert shared._process.poll() is None  # the session left it running for the next one
        with KernelServer(enabled=True) as unasked:  # taking it is the caller's choice
            assert unasked.socket not in (None, shared.socket)
        monkeypatch.setenv("PYTORCH_COURSE_OFFLINE", "another value")  # a variable kernels keep
        with session.GradingSession(fixture_course, "check", warn=lambda line: None) as run:
            assert run.kernel_server not in (None, shared.socket)

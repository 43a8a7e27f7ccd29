"""Privilege separation (autograder/engine/privsep.py): a kernel without namespaces runs as a user
of its own, refuses where that user could read what grading hides, and leaves nothing running.

Most tests need root (they make a throwaway user and become it in a forked child); each skips
with the reason where that cannot be had.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from autograder.engine import privsep
from autograder.engine.sandbox import Plan

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT or not shutil.which("useradd"),
                                reason="needs root and useradd: it makes a throwaway user")


@pytest.fixture(scope="module")
def user():
    name = f"agk-u{os.getpid() % 100000}"
    subprocess.run(["useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                    "--shell", "/usr/sbin/nologin", name], check=True)
    try:
        yield privsep.kernel_user(name)
    finally:
        try:
            privsep.end_processes(privsep.kernel_user(name))
        finally:
            subprocess.run(["userdel", name], check=False)


@pytest.fixture
def tree():
    """A grader's tree under /tmp (pytest's folders are closed to other users): a hidden course
    folder, 0700 as grade makes it with umask 077, holding a job folder and a secret."""
    base = Path(tempfile.mkdtemp(prefix="agps-", dir="/tmp"))
    os.chmod(base, 0o755)
    course = base / "course"
    job = course / "build" / "job"
    job.mkdir(parents=True)
    (job / "inputs.npz").write_text("the job's own inputs")
    (course / "grading").mkdir()
    (course / "grading" / "probe.py").write_text("SECRET = 1\n")
    for path in (course, course / "build", job, course / "grading"):
        os.chmod(path, 0o700)
    os.chmod(job / "inputs.npz", 0o600)
    os.chmod(course / "grading" / "probe.py", 0o600)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def in_child(action) -> dict:
    """Run `action()` (returns a dict) in a forked child; its answer, with its exit code and stderr."""
    read, write = os.pipe()
    err_read, err_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (child)
        os.close(read)
        os.dup2(err_write, 2)
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115 (the child's until it exits)
        code = 0
        try:
            answer = action()
        except BaseException as error:  # noqa: BLE001 (reported to the parent)
            answer, code = {"error": f"{type(error).__name__}: {error}"}, 1
        os.write(write, json.dumps(answer).encode())
        os._exit(code)
    os.close(write)
    os.close(err_write)
    with os.fdopen(read) as f:
        text = f.read()
    with os.fdopen(err_read) as f:
        stderr = f.read()
    _, status = os.waitpid(pid, 0)
    return {**(json.loads(text) if text else {}), "code": os.waitstatus_to_exitcode(status), "stderr": stderr}


def plan_for(tree: Path) -> Plan:
    return Plan(hide=(str(tree / "course"),), job=str(tree / "course" / "build" / "job"), needed=())


@needs_root
def test_the_kernel_runs_as_its_user_reaches_its_job_folder_and_nothing_hidden(tree, user):
    def kernel() -> dict:
        home = privsep.separate(plan_for(tree), user)
        seen = {}
        for path in (tree / "course", tree / "course" / "grading", tree / "course" / "grading" / "probe.py"):
            try:
                seen[str(path)] = os.listdir(path) if path.is_dir() else path.read_text()
            except OSError as error:
                seen[str(path)] = type(error).__name__
        with open(os.path.join(home, "written"), "w") as f:  # its HOME is its own
            f.write("x")
        return {"uid": os.getuid(), "euid": os.geteuid(), "groups": os.getgroups(), "cwd": os.getcwd(),
                "inputs": Path("inputs.npz").read_text(), "seen": seen, "home_owner": os.stat(home).st_uid}

    got = in_child(kernel)
    assert got["code"] == 0, got
    assert (got["uid"], got["euid"], got["groups"]) == (user.uid, user.uid, [])
    assert got["cwd"] == str(tree / "course" / "build" / "job") and got["inputs"] == "the job's own inputs"
    assert got["home_owner"] == user.uid
    assert set(got["seen"].values()) == {"PermissionError"}, got["seen"]
    privsep.remove_leftovers(user)


@needs_root
def test_a_secret_the_kernels_user_could_read_makes_it_refuse(tree, user):
    """The grading folder left readable (0755, its file 0644): the user, once it passes the course
    folder to reach its job, could read it. The kernel refuses and names it."""
    os.chmod(tree / "course" / "grading", 0o755)
    os.chmod(tree / "course" / "grading" / "probe.py", 0o644)
    got = in_child(lambda: {"home": privsep.separate(plan_for(tree), user)})
    assert got["code"] == 1 and "Refusal" in got["error"], got
    assert str(tree / "course" / "grading") in got["error"]
    privsep.remove_leftovers(user)


@needs_root
def test_a_named_user_that_does_not_exist_refuses_never_runs_open(tree):
    env = {privsep.NO_NAMESPACES_SETTING: "1", privsep.USER_SETTING: "agk-no-such-user"}
    got = in_child(lambda: {"returned": privsep.isolate(plan_for(tree), env)})
    assert got["code"] == privsep.REFUSED and "returned" not in got, got
    assert "the kernel refused to run" in got["stderr"] and "no user 'agk-no-such-user'" in got["stderr"]


def test_no_user_named_and_nothing_asked_refuses_never_runs_open(tree):
    """No namespaces and no AUTOGRADER_KERNEL_USER: before, the kernel ran as the grader and read
    what grading hides; now it refuses unless AUTOGRADER_UNSANDBOXED asks for exactly that."""
    env = {privsep.NO_NAMESPACES_SETTING: "1"}
    got = in_child(lambda: {"returned": privsep.isolate(plan_for(tree), env)})
    assert got["code"] == privsep.REFUSED and "returned" not in got, got
    assert "the kernel refused to run" in got["stderr"] and privsep.UNSANDBOXED_SETTING in got["stderr"]
    asked = in_child(lambda: {"returned": privsep.isolate(plan_for(tree), {**env, privsep.UNSANDBOXED_SETTING: "1"})})
    assert asked["code"] == 0 and "runs unsandboxed" in asked["returned"][0][0], asked


def test_without_root_there_is_no_kernel_user(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(privsep.Refusal, match="does not run as root"):
        privsep.kernel_user("nobody")


def test_the_switch_acts_as_a_machine_without_namespaces():
    assert privsep.namespaces_missing({privsep.NO_NAMESPACES_SETTING: "1"}) == (
        f"namespaces are off ({privsep.NO_NAMESPACES_SETTING}=1)")
    assert not privsep.namespaces_off({privsep.NO_NAMESPACES_SETTING: "0"})


DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(1, (str(os.getpid()) + "\\n").encode())
        os.close(1)
        os.close(2)
        time.sleep(120)
    os._exit(0)
os.wait()
"""
PYTHON_FOR_OTHERS = "/usr/bin/python3"  # this test's interpreter may live under /root, closed to the user


@needs_root
@pytest.mark.skipif(not os.path.exists(PYTHON_FOR_OTHERS), reason=f"needs {PYTHON_FOR_OTHERS}")
def test_end_processes_kills_a_daemon_in_a_session_of_its_own_and_waits(user):
    started = subprocess.run([PYTHON_FOR_OTHERS, "-I", "-c", DAEMON], user=user.uid, group=user.gid,
                             extra_groups=[], capture_output=True, text=True, timeout=60, cwd="/")
    daemon = int(started.stdout.split()[0])
    assert privsep.processes_of(user.uid) == [daemon]
    assert privsep.end_processes(user) == []
    assert privsep.processes_of(user.uid) == []
    try:
        with open(f"/proc/{daemon}/status") as f:  # a zombie at most, until its reaper reaps it
            assert "zombie" in f.read()
    except FileNotFoundError:
        pass


@needs_root
def test_end_processes_with_nothing_running_returns_at_once(user):
    start = time.monotonic()
    assert privsep.end_processes(user) == []
    assert time.monotonic() - start < 5

"""Shared fixtures: a private copy of the fixture course (tests/fixtures/course)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest

from autograder.batch.threads import NEVER_SPIN, THREAD_VARIABLES
from autograder.course.layout import Course

FIXTURE_COURSE = Path(__file__).parent / "fixtures" / "course"

# Tests run in parallel workers (the Makefile's PYTEST_JOBS), and each grading session starts
# kernels of its own: one BLAS/OpenMP thread per process, or the threads of several processes
# spin against each other on a small machine (measured here at load 7: 07's mutant probes took
# 333 s with torch's default two threads, 58 s with one). Set before anything imports torch; a
# value exported by whoever runs the tests wins.
for _name in THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")
for _name, _value in NEVER_SPIN.items():  # as every grading session sets them (batch/threads.py): the
    os.environ.setdefault(_name, _value)  # shared kernel server's environment is then the sessions'

# Grading shells out (kernels, nbgrader); both must find this environment's tools.
os.environ["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
os.environ.setdefault("MPLBACKEND", "Agg")


def _no_sandbox_here() -> bool:
    from autograder.engine import sandbox

    return not sandbox.sandboxed()


# Where this machine gives kernels no sandbox at all (no user namespaces), grading refuses to run
# them unasked (privsep.open_refusal); the suite grades its own fixtures there unsandboxed, as check
# does the course's files, and the sandbox's own tests skip with the reason.
if os.environ.get("AUTOGRADER_UNSANDBOXED") is None and _no_sandbox_here():
    os.environ["AUTOGRADER_UNSANDBOXED"] = "1"


def copy_fixture_course(dest: Path) -> Course:
    """A writable copy of the fixture course at `dest` (release and check write into it)."""
    shutil.copytree(FIXTURE_COURSE, dest, ignore=shutil.ignore_patterns("build", "release"))
    return Course(dest.resolve())


def feedback_page(grades_dir: Path, course: Course, student_id: str, assignment: str) -> str:
    """One graded student's feedback page, made as `python -m autograder feedback` makes it
    (grade makes none); the test fails with the reason when it cannot be made."""
    from autograder.classroom.feedback import make_pages, page_path
    from autograder.classroom.results import read_results

    results, _ = read_results(grades_dir, course, [assignment])
    mine = [r for r in results if r.student_id == student_id and r.status == "graded"]
    assert mine, f"{student_id}/{assignment} was not graded"
    assert make_pages(grades_dir, course, mine, warn=lambda line: None) == []
    return page_path(grades_dir, student_id, assignment).read_text(encoding="utf-8")


LAZY_SERVER = Path(__file__).parent / "lazy_kernel_server.py"


@contextmanager
def lazy_kernel_server():
    """A kernel server that starts when a kernel is first asked for (tests/lazy_kernel_server.py
    listens in its place meanwhile): yields the relay's process and the value of
    kernel_server.SHARED that names it, or (None, None) where kernels are not forked here."""
    from autograder.engine.kernel_server import KernelServer, _digest, server_environment

    if not KernelServer().enabled:  # AUTOGRADER_WARM_KERNELS=0, or no fork here
        yield None, None
        return
    env = server_environment()
    folder = Path(tempfile.mkdtemp(prefix="agk-", dir="/tmp" if os.path.isdir("/tmp") else None))
    socket, real = folder / "s", folder / "r"  # short: Unix socket paths stop at ~100 bytes
    relay = subprocess.Popen(
        [sys.executable, "-I", "-S", str(LAZY_SERVER), str(socket), "--",
         sys.executable, "-I", "-m", "autograder.engine.kernel_server", "serve", str(real)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    try:
        listening = relay.stdout.readline().strip() == "listening"
        yield relay, f"{_digest(env)}:{socket}" if listening else None
    finally:
        relay.terminate()
        try:
            relay.wait(timeout=15)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()
        relay.stdin.close()
        relay.stdout.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def one_kernel_server_per_worker():
    """One warm kernel server for all the grading sessions of this test process (and of the
    commands its tests start): each session would otherwise start its own and preload torch again,
    about 5 CPU-seconds, and the suite starts a hundred. A session whose kernels would get another
    environment (a test that sets a variable kernels keep) starts its own (kernel_server.SHARED).
    It starts with the first kernel asked for: a worker whose tests grade nothing never pays for
    its preloading (lazy_kernel_server)."""
    from autograder.engine.kernel_server import SHARED

    with lazy_kernel_server() as (relay, shared):
        if shared:
            os.environ[SHARED] = shared
        try:
            yield relay
        finally:
            os.environ.pop(SHARED, None)


@pytest.fixture
def fixture_course(tmp_path) -> Course:
    """A fresh copy of the fixture course, not yet released."""
    return copy_fixture_course(tmp_path / "course")


@pytest.fixture
def outside_tmp():
    """A folder a grading kernel can read: outside /tmp, which is each kernel's own."""
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    folder = Path(tempfile.mkdtemp(prefix="autograder-test-", dir=base or Path.cwd()))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def released_course(tmp_path_factory) -> Course:
    """A copy of the fixture course with release/ generated; shared, so treat it as read-only."""
    from autograder.authoring.student_release import release

    course = copy_fixture_course(tmp_path_factory.mktemp("released") / "course")
    release(course)
    return course


# Scheduling under pytest-xdist (the Makefile's PYTEST_JOBS: `--dist loadfile
# --no-loadscope-reorder`): each test file runs whole in one worker (its module fixtures built
# once), and the files queue in this order, the longest first, so that no long file starts last.
LONGEST_FIRST = ("test_pipeline", "test_grading_folders", "test_tampering", "test_student_path", "test_rehearsal",
                 "test_sandbox_attacks", "test_gradescope",
                 "test_journal", "test_grade", "test_lecture_notebooks", "test_execute", "test_digits_judge")


def _module(item) -> str:
    return item.module.__name__.rsplit(".", 1)[-1] if getattr(item, "module", None) else item.nodeid


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(_module(item), len(rank)))

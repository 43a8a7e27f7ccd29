"""Gradescope without namespaces (issue 37, finding 7): kernels run as a user of their own, or
results.json refuses; never the open mode.

Its containers may forbid namespaces. AUTOGRADER_NO_NAMESPACES=1 (autograder/engine/privsep.py)
acts so here: no kernel enters the namespace sandbox; and run_autograder runs in a mount namespace
without /sys/fs/cgroup, so no kernel gets a cgroup that would end its daemons. The layout is Gradescope's /autograder, in a
folder of /tmp that an unprivileged user can pass (pytest's own folders are 0700), with a virtual
environment of the system's Python (this one's may live under /root, closed to that user) that
sees the test environment's packages and holds the course's wheel, as setup.sh installs it; then
setup.sh's step `python -m autograder.classroom.gradescope.kernel_user` with a throwaway user.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.classroom.gradescope import build_zip, unpack
from autograder.classroom.gradescope.kernel_user import make_user
from autograder.classroom.gradescope.results import validate
from autograder.course import exercises
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine import privsep

ASSIGNMENT = "03_custom_functions"
COURSE = Course(REPO_ROOT)
SOURCE_NB = read_notebook(COURSE.source_notebook(ASSIGNMENT))
FULL_MARKS = exercises.read(SOURCE_NB).max_score  # 40: the daemon's 14 is no one's honest score
FORGED = 14.0


def _python_for_others() -> str | None:
    """An interpreter of this Python's version that an unprivileged user can run (nobody tries)."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (os.path.realpath(getattr(sys, "_base_executable", sys.executable)),
                      f"/usr/bin/python{version}"):
        try:
            done = subprocess.run([candidate, "-I", "-c", "import sys; print(sys.version_info[:2])"],
                                  user=65534, group=65534, extra_groups=[], capture_output=True,
                                  text=True, timeout=60, cwd="/")
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.strip() == str(sys.version_info[:2]):
            return candidate
    return None


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root: it makes a throwaway user and runs kernels as it"
    if not shutil.which("useradd") or not shutil.which("userdel"):
        return "needs useradd and userdel"
    if not shutil.which("unshare"):
        return "needs unshare (util-linux) to take the cgroups away, as Gradescope's container does"
    if not os.path.isdir("/tmp"):
        return "needs /tmp"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]


class Machine:
    """A Gradescope container's /autograder at `root`, the kernel's user `user`."""

    def __init__(self, base: Path, root: Path, user: str):
        self.base, self.root, self.user = base, root, user
        self.markers = base / "markers"  # where the attack leaves its benign markers

    def run(self, notebook: Path, user: str | None = None) -> tuple[subprocess.CompletedProcess, dict, float]:
        """run_autograder on `notebook`, as Gradescope runs it, namespaces off; (the process,
        results.json, when the test first saw results.json)."""
        submission, results = self.root / "submission", self.root / "results" / "results.json"
        shutil.rmtree(submission, ignore_errors=True)
        submission.mkdir()
        shutil.copyfile(notebook, submission / f"{ASSIGNMENT}.ipynb")
        results.unlink(missing_ok=True)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(AUTOGRADER_GRADESCOPE_ROOT=str(self.root),
                   AUTOGRADER_GRADESCOPE_PYTHON=str(self.root / "venv" / "bin" / "python"),
                   **{privsep.USER_SETTING: user or self.user, privsep.NO_NAMESPACES_SETTING: "1"})
        # A mount namespace of its own without /sys/fs/cgroup: no cgroup either, as in a container.
        command = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                   'umount -R /sys/fs/cgroup 2>/dev/null || umount -l /sys/fs/cgroup 2>/dev/null; exec "$0"',
                   str(self.root / "source" / "run_autograder")]
        process = subprocess.Popen(command, env=env, cwd=self.base,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = None
        out: list[str] = []
        reader = _drain(process, out)
        deadline = time.monotonic() + 900
        while process.poll() is None and time.monotonic() < deadline:
            if seen is None and results.exists():
                seen = time.time()  # no later than results.json was written
            time.sleep(0.005)
        if process.poll() is None:
            process.kill()
        process.wait()
        reader.join(timeout=10)  # a daemon that kept run_autograder's stdout keeps the pipe open
        if seen is None and results.exists():
            seen = time.time()
        done = subprocess.CompletedProcess(process.args, process.returncode, "".join(out), "")
        return done, json.loads(results.read_text()), seen or 0.0


def _drain(process: subprocess.Popen, out: list[str]):
    import threading

    thread = threading.Thread(target=lambda: out.append(process.stdout.read()), daemon=True)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    python = _python_for_others()
    if python is None:
        pytest.skip("no interpreter of this Python's version that an unprivileged user can run")
    name = f"agk-t{os.getpid() % 100000}"
    make_user(name)  # setup.sh's own code
    base = Path(tempfile.mkdtemp(prefix="agsgs-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        (base / "markers").mkdir()
        os.chmod(base / "markers", 0o777)
        root = base / "autograder"
        unpack(build_zip(COURSE, ASSIGNMENT, tmp_path_factory.mktemp("zip")), root / "source")
        # setup.sh's virtual environment: this one's packages seen through a .pth, the wheel installed.
        subprocess.run([python, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
        version = f"python{sys.version_info.major}.{sys.version_info.minor}"
        site = root / "venv" / "lib" / version / "site-packages"
        (site / "_test_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
        (wheel,) = (root / "source" / "dist").glob("pytorch_course-*.whl")
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
        shutil.rmtree(root / "source" / "dist")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        # In the Gradescope tree, not here: `python -m` puts its working folder first on the path, and from this
        # checkout it would find (and close to everyone) this checkout's helpers/reference.
        subprocess.run([str(root / "venv" / "bin" / "python"), "-m", "autograder.classroom.gradescope.kernel_user",
                        "--root", str(root), "--user", name], check=True, env=env, cwd=base)
        yield Machine(base, root, name)
    finally:
        try:
            privsep.end_processes(privsep.kernel_user(name))
        finally:
            subprocess.run(["userdel", name], check=False)
            shutil.rmtree(base, ignore_errors=True)


def attack(grading: str, source: str, markers: str, results: str, forged: float) -> None:
    """A student's cell, after the answers. (a) It reads the references, the grading folder and
    the source notebook: what it could read breaks `sigmoid` (so both the notebook's tests and the
    trusted run lose points). (b) It leaves a daemon (double fork, a session of its own) that beats every 20 ms
    into markers/ and, once it can, rewrites results.json with `forged` points and ends."""
    import json
    import os
    import time

    import helpers

    read = []
    try:  # an unreadable folder still imports as an empty namespace package: ask for an answer
        from helpers.reference import custom_functions

        read.append(f"helpers.reference.custom_functions: {sorted(vars(custom_functions))[:5]}")
    except Exception:
        pass
    for path in (grading, source, os.path.join(helpers.__path__[0], "reference")):
        try:
            read.append(f"{path}: {sorted(os.listdir(path))}")
        except OSError:
            pass
    with open(os.path.join(markers, "read.json"), "w") as f:
        json.dump(read, f)
    if read:
        globals()["sigmoid"] = lambda x: x * 0
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(os.path.join(markers, "daemon.pid"), "w") as f:
                f.write(str(os.getpid()))
            end = time.time() + 120
            rewritten = False
            while time.time() < end and not rewritten:
                try:
                    with open(results) as f:
                        if json.load(f).get("score") != forged:
                            with open(results, "w") as f:
                                json.dump({"score": forged, "output": "rewritten by a daemon", "tests": []}, f)
                            rewritten = True
                except (OSError, ValueError):
                    pass
                with open(os.path.join(markers, "beat.partial"), "w") as f:
                    f.write(repr(time.time()))
                os.replace(os.path.join(markers, "beat.partial"), os.path.join(markers, "beat"))
                time.sleep(0.02)
        os._exit(0)
    os.wait()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            state = next(line for line in f if line.startswith("State:"))
    except (OSError, StopIteration):
        return False
    return not state.split()[1].startswith(("Z", "X"))


def test_a_kernel_without_namespaces_reads_no_answer_and_leaves_no_daemon(machine, tmp_path):
    course = machine.root / "source" / "course"
    nb = read_notebook(COURSE.source_notebook(ASSIGNMENT))
    call = (f"attack({str(course / 'grading' / ASSIGNMENT)!r}, {str(course / 'source' / ASSIGNMENT)!r}, "
            f"{str(machine.markers)!r}, {str(machine.root / 'results' / 'results.json')!r}, {FORGED!r})")
    nb.cells.append(nbformat.v4.new_code_cell(inspect.getsource(attack) + "\n\n" + call))
    nbformat.write(nb, tmp_path / "attacking.ipynb")
    done, results, seen = machine.run(tmp_path / "attacking.ipynb")
    assert done.returncode == 0, done.stdout[-4000:]
    assert (machine.markers / "daemon.pid").exists(), f"the attack did not run: {results['output']}\n{done.stdout[-4000:]}"
    pid = int((machine.markers / "daemon.pid").read_text())
    alive_at_return = _alive(pid)
    for _ in range(300):  # an open grader's daemon rewrites results.json now: give it the time to
        if not _alive(pid):
            break
        time.sleep(0.01)
    results = json.loads((machine.root / "results" / "results.json").read_text())
    validate(results)
    read = json.loads((machine.markers / "read.json").read_text())
    last_beat = float((machine.markers / "beat").read_text())
    broken = [*([f"the kernel read {read}"] if read else []),
              *([f"results.json says {results['score']:g} points ({results['output'][:200]!r}), the "
                 f"solution's are {FULL_MARKS:g}"] if results["score"] != FULL_MARKS else []),
              *(["a daemon of the kernel outlived run_autograder"] if alive_at_return else []),
              *(["a daemon of the kernel still ran when results.json was written"] if last_beat >= seen else [])]
    assert not broken, "; ".join(broken)
    assert "runs as" in done.stdout or machine.user in done.stdout


def test_without_a_user_to_run_kernels_as_results_json_refuses_and_says_why(machine, tmp_path):
    nbformat.write(read_notebook(COURSE.source_notebook(ASSIGNMENT)), tmp_path / "solution.ipynb")
    done, results, _ = machine.run(tmp_path / "solution.ipynb", user="agk-no-such-user")
    assert done.returncode == 0, done.stdout[-4000:]
    validate(results)
    assert results["score"] == 0 and all(t.get("score", 0) == 0 for t in results["tests"])
    assert "refused" in results["output"] and "no user 'agk-no-such-user'" in results["output"]
    assert "$ " not in done.stdout, "grade ran"  # run_grade prints its command line first

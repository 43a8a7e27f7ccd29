"""Grading as a plain user works and leaves nothing behind (finding 8 of issue 37).

Run by a user who is not root, every row once ended "internal error: PermissionError ...
autograded/.../05_optim.ipynb" (nbgrader writes those files 0444), and a kernel left 101 MB in
agk-ipc-* folders of the machine's temporary folder that its grader could not remove. Here a
throwaway unprivileged user (made with useradd when the tests run as root, removed after) grades
two fixture submissions with `python -m autograder grade`: one right, one whose kernel tries to
leave files in its socket folder, /tmp and /dev/shm. Both rows must be graded and nothing of the
user's may be left in the machine's /tmp or /dev/shm.

The environment's interpreter may lie in a folder that user cannot enter (here /root/.pyenv, under
a 0700 /root): the user's grader then runs in a mount namespace of its own where that one folder
is an empty tmpfs holding only the interpreter's folder, as an instructor's Python is readable by
the instructor. Nothing else of the machine changes.
"""

from __future__ import annotations

import copy
import csv
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

from autograder.course.notebooks import read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine import sandbox
from tests.conftest import copy_fixture_course

pytestmark = pytest.mark.slow
TOKEN = secrets.token_hex(4)
LITTER = f"""import os
for folder in ("/tmp", "/dev/shm", os.path.dirname(__import__("ipykernel").get_connection_file())):
    try:
        with open(os.path.join(folder, "agk-litter-{TOKEN}"), "wb") as f:
            f.write(b"0" * (1 << 20))
    except OSError:
        pass"""


def throwaway_user():
    """(name, uid, gid) of a new unprivileged user, or pytest.skip with the reason."""
    if os.geteuid() != 0:
        entry = pwd.getpwuid(os.geteuid())
        return entry.pw_name, entry.pw_uid, entry.pw_gid
    if not shutil.which("useradd") or not shutil.which("setpriv"):
        pytest.skip("no useradd or setpriv to make and become a throwaway user")
    name = f"agtest{TOKEN}"
    made = subprocess.run(["useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin",
                           name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    entry = pwd.getpwnam(name)
    return name, entry.pw_uid, entry.pw_gid


def closed_to(uid: int, gid: int, path: str) -> str | None:
    """The outermost folder above `path` that uid:gid cannot enter, or None."""
    parts = Path(path).parts
    for depth in range(2, len(parts)):
        folder = os.path.join(*parts[:depth])
        info = os.stat(folder)
        bit = 0o100 if info.st_uid == uid else 0o010 if info.st_gid == gid else 0o001
        if not info.st_mode & bit:
            return folder
    return None


def as_user(uid: int, gid: int, command: list[str]) -> list[str]:
    """`command` run as uid:gid (root only: setpriv), in a mount namespace where the environment's
    interpreter can be read when a folder above it is closed to that user (see the docstring)."""
    if os.geteuid() != 0:
        return command
    become = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
              "--bounding-set=-all", "--"]
    opened = []
    for path in {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}:
        closed = closed_to(uid, gid, path)
        if closed:
            opened.append((closed, path))
    if not opened:
        return become + command
    if not shutil.which("unshare"):
        pytest.skip("the interpreter lies in a folder the throwaway user cannot enter, and no unshare")
    script = ["set -e"]
    for closed, path in opened:
        script += [f"mkdir -p /run/agtest-{TOKEN}", f"mount --bind {path} /run/agtest-{TOKEN}",
                   f"mount -t tmpfs -o mode=0755 agtest {closed}", f"mkdir -p {path}",
                   f"mount --move /run/agtest-{TOKEN} {path}"]
    script.append('exec "$@"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(script), "sh",
            *become, *command]


def litter(uid: int) -> list[str]:
    """What the user owns in the machine's temporary folders."""
    found = []
    for folder in ("/tmp", "/dev/shm"):
        for name in os.listdir(folder):
            try:
                if os.lstat(os.path.join(folder, name)).st_uid == uid:
                    found.append(os.path.join(folder, name))
            except FileNotFoundError:
                pass
    return found


@pytest.mark.skipif(any("not sandboxed" in p for p in sandbox.problems()), reason="; ".join(sandbox.problems()))
def test_a_plain_user_grades_and_leaves_nothing_behind():
    name, uid, gid = throwaway_user()
    base = Path(tempfile.mkdtemp(prefix="agtest-", dir="/var/tmp" if os.access("/var/tmp", os.W_OK) else None))
    try:
        course = copy_fixture_course(base / "course")
        source = read_notebook(course.source_notebook("00_fixture"))
        for student, code in (("alice", None), ("mallory", LITTER)):
            nb = copy.deepcopy(source)
            if code:
                nb.cells.insert(2, nbformat.v4.new_code_cell(code))
            path = base / "submitted" / student / "00_fixture" / "00_fixture.ipynb"
            path.parent.mkdir(parents=True)
            nbformat.write(nb, path)
        (base / "home").mkdir()
        for path in [base, *base.rglob("*")]:
            os.chown(path, uid, gid, follow_symlinks=False)
        os.chmod(base, 0o755)
        env = {"PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin", "/bin"]),
               "HOME": str(base / "home"), "LANG": os.environ.get("LANG", "C.UTF-8"),
               "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
        run = subprocess.run(as_user(uid, gid, [
            sys.executable, "-m", "autograder", "grade", str(base / "submitted"), "--root", str(course.root),
            "--out", str(base / "out"), "--jobs", "2", "--timeout", "60"]),
            capture_output=True, text=True, timeout=600, env=env, cwd=str(REPO_ROOT))
        assert run.returncode == 0, run.stdout + run.stderr
        with open(base / "out" / "grades.csv", newline="") as f:
            rows = {r["student_id"]: r for r in csv.DictReader(f)}
        assert {s: (r["status"], float(r["score"])) for s, r in rows.items()} == {
            "alice": ("graded", 6.0), "mallory": ("graded", 6.0)}, run.stdout + run.stderr
        unsandboxed = [line for line in (run.stdout + run.stderr).splitlines() if "not sandboxed" in line]
        if unsandboxed:  # graded, and said so: what this user's system gives is no sandbox
            pytest.skip(f"graded as {name}, whose kernels get no sandbox here: {unsandboxed[0].strip()}")
        assert litter(uid) == []
    finally:
        if os.geteuid() == 0:
            for path in litter(uid):
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else os.unlink(path)
        shutil.rmtree(base, ignore_errors=True)
        if os.geteuid() == 0 and name.startswith("agtest"):
            subprocess.run(["userdel", name], capture_output=True)

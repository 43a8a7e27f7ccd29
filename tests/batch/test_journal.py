"""An interrupted batch resumes; the same submission graded twice scores the same."""

from __future__ import annotations

import copy
import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from conftest import copy_fixture_course

from autograder.__main__ import main
from autograder.authoring.student_release import release
from autograder.batch.grade import _journaled, grade, grade_batch
from autograder.batch.journal import Journal, fingerprint, grading_code, grading_settings
from autograder.course.atomic import atomic_write
from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine.job import Failure, GradeJob, GradeResult

RIGHT = "def scale(x, factor):\n    return x * factor"


def _submit(root, who, nb):
    folder = root / who / "00_fixture"
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, folder / "00_fixture.ipynb")


def _with(nb, **sources):
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if grade_id(cell) in sources:
            cell.source = sources[grade_id(cell)]
    return nb


def _csv(out):
    return (out / "grades.csv").read_bytes()


# -- the journal on its own ------------------------------------------------------------------------

def test_the_fingerprint_changes_with_the_notebook_the_source_and_the_settings(tmp_path):
    notebook, source = tmp_path / "nb.ipynb", tmp_path / "source.ipynb"
    notebook.write_text("student")
    source.write_text("tests")
    job = GradeJob("s", "00_fixture", notebook, tmp_path, tmp_path)
    settings = grading_settings(tmp_path, 60)
    first = fingerprint(job, source, settings)
    assert fingerprint(job, source, grading_settings(tmp_path, 60)) == first  # deterministic
    assert fingerprint(job, source, grading_settings(tmp_path, 30))["digest"] != first["digest"]
    assert fingerprint(job, source, grading_settings(tmp_path, 60, False))["digest"] != first["digest"]
    source.write_text("tests, edited")
    assert fingerprint(job, source, settings)["digest"] != first["digest"]
    source.write_text("tests")
    notebook.write_text("student, edited")
    assert fingerprint(job, source, settings)["digest"] != first["digest"]


def test_the_fingerprint_holds_the_graded_courses_probes_and_the_grading_layers_only(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    for root in (first, second):
        (root / "grading" / "00_fixture").mkdir(parents=True)
        (root / "grading" / "00_fixture" / "probe.py").write_text("PROBE = 1\n")
    before = grading_settings(first, 60)
    (second / "grading" / "00_fixture" / "probe.py").write_text("PROBE = 2\n")
    assert grading_settings(first, 60) == before  # another course's probe is not this one's
    (first / "grading" / "00_fixture" / "probe.py").write_text("PROBE = 2\n")
    assert grading_settings(first, 60)["code"] != before["code"]
    names = {name for name, _ in grading_code(first)}
    assert {"autograder/engine/job.py", "autograder/engine/verify.py", "autograder/nbgrader_config.py",
            "autograder/probes/caller.py", "autograder/course/notebooks.py", "helpers/checks.py",
            "grading/00_fixture/probe.py"} <= names
    assert not {n for n in names if n.startswith(("autograder/batch/", "autograder/authoring/",
                                                  "autograder/classroom/", "autograder/__main__"))}


def test_a_record_is_reused_only_when_its_fingerprint_matches(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("x")
    job = GradeJob("s", "00_fixture", notebook, tmp_path, tmp_path)
    journal = Journal(tmp_path / "out")
    inputs = fingerprint(job, notebook, grading_settings(tmp_path, 60))
    result = GradeResult("s", "00_fixture", "submission", "error", 0.0, 6.0, reason="bad JSON")
    assert journal.write(result, inputs)
    assert journal.reusable(job, inputs) == result
    assert journal.reusable(job, dict(inputs, digest="other")) is None
    # A crash says nothing about the submission: it is graded again next time.
    crash = GradeResult("t", "00_fixture", "submission", "error", 0.0, 6.0,
                        reason="the grading process crashed (BrokenProcessPool)", failure=Failure.CRASHED)
    assert not journal.write(crash, inputs)
    assert journal.read("t", "00_fixture") is None
    # A torn or edited record is no record.
    journal.path("s", "00_fixture").write_text('{"inputs": ')
    assert journal.reusable(job, inputs) is None


def test_the_gradebook_never_takes_a_record_of_other_inputs(tmp_path):
    """A resubmission that crashed is not journaled: its row is the crash, not the old score."""
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text("first")
    job = GradeJob("s", "00_fixture", notebook, tmp_path, tmp_path)
    journal = Journal(tmp_path / "out")
    old_inputs = fingerprint(job, notebook, grading_settings(tmp_path, 60))
    journal.write(GradeResult("s", "00_fixture", "submission", "graded", 6.0, 6.0), old_inputs)
    notebook.write_text("second")
    new_inputs = fingerprint(job, notebook, grading_settings(tmp_path, 60))
    crash = GradeResult("s", "00_fixture", "submission", "error", 0.0, 6.0,
                        reason="the grading process crashed (its worker process died)",
                        failure=Failure.CRASHED)
    assert not journal.write(crash, new_inputs)
    assert _journaled(journal, crash, new_inputs) is crash
    assert _journaled(journal, crash, old_inputs).score == 6.0


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "grades.csv"
    atomic_write(target, "old\n")
    with pytest.raises(TypeError):
        atomic_write(target, object())  # fails mid-write
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["grades.csv"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600


# -- whole batches --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def notebooks(released_course):
    source = read_notebook(released_course.source_notebook("00_fixture"))
    student = read_notebook(released_course.release_notebook("00_fixture"))
    return source, student


@pytest.mark.slow
def test_a_deleted_record_is_the_only_one_graded_again_and_twice_gives_the_same(
        released_course, notebooks, tmp_path):
    source, student = notebooks
    submitted = tmp_path / "in"
    _submit(submitted, "alice", source)
    _submit(submitted, "bob", _with(student, scale=RIGHT))
    _submit(submitted, "carol", _with(student, mean_square="def mean_square(x):\n    return 5.0"))

    first = tmp_path / "first"
    graded = []
    grade(released_course, submitted, first, n_jobs=2, progress=graded.append)
    assert sorted(r.student_id for r in graded) == ["alice", "bob", "carol"]
    cells = {r["student_id"]: r["cells"] for r in json.loads((first / "grades.json").read_text())}

    journal = Journal(first)
    before = {who: journal.read(who, "00_fixture")["finished"] for who in ("alice", "carol")}
    mtimes = {who: journal.path(who, "00_fixture").stat().st_mtime_ns for who in ("alice", "carol")}
    csv_before = _csv(first)
    journal.remove("bob", "00_fixture")
    regraded = []
    batch = grade_batch(released_course, submitted, first, n_jobs=2, progress=regraded.append)
    assert [r.student_id for r in regraded] == ["bob"]
    assert (batch.report["reused"], batch.report["graded_now"]) == (2, 1)
    assert {who: journal.read(who, "00_fixture")["finished"] for who in before} == before
    assert {who: journal.path(who, "00_fixture").stat().st_mtime_ns for who in mtimes} == mtimes
    assert _csv(first) == csv_before
    assert (first / "autograded" / "bob" / "00_fixture" / "00_fixture.ipynb").is_file()
    assert not (first / "feedback").exists()  # made when asked for (`feedback`), not while grading

    # --regrade grades everything again from scratch, with the folder's secret (the probes'
    # inputs, hence their messages, follow it): the same scores and messages, cell by cell.
    again = []
    grade(released_course, submitted, first, n_jobs=2, progress=again.append, regrade=True)
    assert sorted(r.student_id for r in again) == ["alice", "bob", "carol"]
    assert _csv(first) == csv_before
    assert {r["student_id"]: r["cells"] for r in json.loads((first / "grades.json").read_text())} == cells


@pytest.mark.slow
def test_a_changed_submission_is_graded_again_the_rest_reused(released_course, notebooks,
                                                               tmp_path):
    source, student = notebooks
    submitted, out = tmp_path / "in", tmp_path / "out"
    _submit(submitted, "alice", source)
    _submit(submitted, "bob", student)
    grade(released_course, submitted, out, n_jobs=2)
    _submit(submitted, "bob", _with(student, scale=RIGHT))  # bob hands in again
    seen = []
    rows = grade(released_course, submitted, out, n_jobs=2, progress=seen.append)
    assert [r.student_id for r in seen] == ["bob"]
    assert {r["student_id"]: r["score"] for r in rows} == {"alice": "6", "bob": "3"}
    report = json.loads((out / "report.json").read_text())
    assert report["reused"] == 1 and report["graded"] == 2 and report["failed"] == []
    assert [s["student_id"] for s in report["slowest"]] == ["bob"]


@pytest.mark.slow
def test_editing_the_graded_courses_probe_regrades_its_submissions(tmp_path):
    """The journal's fingerprint holds the graded course's grading/ (--root), not this
    checkout's: a probe edited there regrades what it judged (issue 21, item 5)."""
    course = copy_fixture_course(tmp_path / "course")
    release(course)
    submitted, out = tmp_path / "in", tmp_path / "out"
    _submit(submitted, "alice", read_notebook(course.source_notebook("00_fixture")))
    command = ["--root", str(course.root), "grade", str(submitted), "--out", str(out), "--jobs", "1"]
    assert main(command) == 0
    assert _scores(out) == {"alice": "6"}
    probe = course.root / "grading" / "00_fixture" / "probe.py"
    right = 'inputs["x"] * float(inputs["factor"])}'
    assert right in probe.read_text()
    probe.write_text(probe.read_text().replace(right, 'inputs["x"] * float(inputs["factor"]) + 1}'))
    assert main(command) == 0
    assert json.loads((out / "report.json").read_text())["reused"] == 0
    assert _scores(out) == {"alice": "3"}  # scale now fails the edited probe


def _scores(out: Path) -> dict[str, str]:
    with open(out / "grades.csv", newline="") as f:
        return {row["student_id"]: row["score"] for row in csv.DictReader(f)}


def _tree_alive(pids):
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.Error:
            pass
    return alive


def _signal_state(pid: int) -> str:
    """The signal masks of process `pid` (blocked, ignored, caught), from /proc where it has them."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "(no /proc)"
    return ", ".join(line for line in status if line.startswith(("SigBlk", "SigIgn", "SigCgt", "Threads")))


def _pipes(*files) -> set[str]:
    """What /proc names these files' descriptors (`pipe:[inode]`)."""
    return {os.readlink(f"/proc/self/fd/{f.fileno()}") for f in files}


def _holding(wanted: set[str]) -> list[str]:
    """The processes that hold any of these pipes (`_pipes`) open, as `pid (parent pid) command`."""
    found = []
    for process in psutil.process_iter(["pid", "ppid", "cmdline"]):
        try:
            if process.pid != os.getpid() and wanted & {
                    os.readlink(f"/proc/{process.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{process.pid}/fd")}:
                found.append(f"{process.pid} ({process.info['ppid']}) {' '.join(process.info['cmdline'] or [])[:120]}")
        except (OSError, psutil.Error):  # gone, or not ours to read
            pass
    return found


# A right `scale` still running when the interrupt comes: it sleeps until the cell's timeout (60 s)
# stops it. The kernel sees nothing of this machine it could wait on (its sandbox), so the test opens
# no gate: after the interrupt, these students hand in RIGHT instead.
WAITING = "import time\n\ntime.sleep(600)\n\n" + RIGHT


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "sigint-to-grade-only", "power-cut"])
def test_an_interrupted_batch_resumes_to_the_full_gradebook(released_course, notebooks, tmp_path, how):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it), SIGINT to the grading
    process alone, or SIGKILL to everything (a machine that goes down) after the first result;
    then the same command again.

    s0 is graded at once; s1, s2 and s3 still run or wait when the interrupt comes (WAITING), so
    exactly one result is in then, however busy the machine is; they hand in RIGHT before the resume.
    Two workers, four students: s3 waits in the pool's call queue, where the interrupt cannot cancel
    it (a worker took it after its interrupt and started its kernel, which no stop found: grade's
    output stayed open past 90 s)."""
    source, _ = notebooks
    submitted, out = tmp_path / "in", tmp_path / "out"
    _submit(submitted, "s0", _with(source, scale=RIGHT))
    for who in ("s1", "s2", "s3"):
        _submit(submitted, who, _with(source, scale=WAITING))
    command = [sys.executable, "-m", "autograder", "grade", str(submitted), "--root",
               str(released_course.root), "--out", str(out), "--jobs", "2"]
    # Started as from a terminal: SIGINT at its default. An ignored SIGINT is inherited through
    # exec, and Python then installs no KeyboardInterrupt handler; pytest-xdist's workers were seen
    # with SIGINT ignored (/proc's SigIgn), which made grade ignore the test's Ctrl-C.
    shim = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
            "os.execv(sys.argv[1], sys.argv[1:])")
    process = subprocess.Popen([sys.executable, "-c", shim, *command], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1"})  # its stack, should it hang
    outputs = _pipes(process.stdout, process.stderr)
    try:
        first = process.stderr.readline()  # the first progress line: one result is in
        assert "s0/00_fixture: 6/6" in first, first + process.stderr.read()
        tree = [p.pid for p in psutil.Process(process.pid).children(recursive=True)]
        assert tree, "no worker processes?"
        if how == "ctrl-c":
            os.killpg(process.pid, signal.SIGINT)
        elif how == "sigint-to-grade-only":
            process.send_signal(signal.SIGINT)
        else:
            for pid in [process.pid, *tree]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            stdout, stderr = process.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            if process.poll() is not None:  # grade ended; something it started holds its output
                pytest.fail(f"grade exited ({process.returncode}) after {how}, but its output is still "
                            f"open in: {_holding(outputs)}")
            state = _signal_state(process.pid)
            os.kill(process.pid, signal.SIGABRT)  # faulthandler writes where each thread of grade is
            try:
                _, stderr = process.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                stderr = "(no stack: grade did not end on SIGABRT either)"
            pytest.fail(f"grade ignored {how}: {state}; this test process: {_signal_state(os.getpid())}; "
                        f"grade's stack:\n{stderr[-6000:]}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    if how == "power-cut":
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 130, stdout + stderr
        assert "run the same command again to resume" in stdout
        assert "interrupted: 1 of 4 graded" in stdout, stdout
        deadline = time.monotonic() + 10
        while _tree_alive(tree) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _tree_alive(tree), "workers or kernels outlived the interrupt"
        assert not (out / "grades.csv").exists()  # nothing half-written
    for pid in _tree_alive(tree):  # after a power cut, whatever survived goes now
        os.kill(pid, signal.SIGKILL)
    assert [p.stem for p in (out / ".journal" / "00_fixture").glob("*.json")] == ["s0"]

    for who in ("s1", "s2", "s3"):
        _submit(submitted, who, _with(source, scale=RIGHT))
    resumed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "reused 1 of 4" in resumed.stderr
    assert resumed.stderr.count("/00_fixture: 6/6") == 3
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["student_id"], r["score"], r["status"]) for r in rows] == [
        (f"s{i}", "6", "graded") for i in range(4)]

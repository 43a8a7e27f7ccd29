"""Where jobs run: the local pool by default, a Dask cluster on request, the same grades."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
import textwrap

import nbformat
import pytest

from autograder.batch.backends import DaskCluster, LocalPool, _pool, make_backend
from autograder.batch.grade import grade
from autograder.batch.session import run_jobs
from autograder.course.notebooks import grade_id, read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine.job import FIRST_JOB_IMPORTS, GradeJob, GradeResult


class Reversed:
    """A backend that finishes jobs last to first, without grading anything."""

    name = "reversed"

    def __init__(self, local: bool):
        self.local = local
        self.seen: list[GradeJob] = []

    def describe(self) -> str:
        return self.name

    def run(self, jobs, n_jobs=None):
        self.seen = list(jobs)
        for index in reversed(range(len(jobs))):
            job = jobs[index]
            yield index, GradeResult(job.student_id, job.assignment, job.label, "graded",
                                     float(index), 9.0)


def _jobs(tmp_path, n):
    return [GradeJob(f"s{i}", "00_fixture", tmp_path / f"s{i}.ipynb", tmp_path, tmp_path)
            for i in range(n)]


@pytest.mark.parametrize("local", [True, False])
def test_results_come_back_in_job_order_and_progress_as_they_finish(tmp_path, local):
    backend = Reversed(local)
    seen = []
    results = run_jobs(_jobs(tmp_path, 4), 2, on_result=lambda r: seen.append(r.student_id),
                       kernel_server="/tmp/socket", backend=backend)
    assert [r.student_id for r in results] == ["s0", "s1", "s2", "s3"]
    assert [r.score for r in results] == [0.0, 1.0, 2.0, 3.0]
    assert seen == ["s3", "s2", "s1", "s0"]
    # The kernel server's socket is local to this machine: only local workers get it.
    assert {job.kernel_server for job in backend.seen} == {"/tmp/socket" if local else None}


def test_a_workers_first_job_finds_what_a_job_imports_already_imported():
    """Imported once before the workers start (in this process for fork, in the forkserver
    otherwise), not again by every worker on its first job: about 4 CPU-s a worker, torch among them."""
    asked = f"[m for m in {FIRST_JOB_IMPORTS!r} if m in __import__('sys').modules]"
    with _pool(2) as pool:
        found = [pool.submit(eval, asked) for _ in range(2)]
    assert [future.result() for future in found] == [list(FIRST_JOB_IMPORTS)] * 2


def test_workers_grade_with_the_callers_environment_whichever_way_they_start(tmp_path):
    """The kernel's caps are read from the environment (AUTOGRADER_KERNEL_MEMORY, ...) in the worker.
    A forkserver (used while another thread runs, as under Dask or a test runner) is started once per
    process and keeps the environment it started with: a second batch in that process, run with
    tighter caps, got workers with the first batch's (seen: a kernel held 3 x 900 MB under a 2G cap).
    Here, in a fresh process: a pool starts the forkserver, the caps change, the next pool's worker
    must see the new ones."""
    script = tmp_path / "env_in_worker.py"
    script.write_text(textwrap.dedent("""
        import os, threading
        from autograder.batch.backends import _pool
        if __name__ == "__main__":
            threading.Thread(target=threading.Event().wait, daemon=True).start()  # not fork: forkserver
            with _pool(1) as pool:
                pool.submit(os.getpid).result()
            os.environ["AUTOGRADER_KERNEL_MEMORY"] = "2G"
            os.environ.pop("AUTOGRADER_KERNEL_TMP", None)
            with _pool(1) as pool:
                print(pool.submit(os.getenv, "AUTOGRADER_KERNEL_MEMORY").result(),
                      pool.submit(os.getenv, "AUTOGRADER_KERNEL_TMP").result())
    """))
    env = {**os.environ, "AUTOGRADER_KERNEL_TMP": "512M"}
    env.pop("AUTOGRADER_KERNEL_MEMORY", None)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                          cwd=REPO_ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["2G", "None"], done.stdout


def test_the_local_pool_is_the_default_and_a_scheduler_means_dask():
    assert isinstance(make_backend(), LocalPool)
    assert isinstance(make_backend("dask"), DaskCluster) and make_backend("dask").local
    remote = make_backend("local", scheduler="tcp://grader:8786")
    assert isinstance(remote, DaskCluster) and not remote.local
    with pytest.raises(ValueError, match="unknown backend"):
        make_backend("slurm")


@pytest.mark.slow
def test_a_dask_local_cluster_grades_the_same_as_the_local_pool(released_course, tmp_path):
    pytest.importorskip("distributed")
    source = read_notebook(released_course.source_notebook("00_fixture"))
    student = read_notebook(released_course.release_notebook("00_fixture"))
    half = copy.deepcopy(student)
    for cell in half.cells:
        if grade_id(cell) == "scale":
            cell.source = "def scale(x, factor):\n    return x * factor"
    for who, nb in (("alice", source), ("bob", half), ("carol", student)):
        (tmp_path / "in" / who / "00_fixture").mkdir(parents=True)
        nbformat.write(nb, tmp_path / "in" / who / "00_fixture" / "00_fixture.ipynb")
    (tmp_path / "in" / "dave" / "00_fixture").mkdir(parents=True)
    (tmp_path / "in" / "dave" / "00_fixture" / "00_fixture.ipynb").write_text("{not json")

    def batch(backend, out):
        seen = []
        rows = grade(released_course, tmp_path / "in", tmp_path / out, n_jobs=2,
                     progress=lambda r: seen.append(r.student_id), backend=backend)
        return rows, sorted(seen), (tmp_path / out / "grades.csv").read_bytes()

    local_rows, local_seen, local_csv = batch(LocalPool(), "local")
    dask_rows, dask_seen, dask_csv = batch(DaskCluster(), "dask")
    assert dask_csv == local_csv
    assert dask_seen == local_seen == ["alice", "bob", "carol", "dave"]
    scores = {r["student_id"]: (r["score"], r["status"]) for r in dask_rows}
    assert scores == {"alice": ("6", "graded"), "bob": ("3", "graded"),
                      "carol": ("0", "graded"), "dave": ("0", "error")}
    assert (tmp_path / "dask" / "autograded" / "alice" / "00_fixture" / "00_fixture.ipynb").is_file()
    assert "Dask LocalCluster" in (tmp_path / "dask" / "report.json").read_text()


def test_gradebooks_in_a_scratch_folder_are_never_synced_and_other_databases_are(tmp_path):
    """nbgrader commits once per cell; in a session's folder nothing needs that on disk (before:
    building bench's four templates spent 2.6 of its 5.3 s waiting on fsync)."""
    from sqlalchemy import create_engine, text

    from autograder.batch.backends import scratch_gradebooks

    (tmp_path / "session").mkdir()
    scratch_gradebooks(tmp_path / "session")

    def synchronous(path) -> int:
        engine = create_engine(f"sqlite:///{path}")
        try:
            with engine.connect() as conn:
                return conn.execute(text("PRAGMA synchronous")).scalar()
        finally:
            engine.dispose()

    assert synchronous(tmp_path / "session" / "gradebook.db") == 0  # OFF
    assert synchronous(tmp_path / "elsewhere.db") == 2  # FULL, SQLite's default


def test_nbgraders_metadata_schema_is_checked_once_with_the_same_verdicts(monkeypatch):
    """nbgrader validates each cell's metadata with jsonschema.validate, which checks the schema
    itself on every call (0.13 of a job's 1.05 CPU-s): checked once here, each cell still judged."""
    import jsonschema
    from nbformat.v4 import new_code_cell
    from nbgrader.nbgraderformat import common
    from nbgrader.nbgraderformat.v3 import MetadataValidatorV3

    from autograder.batch.backends import check_nbgrader_metadata_once

    monkeypatch.setattr(common, "jsonschema", jsonschema)  # as nbgrader has it; put back after the test
    checks = []
    real = jsonschema.Draft4Validator.check_schema
    monkeypatch.setattr(jsonschema.Draft4Validator, "check_schema",
                        classmethod(lambda cls, schema: checks.append(1) or real(schema)))
    check_nbgrader_metadata_once()
    cell = new_code_cell("x = 1", metadata={"nbgrader": {
        "grade": True, "grade_id": "test_x", "locked": True, "points": 1, "schema_version": 3,
        "solution": False, "task": False}})
    validator = MetadataValidatorV3()
    for _ in range(5):
        validator.validate_cell(cell)
    assert len(checks) == 1
    cell.metadata["nbgrader"]["points"] = "one"
    with pytest.raises(jsonschema.ValidationError, match="'one' is not of type 'number'"):
        validator.validate_cell(cell)

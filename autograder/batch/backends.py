"""Where grading jobs run: worker processes here (the default) or a Dask cluster.

A backend takes `GradeJob`s and yields `(index, GradeResult)` as each job finishes; the
caller (`session.run_jobs`) puts them back in job order. Stopping the generator early (Ctrl-C,
or `.close()`) stops the workers and the kernels they started instead of waiting for them.

  LocalPool    a process pool on this machine; the kernel server's socket reaches its jobs.
  DaskCluster  `distributed.Client.map` + `as_completed` on an existing scheduler
               (`tcp://host:8786`) or on a LocalCluster started for the run. Workers of an
               existing cluster run elsewhere: they need the course and the output folder at
               the same paths (a shared filesystem) and this project installed, and their
               kernels start cold (the kernel server's socket is local to this machine).
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

import psutil

from autograder.engine.job import (
    FIRST_JOB_IMPORTS,
    REASONS,
    Failure,
    GradeJob,
    GradeResult,
    default_jobs,
    grade_submission,
    import_what_a_job_needs,
)

BACKENDS = ("local", "dask")
_UNWIND_SECONDS = 3.0  # after Ctrl-C, time a worker gets to shut its kernel down politely


def make_backend(name: str = "local", scheduler: str | None = None):
    """The backend called `name`; a scheduler address implies dask."""
    if scheduler or name == "dask":
        return DaskCluster(scheduler)
    if name == "local":
        return LocalPool()
    raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")


def add_backend_options(parser: argparse.ArgumentParser) -> None:
    """--backend and --scheduler, shared by the commands that grade."""
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where submissions are graded: local worker processes (default), or "
                             "dask: a Dask cluster, the one at --scheduler or else a LocalCluster "
                             "of --jobs worker processes started for the run")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="address of a running Dask scheduler, e.g. tcp://host:8786 (implies "
                             "--backend dask). Its workers need the course, the submissions and the "
                             "output folder at the same paths as here (a shared filesystem) and "
                             "this project installed; their kernels start cold (the warm kernel "
                             "server serves this machine only)")


def crashed(job: GradeJob, why: str) -> GradeResult:
    """The record of a job whose grading process died under it."""
    return GradeResult(job.student_id, job.assignment, job.label, "error", 0.0, 0.0,
                       reason=f"{REASONS[Failure.CRASHED]} ({why})", warnings=list(job.warnings),
                       failure=Failure.CRASHED)


# -- scratch gradebooks ------------------------------------------------------------------------

_SCRATCH: set[str] = set()  # folders whose SQLite databases this process never syncs to disk


def scratch_gradebooks(folder) -> None:
    """SQLite databases under `folder` skip fsync (PRAGMA synchronous=OFF) in this process.

    Grading makes throwaway nbgrader gradebooks (the template's, one per job, all under the
    session's folder, removed at its end), and nbgrader commits once per cell: building the four
    templates of bench's batch took 5.3 s, 2.6 of them waiting on 242 commits' fsync. What a
    gradebook holds is read back by the same job or not at all (the journal is what a batch resumes
    from), so losing it to a power cut loses nothing. Other databases are left alone."""
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    if not _SCRATCH:
        event.listen(Engine, "connect", _no_sync_in_scratch)
    _SCRATCH.add(os.path.realpath(folder))


def _no_sync_in_scratch(connection, _record) -> None:
    if not isinstance(connection, sqlite3.Connection):
        return
    files = [row[2] for row in connection.execute("PRAGMA database_list") if row[1] == "main"]
    if files and any(os.path.realpath(files[0]).startswith(root + os.sep) for root in _SCRATCH):
        connection.execute("PRAGMA synchronous=OFF")


# -- nbgrader's metadata checks -----------------------------------------------------------------

class _CheckedSchemas:
    """jsonschema's `validate` with each schema checked once, not once per call: what nbgrader's
    metadata validator (nbgrader/nbgraderformat/common.py) calls for every cell of every notebook.
    The same verdicts: `validate` checks the schema, then raises the best error of the instance."""

    def __init__(self, jsonschema):
        self._jsonschema = jsonschema
        self._validators: dict[str, object] = {}

    def validate(self, instance, schema, cls=None, *args, **kwargs):
        if cls is not None or args or kwargs:  # not how nbgrader calls it: jsonschema's own
            return self._jsonschema.validate(instance, schema, cls, *args, **kwargs)
        key = json.dumps(schema, sort_keys=True)
        validator = self._validators.get(key)
        if validator is None:
            kind = self._jsonschema.validators.validator_for(schema)
            kind.check_schema(schema)
            validator = self._validators[key] = kind(schema)
        error = self._jsonschema.exceptions.best_match(validator.iter_errors(instance))
        if error is not None:
            raise error

    def __getattr__(self, name):  # everything else is jsonschema's
        return getattr(self._jsonschema, name)


def check_nbgrader_metadata_once() -> None:
    """In this process, nbgrader checks its metadata schema once instead of once per cell (jsonschema
    checks the schema against its meta-schema on every `validate`): 0.83 of grade's 6.7 CPU-s before
    the first job on bench's batch (four templates, 240 cells), and 0.13 of a job's 1.05."""
    from nbgrader.nbgraderformat import common

    if not isinstance(common.jsonschema, _CheckedSchemas):
        common.jsonschema = _CheckedSchemas(common.jsonschema)


# -- stopping processes ------------------------------------------------------------------------

@contextmanager
def _no_second_interrupt() -> Iterator[None]:
    """Ignore Ctrl-C while the workers are being stopped, so that they are stopped."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_processes(pids: Sequence[int], interrupt: bool = True, then=None) -> None:
    """Stop these worker processes and everything they started (kernels, DataLoader workers).

    The tree is taken first: a kernel whose worker died can no longer be found from it. With
    `interrupt`, the workers get SIGINT (grade_submission unwinds: its kernel is shut down, its
    temporary course folder removed) and `then()` runs (the pool tells them to exit when done);
    whatever is still running after a few seconds, or at once without `interrupt`, is killed.
    Before the kill, the workers still running are frozen (SIGSTOP) and their tree taken again:
    a kernel one of them started after the first look (a job it began while unwinding) is found
    too, and none is born between that look and the kill. A launcher missed here outlives grade
    with grade's output open, and its kernel with it (seen: grade's stdout held past 90 s).
    """
    roots: list[psutil.Process] = []
    tree: list[psutil.Process] = []
    for pid in pids:
        try:
            root = psutil.Process(pid)
            tree += [root, *root.children(recursive=True)]
            roots.append(root)
        except psutil.Error:
            continue
    if interrupt:
        for root in roots:
            try:
                root.send_signal(signal.SIGINT)
            except psutil.Error:
                pass
        if then is not None:
            then()
        deadline = time.monotonic() + _UNWIND_SECONDS
        while time.monotonic() < deadline and any(_alive(p) for p in tree):
            time.sleep(0.05)
    for root in roots:
        try:
            root.suspend()
            tree += root.children(recursive=True)
        except psutil.Error:
            pass
    tree = list({process.pid: process for process in tree}.values())
    for process in tree:
        try:
            process.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(tree, timeout=5)


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


_interrupted = False  # in a worker: a Ctrl-C came; the batch is being stopped


def _interrupt_once(signum, frame):
    """A worker's SIGINT: unwind the job once; a second one (the terminal's Ctrl-C and ours
    both arrive) must not break that unwinding."""
    global _interrupted
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _interrupted = True
    raise KeyboardInterrupt


def _grade_in_worker(job: GradeJob) -> GradeResult:
    """grade_submission, in a local worker that was not interrupted. After its interrupt a worker
    starts nothing: the pool's call queue still hands it the jobs it had queued (cancel_futures
    cannot take them back), and one begun there started a kernel that no stop found."""
    if _interrupted:
        raise KeyboardInterrupt
    scratch_gradebooks(job.work_dir)
    check_nbgrader_metadata_once()
    return grade_submission(job)


def start_worker(environment: dict[str, str] | None = None) -> None:
    """Set up a local worker process: the caller's environment, quiet stderr, Ctrl-C unwinds the
    job once.

    environment: the pool's creator's os.environ when the pool was made. A forkserver is started
    once per process and forks every later worker with the environment it started with; a job reads
    its kernel's caps from the environment (nbgrader_config.py), so without this a second batch
    in the same process would run under the first one's caps."""
    if environment is not None:
        os.environ.clear()
        os.environ.update(environment)
    quiet_worker()
    signal.signal(signal.SIGINT, _interrupt_once)


def quiet_worker() -> None:
    """Send a worker's stderr, which its kernels inherit, to /dev/null.

    Kernels print start-up chatter there ("Kernel is running over TCP without encryption"),
    sixty times a run; everything that matters is in the result records.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


# -- this machine -------------------------------------------------------------------------------

def _pool(workers: int) -> ProcessPoolExecutor:
    # fork: workers start at once, sharing the parent's imports, what a job needs among them
    # (import_what_a_job_needs: torch and nbgrader, about 4 CPU-s a worker otherwise).
    # Not from a process with other threads running (a Dask client's event loop, a test
    # runner's): a lock one of them held is held forever in the child, and the worker hangs.
    # Then forkserver: a clean process that imports the engine once and forks the workers.
    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        import_what_a_job_needs()
        context = multiprocessing.get_context("fork")
    elif "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["autograder.engine.job", *FIRST_JOB_IMPORTS])
    else:
        context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=start_worker,
                               initargs=(dict(os.environ),))


class LocalPool:
    """Worker processes on this machine, `n_jobs` at a time."""

    name = "local"
    local = True  # jobs may use this machine's kernel server

    def describe(self) -> str:
        return "local processes"

    def run(self, jobs: Sequence[GradeJob], n_jobs: int | None = None
            ) -> Iterator[tuple[int, GradeResult]]:
        """Yield (index, result) as jobs finish.

        Jobs always run in worker processes, even with n_jobs=1: the terminal stays quiet and
        a crash cannot take the caller down. A worker that dies takes its pool with it; the
        jobs it left unfinished then run again, one fresh process each, so only the culprit
        gets an error record.
        """
        if not jobs:
            return
        broken: list[int] = []
        yield from _pooled(jobs, range(len(jobs)), min(n_jobs or default_jobs(), len(jobs)), broken)
        for index in sorted(broken):
            yield from _pooled(jobs, [index], 1, None)


def _pooled(jobs: Sequence[GradeJob], indexes: Sequence[int], workers: int,
            broken: list[int] | None) -> Iterator[tuple[int, GradeResult]]:
    """Grade jobs[indexes] in one pool; jobs lost with a broken pool go to `broken` if given."""
    pool = _pool(workers)
    try:
        futures = {pool.submit(_grade_in_worker, jobs[i]): i for i in indexes}
        for future in as_completed(futures):
            index = futures[future]
            try:
                result = future.result()
            except BrokenProcessPool:
                if broken is not None:
                    broken.append(index)
                    continue
                result = crashed(jobs[index], "its worker process died")
            except Exception as error:
                result = crashed(jobs[index], repr(error))
            yield index, result
    except BaseException:  # Ctrl-C, or the caller stopped early: stop the workers, do not wait
        with _no_second_interrupt():
            stop_processes(list(pool._processes or {}),  # the pool's own {pid: process}
                           then=lambda: pool.shutdown(wait=False, cancel_futures=True))
        raise
    pool.shutdown()


# -- a Dask cluster ----------------------------------------------------------------------------

class DaskCluster:
    """Jobs on a Dask cluster: the one at `scheduler`, or a LocalCluster started for the run."""

    name = "dask"

    def __init__(self, scheduler: str | None = None):
        self.scheduler = scheduler

    @property
    def local(self) -> bool:
        """Workers on this machine (our LocalCluster): the kernel server's socket reaches them."""
        return self.scheduler is None

    def describe(self) -> str:
        return f"Dask scheduler {self.scheduler}" if self.scheduler else "Dask LocalCluster"

    def run(self, jobs: Sequence[GradeJob], n_jobs: int | None = None
            ) -> Iterator[tuple[int, GradeResult]]:
        """Yield (index, result) as jobs finish; n_jobs sizes a LocalCluster (else ignored)."""
        if not jobs:
            return
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if self.scheduler is None:
            # One single-threaded worker process per job slot, like the local pool; no dashboard
            # (it needs bokeh, and a port).
            cluster = LocalCluster(n_workers=min(n_jobs or default_jobs(), len(jobs)),
                                   threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
        client = None
        futures = []
        pids: list[int] = []
        try:
            client = Client(cluster if cluster is not None else self.scheduler)
            if cluster is not None:
                client.run(quiet_worker)
                pids = list(client.run(os.getpid).values())
            # pure=False: grading has side effects (feedback files); never reuse a result.
            futures = client.map(grade_submission, list(jobs), pure=False)
            index = {future.key: i for i, future in enumerate(futures)}
            for future in as_completed(futures):
                i = index[future.key]
                try:
                    result = future.result()
                except Exception as error:  # KilledWorker: the job killed its workers
                    result = crashed(jobs[i], f"{type(error).__name__}: {error}")
                yield i, result
        except BaseException:
            # An existing cluster's running jobs cannot be stopped from here: they finish on
            # their workers and are dropped. Ours is stopped with its kernels.
            with _no_second_interrupt():
                if futures:
                    client.cancel(futures, force=True)
                stop_processes(pids, interrupt=False)  # a task thread cannot be interrupted
            raise
        finally:
            with _no_second_interrupt():
                if client is not None:
                    client.close()
                if cluster is not None:
                    cluster.close()

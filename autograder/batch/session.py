"""One grading session, shared by `check` and `grade`: where the jobs run and what kernels see.

`GradingSession` is entered once per command. It
- makes the session's private folder under build/work/ (the template, the gradebooks, every
  job's course folder: removed on exit, whatever happened);
- says what no kernel may read (`hidden_paths`: the course's roots and this checkout's, the
  grader's HOME, the reference answers, the session's folder, and what the command adds:
  submissions, output); autograder/engine/sandbox.py binds back what a kernel needs to run;
- gives each kernel its share of the cores and threads that never spin (autograder/batch/threads.py);
- starts the warm kernel server (autograder/engine/kernel_server.py) where the backend's workers run on
  this machine;
- reports, one line each, what of the sandbox this machine cannot give (sandbox.problems,
  cgroups.problem), and removes the cgroups of kernels whose launcher was killed;
- refuses to start where kernels would get neither the sandbox nor a user of their own
  (privsep.open_refusal), unless the session is `trusted` (check: the course's own files) or
  AUTOGRADER_UNSANDBOXED=1 was set by hand: never the open mode unasked;
- runs the jobs (`run`) on the backend (autograder/batch/backends.py), results in job order.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from unittest import mock

from autograder.batch.backends import LocalPool, check_nbgrader_metadata_once, scratch_gradebooks
from autograder.batch.threads import limit_kernel_threads
from autograder.course.layout import Course
from autograder.course.safe_text import safe_line
from autograder.engine import cgroups, privsep, sandbox
from autograder.engine.execute import hidden_paths
from autograder.engine.job import GradeJob, GradeResult
from autograder.engine.kernel_server import KernelServer


class BatchInterrupted(KeyboardInterrupt):
    """Ctrl-C during a batch: the workers and their kernels are stopped; `done` of `total` finished."""

    def __init__(self, done: int, total: int):
        super().__init__(f"interrupted: {done} of {total} graded")
        self.done, self.total = done, total


def run_jobs(jobs: Sequence[GradeJob], n_jobs: int | None = None,
             on_result: Callable[[GradeResult], None] | None = None,
             kernel_server: str | None = None, backend=None) -> list[GradeResult]:
    """Grade every job, `n_jobs` at a time (default: one per core); results in job order.

    kernel_server: the socket of a running KernelServer, given to every job when the backend's
    workers run on this machine: kernels are then forked warm instead of started cold. backend:
    where jobs run (autograder/batch/backends.py; default: a local process pool). on_result sees each
    result as it arrives, in the order they finish. Ctrl-C stops the workers and their kernels
    and raises BatchInterrupted.
    """
    backend = backend if backend is not None else LocalPool()
    if kernel_server and backend.local:
        jobs = [replace(job, kernel_server=kernel_server) for job in jobs]
    results: list[GradeResult | None] = [None] * len(jobs)
    finished = backend.run(jobs, n_jobs)
    try:
        for index, result in finished:
            results[index] = result
            if on_result is not None:
                on_result(result)
    except KeyboardInterrupt:
        done = sum(r is not None for r in results)
        raise BatchInterrupted(done, len(jobs)) from None
    finally:
        finished.close()  # stops the workers if we leave early
    return results  # type: ignore[return-value]


class GradingSession:
    """The shared setup of one `check` or `grade` run, for the length of a `with` block.

    name: the command (the private folder's prefix); hidden: paths kernels must not read on top
    of `hidden_paths` (grade: the submissions and the output folder); warm_kernels: fork
    kernels from a server (default: yes unless AUTOGRADER_WARM_KERNELS=0); warn: where the
    one-line warnings go (default: stderr); trusted: the notebooks are the course's own (check),
    so kernels may run unsandboxed where nothing else can be had (AUTOGRADER_UNSANDBOXED in the
    block). Inside the block: `.dir` (the private folder), `.hide` (for every GradeJob),
    `.kernel_server` (socket or None), `.warnings`. Entering raises privsep.Refusal where kernels
    would run unsandboxed unasked.
    """

    def __init__(self, course: Course, name: str, n_jobs: int | None = None,
                 warm_kernels: bool | None = None, backend=None, hidden: Sequence[Path] = (),
                 warn: Callable[[str], None] | None = None, trusted: bool = False):
        self.trusted = trusted
        self.course, self.name, self.n_jobs = course, name, n_jobs
        self.warm_kernels, self.hidden = warm_kernels, tuple(hidden)
        self.backend = backend if backend is not None else LocalPool()
        self.warn = warn if warn is not None else (
            lambda line: print(safe_line(f"  warning: {line}"), file=sys.stderr, flush=True))
        self.dir: Path | None = None
        self.hide: tuple[str, ...] = ()
        self.kernel_server: str | None = None
        self.warnings: list[str] = []
        self._stack = ExitStack()

    def __enter__(self) -> GradingSession:
        work = self.course.build_dir / "work"
        work.mkdir(parents=True, exist_ok=True)
        stack = self._stack.__enter__()
        try:
            self.dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix=f"{self.name}-", dir=work)))
            scratch_gradebooks(self.dir)  # the template's and every job's gradebook: no fsync
            check_nbgrader_metadata_once()
            if self.trusted:  # before the kernel server and the workers start: they inherit it
                stack.enter_context(mock.patch.dict(os.environ, {privsep.UNSANDBOXED_SETTING: "1"}))
            refusal = privsep.open_refusal(os.environ)
            if refusal:
                raise privsep.Refusal(refusal)
            stack.enter_context(limit_kernel_threads(self.n_jobs))
            # Each kernel hides all of it but its own job's folder.
            self.hide = hidden_paths(self.course.root, *self.hidden, self.dir)
            if self.backend.local:  # started first: it preloads torch while the caller prepares
                server = stack.enter_context(KernelServer(self.warm_kernels, reuse=True))
                self.kernel_server = server.socket
            # Warm or cold, kernels enter the same sandbox: what this machine allows is what they get.
            self.warnings += sandbox.problems() + [w for w in [privsep.open_warning(os.environ)] if w]
            problem = cgroups.problem()
            if problem:
                self.warnings.append(problem)
            stack.callback(cgroups.sweep)
            for line in self.warnings:
                self.warn(line)
        except BaseException:
            self._stack.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc) -> None:
        self._stack.__exit__(*exc)

    def run(self, jobs: Sequence[GradeJob], on_result: Callable[[GradeResult], None] | None = None
            ) -> list[GradeResult]:
        """Grade `jobs` on the session's backend with its kernel server; results in job order."""
        return run_jobs(jobs, self.n_jobs, on_result=on_result, kernel_server=self.kernel_server,
                        backend=self.backend)

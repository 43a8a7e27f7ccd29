"""Feedback pages made in a child process with limits: the grader's own work on a student's data.

A feedback page renders what a student wrote (markdown, outputs, maths), and that work grows with
what they wrote: before these limits a notebook of 300k `$x$` took 88 CPU-s and 1.5 GiB in the
grader's own process and made a 29 MB page; 20 MB of markdown took 108 CPU-s and 2.3 GiB (37 MB).
autograder/engine/feedback_html.py caps the notebook before rendering; this module bounds what is
left, whatever the caps did not foresee. A *page server* (`python -I -m
autograder.engine.page_server`, one per grading process or per worker of `feedback`) imports what a
page needs once, then forks one child per page, which sets its limits (`Limits`: CPU seconds
RLIMIT_CPU, memory RLIMIT_AS, any file RLIMIT_FSIZE, no core file), writes the page
(feedback_html.render) and exits; the server stops it at the wall-clock limit. The server reads the
child's CPU time and peak memory from the kernel (wait4), not from the child.

A page that cannot be made within the limits (past a limit, or past feedback_html.PAGE_BYTES_LIMIT)
becomes a short page saying why, with the scores (feedback_html.short_page): the grade is what
grade gave, whatever the page. Any other failure (an executed notebook that cannot be read) raises
RuntimeError with the reason, as before.

    python -I -m autograder.engine.page_server    # a server: one JSON request per line on stdin
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from autograder.engine.feedback_html import PAGE_BYTES_LIMIT

# Exit statuses of a page's child besides 0 (made) and 1 (an error: its message on stderr).
TOO_LARGE, OUT_OF_MEMORY, TOO_DEEP = 3, 4, 5
_STARTUP_SECONDS = 120  # a server's imports, on a busy machine, before its first answer


@dataclass(frozen=True)
class Limits:
    """What one page may cost. Measured here (tests/engine/test_page_server.py's notebooks): the
    fixture course's page 0.3 CPU-s and 100 MiB; the capped attacks (300k formulas, 20 MB of
    markdown) 1-3 CPU-s and under 250 MiB; the costliest found, 300k characters of code (every
    token a <span>), 14 CPU-s and 390 MiB."""

    cpu_seconds: int = 60  # RLIMIT_CPU of the child (SIGXCPU at it, SIGKILL 5 s later)
    wall_seconds: int = 300  # the server kills the child after this, CPU or not (a busy machine)
    memory_bytes: int = 2 << 30  # RLIMIT_AS of the child: the server's imports are about 0.2 GiB of it
    file_bytes: int = 64 << 20  # RLIMIT_FSIZE: any file the child writes (its course folder, the page)
    page_bytes: int = PAGE_BYTES_LIMIT  # the finished page, else the short page


LIMITS = Limits()


@dataclass(frozen=True)
class PageRun:
    """What making one page cost, as the kernel counted it for the child that made it."""

    made: bool  # the full page was written (else the short page, `short` says why)
    short: str
    pid: int  # the child's
    cpu_seconds: float
    max_rss_bytes: int
    page_bytes: int
    limits: Limits


# -- the server (its own process) ------------------------------------------------------------------

def _child(request: dict, limits: Limits, log_fd: int) -> None:
    """In the forked child: limits, then the page; never returns."""
    import resource

    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)  # the server's answers go there: nothing of the child's
        os.dup2(log_fd, 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_seconds, limits.cpu_seconds + 5))
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        from autograder.engine.feedback_html import PageTooLarge, render

        page = dict(request["page"])
        for key in ("template_dir", "autograded", "html_path", "source_notebook"):
            page[key] = Path(page[key])
        render(**page, page_limit=limits.page_bytes)
        code = 0
    except PageTooLarge as error:
        os.write(2, str(error).encode())
        code = TOO_LARGE
    except MemoryError:
        code = OUT_OF_MEMORY
    except RecursionError:
        code = TOO_DEEP
    except BaseException as error:  # noqa: BLE001 (told to the caller, whatever it is)
        message = f"{type(error).__name__}: {error}"
        # nbgrader logs what its converter raised and raises its own error: the log's lines say.
        raised = {line.split(":")[0] for line in message.splitlines()}
        code = OUT_OF_MEMORY if "MemoryError" in raised else TOO_DEEP if "RecursionError" in raised else 1
        os.write(2, message.encode(errors="replace")[-2000:])
    os._exit(code)


def _why(status: int, timed_out: bool, log: str, limits: Limits) -> str:
    """Why a child made no page within its limits, in words for the student."""
    if timed_out:
        return f"making it took longer than {limits.wall_seconds} seconds"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if number in (signal.SIGXCPU, signal.SIGKILL):
            return f"making it took more than {limits.cpu_seconds} CPU seconds"
        if number == signal.SIGXFSZ:
            return f"it would have written a file larger than {limits.file_bytes >> 20} MiB"
        return f"making it stopped past its limits ({signal.Signals(number).name})"
    code = os.WEXITSTATUS(status)
    return {TOO_LARGE: log, OUT_OF_MEMORY: f"it needed more than {limits.memory_bytes >> 20} MiB of memory",
            TOO_DEEP: "its cells are nested too deeply to show"}.get(
        code, f"making it stopped past its limits (status {code})")


def _serve_one(request: dict, client: int) -> dict:
    """Fork a child for one page, wait for it within the wall-clock limit, write the short page
    if it made none within the limits; the answer for the client."""
    import tempfile

    from autograder.course.atomic import atomic_write
    from autograder.engine.feedback_html import short_page

    limits = Limits(**request["limits"])
    with tempfile.TemporaryFile() as log:
        pid = os.fork()
        if pid == 0:
            _child(request, limits, log.fileno())
        deadline, timed_out = time.monotonic() + limits.wall_seconds, False
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if os.getppid() != client:  # the grader is gone (killed, interrupted): so is the page
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os._exit(0)
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                timed_out = True
                break
            time.sleep(0.01)
        log.seek(0)
        text = log.read(4000).decode(errors="replace").strip()
    page = Path(request["page"]["html_path"])
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) and not timed_out else None
    why = None if code in (0, 1) else _why(status, timed_out, text, limits)
    answer = {"made": code == 0, "short": why or "", "error": "", "pid": pid,
              "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3),
              "max_rss_bytes": usage.ru_maxrss * (1 if sys.platform == "darwin" else 1024)}
    if why is not None:
        p = request["page"]
        atomic_write(page, short_page(p["assignment"], p["student_id"], p["scores"],
                                      Path(p["source_notebook"]), why))
    elif code == 1:
        answer["error"] = text or "the page's process failed without a word"
    answer["page_bytes"] = page.stat().st_size if why is not None or answer["made"] else 0
    return answer


def _warm_up() -> None:
    """What every page compiles at its first use (pygments' lexers, mistune, latex2mathml), done
    once here on a notebook of the grader's own: each child then starts from it (measured: 0.44 ->
    0.28 CPU-s a page of the fixture course). Only an optimization: a failure here changes nothing."""
    import nbformat
    from nbconvert import HTMLExporter

    from autograder.engine.feedback_html import finish_html

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("*a* $x^2$ [b](https://c.d)"),
                                         nbformat.v4.new_code_cell("x = [1]  # c", outputs=[
                                             nbformat.v4.new_output("stream", text="d")])])
    try:
        finish_html(HTMLExporter().from_notebook_node(nb)[0], {})
    except Exception:  # noqa: BLE001 (each child compiles what it needs)
        pass


def serve() -> None:
    """One request per line of stdin (JSON), one answer per line of stdout, until stdin closes.
    What a page needs is imported first, once: each child is forked with it."""
    import difflib  # noqa: F401  (each child would import them again: about 2 CPU-s)
    import sqlite3  # noqa: F401

    import bs4  # noqa: F401
    import IPython.lib.lexers  # noqa: F401  (nbconvert highlights code with them)
    import jinja2.ext  # noqa: F401
    import latex2mathml.converter  # noqa: F401
    import nbgrader.api  # noqa: F401
    import nbgrader.converters  # noqa: F401
    import nbgrader.preprocessors  # noqa: F401
    import nh3  # noqa: F401
    import sqlalchemy.dialects.sqlite  # noqa: F401

    import autograder.engine.feedback_html  # noqa: F401
    import autograder.engine.nbgrader_setup  # noqa: F401
    import autograder.engine.template  # noqa: F401

    _warm_up()
    answers, sys.stdout = sys.stdout, sys.stderr  # nothing but answers on the answers' stream
    client = os.getppid()
    for line in sys.stdin:
        try:
            answer = _serve_one(json.loads(line), client)
        except Exception as error:  # noqa: BLE001 (the client reports it)
            answer = {"made": False, "short": "", "error": f"page server: {type(error).__name__}: {error}"}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


# -- the client (the grader's process) -------------------------------------------------------------

class PageServer:
    """A page server of this process, started at its first page; one page at a time (a lock)."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def make(self, template_dir: Path, assignment: str, student_id: str, autograded: Path,
             scores: dict[str, float], html_path: Path, source_notebook: Path,
             limits: Limits = LIMITS) -> PageRun:
        """feedback_html.render(...) in a limited child; the page or the short page is written.
        RuntimeError with the reason when neither could be (see the module's docstring)."""
        request = {"limits": asdict(limits), "page": {
            "template_dir": str(template_dir), "assignment": assignment, "student_id": student_id,
            "autograded": str(autograded), "scores": {k: float(v) for k, v in scores.items()},
            "html_path": str(html_path), "source_notebook": str(source_notebook)}}
        with self._lock:
            answer = self._ask(request, limits.wall_seconds + _STARTUP_SECONDS)
        if answer.get("error") or "pid" not in answer:
            raise RuntimeError(answer.get("error") or "the page server gave no answer")
        return PageRun(answer["made"], answer["short"], answer["pid"], answer["cpu_seconds"],
                       answer["max_rss_bytes"], answer["page_bytes"], limits)

    def _ask(self, request: dict, timeout: float) -> dict:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-m", "autograder.engine.page_server"], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        process = self._process
        try:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            ready, _, _ = select.select([process.stdout], [], [], timeout)
            line = process.stdout.readline() if ready else ""
        except OSError:
            line = ""
        if not line:  # no answer in time, or the server died: the next page gets a fresh one
            self.close()
            return {"error": "the page server did not answer"}
        return json.loads(line)

    def close(self) -> None:
        """Stop the server (and a child still making a page: it goes with the server's session)."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.close()
            process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except OSError:
                pass
            process.wait()
        process.stdout.close()

    def __enter__(self) -> PageServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_OWN: dict[int, PageServer] = {}  # this process's server, by pid (a forked worker starts its own)


def make_page(*args, **kwargs) -> PageRun:
    """PageServer.make through this process's own server (`grade --feedback`'s grading workers)."""
    server = _OWN.get(os.getpid())
    if server is None:
        server = _OWN[os.getpid()] = PageServer()
        atexit.register(server.close)
    return server.make(*args, **kwargs)


if __name__ == "__main__":
    serve()

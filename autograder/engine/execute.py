"""nbgrader's Execute, hardened: a crash or a stuck kernel costs only the cells it did not reach.

nbgrader's Execute lets nbclient's DeadKernelError through, and Autograde then fails the whole
notebook: the points earned before an `os._exit`, a segfault or a memory blow-up are lost. A
loop that ignores SIGINT survives the timeout's interrupt and makes every later cell time out
in turn. GradingExecute, which autograder/engine/nbgrader_setup.py puts in Autograde's pipeline in place of
Execute, instead:

- on a dead kernel keeps the outputs of the cells that ran, puts an error output on the cell
  that was running (KernelDied) and on every later code cell (NotRun), and returns normally:
  SaveAutoGrades then scores the test cells that ran and passed, and gives 0 to the rest;
- after a timeout's interrupt gives the kernel `interrupt_grace` seconds to stop; still busy,
  it is killed (its process group) and treated as dead from that cell on;
- stops a notebook at `notebook_budget` seconds of wall-clock time: the cell running then is
  interrupted like a timeout, later cells are not run (NotRun);
- starts kernels with their limits, from the warm kernel server when there is one, in the
  sandbox (autograder/engine/warm_kernel.py, kernel_server.py, sandbox.py, cgroups.py): a view of
  the machine that holds only what a kernel needs, the course's files hidden inside it (`hide`),
  no network. A kernel in a network namespace of its own cannot reach the grader's 127.0.0.1, so
  it talks to the grader over Unix sockets (jupyter_client's ipc transport). The grader's socket
  folder (under /tmp, 0700) is never in the kernel's view: the kernel binds its sockets in a small
  tmpfs of its own at the same path, and its launcher links them into the grader's folder
  (kernel_server.link_sockets), which is removed with the kernel;
- runs an epilogue after the notebook's last cell, in the same kernel, when the grading job gives
  one (`epilogue`: the trusted probes of autograder/engine/verify.py): its cells are not part of
  the notebook (removed before nbgrader scores it or writes it), the notebook's budget does not
  cut them (each has the cell timeout), only they get the probe's feed (input() answered from
  this side), the time a cell's kernel waits on the feed's answers is added to its timeout (a busy
  grader answers late: the wait is the grader's, not the student's; at most `feed_wait_limit`
  seconds a cell), and `report` says whether the notebook's own cells all ran first (no death, no
  spent budget) and whether every epilogue cell ran;
- caps what a notebook's outputs can hold: `output_limit` bytes in all (later outputs are left
  out, errors kept) and `output_item_limit` bytes per output (text cut, a larger image left out),
  so that a 50 MB print makes neither a 50 MB autograded notebook nor a 50 MB feedback page.

`kernel_deaths(nb)` and `budget_overruns(nb)` read these marks back from an autograded
notebook, as warnings for the grading report.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import shutil
import signal
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from queue import Empty
from time import monotonic

import nbformat
from nbclient.exceptions import CellExecutionComplete, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Bool, Float, Integer, List, TraitError, Unicode, validate

from autograder.course.notebooks import coalesced_outputs
from autograder.engine.warm_kernel import WarmKernelManager

EPILOGUE = "autograder_epilogue"  # metadata flag on the cells run after the notebook's own
KERNEL_DIED = "KernelDied"  # ename on the cell that was running when the kernel died
NOT_RUN = "NotRun"  # ename on every code cell not run because of it, or of the time budget
TIMED_OUT = "CellTimeoutError"  # nbgrader's, on a cell stopped by its timeout
OUT_OF_TIME = "NotebookTimeout"  # instead, on the cell running when the notebook's budget ran out
DIED = ("the kernel died while running this cell: the code called os._exit, crashed Python "
        "(a segmentation fault), or went over a limit{limits}. The cells before it kept their "
        "results; the cells after it were not run")
STOPPED = ("this cell ran past its {timeout} s limit and did not stop when interrupted, so the "
           "kernel was stopped. The cells before it kept their results; the cells after it were "
           "not run")
AFTER_DEATH = "not run: the kernel died in an earlier cell ({cell})"
BUDGET_CUT = "this cell was stopped: the notebook's time budget of {budget} s ran out while it ran"
BUDGET_SPENT = "not run: the notebook's time budget of {budget} s was spent"
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)


def parse_size(text: str | int | None) -> int:
    """Bytes in '4G', '512M', '1.5g', '1048576'; 0 for 'none', '', '0' or None (no limit)."""
    if text is None or str(text).strip().lower() in ("", "none", "0", "unlimited"):
        return 0
    match = _SIZE.match(str(text))
    if not match:
        raise ValueError(f"not a size: {text!r} (examples: 4G, 512M, none)")
    number, unit = float(match[1]), match[2].lower()
    return int(number * 1024 ** "_kmgt".index(unit or "_"))


def _error(ename: str, evalue: str) -> NotebookNode:
    return new_output("error", ename=ename, evalue=evalue,
                      traceback=[f"\x1b[0;31m{ename}\x1b[0m: {evalue}"])


def _name(cell: NotebookNode, index: int) -> str:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return grade_id or f"cell {index + 1}"


def hidden_paths(course_root: Path | None = None, *extra: Path) -> tuple[str, ...]:
    """What no grading kernel may read, should it lie inside what a kernel is shown (the sandbox,
    autograder/engine/sandbox.py, shows only what a kernel needs to run: the system, the
    environment, the course's packages, its job; these look empty inside it): the graded course's root,
    this checkout's when it is a course (its answers), the grader's HOME (its tokens, other
    copies of the course), the reference answers, and `extra` (the session's folder, the
    submissions, the output)."""
    import helpers.reference
    from autograder.course.settings import REPO_ROOT

    roots = [Path(course_root)] if course_root is not None else []
    if any((REPO_ROOT / name).is_dir() for name in ("source", "grading", ".git")):
        roots.append(REPO_ROOT)
    homes = {os.path.expanduser("~"), os.environ.get("HOME", "")} - {"", "/"}
    paths = [*roots, *map(Path, homes), Path(helpers.reference.__file__).parent, *extra]
    return tuple(sorted({str(Path(p).resolve()) for p in paths}))


class GradingExecute(Execute):
    """nbgrader's Execute that survives dead and stuck kernels and bounds their memory and time."""

    kernel_server = Unicode("", help="Unix socket of the warm kernel server "
                            "(autograder/engine/kernel_server.py); empty: kernels start cold").tag(config=True)
    sandbox = Bool(True, help="Run kernels in the sandbox (autograder/engine/sandbox.py): a read-only "
                   "view of only what a kernel needs, the course hidden, no network, one cgroup").tag(config=True)
    hide = List(Unicode(), help="Paths the kernel sees as empty folders or files where they lie in its "
                "view: the course's roots, the grader's HOME, the outputs (autograder/engine/sandbox.py); "
                "empty: those of this checkout's course (hidden_paths)").tag(config=True)
    interrupt_grace = Float(5.0, help="Seconds a kernel gets to stop after the timeout's "
                            "interrupt; still busy then, it is killed").tag(config=True)
    memory_limit = Unicode("4G", help="Most memory a kernel may allocate, all its processes "
                           "together (its cgroup) and each one (RLIMIT_DATA), e.g. 4G or 512M; "
                           "'none': no limit").tag(config=True)
    process_limit = Integer(512, help="Tasks (processes and threads) of a kernel together; "
                            "0: no limit").tag(config=True)
    cpu_limit = Integer(0, help="CPU seconds a kernel may use (RLIMIT_CPU), all threads "
                        "together; 0: no limit").tag(config=True)
    tmp_size = Unicode("512M", help="A kernel's private /tmp and /dev/shm, each (memory)").tag(
        config=True)
    write_limit = Unicode("512M", help="What a kernel may write into its job folder (a private "
                          "layer, gone with it), and its largest file").tag(config=True)
    output_limit = Unicode("8M", help="Bytes of output a notebook keeps in all; later outputs "
                           "are left out (errors are kept)").tag(config=True)
    output_item_limit = Unicode("1M", help="Bytes one output keeps: text is cut, a larger image "
                                "left out").tag(config=True)
    feed_wait_limit = Float(240.0, help="Seconds of waiting on the feed's answers a cell's timeout "
                            "is extended by, at most: four times the default cell timeout (a kernel "
                            "asking without end, or dating its requests back, gains no more)").tag(config=True)
    notebook_budget = Integer(0, help="Wall-clock seconds for the whole notebook, kernel start "
                              "included; cells after it are not run; 0: no budget").tag(config=True)

    @validate("memory_limit", "tmp_size", "write_limit", "output_limit", "output_item_limit")
    def _valid_size(self, proposal):
        try:
            parse_size(proposal["value"])
        except ValueError as error:
            raise TraitError(str(error)) from None
        return proposal["value"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # nbgrader's Execute hands nbclient its own manager class: set ours after it.
        self.kernel_manager_class = WarmKernelManager
        self._ipc_folders: list[str] = []  # each sandboxed kernel's socket folder
        self._feed_wait = self._feed_wait_granted = 0.0  # see async_execute_cell

    def create_kernel_manager(self):
        km = super().create_kernel_manager()
        hide = list(self.hide)
        if self.sandbox and not hide:  # nbgrader's own command line: this checkout's course
            hide = list(hidden_paths())
        if isinstance(km, WarmKernelManager):
            km.server = self.kernel_server
            km.hide = hide if self.sandbox else []
            km.sandbox = self.sandbox
            km.memory_limit = parse_size(self.memory_limit)
            km.process_limit = self.process_limit if self.sandbox else 0
            km.cpu_limit = self.cpu_limit
            km.tmp_size = parse_size(self.tmp_size)
            km.write_limit = parse_size(self.write_limit)
        if self.sandbox or self.kernel_server:  # without a network: Unix sockets instead of TCP,
            # in the grader's folder, 0700, where the launcher links the kernel's own (short paths:
            # < 108 bytes); the sandbox gives the kernel a capped folder of its own at that path
            folder = tempfile.mkdtemp(prefix="agk-ipc-", dir="/tmp" if os.path.isdir("/tmp") else None)
            self._ipc_folders.append(folder)
            km.transport, km.ip = "ipc", os.path.join(folder, "k")
            km.connection_file = os.path.join(folder, "kernel.json")
            if isinstance(km, WarmKernelManager):
                km.share = [folder]
        return km

    # -- the trusted run's feed and epilogue --------------------------------------------------------

    feed = None  # the trusted run's conversation (autograder/probes/session.py): answers every input(); None: none
    # Set on a subclass made for one job (autograder/engine/job.py), since nbgrader makes the instance:
    epilogue: tuple[str, ...] = ()  # code run after the notebook's cells, in the same kernel
    report: dict | None = None  # filled when an epilogue ran: notebook_ran, epilogue_ran (bools)

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        """With a feed, the cell may call input(): each request is answered here, by `feed(prompt)`,
        so that data reaches the kernel one piece at a time from this side, which counts it. With an
        epilogue, only its cells get the feed: the notebook's own cells see nbgrader's stdin (none)."""
        self._feed_wait = self._feed_wait_granted = 0.0  # this cell's wait on the feed, and what it got
        if self.feed is None or (self.epilogue and not _in_epilogue(cell)):
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        self.kc.allow_stdin = True
        answering = asyncio.ensure_future(self._answer_input_requests())
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        finally:
            answering.cancel()
            self.kc.allow_stdin = False

    execute_cell = run_sync(async_execute_cell)  # nbclient binds its own at class level

    async def _answer_input_requests(self) -> None:
        while True:
            msg = await ensure_async(self.kc.get_stdin_msg(timeout=None))
            if msg.get("msg_type") == "input_request":
                received = monotonic()
                prompt = str((msg.get("content") or {}).get("prompt", ""))  # the feed bounds what it reads
                try:
                    answer = str(self.feed(prompt))
                except Exception:  # a feed that fails answers nothing useful, but the kernel must not wait
                    answer = "refused"
                self.kc.input(answer)
                self._feed_wait += _waited_since_sent(msg, monotonic() - received)

    # -- outputs --------------------------------------------------------------------------------

    def process_message(self, msg, cell, cell_index):
        kind = msg.get("msg_type")
        if kind in ("stream", "display_data", "execute_result", "update_display_data", "error"):
            content = msg.get("content") or {}
            item = parse_size(self.output_item_limit)
            if kind == "error":
                content["evalue"] = str(content.get("evalue", ""))[:item]
                content["traceback"] = [str(line)[:item] for line in content.get("traceback", [])][-200:]
            else:
                size = _size(content)
                self._output_bytes += size
                if self._output_bytes > parse_size(self.output_limit):
                    if not self._output_cut:
                        self._output_cut = True
                        cell.outputs.append(new_output("stream", name="stdout", text=(
                            f"\n[outputs from here on left out: this notebook's outputs passed "
                            f"{self.output_limit}B]\n")))
                    return None
                if size > item:
                    _shorten(content, item)
        return super().process_message(msg, cell, cell_index)

    # -- the notebook ---------------------------------------------------------------------------

    def preprocess(self, nb, resources=None, km=None):
        self._started = monotonic()
        self._stopped: str | None = None  # why the cells from here on are not run
        self._budget_limited = self._timed_out = False  # this cell's timeout is the budget's; fired
        self._killed: str | None = None  # why this cell's kernel was killed
        self._ipc_folders: list[str] = []
        self._output_bytes, self._output_cut = 0, False
        added = [nbformat.v4.new_code_cell(text, metadata={EPILOGUE: True}) for text in self.epilogue]
        self._notebook_ran = None  # whether the notebook's own cells all ran (set at the epilogue)
        nb.cells.extend(added)
        try:
            return super().preprocess(nb, resources, km)
        finally:
            for folder in self._ipc_folders:
                shutil.rmtree(folder, ignore_errors=True)
            if added:
                ran = [c for c in nb.cells if _in_epilogue(c)]
                nb.cells[:] = [c for c in nb.cells if not _in_epilogue(c)]
                if self.report is not None:
                    self.report.update(
                        notebook_ran=bool(self._notebook_ran),
                        epilogue_ran=len(ran) == len(added) and all(
                            c.get("execution_count") is not None and not any(
                                o.get("ename") in (KERNEL_DIED, NOT_RUN) for o in c.get("outputs", []))
                            for c in ran))

    def _budget_left(self) -> float | None:
        if not self.notebook_budget or self._notebook_ran is not None:  # the epilogue has its own
            return None
        return self.notebook_budget - (monotonic() - self._started)

    def preprocess_cell(self, cell, resources, index):
        cell, resources = self._run_cell(cell, resources, index)
        if cell.cell_type == "code":
            # A print arrives in pieces (its text and its newline apart, or flushed as it goes),
            # differently from run to run: each run of same-named streams becomes one output, so
            # the same answer graded twice gives the same notebook and the same feedback page.
            # (Not nbclient's coalesce_streams: its carriage-return regex is quadratic in a line's
            # length, and a 3 MB print held a grading job for minutes.)
            cell.outputs = coalesced_outputs(cell.get("outputs", []))
        return cell, resources

    def _run_cell(self, cell, resources, index):
        if cell.cell_type != "code" or not cell.source.strip():
            return super().preprocess_cell(cell, resources, index)
        if self._notebook_ran is None and _in_epilogue(cell):
            self._notebook_ran = self._stopped is None  # if not, the epilogue is not run either
        left = self._budget_left()
        if self._stopped is None and left is not None and left <= 0:
            self._stopped = BUDGET_SPENT.format(budget=self.notebook_budget)
        if self._stopped is not None:
            cell.outputs, cell.execution_count = [_error(NOT_RUN, self._stopped)], None
            return cell, self.resources
        self._budget_limited = self._timed_out = False
        self._killed: str | None = None
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            self._drain(cell, index)
            why = self._killed or DIED.format(limits=self._limits())
            cell.outputs.append(_error(KERNEL_DIED, why))
            self._stopped = AFTER_DEATH.format(cell=_name(cell, index))
            return cell, self.resources
        if self._timed_out and self._budget_limited:
            for output in cell.outputs:
                if output.get("output_type") == "error" and output.get("ename") == TIMED_OUT:
                    output.update(_error(OUT_OF_TIME, BUDGET_CUT.format(budget=self.notebook_budget)))
            self._stopped = BUDGET_SPENT.format(budget=self.notebook_budget)
        return cell, resources

    def _limits(self) -> str:
        memory = parse_size(self.memory_limit)
        limits = [f"{memory / 2 ** 30:g} GiB of memory"] if memory else []
        limits += [f"{self.cpu_limit} s of CPU time"] if self.cpu_limit else []
        return f" ({' or '.join(limits)})" if limits else ""

    def _drain(self, cell: NotebookNode, index: int) -> None:
        """Add the dead kernel's last outputs that were still in flight (a print before the crash)."""
        async def drain() -> None:
            while self.kc is not None:
                try:
                    msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=0.2))
                except Empty:
                    return
                if msg.get("parent_header", {}).get("msg_type") == "execute_request":
                    self.process_message(msg, cell, index)

        try:
            run_sync(drain)()
        except (CellExecutionComplete, Exception):  # best effort: the kernel is gone anyway
            pass

    # -- time -------------------------------------------------------------------------------------

    def _get_timeout(self, cell):
        """The cell's timeout, cut to what is left of the notebook's budget."""
        timeout = super()._get_timeout(cell)
        left = self._budget_left() if cell is not None else None
        if left is None:
            return timeout
        left = max(1, math.ceil(left))
        if timeout is None or left < timeout:
            self._budget_limited = True
            return left
        return timeout

    async def _async_handle_timeout(self, timeout, cell=None):
        """Interrupt as nbgrader does; a kernel still busy `interrupt_grace` s later is killed.
        A cell whose kernel waited on the feed's answers first gets that time more."""
        reply = await self._async_reply_within_feed_wait()
        if reply is not None:
            return reply
        self._timed_out = True
        reply = await super()._async_handle_timeout(timeout, cell)
        answer = await self._async_answer_after_interrupt()
        if answer is None:
            self.log.error("Kernel still busy %s s after the interrupt: killing it",
                           self.interrupt_grace)
            await self._async_kill_kernel()
            self._killed = STOPPED.format(timeout=timeout)
            raise DeadKernelError("the kernel ignored the interrupt")
        return reply or answer

    async def _async_reply_within_feed_wait(self) -> dict | None:
        """The cell's execute_reply, waited for as long as its kernel waited on the feed's answers
        (which go on, adding more), up to `feed_wait_limit`; None when it does not come in that time
        or the cell had no feed."""
        granted = self._feed_wait_granted
        while (more := min(self._feed_wait, self.feed_wait_limit) - granted) > 0:
            granted = self._feed_wait_granted = granted + more
            reply = await self._async_reply_within(more)
            if reply is not None:
                return reply
        return None

    async def _async_answer_after_interrupt(self) -> dict | None:
        """The interrupted cell's execute_reply, or None if none comes within the grace.

        nbclient uses its own error reply for a timed-out cell; the kernel's, read here, would
        otherwise wait in the shell channel (none arrives from a kernel that ignored SIGINT).
        """
        return await self._async_reply_within(self.interrupt_grace)

    async def _async_reply_within(self, seconds: float) -> dict | None:
        """The execute_reply the shell channel brings within `seconds`, or None; a kernel that
        dies meanwhile raises DeadKernelError."""
        deadline = monotonic() + seconds
        while (left := deadline - monotonic()) > 0:
            try:
                msg = await ensure_async(self.kc.shell_channel.get_msg(timeout=min(left, 0.5)))
            except Empty:
                if not await ensure_async(self.km.is_alive()):
                    raise DeadKernelError("Kernel died") from None
                continue
            if msg.get("msg_type") == "execute_reply":
                return msg
        return None

    async def _async_kill_kernel(self) -> None:
        """SIGKILL the kernel's process group (a warm kernel's launcher: the server kills the
        kernel then); wait until it is gone."""
        try:
            await ensure_async(self.km.signal_kernel(signal.SIGKILL))
        except (OSError, RuntimeError):
            pass
        for _ in range(50):
            if not await ensure_async(self.km.is_alive()):
                return
            await asyncio.sleep(0.1)


# One answer of the feed counts at most this much waiting: 06's 1,230 round trips took tens of ms
# each beside a busy neighbour; a request dated further back is forged or the machine too busy to grade.
_MAX_ROUND_TRIP = 1.0


def _waited_since_sent(request: dict, handled: float) -> float:
    """Seconds the kernel has waited on an input_request just answered: since the kernel sent it
    (its header's date, the same machine's clock), or, without a readable date, the `handled`
    seconds it took this side to answer. The kernel writes that date: at most _MAX_ROUND_TRIP."""
    sent = (request.get("header") or {}).get("date")
    if isinstance(sent, str):
        try:
            sent = datetime.fromisoformat(sent.replace("Z", "+00:00"))
        except ValueError:
            sent = None
    if isinstance(sent, datetime) and sent.tzinfo is not None:
        waited = (datetime.now(timezone.utc) - sent).total_seconds()
        if 0 <= waited < 3600:  # a clock that jumped says nothing
            return min(max(waited, handled), _MAX_ROUND_TRIP)
    return min(handled, _MAX_ROUND_TRIP)


def _in_epilogue(cell: NotebookNode) -> bool:
    return bool(cell.get("metadata", {}).get(EPILOGUE))


def _size(content: dict) -> int:
    """Bytes an output message carries (its text or its data), roughly."""
    if "text" in content:
        return len(str(content["text"]))
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in
               (content.get("data") or {}).values())


def _shorten(content: dict, limit: int) -> None:
    """Cut an output message to `limit` bytes: its text cut, larger data left out."""
    note = f"\n[output cut: it passed {limit} bytes]\n"
    if "text" in content:
        content["text"] = str(content["text"])[:limit] + note
        return
    data = content.get("data") or {}
    text = str(data.get("text/plain", ""))[:limit]
    content["data"] = {"text/plain": text + note}
    content["metadata"] = {}


# -- reading the marks back ----------------------------------------------------------------------

def _errors(nb: NotebookNode):
    """(index, cell, error output) for each error output of each code cell."""
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    yield index, cell, output


def kernel_deaths(nb: NotebookNode) -> list[str]:
    """One warning per cell where the kernel died or was stopped, naming it, from the
    autograded notebook (e.g. 'the kernel died in mean_square: ...; 3 later cells not run')."""
    warnings = []
    marks = list(_errors(nb))
    for index, cell, output in marks:
        if output.get("ename") == KERNEL_DIED:
            later = sum(1 for i, _, o in marks if i > index and o.get("ename") == NOT_RUN
                        and str(o.get("evalue", "")).startswith("not run: the kernel died"))
            what = "was stopped" if "kernel was stopped" in str(output.get("evalue")) else "died"
            warnings.append(f"the kernel {what} in {_name(cell, index)}; {later} later "
                            f"cell(s) not run, the points before it kept")
    return warnings


def budget_overruns(nb: NotebookNode) -> list[str]:
    """A warning when the notebook's time budget ran out, naming the cell where it did."""
    marks = list(_errors(nb))
    later = sum(1 for _, _, o in marks
                if o.get("ename") == NOT_RUN and "time budget" in str(o.get("evalue", "")))
    for index, cell, output in marks:
        budget = re.search(r"budget of (\d+) s", str(output.get("evalue", "")))
        if output.get("ename") in (OUT_OF_TIME, NOT_RUN) and budget:
            where = "ran out in" if output.get("ename") == OUT_OF_TIME else "was spent before"
            return [f"the notebook's time budget of {budget[1]} s {where} {_name(cell, index)}; "
                    f"{later} cell(s) not run, the points before kept"]
    return []

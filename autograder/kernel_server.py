"""Warm kernels: fork each grading kernel from a process that has already imported torch.

A fresh IPython kernel spends ~1 s starting and ~2 s importing torch before the notebook's
first line does any work; a check of the course starts about sixty of them. The kernel server
pays that once: it imports ipykernel, numpy and torch, then waits on a Unix socket. A kernel
start becomes a tiny *launcher* process (what jupyter_client actually starts, see
autograder/warm_kernel.py) that asks the server to fork; the forked child takes the
launcher's stdin/stdout/stderr, environment and working folder, and runs ipykernel exactly
as `python -m ipykernel_launcher` would. Each kernel is still a separate process with a
private copy of memory: nothing one notebook does reaches another. The preloaded modules read
their environment variables at import, in the server; a kernel's environment differs from the
server's only by what jupyter_client and nbgrader add (JPY_PARENT_PID, passed on again below,
and NBGRADER_EXECUTION, which only notebooks read).

The launcher stands in for the kernel towards jupyter_client: signals it receives (the
timeout's interrupt, a shutdown) are passed on, and it exits with the kernel's exit status,
so a kernel killed by `os._exit` is seen as dead. If the launcher is killed outright (the
grader's last resort against a kernel that ignores the interrupt), the server kills the
kernel's process group. When no server answers, or SOCKET is `-`, the launcher simply execs
the ordinary kernel command. Nothing here imports more than the standard library.

Limits and hiding, for warm and cold kernels alike: the launcher's `--memory BYTES` (the
kernel's data segment, RLIMIT_DATA), `--cpu SECONDS` (RLIMIT_CPU) and `--hide PATH` (the path
looks empty to the kernel, autograder/sandbox.py) are set in the kernel process before it runs
a line: in the forked child, or in the launcher just before it execs a cold kernel. A server
started with `--hide` enters the sandbox itself, before preloading, and every kernel it forks
then also gets a user namespace of its own (kernels cannot reach each other or the server).
Kernels never write core files.

    python -m autograder.kernel_server serve SOCKET [--hide PATH]...   # the server
    python -m autograder.kernel_server launch SOCKET|- [--hide PATH]... [--memory BYTES]
                                       [--cpu SECONDS] -- CMD          # a launcher
"""

from __future__ import annotations

import array
import atexit
import json
import os
import resource
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NoReturn

from autograder import sandbox

# Imported once in the server, inherited by every kernel: the costly, side-effect-free ones
# (torch alone is ~1.5 s of CPU per kernel; every setup cell ends in `%matplotlib inline`).
PRELOAD = ("numpy", "torch", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel",
           "matplotlib.pyplot", "matplotlib_inline.backend_inline")
_LAUNCH_TIMEOUT = 30.0
_RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
            signal.SIGUSR2)


# -- wire format: 3 bytes + stdin/stdout/stderr fds, then a length-prefixed JSON request ----------

def _recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("peer closed")
        data += chunk
    return data


def _recv_request(conn: socket.socket) -> tuple[dict, list[int]]:
    fds = array.array("i")
    msg, ancdata, _, _ = conn.recvmsg(3, socket.CMSG_SPACE(3 * fds.itemsize))
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
    msg += _recv_exactly(conn, 3 - len(msg))
    (length,) = struct.unpack("!I", _recv_exactly(conn, 4))
    return json.loads(_recv_exactly(conn, length)), list(fds)


# -- limits ------------------------------------------------------------------------------------------

def set_limits(memory: int | None, cpu: int | None) -> None:
    """Bound this process and its children: data segment `memory` bytes, `cpu` CPU seconds, no core.

    RLIMIT_DATA, not RLIMIT_AS: it counts what a kernel writes to (heap, arrays, tensors) and not
    the address space that torch and CUDA only reserve, so an allocation past it fails at once
    (MemoryError, or torch's RuntimeError) instead of waking the machine's OOM killer. At the CPU
    limit the kernel gets SIGXCPU (it dies), and SIGKILL five seconds of CPU later.
    """
    limits = [(resource.RLIMIT_CORE, 0)]
    if memory:
        limits.append((resource.RLIMIT_DATA, int(memory)))
    if cpu:
        limits.append((resource.RLIMIT_CPU, int(cpu)))
    for kind, value in limits:
        try:
            _, hard = resource.getrlimit(kind)
            top = value + 5 if kind == resource.RLIMIT_CPU else value
            if hard != resource.RLIM_INFINITY:
                value, top = min(value, hard), min(top, hard)
            resource.setrlimit(kind, (value, top))
        except (OSError, ValueError) as error:  # a platform without it: say so, run anyway
            print(f"autograder: could not set a kernel limit ({error})", file=sys.stderr)


def _confine(hide: list[str], memory: int | None, cpu: int | None, always: bool = False,
             keep: str | None = None) -> None:
    """Hide `hide` but `keep` (a user namespace of its own anyway when `always`), then set the
    limits."""
    if hide or always:
        try:
            sandbox.enter(hide, keep)
        except OSError as error:
            print(f"autograder: the kernel runs unsandboxed ({error})", file=sys.stderr)
    set_limits(memory, cpu)


# -- the server ---------------------------------------------------------------------------------------

def _run_kernel(request: dict, fds: list[int], sandboxed: bool = False) -> NoReturn:
    """In the forked child: become the kernel the launcher asked for; never returns."""
    os.setsid()
    try:  # `ps` and `top` then say what this process is (Linux; cosmetic elsewhere)
        Path("/proc/self/comm").write_text("ipykernel")
    except OSError:
        pass
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    for signum in (*_RELAYED, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _confine(list(request.get("hide") or ()), request.get("memory"), request.get("cpu"),
             always=sandboxed, keep=request["cwd"])  # the kernel's own job folder stays
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    args = list(request["args"])
    if os.environ.get("JPY_PARENT_PID"):  # ipykernel read it at import, in the server: say it again
        args.append(f"--IPKernelApp.parent_handle={int(os.environ['JPY_PARENT_PID'])}")
    sys.argv = ["ipykernel_launcher", *args]
    code = 0
    try:
        from ipykernel import kernelapp

        kernelapp.launch_new_instance()
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve(path: str, hide: list[str] | None = None) -> None:
    """Listen on `path`, preload, fork a kernel per request; exit when the parent goes.

    hide: paths hidden from the server and so from every kernel (autograder/sandbox.py); the
    "listening" line it prints says whether that worked. The socket listens before the preloading
    starts: launchers that come early wait in its backlog instead of falling back to a cold
    kernel.
    """
    if sys.path and Path(sys.path[0] or ".").resolve() == Path.cwd():
        del sys.path[0]  # like ipykernel_launcher: the kernel adds its own folder back
    sandboxed, status = False, ""
    if hide:  # now, while this process has one thread: torch starts more
        try:
            sandbox.enter(hide)
            sandboxed, status = True, " sandbox: on"
        except OSError as error:
            status = f" sandbox: failed: {error}".replace("\n", " ")
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    print(f"listening{status}", flush=True)  # one line: the reader selects, then reads one
    for module in PRELOAD:
        try:
            __import__(module)
        except ImportError:
            pass
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    children: dict[int, socket.socket] = {}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while os.getppid() == parent:
            for key, _ in selector.select(timeout=0.05):
                if key.fileobj is listener:
                    conn, _ = listener.accept()
                    conn.settimeout(5)  # a launcher sends at once; never let one stall the rest
                    try:
                        request, fds = _recv_request(conn)
                    except (OSError, ValueError, ConnectionError):
                        conn.close()
                        continue
                    conn.settimeout(None)
                    pid = os.fork()
                    if pid == 0:
                        selector.close()
                        listener.close()
                        for other in children.values():
                            other.close()
                        conn.close()
                        _run_kernel(request, fds, sandboxed)
                    for fd in fds:
                        os.close(fd)
                    conn.sendall(struct.pack("!i", pid))
                    children[pid] = conn
                    selector.register(conn, selectors.EVENT_READ, pid)
                else:  # a launcher's connection: readable only when it went away
                    pid = key.data
                    if not key.fileobj.recv(1):
                        selector.unregister(key.fileobj)
                        _kill(pid)
            while children:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                conn = children.pop(pid, None)
                if conn is not None:
                    try:
                        selector.unregister(conn)
                    except (KeyError, ValueError):
                        pass
                    try:
                        conn.sendall(struct.pack("!i", os.waitstatus_to_exitcode(status)))
                    except OSError:
                        pass
                    conn.close()
    finally:
        for pid in children:
            _kill(pid)


def _signal(pid: int, signum: int) -> None:
    """Signal a kernel and whatever it started (DataLoader workers...): it leads its own group,
    as a kernel started by jupyter_client does."""
    try:
        os.killpg(pid, signum)
    except OSError:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass


def _kill(pid: int) -> None:
    _signal(pid, signal.SIGKILL)


# -- the launcher -----------------------------------------------------------------------------------

def launch(path: str, command: list[str], hide: list[str] | None = None,
           memory: int | None = None, cpu: int | None = None) -> int:
    """Ask the server at `path` for a kernel running `command`; relay signals; return its code.

    `path` "-": no server. hide, memory, cpu: see the module's docstring.
    """
    hide = list(hide or ())
    is_ipykernel = path != "-" and (len(command) >= 3 and command[1:3] == ["-m", "ipykernel_launcher"]
                    and os.path.realpath(command[0]) == os.path.realpath(sys.executable))
    conn = None
    if is_ipykernel:
        try:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.settimeout(_LAUNCH_TIMEOUT)
            conn.connect(path)
            body = json.dumps({"args": command[3:], "env": dict(os.environ), "cwd": os.getcwd(),
                               "hide": hide, "memory": memory, "cpu": cpu}).encode()
            conn.sendmsg([b"REQ"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                     array.array("i", [0, 1, 2]))])
            conn.sendall(struct.pack("!I", len(body)) + body)
            (pid,) = struct.unpack("!i", _recv_exactly(conn, 4))
        except OSError:
            conn = None
    if conn is None:  # no server: the ordinary kernel, in this very process
        _confine(hide, memory, cpu, keep=os.getcwd())
        os.execv(command[0], command)

    def relay(signum, _frame):
        _signal(pid, signum)

    for signum in _RELAYED:
        signal.signal(signum, relay)
    conn.settimeout(None)
    try:
        (code,) = struct.unpack("!i", _recv_exactly(conn, 4))
    except ConnectionError:  # the server is gone, and the kernel with it
        return 1
    if code < 0:  # killed by a signal: die the same way, for whoever watches this process
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGSEGV here must not dump core
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their default anyway
            pass
        os.kill(os.getpid(), -code)
    return code


# -- starting and stopping a server ----------------------------------------------------------------

class KernelServer:
    """A kernel server for the length of a `with` block.

    `.socket` is its address once it listens, or None where it cannot run (no fork, no Unix
    sockets, AUTOGRADER_WARM_KERNELS=0, or it failed to start): callers then use ordinary
    kernels. Entering returns as soon as the socket listens; the preloading goes on meanwhile.

    hide: paths that no kernel forked from it can read (autograder/sandbox.py). `.sandboxed`
    says whether they are hidden; `.sandbox_problem` why not (for the grading report), None
    when they are or when nothing was to be hidden.
    """

    def __init__(self, enabled: bool | None = None, start_timeout: float = 30.0,
                 hide: list[str] | tuple[str, ...] = ()):
        if enabled is None:
            enabled = os.environ.get("AUTOGRADER_WARM_KERNELS", "1") not in ("0", "false", "no")
        self.enabled = enabled and hasattr(socket, "AF_UNIX") and hasattr(os, "fork")
        self.start_timeout = start_timeout
        self.hide = [str(p) for p in hide]
        self.sandboxed = False
        self.sandbox_problem: str | None = None
        self.socket: str | None = None
        self._process: subprocess.Popen | None = None
        self._dir: str | None = None

    def __enter__(self) -> KernelServer:
        if not self.enabled:
            if self.hide:
                self.sandbox_problem = "no kernel server runs, so its kernels are not sandboxed"
            return self
        self._dir = tempfile.mkdtemp(prefix="agk-", dir="/tmp" if os.path.isdir("/tmp") else None)
        path = os.path.join(self._dir, "s")  # short: Unix socket paths stop at ~100 bytes
        # The preloaded matplotlib reads MPLBACKEND once, in the server: give it the value the
        # grading workers give their kernels (autograder/engine.py).
        env = {**os.environ, "MPLBACKEND": os.environ.get("MPLBACKEND", "Agg")}
        hide = [arg for p in self.hide for arg in ("--hide", p)]
        self._process = subprocess.Popen(
            [sys.executable, "-m", "autograder.kernel_server", "serve", path, *hide],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env)
        deadline = time.monotonic() + self.start_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline and self._process.poll() is None:
                if selector.select(timeout=0.1):
                    line = self._process.stdout.readline().strip()
                    if line.startswith("listening"):
                        self.socket = path
                        self.sandboxed = line.endswith(" sandbox: on")
                        if "sandbox: failed: " in line:
                            self.sandbox_problem = (
                                "kernels are not sandboxed (mount namespaces not allowed here: "
                                f"{line.split('sandbox: failed: ', 1)[1]})")
                    break
        if self.socket is None:
            print("autograder: the kernel server did not start; every kernel starts cold (slower)",
                  file=sys.stderr)
            self.sandboxed = False
            if self.hide and self.sandbox_problem is None:
                self.sandbox_problem = "the kernel server did not start, so its kernels are not sandboxed"
        return self

    def __exit__(self, *exc) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process.stdout.close()
        if self._dir is not None:
            for name in os.listdir(self._dir):
                os.unlink(os.path.join(self._dir, name))
            os.rmdir(self._dir)


def _options(args: list[str]) -> dict[str, list[str]] | None:
    """`--name value` pairs (repeatable) into {name: [values]}; None when malformed."""
    options: dict[str, list[str]] = {"hide": [], "memory": [], "cpu": []}
    if len(args) % 2:
        return None
    for name, value in zip(args[::2], args[1::2]):
        if name[2:] not in options or not name.startswith("--"):
            return None
        options[name[2:]].append(value)
    return options


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) >= 2:
        options = _options(argv[2:])
        if options is not None:
            serve(argv[1], options["hide"])
            return 0
    if argv[:1] == ["launch"] and "--" in argv[2:]:
        split = argv.index("--", 2)
        options, command = _options(argv[2:split]), argv[split + 1:]
        if options is not None and command:
            memory, cpu = (int(options[k][-1]) if options[k] else None for k in ("memory", "cpu"))
            return launch(argv[1], command, options["hide"], memory, cpu)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

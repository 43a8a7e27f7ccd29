"""Warm kernels: fork each grading kernel from a process that has already imported torch.

A fresh IPython kernel spends ~1 s starting and ~2 s importing torch before the notebook's
first line does any work; a check of the course starts about sixty of them. The kernel server
pays that once: it imports ipykernel, numpy and torch, then waits on a Unix socket. A kernel
start becomes a tiny *launcher* process (what jupyter_client actually starts, see
autograder/engine/warm_kernel.py) that asks the server to fork; the forked child takes the
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

Limits and the sandbox, for warm and cold kernels alike, are the launcher's options (`Options`):
memory (each process's data segment, RLIMIT_DATA, and the kernel's cgroup as a whole), processes
(its cgroup's tasks), cpu (RLIMIT_CPU), writes (what it may write into its job folder, and any
one file: RLIMIT_FSIZE), tmp (its /tmp and /dev/shm), hide (paths that look empty to it), share
(its socket folders) and sandbox (on or off). The launcher stays outside: it
makes the kernel's cgroup (autograder/engine/cgroups.py), and links the sockets
the sandboxed kernel binds in a folder of its own into the grader's socket folder, which the kernel
never sees (`link_sockets`). The kernel's own process joins the cgroup and enters the sandbox
before it runs a line, as process 1 of a PID namespace whose supervisor is the forked child (warm)
or the launcher's child (cold); its descriptors 0, 1 and 2 then become /dev/null (they were the
grader's terminal). When the kernel ends, the launcher kills what is left in its cgroup and
removes it. The launcher itself runs `python -I` (a folder a kernel wrote into is never on its
path). Kernels never write core files; their environment is an allow-list
(sandbox.kernel_environment), and the server starts with that environment already, since a forked
kernel's /proc/self/environ shows the server's.

    python -m autograder.engine.kernel_server serve SOCKET                              # the server
    python -m autograder.engine.kernel_server launch SOCKET|- [--OPTION VALUE]... -- CMD   # a launcher
"""

from __future__ import annotations

import array
import atexit
import hashlib
import json
import os
import resource
import select
import selectors
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import NoReturn

from autograder.engine import cgroups, privsep, sandbox

# Imported once in the server, inherited by every kernel: the costly, side-effect-free ones
# (torch alone is ~1.5 s of CPU per kernel; every setup cell ends in `%matplotlib inline`).
# torch._dynamo (about 890 modules, 1.2-1.7 s here): torch imports it at the first call of any
# function it wraps with torch._disable_dynamo, such as a meta tensor's mean (02's view-bytes
# question and its probe): every 02 kernel paid it, 1.5-3 s. It starts no thread and computes
# nothing at import that depends on the user a kernel runs as. Its price, once per grading session.
PRELOAD = ("numpy", "torch", "torch._dynamo", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel",
           "matplotlib.pyplot", "matplotlib_inline.backend_inline")
_LAUNCH_TIMEOUT = 30.0
_LINK_TIMEOUT = 120.0  # seconds a kernel gets to make its sockets (nbclient waits 60 for a start)
_RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
            signal.SIGUSR2)
_MAX_FDS = 16  # stdin, stdout, stderr, the cgroups' procs files


@dataclass
class Options:
    """What the launcher is told about one kernel (see the module's docstring); 0: no limit."""

    memory: int = 0
    processes: int = 0
    cpu: int = 0
    writes: int = 0
    tmp: int = 0
    hide: list[str] = field(default_factory=list)
    share: list[str] = field(default_factory=list)
    sandbox: int = 0

    def arguments(self) -> list[str]:
        """As the launcher's command line."""
        args: list[str] = []
        for f in fields(self):
            value = getattr(self, f.name)
            for item in value if isinstance(value, list) else [value] if value else []:
                args += [f"--{f.name}", str(item)]
        return args

    @classmethod
    def parse(cls, args: list[str]) -> Options | None:
        """From `--name value` pairs (lists repeat); None when malformed."""
        options = cls()
        kinds = {f.name: f for f in fields(cls)}
        if len(args) % 2:
            return None
        for name, value in zip(args[::2], args[1::2]):
            if not name.startswith("--") or name[2:] not in kinds:
                return None
            current = getattr(options, name[2:])
            try:
                if isinstance(current, list):
                    current.append(value)
                else:
                    setattr(options, name[2:], type(current)(value))
            except ValueError:
                return None
        return options

    def plan(self, job: str) -> sandbox.Plan:
        return sandbox.Plan(hide=tuple(self.hide), job=job, shared=tuple(self.share),
                            tmp_size=self.tmp or 512 << 20, job_size=self.writes or 512 << 20)


# -- wire format: 3 bytes + descriptors, then a length-prefixed JSON request ----------------------

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
    msg, ancdata, _, _ = conn.recvmsg(3, socket.CMSG_SPACE(_MAX_FDS * fds.itemsize))
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
    msg += _recv_exactly(conn, 3 - len(msg))
    (length,) = struct.unpack("!I", _recv_exactly(conn, 4))
    return json.loads(_recv_exactly(conn, length)), list(fds)


# -- limits ------------------------------------------------------------------------------------------

def set_limits(memory: int | None, cpu: int | None, writes: int | None = None) -> None:
    """Bound this process and its children: data segment `memory` bytes, `cpu` CPU seconds, no
    file larger than `writes` bytes, no core.

    RLIMIT_DATA, not RLIMIT_AS: it counts what a kernel writes to (heap, arrays, tensors) and not
    the address space that torch and CUDA only reserve, so an allocation past it fails at once
    (MemoryError, or torch's RuntimeError) instead of waking the OOM killer. The cgroup
    (autograder/engine/cgroups.py) caps the kernel's processes together. At the CPU limit the kernel gets
    SIGXCPU (it dies), and SIGKILL five seconds of CPU later.
    """
    limits = [(resource.RLIMIT_CORE, 0)]
    if memory:
        limits.append((resource.RLIMIT_DATA, int(memory)))
    if cpu:
        limits.append((resource.RLIMIT_CPU, int(cpu)))
    if writes:
        limits.append((resource.RLIMIT_FSIZE, int(writes)))
    for kind, value in limits:
        try:
            _, hard = resource.getrlimit(kind)
            top = value + 5 if kind == resource.RLIMIT_CPU else value
            if hard != resource.RLIM_INFINITY:
                value, top = min(value, hard), min(top, hard)
            resource.setrlimit(kind, (value, top))
        except (OSError, ValueError) as error:  # a platform without it: say so, run anyway
            print(f"autograder: could not set a kernel limit ({error})", file=sys.stderr)


def _become_kernel(options: Options, env: dict, cwd: str, cgroup_fds: list[int]) -> dict[str, str]:
    """In the process that becomes the kernel: join its cgroup, enter the sandbox (this returns in
    the kernel, process 1 of its namespace), set the limits; the kernel's environment."""
    cgroups.join(cgroup_fds)
    home = cwd
    if options.sandbox:  # the namespace sandbox; without one, a user of its own (privsep.py)
        try:
            lines, home = privsep.isolate(options.plan(cwd), env, options.processes)
        except sandbox.SandboxBroken as error:  # half-made: this process must not run a kernel
            print(f"autograder: the kernel cannot start: {error}", file=sys.stderr, flush=True)
            os._exit(1)
        for line in lines:
            print(f"autograder: {line}", file=sys.stderr)
    set_limits(options.memory, options.cpu, options.writes)
    if options.sandbox:
        _silence()
    return sandbox.kernel_environment(env, home=home)


def _silence() -> None:
    """The kernel's descriptors 0, 1 and 2 become /dev/null, once this trusted part has said what it
    had to: they were the grader's (its terminal), and ipykernel echoes there whatever reaches them
    (`os.write(1, ...)`, a child's output). What a kernel prints reaches the grader as messages only."""
    sys.stdout.flush()
    sys.stderr.flush()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


# -- the server ---------------------------------------------------------------------------------------

def _run_kernel(request: dict, fds: list[int]) -> NoReturn:
    """In the forked child: become the kernel the launcher asked for; never returns."""
    os.setsid()
    try:  # `ps` and `top` then say what this process is (Linux; cosmetic elsewhere)
        Path("/proc/self/comm").write_text("ipykernel")
    except OSError:
        pass
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    extra = fds[3:]
    count = int(request.get("cgroups", 0))
    for signum in (*_RELAYED, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    options = Options(**{k: v for k, v in request.get("options", {}).items()
                         if k in {f.name for f in fields(Options)}})
    env = _become_kernel(options, request["env"], request["cwd"], extra[:count])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(env)
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


def serve(path: str) -> None:
    """Listen on `path`, preload, fork a kernel per request; exit when the parent goes.

    The socket listens before the preloading starts: launchers that come early wait in its
    backlog instead of falling back to a cold kernel.
    """
    if sys.path and Path(sys.path[0] or ".").resolve() == Path.cwd():
        del sys.path[0]  # like ipykernel_launcher: the kernel adds its own folder back
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(128)
    print("listening", flush=True)  # one line: the reader selects, then reads one
    for module in PRELOAD:
        try:
            __import__(module)
        except ImportError:
            pass
    from autograder import SKIPPED_IMPORTS

    for module in SKIPPED_IMPORTS:  # a kernel imports them as any Python would (autograder/__init__.py)
        if sys.modules.get(module, "") is None:
            del sys.modules[module]
    sandbox.problems()  # tried once here: every kernel forked from here knows what it can have
    print("preloaded", flush=True)  # for whoever must have a warm kernel (wait_preloaded)
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
                        _run_kernel(request, fds)
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

def _connection_files(command: list[str]) -> list[str]:
    files = [command[i + 1] for i, arg in enumerate(command[:-1]) if arg in ("-f", "--f")]
    return files + [arg.split("=", 1)[1] for arg in command if arg.startswith(("-f=", "--f="))]


def socket_paths(command: list[str], folders: list[str]) -> list[str]:
    """The Unix sockets the kernel of `command` binds (its connection file's ipc endpoints) that lie
    in `folders` (its socket folders)."""
    folders = [os.path.realpath(f) for f in folders]
    found = []
    for path in _connection_files(command):
        try:
            with open(path) as f:
                info = json.load(f)
        except (OSError, ValueError):
            continue
        if info.get("transport") != "ipc":
            continue
        for key in ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port"):
            endpoint = f"{info.get('ip')}-{info.get(key)}"
            if os.path.dirname(os.path.realpath(endpoint)) in folders:
                found.append(endpoint)
    return found


def link_sockets(pid: int, paths: list[str], running, timeout: float = _LINK_TIMEOUT) -> list[int]:
    """Reach a sandboxed kernel's sockets from the grader's socket folder.

    The kernel (`pid`: its supervisor, in its mount namespace) binds its sockets in a folder of its
    own at the same paths (autograder/engine/sandbox.py); the grader's folder is not in its view. As
    each socket appears, this opens it through the kernel's root (/proc/PID/root, the last name not
    followed, a socket or nothing) and puts at its path in the grader's folder a link to that
    descriptor (/proc/<this launcher>/fd/N): whatever the kernel later puts at those names, the
    grader reaches only the sockets it made before it ran any student code. Returns the descriptors,
    held until the kernel ends. A kernel without the sandbox binds in the grader's folder itself:
    nothing to link. Gives up when `running()` turns False or after `timeout` seconds."""
    pending, held = list(paths), []
    deadline, pause = time.monotonic() + timeout, 0.002
    while pending and time.monotonic() < deadline and running():
        for path in list(pending):
            try:
                fd = os.open(f"/proc/{pid}/root{path}", os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue
            inside = os.fstat(fd)
            try:
                outside = os.lstat(path)
            except OSError:
                outside = None
            if not stat.S_ISSOCK(inside.st_mode) or (
                    outside is not None and (outside.st_dev, outside.st_ino) == (inside.st_dev, inside.st_ino)):
                os.close(fd)  # not a socket (yet), or the grader's own folder: an unsandboxed kernel's
                if stat.S_ISSOCK(inside.st_mode):
                    pending.remove(path)
                continue
            link = f"{path}.{os.getpid()}.link"
            os.symlink(f"/proc/{os.getpid()}/fd/{fd}", link)
            os.replace(link, path)
            held.append(fd)
            pending.remove(path)
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return held


def launch(path: str, command: list[str], options: Options | None = None) -> int:
    """Ask the server at `path` for a kernel running `command` (`path` "-": no server); relay
    signals; return its exit code. Options: see the module's docstring."""
    options = options or Options()
    is_ipykernel = path != "-" and (len(command) >= 3 and command[1:3] == ["-m", "ipykernel_launcher"]
                    and os.path.realpath(command[0]) == os.path.realpath(sys.executable))
    sockets = socket_paths(command, options.share) if options.sandbox else []
    group = cgroups.KernelCgroup(options.memory, options.processes) if options.sandbox else None
    try:
        code = _warm(path, command, options, group, sockets) if is_ipykernel else None
        if code is None:
            code = _cold(command, options, group, sockets)
    finally:
        if group is not None:
            group.close()
    return sandbox.exit_like(code)


def _warm(path: str, command: list[str], options: Options, group, sockets: list[str]) -> int | None:
    """The kernel forked by the server; its exit code, or None when no server answered."""
    cgroup_fds = group.fds() if group is not None else []
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(_LAUNCH_TIMEOUT)
        conn.connect(path)
        body = json.dumps({"args": command[3:], "env": dict(os.environ), "cwd": os.getcwd(),
                           "options": asdict(options), "cgroups": len(cgroup_fds)}).encode()
        fds = [0, 1, 2, *cgroup_fds]
        conn.sendmsg([b"REQ"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        conn.sendall(struct.pack("!I", len(body)) + body)
        (pid,) = struct.unpack("!i", _recv_exactly(conn, 4))
    except OSError:
        return None
    finally:
        for fd in cgroup_fds:
            os.close(fd)

    def relay(signum, _frame):
        _signal(pid, signum)

    for signum in _RELAYED:
        signal.signal(signum, relay)
    conn.settimeout(None)
    held = link_sockets(pid, sockets, lambda: not select.select([conn], [], [], 0)[0])
    try:
        (code,) = struct.unpack("!i", _recv_exactly(conn, 4))
    except ConnectionError:  # the server is gone, and the kernel with it
        return 1
    finally:
        for fd in held:
            os.close(fd)
    return code


def _cold(command: list[str], options: Options, group, sockets: list[str]) -> int:
    """The ordinary kernel command, in a child of this launcher; its exit code."""
    cgroup_fds = group.fds() if group is not None else []
    env = dict(os.environ)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel gets it: the same process group
    pid = os.fork()
    if pid == 0:  # pragma: no cover (child)
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            kernel_env = _become_kernel(options, env, os.getcwd(), cgroup_fds)
            os.execve(command[0], command, kernel_env)
        finally:
            os._exit(127)
    for fd in cgroup_fds:
        os.close(fd)

    def stop(_signum, _frame):
        _kill(pid)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, stop)
    ended: list[int] = []

    def running() -> bool:
        if not ended:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                ended.append(status)
        return not ended

    held = link_sockets(pid, sockets, running)
    try:
        while not ended:
            try:
                ended.append(os.waitpid(pid, 0)[1])
            except InterruptedError:
                continue
    finally:
        for fd in held:
            os.close(fd)
    return os.waitstatus_to_exitcode(ended[0])


# -- starting and stopping a server ----------------------------------------------------------------

# A server that a caller started for several grading sessions (a test run: one per worker, tests/conftest.py):
# "<digest>:<socket>", the digest that of the environment its kernels get (server_environment).
# A session whose kernels would get another environment, or another Python, starts its own.
SHARED = "AUTOGRADER_KERNEL_SERVER"


def server_environment() -> dict[str, str]:
    """The server's environment, which is its kernels' (a forked kernel's /proc/self/environ shows
    it): the allow-list, with the grading workers' MPLBACKEND (autograder/engine/job.py)."""
    return sandbox.kernel_environment({**os.environ, "MPLBACKEND": os.environ.get("MPLBACKEND", "Agg")},
                                      home=os.environ.get("HOME", "/"))


def _digest(env: dict[str, str]) -> str:
    text = json.dumps([sys.executable, PRELOAD, sorted(env.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class KernelServer:
    """A kernel server for the length of a `with` block.

    `.socket` is its address once it listens, or None where it cannot run (no fork, no Unix
    sockets, AUTOGRADER_WARM_KERNELS=0, or it failed to start): callers then use ordinary
    kernels. Entering returns as soon as the socket listens; the preloading goes on meanwhile.
    reuse: take the server that SHARED names instead, when its kernels get exactly the environment
    this one's would (nothing is started or stopped then). `.shared` is what SHARED should hold for
    others to reuse this one.
    """

    def __init__(self, enabled: bool | None = None, start_timeout: float = 30.0, reuse: bool = False):
        if enabled is None:
            enabled = os.environ.get("AUTOGRADER_WARM_KERNELS", "1") not in ("0", "false", "no")
        self.enabled = enabled and hasattr(socket, "AF_UNIX") and hasattr(os, "fork")
        self.start_timeout, self.reuse = start_timeout, reuse
        self.socket: str | None = None
        self.shared: str | None = None
        self._process: subprocess.Popen | None = None
        self._dir: str | None = None

    def __enter__(self) -> KernelServer:
        if not self.enabled:
            return self
        env = server_environment()
        digest, _, path = os.environ.get(SHARED, "").partition(":")
        if self.reuse and digest == _digest(env) and os.path.exists(path):
            self.socket = path  # a launcher that finds no server there starts a cold kernel
            return self
        self._dir = tempfile.mkdtemp(prefix="agk-", dir="/tmp" if os.path.isdir("/tmp") else None)
        path = os.path.join(self._dir, "s")  # short: Unix socket paths stop at ~100 bytes
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-m", "autograder.engine.kernel_server", "serve", path],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, env=env)
        deadline = time.monotonic() + self.start_timeout
        with selectors.DefaultSelector() as selector:
            selector.register(self._process.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline and self._process.poll() is None:
                if selector.select(timeout=0.1):
                    if self._process.stdout.readline().strip() == "listening":
                        self.socket = path
                        self.shared = f"{_digest(env)}:{path}"
                    break
        if self.socket is None:
            print("autograder: the kernel server did not start; every kernel starts cold (slower)",
                  file=sys.stderr)
        return self

    def wait_preloaded(self) -> bool:
        """Block until this server has imported PRELOAD; False when it ended first or is not ours.

        Grading never waits: a launcher waits _LAUNCH_TIMEOUT in the socket's backlog, then starts
        a cold kernel (on a machine busy enough that preloading takes longer). A test that must
        have a warm kernel waits here first."""
        if self._process is None or self.socket is None:
            return False
        return self._process.stdout.readline().strip() == "preloaded"

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


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 2:
        try:
            serve(argv[1])
        except SystemExit:  # SIGTERM: the kernels are killed (serve's finally); nothing else to keep
            pass
        # Without the interpreter's teardown: with torch and torch._dynamo loaded it took 2.3 s
        # (measured here), which every grading session waited for at its end.
        sys.stdout.flush()
        os._exit(0)
    if argv[:1] == ["launch"] and "--" in argv[2:]:
        split = argv.index("--", 2)
        options, command = Options.parse(argv[2:split]), argv[split + 1:]
        if options is not None and command:
            return launch(argv[1], command, options)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

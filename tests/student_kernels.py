"""Warm kernels in the student's environment, for tests/test_student_path.py: a fork server.

    STUDENT_PYTHON tests/student_kernels.py serve SOCKET              # the server
    STUDENT_PYTHON -I -S tests/student_kernels.py launch SOCKET ARGS  # a kernel (the kernel spec's argv)

A kernel started cold spends about 4 of its 5.8 CPU-seconds starting Python and importing torch,
IPython and matplotlib. The server, run by the student venv's own Python, imports them once, then
forks a kernel per launcher: the child takes the launcher's standard streams, environment and
working folder and runs ipykernel as `python -m ipykernel_launcher ARGS` would. It is the student's
Python and the student's packages throughout: this file is run by path, nothing is installed, and
it imports only the standard library and what a student's kernel imports anyway (no grading code:
autograder/engine/kernel_server.py, which does the same for grading kernels, brings the sandbox).

The launcher stands in for the kernel towards jupyter_client: signals it gets (an interrupt, a
shutdown) go to the kernel's process group, and it exits with the kernel's status. If it dies, the
server kills its kernel. Without an answering server it runs the kernel itself. The server ends
when its standard input closes or on SIGTERM, killing the kernels it forked.
"""

from __future__ import annotations

import array
import json
import os
import selectors
import signal
import socket
import struct
import sys

PRELOAD = ("numpy", "torch", "IPython", "ipykernel.kernelapp", "ipykernel.ipkernel", "matplotlib.pyplot",
           "matplotlib_inline.backend_inline")
_RELAYED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_CONNECT_TIMEOUT = 120.0  # the first kernels wait for the preloading
_INT = struct.Struct("!i")


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("peer closed")
        data += chunk
    return data


# -- the server ---------------------------------------------------------------------------------

def _kernel(request: dict, fds: list[int]) -> None:
    """In the forked child: become `python -m ipykernel_launcher ARGS`; never returns."""
    os.setsid()
    for fd, target in zip(fds, (0, 1, 2)):
        os.dup2(fd, target)
        os.close(fd)
    for signum in (*_RELAYED, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["ipykernel_launcher", *request["args"]]
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
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def serve(path: str) -> None:
    """Listen on `path`, preload, fork a kernel per launcher until stdin closes."""
    if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # this file's folder is no kernel's business; ipykernel adds the cwd back
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    print("listening", flush=True)
    for module in PRELOAD:
        try:
            __import__(module)
        except ImportError:
            pass
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    kernels: dict[int, socket.socket] = {}
    try:
        while True:
            for key, _ in selector.select(timeout=0.1):
                if key.fileobj is sys.stdin:
                    if not os.read(sys.stdin.fileno(), 4096):
                        return
                elif key.fileobj is listener:
                    conn, _ = listener.accept()
                    fds = array.array("i")
                    conn.settimeout(5)
                    try:
                        _, ancillary, _, _ = conn.recvmsg(3, socket.CMSG_SPACE(3 * fds.itemsize))
                        for level, kind, payload in ancillary:
                            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                                fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                        (size,) = _INT.unpack(_exactly(conn, _INT.size))
                        request = json.loads(_exactly(conn, size))
                    except (OSError, ValueError):
                        for fd in fds:
                            os.close(fd)
                        conn.close()
                        continue
                    conn.settimeout(None)
                    pid = os.fork()
                    if pid == 0:
                        selector.close()
                        listener.close()
                        for other in (conn, *kernels.values()):
                            other.close()
                        _kernel(request, list(fds))
                    for fd in fds:
                        os.close(fd)
                    conn.sendall(_INT.pack(pid))
                    kernels[pid] = conn
                    selector.register(conn, selectors.EVENT_READ, pid)
                elif not key.fileobj.recv(1):  # a launcher went away: its kernel goes too
                    selector.unregister(key.fileobj)
                    _kill(key.data, signal.SIGKILL)
            while kernels:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                conn = kernels.pop(pid, None)
                if conn is not None:
                    try:
                        selector.unregister(conn)
                    except (KeyError, ValueError):
                        pass
                    try:
                        conn.sendall(_INT.pack(os.waitstatus_to_exitcode(status)))
                    except OSError:
                        pass
                    conn.close()
    finally:
        for pid in kernels:
            _kill(pid, signal.SIGKILL)


def _kill(pid: int, signum: int) -> None:
    try:
        os.killpg(pid, signum)
    except OSError:
        try:
            os.kill(pid, signum)
        except OSError:
            pass


# -- the launcher -------------------------------------------------------------------------------

def launch(path: str, args: list[str]) -> int:
    """Have the server at `path` fork a kernel with `args`; relay signals; its exit status."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(_CONNECT_TIMEOUT)
    try:
        conn.connect(path)
        body = json.dumps({"args": args, "env": dict(os.environ), "cwd": os.getcwd()}).encode()
        conn.sendmsg([b"REQ"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
        conn.sendall(_INT.pack(len(body)) + body)
        (pid,) = _INT.unpack(_exactly(conn, _INT.size))
    except OSError:  # no server: the kernel, cold
        conn.close()
        os.execv(sys.executable, [sys.executable, "-m", "ipykernel_launcher", *args])
    for signum in _RELAYED:
        signal.signal(signum, lambda signum, _frame: _kill(pid, signum))
    conn.settimeout(None)
    try:
        (code,) = _INT.unpack(_exactly(conn, _INT.size))
    except ConnectionError:
        return 1
    return code if code >= 0 else 128 - code


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 2:
        try:
            serve(argv[1])
        except SystemExit:
            pass
        sys.stdout.flush()
        os._exit(0)  # no teardown of torch (a second or two)
    if argv[:1] == ["launch"] and len(argv) >= 2:
        return launch(argv[1], argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

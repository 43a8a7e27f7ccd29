"""Kernels that cannot read the course's files: a private mount namespace with folders hidden.

`enter(hide)` turns the calling process (and everything it starts or forks afterwards) into one
that sees each path in `hide` as empty: a folder gets an empty read-only tmpfs mounted over it, a
file gets /dev/null bound over it. Nothing changes for any other process. It is what

    unshare --mount --propagation private [--user]   +   mount -t tmpfs -o ro tmpfs PATH

does, in-process (ctypes), so that the warm kernel server can enter it once before it preloads
torch, and each forked kernel again for its own job's files.

Last, `enter` moves the process into a new user namespace of its own (same uid and gid). That
is what makes the hiding hold against a student's code, even when grading runs as root: mounts
inherited from a more privileged namespace are locked together, so the kernel cannot unmount
the tmpfs to look underneath (EINVAL), and it has no capability left over the grader's
namespaces, so it cannot reach the files through /proc/<grader pid>/root or setns either.

It also gives the process a network namespace of its own (CLONE_NEWNET, as otter's
`--no-network`), holding only a loopback interface that is down: no connection leaves it, not
even to 127.0.0.1 of the grader's machine. Kernels then talk to the grader over Unix sockets
(jupyter_client's "ipc" transport, autograder/execute.py), which namespaces do not cut. Where
a network namespace cannot be made, `network_problem()` says why and the kernels keep the
network.

Needs Linux with mount namespaces: root (or CAP_SYS_ADMIN), or unprivileged user namespaces.
Where neither is allowed (some containers, macOS) `problem()` says why, and callers run kernels
unhidden with a warning. Only the standard library: the kernel launcher imports this.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
import tempfile
from collections.abc import Iterable

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
_EMPTY = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC


class SandboxError(OSError):
    """The mount namespace could not be made; the message says which step failed and why."""


_libc = None


def _lib():
    global _libc
    if _libc is None:
        if not sys.platform.startswith("linux"):
            raise SandboxError("mount namespaces exist only on Linux")
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    return _libc


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise SandboxError(errno, f"{what}: {os.strerror(errno)}")


def _unshare(flags: int, what: str) -> None:
    _check(_lib().unshare(flags), what)


def _mount(source: str | None, target: str | None, fstype: str | None, flags: int,
           data: str | None, what: str) -> None:
    source, target, fstype, data = (None if s is None else s.encode()
                                     for s in (source, target, fstype, data))
    _check(_lib().mount(source, target, fstype, ctypes.c_ulong(flags), data), what)


network_isolated = False  # whether `enter` gave this process a network namespace of its own


def _own_user_namespace(uid: int, gid: int, network: bool = False) -> None:
    """Enter a new user (and mount) namespace where this process keeps its uid and gid; with
    `network`, a network namespace too where one can be made (`network_isolated` says)."""
    global network_isolated
    try:
        if not network:
            raise SandboxError("not asked for")
        _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET,
                 "unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET)")
        network_isolated = True
    except SandboxError:
        _unshare(CLONE_NEWUSER | CLONE_NEWNS, "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
    try:
        with open("/proc/self/setgroups", "w") as f:  # required before an unprivileged gid_map
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")
    except OSError as error:
        raise SandboxError(error.errno or 0, f"writing the user namespace's id maps: {error}") from None


def _targets(hide: Iterable[str]) -> list[str]:
    """Existing real paths, outermost first, without those inside another one."""
    found: list[str] = []
    for path in sorted({os.path.realpath(p) for p in hide if os.path.lexists(p)}, key=len):
        if not any(path == kept or path.startswith(kept.rstrip("/") + "/") for kept in found):
            found.append(path)
    return found


def enter(hide: Iterable[str], keep: str | None = None, network: bool = True) -> list[str]:
    """Hide each path of `hide` from this process and its future children; returns those hidden.

    network: also cut it off the network (its own network namespace) where that is allowed.

    keep: a folder inside a hidden one that stays visible and writable (a kernel's own job
    folder inside the folder of every job): the rest of that hidden folder still looks empty.
    Call it while the process has a single thread (before importing torch, or just after a
    fork). Paths that do not exist are skipped. Raises SandboxError when it cannot.
    """
    targets = _targets(hide)
    uid, gid = os.getuid(), os.getgid()
    cwd = os.getcwd()
    keep = os.path.realpath(keep) if keep and os.path.isdir(keep) else None
    kept = None
    if targets:
        try:
            _unshare(CLONE_NEWNS, "unshare(CLONE_NEWNS)")
        except SandboxError:  # not privileged here: a user namespace grants it, where allowed
            _own_user_namespace(uid, gid)
        # Our mounts must not leak into the namespace we came from.
        _mount(None, "/", None, MS_REC | MS_PRIVATE, None, "making / private")
        if keep:  # opened in this namespace, so that it can be bound back once covered
            kept = os.open(keep, os.O_PATH | os.O_DIRECTORY)
        for path in targets:
            if keep and os.path.isdir(path) and keep.startswith(path.rstrip("/") + "/"):
                # An empty tmpfs with just the path down to `keep`, `keep` itself bound on top.
                _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       "size=64k,nr_inodes=64,mode=0555", f"hiding {path}")
                inside = os.path.join(path, os.path.relpath(keep, path))
                os.makedirs(inside, exist_ok=True)
                _mount(f"/proc/self/fd/{kept}", inside, None, MS_BIND, None, f"keeping {keep}")
                _mount(None, path, None, MS_REMOUNT | _EMPTY, None, f"hiding {path}")
            elif os.path.isdir(path):
                _mount("tmpfs", path, "tmpfs", _EMPTY, "size=4k,nr_inodes=1,mode=0555",
                       f"hiding {path}")
            else:
                _mount("/dev/null", path, None, MS_BIND, None, f"hiding {path}")
                _mount(None, path, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, None,
                       f"hiding {path}")  # no MS_NODEV: /dev/null must still open
    if kept is not None:
        os.close(kept)
    _own_user_namespace(uid, gid, network)  # locks the mounts and drops every hold on the grader
    try:  # a working folder inside a hidden one would still reach the files underneath
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    return targets


def _in_child(attempt) -> str:
    """Run `attempt()` (returns '' or what went wrong) in a throwaway forked child; its answer."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (child)
        os.close(read)
        try:
            message = attempt()
        except BaseException as error:  # noqa: BLE001 (reported to the parent)
            message = str(error) or type(error).__name__
        os.write(write, message.encode()[:4000])
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(pid, 0)
    return message


def problem() -> str | None:
    """Why `enter` cannot hide files here, or None when it does (tried in a throwaway child)."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return "kernels cannot be sandboxed on this system (needs Linux mount namespaces)"
    with tempfile.TemporaryDirectory(prefix="agsb-") as probe:
        secret = os.path.join(probe, "secret")
        os.mkdir(secret)
        with open(os.path.join(secret, "file"), "w") as f:
            f.write("x")

        def attempt() -> str:
            enter([secret], network=False)
            return "the hidden folder could still be read" if os.path.exists(
                os.path.join(secret, "file")) else ""

        message = _in_child(attempt)
    if message:
        return f"kernels are not sandboxed (mount namespaces not allowed here: {message})"
    return None


def network_problem() -> str | None:
    """Why `enter` cannot cut kernels off the network here, or None when it does (one line)."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return "grading kernels can reach the network (network namespaces need Linux)"

    def attempt() -> str:
        enter([])
        return "" if network_isolated else "unshare(CLONE_NEWNET) was refused"

    message = _in_child(attempt)
    return f"grading kernels can reach the network ({message})" if message else None

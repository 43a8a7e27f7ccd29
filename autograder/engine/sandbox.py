"""The grading kernel's sandbox: an allow-list of what a student's code may touch.

`enter_kernel(plan)` turns the calling process into the supervisor of a sandboxed kernel and
returns in the kernel: a child that is process 1 of a PID namespace of its own. The kernel
(and everything it starts) then

- sees the machine read-only: every mount is remounted read-only (mount_setattr, or a remount
  per mount on kernels older than 5.12);
- cannot read what `plan.hide` names (the course's roots, the grader's HOME, the outputs: an
  empty read-only tmpfs over each folder, /dev/null over each file), except what the kernel needs
  to run (`needed_paths()`: the interpreter, the environment, `helpers`, `autograder`), bound back
  read-only, and its own job folder; `helpers.reference` stays hidden inside `helpers`;
- writes only to a private layer over its job folder (an overlay whose upper layer is a tmpfs of
  `plan.job_size` bytes: the grader never sees what it writes there), a private /tmp and /dev/shm
  (tmpfs of `plan.tmp_size` bytes each, gone with the kernel), and the folders of `plan.shared`
  (its sockets to the grader);
- runs as nobody (65534) when grading runs as root, in a user namespace of its own, with no
  capability, no_new_privs, and no way to make another user namespace (so no way to undo any of
  the above);
- has no network (a network namespace holding a loopback that is down), no System V IPC of the
  grader's, and sees only its own processes (a fresh /proc): everything it starts is killed when
  it ends, double-forked daemons in sessions of their own too.

Nothing a kernel writes is ever run outside the sandbox: the only kernel-writable places the
grader sees are the socket folders (closed once the kernel listens: autograder/engine/execute.py) and
the trusted run's outbox, a file the kernel reaches through a descriptor (OUTBOX_FD) and the
grader reads as bounded data (autograder/probes). Memory and process count are capped for the
kernel as a whole by a cgroup (autograder/engine/cgroups.py), disk by the tmpfs sizes, output by
autograder/engine/execute.py.

Where the system cannot give a piece of this (no user namespaces, macOS, a container without
privileges, an old kernel), `problems()` names each missing piece in one line; `grade` prints
them at start and `check` puts them in its report. Only the standard library: the kernel
launcher imports this.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import pwd
import resource
import signal
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 0x400, 0x800, 0x200000, 0x1000000
_SAFE = MS_NOSUID | MS_NODEV
_MOUNT_SETATTR, _AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
OUTBOX_FD = 200  # the trusted run's outbox, as the kernel holds it (autograder/probes/kernel.py)
NOBODY = 65534  # the kernel's identity when grading runs as root

# The kernel's environment is an allow-list (`kernel_environment`): names, then prefixes.
KEPT_VARIABLES = (
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM",
    # jupyter_client and nbgrader say who started the kernel and that it grades
    "JPY_PARENT_PID", "JPY_SESSION_NAME", "NBGRADER_EXECUTION", "PYDEVD_DISABLE_FILE_VALIDATION",
    # threads per kernel (session.limit_kernel_threads), and BLAS settings some CPUs need
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
    # plots to files; Python's own switches
    "MPLBACKEND", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
    # the GPU, where there is one
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH",
    "PYTORCH_CUDA_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG", "VIRTUAL_ENV",
)
KEPT_PREFIXES = ("LC_", "PYTORCH_COURSE_")  # the locale; the course's own switches (helpers)


class SandboxError(OSError):
    """A step of the sandbox failed; the message says which and why."""


@dataclass(frozen=True)
class Plan:
    """What one kernel may touch.

    hide: paths that look empty (folders) or empty files; job: the kernel's folder, readable,
    written through a private layer; shared: folders it shares with the grader, writable (its
    sockets); tmp_size and job_size: bytes of its /tmp (and /dev/shm, each) and of what it may
    write into its job folder; network: keep the network (tests of the sandbox only).
    """

    hide: tuple[str, ...] = ()
    job: str | None = None
    shared: tuple[str, ...] = ()
    tmp_size: int = 512 << 20
    job_size: int = 512 << 20
    network: bool = False
    needed: tuple[str, ...] = field(default_factory=lambda: needed_paths())


# -- system calls -----------------------------------------------------------------------------------

_libc = None


def _lib():
    global _libc
    if _libc is None:
        if not sys.platform.startswith("linux"):
            raise SandboxError("namespaces exist only on Linux")
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


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _read_only(path: str, read_only: bool, recursive: bool) -> None:
    """Set or clear the read-only flag of the mount at `path` (and those below, `recursive`)."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY if read_only else 0, 0 if read_only else _MOUNT_ATTR_RDONLY, 0, 0)
    flags = _AT_RECURSIVE if recursive else 0
    if _lib().syscall(_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, ctypes.byref(attr),
                      ctypes.sizeof(attr)) == 0:
        return
    if ctypes.get_errno() != 38:  # ENOSYS: a kernel before 5.12; remount one mount at a time
        _check(-1, f"mount_setattr({path})")
    for mount_point, options in _mounts():
        if mount_point == path or (recursive and mount_point.startswith(path.rstrip("/") + "/")):
            flags = _flags(options) | (MS_RDONLY if read_only else 0)
            if not read_only:
                flags &= ~MS_RDONLY
            _mount(None, mount_point, None, MS_REMOUNT | MS_BIND | flags, None,
                   f"remounting {mount_point} {'read-only' if read_only else 'writable'}")


def _mounts() -> list[tuple[str, str]]:
    """(mount point, per-mount options) of every mount this process sees, outermost first."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            point = parts[4].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\")
            found.append((point, parts[5]))
    return sorted(found, key=lambda item: item[0].count("/"))


def _flags(options: str) -> int:
    names = {"ro": MS_RDONLY, "nosuid": MS_NOSUID, "nodev": MS_NODEV, "noexec": MS_NOEXEC,
             "noatime": MS_NOATIME, "nodiratime": MS_NODIRATIME, "relatime": MS_RELATIME,
             "strictatime": MS_STRICTATIME}
    flags = 0
    for option in options.split(","):
        flags |= names.get(option, 0)
    return flags


def _prctl(option: int, value: int, what: str) -> None:
    _check(_lib().prctl(option, ctypes.c_ulong(value), 0, 0, 0), what)


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


def _drop_capabilities() -> None:
    """No capability left, none to gain back (bounding and ambient sets emptied, no_new_privs)."""
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            last = int(f.read())
    except OSError:
        last = 40
    for cap in range(last + 1):
        _lib().prctl(_PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0)
    _lib().prctl(_PR_CAP_AMBIENT, ctypes.c_ulong(_PR_CAP_AMBIENT_CLEAR_ALL), 0, 0, 0)
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, "prctl(PR_SET_NO_NEW_PRIVS)")
    data = (_CapData * 2)()
    _check(_lib().capset(ctypes.byref(_CapHeader(0x20080522, 0)), data), "capset (dropping all)")


def _map_identity(uid: int, gid: int) -> None:
    """In a user namespace just made: keep this uid and gid (inside as outside)."""
    try:
        with open("/proc/self/setgroups", "w") as f:  # required before an unprivileged gid_map
            f.write("deny")
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as f:
            f.write(f"{gid} {gid} 1")
    except OSError as error:
        raise SandboxError(error.errno or 0, f"writing the user namespace's id maps: {error}") from None


# -- what a kernel needs to read, and its environment -----------------------------------------------

def needed_paths() -> tuple[str, ...]:
    """What a kernel must read to run, wherever it lies (inside a hidden HOME or course root):
    the interpreter, the environment and its site-packages, and the course's packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    # A kernel starts isolated (-I): the folder of the script that started the grader, first on
    # sys.path here (a script in /tmp: /tmp itself), is never on a kernel's.
    started_isolated = sys.flags.isolated or getattr(sys.flags, "safe_path", False)
    paths.update(p for p in sys.path[0 if started_isolated else 1:] if p and os.path.isabs(p))
    for package in ("helpers", "autograder"):
        try:
            import importlib.util

            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            spec = None
        paths.update(spec.submodule_search_locations or () if spec else ())
    return tuple(sorted(p for p in {os.path.realpath(p) for p in paths} if os.path.exists(p)))


def kernel_identity() -> tuple[int, int]:
    """(uid, gid) a kernel runs as: nobody when grading runs as root, the grader's otherwise."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    try:
        entry = pwd.getpwnam("nobody")
        return entry.pw_uid, entry.pw_gid
    except KeyError:
        return NOBODY, NOBODY


def kernel_environment(env: Mapping[str, str], home: str) -> dict[str, str]:
    """The variables a kernel gets: the allow-list of `env` (KEPT_VARIABLES, KEPT_PREFIXES),
    HOME inside its job folder, /tmp its own; never a token or path of the grader's."""
    kept = {k: v for k, v in env.items() if k in KEPT_VARIABLES or k.startswith(KEPT_PREFIXES)}
    kept.update(HOME=home, TMPDIR="/tmp", USER="student", LOGNAME="student",
                MPLCONFIGDIR=os.path.join(home, ".config", "matplotlib"))
    return kept


# -- the sandbox ------------------------------------------------------------------------------------

def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _make_point(path: str, is_dir: bool) -> None:
    """Create `path` (folder or empty file) and its parents on whatever now covers them."""
    os.makedirs(path if is_dir else os.path.dirname(path), exist_ok=True)
    if not is_dir and not os.path.exists(path):
        open(path, "w").close()


def _closed_ancestor(path: str, uid: int, gid: int) -> str | None:
    """The outermost folder above `path` that `uid` may not pass through; None when all let it."""
    if uid == os.geteuid():
        return None
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        folder = "/" + "/".join(parts[:depth])
        try:
            info = os.stat(folder)
        except OSError:
            return None
        bit = 0o100 if info.st_uid == uid else 0o010 if info.st_gid == gid else 0o001
        if not info.st_mode & bit:
            return folder
    return None


def _layout(plan: Plan, uid: int, gid: int) -> list[str]:
    """The mounts of the kernel's view, in the current (private) mount namespace; returns the
    pieces it could not give, one line each."""
    missing: list[str] = []
    hide = sorted({os.path.realpath(p) for p in plan.hide if os.path.lexists(p)})
    job = os.path.realpath(plan.job) if plan.job and os.path.isdir(plan.job) else None
    shared = sorted({os.path.realpath(p) for p in plan.shared if os.path.isdir(p)})
    kept = {*plan.needed, *([job] if job else []), *shared}
    # A folder the kernel's identity cannot pass through (/root, a 0700 temporary folder) hides
    # nothing more from it when covered: cover it, and bind back what the kernel needs inside.
    hide = sorted({*hide, *(p for path in kept for p in [_closed_ancestor(path, uid, gid)] if p)})
    covers = [*hide, "/tmp", "/dev/shm"]
    backs = {p for p in kept if any(_inside(p, c) for c in covers)}
    backs |= {*([job] if job else []), *shared}
    # A path inside another one bound back comes with it, unless something hidden lies between.
    backs = sorted(p for p in backs if not any(
        q != p and _inside(p, q) and not any(_inside(h, q) and _inside(p, h) for h in hide)
        for q in backs))
    # Descriptors first: once covered, a path can no longer be opened from here.
    fds = {p: os.open(p, os.O_PATH | (os.O_DIRECTORY if os.path.isdir(p) else 0)) for p in backs}
    is_dir = {p: os.path.isdir(p) for p in [*hide, *backs]}
    tmps = [p for p in ("/tmp", "/dev/shm") if os.path.isdir(p)]
    operations = sorted([(p, "hide") for p in hide] + [(p, "back") for p in backs]
                        + [(p, "tmp") for p in tmps],
                        key=lambda item: (item[0].rstrip("/").count("/"), ("tmp", "hide", "back").index(item[1])))
    for path, kind in operations:
        if kind == "tmp":
            _mount("tmpfs", path, "tmpfs", _SAFE, f"size={plan.tmp_size},mode=1777",
                   f"a private {path}")
        elif not os.path.lexists(path) and kind == "hide":
            continue  # under something covered already
        elif kind == "hide" and is_dir[path]:
            _mount("tmpfs", path, "tmpfs", _SAFE | MS_NOEXEC, "size=1m,nr_inodes=4096,mode=0755",
                   f"hiding {path}")
        elif kind == "hide":
            _mount("/dev/null", path, None, MS_BIND, None, f"hiding {path}")
        else:
            if not os.path.exists(path):
                _make_point(path, is_dir[path])
            _mount(f"/proc/self/fd/{fds[path]}", path, None, MS_BIND | MS_REC, None, f"keeping {path}")
    for fd in fds.values():
        os.close(fd)
    writable = [*tmps, *shared]
    if job:
        try:  # the job folder: read through, written into a private, capped layer
            layer = tempfile.mkdtemp(prefix=".job-", dir="/tmp")
            _mount("tmpfs", layer, "tmpfs", _SAFE, f"size={plan.job_size},mode=0755", "the job's layer")
            os.mkdir(os.path.join(layer, "upper"))
            os.mkdir(os.path.join(layer, "work"))
            os.chown(os.path.join(layer, "upper"), uid, gid)
            _mount("overlay", job, "overlay", _SAFE,
                   f"lowerdir={job},upperdir={layer}/upper,workdir={layer}/work", "the job's overlay")
            writable += [layer, job]
        except OSError as error:
            missing.append(f"what a kernel writes into its job folder is not capped ({error})")
            writable.append(job)
    _read_only("/", True, recursive=True)
    for path in [*writable, "/proc"]:
        _read_only(path, False, recursive=False)
    return missing


def enter_kernel(plan: Plan) -> list[str]:
    """Sandbox what this process starts next; returns, in the kernel, the pieces it could not
    give. The calling process (single-threaded: just forked, or before any thread starts)
    becomes the kernel's supervisor and never returns: it exits as the kernel does.

    Raises SandboxError, before anything changed for the caller's kernel, when no private mount
    namespace can be had at all: the caller then runs the kernel unsandboxed, saying so.
    """
    uid, gid = kernel_identity()
    root = os.geteuid() == 0
    cwd = os.getcwd()
    if root:
        _unshare(CLONE_NEWNS, "unshare(CLONE_NEWNS)")
    else:  # a user namespace of its own grants the mounts
        own_uid, own_gid = os.geteuid(), os.getegid()
        _unshare(CLONE_NEWUSER | CLONE_NEWNS, "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
        _map_identity(own_uid, own_gid)
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None, "making / private")
    missing = _layout(plan, uid, gid)
    if root:  # nobody, from here on
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        _prctl(_PR_SET_DUMPABLE, 1, "prctl(PR_SET_DUMPABLE)")  # its /proc files stay its own
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
    try:
        _unshare(flags | (0 if plan.network else CLONE_NEWNET), "unshare(user, mount, pid, ipc, net)")
    except SandboxError as error:
        if plan.network:
            raise
        missing.append(f"grading kernels can reach the network ({error})")
        _unshare(flags, "unshare(user, mount, pid, ipc)")
    _map_identity(uid, gid)  # the mounts above are locked from here: no undoing them
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the kernel's, not the supervisor's
    pid = os.fork()
    if pid:
        _supervise(pid)
    signal.signal(signal.SIGINT, previous)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, "prctl(PR_SET_PDEATHSIG)")
    try:  # a /proc of its own PID namespace: no process of the grader's to see
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None, "a private /proc")
    except SandboxError as error:
        missing.append(f"grading kernels see the grader's processes in /proc ({error})")
    try:  # no user namespace to regain capabilities in, whatever it runs
        with open("/proc/sys/user/max_user_namespaces", "w") as f:
            f.write("0")
    except OSError as error:
        missing.append(f"grading kernels may make user namespaces ({error})")
    _drop_capabilities()
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    return missing


def _supervise(child: int) -> NoReturn:
    """The supervisor: wait for the kernel (process 1 of its namespace), then exit as it did.

    Signals to the process group reach the kernel directly; SIGTERM and SIGHUP here kill it.
    """
    def stop(_signum, _frame):
        try:
            os.kill(child, signal.SIGKILL)
        except OSError:
            pass

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(signum, stop)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
        except ChildProcessError:
            os._exit(1)
    os._exit(exit_like(os.waitstatus_to_exitcode(status)) & 0xFF)


def exit_like(code: int) -> int:
    """A child's exit code, or, for a child killed by a signal, die the same way (for whoever
    watches this process); returns `code` when it was a plain exit."""
    if code < 0:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a SIGSEGV here must not dump core
        try:
            signal.signal(-code, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their default anyway
            pass
        os.kill(os.getpid(), -code)
    return code


# -- what this system gives ---------------------------------------------------------------------------

def _in_child(attempt) -> str:
    """Run `attempt()` (returns '' or what went wrong) in a throwaway forked child; its answer."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (child)
        os.close(read)
        try:
            message = attempt()
        except BaseException as error:  # noqa: BLE001 (reported to the parent)
            message = f"the sandbox failed: {error}" if str(error) else type(error).__name__
        try:
            os.write(write, message.encode()[:4000])
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        message = pipe.read().decode()
    os.waitpid(pid, 0)
    return message


_PROBLEMS: list[str] | None = None


def problems() -> list[str]:
    """What `enter_kernel` cannot give here, one line each; [] when it gives everything.
    Tried once per process, in a throwaway child, on a folder of secrets and a job folder."""
    global _PROBLEMS
    if _PROBLEMS is not None:
        return list(_PROBLEMS)
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        _PROBLEMS = ["kernels are not sandboxed on this system (it needs Linux namespaces): a "
                     "submission can read and write what the grader can"]
        return list(_PROBLEMS)
    with tempfile.TemporaryDirectory(prefix="agsb-") as probe:
        secret, job = os.path.join(probe, "secret"), os.path.join(probe, "job")
        for folder in (secret, job):
            os.mkdir(folder)
        os.chmod(probe, 0o755)
        os.chmod(job, 0o755)
        with open(os.path.join(secret, "file"), "w") as f:
            f.write("x")

        def attempt() -> str:
            os.chdir(job)
            found = enter_kernel(Plan(hide=(secret,), job=job, tmp_size=1 << 20, job_size=1 << 20))
            if os.path.exists(os.path.join(secret, "file")):
                found.append("kernels can read what the grader hides from them")
            try:
                open("written", "w").close()
            except OSError as error:
                found.append(f"kernels cannot write into their job folder ({error})")
            outside = os.path.join(sys.prefix, f".agsb-{os.getppid()}-{id(found)}")
            try:
                open(outside, "w").close()
                os.remove(outside)
                found.append("kernels can write outside their job folder (into the environment)")
            except OSError:
                pass
            return "\n".join(found)

        answer = _in_child(attempt)
    _PROBLEMS = [line if "fail" not in line.split(":")[0] else
                 f"kernels are not sandboxed ({line}): a submission can read and write what the "
                 "grader can" for line in answer.splitlines() if line.strip()]
    return list(_PROBLEMS)


def sandboxed() -> bool:
    """Whether kernels get a sandbox here at all (the hiding of files works)."""
    return not any(line.startswith("kernels are not sandboxed") or "can read what" in line
                   for line in problems())

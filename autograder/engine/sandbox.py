"""The grading kernel's sandbox: an allow-list of what a student's code may touch.

`enter_kernel(plan)` turns the calling process into the supervisor of a sandboxed kernel and
returns in the kernel: a child that is process 1 of a PID namespace of its own. The kernel
(and everything it starts) then

- sees a root of its own, not the machine's: a read-only tmpfs (pivot_root) holding read-only
  binds of what it needs and nothing else. That is the system a Python process needs (`SYSTEM`:
  /usr, /bin, /lib*, /sys; `ETC`: the few files of /etc it reads), the interpreter and the
  environment wherever they lie (`needed_paths()`: the prefixes, `sys.path`, LD_LIBRARY_PATH),
  `helpers` without `helpers.reference`, the parts of `autograder` it imports (`KERNEL_MODULES`:
  the trusted run's caller), a /dev of its own (`DEVICES`), a fresh /proc, and its job folder.
  Another checkout, an earlier output folder, /home, /root, /srv, /var, /opt, /mnt: not there.
  Inside what it sees, `plan.hide` (and `withheld_paths()`) look empty;
- writes only into capped tmpfs of its own: a layer over its job folder (an overlay whose upper
  layer holds `plan.job_size` bytes: the grader never sees what it writes there), /tmp and
  /dev/shm (`plan.tmp_size` bytes each), and its socket folders (`plan.shared`, SOCKET_FOLDER_SIZE
  bytes each: the folders its connection files lie in, at the same paths, with a copy of those
  files). The grader's own socket folder is not in its view: the launcher links the kernel's
  sockets into it once they exist (autograder/engine/kernel_server.py, `link_sockets`);
- runs as nobody (65534) when grading runs as root, as the grader's user otherwise (in a user
  namespace of its own: a plain user grades as well), with no capability, no_new_privs, and no way
  to make another user namespace (so no way to undo any of the above);
- has no network (a network namespace holding a loopback that is down), no System V IPC of the
  grader's, and sees only its own processes (a fresh /proc): everything it starts is killed when
  it ends, double-forked daemons in sessions of their own too.

Nothing a kernel writes is ever run outside the sandbox: the only things of a kernel's that the
grader reads are the messages on its sockets (through descriptors the launcher holds), the trusted
run's among them, which the grader decodes as bounded plain data (autograder/probes/session.py). Memory and process count are capped for the
kernel as a whole by a cgroup (autograder/engine/cgroups.py), disk by the tmpfs sizes, output by
autograder/engine/execute.py; its descriptors 0, 1 and 2 are /dev/null (kernel_server.py): what it
writes there never reaches the grader's terminal.

Where the system cannot give a piece of this (no user namespaces, macOS, a container without
privileges, an old kernel), `problems()` names each missing piece in one line; `grade` prints
them at start and `check` puts them in its report. Only the standard library: the kernel
launcher imports this.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fnmatch
import os
import platform
import pwd
import resource
import signal
import stat
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NoReturn

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 0x400, 0x800, 0x200000, 0x1000000
_SAFE = MS_NOSUID | MS_NODEV
_MOUNT_SETATTR, _AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = 442, -100, 0x8000, 0x1
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_CAPBSET_DROP = 1, 4, 24
_PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
# pivot_root has no libc wrapper: its system call number, per architecture.
_PIVOT_ROOT = {"x86_64": 155, "amd64": 155, "aarch64": 41, "arm64": 41, "riscv64": 41,
               "ppc64le": 203, "ppc64": 203, "s390x": 217, "i686": 217, "i386": 217, "armv7l": 218}
NOBODY = 65534  # the kernel's identity when grading runs as root

# What a kernel sees of the machine besides the environment (needed_paths) and its job: the
# system a Python process runs on. /usr, /bin and /lib* (libraries, `sh` for subprocess, `ldconfig`
# for ctypes.util.find_library), /sys (CPU and GPU topology: torch, OpenBLAS, NVML read it).
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
# Of /etc, what a Python process reads: users and groups (getpass, pwd), name service and hosts
# (socket, even without a network), the dynamic linker's cache (CUDA's libraries are found by
# name), time zone and locale, MIME types, the Debian Python's sitecustomize, the alternatives the
# system's programs are links through, fonts and OpenSSL's settings and public certificates. Not
# the rest: an instructor's /etc may hold a token.
ETC = ("passwd", "group", "nsswitch.conf", "host.conf", "hosts", "gai.conf", "protocols", "services",
       "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "locale.alias",
       "locale.conf", "mime.types", "os-release", "lsb-release", "debian_version", "alternatives",
       "python3*", "fonts", "ssl")
# A /dev of its own: the character devices every process uses, and the GPU's (NVIDIA, AMD, DRM).
# Never the machine's terminals (/dev/pts, /dev/tty*), disks or /dev/kvm.
DEVICES = ("null", "zero", "full", "random", "urandom", "nvidia*", "nvidia-caps", "nvidia-uvm*",
           "dri", "kfd")
# Of the `autograder` package, what kernels import: the package itself on the way, and the
# trusted run's kernel side (autograder/probes: the caller, the forked cells of `check`).
KERNEL_MODULES = ("__init__.py", "probes")
SOCKET_FOLDER_SIZE = 1 << 20  # a kernel's socket folder: its sockets and a copy of its connection file

# The kernel's environment is an allow-list (`kernel_environment`): names, then prefixes.
KEPT_VARIABLES = (
    "PATH", "LANG", "LANGUAGE", "TZ", "TERM",
    # jupyter_client and nbgrader say who started the kernel and that it grades
    "JPY_PARENT_PID", "JPY_SESSION_NAME", "NBGRADER_EXECUTION", "PYDEVD_DISABLE_FILE_VALIDATION",
    # threads per kernel and how idle ones wait (autograder/batch/threads.py), BLAS settings some CPUs need
    "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
    "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "OPENBLAS_THREAD_TIMEOUT",
    # plots to files; Python's own switches
    "MPLBACKEND", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
    # the GPU, where there is one
    "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_HOME", "LD_LIBRARY_PATH",
    "PYTORCH_CUDA_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG", "VIRTUAL_ENV",
)
KEPT_PREFIXES = ("LC_", "PYTORCH_COURSE_")  # the locale; the course's own switches (helpers)


class SandboxError(OSError):
    """A step of the sandbox failed; the message says which and why."""


class SandboxBroken(RuntimeError):
    """The sandbox failed after it had changed this process's view: the kernel must not run."""


@dataclass(frozen=True)
class Plan:
    """What one kernel may touch.

    hide: paths that look empty (folders) or empty files, where they lie inside what the kernel
    sees; job: the kernel's folder, readable, written through a private layer; shared: its socket
    folders (where its connection files are: a capped tmpfs of its own at that path, holding a copy
    of their files); tmp_size and job_size: bytes of its /tmp (and /dev/shm, each) and of what it
    may write into its job folder; network: keep the network (tests of the sandbox only); needed:
    what it reads to run (needed_paths).
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


def _pivot_root(new_root: str, put_old: str) -> None:
    number = _PIVOT_ROOT.get(platform.machine().lower())
    if number is None:
        raise SandboxError(0, f"pivot_root: no system call number known for {platform.machine()}")
    _check(_lib().syscall(number, new_root.encode(), put_old.encode()), f"pivot_root({new_root})")


def _detach(path: str) -> None:
    _check(_lib().umount2(path.encode(), MNT_DETACH), f"detaching {path}")


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _read_only(path: str, read_only: bool, recursive: bool, proc: str = "/proc") -> None:
    """Set or clear the read-only flag of the mount at `path` (and those below, `recursive`);
    proc: where /proc is, for a kernel older than 5.12."""
    attr = _MountAttr(_MOUNT_ATTR_RDONLY if read_only else 0, 0 if read_only else _MOUNT_ATTR_RDONLY, 0, 0)
    flags = _AT_RECURSIVE if recursive else 0
    if _lib().syscall(_MOUNT_SETATTR, _AT_FDCWD, path.encode(), flags, ctypes.byref(attr),
                      ctypes.sizeof(attr)) == 0:
        return
    if ctypes.get_errno() != 38:  # ENOSYS: a kernel before 5.12; remount one mount at a time
        _check(-1, f"mount_setattr({path})")
    for mount_point, options in _mounts(proc):
        if mount_point == path or (recursive and mount_point.startswith(path.rstrip("/") + "/")):
            flags = _flags(options) | (MS_RDONLY if read_only else 0)
            if not read_only:
                flags &= ~MS_RDONLY
            _mount(None, mount_point, None, MS_REMOUNT | MS_BIND | flags, None,
                   f"remounting {mount_point} {'read-only' if read_only else 'writable'}")


def _mounts(proc: str = "/proc") -> list[tuple[str, str]]:
    """(mount point, per-mount options) of every mount this process sees, outermost first."""
    found = []
    with open(f"{proc}/self/mountinfo") as f:
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

def _package_folders(name: str) -> list[str]:
    """Where the package `name` would be imported from (not importing it)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    return list(spec.submodule_search_locations or ()) if spec else []


def needed_paths() -> tuple[str, ...]:
    """What a kernel must read to run, wherever it lies (inside a hidden HOME or course root):
    the interpreter, the environment (its prefixes, the kernel's `sys.path`, the libraries
    LD_LIBRARY_PATH and CUDA_HOME name), `helpers` and `autograder` (of which the sandbox shows
    only KERNEL_MODULES: `_narrowed`)."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    # A kernel starts isolated (-I), as the launcher and the kernel server do: their sys.path is the
    # kernel's. The folder of a script that started a grader, first on its sys.path (a script in
    # /tmp: /tmp itself), is never on a kernel's.
    started_isolated = sys.flags.isolated or getattr(sys.flags, "safe_path", False)
    paths.update(p for p in sys.path[0 if started_isolated else 1:] if p and os.path.isabs(p))
    for variable in ("LD_LIBRARY_PATH", "CUDA_HOME"):
        paths.update(p for p in os.environ.get(variable, "").split(os.pathsep) if os.path.isabs(p))
    paths.update(_package_folders("helpers"))
    paths.update(_package_folders("autograder"))
    return tuple(sorted(p for p in {os.path.realpath(p) for p in paths} if os.path.exists(p)))


def _narrowed(paths) -> list[str]:
    """`paths` with the `autograder` package's folder replaced by what kernels import of it."""
    package = {os.path.realpath(folder) for folder in _package_folders("autograder")}
    return [os.path.join(p, part) if p in package else p for p in paths
            for part in (KERNEL_MODULES if p in package else [""])]


def withheld_paths() -> tuple[str, ...]:
    """What a kernel never reads inside what it needs, whatever the plan hides: the answers
    (`helpers.reference`, wherever `helpers` is imported from), and the checkout the course's
    packages are imported from when it is a course (source/, grading/ or .git in it: a path
    entry to it, as an old-style editable install makes, would show the kernel the answers);
    the packages themselves and an environment inside it are still shown."""
    found = [os.path.join(folder, "reference") for folder in _package_folders("helpers")]
    for folder in (*_package_folders("helpers"), *_package_folders("autograder")):
        checkout = os.path.dirname(folder)
        if any(os.path.isdir(os.path.join(checkout, name)) for name in ("source", "grading", ".git")):
            found.append(checkout)
    return tuple(sorted({os.path.realpath(p) for p in found}))


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


def _depth(path: str) -> int:
    return path.rstrip("/").count("/")


def _point(path: str, like: str) -> None:
    """Create the mount point `path` (a folder, or an empty file when `like` is not a folder) and
    the folders above it, in the kernel's new root (this process's umask is 022 here)."""
    if os.path.isdir(like):
        os.makedirs(path, exist_ok=True)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.lexists(path):
        open(path, "w").close()


def _bind(old: str, new: str, what: str) -> None:
    """Show `old` (a path of the machine, as seen under /old) at `new`; a link stays a link."""
    if os.path.islink(old) and os.path.dirname(old) == "/old":  # /bin -> usr/bin and the like
        os.symlink(os.readlink(old), new)
        return
    if os.path.islink(old) and os.path.dirname(old) in ("/old/etc", "/old/dev"):
        target = os.readlink(old)
        if os.path.isabs(target) or not os.path.exists(old):
            os.makedirs(os.path.dirname(new), exist_ok=True)
            os.symlink(target, new)  # resolved in the kernel's root: /etc/localtime -> /usr/share/...
            return
    _point(new, old)
    _mount(old, new, None, MS_BIND | MS_REC, None, what)


def _system_paths() -> list[str]:
    """SYSTEM and ETC as this machine has them (read under /old)."""
    found = [p for p in SYSTEM if os.path.lexists("/old" + p)]
    try:
        names = os.listdir("/old/etc")
    except OSError:
        names = []
    found += [f"/etc/{name}" for name in sorted(names) if any(fnmatch.fnmatch(name, p) for p in ETC)]
    return found


def _small_files(folder: str, limit: int = 1 << 16) -> dict[str, bytes]:
    """The regular files of `folder` (its connection file), read before the kernel's view is made."""
    found = {}
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_size <= limit:
                with open(path, "rb") as f:
                    found[name] = f.read(limit)
        except OSError:
            pass
    return found


def _layout(plan: Plan, uid: int, gid: int) -> list[str]:
    """Make the kernel's root and move into it, in the current (private) mount namespace; returns
    the pieces it could not give, one line each.

    As bubblewrap does: a staging tmpfs over /tmp becomes the root (pivot_root), the machine's root
    then lies at /old, the kernel's at /new; binds from /old into /new; /old detached; a second
    pivot_root into /new, and the staging root detached."""
    missing: list[str] = []
    os.umask(0o022)
    # Read from the machine before anything moves.
    hidden = (*plan.hide, *withheld_paths())
    real = {p: os.path.realpath(p) for p in (*hidden, *plan.shared, plan.job or "") if p and os.path.lexists(p)}
    hide = sorted({real[p] for p in hidden if p in real})
    job = real.get(plan.job or "") if plan.job and os.path.isdir(plan.job) else None
    sockets = sorted({real[p] for p in plan.shared if p in real and os.path.isdir(p)})
    copies = {folder: _small_files(folder) for folder in sockets}
    given = [p.rstrip("/") for p in _narrowed(plan.needed)]
    _mount("tmpfs", "/tmp", "tmpfs", _SAFE, "size=1m,mode=0700", "a staging root")
    for name in ("new", "old", "layer"):
        os.mkdir(f"/tmp/{name}")
    os.chdir("/tmp")
    _pivot_root(".", "old")
    os.chdir("/")
    _mount("tmpfs", "/new", "tmpfs", _SAFE, "size=1m,nr_inodes=16384,mode=0755", "the kernel's root")
    # What is bound: the system, then what the kernel needs; a needed path that is itself hidden is
    # left out, one inside another bound path comes with it unless something hidden lies between.
    needed = sorted({p for p in given if p not in hide} | set(_system_paths()))
    needed = [p for p in needed if not any(
        q != p and _inside(p, q) and not any(_inside(h, q) and _inside(p, h) for h in hide) for q in needed)]
    shown = [*needed, *(["/proc", "/dev", "/tmp"]), *([job] if job else []), *sockets]
    covers = [h for h in hide if any(h != s and _inside(h, s) for s in shown)]
    order = {"bind": 0, "dev": 0, "proc": 0, "tmp": 0, "hide": 1, "sockets": 2, "job": 2}
    operations = sorted([(p, "bind") for p in needed] + [("/proc", "proc"), ("/dev", "dev"), ("/tmp", "tmp")]
                        + [(p, "hide") for p in covers] + [(p, "sockets") for p in sockets]
                        + ([(job, "job")] if job else []),
                        key=lambda item: (_depth(item[0]), order[item[1]]))
    writable = ["/new/tmp", "/new/dev/shm", "/new/proc"]
    for path, kind in operations:
        new = "/new" + path
        if kind == "bind":
            _bind("/old" + path, new, f"showing {path}")
        elif kind == "proc":
            _bind("/old/proc", new, "showing /proc")  # a fresh one in the kernel's PID namespace later
        elif kind == "tmp":
            _point(new, "/")
            _mount("tmpfs", new, "tmpfs", _SAFE, f"size={plan.tmp_size},mode=1777", "a private /tmp")
        elif kind == "dev":
            _point(new, "/")
            _mount("tmpfs", new, "tmpfs", _SAFE | MS_NOEXEC, "size=64k,mode=0755", "a /dev of its own")
            for name in sorted(os.listdir("/old/dev")):
                if any(fnmatch.fnmatch(name, pattern) for pattern in DEVICES):
                    _bind(f"/old/dev/{name}", f"{new}/{name}", f"showing /dev/{name}")
            for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                                 ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
                os.symlink(target, f"{new}/{name}")
            os.mkdir(f"{new}/shm")
            _mount("tmpfs", f"{new}/shm", "tmpfs", _SAFE, f"size={plan.tmp_size},mode=1777", "a private /dev/shm")
        elif kind == "hide":
            if not os.path.lexists(new):
                continue  # not in the kernel's view anyway
            if os.path.isdir(new):
                _mount("tmpfs", new, "tmpfs", _SAFE | MS_NOEXEC, "size=4k,nr_inodes=16,mode=0755", f"hiding {path}")
            else:
                _mount("/old/dev/null", new, None, MS_BIND, None, f"hiding {path}")
        elif kind == "sockets":  # its own: it binds its sockets here; the launcher links them for the grader
            _point(new, "/")
            _mount("tmpfs", new, "tmpfs", _SAFE | MS_NOEXEC,
                   f"size={SOCKET_FOLDER_SIZE},nr_inodes=64,mode=0700", f"a socket folder at {path}")
            for name, data in copies[path].items():
                with open(f"{new}/{name}", "wb") as f:
                    f.write(data)
                os.chown(f"{new}/{name}", uid, gid)
            os.chown(new, uid, gid)
            writable.append(new)
        else:  # the job folder: read through, written into a private, capped layer
            _point(new, "/")
            try:
                _mount("tmpfs", "/layer", "tmpfs", _SAFE, f"size={plan.job_size},mode=0755", "the job's layer")
                os.mkdir("/layer/upper")
                os.mkdir("/layer/work")
                os.chown("/layer/upper", uid, gid)
                _mount("overlay", new, "overlay", _SAFE,
                       f"lowerdir=/old{path},upperdir=/layer/upper,workdir=/layer/work", "the job's overlay")
            except OSError as error:
                missing.append(f"what a kernel writes into its job folder is not capped ({error})")
                _mount("/old" + path, new, None, MS_BIND | MS_REC, None, "showing the job folder")
            writable.append(new)
    _read_only("/new", True, recursive=True, proc="/old/proc")
    for path in writable:
        _read_only(path, False, recursive=False, proc="/old/proc")
    _mount(None, "/old", None, MS_REC | MS_PRIVATE, None, "making the machine's root private")
    _detach("/old")
    staging = os.open("/", os.O_DIRECTORY | os.O_RDONLY)
    try:
        os.chdir("/new")
        _pivot_root(".", ".")  # the staging root now lies over the kernel's: detach it
        os.fchdir(staging)
        _detach(".")
    finally:
        os.close(staging)
    os.chdir("/")
    return missing


def enter_kernel(plan: Plan) -> list[str]:
    """Sandbox what this process starts next; returns, in the kernel, the pieces it could not
    give. The calling process (single-threaded: just forked, or before any thread starts)
    becomes the kernel's supervisor and never returns: it exits as the kernel does.

    Raises SandboxError, before anything changed for the caller's kernel, when no private mount
    namespace can be had at all: the caller then runs the kernel unsandboxed, saying so. Raises
    SandboxBroken when a later step fails: this process's view has changed, the kernel must not run.
    """
    if not _probing and not sandboxed():  # tried first in a throwaway child: a user namespace
        # without the right to mount (AppArmor's restriction on Ubuntu) cannot be left half-way
        raise SandboxError(0, "; ".join(problems()))
    uid, gid = kernel_identity()
    root = os.geteuid() == 0
    cwd = os.getcwd()
    if root:
        _unshare(CLONE_NEWNS, "unshare(CLONE_NEWNS)")
    else:  # a user namespace of its own grants the mounts
        own_uid, own_gid = os.geteuid(), os.getegid()
        _unshare(CLONE_NEWUSER | CLONE_NEWNS, "unshare(CLONE_NEWUSER | CLONE_NEWNS)")
        try:
            _map_identity(own_uid, own_gid)
        except SandboxError as error:
            raise SandboxBroken(str(error)) from None
    try:
        return _enter(plan, uid, gid, root, cwd)
    except OSError as error:
        raise SandboxBroken(f"the sandbox failed half-way: {error}") from None


def _enter(plan: Plan, uid: int, gid: int, root: bool, cwd: str) -> list[str]:
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
_probing = False  # in problems()' throwaway child: enter_kernel is what is tried


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
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else None  # outside /tmp, each kernel's own
    with tempfile.TemporaryDirectory(prefix="agsb-", dir=base) as probe:
        secret, job, other = (os.path.join(probe, name) for name in ("secret", "job", "other"))
        for folder in (secret, job, other):
            os.mkdir(folder)
        for folder in (probe, job, other):
            os.chmod(folder, 0o755)
        for folder in (secret, other):
            with open(os.path.join(folder, "file"), "w") as f:
                f.write("x")
            os.chmod(os.path.join(folder, "file"), 0o644)

        def attempt() -> str:
            global _probing
            _probing = True
            os.chdir(job)
            found = enter_kernel(Plan(hide=(secret,), job=job, tmp_size=1 << 20, job_size=1 << 20))
            if os.path.exists(os.path.join(secret, "file")):
                found.append("kernels can read what the grader hides from them")
            if os.path.exists(os.path.join(other, "file")):
                found.append("kernels can read the machine beyond what they need to run")
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
    return not any(line.startswith("kernels are not sandboxed") or "can read" in line
                   for line in problems())

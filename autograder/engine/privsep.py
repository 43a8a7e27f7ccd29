"""Privilege separation: where the namespace sandbox cannot be had, the kernel runs as a user of its own.

Gradescope's containers may forbid the namespaces autograder/engine/sandbox.py needs, and so may
other machines. A kernel that then ran as the grader read the references and left a daemon that
rewrote Gradescope's results.json after the grader wrote it (issue 37, finding 7). Instead, where
the setting AUTOGRADER_KERNEL_USER names a user (on Gradescope `autograder-kernel`, made by its
setup.sh), `isolate`, in the process that becomes the kernel (root, before any student code):

- opens the way to the job folder for that user alone: each folder above it, inside the paths the
  grader hides, that the user cannot pass gets the user's group and the group's x bit (passage, not
  listing); the job folder and what is in it the group's r; its socket folder it owns;
- gives it a HOME of its own (a fresh folder under /tmp: matplotlib writes there; the job folder
  stays the grader's, who writes the executed notebook into it);
- caps its processes (RLIMIT_NPROC: there may be no cgroup either), then becomes that user: no
  supplementary group, no capability, no_new_privs (a setuid program gives nothing back);
- then, as that user, tries every path the grader hides (`closed_paths`: each hidden path or, where
  a path the kernel needs lies inside one, the hidden folder's listing and every other entry on
  the way) and refuses to run (exit REFUSED, the reason on stderr) when it can read one.

Where the setting names a user that cannot be had (grading is not root, no such user), the kernel
refuses too: it never runs open. Where it names none, it refuses as well (issue 37, item 4: never the
open mode), and so does `grade` before any submission runs (`open_refusal`, asked by
autograder/batch/session.py), saying both ways out. Only AUTOGRADER_UNSANDBOXED=1, set by hand for
notebooks one trusts, lets kernels run as the grader, said on every kernel; `check` sets it for its
own session, which runs the course's own files (solutions, mutants, right and wrong answers).

What outlives the kernel (a daemon in a session of its own) is ended by `end_processes`: every
process of the user killed (kill(-1) as that user, until none is left) and waited for. Gradescope's
harness calls it before it writes results.json (autograder/classroom/gradescope/results.py).

AUTOGRADER_NO_NAMESPACES=1 acts as a machine without namespaces: the namespace sandbox is never
tried (tests of this path: tests/engine/test_privsep.py, tests/classroom/test_gradescope_privsep.py).
Only the standard library: the kernel launcher imports this.
"""

from __future__ import annotations

import ctypes
import os
import pwd
import resource
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from autograder.engine import sandbox

USER_SETTING = "AUTOGRADER_KERNEL_USER"  # the user kernels run as where there are no namespaces
NO_NAMESPACES_SETTING = "AUTOGRADER_NO_NAMESPACES"  # "1": act as a machine without namespaces
UNSANDBOXED_SETTING = "AUTOGRADER_UNSANDBOXED"  # "1": kernels may run with no isolation (notebooks one trusts)
REFUSED = 77  # a kernel's exit code when it refused to run (EX_NOPERM)
HOME_PREFIX = "agk-home-"  # the kernel's HOME under /tmp
DEFAULT_PROCESSES = 512  # RLIMIT_NPROC when the launcher sets no process cap
_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS = 4, 38


class Refusal(Exception):
    """Privilege separation cannot be had here; the message says why, for the instructor."""


@dataclass(frozen=True)
class KernelUser:
    name: str
    uid: int
    gid: int


def namespaces_off(env: Mapping[str, str] = os.environ) -> bool:
    """Whether AUTOGRADER_NO_NAMESPACES asks to act as a machine without namespaces."""
    return _on(env, NO_NAMESPACES_SETTING)


def _on(env: Mapping[str, str], name: str) -> bool:
    """Whether the setting `name` is switched on (anything but empty, 0, false, no)."""
    return env.get(name, "").strip().lower() not in ("", "0", "false", "no")


def namespaces_missing(env: Mapping[str, str] = os.environ) -> str | None:
    """Why kernels get no namespace sandbox here (one line), or None when they get it."""
    if namespaces_off(env):
        return f"namespaces are off ({NO_NAMESPACES_SETTING}=1)"
    if not sandbox.sandboxed():
        return "; ".join(sandbox.problems())
    return None


def open_allowed(env: Mapping[str, str] = os.environ) -> bool:
    """Whether AUTOGRADER_UNSANDBOXED asks for kernels without isolation where none can be had."""
    return _on(env, UNSANDBOXED_SETTING)


def _open_without_user(env: Mapping[str, str]) -> str | None:
    """Why kernels would get no namespace sandbox, where no user is named to run them as; else None."""
    return None if env.get(USER_SETTING, "").strip() else namespaces_missing(env)


def open_refusal(env: Mapping[str, str] = os.environ) -> str | None:
    """Why grading must not start here (one paragraph), or None: kernels would get neither the
    namespace sandbox nor a user of their own, and nobody asked for them unsandboxed."""
    why = _open_without_user(env)
    if why is None or open_allowed(env):
        return None
    return (f"kernels would run unsandboxed ({why}): a submission could read the references and "
            "write what the grader can. Grade as root with "
            f"{USER_SETTING} naming an unprivileged user for the kernels (docs/instructors.md), on "
            f"Linux with user namespaces, or, only for notebooks you trust, set {UNSANDBOXED_SETTING}=1.")


def open_warning(env: Mapping[str, str] = os.environ) -> str | None:
    """The line grading says where its kernels run unsandboxed because AUTOGRADER_UNSANDBOXED asks."""
    why = _open_without_user(env)
    if why is None or not open_allowed(env):
        return None
    return (f"kernels run unsandboxed ({why}), as {UNSANDBOXED_SETTING}=1 asks: a submission can read "
            "and write what the grader can")


def kernel_user(name: str) -> KernelUser:
    """The user `name`, checked fit to run kernels: this process is root, the user exists, and is
    neither root nor the grader's own user. Raises Refusal, saying what is missing."""
    if not hasattr(os, "setresuid"):
        raise Refusal("this system cannot switch users (no setresuid)")
    if os.geteuid() != 0:
        raise Refusal(f"grading does not run as root (uid {os.geteuid()}), so it cannot run kernels "
                      f"as the user {name!r}")
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise Refusal(f"there is no user {name!r} to run kernels as (Gradescope's setup.sh makes it; "
                      f"elsewhere: useradd --system --user-group {name})") from None
    if entry.pw_uid == 0 or entry.pw_gid == 0:
        raise Refusal(f"the user {name!r} is root or in root's group; kernels need an unprivileged one")
    return KernelUser(name, entry.pw_uid, entry.pw_gid)


# -- what the user must not reach --------------------------------------------------------------

def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def closed_paths(hidden, kept) -> list[tuple[str, str]]:
    """(path, "leaf" | "way") the kernel's user must not read: each hidden path ("leaf": neither
    read nor passed); where a kept path lies inside a hidden folder, that folder ("way": passed,
    never listed) and, level by level down to the kept paths, every other entry ("leaf").
    Runs as root, who can list what the user cannot."""
    kept = sorted({os.path.realpath(k) for k in kept})
    found: dict[str, str] = {}

    def walk(folder: str, inner: list[str]) -> None:
        found[folder] = "way"
        try:
            entries = sorted(os.listdir(folder))
        except OSError:
            return
        for entry in entries:
            path = os.path.join(folder, entry)
            if path in kept:
                continue
            way = [k for k in inner if _inside(k, path)]
            if way and os.path.isdir(path) and not os.path.islink(path):
                walk(path, way)
            else:
                found.setdefault(path, "leaf")

    for path in sorted({os.path.realpath(h) for h in hidden if os.path.lexists(h)}):
        if path in kept:
            continue  # what is needed wins, as in the sandbox; what is hidden inside it does not
        inner = [k for k in kept if _inside(k, path)]
        if inner and os.path.isdir(path):
            walk(path, inner)
        else:
            found.setdefault(path, "leaf")
    return sorted(found.items())


def exposed(paths: list[tuple[str, str]]) -> list[str]:
    """Of `closed_paths`' answer, what this process can read (a "way" it can list, a "leaf" it
    can read or pass): run as the kernel's user."""
    seen = []
    for path, kind in paths:
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except OSError:
            continue  # cannot even reach it
        readable = os.access(path, os.R_OK)
        if readable or (kind == "leaf" and is_dir and os.access(path, os.X_OK)):
            seen.append(path)
    return seen


# -- becoming the kernel's user ------------------------------------------------------------------

def _passable(info: os.stat_result, user: KernelUser, bit: int) -> bool:
    """Whether `user` (no supplementary group) has permission `bit` (1 x, 4 r) by the mode bits."""
    if info.st_uid == user.uid:
        return bool(info.st_mode & (bit << 6))
    if info.st_gid == user.gid:
        return bool(info.st_mode & (bit << 3))
    return bool(info.st_mode & bit)


def _grant(path: str, user: KernelUser, bits: int) -> None:
    """Give `user`'s group `bits` (0o010 pass, 0o040 read) on `path`, which root owns (never
    through a link). What the group already had stays."""
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or info.st_uid != 0:
        return
    os.chown(path, 0, user.gid, follow_symlinks=False)
    os.chmod(path, stat.S_IMODE(info.st_mode) | bits)


def open_the_way(job: str, hidden, user: KernelUser) -> None:
    """Let `user` reach and read its job folder: each folder above it that lies inside a hidden
    path and that the user cannot pass gets the pass bit for the user's group; the job folder and
    what is in it the read bit (folders the pass bit too). Raises Refusal when a folder above it,
    outside the hidden paths, is closed to the user (the grader's own, which this does not open)."""
    job = os.path.realpath(job)
    hidden = [os.path.realpath(h) for h in hidden]
    parts = job.strip("/").split("/")
    for depth in range(1, len(parts)):
        folder = "/" + "/".join(parts[:depth])
        info = os.stat(folder)
        if _passable(info, user, 1):
            continue
        if not any(_inside(folder, h) for h in hidden):
            raise Refusal(f"the user {user.name!r} cannot reach its job folder: {folder} is closed "
                          "to it (grade from a folder it can pass through)")
        _grant(folder, user, 0o010)
    for folder, _dirs, files in os.walk(job):
        _grant(folder, user, 0o050)
        for name in files:
            _grant(os.path.join(folder, name), user, 0o040)


def _give(folder: str, user: KernelUser) -> None:
    """The kernel's socket folder and what is in it (its connection file) become the user's."""
    if not os.path.isdir(folder) or os.path.islink(folder):
        return
    os.chown(folder, user.uid, user.gid, follow_symlinks=False)
    for name in os.listdir(folder):
        os.chown(os.path.join(folder, name), user.uid, user.gid, follow_symlinks=False)


def _private_home(user: KernelUser) -> str:
    home = tempfile.mkdtemp(prefix=HOME_PREFIX, dir="/tmp" if os.path.isdir("/tmp") else None)
    os.chown(home, user.uid, user.gid)
    return home


def _become(user: KernelUser, processes: int) -> None:
    """This process becomes `user` for good: no group of root's, no capability, no regaining one."""
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (processes, processes))
    except (OSError, ValueError):
        pass
    os.setgroups([])
    os.setresgid(user.gid, user.gid, user.gid)
    os.setresuid(user.uid, user.uid, user.uid)
    if os.getuid() != user.uid or os.geteuid() != user.uid:
        raise Refusal(f"could not become the user {user.name!r}")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0) != 0:
        raise Refusal("prctl(PR_SET_NO_NEW_PRIVS) failed")
    libc.prctl(_PR_SET_DUMPABLE, ctypes.c_ulong(1), 0, 0, 0)  # its /proc files stay its own


def separate(plan: sandbox.Plan, user: KernelUser, processes: int = 0) -> str:
    """In the process that becomes the kernel: become `user` with the job folder open to it and
    nothing hidden readable; its HOME. Raises Refusal (checked as the user, after the switch)."""
    job = os.path.realpath(plan.job) if plan.job else os.getcwd()
    open_the_way(job, plan.hide, user)
    for folder in plan.shared:
        _give(folder, user)
    home = _private_home(user)
    kept = [*plan.needed, job, *plan.shared, home]
    closed = closed_paths(plan.hide, kept)
    _become(user, processes or DEFAULT_PROCESSES)
    seen = exposed(closed)
    if seen:
        raise Refusal(f"the user {user.name!r} can read what grading hides from kernels: "
                      f"{', '.join(seen[:5])}{' ...' if len(seen) > 5 else ''} (close it to that user)")
    try:
        os.chdir(job)
    except OSError as error:
        raise Refusal(f"the user {user.name!r} cannot enter its job folder ({error})") from None
    return home


def isolate(plan: sandbox.Plan, env: Mapping[str, str], processes: int = 0) -> tuple[list[str], str]:
    """In the process that becomes the kernel: the namespace sandbox, else the kernel's user
    (AUTOGRADER_KERNEL_USER in `env`), else, only where AUTOGRADER_UNSANDBOXED asks for it, nothing.
    Returns the lines to report and the kernel's HOME. Otherwise (a user named that cannot be had,
    or none named and nothing asked) the process never returns: it says why on stderr and exits
    REFUSED."""
    job = plan.job or os.getcwd()
    if namespaces_off(env):
        reason = f"namespaces are off ({NO_NAMESPACES_SETTING}=1)"
    else:
        try:
            return sandbox.enter_kernel(plan), job
        except OSError as error:
            reason = str(error)
    name = env.get(USER_SETTING, "").strip()
    if not name:
        if open_allowed(env):
            return [f"the kernel runs unsandboxed ({reason}; {UNSANDBOXED_SETTING}=1)"], job
        refuse(f"no namespace sandbox ({reason}), no {USER_SETTING} to run it as, and {UNSANDBOXED_SETTING} "
               "is not set: it never runs unsandboxed unless asked")
    try:
        home = separate(plan, kernel_user(name), processes)
    except (Refusal, OSError) as error:
        refuse(f"no namespace sandbox ({reason}), and no privilege separation: {error}")
    return [f"no namespace sandbox ({reason}): the kernel runs as {name}"], home


def refuse(reason: str) -> None:
    """End this process (a kernel not yet started) with REFUSED, the reason on stderr."""
    try:
        sys.stderr.write(f"autograder: the kernel refused to run: {reason}\n")
        sys.stderr.flush()
    finally:
        os._exit(REFUSED)


# -- what outlives a kernel -------------------------------------------------------------------------

def processes_of(uid: int) -> list[int]:
    """Processes (zombies left out: they run nothing) whose real, effective or saved uid is `uid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue  # ended meanwhile
        uids = [int(u) for u in fields.get("Uid", "").split()[:3]]
        if uid in uids and not fields.get("State", "").strip().startswith(("Z", "X")):
            found.append(int(entry))
    return found


def as_user(user: KernelUser, action: Callable[[], str]) -> str:
    """What `action()` returns when run in a forked child that has become `user` (at most 64 kB)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (child)
        os.close(read)
        try:
            os.setgroups([])
            os.setresgid(user.gid, user.gid, user.gid)
            os.setresuid(user.uid, user.uid, user.uid)
            answer = action()
        except BaseException as error:  # noqa: BLE001 (reported to the parent)
            answer = f"failed as {user.name}: {error}"
        try:
            os.write(write, answer.encode()[:65536])
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        answer = pipe.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return answer


def _kill_all() -> str:
    """kill(-1, SIGKILL) as the user: every process it may signal but this one, until none is left."""
    for _ in range(10_000):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            break
    return ""


def end_processes(user: KernelUser, timeout: float = 30.0) -> list[int]:
    """Kill every process of `user` and wait until none runs; [] then, else those still there at
    `timeout` (a process stuck in the kernel, which SIGKILL ends once it returns)."""
    deadline = time.monotonic() + timeout
    while True:
        left = processes_of(user.uid)
        if not left or time.monotonic() > deadline:
            return left
        as_user(user, _kill_all)
        time.sleep(0.01)


def remove_leftovers(user: KernelUser, folders=("/tmp", "/var/tmp", "/dev/shm")) -> None:
    """Remove what `user` left directly in the machine's temporary folders (its HOMEs too); call
    it once its processes are gone."""
    import shutil

    for folder in folders:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if info.st_uid != user.uid:
                continue
            if stat.S_ISDIR(info.st_mode):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass

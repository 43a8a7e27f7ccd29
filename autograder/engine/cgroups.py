"""A kernel is one unit: a cgroup caps its memory and its process count as a whole.

Per-process limits (RLIMIT_DATA) let three children of one kernel hold 2 GB each; a cgroup
counts them together, tmpfs pages (its /tmp) included. `KernelCgroup` makes one cgroup per
kernel under the grader's own, in each hierarchy that has the controller (cgroup v1's `memory`
and `pids`, or v2 where the grader's cgroup delegates them), sets the caps, and hands out the
`cgroup.procs` files opened for writing: the kernel's process writes "0" into each before it
runs a line (the write is checked against the opener's credentials, the launcher's), so it
cannot start anything outside. `close()` kills what is left inside and removes the cgroup.

Where no hierarchy can be written (no cgroup filesystem, no delegation, a container), `problem()`
says so in one line and kernels keep the per-process limits only. Only the standard library:
the kernel launcher imports this.
"""

from __future__ import annotations

import os
import signal
import time

PREFIX = "autograder-kernel-"
CONTROLLERS = ("memory", "pids")


def _own_cgroups() -> dict[str, tuple[str, int]]:
    """controller -> (this process's cgroup folder for it, cgroup version)."""
    mounts: dict[str, tuple[str, str, int]] = {}
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, kinds = left.split(), right.split()
                if len(fields) < 5 or len(kinds) < 3:
                    continue
                if kinds[0] == "cgroup":
                    for option in kinds[2].split(","):
                        if option in CONTROLLERS:
                            mounts[option] = (fields[4], fields[3], 1)
                elif kinds[0] == "cgroup2":
                    mounts.setdefault("", (fields[4], fields[3], 2))
        with open("/proc/self/cgroup") as f:
            lines = [line.rstrip("\n").split(":", 2) for line in f]
    except OSError:
        return {}
    found: dict[str, tuple[str, int]] = {}
    for _, controllers, path in (parts for parts in lines if len(parts) == 3):
        for controller in controllers.split(",") if controllers else [""]:
            if controller not in mounts:
                continue
            point, root, version = mounts[controller]
            inside = path[len(root):] if root != "/" and path.startswith(root) else path
            folder = os.path.join(point, inside.lstrip("/"))
            if version == 1:
                found[controller] = (folder, 1)
            else:
                try:
                    with open(os.path.join(folder, "cgroup.subtree_control")) as f:
                        delegated = f.read().split()
                except OSError:
                    delegated = []
                for name in CONTROLLERS:
                    if name in delegated:
                        found.setdefault(name, (folder, 2))
    return found


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


class KernelCgroup:
    """One kernel's cgroup(s); `.fds()` for the kernel to join, `.close()` ends what is inside.

    memory: bytes for the kernel and all it starts, together; processes: tasks (threads count).
    """

    def __init__(self, memory: int | None, processes: int | None):
        self.folders: list[str] = []
        self.problem: str | None = None
        wanted = {"memory": memory, "pids": processes}
        own = _own_cgroups()
        missing = [c for c, value in wanted.items() if value and c not in own]
        name = f"{PREFIX}{os.getpid()}-{time.monotonic_ns() % 10 ** 9}"
        for controller, value in wanted.items():
            if not value or controller not in own:
                continue
            parent, version = own[controller]
            folder = os.path.join(parent, name)
            try:
                if folder not in self.folders:
                    os.mkdir(folder)
                    self.folders.append(folder)
                if controller == "memory":
                    _write(os.path.join(folder, "memory.limit_in_bytes" if version == 1 else "memory.max"),
                           str(int(value)))
                    if version == 2:
                        try:
                            _write(os.path.join(folder, "memory.swap.max"), "0")
                        except OSError:
                            pass
                else:
                    _write(os.path.join(folder, "pids.max"), str(int(value)))
            except OSError as error:
                missing.append(f"{controller} ({error.strerror or error})")
        if missing:
            self.problem = ("kernels' memory and process count are capped per process, not per "
                            f"kernel: no cgroup for {', '.join(missing)}")

    def fds(self) -> list[int]:
        """`cgroup.procs` of each folder, opened for writing (the caller closes them)."""
        return [os.open(os.path.join(folder, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                for folder in self.folders]

    def close(self) -> None:
        """Kill every process still inside, then remove the folders (never raises)."""
        for folder in self.folders:
            kill_all(folder)
        self.folders = []


def join(fds: list[int]) -> None:
    """Move the calling process into the cgroups whose `cgroup.procs` these descriptors are."""
    for fd in fds:
        os.write(fd, b"0")
        os.close(fd)


def kill_all(folder: str, attempts: int = 50) -> bool:
    """SIGKILL whatever is in the cgroup `folder`, then remove it; whether it is gone."""
    for _ in range(attempts):
        try:
            with open(os.path.join(folder, "cgroup.procs")) as f:
                pids = [int(line) for line in f if line.strip()]
        except OSError:
            return not os.path.isdir(folder)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not pids:
            try:
                os.rmdir(folder)
                return True
            except OSError:
                pass
        time.sleep(0.02)
    return False


def sweep() -> None:
    """Remove the cgroups of kernels whose launcher is gone (killed before it could clean up)."""
    for parent, _ in set(_own_cgroups().values()):
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if not name.startswith(PREFIX):
                continue
            try:
                os.kill(int(name[len(PREFIX):].split("-")[0]), 0)
            except (ValueError, ProcessLookupError):
                kill_all(os.path.join(parent, name))
            except OSError:
                pass


def problem(memory: int | None = 1 << 30, processes: int | None = 64) -> str | None:
    """Why kernels cannot be capped as a whole here, or None (tried on a throwaway cgroup)."""
    group = KernelCgroup(memory, processes)
    message = group.problem
    group.close()
    return message

"""Gradescope without namespaces: the kernel's own user, made by setup.sh, checked before each submission.

Gradescope's containers may forbid the namespaces of autograder/engine/sandbox.py. There grading
kernels run as KERNEL_USER instead (autograder/engine/privsep.py), and what keeps the course from
them is who owns what:

  closed to the user (no read, no passage): the grading folder (course/grading/), the source
  notebook (course/source/), the installed helpers.reference, /autograder/results/ and
  /autograder/submission/; the course folder (course/) is not listable (each kernel gets passage
  to its own job folder inside it, and nothing else);
  not writable by it: /autograder, /autograder/source and the virtual environment.

`prepare` (setup.sh, as root, once) makes the user and sets those modes; `close` sets them again
before each submission (Gradescope puts submission/ in place after setup.sh); `refusal` then
checks them as the user itself, and says why grading cannot go on safely: no namespaces, and the
user missing, grading not root, or a path it can read or write. results.py turns that into a
results.json of 0 with the reason, and never grades open.

    python -m autograder.classroom.gradescope.kernel_user [--root /autograder] [--user NAME]
"""

from __future__ import annotations

import argparse
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

from autograder.engine import privsep

KERNEL_USER = "autograder-kernel"


def user_name() -> str:
    """The kernel's user: AUTOGRADER_KERNEL_USER (a test's throwaway user), else KERNEL_USER."""
    return os.environ.get(privsep.USER_SETTING, "").strip() or KERNEL_USER


def reference_folder() -> Path:
    """The installed helpers.reference (the answers), as grading imports it."""
    import importlib.util

    spec = importlib.util.find_spec("helpers")
    return Path(list(spec.submodule_search_locations)[0]).resolve() / "reference"


def closed(root: Path) -> list[Path]:
    """What the kernel's user may neither read nor pass through."""
    course = Path(root) / "source" / "course"
    return [course / "grading", course / "source", reference_folder(),
            Path(root) / "results", Path(root) / "submission", Path(root) / "source" / "dist"]


def fixed(root: Path) -> list[Path]:
    """What the kernel's user may not write to (it may read them: the interpreter runs from there)."""
    return [Path(root), Path(root) / "source", Path(sys.prefix), Path(sys.prefix) / "bin",
            reference_folder().parent.parent]


def _close_tree(path: Path) -> None:
    """root owns `path` and all in it; no one else reads, writes or passes (links left as they are)."""
    for folder, dirs, files in os.walk(path):
        for name in [*dirs, *files, None]:
            item = os.path.join(folder, name) if name else folder
            info = os.lstat(item)
            if stat.S_ISLNK(info.st_mode):
                continue
            os.chown(item, 0, 0, follow_symlinks=False)
            os.chmod(item, stat.S_IMODE(info.st_mode) & 0o700)


def close(root: Path) -> None:
    """Set the modes above (as root): the closed paths 0700 and below them nothing for others;
    the course folder 0700 (each kernel's passage is opened when it starts)."""
    root = Path(root)
    (root / "results").mkdir(parents=True, exist_ok=True)
    for path in closed(root):
        if path.exists() and not path.is_symlink():
            _close_tree(path)
    course = root / "source" / "course"
    if course.is_dir():
        os.chown(course, 0, 0)
        os.chmod(course, 0o700)


def make_user(name: str) -> None:
    """Create the system user `name` (its own group, no home, no login) unless it exists."""
    try:
        import pwd

        pwd.getpwnam(name)
        return
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    subprocess.run([useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                    "--shell", "/usr/sbin/nologin", name], check=True)


def prepare(root: Path, name: str) -> None:
    """setup.sh's step: the user, then the modes."""
    make_user(name)
    close(root)


def problems(root: Path, user: privsep.KernelUser) -> list[str]:
    """What `user` can reach that it must not, found as `user` itself (one line each)."""
    closed_paths = [str(p) for p in closed(root)]
    fixed_paths = [str(p) for p in fixed(root)]

    def look() -> str:
        found = []
        for path in closed_paths:
            if os.access(path, os.R_OK) or os.access(path, os.W_OK) or (
                    os.path.isdir(path) and os.access(path, os.X_OK)):
                found.append(f"{user.name} can reach {path}")
        found += [f"{user.name} can write to {path}" for path in fixed_paths if os.access(path, os.W_OK)]
        return "\n".join(found)

    return [line for line in privsep.as_user(user, look).splitlines() if line]


def refusal(root: Path, name: str | None = None) -> str | None:
    """Why grading must not go on here (for results.json), or None: the namespace sandbox works,
    or the kernel's user is ready and can reach nothing it must not. Sets the modes first."""
    why = privsep.namespaces_missing()
    if why is None:
        return None
    name = name or user_name()
    try:
        user = privsep.kernel_user(name)
        close(root)
        found = problems(root, user)
    except (privsep.Refusal, OSError) as error:
        found = [str(error)]
    if not found:
        print(f"No namespace sandbox here ({why}): grading kernels run as {name}.", flush=True)
        return None
    return (f"The autograder refused to run your notebook: this machine gives it no sandbox ({why}), "
            f"and it cannot run your code as a user of its own ({'; '.join(found)}). It never runs "
            "a submission without one. Your instructor has been told; this is not a grade.")


def end(name: str | None = None) -> None:
    """Kill every process of the kernel's user, wait until none is left, remove what it left in
    the temporary folders; nothing to do where the user does not exist or grading is not root.
    Raises RuntimeError when a process would not end."""
    try:
        user = privsep.kernel_user(name or user_name())
    except privsep.Refusal:
        return
    left = privsep.end_processes(user)
    if left:
        raise RuntimeError(f"processes of {user.name} would not end: {left}")
    privsep.remove_leftovers(user)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.classroom.gradescope.kernel_user",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get("AUTOGRADER_GRADESCOPE_ROOT")
                                                         or "/autograder"))
    parser.add_argument("--user", default=None, help=f"default: ${privsep.USER_SETTING}, else {KERNEL_USER}")
    args = parser.parse_args(argv)
    name = args.user or user_name()
    prepare(args.root, name)
    print(f"setup: kernels without namespaces run as {name}; the course is closed to it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

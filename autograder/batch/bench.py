"""`python -m autograder bench SUBMITTED [--jobs N]`: our `grade` against plain nbgrader.

Both grade the same batch in one run and the same Python environment:
  plain nbgrader   `nbgrader autograde ASSIGNMENT` for each assignment, in one fresh course
                   folder holding a copy of source/ and the batch under submitted/, with
                   nbgrader's own defaults: its nbgrader_config.py names that folder's
                   locations and nothing else (none of autograder/nbgrader_config.py: no
                   sandbox, no trusted run, its 30 s cell timeout), and one BLAS/OpenMP thread
                   per process (the cheapest way to run it). nbgrader grades one notebook
                   after another, each on a cold kernel. `generate_assignment` runs first, untimed.
  ours             `python -m autograder grade SUBMITTED --jobs N --regrade` into a fresh
                   output folder, timed whole: its own kernel server (never one a caller shares,
                   kernel_server.SHARED) and its own generation included; like plain
                   `nbgrader autograde`, it makes no feedback HTML (`feedback` makes that).
Each side's CPU time is its processes' own, whatever else the machine runs: each command runs in
a cgroup of its own where this machine lets us make one (cgroup v1's cpuacct or v2; everything it
starts stays in it, kernels forked by its server included), else getrusage of the waited-for
children (which misses what a process left unwaited: `grade`'s 20 CPU-s against its cgroup's 44 on
the 16-notebook batch). The machine's busy CPU-seconds from /proc/stat over the same time are kept
beside it (they count every other process too: quiet machines only).
Printed: seconds, CPU-seconds and submissions per minute of each; the wall-clock ratio and the
per-CPU ratio; whether the scores agree. The same goes to OUT/bench.json (default OUT: build/bench).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.batch.threads import THREAD_VARIABLES
from autograder.course.layout import Course
from autograder.course.submitted import collect
from autograder.engine.job import default_jobs
from autograder.engine.kernel_server import SHARED

_PLAIN_CONFIG = '''\
# Plain nbgrader on a copy of the batch: nbgrader's own defaults, this folder's locations.
c = get_config()  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = {db_url!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
'''


def _env(**extra: str) -> dict:
    """This environment with its bin/ first on PATH (nbgrader runs `alembic` from there), `extra`
    on top, and no kernel server to share: each side starts what it needs, and pays for it."""
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")]), **extra}
    env.pop(SHARED, None)
    return env


@dataclass
class Cost:
    """What running something took: wall seconds, its processes' own CPU-seconds, and the machine's
    busy CPU-seconds meanwhile (None where /proc/stat is not there)."""

    seconds: float = 0.0
    cpu: float = 0.0
    machine: float | None = 0.0

    def __add__(self, other: Cost) -> Cost:
        machine = None if None in (self.machine, other.machine) else self.machine + other.machine
        return Cost(self.seconds + other.seconds, self.cpu + other.cpu, machine)


def machine_busy_seconds() -> float | None:
    """CPU-seconds this machine's cores have been busy since boot (/proc/stat: all but idle and
    iowait), or None where there is no /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class CpuGroup:
    """A cgroup of its own for one command, to count the CPU time of all it starts: in cgroup v1's
    cpuacct hierarchy or under this process's cgroup v2. `usable` is False where none can be made
    here (not Linux, no such hierarchy, no right to write it); `seconds()` reads its total."""

    def __init__(self):
        self.folder: str | None = None
        self.usage, self.scale = "", 1.0
        for folder, usage, scale in self._places():
            path = os.path.join(folder, f"autograder-bench-{os.getpid()}-{time.monotonic_ns() % 10 ** 9}")
            try:
                os.mkdir(path)
            except OSError:
                continue
            if os.path.exists(os.path.join(path, usage)):
                self.folder, self.usage, self.scale = path, usage, scale
                return
            os.rmdir(path)

    @staticmethod
    def _places() -> list[tuple[str, str, float]]:
        """(cgroup folder of this process, the file that counts its CPU time, seconds per unit)."""
        try:
            with open("/proc/self/mountinfo", encoding="utf-8") as f:
                mounts = [line.split(" - ") for line in f]
            with open("/proc/self/cgroup", encoding="utf-8") as f:
                own = [line.rstrip("\n").split(":", 2) for line in f]
        except OSError:
            return []
        places = []
        for left, right in (m for m in mounts if len(m) == 2):
            fields, kinds = left.split(), right.split()
            if len(fields) < 5 or len(kinds) < 3:
                continue
            root, point = fields[3], fields[4]
            for _, controllers, path in (o for o in own if len(o) == 3):
                inside = path[len(root):] if root != "/" and path.startswith(root) else path
                folder = os.path.join(point, inside.lstrip("/"))
                if kinds[0] == "cgroup" and "cpuacct" in kinds[2].split(",") and "cpuacct" in controllers.split(","):
                    places.append((folder, "cpuacct.usage", 1e-9))
                elif kinds[0] == "cgroup2" and controllers == "":
                    places.append((folder, "cpu.stat", 1e-6))
        return places

    @property
    def usable(self) -> bool:
        return self.folder is not None

    def join(self) -> None:
        """In the child, before it runs the command: move into the group."""
        with open(os.path.join(self.folder, "cgroup.procs"), "w", encoding="ascii") as f:
            f.write("0")

    def seconds(self) -> float:
        with open(os.path.join(self.folder, self.usage), encoding="ascii") as f:
            text = f.read()
        if self.usage == "cpu.stat":
            text = next(line.split()[1] for line in text.splitlines() if line.startswith("usage_usec"))
        return int(text) * self.scale

    def close(self) -> None:
        if self.folder is not None:
            try:
                os.rmdir(self.folder)
            except OSError:  # a process of the command still in it: leave it to the system
                pass
            self.folder = None


def _run(command: list[str], cwd: Path, log: Path, env: dict | None = None) -> Cost:
    """Run `command`, its output into `log`; what it cost. Raises when it fails."""
    group = CpuGroup()
    busy, cpu, start = machine_busy_seconds(), _children_cpu(), time.perf_counter()
    try:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(command)}\n")
            f.flush()
            done = subprocess.run(command, cwd=cwd, env=env or _env(), stdout=f, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, preexec_fn=group.join if group.usable else None)
        seconds, after = time.perf_counter() - start, machine_busy_seconds()
        own = group.seconds() if group.usable else _children_cpu() - cpu
    finally:
        group.close()
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed (exit {done.returncode}); see {log}")
    return Cost(seconds, own, None if None in (busy, after) else after - busy)


def plain_nbgrader(course: Course, batch: dict[tuple[str, str], Path], folder: Path
                   ) -> tuple[Cost, dict[tuple[str, str], float]]:
    """Grade `batch` ((student, assignment) -> notebook) with nbgrader's command line, its
    defaults and one thread per process.

    Returns what `nbgrader autograde` cost, all assignments together, and the scores from its
    gradebook.
    """
    from nbgrader.api import Gradebook

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    assignments = sorted({a for _, a in batch})
    for assignment in assignments:
        shutil.copytree(course.source_dir / assignment, folder / "source" / assignment)
    for (student, assignment), notebook in batch.items():
        target = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebook, target)
    db_url = f"sqlite:///{(folder / 'gradebook.db').resolve()}"
    (folder / "nbgrader_config.py").write_text(_PLAIN_CONFIG.format(root=str(folder.resolve()),
                                                                    db_url=db_url))
    nbgrader = [sys.executable, "-m", "nbgrader"]
    log = folder / "nbgrader.log"
    one_thread = _env(**dict.fromkeys(THREAD_VARIABLES, "1"))
    for assignment in assignments:
        _run([*nbgrader, "generate_assignment", assignment, "--force"], folder, log, one_thread)
    cost = sum((_run([*nbgrader, "autograde", assignment], folder, log, one_thread)
                for assignment in assignments), Cost())
    scores = {}
    with Gradebook(db_url) as gb:
        for student, assignment in batch:
            try:
                scores[student, assignment] = float(gb.find_submission(assignment, student).score)
            except Exception:  # nbgrader kept no submission: it failed to grade it
                scores[student, assignment] = None
    return cost, scores


def ours(course: Course, submitted: Path, assignments: list[str], folder: Path, n_jobs: int
         ) -> tuple[Cost, dict[tuple[str, str], float]]:
    """Grade the batch with `python -m autograder grade`; what the command cost, scores."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    command = [sys.executable, "-m", "autograder", "grade", str(submitted), "--root",
               str(course.root), "--out", str(folder / "grades"), "--jobs", str(n_jobs), "--regrade"]
    for assignment in assignments:
        command += ["--assignment", assignment]
    cost = _run(command, course.root, folder / "grade.log")
    with open(folder / "grades" / "grades.csv", newline="", encoding="utf-8") as f:
        scores = {(r["student_id"], r["assignment"]): float(r["score"])
                  for r in csv.DictReader(f) if r["status"] == "graded"}
    return cost, scores


def _side(cost: Cost, n: int, command: str) -> dict:
    return {"seconds": round(cost.seconds, 2), "cpu_seconds": round(cost.cpu, 2),
            "machine_busy_cpu_seconds": None if cost.machine is None else round(cost.machine, 2),
            "submissions_per_minute": round(n * 60 / cost.seconds, 2),
            "cpu_seconds_per_submission": round(cost.cpu / n, 2), "command": command}


def _cpu_counted_by() -> str:
    group = CpuGroup()
    try:
        return "the commands' cgroups" if group.usable else "getrusage of the waited-for processes"
    finally:
        group.close()


def _ratio(plain: float | None, mine: float | None) -> float | None:
    return round(plain / mine, 2) if plain and mine else None


def bench(course: Course, submitted: Path, out: Path, n_jobs: int | None = None) -> dict:
    """Time both on the batch under `submitted`; returns (and writes to out/bench.json) the result."""
    n_jobs = n_jobs or default_jobs()
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    found = [s for s in collect(submitted, course.assignments()) if s.notebook is not None]
    if not found:
        raise ValueError(f"no notebook to grade under {submitted}")
    batch = {(s.student_id, s.assignment): s.notebook for s in found}
    assignments = sorted({a for _, a in batch})
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    # Ours first: whatever the first run warms up (the page cache) then helps nbgrader.
    our_cost, our_scores = ours(course, submitted, assignments, out / "ours", n_jobs)
    plain_cost, plain_scores = plain_nbgrader(course, batch, out / "nbgrader")
    n = len(batch)
    differences = [{"student_id": s, "assignment": a, "nbgrader": plain_scores.get((s, a)),
                    "ours": our_scores.get((s, a))}
                   for s, a in sorted(batch) if plain_scores.get((s, a)) != our_scores.get((s, a))]
    report = {
        "submissions": n,
        "assignments": assignments,
        "jobs": n_jobs,
        "cores": default_jobs(),
        "nbgrader": _side(plain_cost, n, "nbgrader autograde ASSIGNMENT (each assignment, sequential; "
                                         "nbgrader's defaults, one thread)"),
        "ours": _side(our_cost, n, f"python -m autograder grade SUBMITTED --jobs {n_jobs} --regrade"),
        "ratio": _ratio(plain_cost.seconds, our_cost.seconds),  # wall clock
        "cpu_ratio": _ratio(plain_cost.cpu, our_cost.cpu),  # the processes' own CPU-seconds
        "cpu_counted_by": _cpu_counted_by(),
        "machine_cpu_ratio": _ratio(plain_cost.machine, our_cost.machine),
        "scores_agree": not differences,
        "differences": differences,
        "load_average_before": load_before,
        "python": platform.python_version(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def format_bench(report: dict) -> str:
    n = report["submissions"]
    plain, mine = report["nbgrader"], report["ours"]
    agree = ("scores agree" if report["scores_agree"]
             else f"scores differ on {len(report['differences'])} submission(s)")
    machine = report.get("machine_cpu_ratio")
    return "\n".join([
        f"plain nbgrader autograde: {n} submissions in {plain['seconds']:.1f} s and {plain['cpu_seconds']:.1f} "
        f"CPU-s = {plain['submissions_per_minute']:.1f} submissions/min (its defaults, sequential, cold "
        "kernels, one thread)",
        f"autograder grade --jobs {report['jobs']}: {n} submissions in {mine['seconds']:.1f} s and "
        f"{mine['cpu_seconds']:.1f} CPU-s = {mine['submissions_per_minute']:.1f} submissions/min",
        f"ratio: {report['ratio']:.2f}x wall on {report['cores']} core(s), {report['cpu_ratio']:.2f}x per CPU "
        "(the processes' own CPU-seconds" + (f"; the machine's busy CPU-seconds: {machine:.2f}x" if machine else "")
        + f"); {agree}",
        f"(CPU-seconds counted by {report['cpu_counted_by']})",
    ])


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submitted", type=Path, metavar="SUBMITTED",
                        help="a batch laid out as SUBMITTED/<student>/<assignment>/<assignment>.ipynb")
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help=f"our parallel jobs (default: {default_jobs()}, the cores)")
    parser.add_argument("--out", type=Path, default=None,
                        help="working folder and bench.json (default: build/bench)")


def run(args: argparse.Namespace, course: Course) -> int:
    if not args.submitted.is_dir():
        print(f"bench: {args.submitted} is not a folder of submissions")
        return 2
    out = args.out or course.build_dir / "bench"
    try:
        report = bench(course, args.submitted, out, args.jobs)
    except (ValueError, RuntimeError) as error:
        print(f"bench: {error}")
        return 2
    print(format_bench(report))
    print(f"report: {Path(out) / 'bench.json'}")
    if not report["scores_agree"]:
        for d in report["differences"]:
            print(f"  {d['student_id']}/{d['assignment']}: nbgrader {d['nbgrader']}, ours {d['ours']}")
    return 0

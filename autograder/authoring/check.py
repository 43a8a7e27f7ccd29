"""`python -m autograder check [ASSIGNMENT...] [--assignment NAME]... [--jobs N]`: prove the tests.

Gates, per assignment (docs/design.md, "The flow"):
  solution      the source notebook, graded as a submission, scores full marks;
  release       the untouched release notebook scores 0 on every test cell, and every visible test
                fails with an error that teaches (not a NameError, an ImportError or a
                SyntaxError: a notebook broken for a student who has not started, BROKEN);
  mutants       every mutant in grading/<assignment>/mutants/ loses points on each test it names;
  mutant count  at least four mutants (MIN_MUTANTS);
  grading folder  grading/<assignment>/ exists, and its probe.py loads (autograder/course/grading_folder.py);
  probe         every exercise of the notebook has a probe, every probe an exercise of the notebook;
  mutant exercise  every mutant replaces a solution cell that defines an exercise;
  variants      every variant and wrong answer names an exercise of the probe;
  right answers every variant (grading/<assignment>/variants/), put after the solution of its
                exercise, scores full marks, the notebook's tests and the trusted run alike (but on
                the cells its '# may lose:' line names: a challenge's upper tiers);
  wrong answers every wrong answer (grading/<assignment>/wrong/) loses points on its exercise,
                the trusted run saying the words its file names, and on no other exercise;
  points        the intro table and the summary state the points the nbgrader metadata gives
                (autograder/course/points.py);
  release sync  release/ is what nbgrader generates from source/ today;
  no leaks      release/ holds no solution line and no hidden test line;
  kinds         grading/<assignment>/kinds.toml, where there is one, reads as autograder/course/kinds.py
                says (a kind and a why per exercise).
Solution, release, mutants, right and wrong answers are submissions to the engine that `grade`
uses. A mutant is graded on the source notebook up to the last test it names (later cells cannot
change those tests' scores), in a family: the mutants of an assignment share one run, forked before
each mutated cell (autograder/authoring/families.py). Mutants and the release are judged by the
notebook's tests alone (no trusted run): a mutant must lose points to the tests a student's notebook holds. Right and wrong
answers are graded as a student's notebook is, trusted run included; the k-th right answer of every
exercise share one run (right answers of different exercises stay right together), and so do the
k-th wrong answers (each must fail its own exercise only, so one cannot hide another).

Prints one table, writes the same to build/course-report.json (merged: `check NN` replaces NN's
entry and keeps the other assignments' from earlier runs), exits 1 when a gate fails. Beside the gates it
measures how much of each notebook is copied rather than worked out: the points of its transcribed and
one-line exercises (autograder/course/kinds.py), the table's column `transcribed` and the report's
`transcribed_share`, and below the table the same over the assignments checked.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from autograder.authoring import families, leaks, proofs
from autograder.batch.backends import add_backend_options, make_backend
from autograder.batch.session import GradingSession
from autograder.course import exercises, grading_folder, kinds, points
from autograder.course.atomic import atomic_write
from autograder.course.exercises import Exercises
from autograder.course.layout import Course, add_assignment_options, selected
from autograder.course.mutants import Mutant, MutantError, apply_mutant, parse_mutant
from autograder.course.notebooks import (
    cell_index,
    dumps,
    normalize,
    read_notebook,
    write_notebook,
)
from autograder.course.safe_text import safe_line, safe_lines
from autograder.engine.job import GradeJob, GradeResult, default_jobs
from autograder.engine.nbgrader_setup import cell_timeout
from autograder.engine.template import GenerationError, Template, build_template
from autograder.probes import ProbeError

MIN_MUTANTS = 4
# Errors that say the notebook is broken for a student, not that an exercise is unsolved: an
# untouched release's visible test must not fail with one (gate 'release').
BROKEN = ("NameError", "ModuleNotFoundError", "ImportError", "SyntaxError", "IndentationError")
REPORT_NAME = "course-report.json"
# Keys every report object has (docs/design.md); the rest are extras for people and tests.
REPORT_KEYS = ("assignment", "max_score", "solution_score", "release_score", "mutants_caught",
               "mutants_total", "seconds")


@dataclass
class AssignmentReport:
    assignment: str
    max_score: float
    solution_score: float | None  # None: the notebook could not be graded
    release_score: float | None
    mutants_caught: int
    mutants_total: int
    seconds: float  # grading time spent on the assignment: the sum of its runs
    tests: int = 0
    solution_seconds: float | None = None
    failures: list[str] = field(default_factory=list)
    runs: list[dict] = field(default_factory=list)
    sandbox: list[str] = field(default_factory=list)  # what of the sandbox this machine lacked
    # One per right or wrong answer: file (relative to the course), kind, exercise, run, ok, why.
    samples: list[dict] = field(default_factory=list)
    # The points of its transcribed and one-line exercises, and their share of max_score
    # (autograder/course/kinds.py); None where an exercise has no kind.
    transcribed_points: float | None = None
    transcribed_share: float | None = None
    digest: str = ""  # of everything the result rests on (autograder/authoring/proofs.py)
    reused: bool = False  # read back from an earlier report with the same digest, not checked again

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass
class Plan:
    """The runs one assignment needs, and what is wrong before any run."""

    assignment: str
    jobs: list[GradeJob]
    mutants: dict[str, Mutant]  # job label -> mutant
    mutants_total: int
    problems: list[str]
    sizes: dict[str, int] = field(default_factory=dict)  # job label -> cells it runs
    samples: dict[str, list[grading_folder.Sample]] = field(default_factory=dict)  # job label -> its answers
    # job label -> the mutant family it runs, and its job (which keeps the executed notebook)
    family_runs: dict[str, tuple[families.Family, GradeJob]] = field(default_factory=dict)
    transcribed_points: float | None = None  # the points of transcribed and one-line exercises


def _cells(result: GradeResult, lost: bool, among: set[str] | None = None) -> list[str]:
    """'test_x 0/2 (CheckFailed: ...)' for each test cell (of `among`, when given) that lost points
    (lost=True) or that earned some (lost=False)."""
    out = []
    for gid, cell in result.cells.items():
        if among is not None and gid not in among:
            continue
        if (cell["score"] < cell["max_score"]) if lost else (cell["score"] > 0):
            error = f" ({cell['error']})" if cell.get("error") else ""
            out.append(f"{gid} {cell['score']:g}/{cell['max_score']:g}{error}")
    return out


def plan_assignment(course: Course, template: Template, assignment: str, scratch: Path,
                    timeout: int | None, hide: tuple[str, ...] = ()) -> Plan:
    source_nb = read_notebook(template.source_notebook(assignment))
    common = dict(assignment=assignment, template_dir=template.dir,
                  work_dir=scratch.parent / "jobs", timeout=timeout, hide=hide,
                  course_root=course.root)
    jobs = [GradeJob(student_id="solution", notebook=template.source_notebook(assignment),
                     label="solution", **common)]
    sizes = {"solution": len(source_nb.cells)}
    problems = []
    release_nb = course.release_notebook(assignment)
    if release_nb.is_file():
        # The untouched release must score 0 on the notebook's own tests: the trusted run, which
        # only ever withdraws points, has nothing to add.
        jobs.append(GradeJob(student_id="release", notebook=release_nb, label="release",
                             verify=False, **common))
    else:
        problems.append(f"gate 'release': {release_nb.relative_to(course.root)} is missing; "
                        "run `python -m autograder release`")
    model = template.assignments[assignment].exercises
    problems += grading_problems(course, assignment, model)
    problems += points_problems(source_nb, assignment, model)
    try:
        copied = kinds.copied_points(kinds.read(course.root, assignment), model.points())
    except kinds.KindsError as error:
        problems.append(f"gate 'kinds': {error}")
        copied = None
    folder = grading_folder.folder(course.root, assignment) / "mutants"
    paths = grading_folder.files(course.root, assignment, "mutants")
    mutants, applied = {}, {}
    for path in paths:
        try:
            mutant = parse_mutant(path)
            applied[f"mutant:{mutant.name}"] = apply_mutant(source_nb, mutant)  # raises where it does not fit
        except MutantError as error:
            problems.append(f"gate 'mutants': {error}")
            continue
        mutants[f"mutant:{mutant.name}"] = mutant
    # Judged by the notebook's tests alone: the trusted run would withdraw the points a weak test
    # gave away and hide that weakness (tests/test_grading_folders.py proves separately that every
    # mutant fails its probe). Graded in families: one run, a forked child per mutant (families.py).
    found_families = {}
    forked = families.forking_works()
    for label in ([] if forked else mutants):  # a run each, cut after its last test, where forks cannot use CUDA
        name = label.replace(":", "-")
        notebook = scratch / assignment / f"{name}.ipynb"
        write_notebook(applied[label], notebook)
        jobs.append(GradeJob(student_id=name, notebook=notebook, label=label,
                             restore_missing_cells=False, verify=False, **common))
        sizes[label] = len(applied[label].cells)
    for family in families.families(source_nb, list(mutants.values()) if forked else [], cell_timeout(timeout)):
        name = family.label.replace(":", "-")
        notebook = scratch / assignment / f"{name}.ipynb"
        write_notebook(family.notebook, notebook)
        job = GradeJob(student_id=name, notebook=notebook, label=family.label,
                       restore_missing_cells=False, verify=False, autograded_dir=scratch / assignment / name,
                       **dict(common, timeout=family.timeout))
        found_families[family.label] = (family, job)
        sizes[family.label] = family.size
        jobs.append(job)
    if len(paths) < MIN_MUTANTS:
        problems.append(f"gate 'mutant count': {len(paths)} mutant(s) in "
                        f"{folder.relative_to(course.root)}/, at least {MIN_MUTANTS} needed "
                        "(docs/authoring.md, 'Mutants')")
    samples = {}
    for kind, gate in (("variants", "right"), ("wrong", "wrong")):
        for index, group in enumerate(sample_groups(course, assignment, kind, model), 1):
            label = f"{gate}:{index}"
            notebook = scratch / assignment / f"{gate}-{index}.ipynb"
            write_notebook(with_samples(source_nb, model, group), notebook)
            samples[label] = group
            sizes[label] = len(source_nb.cells)
            jobs.append(GradeJob(student_id=f"{gate}-{index}", notebook=notebook, label=label, **common))
    return Plan(assignment, jobs, mutants, len(paths), problems, sizes, samples, found_families, copied)


def sample_groups(course: Course, assignment: str, kind: str, model: Exercises) -> list[list[grading_folder.Sample]]:
    """The runs of grading/<assignment>/<kind>/: the k-th run holds the k-th file (by name) of every
    exercise, so one run never holds two answers to one exercise. Files that do not parse, or name no
    exercise of the notebook, are left out (the gate 'variants' reports them)."""
    by_exercise: dict[str, list[grading_folder.Sample]] = {}
    for path in grading_folder.files(course.root, assignment, kind):
        try:
            sample = grading_folder.parse_sample(path)
        except grading_folder.SampleError:
            continue
        if model.defining(sample.exercise) is not None:
            by_exercise.setdefault(sample.exercise, []).append(sample)
    depth = max((len(found) for found in by_exercise.values()), default=0)
    return [[found[k] for _, found in sorted(by_exercise.items()) if k < len(found)] for k in range(depth)]


def with_samples(source_nb, model: Exercises, group: list[grading_folder.Sample]):
    """The source notebook with each answer's code added at the end of the solution cell that
    defines its exercise: from there on, every cell (tests and the trusted run too) uses it."""
    nb = copy.deepcopy(source_nb)
    for sample in group:
        cell = nb.cells[cell_index(nb, model.defining(sample.exercise))]
        cell.source = f"{cell.source.rstrip()}\n\n\n# {sample.path.parent.name}/{sample.path.name}\n{sample.code}\n"
    return nb


def points_problems(source_nb, assignment: str, model: Exercises | None = None) -> list[str]:
    """The 'points' gate: where the intro table or the summary disagree with the metadata, or cannot
    be read (a failed gate naming the row, never a traceback); the 'tests' gate: a test cell whose
    name and place credit different exercises (autograder/course/exercises.py, `misplaced`).
    model: the notebook's exercise model, when the caller has it."""
    model = model or exercises.read(source_nb)
    misplaced = [f"gate 'tests': {assignment}: {line}" for line in model.misplaced()]
    try:
        return misplaced + [f"gate 'points': {problem}"
                            for problem in points.disagreements(source_nb, assignment, model)]
    except ValueError as error:
        return misplaced + [f"gate 'points': {assignment}: {error}"]


def grading_problems(course: Course, assignment: str, model: Exercises) -> list[str]:
    """Gates 'grading folder', 'probe', 'mutant exercise' and 'variants': the grading folder knows
    every exercise of the notebook and nothing else (docs/design.md, "One exercise, one place")."""
    where = grading_folder.folder(course.root, assignment)
    if not where.is_dir():
        return [f"gate 'grading folder': {where.relative_to(course.root)}/ is missing: the probe, mutants "
                "and variants of every exercise live there (docs/authoring.md)"]
    probe_file = grading_folder.probe_path(course.root, assignment)
    try:
        probed = set(grading_folder.load_probe(probe_file).exercises) if probe_file.is_file() else None
    except (ProbeError, ImportError, SyntaxError) as error:
        return [f"gate 'probe': {probe_file.relative_to(course.root)} does not load: {error}"]
    names = model.names()
    if probed is None:
        return [f"gate 'probe': {probe_file.relative_to(course.root)} is missing; exercises "
                f"{', '.join(sorted(names))} have no probe"]
    problems = _probe_coverage(probe_file.relative_to(course.root), names, probed)
    problems += _mutants_name_exercises(course, assignment, model)
    problems += _samples_name_exercises(course, assignment, probed)
    return problems


def _probe_coverage(probe_file: Path, exercises: set[str], probed: set[str]) -> list[str]:
    problems = [f"gate 'probe': exercise {name} has no probe in {probe_file}"
                for name in sorted(exercises - probed)]
    problems += [f"gate 'probe': {probe_file} probes {name}, which the notebook no longer defines"
                 for name in sorted(probed - exercises)]
    return problems


def _mutants_name_exercises(course: Course, assignment: str, model: Exercises) -> list[str]:
    solutions = model.solutions()
    problems = []
    for path in grading_folder.files(course.root, assignment, "mutants"):
        try:
            replaces = parse_mutant(path).replaces
        except MutantError:
            continue  # reported by the gate 'mutants'
        if replaces in solutions and not solutions[replaces]:
            problems.append(f"gate 'mutant exercise': {path.relative_to(course.root)} replaces {replaces}, "
                            "a solution cell that defines no exercise")
    return problems


def _samples_name_exercises(course: Course, assignment: str, probed: set[str]) -> list[str]:
    problems = []
    for kind in ("variants", "wrong"):
        for path in grading_folder.files(course.root, assignment, kind):
            try:
                sample = grading_folder.parse_sample(path)
            except grading_folder.SampleError as error:
                problems.append(f"gate 'variants': {error}")
                continue
            if sample.exercise not in probed:
                problems.append(f"gate 'variants': {path.relative_to(course.root)} names exercise "
                                f"{sample.exercise}, which the probe does not know "
                                f"(exercises: {', '.join(sorted(probed))})")
    return problems


def _files(root: Path) -> set[Path]:
    return {p.relative_to(root) for p in root.rglob("*") if p.is_file()}


def release_problems(course: Course, template: Template, assignment: str,
                     found_secrets: leaks.Secrets | None = None) -> list[str]:
    """Gates 'release sync' and 'no leaks' on the committed release/<assignment>/."""
    committed = course.release_dir / assignment
    if not committed.is_dir():
        return []  # reported by plan_assignment
    fresh = template.dir / "release" / assignment
    problems = []
    differ = sorted(str(rel) for rel in _files(fresh) ^ _files(committed))
    for rel in sorted(_files(fresh) & _files(committed)):
        a, b = fresh / rel, committed / rel
        if rel.suffix == ".ipynb":
            same = dumps(normalize(read_notebook(a))) == dumps(normalize(read_notebook(b)))
        else:
            same = a.read_bytes() == b.read_bytes()
        if not same:
            differ.append(str(rel))
    if differ:
        problems.append(f"gate 'release sync': release/{assignment}/ differs from a fresh generation "
                        f"({', '.join(differ)}); run `python -m autograder release {assignment}`")
    by_file: dict[str, list] = {}
    for leak in leaks.find_leaks(committed, found_secrets or leaks.secrets(course)):
        by_file.setdefault(leak.file, []).append(leak)
    for file, found in by_file.items():
        shown = "; ".join(f"{leak.text.splitlines()[0][:80]!r} from {leak.origin}" for leak in found[:3])
        problems.append(f"gate 'no leaks': release/{assignment}/{file} holds {len(found)} solution, "
                        f"hidden-test, reference or grading line(s) or window(s): {shown}")
    return problems


def release_leaks(course: Course) -> list[str]:
    """'release/<file>: line ... from <origin>' for each answer, hidden test, reference or grading
    line or window under release/ (autograder/authoring/leaks.py, the search `publish` runs)."""
    if not course.release_dir.is_dir():
        return []
    return [f"release/{leak}" for leak in leaks.find_leaks(course.release_dir, leaks.secrets(course))]


def evaluate(plan: Plan, template: Template, results: list[GradeResult],
             extra_problems: list[str]) -> AssignmentReport:
    info = template.assignments[plan.assignment]
    by_label = {r.label: r for r in results}
    failures = list(plan.problems) + list(extra_problems)
    if not info.exercises.tests:
        failures.append("gate 'solution': the notebook has no test cell with points")
    solution = by_label.get("solution")
    if solution is not None:
        if solution.status != "graded":
            failures.append(f"gate 'solution': the source notebook could not be graded: "
                            f"{solution.reason}")
        elif solution.score < info.max_score:
            failures.append(f"gate 'solution': the source notebook scored {solution.score:g}/"
                            f"{info.max_score:g}; lost points on "
                            + "; ".join(_cells(solution, lost=True)))
        if solution.stderr_cells:
            failures.append(f"gate 'validate': nbgrader's validator (a student's Validate button) and "
                            f"a plain `nbgrader autograde` fail the source notebook's "
                            f"{', '.join(solution.stderr_cells)}: a right answer's test cell wrote to "
                            "stderr (a warning, a progress bar); silence it at its source")
    release = by_label.get("release")
    stale = any(p.startswith("gate 'release sync'") for p in extra_problems)
    if release is not None:
        if release.status != "graded" and stale:
            failures.append(f"gate 'release': release/{plan.assignment}/ is stale: it was generated "
                            f"from an older source/{plan.assignment}/, whose cells nbgrader cannot "
                            f"match ({release.reason}); run `python -m autograder release "
                            f"{plan.assignment}`")
        elif release.status != "graded":
            failures.append(f"gate 'release': the release notebook could not be graded: "
                            f"{release.reason}")
        elif release.score > 0:
            failures.append(f"gate 'release': the untouched release notebook scored "
                            f"{release.score:g}, points that need no answer: "
                            + "; ".join(_cells(release, lost=False)))
        if release.status == "graded":
            broken = [f"{gid} ({cell['error']})" for gid, cell in release.cells.items()
                      if gid in info.exercises.tests and not info.exercises.tests[gid].hidden
                      and cell["error"].split(":")[0] in BROKEN]
            if broken:
                failures.append("gate 'release': on the untouched release notebook, "
                                + "; ".join(broken) + ": a student who has not started should "
                                "read what to do, not a broken notebook")
    forked = set(plan.mutants) if plan.family_runs else set()  # a family's children: no run of their own
    caught = 0
    for label, mutant in plan.mutants.items():
        result = by_label[label]
        if result.status != "graded":
            failures.append(f"gate 'mutants': mutant {mutant.name} could not be graded: "
                            f"{result.reason}")
            continue
        missed = [f"{gid} (scored {result.cells[gid]['score']:g}/{result.cells[gid]['max_score']:g})"
                  for gid in mutant.caught_by
                  if result.cells[gid]["score"] >= result.cells[gid]["max_score"]]
        if missed:
            failures.append(f"gate 'mutants': mutant {mutant.name} ({mutant.mistake}) is not caught "
                            f"by {', '.join(missed)}")
        else:
            caught += 1
    sample_records = []
    for label, group in plan.samples.items():
        records, problems = _judge_samples(label, group, by_label.get(label), info.exercises)
        sample_records += records
        failures += problems
    return AssignmentReport(
        assignment=plan.assignment, max_score=info.max_score,
        solution_score=solution.score if solution and solution.status == "graded" else None,
        release_score=release.score if release and release.status == "graded" else None,
        mutants_caught=caught, mutants_total=plan.mutants_total,
        seconds=round(sum(r.seconds for r in results if r.label not in forked), 1),
        tests=len(info.exercises.tests),
        solution_seconds=solution.seconds if solution else None, failures=failures,
        runs=[{"label": r.label, "status": r.status, "score": r.score, "seconds": r.seconds,
               "reason": r.reason, "forked": r.label in forked} for r in results], samples=sample_records,
        transcribed_points=plan.transcribed_points,
        transcribed_share=(None if plan.transcribed_points is None or not info.max_score
                           else round(plan.transcribed_points / info.max_score, 4)))


def _judge_samples(label: str, group: list[grading_folder.Sample], result: GradeResult | None,
                   model: Exercises) -> tuple[list[dict], list[str]]:
    """Gates 'right answers' and 'wrong answers' of one run: a record per answer, and the failures."""
    right = label.startswith("right:")
    gate = "right answers" if right else "wrong answers"
    records = []
    if result is None or result.status != "graded":
        why = f"could not be graded: {result.reason if result else 'no result'}"
        records = [_sample_record(sample, label, False, why) for sample in group]
    else:
        failed = {name: verdict for name, verdict in result.verification.items() if verdict != "passed"}
        excused = {gid for sample in group for gid in sample.may_lose} if right else set()
        lost = {gid for gid, cell in result.cells.items() if cell["score"] < cell["max_score"]} - excused
        asked = {sample.exercise for sample in group}
        for sample in group:
            answer = model.defining(sample.exercise)
            own_lost = sorted(lost & set(model.tests_of(answer)))
            if right:
                why = "; ".join(
                    ([f"the trusted run: {failed[sample.exercise]}"] if sample.exercise in failed else [])
                    + ([f"lost points on {', '.join(own_lost)}"] if own_lost else []))
            elif sample.exercise not in failed:
                why = f"the trusted run passed {sample.exercise}"
            elif sample.message not in failed[sample.exercise]:
                why = f"the trusted run said {failed[sample.exercise]!r}, without {sample.message!r}"
            elif result.score >= result.max_score:
                why = "the notebook lost no points"
            else:
                why = ""
            records.append(_sample_record(sample, label, not why, why))
        others = sorted(set(failed) - asked)
        if others:  # a right run must fail nothing; a wrong one nothing but its own exercises
            unexplained = "; ".join(f"{name}: {failed[name]}" for name in others)
            records = [dict(r, ok=False, why="; ".join(filter(None, [r["why"], f"the run also failed {unexplained}"])))
                       for r in records]
        if right and lost and all(r["ok"] for r in records):
            records = [dict(r, ok=False, why=f"the run scored {result.score:g}/{result.max_score:g}: "
                                           + "; ".join(_cells(result, lost=True, among=lost)))
                       for r in records]
    problems = [f"gate '{gate}': {r['file']} ({r['exercise']}, run {label}): {r['why']}"
                for r in records if not r["ok"]]
    return records, problems


def _sample_record(sample: grading_folder.Sample, label: str, ok: bool, why: str) -> dict:
    file = "/".join(sample.path.parts[-4:])  # grading/<assignment>/<kind>/<file>
    return {"file": file, "kind": sample.path.parent.name, "exercise": sample.exercise, "run": label,
            "ok": ok, "why": why}


def check(course: Course, requested: list[str] | None = None, n_jobs: int | None = None,
          timeout: int | None = None, progress=None, warm_kernels: bool | None = None,
          backend=None, reuse: Path | None = None) -> list[AssignmentReport]:
    """Run every gate of the requested assignments; returns one report per assignment.

    warm_kernels: fork kernels from a KernelServer (default: yes, unless
    AUTOGRADER_WARM_KERNELS=0).
    reuse: an earlier report (build/course-report.json); an assignment whose entry there carries the
    digest of the course as it is now (autograder/authoring/proofs.py) is not checked again: its entry
    is the report (`reused`).
    """
    assignments = course.select(requested)
    if not assignments:
        return []
    digests = proofs.digests(course, assignments, timeout)
    known = {f.name for f in fields(AssignmentReport)}
    kept = {a: AssignmentReport(**{**entry, "reused": True}) for a, entry in proofs.reusable(reuse, digests).items()
            if set(entry) <= known and not entry.get("failures")}  # a failed proof is made again
    todo = [a for a in assignments if a not in kept]
    reports = {}
    if todo:
        # trusted: check runs the course's own files (solutions, mutants, right and wrong answers), which
        # may run unsandboxed where this machine gives kernels no isolation (privsep.open_refusal).
        with GradingSession(course, "check", n_jobs, warm_kernels, backend, trusted=True,
                            warn=None if progress is not None else lambda line: None) as session:
            for report in _check(course, todo, session, timeout, progress):
                report.sandbox, report.digest = list(session.warnings), digests[report.assignment]
                reports[report.assignment] = report
    return [reports.get(a) or kept[a] for a in assignments]


def _check(course: Course, assignments: list[str], session: GradingSession, timeout,
           progress) -> list[AssignmentReport]:
    tmp = session.dir
    template = build_template(course.source_dir, assignments, tmp / "template")
    plans = [plan_assignment(course, template, a, tmp / "mutants", timeout, session.hide)
             for a in assignments]
    found_secrets = leaks.secrets(course)
    extra = {a: release_problems(course, template, a, found_secrets) for a in assignments}
    # Longest runs first keep every worker busy to the end: solutions, then mutants by the
    # number of cells they run, then the releases (they fail fast).
    jobs = sorted(((job, p.sizes.get(job.label, 0)) for p in plans for job in p.jobs),
                  key=lambda pair: (pair[0].label == "release", -pair[1]))
    results = session.run([job for job, _ in jobs], on_result=progress)
    return [evaluate(p, template, [r for r in results if r.assignment == p.assignment]
                     + mutant_results(p, results), extra[p.assignment]) for p in plans]


def mutant_results(plan: Plan, results: list[GradeResult]) -> list[GradeResult]:
    """A result per mutant of `plan`, read from its family's run."""
    by_label = {r.label: r for r in results if r.assignment == plan.assignment}
    out = []
    for label, (family, job) in plan.family_runs.items():
        run = by_label[label]
        kept = job.kept_notebook
        executed = read_notebook(kept) if run.status == "graded" and kept.is_file() else None
        out += families.results(family, run, executed)
    return out


def format_table(reports: list[AssignmentReport]) -> str:
    header = ("assignment", "tests", "points", "solution", "release", "mutants", "answers", "transcribed",
              "seconds", "gates")
    rows = [(safe_line(r.assignment), str(r.tests), f"{r.max_score:g}", _fmt(r.solution_score),
             _fmt(r.release_score), f"{r.mutants_caught}/{r.mutants_total}",
             f"{sum(s['ok'] for s in r.samples)}/{len(r.samples)}", _share(r.transcribed_points, r.max_score),
             f"{r.seconds:.1f}", "ok" if r.ok else "FAIL") for r in reports]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row) -> str:
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(row, widths)))

    return "\n".join([line(header), line(tuple("-" * w for w in widths)), *map(line, rows)])


def _fmt(score: float | None) -> str:
    return "-" if score is None else f"{score:g}"


def _share(copied: float | None, total: float) -> str:
    """'5/16 31%': the points of transcribed and one-line exercises; '-' where an exercise has no kind."""
    if copied is None:
        return "-"
    return f"{copied:g}/{total:g} {copied / total:.0%}" if total else f"{copied:g}/0"


def transcription_line(reports: list[AssignmentReport]) -> str:
    """The transcription share over the assignments checked, in words (autograder/course/kinds.py)."""
    known = [r for r in reports if r.transcribed_points is not None]
    missing = [r.assignment for r in reports if r.transcribed_points is None]
    copied, total = sum(r.transcribed_points for r in known), sum(r.max_score for r in known)
    line = (f"Transcribed or one line: {copied:g} of {total:g} points ({copied / total:.0%}) over "
            f"{len(known)} assignment(s); at most 25 % for the course (docs/design.md, quality gates)"
            if total else "Transcribed or one line: no classified points")
    if missing:
        line += f"; no kind for every exercise of {', '.join(missing)} (grading/<assignment>/kinds.toml)"
    return safe_line(line)


def write_report(reports: list[AssignmentReport], path: Path, course: Course | None = None) -> None:
    """The reports as JSON at `path`. With `course`, merged into the report already there: the
    entries of the assignments checked now are replaced, those of the others (still in source/)
    kept, in the course's order; an unreadable earlier report is replaced whole."""
    entries = {r.assignment: asdict(r) for r in reports}
    if course is not None and path.is_file():
        try:
            earlier = json.loads(path.read_text(encoding="utf-8"))
            kept = {e["assignment"]: e for e in earlier if isinstance(e, dict) and "assignment" in e}
        except (ValueError, TypeError):
            kept = {}
        known = course.assignments()
        merged = {a: entries.get(a, kept.get(a)) for a in known if a in entries or a in kept}
        entries = merged | {a: e for a, e in entries.items() if a not in merged}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(list(entries.values()), indent=2) + "\n")


def configure(parser: argparse.ArgumentParser) -> None:
    add_assignment_options(parser)
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help=f"notebooks graded in parallel (default: {default_jobs()}, the cores)")
    parser.add_argument("--timeout", type=int, default=None,
                        help="seconds per cell (default: nbgrader_config.py's, 60)")
    parser.add_argument("--report", type=Path, default=None,
                        help=f"JSON report (default: build/{REPORT_NAME})")
    parser.add_argument("--quiet", "-q", action="store_true", help="no line per graded run")
    parser.add_argument("--cold-kernels", action="store_true",
                        help="start every kernel from scratch instead of forking it from a warm "
                             "kernel server (slower; for comparison and debugging)")
    add_backend_options(parser)


def run(args: argparse.Namespace, course: Course) -> int:
    start = time.perf_counter()

    def progress(result: GradeResult) -> None:
        if not args.quiet:
            outcome = (f"{result.score:g}/{result.max_score:g}" if result.status == "graded"
                       else f"error: {result.reason}")
            print(safe_line(f"  {result.assignment:<24} {result.label:<36} {outcome:<12} "
                            f"{result.seconds:5.1f} s"), file=sys.stderr, flush=True)

    try:
        reports = check(course, selected(args, course), args.jobs, args.timeout, progress,
                        warm_kernels=False if args.cold_kernels else None,
                        backend=make_backend(args.backend, args.scheduler))
    except GenerationError as error:
        print(safe_lines(f"check stopped: {error}"))
        return 2
    if not reports:
        print(safe_line(f"No assignment in {course.source_dir}: nothing to check."))
        return 0
    report_path = args.report or course.build_dir / REPORT_NAME
    write_report(reports, report_path, course)
    wall = time.perf_counter() - start
    runs = sum(1 for r in reports for run in r.runs if not run.get("forked"))
    print(format_table(reports))
    print(transcription_line(reports))
    kernels = "cold" if args.cold_kernels else "warm"
    print("\n" + safe_line(f"{runs} graded runs in {wall:.1f} s, {args.jobs or default_jobs()} at a time, "
                            f"{kernels} kernels; report: {report_path}"))
    if reports[0].sandbox:
        print("\nThe kernels ran without part of their sandbox (docs/design.md, \"Threat model\"):")
        for line in reports[0].sandbox:
            print(safe_line(f"  {line}"))
    failures = [(r.assignment, f) for r in reports for f in r.failures]
    if failures:
        print(f"\n{len(failures)} gate failure(s):")
        for assignment, failure in failures:
            print(safe_line(f"  {assignment}: {failure}"))
        return 1
    print("All gates pass.")
    return 0

"""The trusted half of grading: the student's code on secret inputs, judged outside its kernel.

nbgrader runs the tests inside the student's kernel, where the student's code can change what
the tests see (autograder/probes/__init__.py lists how). So every exercise is also:

1. read for what no answer needs (autograder/engine/scan.py), in the cells the student wrote:
   their solution cells and the cells they added (`student_code`);
2. called by its probe on inputs drawn here from a seed the student cannot know (`prepare`), in the
   same kernel, after nbgrader's last cell: the engine makes the caller's cells the executor's
   epilogue and the probe's conversation its feed (autograder/engine/job.py, execute.GradingExecute,
   autograder/probes/session.py): the kernel calls, the probe here records what came back;
3. judged here, on those raw values, against the reference (`conclude`).

Where the notebook's own cells did not all run (a kernel death, a spent budget), `verify` runs
the student's code alone in a fresh kernel: the setup cell and read-only definitions from the
*source* notebook, the student's solution cells and added cells, no test cell, then the probes.
When a cell of the student's code kills that kernel too (os._exit, a segfault, a limit), another
fresh kernel runs the student's cells before that one, then the probes. Exercises defined before
the crash are judged as usual; those whose solution cell is the dying one or a later one fail,
saying so. A death inside a probe (the student's function crashing on the secret inputs) costs
that exercise and the probes after it.

`apply` then withdraws the nbgrader points of every test cell whose exercise failed here, and
says why in the result and the feedback.
"""

from __future__ import annotations

import copy
import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from nbformat import NotebookNode

from autograder.course import exercises
from autograder.course.cell_code import (
    defined_names,
    imported_names,
    parse,
    top_level_reads,
    used_names,
)
from autograder.course.grading_folder import probe_for
from autograder.course.notebooks import grade_id, is_solution, is_test, nbgrader
from autograder.engine import scan
from autograder.engine.execute import KERNEL_DIED
from autograder.probes import Verdict, conversation, judge, kernel_cells
from autograder.probes.session import Conversation


@dataclass
class Verification:
    """What the trusted run found: a verdict per exercise, and which test cells need which."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    needs: dict[str, list[str]] = field(default_factory=dict)  # test grade_id -> its exercises
    findings: list[str] = field(default_factory=list)  # scan findings, for the record
    seconds: float = 0.0

    def failed(self) -> dict[str, str]:
        """exercise -> why it failed."""
        return {name: v.message for name, v in self.verdicts.items() if not v.ok}


def seed_for(key: str, student_id: str, assignment: str) -> int:
    """The inputs' seed: the same submission gets the same inputs; no student can compute it."""
    digest = hashlib.sha256(f"{key}\0{student_id}\0{assignment}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


# -- which cells run ------------------------------------------------------------------------------------

def _definitions_only(source: str) -> bool:
    """A read-only cell that only defines things (earlier notebooks' code), not a demo that runs."""
    import ast

    tree = parse(source)
    if tree is None:
        return False
    body = tree.body
    allowed = (ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return bool(body) and all(isinstance(node, allowed) or (isinstance(node, ast.Expr) and isinstance(
        getattr(node, "value", None), ast.Constant)) for node in body)


def student_code(submitted: NotebookNode, source_nb: NotebookNode) -> tuple[list[tuple[str, str]], list[str]]:
    """The cells to run, as (kind, source) with kind setup/given/solution:<id>/added, in order;
    and the setup's grade_id. Locked cells come from the source, whatever the submission holds."""
    by_id = {grade_id(c): c for c in source_nb.cells if grade_id(c)}
    source_texts = {c.source.strip() for c in source_nb.cells if c.cell_type == "code"}
    setup = next((c for c in source_nb.cells if c.cell_type == "code"), None)
    cells: list[tuple[str, str]] = []
    if setup is not None:
        cells.append(("setup", setup.source))
    reads = set().union(*(top_level_reads(c.source) for c in source_nb.cells if is_solution(c)))
    for cell in source_nb.cells:  # earlier notebooks' code, and data the answers are computed from
        if (cell is not setup and cell.cell_type == "code" and nbgrader(cell).get("locked")
                and not is_test(cell)
                and (_definitions_only(cell.source) or defined_names(cell.source) & reads)):
            cells.append(("given", cell.source))
    for cell in submitted.cells:
        if cell.cell_type != "code":
            continue
        gid = grade_id(cell)
        original = by_id.get(gid) if gid else None
        if original is not None:
            if is_solution(original):
                cells.append((f"solution:{gid}", cell.source))
            continue  # tests, setup and read-only cells: never the submission's copy
        if cell.source.strip() and cell.source.strip() not in source_texts:
            cells.append(("added", cell.source))  # the student's own cell, or a demo they edited
    return cells, [grade_id(setup)] if setup is not None else []


def scan_failures(cells: list[tuple[str, str]], solutions: dict[str, list[str]],
                  forbidden: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """(exercise -> why its code fails the scan, every finding as text)."""
    failures: dict[str, str] = {}
    notes: list[str] = []
    uses = {kind: used_names(text) for kind, text in cells if kind.startswith("solution:")}
    modules = set().union(*(imported_names(text) for _, text in cells))
    checks = set().union(*(scan.check_names(text) for kind, text in cells if kind in ("setup", "given")))
    for kind, text in cells:
        found = (scan.findings(text, forbidden, modules, checks, [code for _, code in cells])
                 if kind in ("added",) or kind.startswith("solution:") else [])
        if not found:
            continue
        where = "a cell you added" if kind == "added" else f"the cell of {', '.join(solutions.get(kind[9:], []))}"
        notes.append(f"{where}: " + "; ".join(found))
        if kind == "added":  # the exercises it defines, and those whose cells use what it defines
            defined = defined_names(text)
            hit = [ex for names in solutions.values() for ex in names if ex in defined]
            hit += [ex for sol, used in uses.items() if used & defined for ex in solutions.get(sol[9:], [])]
        else:
            hit = solutions.get(kind[9:], [])
        for exercise in hit:
            failures.setdefault(exercise, f"{exercise} relies on code that uses {found[0].split(': ', 1)[1]} "
                                          f"({where}), which this course's answers never need")
    return failures, notes


# -- running and judging ----------------------------------------------------------------------------------

@dataclass
class Plan:
    """One submission's trusted probes, ready to run: the inputs drawn, the reference's results."""

    probe: object  # grading_folder.Probe
    cells: list[tuple[str, str]]  # student_code's cells
    solutions: dict[str, list[str]]
    needs: dict[str, list[str]]
    scan_failed: dict[str, str]
    notes: list[str]
    inputs: dict
    expected: dict
    started: float
    metadata: dict = field(default_factory=dict)  # the source notebook's (its kernel)

    def kernel_cells(self) -> list[str]:
        """The caller's cells: its start, then one conversation per exercise."""
        return kernel_cells(self.probe)

    def conversation(self) -> Conversation:
        """A fresh conversation for one kernel's run of kernel_cells (the executor's feed)."""
        return conversation(self.probe, self.inputs)


def prepare(assignment: str, student_id: str, submitted: NotebookNode, source_nb: NotebookNode,
            key: str = "", root: Path | None = None) -> Plan | None:
    """Draw the inputs, compute the reference's results and scan the student's code; None when
    `assignment` has no probe."""
    probe = probe_for(assignment, root)
    if probe is None:
        return None
    started = time.perf_counter()
    model = exercises.read(source_nb)
    solutions, needs = model.solutions(), model.needs()
    cells, _ = student_code(submitted, source_nb)
    scan_failed, notes = scan_failures(cells, solutions, probe.forbidden)
    inputs = probe.make_inputs(np.random.default_rng(seed_for(key, student_id, assignment)))
    expected = probe.expected(inputs)
    return Plan(probe, cells, solutions, needs, scan_failed, notes, inputs, expected, started,
                copy.deepcopy(source_nb.metadata))


def conclude(plan: Plan, outputs: dict[str, np.ndarray], died: int | None = None) -> Verification:
    """Judge what the kernel handed back; `died`: the index in plan.cells of the student's cell that
    killed the kernel (the exercises from there on fail, saying so)."""
    verdicts = judge(plan.probe, plan.inputs, outputs, plan.expected)
    if died is not None:
        for exercise, why in crash_failures(plan.cells, died, plan.solutions).items():
            if exercise in verdicts:
                verdicts[exercise] = Verdict(exercise, False, why)
    for exercise, why in plan.scan_failed.items():
        if exercise in verdicts:
            verdicts[exercise] = Verdict(exercise, False, why)
    return Verification(verdicts, plan.needs, plan.notes, round(time.perf_counter() - plan.started, 2))


def verify(assignment: str, student_id: str, submitted: NotebookNode, source_nb: NotebookNode,
           folder: Path, execute, key: str = "", root: Path | None = None,
           plan: Plan | None = None) -> Verification | None:
    """Run the probes of `assignment` on the student's code in a fresh kernel of its own; None when
    it has no probe (grading/<assignment>/probe.py of the course at `root`; default:
    $AUTOGRADER_ROOT, else this checkout). The engine runs the probes after nbgrader's own cells
    in the same kernel (autograder/engine/job.py); this separate run is for a notebook whose own
    cells did not all run there (a kernel death, a spent budget), and for callers without nbgrader.

    execute(nb, folder, feed): runs a notebook in a fresh kernel with cwd `folder` (the engine
    passes nbgrader's Execute, configured like the one that ran the tests), answering the kernel's
    input() requests with `feed` (the probe's Conversation); it must not raise for errors in cells.
    When the kernel dies it marks the cell (GradingExecute) or raises; a death in the student's code
    runs the cells before it again, alone (see the module's docstring).
    plan: one `prepare` made already; default: a new one.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    if plan is None:
        plan = prepare(assignment, student_id, submitted, source_nb, key, root)
    if plan is None:
        return None
    cells = plan.cells
    outputs, died = _run(plan, [text for _, text in cells], folder, execute)
    if died is not None:  # the student's code killed the kernel: run what came before it, alone
        outputs, _ = _run(plan, [text for _, text in cells[:died]], folder, execute)
    return conclude(plan, outputs, died)


def _run(plan: Plan, student: list[str], folder: Path, execute) -> tuple[dict[str, np.ndarray], int | None]:
    """Run `student`'s cells, then the caller's, in one fresh kernel.

    Returns (what the probes recorded, the index in `student` of the cell that killed the kernel, or
    None when none did: a death during a probe's calls costs that exercise and the later ones only).
    """
    nb = nbformat.v4.new_notebook()
    nb.metadata = copy.deepcopy(plan.metadata)
    nb.cells = [nbformat.v4.new_code_cell(text) for text in student]
    nb.cells += [nbformat.v4.new_code_cell(text) for text in plan.kernel_cells()]
    feed = plan.conversation()
    try:
        execute(nb, folder, feed)
        raised = False
    except Exception:  # an executor that lets a dead kernel through: what was handed back so far counts
        raised = True
    outputs = feed.finish()
    died = death_cell(nb, raised)
    return outputs, died if died is not None and died < len(student) else None


def death_cell(nb: NotebookNode, raised: bool = False) -> int | None:
    """Index of the cell the kernel died in (GradingExecute's KernelDied mark; after an executor
    that raised instead, the first code cell it never ran), or None."""
    for index, cell in enumerate(nb.cells):
        if any(o.get("output_type") == "error" and o.get("ename") == KERNEL_DIED
               for o in cell.get("outputs", [])):
            return index
    if raised:
        return next((i for i, c in enumerate(nb.cells)
                     if c.cell_type == "code" and c.get("execution_count") is None), None)
    return None


def crash_failures(cells: list[tuple[str, str]], died: int,
                   solutions: dict[str, list[str]]) -> dict[str, str]:
    """exercise -> why, for the exercises whose solution cell is at or after the cell `died`
    (an index in `cells`) that killed the trusted run's kernel."""
    kind = cells[died][0]
    where = (f"the cell of {', '.join(solutions.get(kind[9:], []))}" if kind.startswith("solution:")
             else "a cell you added" if kind == "added" else "the setup cell")
    failures = {}
    for later, _ in cells[died:]:
        for exercise in solutions.get(later[9:], []) if later.startswith("solution:") else []:
            failures.setdefault(exercise, f"not checked: the kernel died in {where} (os._exit, a "
                                          "crash, or a memory or time limit); the exercises before "
                                          "that cell were checked without it")
    return failures


def apply(verification: Verification, cells: dict[str, dict]) -> list[str]:
    """Withdraw the points of test cells whose exercise failed, or whose own judgment
    (Exercise.cells) failed; returns the cells changed.

    cells: GradeResult.cells (grade_id -> score, max_score, error), updated in place.
    """
    failed = verification.failed()
    changed = []
    for gid, cell in cells.items():
        reasons = [failed[ex] for ex in verification.needs.get(gid, []) if ex in failed]
        reasons += [v.cells[gid] for v in verification.verdicts.values() if gid in v.cells]
        if reasons and cell["score"] > 0:
            cell["score"] = 0.0
            cell["error"] = ("not scored: " + reasons[0])[:300]
            changed.append(gid)
    return changed


def summary_markdown(verification: Verification) -> str:
    """The feedback's section on the trusted run, for the top of the autograded notebook."""
    lines = ["## Checked outside your notebook",
             "Each exercise was also called on inputs your notebook never saw, after your notebook's "
             "last cell, and what it returned was compared with the expected results by the grader. "
             "A test's points count only when its exercise passes here.", "", "| exercise | result |",
             "| --- | --- |"]
    for name, verdict in verification.verdicts.items():
        lines.append(f"| `{name}` | {'passed' if verdict.ok else verdict.message.replace('|', '/')} |")
    if verification.findings:
        lines += ["", "Code that no answer here needs (it makes the exercises that rely on it fail):"]
        lines += [f"- {note}" for note in verification.findings]
    return "\n".join(lines)

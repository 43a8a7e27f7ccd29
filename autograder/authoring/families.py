"""check's mutants, graded in families: one run of the source notebook, a forked child per mutant.

A mutant was graded as a notebook of its own: the source with the mutant in place of its cell, cut
after the last test it names. Every such run executed the notebook's first cells again (the data,
the training before the mutated cell): most of check's time went there. A family grades several
mutants in one run of the engine (sandbox, limits, warm kernel, nbgrader): its notebook is the source
notebook up to the last cell one of its mutants replaces, with a cell before each replaced cell that
forks the kernel (autograder/probes/forked_cells.py). The child holds the notebook's state at that
point, runs the mutant's code and the notebook's cells after it up to the last test the mutant
names, and says how each cell went; the parent goes on with the cell as written.

Each child's test cells are scored by nbgrader's own rule (`utils.determine_grade`: an error is 0, a
number as the last value is partial credit), which is what grading a cut notebook applied to them;
the tests before the mutated cell score as in the family's own run. A control child per family runs
the unmutated cells from the family's first replaced cell to its last named test: it must pass every
test it runs, or the family's mutants are reported as not graded (a fork that differs from the
notebook would otherwise pass for a caught mutant).

Where the kernels can use CUDA, nothing is forked (`forking_works`): CUDA cannot be initialized again
in a forked child, and every notebook's setup cell initializes it there (the device's name). Seen on
an H200, 2026-11-28: every control child of 08's family lost its CUDA tests ("Cannot re-initialize
CUDA in forked subprocess"), so all 41 mutants were reported not graded. `check` then grades each
mutant as a notebook of its own, cut after its last test, as before the families.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass

from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_output
from nbgrader import utils

from autograder.course.mutants import Mutant
from autograder.course.notebooks import cell_index, grade_id, is_test
from autograder.engine.job import GradeResult
from autograder.probes.forked_cells import MARK

FAMILY_SIZE = 64  # mutants per family: one run per assignment of this course (08 has the most, 41)
CONTROL = "control"
_SLACK = 30  # seconds a family's forking cell gets past its child's cells' own time


@dataclass
class Member:
    """One child of a family: a mutant (None for the control) and the cells it runs."""

    label: str  # mutant:<name>, or control
    mutant: Mutant | None
    fork_at: int  # index in the source notebook of the first cell it runs
    cells: list[NotebookNode]  # the source's cells it runs (the mutant's code in place of the first)
    tests_before: frozenset[str]  # the test cells the family's run scored before forking it


@dataclass
class Family:
    label: str  # mutants:<n>
    notebook: NotebookNode
    members: list[Member]
    timeout: int  # seconds per cell of the family's run: its forking cells wait for a child's cells

    @property
    def size(self) -> int:
        """Cells run in all, the parent's and the children's (longest first keeps workers busy)."""
        return len(self.notebook.cells) + sum(len(m.cells) for m in self.members)


def forking_works() -> bool:
    """Whether a forked kernel can do what its parent could: not where CUDA is available (this
    process sees the devices its kernels see)."""
    try:
        import torch
    except ImportError:
        return True
    return not torch.cuda.is_available()


def families(source_nb: NotebookNode, mutants: list[Mutant], cell_timeout: int,
             size: int = FAMILY_SIZE) -> list[Family]:
    """The families of `mutants` (each already checked against the source: apply_mutant), in
    notebook order, at most `size` mutants each."""
    ordered = sorted(mutants, key=lambda m: (cell_index(source_nb, m.replaces), m.name))
    groups = [ordered[i:i + size] for i in range(0, len(ordered), size)]
    return [_family(source_nb, group, f"mutants:{n}", cell_timeout) for n, group in enumerate(groups, 1)]


def _code_cells(source_nb: NotebookNode, first: int, last: int) -> list[NotebookNode]:
    return [cell for cell in source_nb.cells[first:last + 1] if cell.cell_type == "code"]


def _last_test(source_nb: NotebookNode, mutant: Mutant) -> int:
    return max(cell_index(source_nb, test) for test in mutant.caught_by)


def _tests_before(source_nb: NotebookNode, index: int) -> frozenset[str]:
    return frozenset(grade_id(cell) for cell in source_nb.cells[:index] if is_test(cell))


def _family(source_nb: NotebookNode, group: list[Mutant], label: str, cell_timeout: int) -> Family:
    members = []
    for mutant in group:
        at = cell_index(source_nb, mutant.replaces)
        cells = _code_cells(source_nb, at, _last_test(source_nb, mutant))
        replaced = copy.deepcopy(cells[0])
        replaced.source = mutant.code
        members.append(Member(f"mutant:{mutant.name}", mutant, at, [replaced, *cells[1:]],
                              _tests_before(source_nb, at)))
    first = min(m.fork_at for m in members)
    last_test = max(_last_test(source_nb, m) for m in group)
    members.insert(0, Member(CONTROL, None, first, _code_cells(source_nb, first, last_test),
                             _tests_before(source_nb, first)))
    longest = max(len(m.cells) for m in members)
    cells, last_fork = [], max(m.fork_at for m in members)
    for index, cell in enumerate(source_nb.cells[:last_fork + 1]):
        for member in members:
            if member.fork_at == index:
                cells.append(_forking_cell(member, cell_timeout))
        if index < last_fork:
            cells.append(cell)
    notebook = copy.deepcopy(source_nb)
    notebook.cells = cells
    return Family(label, notebook, members, cell_timeout * longest + _SLACK)


def _forking_cell(member: Member, cell_timeout: int) -> NotebookNode:
    sources = [cell.source for cell in member.cells]
    return new_code_cell(
        "from autograder.probes.forked_cells import run as __autograder_forked\n"
        f"print(__autograder_forked({sources!r}, {cell_timeout}, {member.label!r}))\n"
        "del __autograder_forked\n")


def reports(executed: NotebookNode | None) -> dict[str, dict]:
    """label -> what `forked_cells.run` said, from the family's executed notebook."""
    found = {}
    for cell in executed.cells if executed is not None else []:
        for output in cell.get("outputs", []):
            if output.get("output_type") != "stream" or output.get("name") != "stdout":
                continue
            for line in output.get("text", "").splitlines():
                try:
                    said = json.loads(line)
                except ValueError:
                    continue
                if isinstance(said, dict) and isinstance(said.get(MARK), dict):
                    found[said[MARK].get("label")] = said[MARK]
    return found


def _scored(member: Member, said: dict | None) -> dict[str, dict]:
    """Test grade id -> score, max_score, error for the test cells the child was given."""
    ran = {r.get("index"): r for r in (said or {}).get("ran", []) if isinstance(r, dict)}
    why_not = (said or {}).get("ended") or "the forking cell gave no report"
    scores, stopped = {}, False
    for index, cell in enumerate(member.cells):
        record = ran.get(index)
        if record is None and not stopped:
            stopped, error = True, f"KernelDied: the child {why_not} before this cell ended"
        elif record is None:
            error = "NotRun: an earlier cell did not end"
        else:
            error = record.get("error") or ""
        if not is_test(cell):
            continue
        if error:
            output = new_output("error", ename=error.split(":", 1)[0], evalue=error, traceback=[])
        elif "text" in record:
            output = new_output("execute_result", data={"text/plain": record["text"]}, execution_count=1)
        else:
            output = None
        scored = copy.deepcopy(cell)
        scored.outputs = [output] if output is not None else []
        score, max_score = utils.determine_grade(scored)
        scores[grade_id(cell)] = {"score": float(score), "max_score": float(max_score), "error": error}
    return scores


def results(family: Family, run: GradeResult, executed: NotebookNode | None) -> list[GradeResult]:
    """A GradeResult per mutant of the family, as a run of its own would have given.

    `run`: the family's own run; `executed`: its executed notebook (None if it has none)."""
    mutants = [m for m in family.members if m.mutant is not None]
    said = reports(executed)

    def record(member: Member, status: str, reason: str = "", cells: dict | None = None,
               seconds: float = 0.0) -> GradeResult:
        cells = cells or {}
        return GradeResult(f"mutant-{member.mutant.name}", run.assignment, member.label, status,
                           round(sum(c["score"] for c in cells.values()), 6), run.max_score, reason,
                           cells=cells, seconds=seconds)

    if run.status != "graded":
        return [record(m, "error", f"its family's run ({family.label}) could not be graded: {run.reason}")
                for m in mutants]
    control = _scored(family.members[0], said.get(CONTROL))
    lost = [f"{gid} {c['score']:g}/{c['max_score']:g} ({c['error'] or 'partial credit'})"
            for gid, c in control.items() if c["score"] < c["max_score"]]
    if lost:
        return [record(m, "error", f"the unmutated cells, forked in {family.label}, lost points "
                       f"({'; '.join(lost)}): the forked run is not the notebook's") for m in mutants]
    out = []
    for member in mutants:
        if member.label not in said:
            out.append(record(member, "error", f"{family.label} stopped before forking it"))
            continue
        before = {gid: cell for gid, cell in run.cells.items() if gid in member.tests_before}
        cells = before | _scored(member, said[member.label])
        out.append(record(member, "graded", cells=cells, seconds=float(said[member.label].get("seconds", 0))))
    return out


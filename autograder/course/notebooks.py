"""Reading, writing and inspecting notebooks: nbgrader cells, normalization, validation, leaks.

Normalization is what makes `release/` byte-stable: no outputs, no execution counts, none of
the metadata an editor or a run adds (timings, widget state, Colab provenance), the course's
kernelspec, and deterministic cell ids.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import nbformat
from nbformat import NotebookNode

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
# Notebook-level metadata that an editor or a run writes and nobody authors.
VOLATILE_NOTEBOOK_KEYS = ("widgets", "vscode", "toc", "varInspector", "celltoolbar", "papermill",
                          "execution", "interpreter", "jupytext", "toc-autonumbering",
                          "toc-showcode", "toc-showmarkdowntxt")
# Cell-level metadata of the same kind (JupyterLab timings, collapsed state, Colab ids).
VOLATILE_CELL_KEYS = ("execution", "ExecuteTime", "collapsed", "scrolled", "jupyter", "colab",
                      "outputId", "id", "pycharm", "vscode", "papermill")
SOLUTION_DELIMITERS = ("BEGIN SOLUTION", "END SOLUTION")
HIDDEN_DELIMITERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
_CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# -- reading and writing ----------------------------------------------------------------------------

def read_notebook(path: Path) -> NotebookNode:
    """The notebook at `path` as nbformat v4; raises on anything that is not a notebook."""
    with open(path, encoding="utf-8") as f:
        return nbformat.read(f, as_version=4)


def dumps(nb: NotebookNode) -> str:
    """The canonical text of a notebook: nbformat's JSON (indent 1, sorted keys), newline-ended."""
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def write_notebook(nb: NotebookNode, path: Path) -> bool:
    """Write `nb` canonically; True if the file changed (it is left alone otherwise)."""
    path = Path(path)
    text = dumps(nb)
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return True


# -- nbgrader cells ---------------------------------------------------------------------------------

def nbgrader(cell: NotebookNode) -> dict:
    """The cell's nbgrader metadata ({} for an ordinary cell)."""
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell: NotebookNode) -> str | None:
    return nbgrader(cell).get("grade_id") or None


def is_solution(cell: NotebookNode) -> bool:
    return bool(nbgrader(cell).get("solution"))


def is_test(cell: NotebookNode) -> bool:
    """An autograded test cell: graded, not an answer."""
    meta = nbgrader(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.cell_type == "code"


def cell_index(nb: NotebookNode, wanted: str) -> int:
    """Index of the cell whose grade_id is `wanted`; KeyError if there is none."""
    for index, cell in enumerate(nb.cells):
        if grade_id(cell) == wanted:
            return index
    raise KeyError(wanted)


def describe_cell(nb: NotebookNode, index: int) -> str:
    """'cell 7 (grade_id test_relu)' or 'cell 7 (code: def relu(h):)', 1-based like an editor."""
    cell = nb.cells[index]
    if grade_id(cell):
        return f"cell {index + 1} (grade_id {grade_id(cell)!r})"
    first = next((line.strip() for line in cell.source.splitlines() if line.strip()), "")
    return f"cell {index + 1} ({cell.cell_type}: {first[:50]!r})"


# -- normalization ----------------------------------------------------------------------------------

def strip_outputs(nb: NotebookNode) -> NotebookNode:
    """No outputs, no execution counts; in place, returned for chaining."""
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nb


def normalize(nb: NotebookNode) -> NotebookNode:
    """Strip outputs and volatile metadata, set the kernelspec, give every cell a stable id."""
    strip_outputs(nb)
    meta = nb.metadata
    for key in VOLATILE_NOTEBOOK_KEYS:
        meta.pop(key, None)
    meta["kernelspec"] = dict(KERNELSPEC)
    if "language_info" in meta:
        meta["language_info"] = {"name": meta["language_info"].get("name", "python")}
    if "colab" in meta:  # keep only what changes the runtime Colab opens with
        kept = {k: v for k, v in meta["colab"].items() if k == "gpuType"}
        if kept:
            meta["colab"] = kept
        else:
            del meta["colab"]
    for cell in nb.cells:
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
    _stable_cell_ids(nb)
    return nb


def _stable_cell_ids(nb: NotebookNode) -> None:
    """Give each cell a valid, unique id; existing ones are kept, new ones derive from content."""
    nb.nbformat, nb.nbformat_minor = 4, max(5, nb.get("nbformat_minor", 5))
    seen: set[str] = set()
    for index, cell in enumerate(nb.cells):
        cid = cell.get("id")
        if not (isinstance(cid, str) and _CELL_ID.match(cid)) or cid in seen:
            base = grade_id(cell) if grade_id(cell) and _CELL_ID.match(grade_id(cell)) else None
            cid = base if base and base not in seen else "cell-" + hashlib.sha1(
                f"{index}\0{cell.source}".encode()).hexdigest()[:12]
        cell["id"] = cid
        seen.add(cid)


# -- validation of a source notebook ---------------------------------------------------------------

def regions(text: str, begin: str, end: str) -> tuple[list[str], list[str], str | None]:
    """(lines inside begin/end regions, lines outside, error) for one cell's source."""
    inside, outside, depth, error = [], [], 0, None
    for line in text.splitlines():
        if begin in line:
            if depth:
                error = f"nested {begin!r}"
            depth += 1
        elif end in line:
            if not depth:
                error = f"{end!r} without {begin!r}"
            depth = max(0, depth - 1)
        elif depth:
            inside.append(line)
        else:
            outside.append(line)
    if depth:
        error = f"{begin!r} without {end!r}"
    return inside, outside, error


def validate_source(nb: NotebookNode, where: str) -> list[str]:
    """Everything in a source notebook that would make nbgrader or the gates misbehave.

    Each message names the notebook (`where`) and the cell.
    """
    errors: list[str] = []
    first_seen: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        meta = nbgrader(cell)
        here = f"{where}, {describe_cell(nb, index)}"
        gid = meta.get("grade_id")
        solution, grade = bool(meta.get("solution")), bool(meta.get("grade"))
        if meta and (solution or grade or meta.get("locked")) and not gid:
            kind = "solution" if solution else "test" if grade else "read-only"
            errors.append(f"{here}: {kind} cell without a grade_id; give it a unique grade_id "
                          "(the exercise's name for a solution cell, test_<exercise> for a test)")
        if gid:
            if gid in first_seen:
                errors.append(f"{here}: duplicate grade_id {gid!r}, already used by cell "
                              f"{first_seen[gid] + 1}; grade_ids must be unique in a notebook")
            else:
                first_seen[gid] = index
        if grade and solution:
            errors.append(f"{here}: a cell both graded and a solution is graded by hand; "
                          "this course autogrades only (make it a solution cell and add a test cell)")
        elif grade:
            points = meta.get("points")
            if isinstance(points, bool) or not isinstance(points, (int, float)):
                errors.append(f"{here}: test cell without points; set nbgrader.points > 0")
            elif points <= 0:
                errors.append(f"{here}: test cell with points = {points}; a test must be worth > 0")
        _, _, sol_error = regions(cell.source, *SOLUTION_DELIMITERS)
        if sol_error:
            errors.append(f"{here}: {sol_error}")
        elif not solution and any(SOLUTION_DELIMITERS[0] in line for line in cell.source.splitlines()):
            errors.append(f"{here}: a solution region in a cell that is not a solution cell "
                          "would reach students; mark the cell as a solution (nbgrader.solution)")
        _, _, hidden_error = regions(cell.source, *HIDDEN_DELIMITERS)
        if hidden_error:
            errors.append(f"{here}: {hidden_error}")
        elif not grade and HIDDEN_DELIMITERS[0] in cell.source:
            errors.append(f"{here}: hidden tests in a cell that is not a test cell would reach "
                          "students; mark the cell as graded with points")
    return errors


# -- outputs ---------------------------------------------------------------------------------------

def coalesced_outputs(outputs: list) -> list:
    """A cell's outputs with each run of same-named stream outputs joined into one: a kernel may
    send one print in several pieces ('ATTACK', ' processes 48'), and a line is the joined text's.
    Linear in the text (a student's cell may print megabytes)."""
    joined: list = []
    for output in outputs:
        last = joined[-1] if joined else {}
        if (output.get("output_type") == "stream" and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            joined[-1] = type(last)({**last, "text": str(last.get("text", "")) + str(output.get("text", ""))})
        else:
            joined.append(output)
    return joined


# -- leaks: what a release must not contain -------------------------------------------------------

def notebook_text_lines(nb: NotebookNode) -> list[str]:
    """Every line a reader of the notebook can see: cell sources and text outputs."""
    lines: list[str] = []
    for cell in nb.cells:
        lines.extend(cell.source.splitlines())
        for output in coalesced_outputs(cell.get("outputs", [])):
            text = output.get("text") or "".join(output.get("data", {}).get("text/plain", ""))
            lines.extend(str(text).splitlines())
            lines.extend(output.get("traceback", []))
    return lines

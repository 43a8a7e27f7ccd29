"""The one search for answers where students can read them: `check`, `publish` and the tests use it.

What must not reach students (`secrets`), from a course's source notebooks, helpers/reference/
and grading/:

- lines: each line inside a solution or hidden-test region of a source notebook. Not searched:
  lines the course shows students anyway, i.e. found outside those regions in any source
  notebook (a later notebook gives an earlier exercise's code in a read-only cell, by design)
  or in a lecture notebook (published as written); and lines that prove nothing alone
  (`telling`): imports (they name a module, not an answer), block headers such as
  `for x, y in loader:` (the answer is in the body, whose lines are searched), a `return` of
  plain names (`return w1, w2`: the lines that compute them are searched), lines under
  MIN_LINE characters or without a word (`pass`, `)`), which two unrelated programs share.
- windows: each run of WINDOW consecutive code lines (blanks and comments dropped) of the
  solution and hidden-test regions, of every file of helpers/reference/ and of the known-wrong
  answers, right answers written another way and probes (grading/). Not searched: windows found
  in the source notebooks outside the regions (signatures, docstrings and read-only code that
  the release carries by design). A window catches a copied function even where each of its
  lines alone is common.

Every line is compared as `normalize` leaves it (stripped, an inline comment dropped, inner
whitespace collapsed): the code, not its layout. A window keeps its lines as written (stripped).

`find_leaks(folder, secrets)` searches every text file of a tree (a notebook: its cells' sources
and text outputs) for those lines and windows, and for nbgrader's delimiters left behind.
`readable(source_nb, release_nb)` measures the softer leak: the telling solution lines a student
can read verbatim anywhere in the release notebook, prose and hints included (docs/design.md:
under 10 %).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.course.layout import Course
from autograder.course.notebooks import (
    HIDDEN_DELIMITERS,
    SOLUTION_DELIMITERS,
    grade_id,
    notebook_text_lines,
    read_notebook,
    regions,
)

WINDOW = 4  # consecutive code lines that, found together, mean a copied answer
MIN_CHARS = 40  # shorter windows (`return x`, one-word lines) prove nothing
MIN_LINE = 10  # shorter lines (`pass`, `return x`) prove nothing
_IMPORT = re.compile(r"^(import|from)\s+[\w.]+")
_HEADER = re.compile(r"^(if|elif|else|for|while|with|try|except|finally|async\s+for|async\s+with)\b.*:$")
_SKIPPED_DIRS = {".git", "__pycache__", ".ipynb_checkpoints"}


_INLINE_COMMENT = re.compile(r"\s{2,}#.*$")
_RETURN_NAMES = re.compile(r"^return\s+[\w.]+(\s*,\s*[\w.]+)*$")
DELIMITERS = (SOLUTION_DELIMITERS[0], SOLUTION_DELIMITERS[1], HIDDEN_DELIMITERS[0], HIDDEN_DELIMITERS[1])


def normalize(line: str) -> str:
    """One code line without its layout: stripped, inline comment dropped, whitespace collapsed."""
    return " ".join(_INLINE_COMMENT.sub("", line).split())


def code_lines(text: str) -> list[str]:
    """Stripped lines that carry code: no blanks, no comments (windows are made of these: a window
    keeps its lines' layout, a line alone is compared as `normalize` leaves it)."""
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def telling(line: str) -> bool:
    """Whether a normalized code line alone says something of an answer (the module's doc)."""
    return (len(line) >= MIN_LINE and bool(re.search(r"\w", line)) and not _IMPORT.match(line)
            and not _HEADER.match(line) and not _RETURN_NAMES.match(line))


def windows(text: str) -> set[str]:
    """Every run of WINDOW consecutive code lines of `text` with at least MIN_CHARS characters."""
    lines = code_lines(text)
    runs = ("\n".join(lines[i:i + WINDOW]) for i in range(max(1, len(lines) - WINDOW + 1)))
    return {run for run in runs if len(run) >= MIN_CHARS}


class CodeIndex:
    """The code lines of a text, asked whether a window occurs in them as whole lines."""

    def __init__(self, text: str):
        lines = code_lines(text)
        self.runs = {"\n".join(lines[i:i + WINDOW]) for i in range(len(lines))}
        self.text = "\n" + "\n".join(lines) + "\n"

    def __contains__(self, window: str) -> bool:
        if window.count("\n") == WINDOW - 1:
            return window in self.runs
        return f"\n{window}\n" in self.text  # a whole file shorter than WINDOW lines


def split_regions(text: str) -> tuple[list[tuple[str, str]], str]:
    """([(kind, text) of each kind of region in a cell], the cell's text outside them)."""
    inside = []
    public = text
    for kind, (begin, end) in (("solution", SOLUTION_DELIMITERS),
                               ("hidden tests", HIDDEN_DELIMITERS)):
        region, outside, _ = regions(public, begin, end)
        if region:
            inside.append((kind, "\n".join(region)))
        public = "\n".join(outside)
    return inside, public


def source_notebooks(source_dir: Path) -> list[Path]:
    return sorted(Path(source_dir).glob("*/*.ipynb"))


def answer_windows(source_dir: Path) -> set[str]:
    """Every window of the solution and hidden-test regions of the notebooks in `source_dir`."""
    found: set[str] = set()
    for path in source_notebooks(source_dir):
        for cell in read_notebook(path).cells:
            for _, region in split_regions(cell.source)[0]:
                found |= windows(region)
    return found


def notebook_text(path: Path, outputs: bool = False) -> str:
    """The sources of a notebook's cells, one after another (outputs: and their text outputs)."""
    nb = read_notebook(path)
    return "\n".join(notebook_text_lines(nb)) if outputs else "\n".join(cell.source for cell in nb.cells)


def reference_dir(course: Course) -> Path:
    """helpers/reference/ of the course's packages (Course.package_root: this checkout's for a
    course of notebooks alone, as the fixture course is)."""
    return course.package_root / "helpers" / "reference"


@dataclass(frozen=True)
class Secrets:
    """What must not reach students: line -> where it comes from, window -> where it comes from."""

    lines: dict[str, str]
    windows: dict[str, str]


def secrets(course: Course) -> Secrets:
    """The answers, hidden tests, references and mutants of `course`, as the module doc says."""
    public_text: list[str] = []
    region_lines: dict[str, str] = {}
    found_windows: dict[str, str] = {}
    for path in source_notebooks(course.source_dir):
        where = path.relative_to(course.root).as_posix()
        public_cells = []
        for cell in read_notebook(path).cells:
            inside, public = split_regions(cell.source)
            public_cells.append(public)
            for kind, region in inside:
                origin = f"{where}, {kind} of {grade_id(cell) or 'a cell'}"
                for line in code_lines(region):
                    region_lines.setdefault(normalize(line), origin)
                for window in windows(region):
                    found_windows.setdefault(window, origin)
        public_text.append("\n".join(public_cells))
    shown = {normalize(line) for text in public_text for line in text.splitlines()}
    lectures = [notebook_text(path) for path in sorted((course.root / "notebooks").glob("*.ipynb"))]
    shown |= {normalize(line) for text in lectures for line in text.splitlines()}
    lines = {line: origin for line, origin in region_lines.items()
             if line not in shown and telling(line)}
    files = sorted(reference_dir(course).rglob("*.py")) + sorted(course.grading_dir.rglob("*.py"))
    for path in files:
        if "__pycache__" in path.parts:
            continue
        where = path.relative_to(course.root if path.is_relative_to(course.root) else course.package_root)
        for window in windows(path.read_text(encoding="utf-8")):
            found_windows.setdefault(window, where.as_posix())
    shown_code = [CodeIndex("\n\n".join(public_text))]
    return Secrets(lines, {w: o for w, o in found_windows.items()
                           if not any(w in index for index in shown_code)})


def file_text(path: Path) -> str | None:
    """What a reader of the file sees (a notebook: its cells' sources and text outputs); None for
    a binary file (images, archives)."""
    path = Path(path)
    if path.suffix == ".ipynb":
        return notebook_text(path, outputs=True)
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def tree_texts(folder: Path) -> dict[str, str]:
    """Relative path -> text of every readable text file under `folder` (file_text)."""
    folder = Path(folder)
    texts = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or _SKIPPED_DIRS & set(rel.parts[:-1]):
            continue
        text = file_text(path)
        if text is not None:
            texts[rel.as_posix()] = text
    return texts


@dataclass(frozen=True)
class Leak:
    file: str  # relative to the searched folder
    origin: str  # where the secret comes from
    text: str  # the line or window found

    def __str__(self) -> str:
        lines = self.text.splitlines()
        more = f" (+{len(lines) - 1} lines)" if len(lines) > 1 else ""
        return f"{self.file}: {lines[0][:80]!r}{more} from {self.origin}"


def find_leaks(folder: Path, found: Secrets) -> list[Leak]:
    """Every secret line or window of `found` that appears in a file under `folder` (a file: itself),
    and every line holding an nbgrader delimiter."""
    leaks = []
    folder = Path(folder)
    texts = tree_texts(folder) if folder.is_dir() else {folder.name: file_text(folder) or ""}
    for rel, text in texts.items():
        lines = {normalize(line) for line in text.splitlines()}
        leaks += [Leak(rel, origin, line) for line, origin in found.lines.items() if line in lines]
        leaks += [Leak(rel, "an nbgrader delimiter", line) for line in sorted(lines)
                  if any(delimiter in line for delimiter in DELIMITERS)]
        code = CodeIndex(text)
        leaks += [Leak(rel, origin, window) for window, origin in found.windows.items()
                  if window in code]
    return sorted(leaks, key=lambda leak: (leak.file, leak.text))


def answer_lines(source_nb) -> list[str]:
    """The telling solution lines of one source notebook, normalized, less those its own code
    outside the solution and hidden-test regions gives anyway (setup and read-only cells,
    signatures, visible tests). Prose is not given code: a solution line quoted there leaks."""
    inside, given = [], set()
    for cell in source_nb.cells:
        if cell.cell_type != "code":
            continue
        found, public = split_regions(cell.source)
        inside += [normalize(line) for kind, region in found if kind == "solution"
                   for line in code_lines(region)]
        given |= {normalize(line) for line in code_lines(public)}
    return [line for line in inside if telling(line) and line not in given]


def readable(source_nb, release_nb) -> tuple[list[str], list[str]]:
    """(answer_lines, those of them a student can read verbatim in the release notebook: in any
    cell, prose included, markdown backticks and layout ignored, never as the tail of a longer
    name such as `losses.append` inside `expected_losses.append`)."""
    lines = answer_lines(source_nb)
    text = " ".join(" ".join(cell.source.replace("`", "").split()) for cell in release_nb.cells)
    return lines, [line for line in lines
                   if re.search(r"(?<![\w.])" + re.escape(line.replace("`", "")) + r"(?!\w)", text)]

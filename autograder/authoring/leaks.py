"""The search that proves what students receive holds no answer, hidden test, reference or mutant.

Two searches over every text file of a tree (a notebook by its cells' sources):

- lines: each line inside a solution or hidden-test region of a source notebook. Not searched:
  lines the course shows students anyway, i.e. found outside those regions in any source
  notebook (a later notebook gives an earlier exercise's code in a read-only cell, by design)
  or in a lecture notebook (published as written); imports (they name a module, not an
  answer); block headers such as `for x, y in loader:` (the answer is in the body, whose lines
  are searched); lines under 10 characters or without a word (`return x`, `)`), which two
  unrelated programs share.
- windows: each run of WINDOW consecutive code lines (blanks and comments dropped) of the
  solution and hidden-test regions, of every file of helpers/reference/ and of the known-wrong
  answers, right answers written another way and probes (grading/). Not searched: windows found in the source notebooks outside the
  regions (signatures, docstrings and read-only code that the release carries by design).
  A window catches a copied function even where each of its lines alone is common.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autograder.course.layout import Course
from autograder.course.notebooks import (
    HIDDEN_DELIMITERS,
    SOLUTION_DELIMITERS,
    _regions,
    grade_id,
    read_notebook,
)
from autograder.course.settings import REPO_ROOT

WINDOW = 4  # consecutive code lines that, found together, mean a copied answer
MIN_CHARS = 40  # shorter windows (`return x`, one-word lines) prove nothing
MIN_LINE = 10  # shorter lines (`pass`, `return x`) prove nothing
_IMPORT = re.compile(r"^(import|from)\s+[\w.]+")
_HEADER = re.compile(r"^(if|elif|else|for|while|with|try|except|finally|async\s+for|async\s+with)\b.*:$")
_SKIPPED_DIRS = {".git", "__pycache__", ".ipynb_checkpoints"}


def code_lines(text: str) -> list[str]:
    """Stripped lines that carry code: no blanks, no comments."""
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.strip().startswith("#")]


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
        region, outside, _ = _regions(public, begin, end)
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


def notebook_text(path: Path) -> str:
    """The sources of a notebook's cells, one after another."""
    return "\n".join(cell.source for cell in read_notebook(path).cells)


def reference_dir(course: Course) -> Path:
    """helpers/reference/ of the course folder, else of this checkout (a fixture course has none)."""
    own = course.root / "helpers" / "reference"
    return own if own.is_dir() else REPO_ROOT / "helpers" / "reference"


@dataclass(frozen=True)
class Secrets:
    """What must not reach students: line -> where it comes from, window -> where it comes from."""

    lines: dict[str, str]
    windows: dict[str, str]


def _is_telling(line: str) -> bool:
    return (len(line) >= MIN_LINE and bool(re.search(r"\w", line)) and not _IMPORT.match(line)
            and not _HEADER.match(line))


def secrets(course: Course) -> Secrets:
    """The answers, hidden tests, references and mutants of `course`, as the module doc says."""
    public_text: list[str] = []
    region_lines: dict[str, str] = {}
    found_windows: dict[str, str] = {}
    for path in source_notebooks(course.source_dir):
        where = path.relative_to(course.root).as_posix()
        public_cells = []
        for cell in read_notebook(path).cells:
            regions, public = split_regions(cell.source)
            public_cells.append(public)
            for kind, region in regions:
                origin = f"{where}, {kind} of {grade_id(cell) or 'a cell'}"
                for line in code_lines(region):
                    region_lines.setdefault(line, origin)
                for window in windows(region):
                    found_windows.setdefault(window, origin)
        public_text.append("\n".join(public_cells))
    shown = {line.strip() for text in public_text for line in text.splitlines()}
    for path in sorted((course.root / "notebooks").glob("*.ipynb")):
        shown |= {line.strip() for line in notebook_text(path).splitlines()}
    lines = {line: origin for line, origin in region_lines.items()
             if line not in shown and _is_telling(line)}
    files = sorted(reference_dir(course).rglob("*.py")) + sorted(course.grading_dir.rglob("*.py"))
    for path in files:
        if "__pycache__" in path.parts:
            continue
        where = path.relative_to(course.root if path.is_relative_to(course.root) else REPO_ROOT)
        for window in windows(path.read_text(encoding="utf-8")):
            found_windows.setdefault(window, where.as_posix())
    shown_code = CodeIndex("\n\n".join(public_text))
    return Secrets(lines, {w: o for w, o in found_windows.items() if w not in shown_code})


def tree_texts(folder: Path) -> dict[str, str]:
    """Relative path -> text of every readable text file under `folder` (notebooks: cell sources)."""
    folder = Path(folder)
    texts = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if not path.is_file() or _SKIPPED_DIRS & set(rel.parts[:-1]):
            continue
        if path.suffix == ".ipynb":
            texts[rel.as_posix()] = notebook_text(path)
            continue
        try:
            texts[rel.as_posix()] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:  # binary: images, archives
            continue
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
    """Every secret line or window of `found` that appears in a file under `folder`."""
    leaks = []
    for rel, text in tree_texts(folder).items():
        lines = {line.strip() for line in text.splitlines()}
        leaks += [Leak(rel, origin, line) for line, origin in found.lines.items() if line in lines]
        code = CodeIndex(text)
        leaks += [Leak(rel, origin, window) for window, origin in found.windows.items()
                  if window in code]
    return sorted(leaks, key=lambda leak: (leak.file, leak.text))

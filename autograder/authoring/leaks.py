"""One rule for "an answer is readable": `check`'s gate 'no leaks', `publish` (the tree it writes and
its calendar gate, autograder/authoring/student_tree.py) and tests/test_release_leak.py all ask it.

What is secret (`secrets`; from a course's source notebooks, helpers/reference/ and grading/):

- answer lines: each statement inside a solution or hidden-test region of a source notebook, one
  logical line however many lines it is written on (`statements`: a call over several lines is one
  line), comments dropped, whitespace collapsed; and each line of a statement written over several
  (a piece: `nn.ReLU(),`, a hidden test's `check_close(f(np.array([-2.0, 4.0])), 6.0,`). Not:
  - statements that prove nothing alone (`telling`): imports (they name a module), block headers
    such as `for x, y in loader:` (the answer is in the body), a `return` of plain names (the
    statements that compute them are searched), statements under MIN_LINE characters or without a
    word, which two unrelated programs share;
  - what the course gives (`Given`): the code outside the regions of the source notebooks' code
    cells (signatures, read-only cells, visible tests; a later notebook gives an earlier exercise's
    code by design, and the calendar gate says when), as the same statement or as a piece of a
    longer one (`train(model.to(device), ...)` gives `model.to(device)`), never inside a string
    or a comment of it; and the lecture notebooks, prose too (published as written: they teach).
    An assignment's prose never gives a solution's statement: prose is where an answer is told,
    a hint's string too. It does give a hidden test's: what is secret in a hidden test is the
    inputs and checks, not the setup the question states (`loss = (x @ w).relu().sum()`).
- windows: each run of WINDOW consecutive code lines (as written, stripped) of the regions, of every
  file of helpers/reference/ and of grading/ (probes, known-wrong answers, right answers written
  another way), less those the given code holds (and, of the regions', those a lecture shows: a
  reference or a known-wrong answer is never taught). A window catches a copied function whose
  lines are each common.

Readable (`Reading`): a statement is readable in a text when it occurs there anywhere: a line of
code or a piece of one, a sentence of prose, a hint's string, an output; layout and markdown
backticks ignored; never inside a longer name (`losses.append(x)` is not read in
`expected_losses.append(x)`). A piece is readable when it is a whole line of the text (pasted): a
piece inside a longer line is most often an argument list any call may hold (`rtol=1e-10,
atol=1e-10)`). A window is readable when its lines occur one after another as whole code lines. A
notebook reads as its cells' sources and text outputs.

The threshold is zero: one readable answer line, window or nbgrader delimiter is a leak; `check`'s
gate fails, `publish` writes nothing, the release test fails. Why no share:
- one line can be a whole answer (one-line exercises, tests/test_one_line_share.py): a share of a
  notebook's or a course's lines lets a whole exercise through (1 line of 309 is 0.3 %);
- a hint that names the line that fixes a mistake gives that line away (STYLE, habit 20), one line
  at a time, below any share;
- what the release test's 10 % and the calendar gate's "three lines and half of a region" let
  through was the search's noise, not answers: a piece of a call (`nn.ReLU(),` read in a visible
  test's `nn.Sequential(nn.Linear(4, 3), nn.ReLU(), ...)`), code given inside a longer given line
  (`generator=torch.Generator().manual_seed(seed))` in 06's read-only cell), habits a later
  notebook shows (`optimizer.zero_grad()`: the course showed it before). The definitions above
  leave those out by name, so what is left readable is an answer.

When (the calendar gate, `student_tree.shown_answers`): no answer of an assignment not yet due may
be readable in another notebook published at that moment. Given to that assignment's students, by
the same rule: its own code, the lecture notebooks and the code of every notebook released no later
than it (what the course showed before handing the assignment out is not its answer).

Measured on this course's release/ (2026-11-29; tests/test_release_leak.py prints the figures):
before, check's gate found 0 answer lines readable, the release test 7 of its 309 solution lines
(2.3 %: 04 `nn.ReLU(),`, 06 `generator=...manual_seed(seed))` twice, 06 `nn.init.zeros_(layer.bias)`
in a hint, 08 `scaler.unscale_(optimizer)`, `scaler.step(optimizer)`, `scaler.update()` in the
gradient scaler's table), and the calendar's rule, applied to each release notebook, 0. With one
rule all three find the same 4 answer lines, of 841 statements (234 of solutions) and 330 pieces:
06's hint and 08's three; the share's three others are a piece of a call inside a longer line and
a line given inside a longer given line, no answer lines now.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
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
MIN_LINE = 10  # shorter statements (`pass`, `return x`, `nn.ReLU()`) prove nothing
_IMPORT = re.compile(r"^(import|from)\s+[\w.]+")
_HEADER = re.compile(r"^(if|elif|else|for|while|with|try|except|finally|async\s+for|async\s+with)\b.*:$")
_SKIPPED_DIRS = {".git", "__pycache__", ".ipynb_checkpoints"}
_INLINE_COMMENT = re.compile(r"\s{2,}#.*$")
_RETURN_NAMES = re.compile(r"^return\s+[\w.]+(\s*,\s*[\w.]+)*$")
DELIMITERS = (SOLUTION_DELIMITERS[0], SOLUTION_DELIMITERS[1], HIDDEN_DELIMITERS[0], HIDDEN_DELIMITERS[1])


def normalize(line: str) -> str:
    """One code line without its layout: stripped, inline comment dropped, whitespace collapsed."""
    return " ".join(_INLINE_COMMENT.sub("", line).split())


def _scan(text: str) -> list[tuple[str, str]]:
    """(statement, the same without its strings' contents) for each logical line of `text`: a
    statement spanning lines inside brackets, a triple-quoted string or after a backslash is one;
    comments dropped, whitespace collapsed. A region may open a bracket it never closes (it ends
    inside a call): the rest is then one statement; a closing bracket it never opened is text."""
    found: list[tuple[str, str]] = []
    code: list[str] = []
    bare: list[str] = []
    depth, quote, i = 0, "", 0

    def flush():
        statement = " ".join("".join(code).split())
        if statement:
            found.append((statement, " ".join("".join(bare).split())))
        code.clear()
        bare.clear()

    while i < len(text):
        ch = text[i]
        if quote:
            step = 2 if ch == "\\" else len(quote) if text.startswith(quote, i) else 1
            if ch == "\n" and len(quote) == 1:  # an unterminated string ends with its line
                quote = ""
                continue
            code.append(text[i:i + step])
            if step == len(quote) and text.startswith(quote, i):
                bare.append(quote)
                quote = ""
            i += step
            continue
        if ch == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if ch == "\\" and text[i + 1:i + 2] == "\n":
            i += 2
            continue
        if ch == "\n" and not depth:
            flush()
            i += 1
            continue
        if ch in "\"'":
            quote = text[i:i + 3] if text[i:i + 3] in ('"""', "\'\'\'") else ch
            code.append(quote)
            bare.append(quote)
            i += len(quote)
            continue
        depth = depth + 1 if ch in "([{" else max(0, depth - 1) if ch in ")]}" else depth
        code.append(ch)
        bare.append(ch)
        i += 1
    flush()
    return found


def statements(text: str) -> list[str]:
    """The logical lines of `text`, comments dropped, whitespace collapsed (`_scan`): the unit an
    answer is searched by, so that a call written over several lines is one answer line, and its
    pieces (`nn.ReLU(),`, `rtol=1e-10, atol=1e-10)`) are not lines of their own."""
    return [statement for statement, _ in _scan(text)]


def code_lines(text: str) -> list[str]:
    """Stripped lines that carry code: no blanks, no comments (what windows are made of: a window
    keeps its lines' layout)."""
    return [line.strip() for line in text.splitlines()
            if line.strip() and not line.strip().startswith("#")]


def telling(line: str) -> bool:
    """Whether a statement alone says something of an answer (the module doc)."""
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


class Reading:
    """A text as a student reads it, asked whether an answer line or a window is readable there
    (the module doc: anywhere, layout and backticks ignored, never inside a longer name)."""

    def __init__(self, text: str):
        self.flat = " ".join(text.replace("`", "").split())
        self.code = CodeIndex(text)
        self.lines = {normalize(line) for line in text.splitlines()}

    def shows(self, line: str) -> bool:
        line = line.replace("`", "")
        return line in self.flat and re.search(
            r"(?<![\w.])" + re.escape(line) + r"(?!\w)", self.flat) is not None

    def shows_piece(self, piece: str) -> bool:
        """Whether a line of a statement written over several is a whole line here (pasted)."""
        return piece in self.lines

    def shows_window(self, window: str) -> bool:
        return window in self.code


class Given:
    """What the course gives (module doc), asked whether it gives an answer's statement: `codes`
    give it as the same statement, or, for a line without a string, as a piece of a longer
    statement (`train(model.to(device), ...)` gives `model.to(device)`), never inside a string or a
    comment (a hint's string that names the line tells it, it gives nothing); `lectures` give
    anything of an answer they show; `prose` gives a hidden test's statement, never a solution's."""

    def __init__(self, codes: Iterable[str], lectures: Iterable[str] = (), prose: Iterable[str] = ()):
        codes, lectures = list(codes), list(lectures)
        scanned = [pair for code in codes for pair in _scan(code)]
        self.statements = {statement for statement, _ in scanned}
        self.lines = {normalize(line) for code in codes for line in code_lines(code)}
        self.code = Reading("\n".join(bare for _, bare in scanned))
        self.lectures = Reading("\n".join(lectures))
        self.prose = Reading("\n".join(prose))
        self.windows = CodeIndex("\n\n".join(codes))

    def gives(self, line: str, kind: str = "solution") -> bool:
        return (line in self.statements or self.lectures.shows(line)
                or (not re.search("[\"']", line) and self.code.shows(line))
                or (kind == "hidden tests" and self.prose.shows(line)))

    def gives_piece(self, piece: str, kind: str = "solution") -> bool:
        """A line of a statement written over several: given as a line of the code too."""
        return piece in self.lines or self.gives(piece, kind)

    def gives_window(self, window: str, answer: bool = True) -> bool:
        """Whether the given code holds `window`; for an `answer`'s, a lecture too (a lecture holding
        a reference's or a grading file's code leaks it: those are never taught)."""
        return window in self.windows or (answer and self.lectures.shows_window(window))


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


def notebook_prose(nb) -> str:
    """A notebook's markdown cells, one after another."""
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")


def given_code(nb) -> str:
    """The code a notebook gives: its code cells outside the solution and hidden-test regions."""
    return "\n".join(split_regions(cell.source)[1] for cell in nb.cells if cell.cell_type == "code")


@dataclass(frozen=True)
class Answer:
    """One region of a source notebook: its secret statements and windows."""

    where: str  # the notebook, relative to the course
    kind: str  # "solution" or "hidden tests"
    cell: str  # the cell's grade_id
    lines: list[str]
    windows: set[str]
    pieces: list[str] = field(default_factory=list)  # lines of its statements written over several

    @property
    def origin(self) -> str:
        return f"{self.where}, {self.kind} of {self.cell}"


def answers(nb, where: str, given: Given) -> list[Answer]:
    """The regions of a source notebook, each with its telling statements and its windows that
    `given` does not give."""
    found = []
    for cell in nb.cells:
        for kind, region in split_regions(cell.source)[0]:
            whole = statements(region)
            lines = [line for line in whole if telling(line) and not given.gives(line, kind)]
            pieces = [piece for piece in map(normalize, code_lines(region)) if piece not in whole
                      and telling(piece) and not given.gives_piece(piece, kind)]
            found.append(Answer(where, kind, grade_id(cell) or "a cell", list(dict.fromkeys(lines)),
                                {w for w in windows(region) if not given.gives_window(w)},
                                list(dict.fromkeys(pieces))))
    return found


def answer_lines(source_nb) -> list[str]:
    """The secret solution lines of one source notebook read alone (its own code the given)."""
    return [line for answer in answers(source_nb, "", Given([given_code(source_nb)]))
            if answer.kind == "solution" for line in answer.lines]


def notebook_text(path: Path, outputs: bool = False) -> str:
    """The sources of a notebook's cells, one after another (outputs: and their text outputs)."""
    nb = read_notebook(path)
    return "\n".join(notebook_text_lines(nb)) if outputs else "\n".join(cell.source for cell in nb.cells)


def reference_dir(course: Course) -> Path:
    """helpers/reference/ of the course's packages (Course.package_root: this checkout's for a
    course of notebooks alone, as the fixture course is)."""
    return course.package_root / "helpers" / "reference"


def lectures(course: Course) -> list[str]:
    """The course's lecture notebooks (notebooks/), published as written: their cells' sources."""
    return [notebook_text(path) for path in sorted((course.root / "notebooks").glob("*.ipynb"))]


def course_given(course: Course, notebooks: Iterable | None = None) -> Given:
    """What the course gives (module doc): the code of `notebooks` (default: every source
    notebook's), the lecture notebooks, and every source notebook's prose (for hidden tests)."""
    every = [read_notebook(path) for path in source_notebooks(course.source_dir)]
    return Given([given_code(nb) for nb in (every if notebooks is None else notebooks)],
                 lectures(course), [notebook_prose(nb) for nb in every])


@dataclass(frozen=True)
class Secrets:
    """What must not reach students: each answer line (statement), window and piece (a line of a
    statement written over several) -> where it comes from."""

    lines: dict[str, str]
    windows: dict[str, str]
    pieces: dict[str, str] = field(default_factory=dict)


def course_answers(course: Course, given: Given | None = None) -> dict[str, list[Answer]]:
    """assignment -> the answers of its source notebook, against `given` (default: all the code the
    course gives, its source notebooks' and its lecture notebooks')."""
    notebooks = {path: read_notebook(path) for path in source_notebooks(course.source_dir)}
    given = given or course_given(course)
    return {path.parent.name: answers(nb, path.relative_to(course.root).as_posix(), given)
            for path, nb in notebooks.items()}


def secrets(course: Course) -> Secrets:
    """The answers, hidden tests, references and grading files of `course` (the module doc)."""
    given = course_given(course)
    lines: dict[str, str] = {}
    runs: dict[str, str] = {}
    pieces: dict[str, str] = {}
    for answer in (a for found in course_answers(course, given).values() for a in found):
        for line in answer.lines:
            lines.setdefault(line, answer.origin)
        for window in answer.windows:
            runs.setdefault(window, answer.origin)
        for piece in answer.pieces:
            pieces.setdefault(piece, answer.origin)
    files = sorted(reference_dir(course).rglob("*.py")) + sorted(course.grading_dir.rglob("*.py"))
    for path in files:
        if "__pycache__" in path.parts:
            continue
        where = path.relative_to(course.root if path.is_relative_to(course.root) else course.package_root)
        for window in windows(path.read_text(encoding="utf-8")):
            if not given.gives_window(window, answer=False):
                runs.setdefault(window, where.as_posix())
    return Secrets(lines, runs, pieces)


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


def text_leaks(name: str, text: str, found: Secrets) -> list[Leak]:
    """Every secret of `found` readable in `text` (the file `name`), and every line holding an
    nbgrader delimiter."""
    reading = Reading(text)
    leaks = [Leak(name, origin, line) for line, origin in found.lines.items() if reading.shows(line)]
    leaks += [Leak(name, origin, piece) for piece, origin in found.pieces.items()
              if reading.shows_piece(piece)]
    leaks += [Leak(name, "an nbgrader delimiter", line)
              for line in sorted({normalize(line) for line in text.splitlines()})
              if any(delimiter in line for delimiter in DELIMITERS)]
    leaks += [Leak(name, origin, window) for window, origin in found.windows.items()
              if reading.shows_window(window)]
    return leaks


def readable(lines: Iterable[str], text: str) -> list[str]:
    """Those of the answer statements `lines` a student can read in `text` (`Reading`)."""
    reading = Reading(text)
    return [line for line in lines if reading.shows(line)]


def find_leaks(folder: Path, found: Secrets) -> list[Leak]:
    """`text_leaks` of every file under `folder` (a file: itself)."""
    folder = Path(folder)
    texts = tree_texts(folder) if folder.is_dir() else {folder.name: file_text(folder) or ""}
    leaks = [leak for rel, text in texts.items() for leak in text_leaks(rel, text, found)]
    return sorted(leaks, key=lambda leak: (leak.file, leak.text))

"""The grading folder: everything the grader knows about one assignment, in one place.

    grading/<assignment>/
        probe.py       PROBE = Probe(...): how each exercise is run on secret inputs and judged
                       (the contract: autograder/probes/__init__.py)
        mutants/*.py   known-wrong answers, each a mistake students make; `check` grades each one
                       with nbgrader and the probe, and it must lose the points of the tests it names
        variants/*.py  right answers written another way; each must pass its exercise's probe
        wrong/*.py     other wrong answers, judged by the probe alone; each must fail its exercise
                       with a message holding the words it names

    given.py       the stand-ins the probe hands the student's functions in the kernel (models, loaders,
                   clocks, functions to differentiate): sent into the kernel as text, as `k.given`;
                   they compute no property, expected value or verdict (optional)
    kinds.toml     how each exercise is asked: derived, designed, transcribed or one_line, and one
                   line of why (autograder/course/kinds.py reads it; the transcription share of
                   `check`'s table and report; tests/test_transcription_share.py wants every exercise)

The folder sits outside source/ (nbgrader copies every file beside a notebook into the release)
and is hidden from grading kernels: the probe runs in the grading process, and only the stand-ins'
source reaches a kernel (autograder/probes/caller.py). The reference stays in
helpers/reference/<topic>.py.

A mutant (autograder/course/mutants.py):

    \"\"\"grad_w1 without the transpose of x.\"\"\"      first docstring line: the mistake
    # replaces: mlp_backward                        the solution cell (grade_id) it replaces
    # caught by: test_mlp_backward_hidden          the test cells that must lose points
    def mlp_backward(x, y, w1, w2, cache): ...     the rest: the cell's whole new source

A variant, or a wrong answer:

    \"\"\"to_numpy in one call: numpy(force=True).\"\"\"  first docstring line: what is different
    # exercise: to_numpy                            the exercise it answers
    # message: median                               wrong/ only: words its failure must say
    def to_numpy(t): ...                            the rest: run after the solution cells
"""

from __future__ import annotations

import importlib.util
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from autograder.course.layout import default_root
from autograder.course.mutants import read_headed_file
from autograder.probes import Probe, ProbeError

GRADING = "grading"
PROBE_FILE = "probe.py"
GIVEN_FILE = "given.py"
KINDS = ("mutants", "variants", "wrong")
_HEADER = re.compile(r"^#\s*(exercise|message|may lose)\s*:\s*(.*?)\s*$")


class SampleError(ValueError):
    """A variant or wrong-answer file that does not follow the format; the message says how to fix it."""


def folder(root: Path, assignment: str) -> Path:
    """grading/<assignment>/ of the course at `root`."""
    return Path(root) / GRADING / assignment


def probe_path(root: Path, assignment: str) -> Path:
    return folder(root, assignment) / PROBE_FILE


def files(root: Path, assignment: str, kind: str) -> list[Path]:
    """The .py files of grading/<assignment>/<kind>/ (mutants, variants or wrong), sorted."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    path = folder(root, assignment) / kind
    return sorted(p for p in path.glob("*.py") if p.name != "__init__.py") if path.is_dir() else []


def load_probe(path: Path) -> Probe:
    """Import a probe.py (as a module of its own) and return its validated PROBE, with its stand-ins."""
    path = Path(path)
    name = f"grading_probe_{path.parent.name}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    probe = getattr(module, "PROBE", None)
    if not isinstance(probe, Probe):
        raise ProbeError(f"{path}: defines no PROBE = Probe(...) (autograder/probes/__init__.py)")
    if probe.assignment != path.parent.name:
        raise ProbeError(f"{path}: PROBE.assignment is {probe.assignment!r}; the folder is {path.parent.name!r}")
    given = path.parent / GIVEN_FILE
    return probe.with_given(given.read_text(encoding="utf-8") if given.is_file() else "", course_root=path.parents[2])


def probe_for(assignment: str, root: Path | None = None) -> Probe | None:
    """The probe of `assignment` in the course at `root` (default: this course), or None."""
    path = probe_path(Path(root) if root else default_root(), assignment)
    return load_probe(path) if path.is_file() else None


@dataclass(frozen=True)
class Sample:
    """A variant or a wrong answer: code run over the solution cells, and the exercise it answers."""

    path: Path
    note: str  # the docstring's first line
    exercise: str
    code: str
    message: str = ""  # wrong answers: words their failure message must hold
    # variants: test cells whose points depend on how good the design is, not on its being right (a
    # challenge's upper accuracy tiers, judged on the grader's secret draws); `check` excuses their loss
    may_lose: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.path.stem


def parse_sample(path: Path) -> Sample:
    """Read one variant or wrong-answer file; SampleError names the file and the fix."""
    path = Path(path)
    note, header, code = read_headed_file(path, _HEADER, SampleError, "what it shows")
    if not header.get("exercise"):
        raise SampleError(f"{path}: missing the line '# exercise: <exercise name>' after the docstring")
    wrong = path.parent.name == "wrong"
    if wrong and not header.get("message"):
        raise SampleError(f"{path}: missing the line '# message: <words its failure must say>'")
    if not code.strip():
        raise SampleError(f"{path}: no code after the header")
    may_lose = tuple(name.strip() for name in header.get("may lose", "").split(",") if name.strip())
    return Sample(path, note, header["exercise"], code, header.get("message", ""), may_lose)


def samples(root: Path, assignment: str, kind: str) -> list[Sample]:
    """Every variant (kind='variants') or wrong answer (kind='wrong') of an assignment."""
    return [parse_sample(p) for p in files(root, assignment, kind)]

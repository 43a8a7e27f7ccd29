"""Probes: each exercise run on inputs the notebook never saw, judged outside the student's kernel.

A student controls the kernel that runs nbgrader's tests: it can monkeypatch the checks, return
objects whose `__eq__` is always true, or install IPython hooks that turn `assert` into `pass`.
So the points are also earned a second way that the kernel cannot fake (autograder/engine/verify.py):

1. The trusted grading process draws fresh inputs (`make_inputs`, from a seed the student
   cannot know) and writes them as plain arrays.
2. A separate kernel runs the student's code (no test cell), then each exercise's `run` on those
   inputs; `record(key, value)` keeps what came back as plain arrays (numbers, booleans,
   strings: never pickles, never live objects). The probe module's source is sent into the
   kernel (autograder/probes/kernel.py); the grading folder itself is hidden from kernels.
3. The trusted process computes the expected records (`expected`, or the same `run` on the
   reference module in `helpers.reference`) and compares (`judge`).

A hostile kernel can only write numbers into the outputs file; to write the right ones it has to
compute them, which is the exercise. A test cell keeps its nbgrader points only when the exercise
it belongs to passes here (autograder/engine/job.py).

The contract, declared once per assignment in `grading/<assignment>/probe.py` as `PROBE`
(autograder/course/grading_folder.py gives the folder's whole layout):

    PROBE = Probe(
        assignment="01_numpy_mlp",
        reference="helpers.reference.numpy_mlp",  # the module `run` is judged against
        make_inputs=make_inputs,                  # rng -> {"name": np.ndarray}: the secret inputs
        exercises={"relu": Exercise(run=run_relu), ...},
        numpy_only=True,                          # PyTorch calls made while an exercise runs fail it
        forbidden=("torch", "helpers"),           # names the student's code may not mention (scan.py)
    )

    def run_relu(answers, inputs, record):  # the same function in the kernel and here
        record("out", answers.relu(inputs["relu.h"].copy()))

`answers` is the student's namespace in the kernel (`answers.relu`), the reference module here.
An Exercise may give `expected(inputs) -> {key: value}` where the reference is not a function
to call the same way (values, properties), a `tolerance`, and a `judge(got, want) -> message or
None` where plain comparison is not the question. A probe module imports `helpers.reference`
only inside functions that run on the trusted side (kernels cannot read it).

Inputs whose name starts with `private.` (PRIVATE) stay on the trusted side: `expected` and the
judges get them, the kernel's inputs file never holds them (`kernel_inputs`). Held-out labels go
there: the kernel needs the points to predict on, never their answers. Data the kernel must use but
never hold whole (06's training batches, under a budget) is served: `Probe(serve=inputs -> feed)`,
and the probe's code in the kernel calls `kernel.ask(prompt)` (input()), which the grader's
executor answers with `feed(prompt)` here, counting what it hands out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import io
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.probes.kernel import ERROR, TORCH, collect

Run = Callable[[Any, Mapping[str, np.ndarray], Callable[[str, Any], None]], None]
Judge = Callable[[dict, dict], "str | None"]


class ProbeError(ValueError):
    """A probe that does not follow the contract; the message names the assignment and the field."""


@dataclass(frozen=True)
class Tolerance:
    """How close a recorded number must be to the expected one (np.allclose's rtol and atol)."""

    rtol: float = 1e-5
    atol: float = 1e-7


DEFAULT_TOLERANCE = Tolerance()
EXACT = Tolerance(0.0, 0.0)


@dataclass(frozen=True)
class Exercise:
    """How one exercise is probed: `run` in the kernel; `expected`, `tolerance`, `judge` here."""

    run: Run
    expected: Callable[[dict], Mapping[str, Any]] | None = None  # None: `run` on the reference
    tolerance: Tolerance = DEFAULT_TOLERANCE
    judge: Judge | None = None  # None: every expected key compared within `tolerance`
    # test cell grade_id -> judge(got, want) of that cell alone, for exercises whose test cells ask
    # more and more of one answer (06's accuracy tiers): a cell whose judge fails loses its
    # points even when the exercise passes. Judged only when the exercise passes.
    cells: Mapping[str, Judge] = field(default_factory=dict)

    def __post_init__(self):
        for name in ("run", "expected", "judge"):
            value = getattr(self, name)
            if name == "run" and not callable(value) or value is not None and not callable(value):
                raise ProbeError(f"Exercise.{name} must be a function, got {type(value).__name__}")
        if not isinstance(self.cells, Mapping) or not all(
                isinstance(k, str) and callable(v) for k, v in self.cells.items()):
            raise ProbeError("Exercise.cells must map test cell grade_ids to judge functions")
        if not isinstance(self.tolerance, Tolerance):
            raise ProbeError(f"Exercise.tolerance must be a Tolerance, got {type(self.tolerance).__name__}")


@dataclass(frozen=True)
class Probe:
    """Everything the trusted run knows about one assignment's exercises."""

    assignment: str
    make_inputs: Callable[[np.random.Generator], dict[str, np.ndarray]]
    exercises: Mapping[str, Exercise]
    reference: str | None = None  # module whose names `run` calls on the trusted side
    numpy_only: bool = False
    forbidden: tuple[str, ...] = ()
    # inputs -> feed(prompt) -> answer: data the kernel asks for one piece at a time (kernel.ask), served
    # and counted on the trusted side, so that it never lies in the kernel whole (06's training batches)
    serve: Callable[[Mapping[str, np.ndarray]], Callable[[str], str]] | None = None
    source: str = field(default="", repr=False, compare=False)  # the module's text, for the kernel
    course_root: Path | None = field(default=None, repr=False, compare=False)  # where it was loaded

    def __post_init__(self):
        where = f"the probe of {self.assignment!r}"
        if not isinstance(self.assignment, str) or not self.assignment:
            raise ProbeError(f"{where}: assignment must be the assignment's folder name")
        if not callable(self.make_inputs):
            raise ProbeError(f"{where}: make_inputs must be a function rng -> dict of arrays")
        if not isinstance(self.exercises, Mapping) or not self.exercises:
            raise ProbeError(f"{where}: exercises must map each exercise's name to an Exercise")
        for name, exercise in self.exercises.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ProbeError(f"{where}: {name!r} is not an exercise name")
            if not isinstance(exercise, Exercise):
                raise ProbeError(f"{where}: exercises[{name!r}] must be an Exercise, got "
                                 f"{type(exercise).__name__}")
            if exercise.expected is None and not self.reference:
                raise ProbeError(f"{where}: exercise {name!r} has no expected() and the probe names "
                                 "no reference module to run it on")
        if self.serve is not None and not callable(self.serve):
            raise ProbeError(f"{where}: serve must be a function inputs -> feed(prompt) -> answer")
        if not all(isinstance(word, str) for word in self.forbidden):
            raise ProbeError(f"{where}: forbidden must be a tuple of names")
        object.__setattr__(self, "exercises", dict(self.exercises))
        object.__setattr__(self, "forbidden", tuple(self.forbidden))

    def with_source(self, source: str, course_root: Path | None = None) -> Probe:
        return dataclasses.replace(self, source=source, course_root=course_root)

    def expected(self, inputs: Mapping[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
        """exercise -> key -> the expected plain array, on the trusted side.

        Silently: what the reference prints (06's `fit` draws a progress bar) would otherwise reach
        the grader's terminal once per submission, among the lines `grade` and `check` print."""
        reference = _reference_module(self.reference, self.course_root) if self.reference else None
        want = {}
        with contextlib.redirect_stdout(io.StringIO()):
            for name, exercise in self.exercises.items():
                if exercise.expected is None:
                    want[name] = collect(exercise.run, reference, inputs)
                else:
                    want[name] = {key: _plain(value) for key, value in exercise.expected(dict(inputs)).items()}
        return want


def _reference_module(name: str, course_root: Path | None):
    """The installed module `name`, else the file it names in the course at `course_root` (a course
    outside this checkout, e.g. one `python -m autograder new` scaffolded, keeps its own references)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        path = Path(course_root or ".", *name.split(".")).with_suffix(".py")
        if course_root is None or not path.is_file():
            raise
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(value: Any) -> np.ndarray:
    from autograder.probes.kernel import plain

    return plain(value) if not isinstance(value, np.ndarray) else value


# -- the kernel cells --------------------------------------------------------------------------------

def kernel_cells(probe: Probe, in_path: Path, out: Path | int) -> list[str]:
    """The code cells that run `probe` in a kernel: one to load it, then one per exercise.
    out: where the records go, a path or a descriptor the kernel holds (the sandbox's outbox)."""
    target = out if isinstance(out, int) else json.dumps(str(out))
    setup = ("from autograder.probes.kernel import start as __autograder_start\n"
             f"__autograder_run = __autograder_start({json.dumps(probe.source)}, "
             f"{json.dumps('grading_probe_' + probe.assignment)}, {json.dumps(str(in_path))}, "
             f"{target}, {probe.numpy_only}, globals())\n"
             "del __autograder_start\n")
    return [setup] + [f"__autograder_run({json.dumps(name)})" for name in probe.exercises]


PRIVATE = "private."

_FACTS: dict[tuple[str, str], Any] = {}


def facts_once(name: str, facts: Callable[[], Any]) -> Any:
    """`facts()` measured once per grading process, a copy each time: for what the installed library
    does whatever the inputs (02's questions about which graphs stay alive), which every submission
    would otherwise measure again (a probe module is loaded afresh for each). Keyed by `name` and
    the torch version."""
    import copy
    import sys

    key = (name, str(getattr(sys.modules.get("torch"), "__version__", "")))
    if key not in _FACTS:
        _FACTS[key] = facts()
    return copy.deepcopy(_FACTS[key])


def kernel_inputs(inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The inputs the kernel may read: every one but the trusted side's own (PRIVATE names)."""
    return {key: value for key, value in inputs.items() if not key.startswith(PRIVATE)}


def run_in_namespace(probe: Probe, namespace: dict, inputs: Mapping[str, np.ndarray],
                     folder: Path) -> dict[str, np.ndarray]:
    """Run the kernel cells in `namespace` without a kernel (tests); returns the loaded outputs."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    in_path, out_path = folder / "inputs.npz", folder / "outputs.npz"
    np.savez(in_path, **kernel_inputs(inputs))
    from autograder.probes import kernel

    kernel.ASK = probe.serve(inputs) if probe.serve is not None else None  # the feed, called directly
    try:
        for cell in kernel_cells(probe, in_path, out_path):
            exec(compile(cell, "<probe cell>", "exec"), namespace)
    finally:
        kernel.ASK = None
    return load_outputs(out_path)


# What a kernel may hand back, in elements per array: a record the reference also makes, at most
# _SLACK times the reference's (a wrong shape is still read, to be told as one) or _FLOOR; any
# other record (counts, flags, notes, what a judge reads) at most _OTHER; all of them together at
# most _TOTAL bytes.
_SLACK, _FLOOR, _OTHER, _TOTAL = 4, 1 << 16, 1 << 20, 64 << 20
_KINDS = "biufUS"  # booleans, integers, floats, strings: nothing else is plain data


def load_outputs(path: Path, expected: Mapping[str, Mapping[str, np.ndarray]] | None = None
                 ) -> dict[str, np.ndarray]:
    """The arrays a kernel saved, plain data only (a pickle in the file raises ValueError).

    expected: the reference's records (exercise -> key -> array). Each array's header is read
    first, and the array loaded only when its dtype is plain and its size within the limits above:
    a few-MB file that inflates to GBs, or an object array, takes no memory. A refused array is
    left out and its exercise gets an error record saying why (the verdict tells the student).
    """
    import zipfile

    limits: dict[str, int] = {}
    for exercise, records in (expected or {}).items():
        for key, value in records.items():
            limits[f"{exercise}/{key}"] = max(_SLACK * int(np.asarray(value).size), _FLOOR)
    out: dict[str, np.ndarray] = {}
    if Path(path).stat().st_size == 0:  # the kernel ended before its first record
        return out
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise ValueError(f"not the records of a probe: {error}") from None
    total = 0
    with archive:
        for info in archive.infolist():
            key = info.filename.removesuffix(".npy")
            with archive.open(info) as f:
                version = np.lib.format.read_magic(f)
                reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                          else np.lib.format.read_array_header_2_0)
                shape, _, dtype = reader(f)
            size = int(np.prod(shape, dtype=np.int64)) if shape else 1
            limit = _limit(key, limits) if expected is not None else None
            limit = limit if limit is not None else _OTHER
            problem = None
            if dtype.kind not in _KINDS or dtype.itemsize > 4096:
                problem = f"dtype {dtype} is not plain data"
            elif size > limit:
                problem = f"{size} elements, far more than the {limit} expected"
            elif info.file_size > size * dtype.itemsize + 4096:
                problem = f"{info.file_size} bytes for {size} elements"
            elif total + size * dtype.itemsize > _TOTAL:
                problem = f"more than {_TOTAL >> 20} MiB handed back in all"
            if problem is not None:
                if expected is None:
                    raise ValueError(f"{key}: {problem}")
                exercise = key.split("/", 1)[0]
                out.setdefault(f"{exercise}/{ERROR}",
                               np.asarray(f"RecordRefused: {key.split('/', 1)[-1]}: {problem}"[:300]))
                continue
            total += size * dtype.itemsize
            with archive.open(info) as f:
                out[key] = np.lib.format.read_array(f, allow_pickle=False)
    return out


def _limit(key: str, limits: Mapping[str, int]) -> int | None:
    """The size limit of a record: its own, or that of the key it numbers (`saved.0` of `saved`)."""
    while key not in limits and "." in key.rsplit("/", 1)[-1]:
        key = key.rsplit(".", 1)[0]
    return limits.get(key)


# -- the trusted side ---------------------------------------------------------------------------------

@dataclass
class Verdict:
    """Whether one exercise gave the expected results; `message` says what went wrong."""

    exercise: str
    ok: bool
    message: str = ""
    cells: Mapping[str, str] = field(default_factory=dict)  # test grade_id -> why that cell fails


def judge(probe: Probe, inputs: Mapping[str, np.ndarray], outputs: Mapping[str, np.ndarray],
          expected: Mapping[str, dict] | None = None) -> dict[str, Verdict]:
    """Compare what the kernel recorded with the expected records on the same inputs.

    expected: probe.expected(inputs), when the caller has it already (tests reuse it).
    """
    want_all = probe.expected(inputs) if expected is None else expected
    verdicts = {}
    for name, exercise in probe.exercises.items():
        got = {key.split("/", 1)[1]: value for key, value in outputs.items() if key.split("/", 1)[0] == name}
        message = _problem(name, exercise, got, want_all[name])
        cells = {} if message else {
            gid: problem for gid, cell_judge in exercise.cells.items()
            if (problem := cell_judge(got, want_all[name]))}
        verdicts[name] = Verdict(name, message is None, message or "", cells)
    return verdicts


def _problem(name: str, exercise: Exercise, got: dict, want: dict) -> str | None:
    if ERROR in got:
        return f"{name} raised {got[ERROR]} on the grader's inputs"
    if TORCH in got:
        return f"{name} called PyTorch ({', '.join(map(str, got[TORCH]))}); this assignment is NumPy only"
    if not got:
        return f"{name} gave no result: the check run stopped before it (time limit, crash, or code that interfered)"
    if exercise.judge is not None:
        return exercise.judge(got, want)
    return compare_records(name, got, want, exercise.tolerance)


def compare_records(name: str, got: dict, want: dict, tolerance: Tolerance = DEFAULT_TOLERANCE) -> str | None:
    """The first expected key that is missing or differs, in a sentence; None when all match."""
    for key, expected_value in want.items():
        if key not in got:
            return f"{name} gave no {key}"
        message = compare_arrays(got[key], np.asarray(expected_value), tolerance.rtol, tolerance.atol)
        if message:
            return f"{name}: {key} {message} (on inputs your notebook never saw)"
    return None


def compare_arrays(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    """None when `got` matches `want`; otherwise what differs, in a few words."""
    if got.shape != want.shape:
        return f"has shape {got.shape}; expected {want.shape}"
    if want.dtype.kind in "USb" or got.dtype.kind in "US":
        if got.dtype.kind != want.dtype.kind or not np.array_equal(got, want):
            return f"is {_short(got)}; expected {_short(want)}"
        return None
    if got.dtype.kind not in "biuf":
        return f"has dtype {got.dtype}; expected numbers"
    got64, want64 = got.astype(np.float64), want.astype(np.float64)
    if not np.all(np.isfinite(got64) == np.isfinite(want64)):
        return "has nan or inf where the expected values are finite"
    if not np.allclose(got64, want64, rtol=rtol, atol=atol, equal_nan=True):
        finite = np.isfinite(want64)
        worst = float(np.max(np.abs(got64[finite] - want64[finite]), initial=0.0))
        return f"differs from the expected values (largest difference {worst:.3g})"
    return None


def _short(array: np.ndarray) -> str:
    text = repr(array.tolist())
    return text if len(text) <= 80 else text[:77] + "..."

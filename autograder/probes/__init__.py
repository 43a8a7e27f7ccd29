"""Probes: each exercise run on inputs the notebook never saw, judged outside the student's kernel.

A student controls the kernel that runs nbgrader's tests: it can monkeypatch the checks, return
objects whose `__eq__` is always true, install IPython hooks that turn `assert` into `pass`, or rewrite
anything that runs there after it. So the kernel is not a witness (STYLE habit 21): the points are also
earned a second way, in which the kernel only calls the student's functions and hands back what they
returned (autograder/engine/verify.py runs it):

1. The trusted grading process draws fresh inputs (`make_inputs`, from a seed the student cannot know).
2. After the notebook's last cell, the kernel's fixed caller (autograder/probes/caller.py, the same for
   every assignment) runs one conversation per exercise: the probe's `run(k, inputs, record)` runs
   *here*, in the grading process, and asks the kernel through `k` (autograder/probes/session.py) to
   call the student's functions on values it sends; `record(key, value)` keeps what came back as plain
   arrays. Nothing of the probe but the calls reaches the kernel: no expected value, no tolerance, no
   judge, no private input.
3. The trusted process computes the expected records (`expected`, or the same `run` on the reference
   module in `helpers.reference`, through the same caller in this process) and judges (`judge`). Every
   property (a size, a count, an accuracy, a statistic) is computed here from the raw values.

A hostile kernel can only hand back values; to hand back the right ones it has to compute them, which is
the exercise. A test cell keeps its nbgrader points only when the exercise it belongs to passes here
(autograder/engine/job.py).

The contract, declared once per assignment in `grading/<assignment>/probe.py` as `PROBE`
(autograder/course/grading_folder.py gives the folder's whole layout):

    PROBE = Probe(
        assignment="01_numpy_mlp",
        reference="helpers.reference.numpy_mlp",  # the module `run` is judged against
        make_inputs=make_inputs,                  # rng -> {"name": np.ndarray}: the secret inputs
        exercises={"relu": Exercise(run=run_relu), ...},
        numpy_only=True,                          # PyTorch calls refused while the student's code runs
        forbidden=("torch", "helpers"),           # names the student's code may not mention (scan.py)
    )

    def run_relu(k, inputs, record):  # runs here; the same calls reach the kernel and the reference
        h = k.value(inputs["relu.h"])             # a copy of the array, in the kernel
        record("out", k.answers.relu(h))          # what relu returned, fetched as a plain array
        record("input_kept", h)                   # and the argument as the call left it

`k.answers.name` is the student's name in the kernel, the reference module's here. What the kernel must
hold that is not plain data (a model to train, a stand-in device, a loader) is built by the assignment's
stand-ins, `grading/<assignment>/given.py`, sent into the kernel as text and reached as `k.given`: they
build inputs and hand back what the student's objects yield, and compute no property, expected value or
verdict. An Exercise may give `expected(inputs) -> {key: value}` where the reference is not a function to
call the same way (values, properties), a `tolerance`, and a `judge(got, want) -> message or None` where
plain comparison is not the question. A probe module imports `helpers.reference` only inside functions
(the reference runs here only).

Inputs whose name starts with `private.` (PRIVATE) stay on the trusted side: `expected` and the judges get
them, a probe's `run` never does (`kernel_inputs`), so it cannot send them. Held-out labels go there. Data
the kernel must use but never hold whole (06's training batches, under a budget) is served:
`Probe(serve=inputs -> feed)`, and the stand-ins in the kernel call `caller.ask(prompt)` (input()), which
the grader's executor answers with `feed(prompt)` here, counting what it hands out.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import importlib.util
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from autograder.probes import caller
from autograder.probes.session import (
    ERROR,
    Conversation,
    Session,
    as_fetched,
    as_record,
    local_channel,
    run_exercise,
)

Run = Callable[[Session, Mapping[str, np.ndarray], Callable[[str, Any], None]], None]
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
    given: str = field(default="", repr=False, compare=False)  # grading/<assignment>/given.py's text
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

    def with_given(self, given: str, course_root: Path | None = None) -> Probe:
        """This probe with its stand-ins' source (grading/<assignment>/given.py) and its course."""
        return dataclasses.replace(self, given=given, course_root=course_root)

    def given_module(self):
        """The stand-ins as a module of this process (the reference's runs use them as the kernel does)."""
        return caller.load_given(self.given, given_name(self.assignment)) if self.given else None

    def expected(self, inputs: Mapping[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
        """exercise -> key -> the expected plain array, on the trusted side.

        An exercise without `expected` is asked of the reference with the calls it asks of the kernel,
        through the kernel's own caller in this process. Silently: what the reference prints (06's `fit`
        draws a progress bar) would otherwise reach the grader's terminal once per submission."""
        reference = _reference_module(self.reference, self.course_root) if self.reference else None
        given = self.given_module()
        want = {}
        with contextlib.redirect_stdout(io.StringIO()), served(self, inputs) as feed:
            for name, exercise in self.exercises.items():
                if exercise.expected is None:
                    records = run_exercise(exercise.run, Session(local_channel(vars(reference), given), feed),
                                           kernel_inputs(inputs))
                    if ERROR in records:
                        raise ProbeError(f"the probe of {self.assignment!r}: the reference failed {name}: "
                                         f"{records[ERROR]}")
                    want[name] = records
                else:
                    want[name] = {key: as_record(as_fetched(value))
                                  for key, value in exercise.expected(dict(inputs)).items()}
        return want


def given_name(assignment: str) -> str:
    """The module name the stand-ins of `assignment` run under, in a kernel and here."""
    return "grading_given_" + assignment.replace("-", "_")


@contextlib.contextmanager
def served(probe: Probe, inputs: Mapping[str, np.ndarray]):
    """While the caller runs in this process: its `ask` answered by the probe's feed (Probe.serve), which
    the block gets (None without one)."""
    saved = caller.ASK
    caller.ASK = probe.serve(inputs) if probe.serve is not None else None
    try:
        yield caller.ASK
    finally:
        caller.ASK = saved


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


# -- the kernel cells --------------------------------------------------------------------------------

def kernel_cells(probe: Probe) -> list[str]:
    """The code cells of the trusted run in a kernel: one to start the caller, then one conversation per
    exercise (the executor answers each with the probe's Conversation)."""
    setup = ("from autograder.probes.caller import start as __autograder_start\n"
             f"__autograder_serve = __autograder_start(globals(), {probe.given or None!r}, "
             f"{given_name(probe.assignment)!r}, {probe.numpy_only})\n"
             "del __autograder_start\n")
    return [setup] + [f"__autograder_serve({name!r})" for name in probe.exercises]


def conversation(probe: Probe, inputs: Mapping[str, np.ndarray]) -> Conversation:
    """The grader's side of one kernel's trusted run: the executor's feed (GradingExecute.feed)."""
    feed = probe.serve(inputs) if probe.serve is not None else None
    return Conversation({name: e.run for name, e in probe.exercises.items()}, kernel_inputs(inputs), feed)


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
    """The inputs a probe's calls may send: every one but the trusted side's own (PRIVATE names)."""
    return {key: value for key, value in inputs.items() if not key.startswith(PRIVATE)}


def run_in_namespace(probe: Probe, namespace: dict, inputs: Mapping[str, np.ndarray],
                     folder: Path | None = None) -> dict[str, np.ndarray]:
    """Every exercise's calls asked of `namespace` through the caller, in this process (tests): the
    records as a kernel's trusted run gives them (exercise/key -> array)."""
    given = probe.given_module()
    outputs: dict[str, np.ndarray] = {}
    with served(probe, inputs) as feed:
        for name, exercise in probe.exercises.items():
            channel = local_channel(namespace, given, probe.numpy_only)
            records = run_exercise(exercise.run, Session(channel, feed), kernel_inputs(inputs))
            outputs.update({f"{name}/{key}": value for key, value in records.items()})
    return outputs


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
        error = str(got[ERROR])
        if error.startswith(caller.NUMPY_ONLY):
            return f"{name} {error.split(': ', 1)[1]}"
        if error.startswith(("stopped", "handed back")):
            return f"{name}: {error}"
        return f"{name} raised {error} on the grader's inputs"
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

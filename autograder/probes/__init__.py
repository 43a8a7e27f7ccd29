"""Probes: each exercise run on inputs the notebook never saw, judged outside the student's kernel.

A student controls the kernel that runs nbgrader's tests: it can monkeypatch the checks, return
objects whose `__eq__` is always true, or install IPython hooks that turn `assert` into `pass`.
So the points are also earned a second way that the kernel cannot fake (autograder/verify.py):

1. The trusted grading process draws fresh inputs (`make_inputs`, from a seed the student
   cannot know) and writes them as plain arrays.
2. A separate kernel runs the student's code (no test cell), then each exercise's snippet
   (`KERNEL_CODE`) on those inputs; `record(key, value)` keeps what came back as plain arrays
   (numbers, booleans, strings: never pickles, never live objects).
3. The trusted process computes the same with `helpers.reference` (`expected`) and compares.

A hostile kernel can only write numbers into the outputs file; to write the right ones it has to
compute them, which is the exercise. A test cell keeps its nbgrader points only when the exercise
it belongs to passes here (autograder/engine.py).

One module per assignment in this package, each defining:

    ASSIGNMENT = "01_numpy_mlp"
    NUMPY_ONLY = True           # PyTorch calls made while an exercise runs fail it (01 only)
    FORBIDDEN = ("torch",)      # names the student's code may not mention (autograder/scan.py)
    def make_inputs(rng) -> dict[str, np.ndarray]          # secret inputs, keyed "exercise.name"
    KERNEL_PRELUDE = "..."      # optional: code run before every snippet (helper models...)
    KERNEL_CODE = {"relu": "record('out', relu(inputs['relu.h'].copy()))", ...}
    def expected(inputs) -> dict[str, dict[str, np.ndarray]]  # exercise -> key -> value
    TOLERANCE = {"relu": {"rtol": 0, "atol": 0}}            # optional, default rtol 1e-5, atol 1e-7
    CUSTOM = {"time_train_step": judge}    # optional: judge(got, want) -> message or None

A snippet runs in a copy of the student's namespace plus `inputs` (dict of arrays, loaded
without pickle), `record` and `np`. It must not change the student's namespace.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

DEFAULT_TOLERANCE = {"rtol": 1e-5, "atol": 1e-7}
ERROR, TORCH = "__error__", "__torch__"


def probe_modules() -> dict[str, ModuleType]:
    """assignment -> its probe module, for every module in this package."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "ASSIGNMENT"):
            found[module.ASSIGNMENT] = module
    return found


def probe_for(assignment: str) -> ModuleType | None:
    """The probe module of `assignment`, or None when it has none."""
    return probe_modules().get(assignment)


# -- the kernel side: plain Python text, run in the student's kernel -------------------------------

HARNESS = r'''
def __autograder_verifier(in_path, out_path, numpy_only, prelude):
    """Runs one exercise's snippet at a time and saves every record as plain arrays."""
    import contextlib
    import sys

    import numpy as np
    namespace, inputs, saved = dict(globals()), dict(np.load(in_path, allow_pickle=False)), {}

    def plain(value):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy().copy()  # not a view the student's code can change
        elif torch is not None and isinstance(value, torch.device):
            value = str(value)
        if isinstance(value, (list, tuple)):
            value = [plain(v) for v in value]
        if not isinstance(value, (np.ndarray, np.generic, bool, int, float, str, list)):
            raise TypeError(f"got a {type(value).__name__}, not numbers, booleans or strings")
        array = np.array(value)  # a copy
        if array.dtype == object:
            raise TypeError("got a mix of values that is not one array of numbers or strings")
        return array

    class TorchSpy:
        def __enter__(self):
            self.calls = []
            if "torch" in sys.modules:
                from torch.overrides import TorchFunctionMode
                calls = self.calls

                class Mode(TorchFunctionMode):
                    def __torch_function__(self, func, types, args=(), kwargs=None):
                        calls.append(getattr(func, "__name__", str(func)))
                        return func(*args, **(kwargs or {}))

                self.mode = Mode()
                self.mode.__enter__()
            return self

        def __exit__(self, *exc):
            if hasattr(self, "mode"):
                self.mode.__exit__(*exc)
            return False

    def run(exercise, code):
        records = {}

        def record(key, value):
            records[f"{exercise}/{key}"] = plain(value)

        local = dict(namespace, inputs=inputs, record=record, np=np)
        spy = TorchSpy()
        try:
            with spy if numpy_only else contextlib.nullcontext():
                exec(compile(prelude + "\n" + code, f"<grader check: {exercise}>", "exec"), local)
        except BaseException as error:  # a timeout's KeyboardInterrupt, SystemExit too
            text = (f"{type(error).__name__}: {error}" if str(error).strip() else type(error).__name__)
            text = text.strip().splitlines()[0][:300]
            records[f"{exercise}/__error__"] = np.asarray(text)
        if numpy_only and spy.calls:
            records[f"{exercise}/__torch__"] = np.asarray(sorted(set(spy.calls))[:8])
        saved.update(records)
        np.savez(out_path, **saved)

    return run
'''


def kernel_cells(module: ModuleType, in_path: Path, out_path: Path) -> list[str]:
    """The code cells that run `module`'s snippets in a kernel, one cell per exercise."""
    setup = (HARNESS + f"\n__autograder_run = __autograder_verifier({json.dumps(str(in_path))}, "
             f"{json.dumps(str(out_path))}, {bool(getattr(module, 'NUMPY_ONLY', False))}, "
             f"{json.dumps(getattr(module, 'KERNEL_PRELUDE', ''))})\n"
             "del __autograder_verifier\n")
    cells = [setup]
    for exercise, code in module.KERNEL_CODE.items():
        cells.append(f"__autograder_run({json.dumps(exercise)}, {json.dumps(code)})")
    return cells


def run_in_namespace(module: ModuleType, namespace: dict, inputs: Mapping[str, np.ndarray],
                     folder: Path) -> dict[str, np.ndarray]:
    """Run the kernel cells in `namespace` without a kernel (tests); returns the loaded outputs."""
    folder = Path(folder)
    in_path, out_path = folder / "inputs.npz", folder / "outputs.npz"
    np.savez(in_path, **inputs)
    for cell in kernel_cells(module, in_path, out_path):
        exec(compile(cell, "<probe cell>", "exec"), namespace)
    return load_outputs(out_path)


def load_outputs(path: Path) -> dict[str, np.ndarray]:
    """The arrays a kernel saved; plain data only (a pickle in the file raises ValueError)."""
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


# -- the trusted side ---------------------------------------------------------------------------------

@dataclass
class Verdict:
    """Whether one exercise gave the expected results; `message` says what went wrong."""

    exercise: str
    ok: bool
    message: str = ""


def judge(module: ModuleType, inputs: Mapping[str, np.ndarray],
          outputs: Mapping[str, np.ndarray]) -> dict[str, Verdict]:
    """Compare what the kernel recorded with the reference on the same inputs."""
    want_all = module.expected(dict(inputs))
    custom = getattr(module, "CUSTOM", {})
    verdicts = {}
    for exercise, want in want_all.items():
        got = {key.split("/", 1)[1]: value for key, value in outputs.items()
               if key.split("/", 1)[0] == exercise}
        message = _problem(module, exercise, got, want, custom.get(exercise))
        verdicts[exercise] = Verdict(exercise, message is None, message or "")
    return verdicts


def _problem(module, exercise: str, got: dict, want: dict, custom) -> str | None:
    if ERROR in got:
        return f"{exercise} raised {got[ERROR]} on the grader's inputs"
    if TORCH in got:
        return (f"{exercise} called PyTorch ({', '.join(map(str, got[TORCH]))}); "
                "this assignment is NumPy only")
    if not got:
        return f"{exercise} gave no result: the check run stopped before it (time limit, crash, or code that interfered)"
    if custom is not None:
        return custom(got, want)
    tolerance = {**DEFAULT_TOLERANCE, **getattr(module, "TOLERANCE", {}).get(exercise, {})}
    for key, expected_value in want.items():
        if key not in got:
            return f"{exercise} gave no {key}"
        message = compare_arrays(got[key], np.asarray(expected_value), **tolerance)
        if message:
            return f"{exercise}: {key} {message} (on inputs your notebook never saw)"
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

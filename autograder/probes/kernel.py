"""The kernel side of a probe: runs in the student's kernel, and again here on the reference.

The trusted side sends the probe module's source text (autograder/course/grading_folder.py: the grading
folder is hidden from kernels) into the kernel, where `start` runs it as a module and returns a
function that runs one exercise at a time and saves what it records as plain arrays: numbers,
booleans, strings, never pickles or live objects. `collect` runs the same exercise function on the
reference, with the same `plain`, so the two sides cannot drift apart.

Only NumPy and the standard library at import: 01's kernels must not import PyTorch.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

ERROR, TORCH = "__error__", "__torch__"

# Who answers `ask`: None in a kernel (input(), which the trusted side's executor answers from the
# probe's feed); the feed itself when the kernel cells run in the grader's process (tests).
ASK: Callable[[str], str] | None = None


def ask(prompt: str) -> str:
    """The trusted side's answer to `prompt` (Probe.serve): data that reaches the kernel one piece at a time."""
    return ASK(prompt) if ASK is not None else input(prompt)


def plain(value: Any) -> np.ndarray:
    """What `record` keeps of `value`: a plain array of a copy (never a view the caller can change)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy().copy()
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


class Names:
    """The student's names, read as attributes (`answers.relu`), like a reference module's."""

    def __init__(self, names: Mapping[str, Any]):
        self._names = dict(names)

    def __getattr__(self, name: str) -> Any:
        try:
            return self._names[name]
        except KeyError:
            raise NameError(f"name {name!r} is not defined") from None


class TorchSpy:
    """Notes every PyTorch function called while active (01 is NumPy only)."""

    def __enter__(self):
        self.calls: list[str] = []
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


def load_module(source: str, name: str) -> types.ModuleType:
    """The probe module run from its source text (not imported: its file is hidden from kernels)."""
    module = types.ModuleType(name)
    module.__file__ = f"<grading probe {name}>"
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def start(source: str, name: str, in_path: str, out_path: str | int, numpy_only: bool,
          namespace: Mapping[str, Any]) -> Callable[[str], None]:
    """In the kernel: load the probe, then return run(exercise), which saves its records to
    out_path (a path, or a descriptor the kernel holds: the sandbox's outbox)."""
    probe = load_module(source, name).PROBE
    answers = Names(namespace)
    inputs = dict(np.load(in_path, allow_pickle=False))
    saved: dict[str, np.ndarray] = {}

    def run(exercise: str) -> None:
        records: dict[str, np.ndarray] = {}

        def record(key: str, value: Any) -> None:
            records[f"{exercise}/{key}"] = plain(value)

        spy = TorchSpy()
        try:
            with spy if numpy_only else contextlib.nullcontext():
                probe.exercises[exercise].run(answers, inputs, record)
        except BaseException as error:  # a timeout's KeyboardInterrupt, SystemExit too
            text = f"{type(error).__name__}: {error}" if str(error).strip() else type(error).__name__
            records[f"{exercise}/{ERROR}"] = np.asarray(text.strip().splitlines()[0][:300])
        if numpy_only and spy.calls:
            records[f"{exercise}/{TORCH}"] = np.asarray(sorted(set(spy.calls))[:8])
        saved.update(records)
        if isinstance(out_path, int):  # the outbox: rewritten whole each time
            with open(out_path, "wb", closefd=False) as f:
                f.seek(0)
                f.truncate()
                np.savez(f, **saved)
        else:
            np.savez(Path(out_path), **saved)

    return run


def collect(run: Callable, answers: Any, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What run(answers, inputs, record) records, as the kernel would save it (here: on the reference)."""
    out: dict[str, np.ndarray] = {}

    def record(key: str, value: Any) -> None:
        out[key] = plain(value)

    run(answers, dict(inputs), record)
    return out

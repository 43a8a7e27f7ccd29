"""The kernel's part of the trusted run: a small, fixed caller, the same for every assignment.

The student's kernel is not a witness (docs/design.md, "The grading model"): whatever runs there can be
rewritten by the student's code, this module included. So the kernel is asked for nothing but this: call
the student's functions on values the grading process chose, and hand back what they returned. Every
expected value, property and verdict is computed in the grading process (autograder/probes/session.py
drives the calls from there; the probes in grading/*/probe.py judge what comes back).

The conversation goes through `input()`, which the grader's executor answers (execute.GradingExecute's
feed): the kernel's prompt carries its results, the answer carries the next requests.

    kernel -> grader   PREFIX + {"ready": exercise}             one epilogue cell per exercise: `serve`
    grader -> kernel   {"seq": n, "ops": [[op, out, ...], ...]}  a batch of operations on handles
    kernel -> grader   PREFIX + {"seq": n, "results": [...]}    what each "fetch" of the batch found
    grader -> kernel   "done"                                   the exercise's calls are over

The operations (`out` names the handle the result is kept under; handles are the grader's numbers):

    answers OUT           the student's names (`answers.relu` raises NameError when undefined)
    given OUT             the assignment's stand-ins (grading/<assignment>/given.py, sent as text)
    import OUT NAME       a module by name (torch, numpy, builtins, operator, helpers.data, ...)
    value OUT V           a value the grader sends (arrays, numbers, strings, lists, dicts)
    attr OUT H NAME       getattr;  item OUT H KEY: H[KEY]
    call OUT F ARGS KW    F(*ARGS, **KW), ARGS and KW values or handles ({"ref": n})
    setattr - H NAME V    setitem - H KEY V
    enter OUT H           H.__enter__();  exit - H: H.__exit__(None, None, None), run even after a failure
    fetch - H             hand back the value of H now, as plain data (below)
    drop - [H, ...]       forget handles

A failed operation keeps its error under its handle; operations on it fail alike; a fetch of it hands
back the error's first line. A KeyboardInterrupt (the cell's time limit) or SystemExit ends the batch
and the exercise at once.

What goes back is plain data only (`plain`): None, booleans, numbers, strings, lists, tuples, dicts,
NumPy arrays and tensors as .npy bytes (a tensor's values, detached, on the CPU), devices and dtypes as
strings; any other object as its type's name. The grader decodes it within fixed bounds
(session.decode_reply).

Standard library and NumPy only at import: 01's kernels never import PyTorch.
"""

from __future__ import annotations

import base64
import importlib
import io
import json
import math
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

PREFIX = "agk1 "  # a prompt of the trusted conversation; any other prompt is a request for served data
DONE = "done"
_TEXT = 300  # characters of an error message handed back

# Who answers `ask` and the conversation: None in a kernel (input(), which the grader's executor
# answers); a function when the caller runs in the grader's own process (tests, the reference).
ASK: Callable[[str], str] | None = None


def ask(prompt: str) -> str:
    """The grader's answer to `prompt`: served data (Probe.serve) that reaches the kernel piece by piece."""
    return ASK(prompt) if ASK is not None else input(prompt)


class Names:
    """The student's names, read as attributes (`answers.relu`), like a reference module's."""

    def __init__(self, names: Mapping[str, Any]):
        self._names = names

    def __getattr__(self, name: str) -> Any:
        try:
            return self._names[name]
        except KeyError:
            raise NameError(f"name {name!r} is not defined") from None


class Failed:
    """What a handle holds when the operation that made it raised."""

    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text


class NumPyOnly(RuntimeError):
    """PyTorch called while a NumPy-only assignment's code runs."""


NUMPY_ONLY = NumPyOnly.__name__ + ": "


def error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if str(error).strip() else type(error).__name__
    return text.strip().splitlines()[0][:_TEXT] if text.strip() else type(error).__name__


# -- plain data, both ways --------------------------------------------------------------------------------

def _npy(array: np.ndarray) -> str:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def plain(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-ready plain data (see the module's docstring)."""
    if depth > 32:
        return {"object": "too deep"}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2 ** 53 else {"float": float(value)}
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": repr(value)}
    if isinstance(value, np.generic):
        return plain(value.item(), depth + 1) if value.dtype.kind in "biufUSb" else {"object": type(value).__name__}
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biufUS":
            return {"object": f"ndarray of {value.dtype}"}
        return {"nd": _npy(value)}
    torch = sys.modules.get("torch")
    if torch is not None:
        if isinstance(value, torch.Tensor):
            t = value.detach()
            if t.device.type == "meta" or t.is_sparse or not t.is_floating_point() and t.dtype not in (
                    torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
                return {"object": f"Tensor of {t.dtype} on {t.device.type}"}
            t = t.cpu()
            if t.dtype == torch.bfloat16:
                t = t.float()
            return {"nd": _npy(t.resolve_conj().resolve_neg().numpy().copy())}
        if isinstance(value, (torch.device, torch.dtype, torch.Size)):
            return str(value) if not isinstance(value, torch.Size) else [int(v) for v in value]
    if isinstance(value, (list, tuple)):
        items = [plain(v, depth + 1) for v in value]
        return items if isinstance(value, list) else {"tuple": items}
    if isinstance(value, dict):
        return {"dict": [[plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()]}
    return {"object": type(value).__name__}


def _value(data: Any, handles: dict[int, Any]) -> Any:
    """A value the grader sent (its encoding is plain's, plus {"ref": n} for a handle)."""
    if isinstance(data, list):
        return [_value(v, handles) for v in data]
    if not isinstance(data, dict):
        return data
    if "ref" in data:
        value = handles[data["ref"]]
        if isinstance(value, Failed):
            raise _Propagated(value.text)
        return value
    if "nd" in data:
        return np.load(io.BytesIO(base64.b64decode(data["nd"])), allow_pickle=False)
    if "tuple" in data:
        return tuple(_value(v, handles) for v in data["tuple"])
    if "dict" in data:
        return {_value(k, handles): _value(v, handles) for k, v in data["dict"]}
    if "float" in data:
        return float(data["float"])
    if "slice" in data:
        return slice(*(_value(v, handles) for v in data["slice"]))
    raise ValueError(f"not a value: {sorted(data)}")


class _Propagated(Exception):
    """An operation used a handle whose own operation failed: it fails with that error."""


# -- the interpreter ---------------------------------------------------------------------------------------

class Caller:
    """The handles of one exercise's calls, and the operations on them."""

    def __init__(self, namespace: Mapping[str, Any], given: types.ModuleType | None, numpy_only: bool = False):
        self.namespace, self.given, self.numpy_only = namespace, given, numpy_only
        self.handles: dict[int, Any] = {}

    def run(self, ops: list) -> tuple[list, str | None]:
        """Run a batch; returns (the fetched values in order, why the batch stopped early or None)."""
        results: list = []
        for op in ops:
            kind, out, *args = op
            if kind == "fetch":
                value = self.handles.get(args[0], Failed("the grader asked for a value it never made"))
                results.append({"error": value.text} if isinstance(value, Failed) else self._plain(value))
                continue
            if kind == "exit":
                manager = self.handles.get(args[0])
                if manager is not None and not isinstance(manager, Failed):
                    try:
                        manager.__exit__(None, None, None)
                    except Exception:  # noqa: BLE001 - a stand-in that fails to clean up changes no result
                        pass
                continue
            if kind == "drop":
                for handle in args[0]:
                    self.handles.pop(handle, None)
                continue
            try:
                value = self._op(kind, args)
            except _Propagated as error:
                value = Failed(str(error))
            except (KeyboardInterrupt, SystemExit) as error:  # the time limit, or an exit: stop here
                self.handles[out] = Failed(error_text(error))
                results.append({"error": error_text(error)})
                return results, error_text(error)
            except BaseException as error:  # noqa: BLE001 - the student's code raised: that is the result
                value = Failed(error_text(error))
            if out is not None:
                self.handles[out] = value
        return results, None

    def _plain(self, value: Any) -> Any:
        try:
            return plain(value)
        except Exception as error:  # noqa: BLE001 - an object whose conversion raises
            return {"error": error_text(error)}

    def _op(self, kind: str, args: list) -> Any:
        if kind == "answers":
            return Names(self.namespace)
        if kind == "given":
            if self.given is None:
                raise RuntimeError("this assignment has no stand-ins")
            return self.given
        if kind == "import":
            return importlib.import_module(args[0])
        if kind == "value":
            return _value(args[0], self.handles)
        target = _value({"ref": args[0]}, self.handles)
        if kind == "attr":
            return getattr(target, args[1])
        if kind == "item":
            return target[_value(args[1], self.handles)]
        if kind == "call":
            positional = [_value(v, self.handles) for v in args[1]]
            keywords = {k: _value(v, self.handles) for k, v in args[2].items()}
            if self.numpy_only:
                return self._numpy_only(target, positional, keywords)
            return target(*positional, **keywords)
        if kind == "setattr":
            setattr(target, args[1], _value(args[2], self.handles))
            return None
        if kind == "setitem":
            target[_value(args[1], self.handles)] = _value(args[2], self.handles)
            return None
        if kind == "enter":
            return target.__enter__()
        raise ValueError(f"unknown operation {kind!r}")

    def _numpy_only(self, function, positional, keywords):
        """Call with PyTorch refused: 01 is NumPy by hand. Not imported yet, it cannot be imported during
        the call; imported, every function of it raises (the kernel's word, which the scan backs:
        docs/design.md, "What the kernel still reports")."""
        torch = sys.modules.get("torch")
        if torch is None:
            sys.modules["torch"] = None  # `import torch` raises ImportError while the call runs
            try:
                return function(*positional, **keywords)
            except ImportError as error:
                raise NumPyOnly("called PyTorch (import torch); this assignment is NumPy only") from error
            finally:
                if sys.modules.get("torch", 0) is None:
                    del sys.modules["torch"]
        from torch.overrides import TorchFunctionMode

        class RefuseTorch(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                raise NumPyOnly(f"called PyTorch ({getattr(func, '__name__', func)}); this assignment is NumPy only")

        with RefuseTorch():
            return function(*positional, **keywords)


def load_given(source: str | None, name: str) -> types.ModuleType | None:
    """The assignment's stand-ins, run from their source text (the grading folder is hidden from kernels)."""
    if not source:
        return None
    module = types.ModuleType(name)
    module.__file__ = f"<grading stand-ins {name}>"
    sys.modules[name] = module  # classes defined there pickle and repr by this name
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def start(namespace: Mapping[str, Any], given_source: str | None, name: str,
          numpy_only: bool = False) -> Callable[[str], None]:
    """In the kernel's first epilogue cell: load the stand-ins, return serve(exercise) for the next cells."""
    given = load_given(given_source, name)

    def serve(exercise: str) -> None:
        converse(Caller(namespace, given, numpy_only), exercise, ask)

    return serve


def converse(caller: Caller, exercise: str, channel: Callable[[str], str]) -> None:
    """Say ready for `exercise`, then run each batch the grader sends until it says done."""
    message: dict = {"ready": exercise}
    while True:
        answer = channel(PREFIX + json.dumps(message, separators=(",", ":")))
        if answer == DONE:
            return
        try:
            request = json.loads(answer)
            ops, seq = request["ops"], request["seq"]
        except (ValueError, KeyError, TypeError):
            return  # not the grader's: the conversation is over
        results, stopped = caller.run(ops)
        message = {"seq": seq, "results": results}
        if stopped is not None:
            message["stopped"] = stopped
            channel(PREFIX + json.dumps(message, separators=(",", ":")))
            return



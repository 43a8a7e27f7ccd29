"""Stand-ins more than one assignment hands the student's functions in the kernel (grading/*/given.py use them).

Like every stand-in, they build inputs and hand back what the student's objects give; they compute no
property, expected value or verdict (autograder/probes/__init__.py). Standard library only at import: the
watches (03's and 04's) import PyTorch when first used.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import Any


class StandIn:
    """`with StandIn(function, {name: value, ...}):` the globals `function` reads under those names are the
    values (the grader's stand-ins for the student's own helpers), then as they were."""

    def __init__(self, function: Callable, replacements: Mapping[str, Any]):
        self.names, self.replacements = function.__globals__, dict(replacements)

    def __enter__(self) -> StandIn:
        self.saved = {name: (name in self.names, self.names.get(name)) for name in self.replacements}
        self.names.update(self.replacements)
        return self

    def __exit__(self, *exc) -> bool:
        for name, (had, value) in self.saved.items():
            if had:
                self.names[name] = value
            else:
                self.names.pop(name, None)
        return False


def floats(values: Iterable) -> list[float]:
    """Each value of a sequence the student returned, as a float (a 0-d tensor or array too)."""
    return [float(v.detach()) if hasattr(v, "detach") else float(v) for v in values]


def type_names(values: Iterable) -> list[str]:
    """The type's name of each value of a sequence the student returned (floats, or tensors?)."""
    return [type(v).__name__ for v in values]


def listed(values: Iterable) -> list:
    """What the student returned, as a list (a tuple or a generator too)."""
    return list(values)


# -- watches: what a call asks of PyTorch (03's and 04's derivations) ----------------------------------------------
#
# The kernel's word (docs/design.md, "What the kernel still reports"): which PyTorch functions and ATen operators a
# call ran, the FLOPs of its matrix products, and whether it asked autograd to save a tensor for a backward pass of
# its own. PyTorch is imported inside these functions only: 01's kernels import this module and never PyTorch.

_TEXT = 300  # characters of an error's first line handed back


class AskedAutograd(RuntimeError):
    """A tensor saved for a backward pass while a call ran under `watched`: it built a graph to ask autograd."""


def _refuse(tensor):
    raise AskedAutograd("autograd was asked to save a tensor for a backward pass inside the call")


def _unpack(tensor):
    return tensor


@functools.cache
def _modes() -> tuple[type, type]:
    """(Calls, Aten): the two watches' classes, made on first use (they subclass PyTorch's mode classes)."""
    import torch
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    def graph_input(args, kwargs) -> bool:
        """Grad mode is on and a tensor among the arguments requires a gradient: autograd records the call."""
        return torch.is_grad_enabled() and any(
            isinstance(t, torch.Tensor) and t.requires_grad
            for value in (*args, *kwargs.values()) for t in (value if isinstance(value, (list, tuple)) else (value,)))

    class Calls(TorchFunctionMode):
        """The names of the PyTorch functions and tensor methods called while it is in force, each once; those
        called with grad mode on, on a tensor that requires a gradient (what a dispatch mode misses: operators
        run with the Python dispatch keys excluded)."""

        def __init__(self):
            super().__init__()
            self.seen, self.graph = set(), set()

        def __torch_function__(self, func, types, args=(), kwargs=None):
            __tracebackhide__ = True  # a student's error shows their line, not this frame
            kwargs = kwargs or {}
            name = getattr(func, "__name__", type(func).__name__)
            self.seen.add(name)
            if graph_input(args, kwargs):
                self.graph.add(name)
            return func(*args, **kwargs)

    class Aten(TorchDispatchMode):
        """The ATen operators run under it, each once (what a function mode misses: calls made under
        torch._C.DisableTorchFunction); those run with grad mode on, on a tensor that requires a gradient (what
        autograd records in a graph: whoever runs them builds one, whatever saved-tensor hooks are in force); and
        the FLOPs of its matrix products (mm, addmm, bmm... as einsum, @, F.linear reach them) by
        torch.utils.flop_counter's formulas: what FlopCounterMode counts."""

        @classmethod
        def _should_skip_dynamo(cls) -> bool:  # else the first call imports torch._dynamo: 1.4 s of CPU per kernel
            return False

        def __init__(self):
            super().__init__()
            self.seen, self.graph = set(), set()
            self.flops = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            __tracebackhide__ = True
            kwargs = kwargs or {}
            name = func._overloadpacket.__name__
            if graph_input(args, kwargs):
                self.graph.add(name)
            out = func(*args, **kwargs)
            self.seen.add(name)
            count = flop_registry.get(func._overloadpacket)
            if count is not None:
                self.flops += count(*args, **kwargs, out_val=out)
            return out

    return Calls, Aten


class Watch:
    """While in force: the PyTorch functions called (`names`), the ATen operators run (`aten`), the functions and
    operators run to build a graph (`graph`: grad mode on, an input that requires a gradient), the FLOPs of the
    matrix products (`flops`); read them after it ends."""

    def __init__(self):
        calls, aten = _modes()
        self.calls, self.ops = calls(), aten()
        self.names, self.aten, self.graph, self.flops = [], [], [], 0

    def __enter__(self) -> Watch:
        self.ops.__enter__()
        self.calls.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        self.calls.__exit__(*exc)
        self.ops.__exit__(*exc)
        self.names, self.aten, self.flops = sorted(self.calls.seen), sorted(self.ops.seen), self.ops.flops
        self.graph = sorted(self.calls.graph | self.ops.graph)
        return False


def first_line(error: BaseException) -> str:
    """`Type: message`, its first line, at most _TEXT characters: what a call raised, handed back."""
    text = f"{type(error).__name__}: {error}".strip().splitlines()
    return (text[0] if text else type(error).__name__)[:_TEXT]


def watched(function: Callable, *args, **kwargs) -> dict:
    """function(*args, **kwargs) as the engine runs a backward (grad mode off), with autograd refusing to save
    a tensor for a backward pass (AskedAutograd), under a Watch: what it returned or the first line of what it
    raised, the PyTorch functions and ATen operators it ran, the operators it ran to build a graph (with grad
    mode switched back on: whatever saved-tensor hooks of its own it pushed), the FLOPs of its matrix products."""
    import torch

    watch = Watch()
    outcome = {"returned": None, "raised": None}
    with torch.no_grad(), torch.autograd.graph.saved_tensors_hooks(_refuse, _unpack), watch:
        try:
            outcome["returned"] = function(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - what it raised is handed back, as what it returned
            outcome["raised"] = first_line(error)
    outcome.update(calls=watch.names, aten=watch.aten, graph=watch.graph, flops=watch.flops)
    return outcome


def outcome(function: Callable, *args, **kwargs) -> dict:
    """function(*args, **kwargs): what it returned, or the first line of what it raised."""
    try:
        return {"returned": function(*args, **kwargs), "raised": None}
    except Exception as error:  # noqa: BLE001 - handed back, judged by the grader
        return {"returned": None, "raised": first_line(error)}

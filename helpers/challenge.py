"""06's challenge model as data: its forward pass traced by torch.fx, rebuilt and run by whoever judges it.

The grader never runs a student's model to score it: a model that runs in the student's kernel can report
anything about itself (its size, its predictions). So the model is handed over as a program, its forward
pass traced by `torch.fx` (`Traced`: which layers and functions it calls, in which order, on what), and the numbers it
keeps or reads (parameters, buffers, and any tensor its forward reads besides its input: a NumPy array
turned into a tensor, a plain list of tensors, all count). `Program` rebuilds it from
that data alone, from allow-lists of PyTorch's layers, functions and tensor methods (no name is looked up,
no code run but PyTorch's own), and evaluates it. The notebook's visible test does the same on the
student's model, so what it checks is what the grader will see.

Shapes: the model maps x (B, in_features) float32 to logits (B, num_classes).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

MAX_NODES = 2_000  # steps of a traced forward pass
MAX_VALUES = 8_000_000  # elements of any value while the program runs on one batch
BATCH = 500  # points the program is run on at a time

# Layers, each with the settings its forward reads in eval mode (its weights come with the state).
LAYERS: dict[str, tuple[type, tuple[str, ...]]] = {
    "Linear": (nn.Linear, ("in_features", "out_features")),
    "Identity": (nn.Identity, ()),
    "ReLU": (nn.ReLU, ()), "ReLU6": (nn.ReLU6, ()), "LeakyReLU": (nn.LeakyReLU, ("negative_slope",)),
    "PReLU": (nn.PReLU, ("num_parameters",)), "ELU": (nn.ELU, ("alpha",)), "CELU": (nn.CELU, ("alpha",)),
    "SELU": (nn.SELU, ()), "GELU": (nn.GELU, ("approximate",)), "SiLU": (nn.SiLU, ()), "Mish": (nn.Mish, ()),
    "Tanh": (nn.Tanh, ()), "Sigmoid": (nn.Sigmoid, ()), "Softplus": (nn.Softplus, ("beta", "threshold")),
    "Softsign": (nn.Softsign, ()), "Hardtanh": (nn.Hardtanh, ("min_val", "max_val")),
    "Hardswish": (nn.Hardswish, ()), "Hardsigmoid": (nn.Hardsigmoid, ()), "LogSigmoid": (nn.LogSigmoid, ()),
    "Tanhshrink": (nn.Tanhshrink, ()),
    "Dropout": (nn.Dropout, ("p",)), "AlphaDropout": (nn.AlphaDropout, ("p",)),
    "BatchNorm1d": (nn.BatchNorm1d, ("num_features", "eps", "affine", "track_running_stats")),
    "LayerNorm": (nn.LayerNorm, ("normalized_shape", "eps", "elementwise_affine")),
    "Softmax": (nn.Softmax, ("dim",)), "LogSoftmax": (nn.LogSoftmax, ("dim",)),
    "Flatten": (nn.Flatten, ("start_dim", "end_dim")),
}

_TORCH = ("relu", "sigmoid", "tanh", "exp", "log", "log1p", "expm1", "sin", "cos", "atan2", "sqrt", "rsqrt", "abs",
          "square", "pow", "clamp", "clip", "maximum", "minimum", "cat", "concat", "stack", "matmul", "mm", "addmm",
          "softmax", "log_softmax", "flatten", "sum", "mean", "norm", "erf", "hypot", "neg", "mul", "add", "sub", "div",
          "reshape", "unsqueeze", "squeeze", "transpose", "sign", "floor", "ceil", "round", "logsumexp", "amax",
          "amin", "where", "cumsum", "linalg.vector_norm")
_FUNCTIONAL = ("relu", "relu6", "leaky_relu", "elu", "celu", "selu", "gelu", "silu", "mish", "softplus", "softsign",
               "tanh", "sigmoid", "hardtanh", "hardswish", "hardsigmoid", "logsigmoid", "linear", "layer_norm",
               "dropout", "softmax", "log_softmax", "normalize", "tanhshrink")
_OPERATOR = ("add", "sub", "mul", "truediv", "floordiv", "matmul", "neg", "pow", "getitem", "mod")


def _functions() -> dict[str, Any]:
    found = {}
    for name in _TORCH:
        target = torch
        for part in name.split("."):
            target = getattr(target, part, None)
        if target is not None:
            found[f"torch.{name}"] = target
    found.update({f"torch.nn.functional.{name}": getattr(F, name) for name in _FUNCTIONAL if hasattr(F, name)})
    found.update({f"_operator.{name}": getattr(operator, name) for name in _OPERATOR})
    return found


FUNCTIONS = _functions()
METHODS = frozenset(("relu", "sigmoid", "tanh", "exp", "log", "sin", "cos", "sqrt", "abs", "square", "pow", "sum",
                     "mean", "norm", "view", "reshape", "flatten", "unsqueeze", "squeeze", "transpose", "permute",
                     "contiguous", "size", "float", "clamp", "clip", "softmax", "log_softmax", "mul", "add", "sub",
                     "div", "matmul", "atan2", "t", "neg", "__getitem__", "unbind", "chunk", "split", "exp_",
                     "expand", "expand_as", "amax", "logsumexp", "sign"))
_NAMES = {id(function): name for name, function in FUNCTIONS.items()}


class ChallengeError(ValueError):
    """A model the challenge's rules cannot take, in words for the student."""


# -- in the student's kernel: the model as data --------------------------------------------------------------

class Traced:
    """One trace of a model: `description`, its forward pass as plain data (the program `Program` rebuilds),
    {"nodes": [[op, target, args, kwargs], ...], "layers": {name: [type, settings]}, "tensors": {name: shape}}
    (a node's arguments refer to earlier nodes as {"node": i}); and `tensors`, every tensor that forward pass
    reads besides its input (parameters, buffers, constants), by name, detached on the CPU."""

    def __init__(self, model: nn.Module):
        self.description, traced = _describe(model)
        self.tensors = {name: t.detach().cpu() for name, t in _tensors(traced).items()}


def _describe(model: nn.Module):
    import torch.fx

    if not isinstance(model, nn.Module):
        raise ChallengeError(f"the model is a {type(model).__name__}, not an nn.Module")
    try:
        traced = torch.fx.symbolic_trace(model)
    except Exception as error:  # noqa: BLE001 - any way tracing fails is the student's to read
        raise ChallengeError(f"torch.fx could not trace the model's forward pass ({type(error).__name__}: "
                             f"{str(error).splitlines()[0][:200]}): write it without Python `if`/`for` on the "
                             "values of tensors") from None
    index = {node: i for i, node in enumerate(traced.graph.nodes)}
    nodes, layers = [], {}
    for node in traced.graph.nodes:
        target = node.target
        if node.op == "call_function":
            target = f"{getattr(target, '__module__', '') or ''}.{getattr(target, '__name__', repr(target))}"
            target = _NAMES.get(id(node.target), target)
        elif node.op == "call_module":
            layer = traced.get_submodule(node.target)
            kind = type(layer).__name__
            settings = {name: _setting(getattr(layer, name, None)) for name in LAYERS.get(kind, (None, ()))[1]}
            if kind in ("Linear", "LayerNorm"):
                settings["bias"] = getattr(layer, "bias", None) is not None
            layers[node.target] = [kind, settings]
        nodes.append([node.op, str(target), _data(node.args, index), _data(dict(node.kwargs), index)])
    tensors = {name: list(t.shape) for name, t in _tensors(traced).items()}
    return {"nodes": nodes, "layers": layers, "tensors": tensors}, traced


def _tensors(traced) -> dict[str, torch.Tensor]:
    found = dict(traced.state_dict())
    for node in traced.graph.nodes:
        if node.op == "get_attr" and node.target not in found:
            value = traced
            for part in node.target.split("."):
                value = getattr(value, part)
            if isinstance(value, torch.Tensor):
                found[node.target] = value
    return found


def _setting(value: Any) -> Any:
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, (tuple, list, torch.Size)):
        return [_setting(v) for v in value]
    return repr(value)


def _data(value: Any, index: dict) -> Any:
    """A node's arguments as plain data: earlier nodes by number, slices and tuples tagged."""
    import torch.fx

    if isinstance(value, torch.fx.Node):
        return {"node": index[value]}
    if isinstance(value, (list, tuple)):
        items = [_data(v, index) for v in value]
        return items if isinstance(value, list) else {"tuple": items}
    if isinstance(value, dict):
        return {"kwargs": [[str(k), _data(v, index)] for k, v in value.items()]}
    if isinstance(value, slice):
        return {"slice": [_data(value.start, index), _data(value.stop, index), _data(value.step, index)]}
    if value is Ellipsis:
        return {"ellipsis": True}
    if isinstance(value, torch.dtype):
        return {"dtype": str(value).removeprefix("torch.")}
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return {"unknown": type(value).__name__}


# -- wherever it is judged: the program rebuilt from data, checked against the allow-lists -------------------

class Program:
    """A traced forward pass rebuilt from a Traced's description and tensors; ChallengeError, in words
    for the student, when it uses anything outside the allow-lists."""

    def __init__(self, description: Mapping, tensors: Mapping[str, Any]):
        nodes = description.get("nodes") if isinstance(description, Mapping) else None
        if not isinstance(nodes, list) or not 0 < len(nodes) <= MAX_NODES:
            raise ChallengeError(f"the model's forward pass is not a program of 1 to {MAX_NODES} steps")
        self.tensors = {str(name): torch.as_tensor(value).detach().clone() for name, value in tensors.items()}
        self.layers: dict[str, nn.Module] = {}
        for name, spec in dict(description.get("layers") or {}).items():
            self.layers[str(name)] = _layer(str(name), spec, self.tensors)
        self.steps = [self._step(i, node) for i, node in enumerate(nodes)]
        if sum(1 for step in self.steps if step[0] == "placeholder") != 1 or self.steps[-1][0] != "output":
            raise ChallengeError("the model's forward pass must take one input, x, and return the logits")

    def size(self) -> int:
        """Numbers the program keeps or reads besides its input: every tensor it was given."""
        return sum(int(t.numel()) for t in self.tensors.values())

    def _step(self, i: int, node: Any) -> tuple:
        if not isinstance(node, list) or len(node) != 4:
            raise ChallengeError(f"step {i} of the forward pass is not a step")
        op, target, args, kwargs = node
        if op == "placeholder" or op == "output":
            return (op, None, args, {})
        if op == "get_attr":
            if target not in self.tensors:
                raise ChallengeError(f"the forward pass reads {target!r}, which the model does not hand over")
            return (op, target, [], {})
        if op == "call_function":
            if target not in FUNCTIONS:
                raise ChallengeError(f"the forward pass calls {target}, which the challenge does not allow "
                                     "(helpers.challenge.FUNCTIONS lists what it does)")
            return (op, FUNCTIONS[target], args, kwargs)
        if op == "call_method":
            if target not in METHODS:
                raise ChallengeError(f"the forward pass calls the tensor method .{target}(), which the challenge "
                                     "does not allow (helpers.challenge.METHODS lists what it does)")
            return (op, target, args, kwargs)
        if op == "call_module":
            if target not in self.layers:
                raise ChallengeError(f"the forward pass calls a layer {target!r} it does not describe")
            return (op, self.layers[target], args, kwargs)
        raise ChallengeError(f"step {i} of the forward pass is {op!r}")

    @torch.no_grad()
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (B, num_classes) for x (B, in_features), BATCH points at a time."""
        return torch.cat([self._run(part) for part in x.split(BATCH)]) if len(x) else self._run(x)

    def _run(self, x: torch.Tensor) -> torch.Tensor:
        values: list[Any] = []
        for op, target, args, kwargs in self.steps:
            if op == "placeholder":
                value = x
            elif op == "output":
                value = _resolve(args, values)
                value = value[0] if isinstance(value, (list, tuple)) and len(value) == 1 else value
                if not isinstance(value, torch.Tensor):
                    raise ChallengeError("the forward pass returns something other than one tensor of logits")
                return value
            elif op == "get_attr":
                value = self.tensors[target]
            else:
                positional, keywords = _resolve(args, values), _resolve(kwargs, values)
                if not isinstance(positional, (list, tuple)) or not isinstance(keywords, dict):
                    raise ChallengeError("a step of the forward pass has arguments that are not arguments")
                try:
                    if op == "call_method":
                        owner, *rest = positional
                        if not isinstance(owner, torch.Tensor):
                            raise ChallengeError(f".{target}() is called on something other than a tensor")
                        value = getattr(owner, target)(*rest, **keywords)
                    else:
                        value = target(*positional, **keywords)
                except ChallengeError:
                    raise
                except Exception as error:  # noqa: BLE001 - the program's own error, in its words
                    raise ChallengeError(f"the rebuilt forward pass raised {type(error).__name__}: "
                                         f"{str(error).splitlines()[0][:200]}") from None
            for t in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(t, torch.Tensor) and t.numel() > MAX_VALUES:
                    raise ChallengeError(f"a step of the forward pass makes {t.numel():,} numbers for {len(x)} points")
            values.append(value)
        raise ChallengeError("the forward pass has no output")


def _layer(name: str, spec: Any, tensors: dict[str, torch.Tensor]) -> nn.Module:
    if not isinstance(spec, list) or len(spec) != 2 or spec[0] not in LAYERS or not isinstance(spec[1], Mapping):
        kind = spec[0] if isinstance(spec, list) and spec else spec
        raise ChallengeError(f"layer {name!r} is a {kind}, which the challenge does not allow "
                             "(helpers.challenge.LAYERS lists what it does)")
    kind, settings = spec
    cls, names = LAYERS[kind]
    kwargs = {key: _checked_setting(settings.get(key)) for key in names if settings.get(key) is not None}
    if kind == "Linear" or kind == "LayerNorm" and settings.get("elementwise_affine"):
        kwargs["bias"] = bool(settings.get("bias"))
    _small(kind, kwargs)
    try:
        layer = cls(**kwargs)
    except Exception as error:  # noqa: BLE001
        raise ChallengeError(f"layer {name!r} ({kind}) cannot be rebuilt: {str(error)[:200]}") from None
    state = {key[len(name) + 1:]: value for key, value in tensors.items() if key.startswith(name + ".")}
    try:
        layer.load_state_dict(state, strict=True)
    except Exception as error:  # noqa: BLE001
        raise ChallengeError(f"layer {name!r} ({kind}): its weights do not fit it: {str(error).splitlines()[0][:200]}") \
            from None
    return layer.eval()


def _checked_setting(value: Any) -> Any:
    if isinstance(value, bool) or isinstance(value, (int, str)) and (not isinstance(value, str) or len(value) <= 20):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    if isinstance(value, list) and len(value) <= 4 and all(isinstance(v, int) for v in value):
        return tuple(value)
    raise ChallengeError(f"a layer's setting {value!r} is not a plain setting")


def _small(kind: str, kwargs: dict) -> None:
    """No layer bigger than any budget the challenge has, before it is made."""
    sizes = [v for v in kwargs.values() if isinstance(v, int) and not isinstance(v, bool)]
    sizes += [n for v in kwargs.values() if isinstance(v, tuple) for n in v]
    if any(n > 100_000 or n < -8 for n in sizes) or kind == "Linear" and \
            kwargs.get("in_features", 0) * kwargs.get("out_features", 0) > 1_000_000:
        raise ChallengeError(f"a {kind} layer far larger than the challenge's budget")


def _resolve(data: Any, values: list) -> Any:
    if isinstance(data, list):
        return [_resolve(v, values) for v in data]
    if not isinstance(data, Mapping):
        return data
    if "node" in data:
        i = data["node"]
        if not isinstance(i, int) or not 0 <= i < len(values):
            raise ChallengeError("a step of the forward pass uses a value made after it")
        return values[i]
    if "tuple" in data:
        return tuple(_resolve(v, values) for v in data["tuple"])
    if "kwargs" in data:
        return {str(k): _resolve(v, values) for k, v in data["kwargs"]}
    if "slice" in data:
        return slice(*(_resolve(v, values) for v in data["slice"]))
    if "ellipsis" in data:
        return Ellipsis
    if "dtype" in data and data["dtype"] in ("float32", "float64", "int64", "bool"):
        return getattr(torch, data["dtype"])
    raise ChallengeError(f"a step of the forward pass has an argument of a kind the challenge does not allow "
                         f"({sorted(data)})")


def as_graded(model: nn.Module) -> Program:
    """The model as the grader sees it: its traced forward pass, rebuilt from data alone (ChallengeError, in
    words for the student, where the rules cannot take it)."""
    traced = Traced(model)
    return Program(traced.description, traced.tensors)


def model_size(model: nn.Module) -> int:
    """Numbers the model keeps or reads besides its input, as the grader counts them (the traced program's)."""
    return as_graded(model).size()

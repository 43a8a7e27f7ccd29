"""Probes of 03_custom_functions: values, gradients for a secret upstream gradient, what is saved, the nodes."""

from __future__ import annotations

import numpy as np

from autograder.probes import DEFAULT_TOLERANCE, compare_arrays

ASSIGNMENT = "03_custom_functions"

# The backward nodes reachable from t.grad_fn, breadth-first: the same walk in the kernel and here.
NODES = r'''
def _probe_nodes(t):
    """type(node).__name__ of every node behind t, breadth-first, each once."""
    names, queue, seen = [], [t.grad_fn] if t.grad_fn is not None else [], set()
    while queue:
        node = queue.pop(0)
        if node in seen:
            continue
        seen.add(node)
        names.append(type(node).__name__)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return names
'''
KERNEL_PRELUDE = NODES


def _away_from_zero(x: np.ndarray, margin: float) -> np.ndarray:
    """x pushed at least `margin` away from 0, where ReLU's derivative is not defined."""
    return x + margin * np.where(x >= 0, 1.0, -1.0)


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Inputs of random shapes in float32 and float64, upstream gradients that are not all ones."""
    inputs = {}
    for name in ("Sigmoid", "ReLU", "sigmoid", "relu"):
        shape3 = tuple(int(v) for v in rng.integers(2, 6, size=3))
        shape2 = tuple(int(v) for v in rng.integers(2, 7, size=2))
        x32 = 3 * rng.standard_normal(shape3)
        x64 = 3 * rng.standard_normal(shape2)
        if name.lower() == "relu":
            x32, x64 = _away_from_zero(x32, 0.05), _away_from_zero(x64, 0.05)
        inputs.update({f"{name}.x32": x32.astype(np.float32), f"{name}.x64": x64,
                       f"{name}.grad32": rng.standard_normal(shape3).astype(np.float32),
                       f"{name}.grad64": rng.standard_normal(shape2)})
    inputs["scale"] = np.asarray(rng.uniform(0.5, 2.0))  # a multiplication before the function
    return inputs


def _function_snippet(name: str) -> str:
    """Values, what forward saved, and the gradient for the secret grad_y, through Name.apply."""
    return f"""
import torch
for tag in ('32', '64'):
    x = torch.tensor(inputs['{name}.x' + tag], requires_grad=True)
    y = {name}.apply(x)
    record('out' + tag, y)
    record('dtype' + tag, str(y.dtype))
    saved = y.grad_fn.saved_tensors
    for i, t in enumerate(saved):
        record(f'saved{{tag}}.{{i}}', t)
    (grad,) = torch.autograd.grad(y, x, torch.tensor(inputs['{name}.grad' + tag]))
    record('grad' + tag, grad)
"""


def _wrapper_snippet(name: str) -> str:
    """Values, the nodes it adds to the graph (on a leaf and after an operation), the gradient reaching x."""
    return f"""
import torch
for tag in ('32', '64'):
    x = torch.tensor(inputs['{name}.x' + tag], requires_grad=True)
    y = {name}(x)
    record('out' + tag, y)
    record('nodes' + tag, _probe_nodes(y))
    y.backward(torch.tensor(inputs['{name}.grad' + tag]))
    record('grad' + tag, x.grad)
record('nodes_after_a_multiplication', _probe_nodes({name}(x * float(inputs['scale']))))
"""


KERNEL_CODE = {
    "Sigmoid": _function_snippet("Sigmoid"),
    "sigmoid": _wrapper_snippet("sigmoid"),
    "ReLU": _function_snippet("ReLU"),
    "relu": _wrapper_snippet("relu"),
}


def _nodes(t) -> list[str]:
    namespace: dict = {}
    exec(NODES, namespace)
    return namespace["_probe_nodes"](t)


def expected(inputs: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """The reference answers on the same inputs; `saved` is the tensor forward must have saved."""
    import torch

    from helpers.reference import custom_functions as ref

    def plain(t):
        return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)

    results = {}
    for name, function, saves in (("Sigmoid", ref.Sigmoid, "output"), ("ReLU", ref.ReLU, "input")):
        want = {}
        for tag in ("32", "64"):
            x = torch.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            y = function.apply(x)
            (grad,) = torch.autograd.grad(y, x, torch.tensor(inputs[f"{name}.grad{tag}"]))
            want.update({f"out{tag}": y, f"dtype{tag}": str(y.dtype), f"saved{tag}": y if saves == "output" else x,
                         f"grad{tag}": grad})
        results[name] = want
    for name, function in (("sigmoid", ref.sigmoid), ("relu", ref.relu)):
        want = {}
        for tag in ("32", "64"):
            x = torch.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            y = function(x)
            want.update({f"out{tag}": y, f"nodes{tag}": _nodes(y)})
            y.backward(torch.tensor(inputs[f"{name}.grad{tag}"]))
            want[f"grad{tag}"] = x.grad
        want["nodes_after_a_multiplication"] = _nodes(function(x * float(inputs["scale"])))
        results[name] = want
    return {exercise: {key: plain(value) for key, value in want.items()} for exercise, want in results.items()}


# float32 sigmoids written another way (torch.sigmoid, exp(-x) / (1 + exp(-x)) ** 2) differ by rounding.
TOLERANCE = {name: {"rtol": 1e-5, "atol": 1e-6} for name in ("Sigmoid", "sigmoid", "ReLU", "relu")}


def _judge(exercise: str, saves: str = ""):
    """Values compared as usual; `saved<tag>` passes when any tensor forward saved is that tensor;
    node lists are named in full when they differ."""

    def judge(got: dict, want: dict) -> str | None:
        tolerance = {**DEFAULT_TOLERANCE, **TOLERANCE[exercise]}
        unseen = "(on inputs your notebook never saw)"
        for key, value in want.items():
            if key.startswith("saved"):
                saved = [got[k] for k in sorted(got) if k.startswith(f"{key}.")]
                if not saved:
                    return f"{exercise} saved nothing with ctx.save_for_backward; it should save its {saves} {unseen}"
                if all(compare_arrays(t, value, **tolerance) for t in saved):
                    return (f"{exercise} saved {len(saved)} tensor(s) with ctx.save_for_backward, none of them "
                            f"its {saves} {unseen}")
            elif key not in got:
                return f"{exercise} gave no {key}"
            elif key.startswith("nodes") and compare_arrays(got[key], value, **tolerance):
                return (f"{exercise}(x) put the nodes {got[key].tolist()} into the graph; expected "
                        f"{value.tolist()}: one node, your Function's {unseen}")
            elif message := compare_arrays(got[key], value, **tolerance):
                return f"{exercise}: {key} {message} {unseen}"
        return None

    return judge


CUSTOM = {"Sigmoid": _judge("Sigmoid", "output sigmoid(x)"), "ReLU": _judge("ReLU", "input x"),
          "sigmoid": _judge("sigmoid"), "relu": _judge("relu")}

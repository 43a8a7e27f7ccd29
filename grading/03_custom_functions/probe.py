"""Probes of 03_custom_functions: values, gradients for a secret upstream gradient, what is saved, the nodes."""

from __future__ import annotations

import numpy as np
import torch

from autograder.probes import DEFAULT_TOLERANCE, Exercise, Probe, Tolerance, compare_arrays

# float32 sigmoids written another way (torch.sigmoid, exp(-x) / (1 + exp(-x)) ** 2) differ by rounding.
TOLERANCE = Tolerance(1e-5, 1e-6)
UNSEEN = "(on inputs your notebook never saw)"


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


def probe_nodes(t) -> list[str]:
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


def function_runner(name: str, saves: str):
    """Values, what forward saved, and the gradient for the secret grad_y, through Name.apply."""
    def run(answers, inputs, record):
        function = getattr(answers, name)
        for tag in ("32", "64"):
            x = torch.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            y = function.apply(x)
            record("out" + tag, y)
            record("dtype" + tag, str(y.dtype))
            for i, t in enumerate(y.grad_fn.saved_tensors):
                record(f"saved{tag}.{i}", t)
            (grad,) = torch.autograd.grad(y, x, torch.tensor(inputs[f"{name}.grad{tag}"]))
            record("grad" + tag, grad)

    def expected(inputs) -> dict:
        """The reference's values; `saved<tag>` is the tensor forward must have saved (its input or output)."""
        from helpers.reference import custom_functions as ref

        want = {}
        for tag in ("32", "64"):
            x = torch.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            y = getattr(ref, name).apply(x)
            (grad,) = torch.autograd.grad(y, x, torch.tensor(inputs[f"{name}.grad{tag}"]))
            want.update({f"out{tag}": y, f"dtype{tag}": str(y.dtype), f"saved{tag}": y if saves.startswith("output") else x,
                         f"grad{tag}": grad})
        return want

    return Exercise(run, expected=expected, tolerance=TOLERANCE, judge=saved_judge(name, saves))


def wrapper_runner(name: str):
    """Values, the nodes it adds to the graph (on a leaf and after an operation), the gradient reaching x."""
    def run(answers, inputs, record):
        function = getattr(answers, name)
        for tag in ("32", "64"):
            x = torch.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            y = function(x)
            record("out" + tag, y)
            record("nodes" + tag, probe_nodes(y))
            y.backward(torch.tensor(inputs[f"{name}.grad{tag}"]))
            record("grad" + tag, x.grad)
        record("nodes_after_a_multiplication", probe_nodes(function(x * float(inputs["scale"]))))

    return Exercise(run, tolerance=TOLERANCE, judge=saved_judge(name, ""))


def saved_judge(exercise: str, saves: str):
    """Values compared as usual; `saved<tag>` passes when any tensor forward saved is that tensor;
    node lists are named in full when they differ."""
    def judge(got: dict, want: dict) -> str | None:
        tolerance = {"rtol": TOLERANCE.rtol or DEFAULT_TOLERANCE.rtol, "atol": TOLERANCE.atol}
        for key, value in want.items():
            if key.startswith("saved"):
                saved = [got[k] for k in sorted(got) if k.startswith(f"{key}.")]
                if not saved:
                    return f"{exercise} saved nothing with ctx.save_for_backward; it should save its {saves} {UNSEEN}"
                if all(compare_arrays(t, value, **tolerance) for t in saved):
                    return (f"{exercise} saved {len(saved)} tensor(s) with ctx.save_for_backward, none of them "
                            f"its {saves} {UNSEEN}")
            elif key not in got:
                return f"{exercise} gave no {key}"
            elif key.startswith("nodes") and compare_arrays(got[key], value, **tolerance):
                return (f"{exercise}(x) put the nodes {got[key].tolist()} into the graph; expected "
                        f"{value.tolist()}: one node, your Function's {UNSEEN}")
            elif message := compare_arrays(got[key], value, **tolerance):
                return f"{exercise}: {key} {message} {UNSEEN}"
        return None

    return judge


PROBE = Probe(
    assignment="03_custom_functions",
    reference="helpers.reference.custom_functions",
    make_inputs=make_inputs,
    exercises={
        "Sigmoid": function_runner("Sigmoid", "output sigmoid(x)"),
        "sigmoid": wrapper_runner("sigmoid"),
        "ReLU": function_runner("ReLU", "input x"),
        "relu": wrapper_runner("relu"),
    },
)

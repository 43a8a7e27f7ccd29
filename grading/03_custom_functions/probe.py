"""Probes of 03_custom_functions: values, gradients for a secret upstream gradient, what is saved, the nodes;
for Linear, what its backward returns as it returns it, and the matrix-product FLOPs it runs with an input frozen;
for LayerNorm, what its backward returns on rows of every spread; for the engine, each operation's _backward run
alone on parents whose grads are not zero (and an MLP swept by the probe's own backward), and backward on
stand-in graphs whose nodes add known weights."""

from __future__ import annotations

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from autograder.probes import (
    DEFAULT_TOLERANCE,
    Exercise,
    Probe,
    Tolerance,
    compare_arrays,
    compare_records,
)

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
    inputs.update(linear_inputs(rng, "Linear"))
    shape3 = tuple(int(v) for v in rng.integers(2, 6, size=3))
    shape2 = tuple(int(v) for v in rng.integers(2, 7, size=2))
    wide = 80 * rng.standard_normal(shape3)  # float32 rows spread over hundreds
    wide[0, 0, int(rng.integers(shape3[2]))] += 300  # one far above its row's mean: exp(x - mean) overflows
    inputs.update({"LogSoftmax.x32": wide.astype(np.float32),
                   "LogSoftmax.x64": 800 + 50 * rng.standard_normal(shape2),  # exp overflows without the shift
                   "LogSoftmax.grad32": rng.standard_normal(shape3).astype(np.float32),
                   "LogSoftmax.grad64": rng.standard_normal(shape2)})
    inputs.update(layernorm_inputs(rng))
    inputs.update(value_inputs(rng))
    inputs.update(graph_inputs(rng))
    return inputs


def linear_inputs(rng: np.random.Generator, name: str) -> dict[str, np.ndarray]:
    """x (N, D_in), w (D_out, D_in), b (D_out,), grad_y (N, D_out) in float32 and float64, and a batch of one;
    N < D_out < D_in, so that a transposed or unsummed gradient never has the expected shape by chance."""
    inputs = {}
    for tag, dtype in (("32", np.float32), ("64", np.float64), ("1", np.float64)):
        n = 1 if tag == "1" else int(rng.integers(2, 5))
        d_out, d_in = int(rng.integers(5, 8)), int(rng.integers(8, 12))
        for key, shape in (("x", (n, d_in)), ("w", (d_out, d_in)), ("b", (d_out,)), ("grad", (n, d_out))):
            inputs[f"{name}.{key}{tag}"] = rng.standard_normal(shape).astype(dtype)
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


def saved_judge(exercise: str, saves: str, call: str = "x"):
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
                return (f"{exercise}({call}) put the nodes {got[key].tolist()} into the graph; expected "
                        f"{value.tolist()}: one node, your Function's {UNSEEN}")
            elif message := compare_arrays(got[key], value, **tolerance):
                return f"{exercise}: {key} {message} {UNSEEN}"
        return None

    return judge


GRAD_NAMES = ("grad_x", "grad_w", "grad_b")
FROZEN = {"x": "x as data (requires_grad=False)", "w": "w frozen (requires_grad=False)"}
FLOP_SLACK = 1.2  # a right backward may add a small product (grad_b as ones @ grad_y): 2 N D_out << 2 N D_out D_in


def record_returned(record, key: str, grads) -> None:
    """What backward returned, as it returned it: how many values, each tensor or the string "None"."""
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    record(f"{key}.count", len(grads))
    for name, grad in zip(GRAD_NAMES, grads):
        record(f"{key}.{name}", "None" if grad is None else grad)


class MatmulFlops(TorchDispatchMode):
    """The FLOPs of the matrix products run under it (mm, addmm, bmm... as einsum, @, F.linear reach them),
    by torch.utils.flop_counter's formulas: what FlopCounterMode counts."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:  # else the first call imports torch._dynamo: 1.4 s of CPU per kernel
        return False

    def __init__(self):
        super().__init__()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        count = flop_registry.get(func._overloadpacket)
        if count is not None:
            self.flops += count(*args, **kwargs, out_val=out)
        return out


def run_Linear(answers, inputs, record):
    """Linear.apply's values; its backward called on the node (the node is the ctx forward filled in) with
    every input trainable, with b=None on a batch of one, and with x or w frozen (FLOPs counted)."""
    def tensors(tag):
        return [torch.tensor(inputs[f"Linear.{key}{tag}"]) for key in ("x", "w", "b", "grad")]

    for tag in ("32", "64"):
        x, w, b, grad = tensors(tag)
        leaves = [t.requires_grad_(True) for t in (x, w, b)]
        y = answers.Linear.apply(*leaves)
        record(f"out{tag}", y)
        record_returned(record, f"returned{tag}", answers.Linear.backward(y.grad_fn, grad))
        try:  # autograd's own checks of what backward returns; its refusal is judged after the returned values
            through_autograd = torch.autograd.grad(y, leaves, grad)
        except RuntimeError as error:
            record(f"autograd{tag}.error", str(error).splitlines()[0])
            continue
        for name, g in zip(GRAD_NAMES, through_autograd):
            record(f"autograd{tag}.{name}", g)
    x, w, _, grad = tensors("1")
    y = answers.Linear.apply(x.requires_grad_(True), w.requires_grad_(True), None)
    record("out_no_bias", y)
    record_returned(record, "returned_no_bias", answers.Linear.backward(y.grad_fn, grad))
    for frozen in FROZEN:
        x, w, b, grad = tensors("64")
        y = answers.Linear.apply(x.requires_grad_(frozen != "x"), w.requires_grad_(frozen != "w"), b.requires_grad_(True))
        with MatmulFlops() as counter:
            grads = answers.Linear.backward(y.grad_fn, grad)
        record_returned(record, f"frozen_{frozen}", grads)
        record(f"frozen_{frozen}.flops", counter.flops)


def linear_judge(got: dict, want: dict) -> str | None:
    """Each key compared; shapes and Nones explained in the words of the exercise; FLOPs an upper bound."""
    for key, value in want.items():
        where, _, part = key.partition(".")
        said = _linear_words(where)
        if key not in got and f"{where}.error" in got:
            return f"autograd refused what Linear's backward returned {said}: {got[f'{where}.error']} {UNSEEN}"
        if key not in got:
            return f"Linear gave no {key} {UNSEEN}"
        if part == "count" and got[key] != value:
            return (f"Linear's backward returned {got[key]} value(s) {said}; expected {value}, one per input of "
                    f"forward (x, w, b), None where no gradient is needed {UNSEEN}")
        if part == "flops":
            if got[key] > FLOP_SLACK * value:
                return (f"Linear's backward ran {int(got[key])} FLOPs of matrix products {said}; the gradients still "
                        f"needed take {int(value)}: it computed the frozen input's gradient and threw it away "
                        f"(look at ctx.needs_input_grad) {UNSEEN}")
            continue
        if value.dtype.kind == "U" or got[key].dtype.kind == "U":
            if str(got[key]) != str(value):
                return (f"Linear's backward returned {'None' if str(got[key]) == 'None' else 'a tensor'} for {part} "
                        f"{said}; expected {'None' if str(value) == 'None' else 'a tensor'} "
                        f"(ctx.needs_input_grad says which gradients are needed) {UNSEEN}")
            continue
        message = compare_arrays(got[key], value, rtol=TOLERANCE.rtol, atol=1e-5)
        if message:
            return f"Linear: {part or 'the output'} {said} {message}{_shape_hint(part, got[key], value)} {UNSEEN}"
    return None


def _linear_words(where: str) -> str:
    if where.startswith("frozen_"):
        return f"with {FROZEN[where[7:]]}"
    if where.endswith("no_bias"):
        return "with b=None on a batch of one"
    dtype = {"32": "float32", "64": "float64"}[where[-2:]]
    how = {"out": "", "returned": "as backward returned it, ", "autograd": "through autograd, "}[where[:-2]]
    return f"({how}{dtype})"


def _shape_hint(part: str, got: np.ndarray, want: np.ndarray) -> str:
    if got.shape == want.shape:
        return ""
    if got.ndim == 2 and got.shape == want.shape[::-1]:
        return ": did you forget a transpose?"
    if part == "grad_b" and got.ndim == 2:
        return ": b is added to every row, so grad_b sums grad_y over the batch"
    return ""


def run_LogSoftmax(answers, inputs, record):
    """Values (float32 3-D; float64 scores around 800) and the gradient for the secret grad_y, through .apply."""
    for tag in ("32", "64"):
        x = torch.tensor(inputs[f"LogSoftmax.x{tag}"], requires_grad=True)
        y = answers.LogSoftmax.apply(x)
        record("out" + tag, y)
        record("dtype" + tag, str(y.dtype))
        (grad,) = torch.autograd.grad(y, x, torch.tensor(inputs[f"LogSoftmax.grad{tag}"]))
        record("grad" + tag, grad)


def log_softmax_judge(got: dict, want: dict) -> str | None:
    """Values compared as usual; an overflow named as such."""
    message = compare_records("LogSoftmax", got, want, LOG_SOFTMAX_TOLERANCE)
    if message and "nan or inf" in message:
        message += ": exp of scores around 800 overflows; subtract each row's maximum first"
    return message


LOG_SOFTMAX_TOLERANCE = Tolerance(1e-5, 1e-5)  # float32 log-probabilities written another way differ by rounding

LAYERNORM_TOLERANCE = Tolerance(1e-4, 1e-4)  # float32 normalized rows written another way differ by rounding
ENGINE_TOLERANCE = Tolerance(1e-9, 1e-9)  # float64 throughout


def layernorm_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """x float32 (3-D) and float64 (2-D, its first row of standard deviation 1e-3, where eps matters), gamma,
    beta, grad_y, and an eps."""
    inputs = {}
    shape32 = (int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(4, 9)))
    shape64 = (int(rng.integers(3, 6)), int(rng.integers(4, 9)))
    for tag, dtype, shape in (("32", np.float32, shape32), ("64", np.float64, shape64)):
        d = shape[-1]
        x = 2 * rng.standard_normal(shape) + rng.standard_normal()
        if tag == "64":
            x[0] = 3.0 + 1e-3 * rng.standard_normal(d)
        inputs.update({f"LayerNorm.x{tag}": x.astype(dtype),
                       f"LayerNorm.gamma{tag}": (1 + 0.5 * rng.standard_normal(d)).astype(dtype),
                       f"LayerNorm.beta{tag}": rng.standard_normal(d).astype(dtype),
                       f"LayerNorm.grad{tag}": rng.standard_normal(shape).astype(dtype)})
    inputs["LayerNorm.eps"] = np.asarray(rng.choice([1e-5, 1e-3]))
    return inputs


def run_LayerNorm(answers, inputs, record):
    """Values, and what backward returns as it returns it (called on the node, as for Linear)."""
    eps = float(inputs["LayerNorm.eps"])
    for tag in ("32", "64"):
        x, gamma, beta, grad = (torch.tensor(inputs[f"LayerNorm.{key}{tag}"]) for key in ("x", "gamma", "beta", "grad"))
        y = answers.LayerNorm.apply(x.requires_grad_(True), gamma.requires_grad_(True), beta.requires_grad_(True), eps)
        record(f"out{tag}", y)
        grads = answers.LayerNorm.backward(y.grad_fn, grad)
        grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
        record(f"returned{tag}.count", len(grads))
        for name, g in zip(("grad_x", "grad_gamma", "grad_beta", "eps"), grads):
            record(f"returned{tag}.{name}", "None" if g is None else g)


def layernorm_judge(got: dict, want: dict) -> str | None:
    """Values compared as usual; a returned count, a None or a shape explained in the exercise's words."""
    for key, value in want.items():
        part = key.rpartition(".")[2]
        if key not in got:
            return f"LayerNorm gave no {key} {UNSEEN}"
        if part == "count" and got[key] != value:
            return (f"LayerNorm's backward returned {got[key]} value(s); expected 4, one per input of forward "
                    f"(grad_x, grad_gamma, grad_beta, None for eps) {UNSEEN}")
        if value.dtype.kind == "U" or got[key].dtype.kind == "U":
            if str(got[key]) != str(value):
                return f"LayerNorm's backward returned {got[key]} for {part}; expected {value} {UNSEEN}"
            continue
        if part in ("grad_gamma", "grad_beta") and got[key].shape != value.shape:
            return (f"LayerNorm's {part} has shape {got[key].shape}; expected {value.shape}: gamma and beta are "
                    f"shared by every row {UNSEEN}")
        message = compare_arrays(got[key], value, rtol=LAYERNORM_TOLERANCE.rtol, atol=LAYERNORM_TOLERANCE.atol)
        if message:
            return f"LayerNorm: {key} {message} {UNSEEN}"
    return None


ENGINE_CASES = {  # name: the shapes of the inputs of one operation (broadcasting in several ways)
    "add_row": ("add", (4, 5), (5,)), "add_column": ("add", (4, 5), (4, 1)), "add_self": ("add_self", (3, 4)),
    "add_number": ("add", (2, 3, 4), ()), "mul_row": ("mul", (4, 5), (1, 5)), "mul_3d": ("mul", (2, 3, 4), (3, 1)),
    "mul_self": ("mul_self", (3, 4)), "matmul": ("matmul", (4, 3), (3, 6)), "relu": ("relu", (5, 4)),
    "sum": ("sum", (3, 5)),
}


def value_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per case: the inputs, the grads their parents start with (not zero: _backward must add), the upstream
    gradient; and an MLP with biases."""
    inputs = {}
    for case, (kind, *shapes) in ENGINE_CASES.items():
        arrays = [rng.standard_normal(shape) for shape in shapes]
        for i, (shape, array) in enumerate(zip(shapes, arrays)):
            inputs[f"Value.{case}.in{i}"] = array
            inputs[f"Value.{case}.start{i}"] = rng.standard_normal(shape)
        inputs[f"Value.{case}.grad"] = rng.standard_normal(np.shape(_numpy_op(kind, arrays)))
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 8, size=4))
    for key, shape in (("x", (n, d_in)), ("y", (n, d_out)), ("w1", (d_in, h)), ("b1", (h,)), ("w2", (h, d_out)),
                       ("b2", (d_out,))):
        inputs[f"Value.mlp.{key}"] = rng.standard_normal(shape)
    return inputs


def _numpy_op(kind: str, arrays: list) -> np.ndarray:
    """What the operation computes, in NumPy: its result's shape is the upstream gradient's."""
    a = arrays[0]
    return {"add": lambda: a + arrays[-1], "add_self": lambda: a + a, "mul": lambda: a * arrays[-1],
            "mul_self": lambda: a * a, "matmul": lambda: a @ arrays[-1], "relu": lambda: np.maximum(a, 0),
            "sum": lambda: a.sum()}[kind]()


def _engine_op(kind: str, values: list):
    if kind == "add_self":
        return values[0] + values[0]
    if kind == "mul_self":
        return values[0] * values[0]
    if kind in ("relu", "sum"):
        return getattr(values[0], kind)()
    a, b = values
    return {"add": lambda: a + b, "mul": lambda: a * b, "matmul": lambda: a @ b}[kind]()


MAX_NODES = 10_000  # the probe's MLP has about twenty


def _sweep(root) -> None:
    """The probe's own reverse topological sweep, so that Value is judged without the student's backward."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            if len(seen) >= MAX_NODES:  # a Value whose parents never end (not a graph the operations built)
                raise RuntimeError(f"the graph behind the loss has more than {MAX_NODES} nodes: look at .parents")
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parents)
    root.grad = np.ones_like(root.data)
    for node in reversed(order):
        node._backward()


def run_Value(answers, inputs, record):
    """Each operation: out._backward() run once for a secret out.grad, on parents whose grads start non-zero;
    then the MLP's loss swept by the probe's own backward."""
    for case, (kind, *shapes) in ENGINE_CASES.items():
        values = [answers.Value(inputs[f"Value.{case}.in{i}"]) for i in range(len(shapes))]
        out = _engine_op(kind, values)
        record(f"{case}.out", out.data)
        for i, v in enumerate(values):
            v.grad = inputs[f"Value.{case}.start{i}"].copy()
        out.grad = inputs[f"Value.{case}.grad"].copy()  # a gradient that is not all ones
        out._backward()
        for i, v in enumerate(values):
            record(f"{case}.grad{i}", v.grad)
    x, y, w1, b1, w2, b2 = (answers.Value(inputs[f"Value.mlp.{key}"]) for key in ("x", "y", "w1", "b1", "w2", "b2"))
    d = (x @ w1 + b1).relu() @ w2 + b2 - y
    loss = (d * d).sum()
    _sweep(loss)
    record("mlp.loss", loss.data)
    for key, v in zip(("x", "y", "w1", "b1", "w2", "b2"), (x, y, w1, b1, w2, b2)):
        record(f"mlp.grad_{key}", v.grad)


def graph_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Two stand-in graphs: for each node after the leaves, its parents (earlier nodes, repeats allowed) and
    the weight of each edge."""
    inputs = {}
    for g, size in (("a", int(rng.integers(8, 14))), ("b", int(rng.integers(30, 60)))):
        parents = np.full((size, 3), -1)
        weights = np.zeros((size, 3))
        for node in range(3, size):
            k = int(rng.integers(1, 4))
            parents[node, :k] = rng.integers(max(0, node - 6), node, size=k)
            weights[node, :k] = rng.uniform(0.5, 1.5, size=k)
        inputs[f"backward.{g}.parents"], inputs[f"backward.{g}.weights"] = parents, weights
    return inputs


class _Node:
    """A stand-in node: its output is the weighted sum of its parents', so its _backward adds weight * grad into
    each parent; it counts its calls."""

    def __init__(self, parents, weights):
        self.parents, self.weights = tuple(parents), tuple(weights)
        self.data, self.grad, self.calls = np.zeros(()), np.zeros(()), 0
        self._backward = self._push

    def _push(self):
        self.calls += 1
        for parent, weight in zip(self.parents, self.weights):
            parent.grad = parent.grad + weight * self.grad


def run_backward(answers, inputs, record):
    """backward(root) on each stand-in graph: every node's grad, and how often each reachable node ran."""
    for g in ("a", "b"):
        nodes = []
        for row, weights in zip(inputs[f"backward.{g}.parents"], inputs[f"backward.{g}.weights"]):
            chosen = [(nodes[int(p)], float(w)) for p, w in zip(row, weights) if p >= 0]
            nodes.append(_Node([n for n, _ in chosen], [w for _, w in chosen]))
        answers.backward(nodes[-1])
        record(f"{g}.grads", np.array([float(n.grad) for n in nodes]))
        record(f"{g}.calls", np.array([n.calls for n in nodes]))


PROBE = Probe(
    assignment="03_custom_functions",
    reference="helpers.reference.custom_functions",
    make_inputs=make_inputs,
    exercises={
        "Sigmoid": function_runner("Sigmoid", "output sigmoid(x)"),
        "sigmoid": wrapper_runner("sigmoid"),
        "ReLU": function_runner("ReLU", "input x"),
        "relu": wrapper_runner("relu"),
        "Linear": Exercise(run_Linear, tolerance=TOLERANCE, judge=linear_judge),
        "LogSoftmax": Exercise(run_LogSoftmax, tolerance=LOG_SOFTMAX_TOLERANCE, judge=log_softmax_judge),
        "LayerNorm": Exercise(run_LayerNorm, tolerance=LAYERNORM_TOLERANCE, judge=layernorm_judge),
        "Value": Exercise(run_Value, tolerance=ENGINE_TOLERANCE),
        "backward": Exercise(run_backward, tolerance=ENGINE_TOLERANCE),
    },
)

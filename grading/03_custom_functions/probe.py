"""Probes of 03_custom_functions: values, gradients for a secret upstream gradient, what is saved, the nodes;
each Function's backward also called alone on its node, as the engine calls it, to see that it derives the
gradient instead of asking autograd (a graph built: refused, or seen) or PyTorch's own backward kernels for it;
for Linear, what its backward returns as it returns it, and the matrix-product FLOPs it runs with an input frozen;
for LayerNorm, what its backward returns on rows of every spread, a single row, an eps never the default; for
BatchNorm, the same on (N, C), (N, C, H, W) and float32 sequences, and the running statistics it leaves; for the engine, each operation's _backward run alone on parents whose
grads are not zero (and an MLP swept by the grader's own backward), and backward on stand-in graphs whose nodes
add known weights, with no PyTorch call anywhere.

Every call is made from here through the kernel's caller; the stand-ins (the watch a backward runs under, the
graph walks, the engine's nodes and sweep) are grading/03_custom_functions/given.py.
"""

from __future__ import annotations

import numpy as np

from autograder.probes import (
    DEFAULT_TOLERANCE,
    Exercise,
    Probe,
    Tolerance,
    compare_arrays,
    compare_records,
)
from autograder.probes.session import Raised

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
    inputs.update(batchnorm_inputs(rng))
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


# -- derived, not asked for --------------------------------------------------------------------------------

# PyTorch functions that compute a gradient: autograd's entry points, and any function named for a backward
# pass (Tensor.backward, aten's sigmoid_backward, threshold_backward, _log_softmax_backward_data,
# native_layer_norm_backward, convolution_backward...): a backward that calls one does not derive its gradient.
GRADIENT_FUNCTIONS = ("grad", "vjp", "jvp", "jacobian", "hessian", "vhp", "hvp")


def asks_autograd(error: str) -> bool:
    """A backward's error that says it built a graph inside the watch of given.watched (or torch.func refused to
    run under it)."""
    return error.startswith("AskedAutograd") or "saved tensor hooks" in error


def gradient_calls(names) -> list[str]:
    """The functions among `names` (what a backward called) that compute a gradient for it."""
    return [n for n in (str(v) for v in np.ravel(names)) if n in GRADIENT_FUNCTIONS or "backward" in n]


GRAPHLESS = ("detach", "alias", "lift_fresh", "__get__", "requires_grad_", "size", "dim")  # build no graph, whatever the grad mode


def graph_built(names) -> list[str]:
    """The ATen operators among `names` (a backward's `.graph` record: run with grad mode on, on a tensor that
    requires a gradient) that autograd records in a graph."""
    return [n for n in (str(v) for v in np.ravel(names)) if n not in GRAPHLESS]


def derivation_problem(exercise: str, got: dict) -> str | None:
    """What each `<where>.raised`, `<where>.graph`, `<where>.calls` and `<where>.aten` record of a backward called
    alone says: it raised, it asked autograd (it built a graph: autograd refused to save a tensor for it, or its
    operators ran with grad mode switched back on, on tensors that require a gradient), or it ran one of PyTorch's
    gradient functions; None when derived."""
    raised = {key: str(got[key]) for key in sorted(got) if key.endswith(".raised") and str(got[key]) != "None"}
    for error in raised.values():
        if asks_autograd(error):
            return (f"{exercise}'s backward asks autograd for the gradient it should derive: called alone, as the "
                    f"engine calls it, with grad mode off, it built a graph of its own ({error.split(': ', 1)[-1]}). "
                    f"Derive the gradient by hand from what forward saved {UNSEEN}")
    for key in sorted(got):
        if key.endswith(".graph") and (built := graph_built(got[key])):
            return (f"{exercise}'s backward asks autograd for the gradient it should derive: called alone, as the "
                    f"engine calls it, with grad mode off, it switched grad mode on and built a graph of its own "
                    f"({', '.join(built[:4])} on tensors that require a gradient). Derive the gradient by hand from "
                    f"what forward saved {UNSEEN}")
    for error in raised.values():
        return f"{exercise}'s backward, called on its node as the engine calls it, raised {error} {UNSEEN}"
    for key in sorted(got):
        if key.endswith((".calls", ".aten")) and (asked := gradient_calls(got[key])):
            return (f"{exercise}'s backward calls PyTorch's {asked[0]}, which computes the gradient it should "
                    f"derive: derive it by hand from what forward saved {UNSEEN}")
    return None


def watched(key: str) -> bool:
    """A record of the watch (given.watched), judged by derivation_problem rather than compared."""
    return key.endswith((".raised", ".calls", ".aten", ".graph"))


def record_alone(record, where: str, outcome) -> None:
    """The raw outcome of given.watched: what the backward raised (or "None"), the functions and ATen operators
    it ran, those it ran building a graph."""
    outcome = outcome if isinstance(outcome, dict) else {}
    record(f"{where}.raised", outcome.get("raised"))
    for part in ("calls", "aten", "graph"):
        record(f"{where}.{part}", [str(n) for n in outcome.get(part) or []])


def fetch_dict(k, refs: dict) -> dict:
    """Every ref of `refs` fetched in one round trip (the student's code raised making one: Raised)."""
    got = k.fetch(k.value(refs))
    if not isinstance(got, dict):
        raise Raised("the kernel handed back what the grader did not ask for")
    return got


# -- Sigmoid, ReLU, LogSoftmax and the wrappers ----------------------------------------------------------------

def function_runner(name: str, saves: str):
    """Values, what forward saved, the gradient for the secret grad_y through Name.apply, and backward called
    alone on the node."""
    def run(k, inputs, record):
        function = getattr(k.answers, name)
        torch = k.module("torch")
        later = {}
        for tag in ("32", "64"):
            x = k.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            grad = k.tensor(inputs[f"{name}.grad{tag}"])
            y = function.apply(x)
            record("out" + tag, y)
            record("dtype" + tag, y.dtype)
            later["saved" + tag] = k.given.saved(y)
            later["alone" + tag] = k.given.watched(function.backward, y.grad_fn, grad)
            record("grad" + tag, torch.autograd.grad(y, x, grad)[0])
        got = fetch_dict(k, later)
        for tag in ("32", "64"):
            saved = got["saved" + tag]
            for i, t in enumerate(saved if isinstance(saved, list) else []):
                record(f"saved{tag}.{i}", t)
            record_alone(record, "alone" + tag, got["alone" + tag])

    def expected(inputs) -> dict:
        """The reference's values; `saved<tag>` is the tensor forward must have saved (its input or output)."""
        import torch

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
    def run(k, inputs, record):
        function = getattr(k.answers, name)
        for tag in ("32", "64"):
            x = k.tensor(inputs[f"{name}.x{tag}"], requires_grad=True)
            y = function(x)
            record("out" + tag, y)
            record("nodes" + tag, k.given.node_names(y))
            record("grad" + tag, k.given.grad_through(y, x, k.tensor(inputs[f"{name}.grad{tag}"])))
        record("nodes_after_a_multiplication", k.given.node_names(function(x * float(inputs["scale"]))))

    return Exercise(run, tolerance=TOLERANCE, judge=saved_judge(name, ""))


def saved_judge(exercise: str, saves: str, call: str = "x"):
    """Backward derived (called alone); values compared as usual; `saved<tag>` passes when any tensor forward
    saved is that tensor; node lists are named in full when they differ."""
    def judge(got: dict, want: dict) -> str | None:
        if message := derivation_problem(exercise, got):
            return message
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


# -- Linear ------------------------------------------------------------------------------------------------------

GRAD_NAMES = ("grad_x", "grad_w", "grad_b")
FROZEN = {"x": "x as data (requires_grad=False)", "w": "w frozen (requires_grad=False)"}
FLOP_SLACK = 1.2  # a right backward may add a small product (grad_b as ones @ grad_y): 2 N D_out << 2 N D_out D_in


def record_returned(record, key: str, grads, names=GRAD_NAMES) -> None:
    """What backward returned, as it returned it: how many values, each array or the string "None"."""
    grads = tuple(grads) if isinstance(grads, (tuple, list)) else (grads,)
    record(f"{key}.count", len(grads))
    for name, grad in zip(names, grads):
        record(f"{key}.{name}", "None" if grad is None else grad)


def run_Linear(k, inputs, record):
    """Linear.apply's values; its backward called alone on the node (the node is the ctx forward filled in) with
    every input trainable, with b=None on a batch of one, and with x or w frozen (FLOPs counted); the gradients
    through autograd, which checks what backward returns."""
    Linear, torch = k.answers.Linear, k.module("torch")

    def tensors(tag):
        return [k.tensor(inputs[f"Linear.{key}{tag}"]) for key in ("x", "w", "b", "grad")]

    later = {}
    for tag in ("32", "64"):
        x, w, b, grad = tensors(tag)
        leaves = [t.requires_grad_(True) for t in (x, w, b)]
        y = Linear.apply(*leaves)
        record(f"out{tag}", y)
        later[f"returned{tag}"] = k.given.watched(Linear.backward, y.grad_fn, grad)
        later[f"autograd{tag}"] = k.given.outcome(torch.autograd.grad, y, leaves, grad)
    x, w, _, grad = tensors("1")
    y = Linear.apply(x.requires_grad_(True), w.requires_grad_(True), None)
    record("out_no_bias", y)
    later["returned_no_bias"] = k.given.watched(Linear.backward, y.grad_fn, grad)
    for frozen in FROZEN:
        x, w, b, grad = tensors("64")
        y = Linear.apply(x.requires_grad_(frozen != "x"), w.requires_grad_(frozen != "w"), b.requires_grad_(True))
        later[f"frozen_{frozen}"] = k.given.watched(Linear.backward, y.grad_fn, grad)
    for where, outcome in fetch_dict(k, later).items():
        outcome = outcome if isinstance(outcome, dict) else {}
        if where.startswith("autograd"):  # autograd's own checks of what backward returns, judged after them
            if outcome.get("raised") is not None:
                record(f"{where}.error", outcome["raised"])
                continue
            returned = outcome.get("returned")
            for name, g in zip(GRAD_NAMES, returned if isinstance(returned, (tuple, list)) else ()):
                record(f"{where}.{name}", "None" if g is None else g)
            continue
        record_alone(record, where, outcome)
        if outcome.get("raised") is None:
            record_returned(record, where, outcome.get("returned"))
        if where.startswith("frozen_"):
            record(f"{where}.flops", outcome.get("flops"))


def linear_judge(got: dict, want: dict) -> str | None:
    """Backward derived; each key compared; shapes and Nones explained in the words of the exercise; FLOPs an
    upper bound."""
    if message := derivation_problem("Linear", got):
        return message
    for key, value in want.items():
        where, _, part = key.partition(".")
        said = _linear_words(where)
        if watched(key):
            continue
        if key not in got and f"{where}.error" in got:
            return f"autograd refused what Linear's backward returned {said}: {got[f'{where}.error']} {UNSEEN}"
        if key not in got:
            return f"Linear gave no {key} {UNSEEN}"
        if part == "count" and compare_arrays(got[key], value, 0, 0):
            return (f"Linear's backward returned {got[key]} value(s) {said}; expected {value}, one per input of "
                    f"forward (x, w, b), None where no gradient is needed {UNSEEN}")
        if part == "flops":
            flops = _number(got[key])
            if flops is None or flops > FLOP_SLACK * float(value):
                return (f"Linear's backward ran {got[key]} FLOPs of matrix products {said}; the gradients still "
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


def _number(value: np.ndarray) -> float | None:
    """A recorded number as a float; None when it is not one number."""
    value = np.asarray(value)
    return float(value) if value.size == 1 and value.dtype.kind in "biuf" else None


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
        return ": b is added to every row, and yours keeps the batch dimension"
    return ""


# -- LogSoftmax and LayerNorm ------------------------------------------------------------------------------------

def run_LogSoftmax(k, inputs, record):
    """Values (float32 3-D; float64 scores around 800) and the gradient for the secret grad_y, through .apply;
    backward called alone on the node."""
    LogSoftmax, torch = k.answers.LogSoftmax, k.module("torch")
    later = {}
    for tag in ("32", "64"):
        x = k.tensor(inputs[f"LogSoftmax.x{tag}"], requires_grad=True)
        grad = k.tensor(inputs[f"LogSoftmax.grad{tag}"])
        y = LogSoftmax.apply(x)
        record("out" + tag, y)
        record("dtype" + tag, y.dtype)
        later["alone" + tag] = k.given.watched(LogSoftmax.backward, y.grad_fn, grad)
        record("grad" + tag, torch.autograd.grad(y, x, grad)[0])
    for where, outcome in fetch_dict(k, later).items():
        record_alone(record, where, outcome)


def log_softmax_judge(got: dict, want: dict) -> str | None:
    """Backward derived; values compared as usual; an overflow named as such."""
    if message := derivation_problem("LogSoftmax", got):
        return message
    message = compare_records("LogSoftmax", got, {k: v for k, v in want.items() if not watched(k)},
                              LOG_SOFTMAX_TOLERANCE)
    if message and "nan or inf" in message:
        message += ": exp of scores around 800 overflows, and your forward exponentiates scores that large"
    return message


LOG_SOFTMAX_TOLERANCE = Tolerance(1e-5, 1e-5)  # float32 log-probabilities written another way differ by rounding

LAYERNORM_TOLERANCE = Tolerance(1e-4, 1e-4)  # float32 normalized rows written another way differ by rounding
ENGINE_TOLERANCE = Tolerance(1e-9, 1e-9)  # float64 throughout
LAYERNORM_NAMES = ("grad_x", "grad_gamma", "grad_beta", "eps")


def layernorm_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """x float32 (3-D), float64 (2-D, its first row of standard deviation 1e-3, where eps matters) and a single
    float64 row (D,), with gamma, beta and grad_y each; and an eps that is never the default 1e-5 (a forward
    that ignores the eps it is given then fails on every draw)."""
    inputs = {}
    shape32 = (int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(4, 9)))
    shape64 = (int(rng.integers(3, 6)), int(rng.integers(4, 9)))
    shape1 = (int(rng.integers(4, 9)),)
    for tag, dtype, shape in (("32", np.float32, shape32), ("64", np.float64, shape64), ("1", np.float64, shape1)):
        d = shape[-1]
        x = 2 * rng.standard_normal(shape) + rng.standard_normal()
        if tag == "64":
            x[0] = 3.0 + 1e-3 * rng.standard_normal(d)
        inputs.update({f"LayerNorm.x{tag}": x.astype(dtype),
                       f"LayerNorm.gamma{tag}": (1 + 0.5 * rng.standard_normal(d)).astype(dtype),
                       f"LayerNorm.beta{tag}": rng.standard_normal(d).astype(dtype),
                       f"LayerNorm.grad{tag}": rng.standard_normal(shape).astype(dtype)})
    inputs["LayerNorm.eps"] = np.asarray(10 ** rng.uniform(-3, -1.5))  # 1e-3 to 3e-2: far from 1e-5
    return inputs


def run_LayerNorm(k, inputs, record):
    """Values, and what backward returns as it returns it (called alone on the node, as for Linear)."""
    eps = float(inputs["LayerNorm.eps"])
    later = {}
    for tag in ("32", "64", "1"):
        x, gamma, beta, grad = (k.tensor(inputs[f"LayerNorm.{key}{tag}"]) for key in ("x", "gamma", "beta", "grad"))
        y = k.answers.LayerNorm.apply(x.requires_grad_(True), gamma.requires_grad_(True), beta.requires_grad_(True),
                                      eps)
        record(f"out{tag}", y)
        later[f"returned{tag}"] = k.given.watched(k.answers.LayerNorm.backward, y.grad_fn, grad)
    for where, outcome in fetch_dict(k, later).items():
        record_alone(record, where, outcome)
        if isinstance(outcome, dict) and outcome.get("raised") is None:
            record_returned(record, where, outcome.get("returned"), LAYERNORM_NAMES)


def norm_judge(exercise: str, names: tuple[str, ...], shared: str):
    """Backward derived; values compared as usual; a returned count, a None or a shape explained in the
    exercise's words (`shared`: what gamma and beta are shared by)."""
    def judge(got: dict, want: dict) -> str | None:
        if message := derivation_problem(exercise, got):
            return message
        for key, value in want.items():
            part = key.rpartition(".")[2]
            if watched(key):
                continue
            if key not in got:
                return f"{exercise} gave no {key} {UNSEEN}"
            if part == "count" and compare_arrays(got[key], value, 0, 0):
                return (f"{exercise}'s backward returned {got[key]} value(s); expected {len(names)}, one per input "
                        f"of forward ({', '.join(names[:3])}, then None for {', '.join(names[3:])}) {UNSEEN}")
            if value.dtype.kind == "U" or got[key].dtype.kind == "U":
                if str(got[key]) != str(value):
                    return f"{exercise}'s backward returned {got[key]} for {part}; expected {value} {UNSEEN}"
                continue
            if part in ("grad_gamma", "grad_beta") and got[key].shape != value.shape:
                return (f"{exercise}'s {part} has shape {got[key].shape}; expected {value.shape}: gamma and beta are "
                        f"shared by {shared} {UNSEEN}")
            message = compare_arrays(got[key], value, rtol=LAYERNORM_TOLERANCE.rtol, atol=LAYERNORM_TOLERANCE.atol)
            if message:
                return f"{exercise}: {key} {message} {UNSEEN}"
        return None

    return judge


# -- BatchNorm ----------------------------------------------------------------------------------------------------

BATCHNORM_NAMES = ("grad_x", "grad_gamma", "grad_beta", "running_mean", "running_var", "momentum", "eps")
BATCHNORM_SHAPES = {"2d": "float64 (N, C)", "4d": "float64 (N, C, H, W)", "32": "float32 (N, C, L)"}


def batchnorm_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """x float64 (N, C) with a channel of standard deviation 1e-3 (where eps matters), float64 (N, C, H, W) and
    float32 (N, C, L); gamma, beta, grad_y and running statistics each; a momentum and an eps (never the
    defaults)."""
    inputs = {}
    n, c = int(rng.integers(3, 9)), int(rng.integers(2, 6))
    shapes = {"2d": (n, c), "4d": (int(rng.integers(2, 4)), int(rng.integers(2, 4)), int(rng.integers(2, 5)),
                                   int(rng.integers(2, 5))),
              "32": (int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(3, 7)))}
    for tag, shape in shapes.items():
        dtype, channels = (np.float32 if tag == "32" else np.float64), shape[1]
        x = 2 * rng.standard_normal(shape) + rng.standard_normal((1, channels) + (1,) * (len(shape) - 2))
        if tag == "2d":
            x[:, 0] = 3.0 + 1e-3 * rng.standard_normal(shape[0])
        inputs.update({f"BatchNorm.x{tag}": x.astype(dtype),
                       f"BatchNorm.gamma{tag}": (1 + 0.5 * rng.standard_normal(channels)).astype(dtype),
                       f"BatchNorm.beta{tag}": rng.standard_normal(channels).astype(dtype),
                       f"BatchNorm.grad{tag}": rng.standard_normal(shape).astype(dtype),
                       f"BatchNorm.mean{tag}": rng.standard_normal(channels).astype(dtype),
                       f"BatchNorm.var{tag}": rng.uniform(0.5, 2.0, channels).astype(dtype)})
    inputs["BatchNorm.momentum"] = np.asarray(rng.uniform(0.15, 0.6))
    inputs["BatchNorm.eps"] = np.asarray(10 ** rng.uniform(-3, -1.5))
    return inputs


def run_BatchNorm(k, inputs, record):
    """Values, the running statistics after the call, what backward returns as it returns it (called alone on the
    node), and the output when no running statistics are handed in."""
    momentum, eps = float(inputs["BatchNorm.momentum"]), float(inputs["BatchNorm.eps"])
    later = {}
    for tag in BATCHNORM_SHAPES:
        x, gamma, beta, grad, mean, var = (k.tensor(inputs[f"BatchNorm.{key}{tag}"])
                                           for key in ("x", "gamma", "beta", "grad", "mean", "var"))
        y = k.answers.BatchNorm.apply(x.requires_grad_(True), gamma.requires_grad_(True), beta.requires_grad_(True),
                                      mean, var, momentum, eps)
        record(f"out{tag}", y)
        record(f"running_mean{tag}", mean)
        record(f"running_var{tag}", var)
        later[f"returned{tag}"] = k.given.watched(k.answers.BatchNorm.backward, y.grad_fn, grad)
    x, gamma, beta = (k.tensor(inputs[f"BatchNorm.{key}2d"]) for key in ("x", "gamma", "beta"))
    record("out_untracked", k.answers.BatchNorm.apply(x, gamma, beta, None, None, momentum, eps))
    for where, outcome in fetch_dict(k, later).items():
        record_alone(record, where, outcome)
        if isinstance(outcome, dict) and outcome.get("raised") is None:
            record_returned(record, where, outcome.get("returned"), BATCHNORM_NAMES)


# -- the engine --------------------------------------------------------------------------------------------------

ENGINE_CASES = {  # name: the shapes of the inputs of one operation (broadcasting in several ways, either side)
    "add_row": ("add", (4, 5), (5,)), "add_column": ("add", (4, 5), (4, 1)), "add_self": ("add_self", (3, 4)),
    "add_number": ("add", (2, 3, 4), ()), "mul_row": ("mul", (4, 5), (1, 5)), "mul_3d": ("mul", (2, 3, 4), (3, 1)),
    "add_row_on_the_left": ("add", (5,), (4, 5)), "mul_column_on_the_left": ("mul", (4, 1), (2, 4, 5)),
    "add_outer": ("add", (4, 1), (1, 5)), "mul_two_added": ("mul", (3, 2, 4), (4,)),
    "mul_self": ("mul_self", (3, 4)), "matmul": ("matmul", (4, 3), (3, 6)), "relu": ("relu", (5, 4)),
    "sum": ("sum", (3, 5)),
}
TORCH_CALLS = ("torch_calls", "torch_aten")  # the PyTorch functions and ATen operators the engine ran: none


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
    """The operation on the kernel's Values (refs: the operators run in the kernel)."""
    if kind == "add_self":
        return values[0] + values[0]
    if kind == "mul_self":
        return values[0] * values[0]
    if kind in ("relu", "sum"):
        return getattr(values[0], kind)()
    a, b = values
    return {"add": lambda: a + b, "mul": lambda: a * b, "matmul": lambda: a @ b}[kind]()


def run_Value(k, inputs, record):
    """Each operation: out._backward() run once for a secret out.grad, on parents whose grads start non-zero;
    then the MLP's loss swept by the grader's own backward (given.sweep); what PyTorch ran meanwhile (given.Watch)."""
    Value = k.answers.Value
    with k.using(k.given.Watch()) as watch:
        for case, (kind, *shapes) in ENGINE_CASES.items():
            values = [Value(inputs[f"Value.{case}.in{i}"]) for i in range(len(shapes))]
            out = _engine_op(kind, values)
            record(f"{case}.out", out.data)
            for i, v in enumerate(values):
                k.setattr(v, "grad", inputs[f"Value.{case}.start{i}"])
            k.setattr(out, "grad", inputs[f"Value.{case}.grad"])  # a gradient that is not all ones
            out._backward()
            for i, v in enumerate(values):
                record(f"{case}.grad{i}", v.grad)
        leaves = {key: Value(inputs[f"Value.mlp.{key}"]) for key in ("x", "y", "w1", "b1", "w2", "b2")}
        d = (leaves["x"] @ leaves["w1"] + leaves["b1"]).relu() @ leaves["w2"] + leaves["b2"] - leaves["y"]
        loss = (d * d).sum()
        k.given.sweep(loss)
        record("mlp.loss", loss.data)
        for key, v in leaves.items():
            record(f"mlp.grad_{key}", v.grad)
    record_torch(record, watch)


def record_torch(record, watch) -> None:
    """What PyTorch ran while the engine's code did (given.Watch): the functions, the ATen operators."""
    record(TORCH_CALLS[0], watch.names)
    record(TORCH_CALLS[1], watch.aten)


def engine_judge(exercise: str):
    """No PyTorch call while the engine ran; then every value compared within ENGINE_TOLERANCE."""
    def judge(got: dict, want: dict) -> str | None:
        names = [str(n) for key in TORCH_CALLS for n in np.ravel(got.get(key, np.asarray([])))]
        if names:
            return (f"{exercise} called PyTorch ({', '.join(names[:4])}); the engine works on NumPy arrays alone, "
                    f"with gradients you derive for each operation {UNSEEN}")
        return compare_records(exercise, got, {k: v for k, v in want.items() if k not in TORCH_CALLS},
                               ENGINE_TOLERANCE)

    return judge


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


def run_backward(k, inputs, record):
    """backward(root) on each stand-in graph (given.graph): every node's grad, and how often each reachable node
    ran; what PyTorch ran meanwhile (given.Watch)."""
    with k.using(k.given.Watch()) as watch:
        for g in ("a", "b"):
            nodes = k.given.graph(inputs[f"backward.{g}.parents"], inputs[f"backward.{g}.weights"])
            k.answers.backward(nodes[-1])
            record(f"{g}.grads", k.given.node_grads(nodes))
            record(f"{g}.calls", k.given.node_calls(nodes))
    record_torch(record, watch)


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
        "LayerNorm": Exercise(run_LayerNorm, tolerance=LAYERNORM_TOLERANCE,
                              judge=norm_judge("LayerNorm", LAYERNORM_NAMES, "every row")),
        "BatchNorm": Exercise(run_BatchNorm, tolerance=LAYERNORM_TOLERANCE,
                              judge=norm_judge("BatchNorm", BATCHNORM_NAMES, "every example and position")),
        "Value": Exercise(run_Value, tolerance=ENGINE_TOLERANCE, judge=engine_judge("Value")),
        "backward": Exercise(run_backward, tolerance=ENGINE_TOLERANCE, judge=engine_judge("backward")),
    },
)

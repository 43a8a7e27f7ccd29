"""Probes of 02_autograd: the functions on problems, upstream gradients and graphs the notebook never showed."""

from __future__ import annotations

import numpy as np

ASSIGNMENT = "02_autograd"

# Graphs built from the inputs alone, by the same code in the student's kernel (graph_ops runs on them)
# and here (the reference walks them): random chains of operations that reuse earlier results, and a few
# fixed shapes that a walk without a visited set, or along first inputs only, gets wrong.
GRAPHS = r'''
def _probe_graphs(inputs):
    """name -> tensor, the same graphs wherever it runs on the same inputs."""
    import torch

    unary = (torch.exp, torch.tanh, torch.sin, torch.relu, torch.sigmoid, torch.abs, lambda t: t * 2, lambda t: -t)
    binary = (torch.add, torch.mul, torch.sub, torch.maximum)
    values = torch.tensor(inputs["graph_ops.values"])  # (leaves, m)
    graphs = {}
    for g, (codes, picks) in enumerate(zip(inputs["graph_ops.codes"], inputs["graph_ops.picks"])):
        nodes = [values[i].clone().requires_grad_(i < 3) for i in range(values.shape[0])]  # 3 weights, data
        current = nodes[0]
        for code, pick in zip(codes.tolist(), picks.tolist()):
            other = nodes[pick % len(nodes)]  # any earlier tensor: leaves and results are reused
            if code % 2:
                current = binary[code // 2 % len(binary)](current, other)
            else:
                current = unary[code // 2 % len(unary)](current)
            nodes.append(current)
        graphs[f"random{g}"] = (current * nodes[picks[-1] % len(nodes)]).sum() if g % 2 else current.mean()
    w = values[0].clone().requires_grad_(True)
    z = w * values[1] + values[2]
    graphs["diamond"] = (z * z + z.sin()).sum()
    graphs["leaf used three times"] = (w * w * w).sum() + w.sum()
    graphs["branch on the second input"] = (values[3] * torch.tanh(w)).sum()
    graphs["a leaf"] = w
    with torch.no_grad():
        graphs["made under no_grad"] = w * 2
    graphs["data only"] = values[1].exp().sum()
    return graphs
'''

# Helpers for the snippets (names start with _probe so that they cannot hide a student's).
KERNEL_PRELUDE = GRAPHS + r'''

def _probe_tensors(inputs, dtype, *keys, grad=()):
    """Fresh tensors of `dtype` from the inputs; those named in `grad` require grad."""
    import torch

    return [torch.tensor(inputs[k], dtype=dtype).requires_grad_(k in grad) for k in keys]


def _probe_copy(value):
    """A tensor copied before the student's code can change it in place; anything else as it is."""
    import torch

    return value.detach().clone() if isinstance(value, torch.Tensor) else value
'''


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A small problem of random size, upstream gradients, stale .grad, random graphs, tensors to convert."""
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 12, size=4))
    m, graphs, length = int(rng.integers(3, 7)), 3, int(rng.integers(6, 12))
    return {
        "x": rng.standard_normal((n, d_in)), "y": rng.standard_normal((n, d_out)),
        "w1": rng.standard_normal((d_in, h)) * 0.3, "w2": rng.standard_normal((h, d_out)) * 0.3,
        "forward.grad": rng.standard_normal((n, d_out)),  # dL/dy_pred, not all ones
        "gradients.stale_w2": rng.standard_normal((h, d_out)),  # left in w2.grad by some earlier backward()
        "train.learning_rate": np.asarray(1e-3 * rng.uniform(1, 4)),
        "train.steps": np.asarray(int(rng.integers(4, 9))),
        "graph_ops.values": rng.standard_normal((5, m)),
        "graph_ops.codes": rng.integers(0, 100, size=(graphs, length)),
        "graph_ops.picks": rng.integers(0, 100, size=(graphs, length)),
        "to_numpy.f64": rng.standard_normal(tuple(int(v) for v in rng.integers(1, 5, size=2))),
        "to_numpy.f32": rng.standard_normal(int(rng.integers(2, 7))).astype(np.float32),
        "to_numpy.i64": rng.integers(-50, 50, size=int(rng.integers(2, 7))),
    }


KERNEL_CODE = {
    "torch_mlp_forward": """
import torch
x, w1, w2 = _probe_tensors(inputs, torch.float64, 'x', 'w1', 'w2', grad=('w1', 'w2'))
y_pred = torch_mlp_forward(x, w1, w2)
record('y_pred', y_pred)
record('dtype', str(y_pred.dtype))
record('attached_to_the_graph', bool(y_pred.requires_grad))
if y_pred.requires_grad:
    grads = torch.autograd.grad(y_pred, (w1, w2), torch.tensor(inputs['forward.grad']), allow_unused=True)
    for name, grad in zip(('w1', 'w2'), grads):
        record(f'gradient_reaches_{name}', grad is not None)
        if grad is not None:
            record(f'grad_{name}', grad)
x32, w1_32, w2_32 = _probe_tensors(inputs, torch.float32, 'x', 'w1', 'w2')
y32 = torch_mlp_forward(x32, w1_32, w2_32)
record('y_pred32', y32)
record('dtype32', str(y32.dtype))
""",
    "autograd_gradients": """
import torch
for tag, dtype in (('', torch.float64), ('32', torch.float32)):
    x, y, w1, w2 = _probe_tensors(inputs, dtype, 'x', 'y', 'w1', 'w2', grad=('w1', 'w2'))
    w2.grad = torch.tensor(inputs['gradients.stale_w2'], dtype=dtype)
    for call in ('first', 'second'):
        grad_w1, grad_w2 = autograd_gradients(x, y, w1, w2)
        record(f'grad_w1.{call}{tag}', _probe_copy(grad_w1))
        record(f'grad_w2.{call}{tag}', _probe_copy(grad_w2))
        record(f'no_grad_left.{call}{tag}', [w.grad is None or not bool(w.grad.any()) for w in (w1, w2)])
""",
    "train_autograd_mlp": """
import torch
learning_rate, steps = float(inputs['train.learning_rate']), int(inputs['train.steps'])
for tag, dtype, n_steps in (('', torch.float64, steps), ('32', torch.float32, 3)):
    x, y, w1, w2 = _probe_tensors(inputs, dtype, 'x', 'y', 'w1', 'w2', grad=('w1', 'w2'))
    losses = train_autograd_mlp(x, y, w1, w2, learning_rate, n_steps)
    record(f'losses{tag}', [float(v) for v in losses])
    record(f'losses_are_floats{tag}', all(isinstance(v, float) for v in losses))
    record(f'w1{tag}', w1)
    record(f'w2{tag}', w2)
    record(f'still_leaves_that_require_grad{tag}', [w1.is_leaf, w1.requires_grad, w2.is_leaf, w2.requires_grad])
""",
    "graph_ops": """
for name, t in _probe_graphs(inputs).items():
    record(name, list(graph_ops(t)))
""",
    "to_numpy": """
import torch


class _ProbeGpuLike(torch.Tensor):
    \"\"\"A CPU tensor that converts to NumPy only as a CUDA tensor does: after .cpu() or .to('cpu').\"\"\"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (torch.Tensor.numpy, torch.Tensor.__array__):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first (a stand-in for a GPU tensor: call .cpu())")
        result = super().__torch_function__(func, types, args, kwargs)
        to_cpu = func is torch.Tensor.cpu or (
            func is torch.Tensor.to and any(str(a) == 'cpu' for a in [*args[1:], *kwargs.values()]))
        return result.as_subclass(torch.Tensor) if to_cpu and isinstance(result, torch.Tensor) else result


leaf = torch.tensor(inputs['to_numpy.f64'], requires_grad=True)
cases = {'gpu': (leaf * 3).as_subclass(_ProbeGpuLike), 'leaf': leaf,
         'float32': torch.tensor(inputs['to_numpy.f32'], requires_grad=True) * 2,
         'int64': torch.tensor(inputs['to_numpy.i64']), 'scalar': (leaf ** 2).sum()}
for name, t in cases.items():
    array = to_numpy(t)
    record(f'{name}.is_ndarray', isinstance(array, np.ndarray))
    record(f'{name}.dtype', str(array.dtype) if isinstance(array, np.ndarray) else type(array).__name__)
    record(name, array)
""",
    "answer_is_leaf": "for key in ('x', 'w', 'prediction', 'loss'):\n    record(key, answer_is_leaf[key])\n"
                      "record('keys', sorted(answer_is_leaf))",
    "answer_requires_grad": "for key in ('x', 'w', 'prediction', 'loss'):\n    record(key, answer_requires_grad[key])\n"
                            "record('keys', sorted(answer_requires_grad))",
    "answer_grad_is_none": "for key in ('x', 'w', 'prediction'):\n    record(key, answer_grad_is_none[key])\n"
                           "record('keys', sorted(answer_grad_is_none))",
    "answer_retain_grad": "record('value', answer_retain_grad)",
    "answer_detach": "for key in ('requires_grad', 'shares_memory', 'numpy_raises'):\n"
                     "    record(key, answer_detach[key])\nrecord('keys', sorted(answer_detach))",
    "answer_no_grad": "for key in ('requires_grad', 'is_leaf', 'backward_raises'):\n"
                      "    record(key, answer_no_grad[key])\nrecord('keys', sorted(answer_no_grad))",
}


def probe_graphs(inputs: dict[str, np.ndarray]) -> dict:
    """The graphs the kernel built from these inputs, built again here."""
    namespace: dict = {}
    exec(GRAPHS, namespace)
    return namespace["_probe_graphs"](inputs)


def regression_graph() -> dict:
    """The notebook's read-only regression cell, rebuilt: x, y, w, b, prediction, loss."""
    import torch

    generator = torch.Generator().manual_seed(0)
    x = torch.arange(0, 10, 0.1)[:, None]
    y = 3 * x + torch.randn(x.shape, generator=generator)
    w = torch.zeros(1, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    prediction = x @ w.T + b
    loss = torch.mean((prediction - y) ** 2)
    return {"x": x, "y": y, "w": w, "b": b, "prediction": prediction, "loss": loss}


def _answers(values: dict) -> dict[str, np.ndarray]:
    return {**{key: np.asarray(value) for key, value in values.items()}, "keys": np.asarray(sorted(values))}


def expected(inputs: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """The reference answers on the same inputs."""
    import torch

    from helpers.reference import autograd as ref

    def tensors(dtype, grad=True):
        return [torch.tensor(inputs[k], dtype=dtype).requires_grad_(grad and k in ("w1", "w2"))
                for k in ("x", "y", "w1", "w2")]

    x, _, w1, w2 = tensors(torch.float64)
    y_pred = ref.torch_mlp_forward(x, w1, w2)
    grad_w1, grad_w2 = torch.autograd.grad(y_pred, (w1, w2), torch.tensor(inputs["forward.grad"]))
    x32, _, w1_32, w2_32 = tensors(torch.float32, grad=False)
    forward = {"y_pred": y_pred, "dtype": "torch.float64", "attached_to_the_graph": True,
               "gradient_reaches_w1": True, "grad_w1": grad_w1, "gradient_reaches_w2": True, "grad_w2": grad_w2,
               "y_pred32": ref.torch_mlp_forward(x32, w1_32, w2_32), "dtype32": "torch.float32"}

    gradients = {}
    for tag, dtype in (("", torch.float64), ("32", torch.float32)):
        x, y, w1, w2 = tensors(dtype)
        grad_w1, grad_w2 = ref.autograd_gradients(x, y, w1, w2)
        for call in ("first", "second"):
            gradients.update({f"grad_w1.{call}{tag}": grad_w1, f"grad_w2.{call}{tag}": grad_w2,
                              f"no_grad_left.{call}{tag}": [True, True]})

    train = {}
    learning_rate, steps = float(inputs["train.learning_rate"]), int(inputs["train.steps"])
    for tag, dtype, n_steps in (("", torch.float64, steps), ("32", torch.float32, 3)):
        x, y, w1, w2 = tensors(dtype)
        losses = ref.train_autograd_mlp(x, y, w1, w2, learning_rate, n_steps)
        train.update({f"losses{tag}": losses, f"losses_are_floats{tag}": True, f"w1{tag}": w1, f"w2{tag}": w2,
                      f"still_leaves_that_require_grad{tag}": [True] * 4})

    leaf = torch.tensor(inputs["to_numpy.f64"])
    arrays = {"gpu": (leaf * 3).numpy(), "leaf": leaf.numpy(), "float32": inputs["to_numpy.f32"] * np.float32(2),
              "int64": inputs["to_numpy.i64"], "scalar": (leaf ** 2).sum().numpy()}
    to_numpy = {}
    for name, array in arrays.items():
        to_numpy.update({f"{name}.is_ndarray": True, f"{name}.dtype": str(array.dtype), name: array})

    graph = regression_graph()
    results = {
        "torch_mlp_forward": forward,
        "autograd_gradients": gradients,
        "train_autograd_mlp": train,
        "graph_ops": {name: ref.graph_ops(t) for name, t in probe_graphs(inputs).items()},
        "to_numpy": to_numpy,
        "answer_is_leaf": _answers(ref.answer_is_leaf),
        "answer_requires_grad": _answers(ref.answer_requires_grad),
        "answer_grad_is_none": _answers(ref.answer_grad_is_none),
        "answer_retain_grad": {"value": ref.answer_retain_grad(graph["prediction"], graph["y"])},
        "answer_detach": _answers(ref.answer_detach),
        "answer_no_grad": _answers(ref.answer_no_grad),
    }
    return {exercise: {key: _plain(value) for key, value in want.items()} for exercise, want in results.items()}


def _plain(value) -> np.ndarray:
    """What the kernel's `record` would make of `value`: a plain array."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


# float32 results are compared with the reference's float32 run: rounding, not mistakes, differs.
TOLERANCE = {"torch_mlp_forward": {"rtol": 1e-5, "atol": 1e-6},
             "autograd_gradients": {"rtol": 1e-4, "atol": 1e-4},
             "train_autograd_mlp": {"rtol": 1e-4, "atol": 1e-5},
             "answer_retain_grad": {"rtol": 1e-5, "atol": 1e-7}}

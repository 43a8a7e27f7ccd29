"""Probes of 04_nn_modules: the student's modules on secret weights and inputs, outputs and gradients.

Each module is built by the student's code at sizes the notebook never used, then its nn.Linear
layers receive secret weights (so the check does not depend on how the student's code draws its
initial values); forward and backward run in float64. The trusted side runs the same functions on the reference in `helpers.reference`.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from autograder.probes import Exercise, Probe, Tolerance


def probe_tensor(inputs, key):
    """One secret input as a float64 tensor of its own."""
    return torch.tensor(inputs[key], dtype=torch.float64)


def probe_floats(values):
    """values as floats, tensors detached first (a wrong type is judged apart)."""
    return [float(v.detach()) if isinstance(v, torch.Tensor) else float(v) for v in values]


def probe_sizes(inputs, *keys):
    """Secret sizes as Python ints."""
    return [int(inputs[key]) for key in keys]


def probe_load(layers, inputs, prefix):
    """Copy the secret weights prefix.w<i> and prefix.b<i> into the i-th nn.Linear of layers."""
    count = sum(1 for key in inputs if key.startswith(prefix + ".w"))
    if len(layers) != count:
        raise ValueError(f"found {len(layers)} nn.Linear layer(s); expected {count}")
    with torch.no_grad():
        for i, layer in enumerate(layers):
            for name in ("weight", "bias"):
                value, mine = probe_tensor(inputs, f"{prefix}.{name[0]}{i}"), getattr(layer, name)
                if mine is None or tuple(mine.shape) != tuple(value.shape):
                    shape = None if mine is None else tuple(mine.shape)
                    raise ValueError(f"nn.Linear layer {i + 1} has {name} of shape {shape}; "
                                     f"expected {tuple(value.shape)}")
                mine.copy_(value)


def probe_forward_backward(model, layers, inputs, record, c_key="c"):
    """model(x), and the gradients of sum(c * model(x)) for x and every layer's weight and bias."""
    x = probe_tensor(inputs, "x").requires_grad_(True)
    out = model(x)
    record("out", out)
    (out * probe_tensor(inputs, c_key)).sum().backward()
    record("grad_x", x.grad)
    for i, layer in enumerate(layers):
        record(f"grad_weight{i}", layer.weight.grad)
        record(f"grad_bias{i}", layer.bias.grad)


def probe_build_sequential(build_sequential, inputs, record):
    """build_sequential at secret sizes, on the secret weights."""
    torch.manual_seed(int(inputs["seed"]))
    model = build_sequential(*probe_sizes(inputs, "d_in", "h", "d_out"))
    record("is_sequential", isinstance(model, nn.Sequential))
    model = model.double()
    layers = [m for m in model.modules() if isinstance(m, nn.Linear)]
    probe_load(layers, inputs, "net")
    record("parameters", sum(p.numel() for p in model.parameters()))
    probe_forward_backward(model, layers, inputs, record)


def probe_two_layer_net(TwoLayerNet, inputs, record):
    """TwoLayerNet at secret sizes: its parameter names, then the secret weights in linear1, linear2."""
    torch.manual_seed(int(inputs["seed"]))
    model = TwoLayerNet(*probe_sizes(inputs, "d_in", "h", "d_out")).double()
    record("names", sorted(name for name, _ in model.named_parameters()))
    layers = [model.linear1, model.linear2]
    probe_load(layers, inputs, "net")
    probe_forward_backward(model, layers, inputs, record)


def probe_parallel_block(ParallelBlock, inputs, record):
    """Two ParallelBlocks in a Sequential (d_in -> h -> h), on secret weights."""
    torch.manual_seed(int(inputs["seed"]))
    d_in, h = probe_sizes(inputs, "d_in", "h")
    model = nn.Sequential(ParallelBlock(d_in, h), ParallelBlock(h, h)).double()
    record("separate_layers", [block.linear1 is not block.linear2 for block in model])
    record("parameters", len(list(model.parameters())))
    layers = [layer for block in model for layer in (block.linear1, block.linear2)]
    probe_load(layers, inputs, "parallel")
    probe_forward_backward(model, layers, inputs, record, c_key="parallel.c")


def probe_linear_regression(LinearRegression, inputs, record):
    """LinearRegression(d): registered zero parameters, then forward and gradients on secret w, b."""
    d = int(inputs["regression.d"])
    model = LinearRegression(d)
    record("names", sorted(name for name, _ in model.named_parameters()))
    record("w_start", model.w)
    record("b_start", model.b)
    record("default_dtype", [p.dtype == torch.get_default_dtype() for p in (model.w, model.b)])
    model = model.double()
    if not all(p.dtype == torch.float64 for p in (model.w, model.b)):
        raise ValueError("after .double(), w and b are not float64: are they registered nn.Parameters?")
    with torch.no_grad():
        model.w.copy_(probe_tensor(inputs, "regression.w"))
        model.b.copy_(probe_tensor(inputs, "regression.b"))
    x = probe_tensor(inputs, "regression.x").requires_grad_(True)
    out = model(x)
    record("out", out)
    (out * probe_tensor(inputs, "regression.c")).sum().backward()
    record("grad_w", model.w.grad)
    record("grad_b", model.b.grad)
    record("grad_x", x.grad)


class ProbeScaled(nn.Module):
    """A parameter of its own beside a submodule, and a buffer that is not a parameter."""

    def __init__(self, a, b):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(a, b))
        self.inner = nn.Linear(b, a)
        self.register_buffer("running", torch.zeros(a))


def probe_count_models(inputs):
    """Models with buffers, frozen layers, a frozen bias, and parameters outside any submodule."""
    torch.manual_seed(int(inputs["seed"]))
    a, b, c, d = probe_sizes(inputs, "count.a", "count.b", "count.c", "count.d")
    middle_frozen = nn.Sequential(nn.Linear(a, b), nn.Linear(b, c), nn.Linear(c, d))
    middle_frozen[1].requires_grad_(False)
    bias_frozen = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c))
    bias_frozen[2].bias.requires_grad_(False)
    conv = nn.Sequential(nn.Conv2d(a, b, 3), nn.BatchNorm2d(b), nn.ReLU())
    conv[1].requires_grad_(False)
    scaled = ProbeScaled(a, c)
    scaled.inner.weight.requires_grad_(False)
    return [nn.Sequential(nn.Linear(a, b), nn.BatchNorm1d(b), nn.Linear(b, 1)), middle_frozen,
            nn.Linear(c, d).requires_grad_(False), bias_frozen, conv, scaled]


def probe_count_parameters(count_parameters, inputs, record):
    """count_parameters on every model of probe_count_models: the counts, and that each is an int."""
    counts = [count_parameters(model) for model in probe_count_models(inputs)]
    record("is_int", [isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in counts])
    record("counts", [int(n) for n in counts])


def probe_mlp(inputs):
    """Linear(d_in, h), Tanh, Linear(h, d_out) in float64 with the secret weights."""
    d_in, h, d_out = probe_sizes(inputs, "d_in", "h", "d_out")
    model = nn.Sequential(nn.Linear(d_in, h), nn.Tanh(), nn.Linear(h, d_out)).double()
    probe_load([model[0], model[2]], inputs, "net")
    return model


def probe_train_manual_sgd(train_manual_sgd, inputs, record):
    """Secret data, learning rate and steps: the losses and final weights; then a half-frozen model."""
    x, y = probe_tensor(inputs, "x"), probe_tensor(inputs, "train.y")
    learning_rate, steps = float(inputs["train.learning_rate"]), int(inputs["train.steps"])
    model = probe_mlp(inputs)
    losses = train_manual_sgd(model, x, y, learning_rate, steps)
    record("losses_are_floats", [isinstance(v, float) for v in losses])
    record("losses", probe_floats(losses))
    for i, p in enumerate(model.parameters()):
        record(f"trained{i}", p)
    frozen = probe_mlp(inputs)
    frozen[0].requires_grad_(False)
    losses = train_manual_sgd(frozen, x, y, learning_rate, 2)
    record("frozen_losses", probe_floats(losses))
    for i, p in enumerate(frozen.parameters()):
        record(f"frozen{i}", p)


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Secret sizes, weights, data and training settings."""
    d_in, h, d_out = (int(v) for v in rng.integers(3, 9, size=3))
    n = int(rng.integers(5, 12))
    inputs = {
        "seed": np.asarray(int(rng.integers(2**31))), "d_in": np.asarray(d_in), "h": np.asarray(h),
        "d_out": np.asarray(d_out), "x": rng.standard_normal((n, d_in)), "c": rng.standard_normal((n, d_out)),
        "net.w0": rng.standard_normal((h, d_in)) * 0.5, "net.b0": rng.standard_normal(h) * 0.5,
        "net.w1": rng.standard_normal((d_out, h)) * 0.5, "net.b1": rng.standard_normal(d_out) * 0.5,
    }
    parallel_shapes = [(h, d_in), (h, d_in), (h, h), (h, h)]  # block 1: linear1, linear2; block 2 the same
    for i, shape in enumerate(parallel_shapes):
        inputs[f"parallel.w{i}"] = rng.standard_normal(shape) * 0.7
        inputs[f"parallel.b{i}"] = rng.standard_normal(shape[0]) * 0.7
    inputs["parallel.c"] = rng.standard_normal((n, h))
    d = int(rng.integers(2, 9))
    inputs.update({
        "regression.d": np.asarray(d), "regression.w": rng.standard_normal((1, d)),
        "regression.b": rng.standard_normal(1), "regression.x": rng.standard_normal((n, d)),
        "regression.c": rng.standard_normal((n, 1)),
        **{f"count.{k}": np.asarray(int(v)) for k, v in zip("abcd", rng.integers(2, 12, size=4))},
        "train.y": rng.standard_normal((n, d_out)), "train.learning_rate": np.asarray(rng.uniform(0.05, 0.3)),
        "train.steps": np.asarray(int(rng.integers(4, 10))),
    })
    return inputs


def driver(name: str, probe_function):
    """A run that hands the answer called `name` to probe_function(answer, inputs, record)."""
    def run(answers, inputs, record):
        probe_function(getattr(answers, name), inputs, record)
    run.__name__ = f"run_{name}"
    return run


# float64 throughout; as tight as the notebook's own tests.
TIGHT = Tolerance(1e-7, 1e-10)
PROBE = Probe(
    assignment="04_nn_modules",
    reference="helpers.reference.nn_modules",
    make_inputs=make_inputs,
    exercises={
        "build_sequential": Exercise(driver("build_sequential", probe_build_sequential), tolerance=TIGHT),
        "TwoLayerNet": Exercise(driver("TwoLayerNet", probe_two_layer_net), tolerance=TIGHT),
        "ParallelBlock": Exercise(driver("ParallelBlock", probe_parallel_block), tolerance=TIGHT),
        "LinearRegression": Exercise(driver("LinearRegression", probe_linear_regression), tolerance=TIGHT),
        "count_parameters": Exercise(driver("count_parameters", probe_count_parameters), tolerance=TIGHT),
        "train_manual_sgd": Exercise(driver("train_manual_sgd", probe_train_manual_sgd), tolerance=TIGHT),
    },
)

"""Probes of 04_nn_modules: the student's modules on secret weights and inputs, outputs and gradients.

Each module is built by the student's code at sizes the notebook never used, then its nn.Linear
layers receive secret weights (so the check does not depend on how the student's code draws its
initial values); forward and backward run in float64. The trusted side runs the same functions on the reference in `helpers.reference`.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode

from autograder.probes import PRIVATE, Exercise, Probe, Tolerance


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


# -- convolution ------------------------------------------------------------------------------------

class ProbeOps(TorchFunctionMode):
    """Watches the PyTorch functions a call runs: whether a convolution ran (F.conv2d, nn.Conv2d,
    torch.convolution... all have "conv" in their name), and the numbers read that did not come from
    the given inputs (each storage counted once, whole: a view of a table counts the table). A function
    mode, not a dispatch mode: the latter imports torch._dynamo on first use, seconds on a busy machine."""

    def __init__(self, *inputs):
        super().__init__()
        self.convolution = False
        self.derived = {t.untyped_storage().data_ptr() for t in inputs}
        self.read: dict[int, int] = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if "conv" in getattr(func, "__name__", ""):
            self.convolution = True
        values = [*args, *(kwargs or {}).values()]
        for t in [v for value in values for v in (value if isinstance(value, (list, tuple)) else (value,))]:
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in self.derived:
                storage = t.untyped_storage()
                self.read[storage.data_ptr()] = storage.nbytes() // max(t.element_size(), 1)
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.derived.add(t.untyped_storage().data_ptr())
        return out


def probe_conv_case(inputs, prefix):
    """x, weight, bias (None where the case has none) as float64 tensors; stride and padding as ints."""
    bias = probe_tensor(inputs, prefix + ".bias") if int(inputs[prefix + ".with_bias"]) else None
    return (probe_tensor(inputs, prefix + ".x"), probe_tensor(inputs, prefix + ".weight"), bias,
            int(inputs[prefix + ".stride"]), int(inputs[prefix + ".padding"]))


CONV_CASES = ("conv.a", "conv.b", "conv.c")


def run_conv2d_forward(answers, inputs, record):
    """conv2d_forward on three secret cases; whether PyTorch's convolution ran inside it."""
    for prefix in CONV_CASES:
        x, weight, bias, stride, padding = probe_conv_case(inputs, prefix)
        watch = ProbeOps()
        with watch:
            out = answers.conv2d_forward(x, weight, bias, stride=stride, padding=padding)
        record(prefix + ".used_convolution", watch.convolution)
        record(prefix + ".out", out)


def run_conv2d_backward(answers, inputs, record):
    """conv2d_backward on three secret cases and upstream gradients; whether PyTorch's convolution ran."""
    for prefix in CONV_CASES:
        x, weight, _, stride, padding = probe_conv_case(inputs, prefix)
        watch = ProbeOps()
        with watch:
            grads = answers.conv2d_backward(probe_tensor(inputs, prefix + ".grad_out"), x, weight,
                                            stride=stride, padding=padding)
        record(prefix + ".used_convolution", watch.convolution)
        record(prefix + ".returns", len(grads) if isinstance(grads, (tuple, list)) else -1)
        for name, grad in zip(("grad_x", "grad_weight", "grad_bias"), grads):
            record(f"{prefix}.{name}", grad)


def expected_conv2d_backward(inputs) -> dict:
    """The gradients by autograd through F.conv2d."""
    want = {}
    for prefix in CONV_CASES:
        x, weight, _, stride, padding = probe_conv_case(inputs, prefix)
        leaves = [t.requires_grad_(True) for t in (x, weight, torch.zeros(weight.shape[0], dtype=torch.float64))]
        out = F.conv2d(*leaves, stride=stride, padding=padding)
        grads = torch.autograd.grad(out, leaves, probe_tensor(inputs, prefix + ".grad_out"))
        want.update({prefix + ".used_convolution": False, prefix + ".returns": 3})
        want.update({f"{prefix}.{name}": g for name, g in zip(("grad_x", "grad_weight", "grad_bias"), grads)})
    return want


def expected_conv2d_forward(inputs) -> dict:
    """F.conv2d itself."""
    want = {}
    for prefix in CONV_CASES:
        x, weight, bias, stride, padding = probe_conv_case(inputs, prefix)
        want[prefix + ".used_convolution"] = False
        want[prefix + ".out"] = F.conv2d(x, weight, bias, stride=stride, padding=padding)
    return want


def conv_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Three secret convolutions: one with stride 2 or 3 and padding, one with several channels and a
    non-square kernel, one with a large padding; each with its upstream gradient."""
    inputs = {}
    settings = [(int(rng.integers(2, 4)), 1, 3, 3), (1, 0, 2, 3), (int(rng.integers(1, 3)), 2, 3, 2)]
    for prefix, (stride, padding, kh, kw) in zip(CONV_CASES, settings):
        n, c_in, c_out = (int(v) for v in rng.integers(2, 5, size=3))
        h, w = (int(v) for v in rng.integers(6, 11, size=2))
        h_out, w_out = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
        inputs.update({
            prefix + ".x": rng.standard_normal((n, c_in, h, w)),
            prefix + ".weight": rng.standard_normal((c_out, c_in, kh, kw)),
            prefix + ".bias": rng.standard_normal(c_out), prefix + ".with_bias": np.asarray(prefix != "conv.c"),
            prefix + ".stride": np.asarray(stride), prefix + ".padding": np.asarray(padding),
            prefix + ".grad_out": rng.standard_normal((n, c_out, h_out, w_out)),
        })
    return inputs


# -- the digits CNN -------------------------------------------------------------------------------------

DIGITS_TRAIN = 500  # as the notebook: 500 training images, the other 1,297 held out
DIGITS_MLP_SIZE = 64 * 100 + 100 + 100 * 10 + 10  # build_sequential(64, 100, 10)
DIGITS_FLOOR = 0.90  # below it DigitsCNN has not learned the digits, and fails as a whole (the MLP: 95-97 %)
# Splits the CNN and the MLP are each trained on; judged on the mean held-out accuracy. On one split the
# reference CNN beat the MLP by 1.5 % on average with a standard deviation of 0.66 % (30 splits), and lost
# about one split in a hundred: a sound CNN could lose its points by luck. On the mean of three the
# deviation is 0.38 %, four of them between the reference and the bar (tests/test_digits_judge.py).
DIGITS_SPLITS = 3


def probe_train_classifier(model, x, y, seed, epochs=36, batch_size=64, learning_rate=1e-2):
    """The notebook's train_classifier: Adam on the cross-entropy, shuffled mini-batches from seed."""
    order = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small model trains fastest on one thread, and to the same numbers anywhere
    try:
        for _ in range(epochs):
            for batch in torch.randperm(len(y), generator=order).split(batch_size):
                loss = F.cross_entropy(model(x[batch]), y[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return model


def digits_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """DIGITS_SPLITS secret splits of the digits, stacked (a seed each); the held-out labels stay on the
    trusted side."""
    from helpers.data import digits

    pixels, labels = digits()
    orders = [rng.permutation(len(labels)) for _ in range(DIGITS_SPLITS)]
    train, test = np.stack([o[:DIGITS_TRAIN] for o in orders]), np.stack([o[DIGITS_TRAIN:] for o in orders])
    return {"digits.seed": rng.integers(2**31, size=DIGITS_SPLITS),
            "digits.x_train": pixels[train].reshape(DIGITS_SPLITS, -1, 1, 8, 8), "digits.y_train": labels[train],
            "digits.x_test": pixels[test].reshape(DIGITS_SPLITS, -1, 1, 8, 8), PRIVATE + "digits.y_test": labels[test]}


def run_digits_cnn(answers, inputs, record):
    """DigitsCNN: its layers, size and the numbers its forward pass reads; then, on each secret split, a
    fresh one trained by the notebook's train_classifier, its predictions on the held-out images."""
    seeds = [int(seed) for seed in np.ravel(inputs["digits.seed"])]
    predictions = []
    for split, seed in enumerate(seeds):
        torch.manual_seed(seed)
        model = answers.DigitsCNN()
        x_test = torch.from_numpy(inputs["digits.x_test"][split])
        if split == 0:
            record("has_conv", any(isinstance(m, nn.Conv2d) for m in model.modules()))
            record("size", sum(p.numel() for p in model.parameters() if p.requires_grad))
            watch = ProbeOps(x_test)
            with watch, torch.no_grad():
                record("shape", list(model(x_test[:5]).shape))
            record("reads", sum(watch.read.values()))
        model = probe_train_classifier(model, torch.from_numpy(inputs["digits.x_train"][split]),
                                       torch.from_numpy(inputs["digits.y_train"][split]), seed)
        with torch.no_grad():
            predictions.append(model(x_test).argmax(dim=1))
    record("predictions", torch.stack(predictions))


def expected_digits_cnn(inputs) -> dict:
    """The MLP of the notebook trained the same way on the same splits: its mean held-out accuracy is the one
    to beat."""
    labels = inputs[PRIVATE + "digits.y_test"]
    correct = []
    for split, seed in enumerate(int(seed) for seed in np.ravel(inputs["digits.seed"])):
        torch.manual_seed(seed)
        mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 100), nn.ReLU(), nn.Linear(100, 10))
        mlp = probe_train_classifier(mlp, torch.from_numpy(inputs["digits.x_train"][split]),
                                     torch.from_numpy(inputs["digits.y_train"][split]), seed)
        with torch.no_grad():
            correct.append(mlp(torch.from_numpy(inputs["digits.x_test"][split])).argmax(dim=1).numpy() == labels[split])
    return {"labels": labels, "mlp_accuracy": float(np.mean(correct))}


def judge_digits_cnn(got: dict, want: dict) -> str | None:
    """A CNN within the MLP's budget, reading no more numbers than that, with (N, 10) outputs."""
    missing = [k for k in ("has_conv", "size", "shape", "reads") if k not in got]
    if missing:
        return f"DigitsCNN gave no {missing[0]}"
    if not bool(got["has_conv"]):
        return "DigitsCNN holds no nn.Conv2d layer"
    if int(got["size"]) > DIGITS_MLP_SIZE:
        return f"DigitsCNN has {int(got['size']):,} trainable parameters; the budget is {DIGITS_MLP_SIZE:,}"
    if int(got["reads"]) > DIGITS_MLP_SIZE:
        return (f"DigitsCNN's forward pass reads {int(got['reads']):,} numbers besides its input; the budget is "
                f"{DIGITS_MLP_SIZE:,}")
    if [int(v) for v in np.ravel(got["shape"])] != [5, 10]:
        return f"DigitsCNN()(x) for x of shape (5, 1, 8, 8) has shape {tuple(np.ravel(got['shape']))}; expected (5, 10)"
    accuracy = digits_accuracy(got, want)
    if isinstance(accuracy, str):
        return accuracy
    if accuracy < DIGITS_FLOOR:
        return (f"trained on the grader's {DIGITS_SPLITS} splits of the digits, DigitsCNN reached {accuracy:.1%} "
                f"on the held-out images (the mean): it has not learned them (the MLP reaches "
                f"{float(want['mlp_accuracy']):.1%})")
    return None


def digits_accuracy(got: dict, want: dict) -> float | str:
    """The held-out accuracy of DigitsCNN's predictions, the mean over the splits (all of one size), or what
    is wrong with them."""
    if "predictions" not in got:
        return "DigitsCNN gave no predictions"
    predictions, labels = np.ravel(got["predictions"]), np.ravel(want["labels"])
    if predictions.shape != labels.shape:
        return f"DigitsCNN gave {predictions.size} predictions for {labels.size} held-out digits"
    return float((predictions == labels).mean())


def judge_digits_cnn_beats_mlp(got: dict, want: dict) -> str | None:
    """Trained on each of the grader's splits, the CNN's mean held-out accuracy is above the MLP's."""
    accuracy, mlp = digits_accuracy(got, want), float(want["mlp_accuracy"])
    if isinstance(accuracy, str):
        return accuracy
    if accuracy <= mlp:
        return (f"trained on each of the grader's {DIGITS_SPLITS} splits of the digits, DigitsCNN reached "
                f"{accuracy:.1%} on the held-out images (the mean); the MLP {mlp:.1%}")
    return None


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
        **conv_inputs(rng), **digits_inputs(rng),
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
        "conv2d_forward": Exercise(run_conv2d_forward, expected=expected_conv2d_forward, tolerance=TIGHT),
        "conv2d_backward": Exercise(run_conv2d_backward, expected=expected_conv2d_backward, tolerance=TIGHT),
        "DigitsCNN": Exercise(run_digits_cnn, expected=expected_digits_cnn, judge=judge_digits_cnn,
                              cells={"test_DigitsCNN_beats_mlp": judge_digits_cnn_beats_mlp}),
    },
)

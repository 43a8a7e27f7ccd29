"""Probes of 04_nn_modules: the student's modules on secret weights and inputs, outputs and gradients.

Each module is built by the student's code at sizes the notebook never used, then its nn.Linear
layers receive secret weights (so the check does not depend on how the student's code draws its
initial values); forward and backward run in float64. The trusted side runs the same calls on the reference
in `helpers.reference`; the convolutions are compared with F.conv2d and autograd here, the digits CNN with the
notebook's MLP trained here on the same splits, its accuracy counted here from the logits it handed back.

Every call is made from here through the kernel's caller; the stand-ins (weights loaded, the loss
backpropagated, the models to count, the training loop, the watches) are grading/04_nn_modules/given.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.probes import PRIVATE, Exercise, Probe, Tolerance, compare_records
from autograder.probes.session import Raised

UNSEEN = "(on inputs your notebook never saw)"


def sizes(inputs, *keys) -> list[int]:
    """Secret sizes as Python ints."""
    return [int(inputs[key]) for key in keys]


def fetch(k, refs):
    """The refs (a list or dict of them) fetched in one round trip, in the form asked."""
    got = k.fetch(k.value(refs))
    if not isinstance(got, type(refs)):
        raise Raised("the kernel handed back what the grader did not ask for")
    return got


def layer_problem(state, inputs, prefix: str) -> str | None:
    """What keeps the secret weights prefix.w<i>, prefix.b<i> out of the nn.Linear layers whose [weight, bias]
    the kernel handed back; None when each has the expected shapes."""
    count = sum(1 for key in inputs if key.startswith(prefix + ".w"))
    if not isinstance(state, list) or len(state) != count:
        found = len(state) if isinstance(state, list) else 0
        return f"found {found} nn.Linear layer(s); expected {count}"
    for i, pair in enumerate(state):
        for name, mine in zip(("weight", "bias"), pair if isinstance(pair, list) else [None, None]):
            want = np.shape(inputs[f"{prefix}.{name[0]}{i}"])
            shape = mine.shape if isinstance(mine, np.ndarray) else None
            if shape != want:
                return f"nn.Linear layer {i + 1} has {name} of shape {shape}; expected {want}"
    return None


def load_layers(k, layers, inputs, prefix: str, record, more=None) -> dict | None:
    """Copy the secret weights prefix.w<i> and prefix.b<i> into the layers (a ref to a list, or a list of refs)
    when their shapes are right; `more` (name -> ref) fetched in the same round trip. None, with the problem
    recorded, when they are not."""
    got = fetch(k, {"state": k.given.weights_and_biases(layers), **(more or {})})
    if problem := layer_problem(got["state"], inputs, prefix):
        record(PROBLEM, problem)
        return None
    count = len(got["state"])
    k.given.load(layers, [inputs[f"{prefix}.w{i}"] for i in range(count)],
                 [inputs[f"{prefix}.b{i}"] for i in range(count)])
    return got


PROBLEM = "problem"  # what stopped the probe before the values, in the exercise's words


def forward_backward(k, model, layers, count: int, inputs, record, c_key="c") -> None:
    """model(x), and the gradients of sum(c * model(x)) for x and every layer's weight and bias."""
    x = k.tensor(inputs["x"], "float64", requires_grad=True)
    record("out", k.given.forward_backward(model, x, k.tensor(inputs[c_key], "float64")))
    record("grad_x", x.grad)
    for i in range(count):
        record(f"grad_weight{i}", layers[i].weight.grad)
        record(f"grad_bias{i}", layers[i].bias.grad)


def tight_judge(name: str):
    """What stopped the probe, else every expected key compared within TIGHT."""
    def judge(got: dict, want: dict) -> str | None:
        if PROBLEM in got:
            return f"{name}: {got[PROBLEM]} {UNSEEN}"
        return compare_records(name, got, want, TIGHT)

    return judge


def run_build_sequential(k, inputs, record):
    """build_sequential at secret sizes, on the secret weights."""
    k.module("torch").manual_seed(int(inputs["seed"]))
    model = k.answers.build_sequential(*sizes(inputs, "d_in", "h", "d_out"))
    record("is_sequential", k.isinstance(model, k.module("torch.nn").Sequential))
    model = model.double()
    layers = k.given.linear_layers(model)
    got = load_layers(k, layers, inputs, "net", record, {"parameters": k.given.parameters(model)})
    if got is None:
        return
    record("parameters", sum(np.size(p) for p in got["parameters"] if isinstance(p, np.ndarray)))
    forward_backward(k, model, layers, len(got["state"]), inputs, record)


def run_two_layer_net(k, inputs, record):
    """TwoLayerNet at secret sizes: its parameter names, then the secret weights in linear1, linear2."""
    k.module("torch").manual_seed(int(inputs["seed"]))
    model = k.answers.TwoLayerNet(*sizes(inputs, "d_in", "h", "d_out")).double()
    layers = [model.linear1, model.linear2]
    got = load_layers(k, layers, inputs, "net", record, {"names": k.given.parameter_names(model)})
    if got is None:
        return
    record("names", sorted(str(n) for n in got["names"]) if isinstance(got["names"], list) else "?")
    forward_backward(k, model, layers, 2, inputs, record)


def run_parallel_block(k, inputs, record):
    """Two ParallelBlocks in a Sequential (d_in -> h -> h), on secret weights: linear1 and linear2 two layers
    (their ids differ), four parameters in all."""
    k.module("torch").manual_seed(int(inputs["seed"]))
    d_in, h = sizes(inputs, "d_in", "h")
    ParallelBlock, ids = k.answers.ParallelBlock, k.module("builtins").id
    model = k.module("torch.nn").Sequential(ParallelBlock(d_in, h), ParallelBlock(h, h)).double()
    layers = [model[i].attr(name) for i in (0, 1) for name in ("linear1", "linear2")]
    got = load_layers(k, layers, inputs, "parallel", record,
                      {"ids": [ids(layer) for layer in layers], "parameters": k.given.parameters(model)})
    if got is None:
        return
    record("separate_layers", [got["ids"][0] != got["ids"][1], got["ids"][2] != got["ids"][3]])
    record("parameters", len(got["parameters"]) if isinstance(got["parameters"], list) else -1)
    forward_backward(k, model, layers, 4, inputs, record, c_key="parallel.c")


def run_linear_regression(k, inputs, record):
    """LinearRegression(d): registered zero parameters of the default dtype, then forward and gradients on secret
    w, b."""
    torch = k.module("torch")
    model = k.answers.LinearRegression(int(inputs["regression.d"]))
    record("w_start", model.w)
    record("b_start", model.b)
    first = fetch(k, {"names": k.given.parameter_names(model), "dtypes": [model.w.dtype, model.b.dtype],
                      "default": torch.get_default_dtype()})
    record("names", sorted(str(n) for n in first["names"]) if isinstance(first["names"], list) else "?")
    record("default_dtype", [dtype == first["default"] for dtype in first["dtypes"]])
    model = model.double()
    if fetch(k, [model.w.dtype, model.b.dtype]) != ["torch.float64"] * 2:
        record(PROBLEM, "after .double(), w and b are not float64: are they registered nn.Parameters?")
        return
    k.given.load_parameters(model, {"w": inputs["regression.w"], "b": inputs["regression.b"]})
    x = k.tensor(inputs["regression.x"], "float64", requires_grad=True)
    record("out", k.given.forward_backward(model, x, k.tensor(inputs["regression.c"], "float64")))
    record("grad_w", model.w.grad)
    record("grad_b", model.b.grad)
    record("grad_x", x.grad)


def run_count_parameters(k, inputs, record):
    """count_parameters on every model of given.count_models: the counts, and that each is an int."""
    models = k.given.count_models(*sizes(inputs, "count.a", "count.b", "count.c", "count.d"), int(inputs["seed"]))
    counts = fetch(k, [k.given.each(k.answers.count_parameters, models)])[0]
    counts = counts if isinstance(counts, list) else []
    record("is_int", [isinstance(n, int) and not isinstance(n, bool) for n in counts])
    record("counts", [_number(n) for n in counts])


def _number(value) -> float:
    """A returned value as a number (a 0-d array's too); nan when it is not one."""
    array = np.asarray(value) if isinstance(value, (int, float, np.ndarray)) else np.asarray(np.nan)
    return float(array) if array.size == 1 and array.dtype.kind in "biuf" else float("nan")


def run_train_manual_sgd(k, inputs, record):
    """Secret data, learning rate and steps: the losses and final weights; then a half-frozen model."""
    x, y = k.tensor(inputs["x"], "float64"), k.tensor(inputs["train.y"], "float64")
    learning_rate, steps = float(inputs["train.learning_rate"]), int(inputs["train.steps"])
    weights, biases = [inputs["net.w0"], inputs["net.w1"]], [inputs["net.b0"], inputs["net.b1"]]
    model = k.given.mlp(weights, biases)
    losses = k.given.listed(k.answers.train_manual_sgd(model, x, y, learning_rate, steps))
    trained = k.given.parameters(model)
    frozen = k.given.mlp(weights, biases)
    frozen[0].requires_grad_(False)
    frozen_losses = k.given.listed(k.answers.train_manual_sgd(frozen, x, y, learning_rate, 2))
    for i in range(4):
        record(f"trained{i}", trained[i])
        record(f"frozen{i}", k.given.parameters(frozen)[i])
    got = fetch(k, {"losses": losses, "frozen_losses": frozen_losses})
    record("losses_are_floats", [isinstance(v, float) for v in got["losses"]])
    record("losses", [_number(v) for v in got["losses"]])
    record("frozen_losses", [_number(v) for v in got["frozen_losses"]])


# -- convolution ------------------------------------------------------------------------------------

CONV_CASES = ("conv.a", "conv.b", "conv.c")
CONV_GRADS = ("grad_x", "grad_weight", "grad_bias")
GRADIENT_FUNCTIONS = ("grad", "vjp", "jvp", "jacobian", "hessian", "vhp", "hvp")  # and any "...backward..."
GRAPHLESS = ("detach", "alias", "lift_fresh", "__get__", "requires_grad_", "size", "dim")  # build no graph, whatever the grad mode


def conv_case(k, inputs, prefix):
    """x, weight, bias (None where the case has none) as float64 tensors in the kernel; stride and padding."""
    bias = k.tensor(inputs[prefix + ".bias"], "float64") if int(inputs[prefix + ".with_bias"]) else None
    return (k.tensor(inputs[prefix + ".x"], "float64"), k.tensor(inputs[prefix + ".weight"], "float64"), bias,
            int(inputs[prefix + ".stride"]), int(inputs[prefix + ".padding"]))


def record_watched(record, prefix: str, outcome) -> object:
    """given.watched's raw outcome: what the call raised (or "None"), the functions and ATen operators it ran,
    those it ran building a graph (grad mode switched back on, an input that requires a gradient); what it
    returned."""
    outcome = outcome if isinstance(outcome, dict) else {}
    record(prefix + ".raised", outcome.get("raised"))
    for part in ("calls", "aten", "graph"):
        record(f"{prefix}.{part}", [str(n) for n in outcome.get(part) or []])
    return outcome.get("returned")


def run_conv2d_forward(k, inputs, record):
    """conv2d_forward on three secret cases, each under given.watched (the PyTorch functions it ran)."""
    later = {}
    for prefix in CONV_CASES:
        x, weight, bias, stride, padding = conv_case(k, inputs, prefix)
        later[prefix] = k.given.watched(k.answers.conv2d_forward, x, weight, bias, stride=stride, padding=padding)
    for prefix, outcome in fetch(k, later).items():
        out = record_watched(record, prefix, outcome)
        if outcome.get("raised") is None:
            record(prefix + ".out", out)


def run_conv2d_backward(k, inputs, record):
    """conv2d_backward on three secret cases and upstream gradients, each under given.watched (grad mode off,
    autograd refusing to save a tensor: a backward that builds a graph raises; the PyTorch functions it ran)."""
    later = {}
    for prefix in CONV_CASES:
        x, weight, _, stride, padding = conv_case(k, inputs, prefix)
        grad_out = k.tensor(inputs[prefix + ".grad_out"], "float64")
        later[prefix] = k.given.watched(k.answers.conv2d_backward, grad_out, x, weight, stride=stride, padding=padding)
    for prefix, outcome in fetch(k, later).items():
        grads = record_watched(record, prefix, outcome)
        if outcome.get("raised") is None:
            record(prefix + ".returns", len(grads) if isinstance(grads, (tuple, list)) else -1)
            for name, grad in zip(CONV_GRADS, grads if isinstance(grads, (tuple, list)) else ()):
                record(f"{prefix}.{name}", "None" if grad is None else grad)


def expected_conv2d_backward(inputs) -> dict:
    """The gradients by autograd through F.conv2d, here."""
    import torch
    import torch.nn.functional as F

    want = {}
    for prefix in CONV_CASES:
        x, weight, _, stride, padding = _conv_tensors(inputs, prefix)
        leaves = [t.requires_grad_(True) for t in (x, weight, torch.zeros(weight.shape[0], dtype=torch.float64))]
        out = F.conv2d(*leaves, stride=stride, padding=padding)
        grads = torch.autograd.grad(out, leaves, torch.tensor(inputs[prefix + ".grad_out"], dtype=torch.float64))
        want[prefix + ".returns"] = 3
        want.update({f"{prefix}.{name}": g for name, g in zip(CONV_GRADS, grads)})
    return want


def expected_conv2d_forward(inputs) -> dict:
    """F.conv2d itself, here."""
    import torch.nn.functional as F

    want = {}
    for prefix in CONV_CASES:
        x, weight, bias, stride, padding = _conv_tensors(inputs, prefix)
        want[prefix + ".out"] = F.conv2d(x, weight, bias, stride=stride, padding=padding)
    return want


def _conv_tensors(inputs, prefix):
    """conv_case's values as float64 tensors of this process."""
    import torch

    def tensor(key):
        return torch.tensor(inputs[f"{prefix}.{key}"], dtype=torch.float64)

    return (tensor("x"), tensor("weight"), tensor("bias") if int(inputs[prefix + ".with_bias"]) else None,
            int(inputs[prefix + ".stride"]), int(inputs[prefix + ".padding"]))


def conv_judge(name: str, backward: bool):
    """What the call raised (asking autograd, in a backward, said as such); a convolution of PyTorch, or a
    function that computes a gradient, among the functions it called; then the values within TIGHT."""
    def judge(got: dict, want: dict) -> str | None:
        for prefix in CONV_CASES:
            error = str(got.get(prefix + ".raised", "None"))
            if error == "None":
                continue
            if backward and (error.startswith("AskedAutograd") or "saved tensor hooks" in error):
                return (f"{name} asks autograd for the gradients it should derive: called with grad mode off, it built "
                        f"a graph of its own ({error.split(': ', 1)[-1]}). Derive them from out_mat = W_mat @ cols: "
                        f"F.unfold and F.fold are all you need {UNSEEN}")
            return f"{name} raised {error} {UNSEEN}"
        for prefix in CONV_CASES:
            built = [str(n) for n in np.ravel(got.get(prefix + ".graph", np.asarray([]))) if str(n) not in GRAPHLESS]
            if backward and built:
                return (f"{name} asks autograd for the gradients it should derive: called with grad mode off, it "
                        f"switched it on and built a graph of its own ({', '.join(built[:4])} on tensors that require "
                        f"a gradient). Derive them from out_mat = W_mat @ cols: F.unfold and F.fold are all you need "
                        f"{UNSEEN}")
        for prefix in CONV_CASES:
            names = [str(n) for part in ("calls", "aten") for n in np.ravel(got.get(f"{prefix}.{part}", np.asarray([])))]
            if convolution := [n for n in names if "conv" in n.lower()]:
                how = ("derive the gradients from out_mat = W_mat @ cols: F.unfold and F.fold are all you need"
                       if backward else "build it from F.unfold and one matrix product")
                return f"{name} called PyTorch's convolution ({convolution[0]}): {how} {UNSEEN}"
            if backward and (asked := [n for n in names if n in GRADIENT_FUNCTIONS or "backward" in n]):
                return (f"{name} calls PyTorch's {asked[0]}, which computes the gradients it should derive: derive "
                        f"them from out_mat = W_mat @ cols {UNSEEN}")
        return compare_records(name, got, want, TIGHT)

    return judge


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
DIGITS_SHAPE_BATCH = 5  # held-out images of the first split, for the output's shape and the numbers read


def given_here():
    """This folder's given.py as a module of this process: the MLP is trained here as the kernel trains the CNN."""
    from autograder.probes import caller, given_name

    return caller.load_given(Path(__file__).with_name("given.py").read_text(), given_name("04_nn_modules"))


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


def run_digits_cnn(k, inputs, record):
    """DigitsCNN: its convolutions, its trainable parameters and the shapes of every tensor it holds (given.held)
    fetched, sizes counted here; its logits on a few held-out images and the numbers its forward pass read
    (given.reads); then, within the budget, on each secret split a fresh one trained by the notebook's
    train_classifier, its logits on the held-out images."""
    torch, given = k.module("torch"), k.given
    logits = []
    for split, seed in enumerate(int(seed) for seed in np.ravel(inputs["digits.seed"])):
        torch.manual_seed(seed)
        model = k.answers.DigitsCNN()
        if split == 0:
            got = fetch(k, {"convs": given.conv_layers(model), "trainable": given.trainable(model),
                            "held": given.held(model)})
            record("convs", len(got["convs"]) if isinstance(got["convs"], list) else 0)
            record("trainable", _numbers_in(got["trainable"]))
            record("held", _numbers_of(got["held"]))
            few = given.reads(model, k.tensor(inputs["digits.x_test"][0][:DIGITS_SHAPE_BATCH]))
            record("few_logits", few["logits"])
            record("reads", few["reads"])
            if max(_numbers_in(got["trainable"]), _numbers_of(got["held"])) > DIGITS_MLP_SIZE:
                return  # judged on its size; not trained
        model = given.train_classifier(model, inputs["digits.x_train"][split], inputs["digits.y_train"][split], seed)
        logits.append(given.logits(model, inputs["digits.x_test"][split]))
    record("logits", torch.stack(logits))


def _numbers_in(arrays) -> int:
    """How many numbers the arrays the kernel handed back (a list of them) hold."""
    return int(sum(np.size(v) for v in arrays if isinstance(v, np.ndarray))) if isinstance(arrays, list) else 0


def _numbers_of(shapes) -> int:
    """How many numbers arrays of these shapes (a list of lists of sizes) hold; more than any budget when the
    kernel handed back something else."""
    if not isinstance(shapes, list) or not all(
            isinstance(s, list) and all(isinstance(n, int) and n >= 0 for n in s) for s in shapes):
        return 2**62
    return int(sum(np.prod(s, dtype=np.float64) for s in shapes))


def expected_digits_cnn(inputs) -> dict:
    """The MLP of the notebook trained the same way on the same splits, here: its mean held-out accuracy is the
    one to beat."""
    import torch
    from torch import nn

    given = given_here()
    labels = inputs[PRIVATE + "digits.y_test"]
    correct = []
    for split, seed in enumerate(int(seed) for seed in np.ravel(inputs["digits.seed"])):
        torch.manual_seed(seed)
        mlp = nn.Sequential(nn.Flatten(), nn.Linear(64, 100), nn.ReLU(), nn.Linear(100, 10))
        mlp = given.train_classifier(mlp, inputs["digits.x_train"][split], inputs["digits.y_train"][split], seed)
        correct.append(given.logits(mlp, inputs["digits.x_test"][split]).argmax(dim=1).numpy() == labels[split])
    return {"labels": labels, "mlp_accuracy": float(np.mean(correct))}


def judge_digits_cnn(got: dict, want: dict) -> str | None:
    """A CNN within the MLP's budget (its trainable parameters, the numbers its forward pass reads, every tensor
    it holds), with (N, 10) outputs, that learned the digits."""
    missing = [k for k in ("convs", "trainable", "reads", "held", "few_logits") if k not in got]
    if missing:
        return f"DigitsCNN gave no {missing[0]}"
    if int(got["convs"]) < 1:
        return "DigitsCNN holds no nn.Conv2d layer"
    if int(got["trainable"]) > DIGITS_MLP_SIZE:
        return f"DigitsCNN has {int(got['trainable']):,} trainable parameters; the budget is {DIGITS_MLP_SIZE:,}"
    reads = np.ravel(got["reads"])
    read = 0 if reads.size == 0 else int(reads.sum()) if reads.dtype.kind in "biu" else DIGITS_MLP_SIZE + 1
    if read > DIGITS_MLP_SIZE:
        return (f"DigitsCNN's forward pass reads {read:,} numbers besides its input; the budget is "
                f"{DIGITS_MLP_SIZE:,}")
    if int(got["held"]) > DIGITS_MLP_SIZE:
        return (f"DigitsCNN holds {int(got['held']):,} numbers in its parameters, buffers and tensor attributes; "
                f"the budget is {DIGITS_MLP_SIZE:,}")
    shape = tuple(np.shape(got["few_logits"])) if got["few_logits"].dtype.kind == "f" else "not numbers"
    if shape != (DIGITS_SHAPE_BATCH, 10):
        return (f"DigitsCNN()(x) for x of shape ({DIGITS_SHAPE_BATCH}, 1, 8, 8) has shape {shape}; "
                f"expected ({DIGITS_SHAPE_BATCH}, 10)")
    accuracy = digits_accuracy(got, want)
    if isinstance(accuracy, str):
        return accuracy
    if accuracy < DIGITS_FLOOR:
        return (f"trained on the grader's {DIGITS_SPLITS} splits of the digits, DigitsCNN reached {accuracy:.1%} "
                f"on the held-out images (the mean): it has not learned them (the MLP reaches "
                f"{float(want['mlp_accuracy']):.1%})")
    return None


def digits_accuracy(got: dict, want: dict) -> float | str:
    """The held-out accuracy of DigitsCNN's logits (its prediction: the largest), the mean over the splits (all of
    one size), or what is wrong with them."""
    if "logits" not in got:
        return "DigitsCNN gave no predictions"
    logits, labels = np.asarray(got["logits"]), np.asarray(want["labels"])
    if logits.dtype.kind != "f" or logits.shape != (*labels.shape, 10):
        return f"DigitsCNN gave logits of shape {logits.shape} for {labels.size} held-out digits"
    return float((logits.argmax(axis=-1) == labels).mean())


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


# float64 throughout; as tight as the notebook's own tests.
TIGHT = Tolerance(1e-7, 1e-10)
PROBE = Probe(
    assignment="04_nn_modules",
    reference="helpers.reference.nn_modules",
    make_inputs=make_inputs,
    exercises={
        "build_sequential": Exercise(run_build_sequential, tolerance=TIGHT, judge=tight_judge("build_sequential")),
        "TwoLayerNet": Exercise(run_two_layer_net, tolerance=TIGHT, judge=tight_judge("TwoLayerNet")),
        "ParallelBlock": Exercise(run_parallel_block, tolerance=TIGHT, judge=tight_judge("ParallelBlock")),
        "LinearRegression": Exercise(run_linear_regression, tolerance=TIGHT, judge=tight_judge("LinearRegression")),
        "count_parameters": Exercise(run_count_parameters, tolerance=TIGHT),
        "train_manual_sgd": Exercise(run_train_manual_sgd, tolerance=TIGHT),
        "conv2d_forward": Exercise(run_conv2d_forward, expected=expected_conv2d_forward, tolerance=TIGHT,
                                   judge=conv_judge("conv2d_forward", backward=False)),
        "conv2d_backward": Exercise(run_conv2d_backward, expected=expected_conv2d_backward, tolerance=TIGHT,
                                    judge=conv_judge("conv2d_backward", backward=True)),
        "DigitsCNN": Exercise(run_digits_cnn, expected=expected_digits_cnn, judge=judge_digits_cnn,
                              cells={"test_DigitsCNN_beats_mlp": judge_digits_cnn_beats_mlp}),
    },
)

"""Probes of 06_data_loading: the Dataset, the split and the loops on data and models the notebook never used.

The models are float64 MLPs with batch norm (and dropout for `evaluate`), built from a seed by the
same functions on both sides, so the reference reproduces the student's numbers.
`make_loaders` is judged by what the split must be (sizes, disjoint, reproducible from the seed),
not by one way of drawing it; `fit` by the calls it makes (stand-ins for train_one_epoch and
evaluate, so a mistake there is not counted twice) or, for a loop written out, by its numbers.
The challenge is judged here, on a model the grader runs itself: the kernel hands back the trained
model's forward pass traced by torch.fx and the numbers it reads (helpers.challenge), the grader rebuilds
it from allow-lists and counts its size (every number it reads besides its input: weights kept in a
plain tensor list or a NumPy array count as much as registered parameters), and evaluates it on
held-out points of three spirals drawn here, which never reach the kernel. Its training points never
reach the kernel whole: the kernel's loader asks for each batch, and the trusted side answers
(`serve_challenge`, counting them, none past the budget): the batches drawn are the grader's own count.
The stand-ins the kernel needs are in given.py.
"""

from __future__ import annotations

import json
import math

import numpy as np

from autograder.probes import PRIVATE, Exercise, Probe, Tolerance, compare_arrays, compare_records
from autograder.probes.session import Raised


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Random sizes, data, seeds and batch sizes that never divide the data evenly."""
    def uneven_batch(n: int) -> int:  # a last batch of 2 or more: batch norm cannot train on 1 sample
        return next(int(b) for b in rng.permutation(np.arange(3, 9)) if n % b >= 2)

    n_items, a, b = int(rng.integers(8, 15)), int(rng.integers(2, 5)), int(rng.integers(2, 5))
    n_split = int(rng.integers(30, 80))
    n_train = int(rng.integers(17, 30))
    n_eval = int(rng.integers(20, 36))
    epochs = int(rng.integers(2, 5))
    d_in, hidden = (int(v) for v in rng.integers(3, 7, size=2) * (1, 2))
    return {
        "dataset.features": rng.standard_normal((n_items, 1, a, b)),
        "dataset.targets": rng.standard_normal((n_items, 2)).astype(np.float32),
        "dataset.indices": np.asarray([0, int(rng.integers(1, n_items - 1)), n_items - 1, -int(rng.integers(1, 4))]),
        "dataset.scale_shift": rng.uniform(-3, 3, size=2),
        "dataset.batch": np.asarray(int(rng.integers(2, 6))),
        # make_loaders: N, val_fraction, batch_size, seed, another seed, two global seeds
        "loaders.n": np.asarray(n_split), "loaders.fraction": np.asarray(rng.uniform(0.15, 0.4)),
        "loaders.batch": np.asarray(uneven_batch(n_split)),
        "loaders.seeds": rng.integers(0, 2**31, size=4),
        # train_one_epoch: regression with Adam, then classification with SGD
        "train.x": rng.standard_normal((n_train, d_in)), "train.y": rng.standard_normal((n_train, 2)),
        "train.labels": rng.integers(0, 3, size=n_train), "train.batch": np.asarray(uneven_batch(n_train)),
        "train.sizes": np.asarray([d_in, hidden]), "train.seed": np.asarray(int(rng.integers(0, 2**31))),
        "train.lr": np.asarray(rng.uniform(0.005, 0.05)),
        # evaluate: a classifier with batch norm and dropout, left in training mode
        "eval.x": rng.standard_normal((n_eval, d_in)), "eval.y": rng.integers(0, 4, size=n_eval),
        "eval.batch": np.asarray(uneven_batch(n_eval)), "eval.seed": np.asarray(int(rng.integers(0, 2**31))),
        # fit: the values the stand-ins return, then a real run
        "fit.epochs": np.asarray(epochs), "fit.values": rng.uniform(0.1, 3.0, size=(3, epochs)),
        "fit.x": rng.standard_normal((24, d_in)), "fit.y": rng.integers(0, 3, size=24),
        "fit.seed": np.asarray(int(rng.integers(0, 2**31))),
        **challenge_inputs(rng),
        "init.seed": np.asarray(int(rng.integers(2**31))),
        "init.widths": np.concatenate([rng.integers(150, 400, size=int(rng.integers(2, 4))), [int(rng.integers(3, 12))]]),
        "init.scale": np.asarray(float(rng.choice([0.003, 0.01, 0.03]))),
    }


# -- init_classifier: judged by statistics of what it draws ------------------------------------------

def run_init_classifier(k, inputs, record):
    """Secret widths (rectangular, large enough for a 3 % estimate of a std) and last_scale: what it returned,
    each Linear's weight and bias after, and each weight as the tensor bound before the call holds it."""
    widths = [int(w) for w in inputs["init.widths"]]
    net = k.given.classifier(int(inputs["init.seed"]), widths)
    linears = [k.given.linears(net)[i] for i in range(len(widths) - 1)]
    before = [linear.weight for linear in linears]
    returned = k.answers.init_classifier(net, last_scale=float(inputs["init.scale"]))
    record("returned_model", k.module("operator").is_(returned, net))
    for i, linear in enumerate(linears):
        record(f"weight{i}", linear.weight)
        record(f"bias{i}", linear.bias)
        record(f"weight_bound_before{i}", before[i])


def expected_init_classifier(inputs) -> dict:
    layers = len(inputs["init.widths"]) - 1
    scale = float(inputs["init.scale"])
    return {"std_ratios": [1.0] * (layers - 1) + [scale], "classes": int(inputs["init.widths"][-1]),
            "ln_c": math.log(int(inputs["init.widths"][-1])), "layers": layers}


def _initial_loss(weights: list, biases: list) -> float:
    """The cross-entropy of the initialized classifier on standard normal inputs (fixed here), label 0."""
    x = np.random.default_rng(1).standard_normal((256, weights[0].shape[1]))
    for i, (w, b) in enumerate(zip(weights, biases)):
        x = x @ w.T + b
        if i < len(weights) - 1:
            x = np.maximum(x, 0)
    shifted = x - x.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(shifted).sum(axis=1)) - shifted[:, 0]))


def judge_init_classifier(got: dict, want: dict) -> str | None:
    """Statistics of the raw weights: He normal (std sqrt(2 / fan_in), a normal's tails) on every layer but
    the last, that one times last_scale; zero biases; initialized in place; the initial loss near ln C."""
    layers = int(want["layers"])
    keys = ["returned_model"] + [f"{name}{i}" for i in range(layers) for name in ("weight", "bias", "weight_bound_before")]
    missing = [key for key in keys if key not in got]
    if missing:
        return f"init_classifier gave no {missing[0]}"
    if not bool(got["returned_model"]):
        return "init_classifier should return the model it was given, initialized in place"
    weights = [np.asarray(got[f"weight{i}"], dtype=np.float64) for i in range(layers)]
    biases = [np.asarray(got[f"bias{i}"], dtype=np.float64) for i in range(layers)]
    for i in range(layers):
        if compare_arrays(got[f"weight_bound_before{i}"], got[f"weight{i}"], rtol=0, atol=0):
            return (f"init_classifier replaced layer {i + 1}'s weight with a new tensor instead of filling the one "
                    "the model had: an optimizer built before it would still hold the old one, and never train the new")
    if any(b.size and np.any(b != 0) for b in biases):
        return "init_classifier: every Linear's bias should be zero"
    ratios = np.asarray([w.std() / math.sqrt(2 / w.shape[1]) for w in weights])
    wanted = np.asarray(want["std_ratios"], dtype=np.float64)
    # hidden layers hold 20,000 weights and more (their std is estimated within 1 %); the last only a few
    # thousand, and only its scale matters there
    tolerances = np.full(wanted.shape, 0.04)
    tolerances[-1:] = 0.15
    if ratios.shape != wanted.shape or not np.all(np.abs(ratios / wanted - 1) <= tolerances):
        return (f"init_classifier: the weights' std, over sqrt(2 / fan_in), is {np.round(ratios, 3).tolist()} on layers "
                f"your notebook never saw; expected {wanted.tolist()} (the std that keeps activations' scale through "
                "ReLUs, in_features being the fan-in; the last layer last_scale times it)")
    for i, w in enumerate(weights[:-1]):  # a normal's kurtosis is 3 (a uniform's 1.8), within 0.1 on 20,000 draws
        centred = w - w.mean()
        kurtosis = float(np.mean(centred ** 4) / np.mean(centred ** 2) ** 2)
        if abs(kurtosis - 3) > 0.5:
            return (f"init_classifier: layer {i + 1}'s weights have the right std but not a normal distribution "
                    f"(kurtosis {kurtosis:.2f}; a normal's is 3)")
    loss = _initial_loss(weights, biases)
    if abs(loss - float(want["ln_c"])) > 0.05 * float(want["ln_c"]):
        return (f"init_classifier: the initial loss is {loss:.3f}; a classifier that knows nothing "
                f"gives ln {int(want['classes'])} = {float(want['ln_c']):.3f}")
    return None


# -- the challenge: the rules the notebook states (tests/test_challenge_data.py keeps them equal) -------
CHALLENGE_MAX_SIZE = 5_000  # numbers in the model's state_dict
CHALLENGE_MAX_BATCHES = 400  # batches train_challenge may draw: 10 epochs of 40
CHALLENGE_BATCH_SIZE = 50
CHALLENGE_N = 2_000  # training points of one spiral
# Held-out points of one spiral: each costs a forward pass, no training. With 2,000 of them the accuracy
# measured had a sampling error of about 0.3 % on the mean of three spirals, as large as the margin of
# the reference over the top tier: the reference fell to 94.4 % on one draw (make course, 2026-11-28).
CHALLENGE_TEST_N = 20_000
CHALLENGE_DRAWS = 3  # spirals the grader trains and tests on: the tiers judge the mean of their accuracies
CHALLENGE_PASS = 0.90  # the lowest tier: below it train_challenge fails, and every challenge cell with it
# The hidden cells above the lowest tier, each judged on its own on the grader's held-out points. The best
# possible accuracy on these spirals is about 96.4 %; the reference (2x64, Adam, one cycle) reaches 95.1-95.4 %.
CHALLENGE_TIERS = {"test_challenge_93": 0.93, "test_challenge_945": 0.945}


def challenge_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Three spirals (angles and points from seeds drawn here and never written out): training
    points with labels, which stay on the trusted side and reach the kernel batch by batch
    (serve_challenge), held-out points whose labels stay here too, and a seed for the models'
    initialization and the loaders' shuffling that tells nothing of the data."""
    from helpers.data import spirals

    inputs = {"challenge.seed": np.asarray(int(rng.integers(0, 2**31)))}
    for k in range(CHALLENGE_DRAWS):
        x, y = spirals(CHALLENGE_N + CHALLENGE_TEST_N, seed=int(rng.integers(0, 2**31)))
        inputs.update({f"{PRIVATE}challenge.{k}.x_train": x[:CHALLENGE_N], f"{PRIVATE}challenge.{k}.y_train": y[:CHALLENGE_N],
                       f"{PRIVATE}challenge.{k}.x_test": x[CHALLENGE_N:], f"{PRIVATE}challenge.{k}.y_test": y[CHALLENGE_N:]})
    return inputs


def run_TensorPairDataset(k, inputs, record):
    """Items with and without a transform (one that shows when and how often it ran), len, a batch."""
    features, targets = k.tensor(inputs["dataset.features"]), k.tensor(inputs["dataset.targets"])
    scale, shift = (float(v) for v in inputs["dataset.scale_shift"])
    indices = [int(i) for i in inputs["dataset.indices"]]
    plain = k.answers.TensorPairDataset(features, targets)
    record("is_dataset", k.isinstance(plain, k.module("torch.utils.data").Dataset))
    record("len", k.len(plain))
    items = [k.given.item(plain, i) for i in indices]
    record("item_types", [k.type_name(plain[i]) for i in indices])
    record("item_lengths", [k.len(item) for item in items])
    record("plain_x", [item[0] for item in items])
    record("plain_y", [item[1] for item in items])
    dataset = k.answers.TensorPairDataset(features, targets, transform=k.given.Transform(scale, shift))
    items = [k.given.item(dataset, i) for i in indices]
    record("x", [item[0] for item in items])
    record("y", [item[1] for item in items])
    batch = k.given.first_batch(dataset, int(inputs["dataset.batch"]))
    record("batch_x", batch[0])
    record("batch_y", batch[1])


def judge_TensorPairDataset(got: dict, want: dict) -> str | None:
    """Items are pairs (a tuple or a list of two), and everything else as the reference's."""
    types = [str(t) for t in np.asarray(got.get("item_types", [])).ravel()]
    lengths = [int(n) for n in np.asarray(got.get("item_lengths", [])).ravel()]
    if not types or any(t not in ("tuple", "list") for t in types) or any(n != 2 for n in lengths):
        return f"TensorPairDataset: dataset[i] should be a pair (x, y); it gave a {types[0] if types else 'nothing'}"
    return compare_records("TensorPairDataset", got, {key: value for key, value in want.items()
                                                      if key not in ("item_types", "item_lengths")}, Tolerance(1e-6, 1e-6))


def run_make_loaders(k, inputs, record):
    """The ids each loader yields (two passes), the batch sizes, the same seed again under another global
    seed, and another seed."""
    n, fraction, batch = int(inputs["loaders.n"]), float(inputs["loaders.fraction"]), int(inputs["loaders.batch"])
    seed, other, global_1, global_2 = (int(v) for v in inputs["loaders.seeds"])
    torch, dataset = k.module("torch"), k.given.Ids(n)
    torch.manual_seed(global_1)
    train_loader, val_loader = k.unpack(k.answers.make_loaders(dataset, batch, fraction, seed), 2)
    record("val", k.given.ids(val_loader))
    record("train1", k.given.ids(train_loader))
    record("train2", k.given.ids(train_loader))
    record("val2", k.given.ids(val_loader))
    record("train_batches", k.given.batch_sizes(train_loader))
    record("val_batches", k.given.batch_sizes(val_loader))
    torch.manual_seed(global_2)
    train_again, val_again = k.unpack(k.answers.make_loaders(dataset, batch, fraction, seed), 2)
    record("again_val", k.given.ids(val_again))
    record("again_train1", k.given.ids(train_again))
    record("other_val", k.given.ids(k.answers.make_loaders(dataset, batch, fraction, other)[1]))


def run_train_one_epoch(k, inputs, record):
    """Regression with Adam, then classification with SGD, on a model left in eval mode: the loss (and its
    type), the model's state after (parameters and batch norm's statistics)."""
    d_in, hidden = (int(v) for v in inputs["train.sizes"])
    batch, lr = int(inputs["train.batch"]), float(inputs["train.lr"])
    nn, optim = k.module("torch.nn"), k.module("torch.optim")
    cases = (("mse", inputs["train.y"], 2, nn.MSELoss(), optim.Adam),
             ("ce", inputs["train.labels"], 3, nn.CrossEntropyLoss(), optim.SGD))
    for name, y, d_out, loss_fn, make_optimizer in cases:
        model = k.given.net(int(inputs["train.seed"]), d_in, hidden, d_out)
        model.eval()  # as evaluate leaves it
        loader = k.given.loader(inputs["train.x"], y, batch)
        loss = k.answers.train_one_epoch(model, loader, make_optimizer(model.parameters(), lr=lr), loss_fn,
                                         k.module("torch").device("cpu"))
        record(name + "_type", k.type_name(loss))
        record(name + "_loss", loss)
        record(name + "_state", k.given.state(model))


def run_evaluate(k, inputs, record):
    """A classifier with batch norm and dropout, left in training mode: loss and accuracy (and their types),
    each forward pass's (training mode, grad mode), the model's state after."""
    d_in, hidden = (int(v) for v in inputs["train.sizes"])
    model = k.given.net(int(inputs["eval.seed"]), d_in, hidden, 4, 0.4)
    model.train()  # as train_one_epoch leaves it
    log = k.given.ModeLog(model)
    loader = k.given.loader(inputs["eval.x"], inputs["eval.y"], int(inputs["eval.batch"]))
    result = k.answers.evaluate(model, loader, k.module("torch.nn").CrossEntropyLoss(), k.module("torch").device("cpu"))
    record("types", [k.type_name(result[0]), k.type_name(result[1])])
    record("loss", result[0])
    record("accuracy", result[1])
    record("modes", log.calls)
    record("state", k.given.state(model))


def judge_evaluate(got: dict, want: dict) -> str | None:
    """Two floats; every forward pass in eval mode without a graph; the reference's numbers."""
    for key in ("types", "loss", "accuracy", "modes", "state"):
        if key not in got:
            return f"evaluate gave no {key}"
    types = [str(t) for t in np.asarray(got["types"]).ravel()]
    if types != ["float", "float"]:
        return f"evaluate should return two Python floats (loss, accuracy); it returned {', '.join(types)}"
    modes = np.asarray(got["modes"], dtype=bool).reshape(-1, 2)
    if not len(modes):
        return "evaluate never ran the model"
    if modes[:, 0].any():
        return ("evaluate ran the model in training mode: dropout dropped units at random, and batch norm used and "
                "updated the batches' statistics")
    if modes[:, 1].any():
        return "evaluate built a graph: autograd recorded its forward passes, for a backward() it never calls"
    return compare_records("evaluate", {k: got[k] for k in ("loss", "accuracy", "state")},
                           {k: want[k] for k in ("loss", "accuracy", "state")}, Tolerance(1e-9, 1e-12))


def run_fit(k, inputs, record):
    """fit with stand-ins for train_one_epoch and evaluate (which loader, which order, what is kept), then a
    real run (for a fit that writes its loop out)."""
    epochs, values = int(inputs["fit.epochs"]), inputs["fit.values"]
    d_in, hidden = (int(v) for v in inputs["train.sizes"])
    torch, nn = k.module("torch"), k.module("torch.nn")
    device = torch.device("cpu")
    net = k.given.net(int(inputs["fit.seed"]), d_in, hidden, 3)
    train_loader, val_loader = k.unpack(k.given.fit_loaders(inputs["fit.x"], inputs["fit.y"], 1), 2)
    sgd, cross_entropy = torch.optim.SGD(net.parameters(), lr=0.1), nn.CrossEntropyLoss()
    stand_ins = k.given.FitStandIns(net, sgd, cross_entropy, train_loader, val_loader, values)
    with k.using(k.given.StandIn(k.answers.fit, {"train_one_epoch": stand_ins.train_one_epoch,
                                                 "evaluate": stand_ins.evaluate})):
        history = k.answers.fit(net, train_loader, val_loader, sgd, cross_entropy, device, epochs)
    part = {"log": stand_ins.log}
    for key in ("train_loss", "val_loss", "val_accuracy"):
        part[key] = k.given.floats(history[key])
        part[key + "_types"] = k.given.type_names(history[key])
    _record_part(k, record, "stand_in", part)
    net = k.given.net(int(inputs["fit.seed"]), d_in, hidden, 3)
    train_loader, val_loader = k.unpack(k.given.fit_loaders(inputs["fit.x"], inputs["fit.y"], 2), 2)
    history = k.answers.fit(net, train_loader, val_loader, torch.optim.Adam(net.parameters(), lr=0.01),
                            nn.CrossEntropyLoss(), device, epochs)
    _record_part(k, record, "real", {key: k.given.floats(history[key]) for key in ("train_loss", "val_loss", "val_accuracy")})


def _record_part(k, record, prefix: str, part: dict) -> None:
    """Fetch one part of a run now: its records, or what it raised as `prefix.error`."""
    try:
        values = k.fetch(part)
    except Raised as error:
        record(f"{prefix}.error", str(error)[:200])
        return
    for key, value in values.items():
        record(f"{prefix}.{key}", value)


class ChallengeFeed:
    """The trusted side's feed of the challenge's training batches (Probe.serve): the kernel asks for
    them one at a time (given.ChallengeLoader), and gets at most the budget of each spiral. The training
    points stay here (private inputs): the batches drawn are all the kernel ever holds of them, and
    `served` (batches handed out per spiral) is the grader's own count.

    Prompts: 'challenge K start' (a new epoch: the DataLoader reshuffles, as iter() does), 'challenge
    K next' (its next batch: 'batch X Y', base64 .npy; 'end' when the epoch is over; 'budget' once
    the budget is drawn). Anything else is refused."""

    def __init__(self, inputs):
        self.inputs, self.loaders, self.epochs = inputs, {}, {}
        self.served = [0] * CHALLENGE_DRAWS

    def __call__(self, prompt: str) -> str:
        import base64
        import io
        import re

        import torch
        from torch.utils.data import DataLoader, TensorDataset

        asked = re.fullmatch(r"challenge (\d) (start|next)", prompt)
        if asked is None or int(asked[1]) >= CHALLENGE_DRAWS:
            return "refused"
        k = int(asked[1])
        if k not in self.loaders:
            x, y = (torch.from_numpy(self.inputs[f"{PRIVATE}challenge.{k}.{name}"]) for name in ("x_train", "y_train"))
            self.loaders[k] = DataLoader(TensorDataset(x, y), batch_size=CHALLENGE_BATCH_SIZE, shuffle=True,
                                         generator=torch.Generator().manual_seed(int(self.inputs["challenge.seed"]) + k))
        if asked[2] == "start" or k not in self.epochs:
            self.epochs[k] = iter(self.loaders[k])
            if asked[2] == "start":
                return "started"
        batch = next(self.epochs[k], None)
        if batch is None:  # the epoch is over (the budget's last epoch ends like any other)
            return "end"
        if self.served[k] == CHALLENGE_MAX_BATCHES:
            return "budget"
        self.served[k] += 1

        def encode(t) -> str:
            buffer = io.BytesIO()
            np.save(buffer, t.numpy(), allow_pickle=False)
            return base64.b64encode(buffer.getvalue()).decode()

        return "batch " + " ".join(encode(t) for t in batch)


def _hand_over(k, model, record, prefix: str, limit: int = CHALLENGE_MAX_SIZE) -> bool:
    """Record the model as the grader will run it: its traced forward pass (prefix.program, JSON) and the
    tensors it reads (prefix.tensor.<name>), fetched only when their size is within `limit` (else
    prefix.size alone). False when it cannot be traced (prefix.error says why)."""
    traced = k.given.Traced(model)
    try:
        description = k.fetch(traced.description)
    except Raised as error:
        record(f"{prefix}.error", str(error)[:300])
        return False
    shapes = description.get("tensors", {}) if isinstance(description, dict) else {}
    size = sum(int(np.prod(shape)) for shape in shapes.values() if isinstance(shape, list))
    record(f"{prefix}.program", json.dumps(description))
    if size > limit:
        record(f"{prefix}.size", size)  # fails on its size: its numbers are not needed
        return False
    for name in shapes:
        record(f"{prefix}.tensor.{name}", traced.tensors[name])
    return True


def program(got: dict, prefix: str, limit: int = CHALLENGE_MAX_SIZE):
    """(the grader's Program rebuilt from what `_hand_over` recorded, or None; why not, or None)."""
    from helpers.challenge import ChallengeError, Program

    if f"{prefix}.error" in got:
        return None, str(got[f"{prefix}.error"]).removeprefix("ChallengeError: ")
    if f"{prefix}.size" in got:
        return None, _size_text(int(got[f"{prefix}.size"]))
    if f"{prefix}.program" not in got:
        return None, "gave no model to judge"
    try:
        description = json.loads(str(got[f"{prefix}.program"]))
        tensors = {key[len(prefix) + 8:]: value for key, value in got.items() if key.startswith(f"{prefix}.tensor.")}
        made = Program(description, tensors)
    except (ChallengeError, ValueError, TypeError, AttributeError) as error:
        return None, str(error)
    if made.size() > limit:
        return None, _size_text(made.size())
    return made, None


def _size_text(size: int) -> str:
    return (f"keeps or reads {size:,} numbers besides its input; the budget is {CHALLENGE_MAX_SIZE:,}: "
            "make it narrower or shallower")


def run_build_challenge_model(k, inputs, record):
    """build_challenge_model(2, 3) and (4, 5), handed over as programs the grader runs itself."""
    k.module("torch").manual_seed(int(inputs["challenge.seed"]))
    _hand_over(k, k.answers.build_challenge_model(2, 3), record, "model")
    _hand_over(k, k.answers.build_challenge_model(4, 5), record, "other", OTHER_LIMIT)


def run_train_challenge(k, inputs, record):
    """Three spirals, each: a model built after manual_seed (over the size budget: not trained), trained on
    the grader's budgeted loader, handed over as a program; the batches the grader served."""
    torch = k.module("torch")
    with k.using(k.given.OneThread()):
        for draw in range(CHALLENGE_DRAWS):
            torch.manual_seed(int(inputs["challenge.seed"]) + draw)
            model = k.answers.build_challenge_model(2, 3)
            if not _hand_over(k, model, record, f"built{draw}"):
                break  # fails on its size or its form alone: not trained
            trained = k.answers.train_challenge(model, k.given.ChallengeLoader(draw, CHALLENGE_MAX_BATCHES),
                                                torch.device("cpu"))
            handed = _hand_over(k, trained, record, f"trained{draw}")
            k.flush()
            record(f"batches{draw}", int(k.served.served[draw]) if k.served is not None else 0)
            if not handed:
                break


OTHER_LIMIT = 4 * CHALLENGE_MAX_SIZE  # build_challenge_model(4, 5) is judged on its shape: its size is not the rule's


def expected_build_challenge_model(inputs) -> dict:
    return {"shape": [7, 3], "other_shape": [7, 5]}


def expected_train_challenge(inputs) -> dict:
    """The held-out points and labels of the three spirals, in draw order (they never reach the kernel)."""
    return {f"x_test{k}": inputs[f"{PRIVATE}challenge.{k}.x_test"] for k in range(CHALLENGE_DRAWS)} | {
        f"labels{k}": inputs[f"{PRIVATE}challenge.{k}.y_test"] for k in range(CHALLENGE_DRAWS)}


def _judge_build_challenge_model(got: dict, want: dict) -> str | None:
    """A model the grader can run, under the size budget, giving (B, num_classes) logits for (B, in_features)."""
    import torch

    for prefix, args, width, key, limit in (("model", "(2, 3)", 2, "shape", CHALLENGE_MAX_SIZE),
                                            ("other", "(4, 5)", 4, "other_shape", OTHER_LIMIT)):
        made, problem = program(got, prefix, limit)
        if problem:
            return f"build_challenge_model{args}: {problem}"
        try:
            shape = list(made(torch.zeros(7, width)).shape)
        except Exception as error:  # noqa: BLE001 - the student's program, run here
            return f"build_challenge_model{args}: {error}"
        if shape != list(want[key]):
            return (f"build_challenge_model{args} gave outputs of shape {tuple(shape)} on a batch of 7; expected "
                    f"{tuple(want[key])}: use in_features and num_classes")
    return None


def _accuracy(got: dict, want: dict) -> tuple[float | None, str | None]:
    """The mean accuracy of the trained programs on the grader's held-out points (kept in got, computed once)."""
    import torch

    if "accuracy" in got:
        return float(got["accuracy"]), None
    accuracies = []
    for draw in range(CHALLENGE_DRAWS):
        made, problem = program(got, f"built{draw}")
        if problem:
            return None, f"your model {problem}"
        if f"batches{draw}" not in got:
            return None, "train_challenge gave no model: it raised, or the check stopped"
        made, problem = program(got, f"trained{draw}")
        raised = str(got.get(f"trained{draw}.error", ""))
        if problem and raised and not raised.startswith("ChallengeError"):
            return None, f"train_challenge raised {raised}"
        if int(got[f"batches{draw}"]) == 0:
            return None, ("train_challenge drew no batch from its train_loader: it must learn from the data it is "
                          "given (the grader's spiral is not your notebook's)")
        if problem:
            return None, (f"the model train_challenge returned {problem}" if problem.startswith("keeps or reads")
                          else f"train_challenge's model: {problem}")
        try:
            predictions = made(torch.from_numpy(np.asarray(want[f"x_test{draw}"]))).argmax(dim=1).numpy()
        except Exception as error:  # noqa: BLE001
            return None, f"the model train_challenge returned: {error}"
        accuracies.append(float((predictions == np.asarray(want[f"labels{draw}"])).mean()))
    got["accuracy"] = np.asarray(float(np.mean(accuracies)))
    return float(got["accuracy"]), None


def _judge_train_challenge(got: dict, want: dict) -> str | None:
    """Within the rules, and at least the lowest tier of accuracy on the grader's held-out points."""
    accuracy, problem = _accuracy(got, want)
    if problem:
        return problem
    batches = max(int(got[f"batches{draw}"]) for draw in range(CHALLENGE_DRAWS))
    if accuracy < CHALLENGE_PASS:
        return (f"the trained models classified {accuracy:.1%} of the grader's held-out points correctly, on the "
                f"mean of {CHALLENGE_DRAWS} spirals (they drew up to {batches} batches); the lowest tier "
                f"needs {CHALLENGE_PASS:.0%}")
    return None


def _tier(grade_id: str, threshold: float):
    """The judgment of one tier cell: the held-out accuracy reaches `threshold` (run only once the
    exercise passed, so the predictions are there and of the right shape)."""
    def judge(got: dict, want: dict) -> str | None:
        accuracy, _ = _accuracy(got, want)
        if accuracy is None or accuracy < threshold:
            return (f"{grade_id}: the trained models classified {accuracy:.1%} of the grader's held-out points "
                    f"correctly, on the mean of {CHALLENGE_DRAWS} spirals; this tier needs {threshold:.1%}"
                    if accuracy is not None else f"{grade_id}: no trained model to judge")
        return None
    return judge


def _first_problem(got: dict, want: dict, keys, rtol: float, atol: float) -> str | None:
    for key in keys:
        if key not in got:
            return f"gave no {key}"
        message = compare_arrays(got[key], np.asarray(want[key]), rtol=rtol, atol=atol)
        if message:
            return f"{key} {message}"
    return None


def _judge_make_loaders(got: dict, want: dict) -> str | None:
    """The split's properties: sizes, disjoint and complete, reproducible from the seed, shuffling."""
    missing = [k for k in ("val", "train1", "train2", "val2", "train_batches", "val_batches",
                           "again_val", "again_train1", "other_val") if k not in got]
    if missing:
        return f"make_loaders gave no {missing[0]}"
    ids = {k: [int(v) for v in np.asarray(got[k]).ravel()] for k in got}
    reference = {k: [int(v) for v in np.asarray(want[k]).ravel()] for k in want}
    n, n_val = len(reference["val"]) + len(reference["train1"]), len(reference["val"])
    batch = max(reference["train_batches"])
    reshuffles = reference["train2"] != reference["train1"]
    seed_matters = sorted(reference["other_val"]) != sorted(reference["val"])
    where = f"(N={n}, batch_size={batch}: inputs your notebook never saw)"
    if len(ids["val"]) != n_val:
        return f"make_loaders: {len(ids['val'])} validation samples; expected int(val_fraction * N) = {n_val} {where}"
    if set(ids["train1"]) & set(ids["val"]):
        return f"make_loaders: some samples are in both the training and the validation loader {where}"
    if sorted(ids["train1"] + ids["val"]) != list(range(n)):
        return f"make_loaders: the two loaders together do not hold every sample exactly once {where}"
    for name in ("train_batches", "val_batches"):
        sizes = ids[name]
        if not sizes or any(size != batch for size in sizes[:-1]) or not 0 < sizes[-1] <= batch:
            return f"make_loaders: {name.split('_')[0]} batches of sizes {sizes[:8]}; expected batches of {batch} {where}"
    if ids["again_val"] != ids["val"] or ids["again_train1"] != ids["train1"]:
        return f"make_loaders: a second call with the same seed gave another split or order {where}"
    if ids["val2"] != ids["val"]:
        return f"make_loaders: the validation loader changed its order between two passes {where}"
    if reshuffles and ids["train2"] == ids["train1"]:
        return f"make_loaders: the training loader gave the same order in two epochs {where}"
    if seed_matters and sorted(ids["other_val"]) == sorted(ids["val"]):
        return f"make_loaders: another seed gave the same validation set {where}"
    return None


def _judge_fit(got: dict, want: dict) -> str | None:
    """Right calls with the stand-ins, or (a loop written out) the reference's numbers."""
    stand_in = [k for k in want if k.startswith("stand_in.")]
    problem = (f"raised {got['stand_in.error']}" if "stand_in.error" in got
               else _first_problem(got, want, stand_in, rtol=1e-12, atol=0))
    if problem is None:
        return None
    if _first_problem(got, want, [k for k in want if k.startswith("real.")], rtol=1e-7, atol=1e-9) is None:
        return None  # its own loop, with the reference's results
    if "stand_in.log" in got and "log" in problem:
        calls = ", ".join(str(v) for v in np.asarray(got["stand_in.log"]).ravel()[:6])
        return (f"fit called {calls or 'nothing'}; expected train_one_epoch(train_loader), then "
                "evaluate(val_loader), once per epoch, with fit's own model, optimizer and loss_fn")
    return f"fit: {problem.replace('stand_in.', 'history ')} (on inputs your notebook never saw)"


PROBE = Probe(
    assignment="06_data_loading",
    reference="helpers.reference.data_loading",
    make_inputs=make_inputs,
    serve=ChallengeFeed,
    exercises={
        # float64 models: only the order of float operations differs between two correct answers.
        "TensorPairDataset": Exercise(run_TensorPairDataset, judge=judge_TensorPairDataset),  # float32 too
        "make_loaders": Exercise(run_make_loaders, judge=_judge_make_loaders),
        "train_one_epoch": Exercise(run_train_one_epoch, tolerance=Tolerance(1e-7, 1e-9)),
        "evaluate": Exercise(run_evaluate, judge=judge_evaluate),
        "fit": Exercise(run_fit, judge=_judge_fit),
        "init_classifier": Exercise(run_init_classifier, expected=expected_init_classifier, judge=judge_init_classifier),
        "build_challenge_model": Exercise(run_build_challenge_model, expected=expected_build_challenge_model,
                                          judge=_judge_build_challenge_model),
        "train_challenge": Exercise(run_train_challenge, expected=expected_train_challenge,
                                    judge=_judge_train_challenge,
                                    cells={gid: _tier(gid, t) for gid, t in CHALLENGE_TIERS.items()}),
    },
)

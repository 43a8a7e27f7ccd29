"""Probes of 06_data_loading: the Dataset, the split and the loops on data and models the notebook never used.

The models are float64 MLPs with batch norm (and dropout for `evaluate`), built from a seed by the
same functions on both sides, so the reference reproduces the student's numbers.
`make_loaders` is judged by what the split must be (sizes, disjoint, reproducible from the seed),
not by one way of drawing it; `fit` by the calls it makes (stand-ins for train_one_epoch and
evaluate, so a mistake there is not counted twice) or, for a loop written out, by its numbers.
The challenge is judged by its rules (size, batches drawn) and by the mean accuracy the trained model
reaches on held-out points of three spirals drawn here, which its training never saw. Its training
points never reach the kernel whole: the kernel's loader asks for each batch, and the trusted side
answers (`serve_challenge`, counting them, none past the budget). The size counts
every number the model's forward pass reads besides its input (at the level of PyTorch's functions),
so weights kept in a plain tensor list count as much as registered parameters.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils.data import DataLoader, Dataset, TensorDataset

from autograder.probes import PRIVATE, Exercise, Probe, Tolerance, compare_arrays


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

def run_init_classifier(answers, inputs, record):
    """Secret widths (rectangular, large enough for a 3 % estimate of a std) and last_scale: each Linear's
    weight std over sqrt(2 / in_features), whether every bias is zero, and the initial loss on noise."""
    import math

    torch.manual_seed(int(inputs["init.seed"]))
    widths = [int(w) for w in inputs["init.widths"]]
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(widths, widths[1:])):
        layers += [nn.Linear(fan_in, fan_out)] + ([nn.ReLU()] if i < len(widths) - 2 else [])
    net = nn.Sequential(*layers)
    returned = answers.init_classifier(net, last_scale=float(inputs["init.scale"]))
    record("returned_model", returned is net)
    linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
    record("std_ratios", [m.weight.std().item() / math.sqrt(2 / m.in_features) for m in linears])
    record("zero_biases", all(int(torch.count_nonzero(m.bias)) == 0 for m in linears))
    x = torch.randn(256, widths[0], generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        logits = net(x)
    record("initial_loss", nn.functional.cross_entropy(logits, torch.zeros(256, dtype=torch.long)).item())


def expected_init_classifier(inputs) -> dict:
    import math

    layers = len(inputs["init.widths"]) - 1
    scale = float(inputs["init.scale"])
    return {"std_ratios": [1.0] * (layers - 1) + [scale], "classes": int(inputs["init.widths"][-1]),
            "ln_c": math.log(int(inputs["init.widths"][-1]))}


def judge_init_classifier(got: dict, want: dict) -> str | None:
    for key in ("returned_model", "std_ratios", "zero_biases", "initial_loss"):
        if key not in got:
            return f"init_classifier gave no {key}"
    if not bool(got["returned_model"]):
        return "init_classifier should return the model it was given, initialized in place"
    if not bool(got["zero_biases"]):
        return "init_classifier: every Linear's bias should be zero"
    ratios, wanted = np.asarray(got["std_ratios"], dtype=np.float64).ravel(), np.asarray(want["std_ratios"])
    # hidden layers hold 20,000 weights and more (their std is estimated within 1 %); the last only a few
    # thousand, and only its scale matters there
    tolerances = np.full(wanted.shape, 0.04)
    tolerances[-1:] = 0.15
    if ratios.shape != wanted.shape or not np.all(np.abs(ratios / wanted - 1) <= tolerances):
        return (f"init_classifier: the weights' std, over sqrt(2 / fan_in), is {np.round(ratios, 3).tolist()} on layers "
                f"your notebook never saw; expected {wanted.tolist()} (He normal for ReLU with fan_in = in_features, "
                "the last layer times last_scale)")
    if abs(float(got["initial_loss"]) - float(want["ln_c"])) > 0.05 * float(want["ln_c"]):
        return (f"init_classifier: the initial loss is {float(got['initial_loss']):.3f}; a classifier that knows nothing "
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
                       f"challenge.{k}.x_test": x[CHALLENGE_N:], f"{PRIVATE}challenge.{k}.y_test": y[CHALLENGE_N:]})
    return inputs


def probe_net(seed, d_in, hidden, d_out, dropout=0.0):
    """A float64 MLP with batch norm whose running statistics differ from any batch's own."""
    torch.manual_seed(int(seed))
    layers = [nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.ReLU()]
    layers += [nn.Dropout(dropout)] if dropout else []
    net = nn.Sequential(*layers, nn.Linear(hidden, d_out)).double()
    with torch.no_grad():
        net(3 * torch.randn(64, d_in, dtype=torch.float64) + 1)
    return net


class ProbeIds(Dataset):
    """N samples that are not a TensorDataset: sample i is ([i], i)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.tensor([float(i)]), torch.tensor(int(i))


def probe_ids(loader):
    return [int(i) for _, y in loader for i in y]


def probe_state(net):
    return torch.cat([t.detach().double().flatten() for t in net.state_dict().values()])


def probe_loaders(inputs, shuffle_seed):
    x, y = torch.from_numpy(inputs["fit.x"]), torch.from_numpy(inputs["fit.y"])
    train = DataLoader(TensorDataset(x[:17], y[:17]), batch_size=5, shuffle=True,  # 5, 5, 5, 2
                       generator=torch.Generator().manual_seed(int(shuffle_seed)))
    return train, DataLoader(TensorDataset(x[17:], y[17:]), batch_size=4)  # 4, 3


def run_TensorPairDataset(answers, inputs, record):
    features, targets = torch.from_numpy(inputs['dataset.features']), torch.from_numpy(inputs['dataset.targets'])
    scale, shift = (float(v) for v in inputs['dataset.scale_shift'])
    indices = [int(i) for i in inputs['dataset.indices']]
    reads = []
    def transform(x):
        reads.append(1)
        return x.reshape(-1) * scale + shift
    plain = answers.TensorPairDataset(features, targets)
    record('is_dataset', isinstance(plain, Dataset))
    record('len', len(plain))
    items = [plain[i] for i in indices]
    record('pairs', all(isinstance(item, (tuple, list)) and len(item) == 2 for item in items))
    record('plain_x', [item[0] for item in items])
    record('plain_y', [item[1] for item in items])
    dataset = answers.TensorPairDataset(features, targets, transform=transform)
    items = [dataset[i] for i in indices]
    record('transform_calls', len(reads))
    record('x', [item[0] for item in items])
    record('y', [item[1] for item in items])
    x_batch, y_batch = next(iter(DataLoader(dataset, batch_size=int(inputs['dataset.batch']))))
    record('batch_x', x_batch)
    record('batch_y', y_batch)


def run_make_loaders(answers, inputs, record):
    n, fraction, batch = int(inputs['loaders.n']), float(inputs['loaders.fraction']), int(inputs['loaders.batch'])
    seed, other, global_1, global_2 = (int(v) for v in inputs['loaders.seeds'])
    dataset = ProbeIds(n)
    torch.manual_seed(global_1)
    train_loader, val_loader = answers.make_loaders(dataset, batch, fraction, seed)
    record('val', probe_ids(val_loader))
    record('train1', probe_ids(train_loader))
    record('train2', probe_ids(train_loader))
    record('val2', probe_ids(val_loader))
    record('train_batches', [len(y) for _, y in train_loader])
    record('val_batches', [len(y) for _, y in val_loader])
    torch.manual_seed(global_2)
    train_again, val_again = answers.make_loaders(dataset, batch, fraction, seed)
    record('again_val', probe_ids(val_again))
    record('again_train1', probe_ids(train_again))
    record('other_val', probe_ids(answers.make_loaders(dataset, batch, fraction, other)[1]))


def run_train_one_epoch(answers, inputs, record):
    d_in, hidden = (int(v) for v in inputs['train.sizes'])
    x, batch, lr = torch.from_numpy(inputs['train.x']), int(inputs['train.batch']), float(inputs['train.lr'])
    cases = (('mse', torch.from_numpy(inputs['train.y']), 2, nn.MSELoss(), torch.optim.Adam),
             ('ce', torch.from_numpy(inputs['train.labels']), 3, nn.CrossEntropyLoss(), torch.optim.SGD))
    for name, y, d_out, loss_fn, make_optimizer in cases:
        model = probe_net(inputs['train.seed'], d_in, hidden, d_out)
        model.eval()  # as evaluate leaves it
        modes = []
        model.register_forward_hook(lambda module, args, output, modes=modes: modes.append(module.training))
        loader = DataLoader(TensorDataset(x, y), batch_size=batch)
        loss = answers.train_one_epoch(model, loader, make_optimizer(model.parameters(), lr=lr), loss_fn, torch.device('cpu'))
        record(name + '_is_float', isinstance(loss, float))
        record(name + '_loss', float(loss))
        record(name + '_state', probe_state(model))
        record(name + '_all_training', bool(modes) and all(modes))


def run_evaluate(answers, inputs, record):
    d_in, hidden = (int(v) for v in inputs['train.sizes'])
    x, y = torch.from_numpy(inputs['eval.x']), torch.from_numpy(inputs['eval.y'])
    model = probe_net(inputs['eval.seed'], d_in, hidden, 4, dropout=0.4)
    model.train()  # as train_one_epoch leaves it
    calls = []
    model.register_forward_hook(lambda module, args, output: calls.append((module.training, torch.is_grad_enabled())))
    loader = DataLoader(TensorDataset(x, y), batch_size=int(inputs['eval.batch']))
    loss, accuracy = answers.evaluate(model, loader, nn.CrossEntropyLoss(), torch.device('cpu'))
    record('is_float', isinstance(loss, float) and isinstance(accuracy, float))
    record('loss', float(loss))
    record('accuracy', float(accuracy))
    record('called', bool(calls))
    record('any_training', any(training for training, _ in calls))
    record('any_graph', any(grad for _, grad in calls))
    record('state', probe_state(model))


def run_fit(answers, inputs, record):
    epochs, values = int(inputs['fit.epochs']), inputs['fit.values']
    d_in, hidden = (int(v) for v in inputs['train.sizes'])
    device = torch.device('cpu')
    try:  # 1. stand-ins for train_one_epoch and evaluate: which loader, which order, what is kept
        net = probe_net(inputs['fit.seed'], d_in, hidden, 3)
        train_loader, val_loader = probe_loaders(inputs, 1)
        sgd, cross_entropy, log, counts = torch.optim.SGD(net.parameters(), lr=0.1), nn.CrossEntropyLoss(), [], [0, 0]

        def name_of(loader, same):
            name = 'train_loader' if loader is train_loader else 'val_loader' if loader is val_loader else 'another loader'
            return name + ('' if same else ', other arguments')

        def fake_train_one_epoch(model, loader, optimizer, loss_fn, device):
            log.append('train_one_epoch(' + name_of(loader, model is net and optimizer is sgd and loss_fn is cross_entropy) + ')')
            counts[0] += 1
            return float(values[0][(counts[0] - 1) % epochs])

        def fake_evaluate(model, loader, loss_fn, device):
            log.append('evaluate(' + name_of(loader, model is net and loss_fn is cross_entropy) + ')')
            counts[1] += 1
            k = (counts[1] - 1) % epochs
            return float(values[1][k]), float(values[2][k])

        names = answers.fit.__globals__
        saved = {name: names[name] for name in ('train_one_epoch', 'evaluate') if name in names}
        names.update(train_one_epoch=fake_train_one_epoch, evaluate=fake_evaluate)
        try:
            history = answers.fit(net, train_loader, val_loader, sgd, cross_entropy, device, epochs)
        finally:
            for name in ('train_one_epoch', 'evaluate'):
                names.pop(name, None)
            names.update(saved)
        record('stand_in.log', log)
        for key in ('train_loss', 'val_loss', 'val_accuracy'):
            record('stand_in.' + key, [float(v) for v in history[key]])
            record('stand_in.' + key + '_floats', all(isinstance(v, float) for v in history[key]))
    except Exception as error:
        record('stand_in.error', type(error).__name__ + ': ' + str(error)[:200])
    try:  # 2. the real thing, for a fit that writes its loop out
        net = probe_net(inputs['fit.seed'], d_in, hidden, 3)
        history = answers.fit(net, *probe_loaders(inputs, 2), torch.optim.Adam(net.parameters(), lr=0.01),
                      nn.CrossEntropyLoss(), device, epochs)
        for key in ('train_loss', 'val_loss', 'val_accuracy'):
            record('real.' + key, [float(v) for v in history[key]])
    except Exception as error:
        record('real.error', type(error).__name__ + ': ' + str(error)[:200])


class ChallengeReads(TorchFunctionMode):
    """Counts the numbers a forward pass reads that do not come from its input: every tensor argument of a
    PyTorch function whose storage no earlier call produced and is not the input's, each storage once and
    whole. (A function mode, not a dispatch mode: the latter imports torch._dynamo, seconds.)"""

    def __init__(self, x):
        super().__init__()
        self.derived, self.read = {x.untyped_storage().data_ptr()}, {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        values = [*args, *(kwargs or {}).values()]
        for t in [v for value in values for v in (value if isinstance(value, (list, tuple)) else (value,))]:
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in self.derived:
                self.read[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes() // max(t.element_size(), 1)
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.derived.add(t.untyped_storage().data_ptr())
        return out


def challenge_size(model, in_features=2) -> int:
    """Every number the model keeps (its state_dict: parameters, trainable or not, and buffers) or its
    forward pass reads besides the input (weights in a plain tensor list too), whichever is larger."""
    kept = sum(t.numel() for t in model.state_dict().values())
    x = torch.zeros(4, in_features)
    reads = ChallengeReads(x)
    training = model.training
    try:
        model.eval()
        with reads, torch.no_grad():
            model(x)
    except Exception:  # a model that cannot run is judged by what comes next
        pass
    finally:
        model.train(training)
    return max(kept, sum(reads.read.values()))


def serve_challenge(inputs):
    """The trusted side's feed of the challenge's training batches (Probe.serve): the kernel asks for
    them one at a time (`ChallengeLoader`), and gets at most the budget of each spiral. The training
    points stay here (private inputs): the batches drawn are all the kernel ever holds of them.

    Prompts: 'challenge K start' (a new epoch: the DataLoader reshuffles, as iter() does), 'challenge
    K next' (its next batch: 'batch X Y', base64 .npy; 'end' when the epoch is over; 'budget' once
    the budget is drawn). Anything else is refused."""
    import base64
    import io
    import re

    loaders, epochs, served = {}, {}, [0] * CHALLENGE_DRAWS

    def encode(t: torch.Tensor) -> str:
        buffer = io.BytesIO()
        np.save(buffer, t.numpy(), allow_pickle=False)
        return base64.b64encode(buffer.getvalue()).decode()

    def feed(prompt: str) -> str:
        asked = re.fullmatch(r"challenge (\d) (start|next)", prompt)
        if asked is None or int(asked[1]) >= CHALLENGE_DRAWS:
            return "refused"
        k = int(asked[1])
        if k not in loaders:
            x, y = (torch.from_numpy(inputs[f"{PRIVATE}challenge.{k}.{name}"]) for name in ("x_train", "y_train"))
            loaders[k] = DataLoader(TensorDataset(x, y), batch_size=CHALLENGE_BATCH_SIZE, shuffle=True,
                                    generator=torch.Generator().manual_seed(int(inputs["challenge.seed"]) + k))
        if asked[2] == "start" or k not in epochs:
            epochs[k] = iter(loaders[k])
            if asked[2] == "start":
                return "started"
        batch = next(epochs[k], None)
        if batch is None:  # the epoch is over (the budget's last epoch ends like any other)
            return "end"
        if served[k] == CHALLENGE_MAX_BATCHES:
            return "budget"
        served[k] += 1
        return "batch " + " ".join(encode(t) for t in batch)

    return feed


class ChallengeLoader:
    """The grader's training loader in the kernel: len, iteration, batch_size, and the count drawn. It
    holds no data: each batch is asked of the trusted side (`serve_challenge`), which counts it and
    refuses any past the budget, so that no batch reaches training uncounted."""

    batch_size = CHALLENGE_BATCH_SIZE
    __slots__ = ("_draw", "drawn")

    def __init__(self, draw: int):
        self._draw, self.drawn = draw, 0

    def __len__(self):
        return -(-CHALLENGE_N // CHALLENGE_BATCH_SIZE)  # batches per epoch

    def __iter__(self):
        import base64
        import io

        from autograder.probes.kernel import ask

        ask(f"challenge {self._draw} start")
        while True:
            answer = ask(f"challenge {self._draw} next")
            if answer == "end":
                return
            if answer == "budget":
                raise RuntimeError(f"train_challenge drew more than the budget of {CHALLENGE_MAX_BATCHES} batches "
                                   f"({CHALLENGE_MAX_BATCHES // len(self)} epochs)")
            word, *arrays = answer.split(" ")
            if word != "batch" or len(arrays) != 2:
                raise RuntimeError(f"the grader's loader got {answer[:40]!r}")
            self.drawn += 1
            yield [torch.from_numpy(np.load(io.BytesIO(base64.b64decode(a)), allow_pickle=False))
                   for a in arrays]  # a list [x, y], as a DataLoader over a TensorDataset gives


def run_build_challenge_model(answers, inputs, record):
    x = torch.from_numpy(inputs['challenge.0.x_test'][:7])
    torch.manual_seed(int(inputs['challenge.seed']))
    model = answers.build_challenge_model(2, 3)
    record('is_module', isinstance(model, nn.Module))
    record('size', challenge_size(model))
    model.eval()
    with torch.no_grad():
        record('shape', list(model(x).shape))
        record('other_shape', list(answers.build_challenge_model(4, 5).eval()(torch.zeros(7, 4)).shape))


def run_train_challenge(answers, inputs, record):
    """Three spirals, each: a model built after manual_seed, trained on a budgeted loader, its predictions
    on the held-out points; the largest size and batch count, every prediction (in draw order). A model
    over the size budget is not trained: its size alone fails it, and a huge one would hold the
    grader for as long as its training takes."""
    sizes, trained_sizes, batches, predictions = [], [], [], []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small model trains fastest on one thread, and to the same numbers on any machine
    try:
        for k in range(CHALLENGE_DRAWS):
            torch.manual_seed(int(inputs['challenge.seed']) + k)
            model = answers.build_challenge_model(2, 3)
            sizes.append(challenge_size(model))
            if sizes[-1] > CHALLENGE_MAX_SIZE:  # it fails on its size alone: not trained, in no time
                record('size', sizes[-1])
                return
            loader = ChallengeLoader(k)  # its batches come from the trusted side, one at a time (serve_challenge)
            trained = answers.train_challenge(model, loader, torch.device('cpu'))
            batches.append(loader.drawn)
            if not isinstance(trained, nn.Module):
                record('is_module', False)
                return
            trained_sizes.append(challenge_size(trained))
            trained.eval()
            with torch.no_grad():
                predictions.append(trained(torch.from_numpy(inputs[f'challenge.{k}.x_test'])).argmax(dim=1))
    finally:
        torch.set_num_threads(threads)
    record('size', max(sizes))
    record('batches', max(batches))
    record('is_module', True)
    record('trained_size', max(trained_sizes))
    record('predictions', torch.cat(predictions))


def expected_build_challenge_model(inputs) -> dict:
    return {"is_module": True, "max_size": CHALLENGE_MAX_SIZE, "shape": [7, 3], "other_shape": [7, 5]}


def expected_train_challenge(inputs) -> dict:
    """The held-out labels of the three spirals, in draw order: equal parts, so the accuracy over all of
    them is the mean of the three accuracies."""
    labels = np.concatenate([inputs[f"{PRIVATE}challenge.{k}.y_test"] for k in range(CHALLENGE_DRAWS)])
    return {"labels": labels, "max_size": CHALLENGE_MAX_SIZE, "max_batches": CHALLENGE_MAX_BATCHES}


def _size_problem(got: dict, key: str, what: str) -> str | None:
    size = int(got[key])
    if size > CHALLENGE_MAX_SIZE:
        return (f"{what} keeps or reads {size:,} numbers besides its input; the budget is {CHALLENGE_MAX_SIZE:,}: "
                "make it narrower or shallower")
    return None


def _judge_build_challenge_model(got: dict, want: dict) -> str | None:
    """A module under the size budget, giving (B, num_classes) logits for (B, in_features) inputs."""
    missing = [k for k in ("is_module", "size", "shape", "other_shape") if k not in got]
    if missing:
        return f"build_challenge_model gave no {missing[0]}"
    if not bool(got["is_module"]):
        return "build_challenge_model should return an nn.Module"
    problem = _size_problem(got, "size", "build_challenge_model(2, 3)")
    for key, args in (("shape", "(2, 3) on a batch of 7 points"), ("other_shape", "(4, 5) on a batch of 7")):
        if problem is None and list(np.asarray(got[key]).ravel()) != list(want[key]):
            problem = (f"build_challenge_model{args.split(' on')[0]} gave outputs of shape "
                       f"{tuple(np.asarray(got[key]).ravel())} {args.split(' ', 1)[1]}; expected {tuple(want[key])}: "
                       "use in_features and num_classes")
    return problem


def _judge_train_challenge(got: dict, want: dict) -> str | None:
    """Within the rules, and at least the lowest tier of accuracy on the grader's held-out points."""
    if "is_module" in got and not bool(got["is_module"]):
        return "train_challenge should return the trained nn.Module (it returned something else, or nothing)"
    if "size" in got and (problem := _size_problem(got, "size", "your model")):  # then it was not trained
        return problem
    missing = [k for k in ("size", "batches", "is_module", "trained_size", "predictions") if k not in got]
    if missing:
        return f"train_challenge gave no {missing[0]}"
    problem = _size_problem(got, "trained_size", "the model train_challenge returned")
    if problem:
        return problem
    if int(got["batches"]) > CHALLENGE_MAX_BATCHES:
        return f"train_challenge drew {int(got['batches'])} batches; the budget is {CHALLENGE_MAX_BATCHES}"
    if int(got["batches"]) == 0:
        return ("train_challenge drew no batch from its train_loader: it must learn from the data it is "
                "given (the grader's spiral is not your notebook's)")
    predictions, labels = np.asarray(got["predictions"]).ravel(), np.asarray(want["labels"]).ravel()
    if predictions.shape != labels.shape:
        return f"the trained model gave {predictions.size} predictions for {labels.size} points"
    accuracy = float((predictions == labels).mean())
    if accuracy < CHALLENGE_PASS:
        return (f"the trained models classified {accuracy:.1%} of the grader's held-out points correctly, on the "
                f"mean of {CHALLENGE_DRAWS} spirals (they drew up to {int(got['batches'])} batches); the lowest tier "
                f"needs {CHALLENGE_PASS:.0%}")
    return None


def _tier(grade_id: str, threshold: float):
    """The judgment of one tier cell: the held-out accuracy reaches `threshold` (run only once the
    exercise passed, so the predictions are there and of the right shape)."""
    def judge(got: dict, want: dict) -> str | None:
        labels = np.asarray(want["labels"]).ravel()
        accuracy = float((np.asarray(got["predictions"]).ravel() == labels).mean())
        if accuracy < threshold:
            return (f"{grade_id}: the trained models classified {accuracy:.1%} of the grader's held-out points "
                    f"correctly, on the mean of {CHALLENGE_DRAWS} spirals; this tier needs {threshold:.1%}")
        return None
    return judge


def expected_make_loaders(inputs) -> dict:
    """What the split must be: sizes, and whether the reference reshuffles and depends on the seed."""
    from helpers.reference import data_loading as ref

    n, fraction, batch = int(inputs["loaders.n"]), float(inputs["loaders.fraction"]), int(inputs["loaders.batch"])
    seed, other = (int(v) for v in inputs["loaders.seeds"][:2])
    train_loader, val_loader = ref.make_loaders(ProbeIds(n), batch, fraction, seed)
    first = probe_ids(train_loader)
    loaders = {"n": n, "n_val": int(fraction * n), "batch_size": batch,
               "reshuffles": first != probe_ids(train_loader),
               "seed_matters": sorted(probe_ids(val_loader)) != sorted(
                   probe_ids(ref.make_loaders(ProbeIds(n), batch, fraction, other)[1]))}
    return loaders


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
    n, n_val, batch = int(want["n"]), int(want["n_val"]), int(want["batch_size"])
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
    if bool(want["reshuffles"]) and ids["train2"] == ids["train1"]:
        return f"make_loaders: the training loader gave the same order in two epochs {where}"
    if bool(want["seed_matters"]) and sorted(ids["other_val"]) == sorted(ids["val"]):
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
    serve=serve_challenge,
    exercises={
        # float64 models: only the order of float operations differs between two correct answers.
        "TensorPairDataset": Exercise(run_TensorPairDataset, tolerance=Tolerance(1e-6, 1e-6)),  # float32 too
        "make_loaders": Exercise(run_make_loaders, expected=expected_make_loaders, judge=_judge_make_loaders),
        "train_one_epoch": Exercise(run_train_one_epoch, tolerance=Tolerance(1e-7, 1e-9)),
        "evaluate": Exercise(run_evaluate, tolerance=Tolerance(1e-9, 1e-12)),
        "fit": Exercise(run_fit, judge=_judge_fit),
        "init_classifier": Exercise(run_init_classifier, expected=expected_init_classifier, judge=judge_init_classifier),
        "build_challenge_model": Exercise(run_build_challenge_model, expected=expected_build_challenge_model,
                                          judge=_judge_build_challenge_model),
        "train_challenge": Exercise(run_train_challenge, expected=expected_train_challenge,
                                    judge=_judge_train_challenge,
                                    cells={gid: _tier(gid, t) for gid, t in CHALLENGE_TIERS.items()}),
    },
)

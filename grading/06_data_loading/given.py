"""What the grader hands 06's functions in the kernel: datasets, models with batch norm, loaders, stand-ins
for train_one_epoch and evaluate, the challenge's budgeted loader.

Stand-ins build inputs and hand back what the student's objects give (ids a loader yields, a model's state,
the calls a function made to the grader's stand-ins); they compute no property, no expected value and no
verdict (autograder/probes/__init__.py).
"""

import base64
import io

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset

from autograder.probes.caller import ask
from autograder.probes.stand_ins import StandIn, floats, type_names  # noqa: F401 - reached as k.given.*
from helpers.challenge import Traced  # noqa: F401 - reached as k.given.Traced


class Ids(Dataset):
    """N samples that are not a TensorDataset: sample i is ([i], i)."""

    def __init__(self, n):
        self.n = int(n)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.tensor([float(i)]), torch.tensor(int(i))


def ids(loader):
    """The sample ids a loader over Ids yields, in order, one pass."""
    return [int(i) for _, y in loader for i in y]


def batch_sizes(loader):
    return [len(y) for _, y in loader]


class Transform:
    """x -> x.reshape(-1) * scale + shift + 0.001 * (how many times it ran before): what a dataset yields
    then shows when, and how often, it applied its transform."""

    def __init__(self, scale, shift):
        self.scale, self.shift, self.calls = float(scale), float(shift), 0

    def __call__(self, x):
        self.calls += 1
        return x.reshape(-1) * self.scale + self.shift + 0.001 * (self.calls - 1)


def item(dataset, index):
    """dataset[index], as a list of its parts (or the value itself when it has none)."""
    got = dataset[int(index)]
    return list(got) if isinstance(got, (tuple, list)) else got


def first_batch(dataset, batch_size):
    return list(next(iter(DataLoader(dataset, batch_size=int(batch_size)))))


def net(seed, d_in, hidden, d_out, dropout=0.0):
    """A float64 MLP with batch norm whose running statistics differ from any batch's own."""
    torch.manual_seed(int(seed))
    layers = [nn.Linear(int(d_in), int(hidden)), nn.BatchNorm1d(int(hidden)), nn.ReLU()]
    layers += [nn.Dropout(float(dropout))] if dropout else []
    model = nn.Sequential(*layers, nn.Linear(int(hidden), int(d_out))).double()
    with torch.no_grad():
        model(3 * torch.randn(64, int(d_in), dtype=torch.float64) + 1)
    return model


def state(model):
    """Every value of the model's state_dict (parameters and buffers), in one float64 row."""
    return torch.cat([t.detach().double().flatten() for t in model.state_dict().values()])


def loader(x, y, batch_size, shuffle_seed=None):
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    generator = torch.Generator().manual_seed(int(shuffle_seed)) if shuffle_seed is not None else None
    return DataLoader(TensorDataset(x, y), batch_size=int(batch_size), shuffle=generator is not None,
                      generator=generator)


class ModeLog:
    """A forward hook that keeps, for every forward pass of the model, (training mode, grad mode)."""

    def __init__(self, model):
        self.calls = []
        model.register_forward_hook(lambda module, args, output: self.calls.append(
            [bool(module.training), bool(torch.is_grad_enabled())]))


def fit_loaders(x, y, shuffle_seed):
    """fit's loaders: 17 training samples in batches of 5 (5, 5, 5, 2), reshuffled; 7 validation ones (4, 3)."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    train = DataLoader(TensorDataset(x[:17], y[:17]), batch_size=5, shuffle=True,
                       generator=torch.Generator().manual_seed(int(shuffle_seed)))
    return train, DataLoader(TensorDataset(x[17:], y[17:]), batch_size=4)


class FitStandIns:
    """Stand-ins for train_one_epoch and evaluate: each call is logged (which loader, whether with fit's own
    model, optimizer and loss), and returns the grader's next value."""

    def __init__(self, model, optimizer, loss_fn, train_loader, val_loader, values):
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.loaders = {id(train_loader): "train_loader", id(val_loader): "val_loader"}
        self.values, self.log, self.counts = np.asarray(values), [], [0, 0]

    def _name(self, loader, same):
        return self.loaders.get(id(loader), "another loader") + ("" if same else ", other arguments")

    def train_one_epoch(self, model, loader, optimizer, loss_fn, device):
        same = model is self.model and optimizer is self.optimizer and loss_fn is self.loss_fn
        self.log.append(f"train_one_epoch({self._name(loader, same)})")
        self.counts[0] += 1
        return float(self.values[0][(self.counts[0] - 1) % self.values.shape[1]])

    def evaluate(self, model, loader, loss_fn, device):
        self.log.append(f"evaluate({self._name(loader, model is self.model and loss_fn is self.loss_fn)})")
        self.counts[1] += 1
        k = (self.counts[1] - 1) % self.values.shape[1]
        return float(self.values[1][k]), float(self.values[2][k])


def classifier(seed, widths):
    """Linear layers of the given widths, ReLU between them, drawn from seed (PyTorch's default init)."""
    torch.manual_seed(int(seed))
    widths = [int(w) for w in widths]
    layers = []
    for i, (fan_in, fan_out) in enumerate(zip(widths, widths[1:])):
        layers += [nn.Linear(fan_in, fan_out)] + ([nn.ReLU()] if i < len(widths) - 2 else [])
    return nn.Sequential(*layers)


def linears(model):
    return [m for m in model.modules() if isinstance(m, nn.Linear)]


# -- the challenge ------------------------------------------------------------------------------------------

BATCH_SIZE, BATCHES_PER_EPOCH = 50, 40  # the grader's loader: 2,000 points of one spiral


class ChallengeLoader:
    """The grader's training loader in the kernel: len, iteration, batch_size. It holds no data: each batch is
    asked of the grader (the probe's serve_challenge), which counts it and refuses any past the budget."""

    batch_size = BATCH_SIZE
    __slots__ = ("_draw", "_budget")

    def __init__(self, draw: int, budget: int):
        self._draw, self._budget = int(draw), int(budget)

    def __len__(self):
        return BATCHES_PER_EPOCH  # batches per epoch

    def __iter__(self):
        ask(f"challenge {self._draw} start")
        while True:
            answer = ask(f"challenge {self._draw} next")
            if answer == "end":
                return
            if answer == "budget":
                raise RuntimeError(f"train_challenge drew more than the budget of {self._budget} batches "
                                   f"({self._budget // BATCHES_PER_EPOCH} epochs)")
            word, *arrays = answer.split(" ")
            if word != "batch" or len(arrays) != 2:
                raise RuntimeError(f"the grader's loader got {answer[:40]!r}")
            yield [torch.from_numpy(np.load(io.BytesIO(base64.b64decode(a)), allow_pickle=False))
                   for a in arrays]  # a list [x, y], as a DataLoader over a TensorDataset gives


class OneThread:
    """`with OneThread():` PyTorch on one thread (a small model trains fastest so, and to the same numbers on
    any machine), then as it was."""

    def __enter__(self):
        self.threads = torch.get_num_threads()
        torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        torch.set_num_threads(self.threads)
        return False

"""What the grader hands 05's optimizers and loops in the kernel: parameters, gradients, small models.

Stand-ins build inputs and hand back what the student's objects hold; they compute no property, no
expected value and no verdict (autograder/probes/__init__.py).
"""

import io

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from autograder.probes.stand_ins import floats, type_names  # noqa: F401 - the probe reaches them as k.given.*


def set_grad(p, grad):
    """The step's gradient of p, as backward leaves it: none (None), a new .grad, or copied into the one
    p has (in place, as backward does after zero_grad(set_to_none=False))."""
    if grad is None:
        p.grad = None
    elif p.grad is None:
        p.grad = torch.as_tensor(grad, dtype=torch.float64).clone()
    else:
        p.grad.copy_(torch.as_tensor(grad, dtype=torch.float64))


def flat(tensors):
    """Every value of tensors (detached), in one row."""
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def grads_row(params):
    """Every gradient of params in one row, NaN where there is none."""
    return flat([torch.full_like(p, float("nan")) if p.grad is None else p.grad for p in params])


def fed(params, how):
    """params as a list, a generator or a tuple: optimizers get any iterable."""
    return {"list": list, "generator": lambda ps: (p for p in ps), "tuple": tuple}[how](params)


def mlp(w0, b0, w1, b1):
    """Linear, Tanh, Linear in float64 with these weights."""
    model = nn.Sequential(nn.Linear(w0.shape[1], w0.shape[0]), nn.Tanh(), nn.Linear(w1.shape[1], w1.shape[0]))
    model = model.double()
    with torch.no_grad():
        for layer, (w, b) in ((model[0], (w0, b0)), (model[2], (w1, b1))):
            layer.weight.copy_(torch.as_tensor(w))
            layer.bias.copy_(torch.as_tensor(b))
    return model


class TorchOptimWatch:
    """`with TorchOptimWatch() as calls:` torch.optim's own SGD, Adam and AdamW steps and their functional
    updates append their names to `calls` when they run, then are as they were. The student's optimizer
    must do its own update; what it hands to torch.optim shows here (the kernel's word: the probe's
    docstring says what a forger gains)."""

    def __init__(self):
        import importlib  # torch.optim deletes the names of its submodules: reach them as modules

        self.targets = [(torch.optim.SGD, "step", "torch.optim.SGD.step"),
                        (torch.optim.Adam, "step", "torch.optim.Adam.step"),
                        (torch.optim.AdamW, "step", "torch.optim.AdamW.step")]
        self.targets += [(importlib.import_module(f"torch.optim.{name}"), name, f"torch.optim.{name}.{name}")
                         for name in ("sgd", "adam", "adamw")]
        self.calls = []

    def _wrap(self, function, label):
        def watched(*args, **kwargs):
            self.calls.append(label)
            return function(*args, **kwargs)
        return watched

    def __enter__(self):
        self.saved = []
        for owner, name, label in self.targets:
            if not hasattr(owner, name):  # a function this release of torch does not have
                continue
            own = vars(owner).get(name)  # None: inherited (AdamW's step is Adam's in recent torch)
            self.saved.append((owner, name, own))
            setattr(owner, name, self._wrap(getattr(owner, name), label))
        return self.calls

    def __exit__(self, *exc):
        for owner, name, own in reversed(self.saved):
            if own is None:
                delattr(owner, name)
            else:
                setattr(owner, name, own)
        return False


def checkpoint_run(seed, sizes, lrs, adam, x, y, batch_size, generator_seed):
    """What a resume must restore, built as a program builds it: a small float64 net with batch norm (its
    running statistics are buffers) and dropout (its masks come from torch's random state), torch.optim's SGD
    with momentum or Adam over two groups, a StepLR scheduler, and a DataLoader that shuffles (x, y, index)
    with a generator of its own. Returns (model, optimizer, scheduler, generator, loader)."""
    torch.manual_seed(int(seed))
    d_in, hidden, d_out = (int(v) for v in sizes)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.Tanh(), nn.Dropout(0.3),
                          nn.Linear(hidden, d_out)).double()
    groups = [{"params": model[0].parameters(), "lr": float(lrs[0])},
              {"params": [*model[1].parameters(), *model[4].parameters()], "lr": float(lrs[1])}]
    optimizer = torch.optim.Adam(groups) if int(adam) else torch.optim.SGD(groups, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    generator = torch.Generator().manual_seed(int(generator_seed))
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    data = TensorDataset(x, y, torch.arange(len(x)))
    loader = DataLoader(data, batch_size=int(batch_size), shuffle=True, generator=generator, drop_last=True)
    return model, optimizer, scheduler, generator, loader


def checkpoint_epochs(model, optimizer, scheduler, loader, epochs):
    """`epochs` epochs of MSE training in training mode (batch norm's statistics move, dropout draws), the
    scheduler stepped after each. Returns (the groups' learning rates at each epoch's start, the index of
    every example in the order the loader gave them), as lists."""
    lrs, order = [], []
    for _ in range(int(epochs)):
        lrs.append([group["lr"] for group in optimizer.param_groups])
        model.train()
        for x, y, index in loader:
            order.extend(index.tolist())
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        scheduler.step()
    return lrs, order


def through_torch_save(checkpoint):
    """The checkpoint written with torch.save and read back, as a program that saves it to disk does."""
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


def state(model):
    """Every value the model's state_dict holds (parameters and buffers), in one row, float64."""
    return torch.cat([t.detach().double().reshape(-1) for t in model.state_dict().values()])

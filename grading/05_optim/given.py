"""What the grader hands 05's optimizers and loops in the kernel: parameters, gradients, small models.

Stand-ins build inputs and hand back what the student's objects hold; they compute no property, no
expected value and no verdict (autograder/probes/__init__.py).
"""

import copy
import io

import torch
from torch import nn

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


def checkpoint_run(seed, sizes, lrs, adam):
    """A small float64 net with batch norm (its running statistics are buffers a resume must restore), and
    torch.optim's SGD with momentum or Adam over two groups."""
    torch.manual_seed(int(seed))
    d_in, hidden, d_out = (int(v) for v in sizes)
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.BatchNorm1d(hidden), nn.Tanh(), nn.Linear(hidden, d_out)).double()
    groups = [{"params": model[0].parameters(), "lr": float(lrs[0])},
              {"params": [*model[1].parameters(), *model[3].parameters()], "lr": float(lrs[1])}]
    optimizer = torch.optim.Adam(groups) if int(adam) else torch.optim.SGD(groups, momentum=0.9)
    return model, optimizer


def checkpoint_steps(model, optimizer, x, y, steps):
    """`steps` steps of MSE training on (x, y), in training mode (batch norm's statistics move)."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    model.train()
    for _ in range(int(steps)):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def halve_lr(optimizer, group):
    optimizer.param_groups[group]["lr"] *= 0.5


def through_torch_save(checkpoint):
    """The checkpoint written with torch.save and read back, as a program that saves it to disk does."""
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=False)


def save(model, optimizer, step):
    """The grader's own save: copies of both state_dicts."""
    return copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step})


def load(model, optimizer, checkpoint):
    """The grader's own load: what the checkpoint holds of the model (strict=False: what it lacks then shows in
    the resumed run, which the judge names)."""
    model.load_state_dict(checkpoint["model"], strict=False)
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]


def state(model):
    """Every value the model's state_dict holds (parameters and buffers), in one row, float64."""
    return torch.cat([t.detach().double().reshape(-1) for t in model.state_dict().values()])

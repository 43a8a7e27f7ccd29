"""Probes of 05_optim: the student's update rules on secret parameters and gradients, step for step.

The gradients are written into `.grad` directly (in place once a gradient exists, as backward does
after zero_grad(set_to_none=False)), some parameters have none on some steps, every group's learning
rate changes between two steps (the only way to see a learning rate folded into the velocity), and
the optimizer is rebuilt from its own state_dict halfway (what it keeps must live in self.state).
The recorded trajectory is compared with the reference running through the same functions.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from autograder.probes import Exercise, Probe, Tolerance, compare_arrays

STEPS, LR_CHANGE_AT, RESUME_AT = 7, 3, 5  # optimizer steps; the step before which lr changes; rebuilt
# float64 throughout; the notebook's own tolerance for float64 optimizer trajectories.
TIGHT = Tolerance(1e-7, 1e-10)

def probe_tensor(inputs, key):
    """One secret input as a float64 tensor of its own."""
    return torch.tensor(inputs[key], dtype=torch.float64)


def probe_params(inputs, prefix):
    """The secret starting parameters: float64 leaves that require grad."""
    count = sum(1 for key in inputs if key.startswith(prefix + ".p"))
    return [probe_tensor(inputs, f"{prefix}.p{i}").requires_grad_(True) for i in range(count)]


def probe_set_grads(params, inputs, prefix, step):
    """Step `step`'s secret gradients; None where the mask says so; in place where a .grad exists."""
    mask = inputs[f"{prefix}.mask"][step]
    for i, p in enumerate(params):
        if not mask[i]:
            p.grad = None
        elif p.grad is None:
            p.grad = probe_tensor(inputs, f"{prefix}.g{step}_{i}")
        else:
            p.grad.copy_(probe_tensor(inputs, f"{prefix}.g{step}_{i}"))


def probe_flat(tensors):
    """Every value of tensors, in one row."""
    return torch.cat([t.detach().reshape(-1) for t in tensors])


def probe_floats(values):
    """values as floats, tensors detached first (a wrong type is judged apart)."""
    return [float(v.detach()) if isinstance(v, torch.Tensor) else float(v) for v in values]


def probe_grads(params):
    """Every gradient of params in one row, NaN where there is none."""
    return probe_flat([torch.full_like(p, float("nan")) if p.grad is None else p.grad for p in params])


def probe_sgd_step(sgd_step, inputs, record):
    """sgd_step fed a list, a generator, a tuple: parameters and gradients after each call."""
    params = probe_params(inputs, "sgd")
    trajectory, grads = [], []
    for call, feed in enumerate((list, lambda ps: (p for p in ps), tuple)):
        probe_set_grads(params, inputs, "sgd", call)
        sgd_step(feed(params), float(inputs["sgd.lr"][call]))
        trajectory.append(probe_flat(params))
        grads.append(probe_grads(params))
    record("trajectory", torch.stack(trajectory))
    record("grads_kept", torch.stack(grads))
    record("leaves", [p.is_leaf and p.requires_grad for p in params])


def probe_steps(make, inputs, prefix, record):
    """STEPS steps of make(params) on secret gradients; lr changed before one, rebuilt from state_dict after one."""
    params = probe_params(inputs, prefix)
    optimizer = make(params)
    trajectory = []
    for step in range(STEPS):
        if step == LR_CHANGE_AT:
            for group, lr in zip(optimizer.param_groups, inputs[f"{prefix}.lr_new"]):
                group["lr"] = float(lr)
        if step == RESUME_AT:
            saved = optimizer.state_dict()
            optimizer = make(params)
            optimizer.load_state_dict(saved)
        probe_set_grads(params, inputs, prefix, step)
        optimizer.step()
        trajectory.append(probe_flat(params))
    record("is_optimizer", isinstance(optimizer, torch.optim.Optimizer))
    record("trajectory", torch.stack(trajectory))


def probe_momentum(SGDMomentum, inputs, record):
    """Two param groups, the first with its own lr and momentum."""
    lr, momentum, lr0, momentum0 = (float(v) for v in inputs["momentum.hyper"])
    probe_steps(lambda ps: SGDMomentum([{"params": ps[:2], "lr": lr0, "momentum": momentum0},
                                        {"params": ps[2:]}], lr=lr, momentum=momentum),
                inputs, "momentum", record)


def probe_adam(Adam, inputs, record):
    """Two param groups, the first with its own betas and eps, the second with its own lr."""
    lr, beta1, beta2, eps, lr1, beta1_0, beta2_0, eps0 = (float(v) for v in inputs["adam.hyper"])
    probe_steps(lambda ps: Adam([{"params": ps[:2], "betas": (beta1_0, beta2_0), "eps": eps0},
                                 {"params": ps[2:], "lr": lr1}], lr=lr, betas=(beta1, beta2), eps=eps),
                inputs, "adam", record)


def probe_mlp(inputs, prefix):
    """Linear, Tanh, Linear in float64 with the secret weights prefix.w0, b0, w1, b1."""
    w0, w1 = probe_tensor(inputs, f"{prefix}.w0"), probe_tensor(inputs, f"{prefix}.w1")
    model = nn.Sequential(nn.Linear(w0.shape[1], w0.shape[0]), nn.Tanh(), nn.Linear(w1.shape[1], w1.shape[0]))
    model = model.double()
    with torch.no_grad():
        for layer, i in ((model[0], 0), (model[2], 1)):
            layer.weight.copy_(probe_tensor(inputs, f"{prefix}.w{i}"))
            layer.bias.copy_(probe_tensor(inputs, f"{prefix}.b{i}"))
    return model


def probe_train(train, inputs, record):
    """train with torch.optim.SGD(momentum) on MSE, then torch.optim.Adam on cross-entropy."""
    x, steps = probe_tensor(inputs, "train.x"), int(inputs["train.steps"])
    lr, momentum, adam_lr = (float(v) for v in inputs["train.hyper"])
    runs = {
        "mse": (probe_mlp(inputs, "train.regressor"), probe_tensor(inputs, "train.y"), nn.MSELoss(),
                lambda m: torch.optim.SGD(m.parameters(), lr=lr, momentum=momentum)),
        "cross_entropy": (probe_mlp(inputs, "train.classifier"), torch.tensor(inputs["train.labels"]),
                          nn.CrossEntropyLoss(), lambda m: torch.optim.Adam(m.parameters(), lr=adam_lr)),
    }
    for name, (model, y, loss_fn, make) in runs.items():
        losses = train(model, make(model), loss_fn, x, y, steps)
        record(f"{name}_losses_are_floats", [isinstance(v, float) for v in losses])
        record(f"{name}_losses", probe_floats(losses))
        record(f"{name}_weights", probe_flat(list(model.parameters())))


def _params_and_grads(rng: np.random.Generator, prefix: str, steps: int) -> dict[str, np.ndarray]:
    """Four parameters of random shapes, a gradient of each per step (of varied scales), and which are None."""
    a, b, c = (int(v) for v in rng.integers(2, 6, size=3))
    shapes = [(a, b), (b,), (c, a, 2), (c,)]
    inputs = {f"{prefix}.p{i}": rng.standard_normal(shape) for i, shape in enumerate(shapes)}
    scales = 10.0 ** rng.uniform(-1.5, 0.5, size=len(shapes))
    for step in range(steps):
        for i, shape in enumerate(shapes):
            inputs[f"{prefix}.g{step}_{i}"] = rng.standard_normal(shape) * scales[i]
    # Missing gradients only before the learning rate changes, so that the step where a wrong answer
    # first parts from the reference says what went wrong (judge_trajectory).
    mask = np.ones((steps, len(shapes)), dtype=bool)
    mask[:LR_CHANGE_AT] = rng.random((min(steps, LR_CHANGE_AT), len(shapes))) > 0.15
    mask[:, 0] = True  # always something to update
    mask[:2, 3] = False  # a parameter whose first gradient comes late
    mask[1, 1] = False  # one that skips a step
    inputs[f"{prefix}.mask"] = mask
    return inputs


def _mlp(rng: np.random.Generator, prefix: str, d_in: int, h: int, d_out: int) -> dict[str, np.ndarray]:
    return {f"{prefix}.w0": rng.standard_normal((h, d_in)) * 0.5, f"{prefix}.b0": rng.standard_normal(h) * 0.5,
            f"{prefix}.w1": rng.standard_normal((d_out, h)) * 0.5, f"{prefix}.b1": rng.standard_normal(d_out) * 0.5}


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Secret parameters, gradients, hyperparameters, and data for the training loop."""
    inputs = {**_params_and_grads(rng, "sgd", 3), "sgd.lr": rng.uniform(0.05, 0.5, size=3)}
    inputs.update(_params_and_grads(rng, "momentum", STEPS))
    inputs["momentum.hyper"] = np.array([rng.uniform(0.02, 0.2), rng.uniform(0.5, 0.95),
                                         rng.uniform(0.02, 0.2), rng.uniform(0.3, 0.99)])
    inputs["momentum.lr_new"] = rng.uniform(0.02, 0.2, size=2)
    inputs.update(_params_and_grads(rng, "adam", STEPS))
    # eps from 0.01 to 0.1: large enough that where it goes (inside or outside the square root) shows
    inputs["adam.hyper"] = np.array([rng.uniform(0.01, 0.1), rng.uniform(0.5, 0.95), rng.uniform(0.8, 0.999),
                                     10 ** rng.uniform(-2, -1), rng.uniform(0.01, 0.1), rng.uniform(0.0, 0.9),
                                     rng.uniform(0.5, 0.99), 10 ** rng.uniform(-2, -1)])
    inputs["adam.lr_new"] = rng.uniform(0.005, 0.1, size=2)
    n, d_in, h, d_out, classes = (int(v) for v in rng.integers(3, 10, size=5))
    inputs.update({**_mlp(rng, "train.regressor", d_in, h, d_out), **_mlp(rng, "train.classifier", d_in, h, classes),
                   "train.x": rng.standard_normal((n, d_in)), "train.y": rng.standard_normal((n, d_out)),
                   "train.labels": rng.integers(0, classes, size=n), "train.steps": np.asarray(int(rng.integers(4, 10))),
                   "train.hyper": np.array([rng.uniform(0.02, 0.2), rng.uniform(0.5, 0.95), rng.uniform(0.005, 0.05)])})
    n = int(rng.integers(6, 14))
    sizes = rng.integers(2, 7, size=3)
    inputs.update({"ckpt.seed": np.asarray(int(rng.integers(2**31))), "ckpt.sizes": sizes,
                   "ckpt.x": rng.standard_normal((n, int(sizes[0]))), "ckpt.y": rng.standard_normal((n, int(sizes[2]))),
                   "ckpt.lrs": rng.uniform(0.005, 0.05, size=2), "ckpt.adam": np.asarray(int(rng.integers(0, 2))),
                   "ckpt.steps": rng.integers(2, 6, size=2)})
    return inputs


# -- checkpoint and resume -------------------------------------------------------------------------

def probe_checkpoint_run(inputs):
    """A small float64 net with secret weights and data, and a torch.optim optimizer with momentum or
    Adam state and two groups (one learning rate changed before the checkpoint)."""
    torch.manual_seed(int(inputs["ckpt.seed"]))
    d_in, hidden, d_out = (int(v) for v in inputs["ckpt.sizes"])
    model = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, d_out)).double()
    groups = [{"params": model[0].parameters(), "lr": float(inputs["ckpt.lrs"][0])},
              {"params": model[2].parameters(), "lr": float(inputs["ckpt.lrs"][1])}]
    optimizer = (torch.optim.Adam(groups) if int(inputs["ckpt.adam"]) else torch.optim.SGD(groups, momentum=0.9))
    return model, optimizer


def probe_checkpoint_steps(model, optimizer, inputs, steps):
    x, y = probe_tensor(inputs, "ckpt.x"), probe_tensor(inputs, "ckpt.y")
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def probe_resume(save, load, inputs, record):
    """Train, checkpoint with `save`, train on (the uninterrupted run); a rebuilt model and optimizer
    (other initial weights) restored with `load` from the checkpoint after a torch.save round trip and
    trained as far: both runs' parameters, the step returned, whether the checkpoint stayed as it was."""
    import copy
    import io

    before, after = (int(v) for v in inputs["ckpt.steps"])
    model, optimizer = probe_checkpoint_run(inputs)
    probe_checkpoint_steps(model, optimizer, inputs, before)
    optimizer.param_groups[1]["lr"] *= 0.5
    checkpoint = save(model, optimizer, before)
    snapshot = copy.deepcopy(checkpoint)
    probe_checkpoint_steps(model, optimizer, inputs, after)
    record("unchanged", all(torch.equal(a, b) for a, b in zip(snapshot["model"].values(), checkpoint["model"].values()))
           if isinstance(checkpoint, dict) and "model" in checkpoint else True)
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)  # written after training went on, as a program that saves it later does
    buffer.seek(0)
    torch.manual_seed(int(inputs["ckpt.seed"]) + 1)
    resumed, resumed_optimizer = probe_checkpoint_run(dict(inputs, **{"ckpt.seed": np.asarray(int(inputs["ckpt.seed"]) + 1)}))
    record("step", int(load(resumed, resumed_optimizer, torch.load(buffer, weights_only=False))))
    probe_checkpoint_steps(resumed, resumed_optimizer, inputs, after)
    for i, (mine, theirs) in enumerate(zip(resumed.parameters(), model.parameters())):
        record(f"resumed{i}", mine)
        record(f"uninterrupted{i}", theirs)


def probe_save(model, optimizer, step):
    """The grader's own save: copies of both state_dicts."""
    import copy

    return copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step})


def probe_load(model, optimizer, checkpoint):
    """The grader's own load."""
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]


def run_save_checkpoint(answers, inputs, record):
    probe_resume(answers.save_checkpoint, probe_load, inputs, record)


def run_load_checkpoint(answers, inputs, record):
    probe_resume(probe_save, answers.load_checkpoint, inputs, record)


# What the optimizer met at each step, for the first one where its parameters part from the reference's.
WHERE_TO_LOOK = [
    (1, "on the first step: the update rule itself"),
    (LR_CHANGE_AT, "before the learning rate changed: what is carried from step to step, per parameter "
                   "(some parameters had no gradient on some steps and must be left alone)"),
    (RESUME_AT, f"after every group's lr was changed before step {LR_CHANGE_AT + 1}: read lr from the group "
                "at every step and keep it out of what the state carries"),
    (STEPS, f"after the optimizer was rebuilt from its state_dict() before step {RESUME_AT + 1}: whatever it "
            "carries between steps must live in self.state[p]"),
]


def judge_trajectory(exercise: str):
    """A judge that names the first step where the trajectories part, and what that step changed."""
    def judge(got: dict, want: dict) -> str | None:
        for key in want:
            if key not in got:
                return f"{exercise} gave no {key}"
        if compare_arrays(got["is_optimizer"], want["is_optimizer"], rtol=0, atol=0):
            return f"{exercise} is not a torch.optim.Optimizer"
        trajectory, expected_trajectory = got["trajectory"], want["trajectory"]
        if trajectory.shape != expected_trajectory.shape:
            return f"{exercise}: trajectory has shape {trajectory.shape}; expected {expected_trajectory.shape}"
        for step in range(STEPS):
            message = compare_arrays(trajectory[step], expected_trajectory[step], rtol=TIGHT.rtol, atol=TIGHT.atol)
            if message:
                where = next(text for last, text in WHERE_TO_LOOK if step + 1 <= last)
                return (f"{exercise}: after step {step + 1} of {STEPS} on secret parameters and gradients, "
                        f"the parameters {message.replace('differs', 'differ', 1)}; they first part {where}")
        return None
    return judge


def driver(name: str, probe_function):
    """A run that hands the answer called `name` to probe_function(answer, inputs, record)."""
    def run(answers, inputs, record):
        probe_function(getattr(answers, name), inputs, record)
    run.__name__ = f"run_{name}"
    return run


PROBE = Probe(
    assignment="05_optim",
    reference="helpers.reference.optim",
    make_inputs=make_inputs,
    exercises={
        "sgd_step": Exercise(driver("sgd_step", probe_sgd_step), tolerance=TIGHT),
        "SGDMomentum": Exercise(driver("SGDMomentum", probe_momentum), tolerance=TIGHT,
                                judge=judge_trajectory("SGDMomentum")),
        "Adam": Exercise(driver("Adam", probe_adam), tolerance=TIGHT, judge=judge_trajectory("Adam")),
        "train": Exercise(driver("train", probe_train), tolerance=TIGHT),
        # torch.optim on both sides: a resume that restores everything gives the same bits
        "save_checkpoint": Exercise(run_save_checkpoint, tolerance=TIGHT),
        "load_checkpoint": Exercise(run_load_checkpoint, tolerance=TIGHT),
    },
)

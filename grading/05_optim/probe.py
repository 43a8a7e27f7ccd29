"""Probes of 05_optim: the student's update rules on secret parameters and gradients, step for step.

The gradients are written into `.grad` directly (in place once a gradient exists, as backward does
after zero_grad(set_to_none=False)), some parameters have none on some steps, every group's learning
rate changes between two steps (the only way to see a learning rate folded into the velocity), and
the optimizer is rebuilt from its own state_dict halfway (what it keeps must live in self.state).
The recorded trajectory is compared with the reference running through the same functions.
"""

from __future__ import annotations

import numpy as np

from autograder.probes import Exercise, Probe, Tolerance, compare_arrays, compare_records

STEPS, LR_CHANGE_AT, RESUME_AT = 7, 3, 5  # optimizer steps; the step before which lr changes; rebuilt
# float64 throughout; the notebook's own tolerance for float64 optimizer trajectories.
TIGHT = Tolerance(1e-7, 1e-10)

def probe_params(k, inputs, prefix):
    """The secret starting parameters, in the kernel: float64 leaves that require grad."""
    count = sum(1 for key in inputs if key.startswith(prefix + ".p"))
    return [k.tensor(inputs[f"{prefix}.p{i}"], dtype="float64", requires_grad=True) for i in range(count)]


def probe_set_grads(k, params, inputs, prefix, step):
    """Step `step`'s secret gradients; None where the mask says so; in place where a .grad exists."""
    mask = inputs[f"{prefix}.mask"][step]
    for i, p in enumerate(params):
        k.given.set_grad(p, inputs[f"{prefix}.g{step}_{i}"] if mask[i] else None)


def probe_sgd_step(k, sgd_step, inputs, record):
    """sgd_step fed a list, a generator, a tuple: parameters and gradients after each call."""
    params = probe_params(k, inputs, "sgd")
    torch = k.module("torch")
    trajectory, grads = [], []
    for call, how in enumerate(("list", "generator", "tuple")):
        probe_set_grads(k, params, inputs, "sgd", call)
        sgd_step(k.given.fed(params, how), float(inputs["sgd.lr"][call]))
        trajectory.append(k.given.flat(params))
        grads.append(k.given.grads_row(params))
    record("trajectory", torch.stack(trajectory))
    record("grads_kept", torch.stack(grads))
    record("leaves", [[p.is_leaf, p.requires_grad] for p in params])


def probe_steps(k, make, inputs, prefix, record):
    """STEPS steps of make(params) on secret gradients; lr changed before one, rebuilt from state_dict after one."""
    params = probe_params(k, inputs, prefix)
    optimizer = make(params)
    trajectory = []
    for step in range(STEPS):
        if step == LR_CHANGE_AT:
            for group, lr in enumerate(inputs[f"{prefix}.lr_new"]):
                k.setitem(optimizer.param_groups[group], "lr", float(lr))
        if step == RESUME_AT:
            saved = optimizer.state_dict()
            optimizer = make(params)
            optimizer.load_state_dict(saved)
        probe_set_grads(k, params, inputs, prefix, step)
        optimizer.step()
        trajectory.append(k.given.flat(params))
    record("is_optimizer", k.isinstance(optimizer, k.module("torch.optim").Optimizer))
    record("trajectory", k.module("torch").stack(trajectory))


def probe_momentum(k, SGDMomentum, inputs, record):
    """Two param groups, the first with its own lr and momentum."""
    lr, momentum, lr0, momentum0 = (float(v) for v in inputs["momentum.hyper"])
    probe_steps(k, lambda ps: SGDMomentum([{"params": ps[:2], "lr": lr0, "momentum": momentum0},
                                           {"params": ps[2:]}], lr=lr, momentum=momentum),
                inputs, "momentum", record)


def probe_adam(k, Adam, inputs, record):
    """Two param groups, the first with its own betas and eps, the second with its own lr."""
    lr, beta1, beta2, eps, lr1, beta1_0, beta2_0, eps0 = (float(v) for v in inputs["adam.hyper"])
    probe_steps(k, lambda ps: Adam([{"params": ps[:2], "betas": (beta1_0, beta2_0), "eps": eps0},
                                    {"params": ps[2:], "lr": lr1}], lr=lr, betas=(beta1, beta2), eps=eps),
                inputs, "adam", record)


def probe_mlp(k, inputs, prefix):
    """Linear, Tanh, Linear in float64 with the secret weights prefix.w0, b0, w1, b1."""
    return k.given.mlp(*(inputs[f"{prefix}.{key}"] for key in ("w0", "b0", "w1", "b1")))


def probe_train(k, train, inputs, record):
    """train with torch.optim.SGD(momentum) on MSE, then torch.optim.Adam on cross-entropy: the losses
    (and their types), the weights after."""
    torch, nn = k.module("torch"), k.module("torch.nn")
    x, steps = k.tensor(inputs["train.x"], dtype="float64"), int(inputs["train.steps"])
    lr, momentum, adam_lr = (float(v) for v in inputs["train.hyper"])
    runs = {
        "mse": (probe_mlp(k, inputs, "train.regressor"), k.tensor(inputs["train.y"], dtype="float64"), nn.MSELoss(),
                lambda m: torch.optim.SGD(m.parameters(), lr=lr, momentum=momentum)),
        "cross_entropy": (probe_mlp(k, inputs, "train.classifier"), k.tensor(inputs["train.labels"]),
                          nn.CrossEntropyLoss(), lambda m: torch.optim.Adam(m.parameters(), lr=adam_lr)),
    }
    for name, (model, y, loss_fn, make) in runs.items():
        losses = train(model, make(model), loss_fn, x, y, steps)
        record(f"{name}_loss_types", k.given.type_names(losses))
        record(f"{name}_losses", k.given.floats(losses))
        record(f"{name}_weights", k.given.flat(k.module("builtins").list(model.parameters())))


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

def probe_checkpoint_run(k, inputs, seed):
    """A small float64 net (with batch norm) with secret weights, and a torch.optim optimizer with momentum
    or Adam state and two groups: (model, optimizer) refs."""
    run = k.given.checkpoint_run(seed, inputs["ckpt.sizes"], inputs["ckpt.lrs"], int(inputs["ckpt.adam"]))
    return run[0], run[1]


def probe_resume(k, save, load, inputs, record):
    """Train, checkpoint with `save`, train on (the uninterrupted run); a rebuilt model and optimizer
    (other initial weights) restored with `load` from the checkpoint after a torch.save round trip and
    trained as far: both runs' states, the step returned, and the checkpoint when saved and after
    training went on (it must not change)."""
    before, after = (int(v) for v in inputs["ckpt.steps"])
    x, y, seed = inputs["ckpt.x"], inputs["ckpt.y"], int(inputs["ckpt.seed"])
    model, optimizer = probe_checkpoint_run(k, inputs, seed)
    k.given.checkpoint_steps(model, optimizer, x, y, before)
    k.given.halve_lr(optimizer, 1)
    checkpoint = save(model, optimizer, before)
    record("model_at_save", k.given.state(model))
    record("checkpoint.model", k.given.flat(checkpoint["model"].values()))
    k.given.checkpoint_steps(model, optimizer, x, y, after)
    record("checkpoint.model_later", k.given.flat(checkpoint["model"].values()))
    # written after training went on, as a program that saves it later does
    restored = k.given.through_torch_save(checkpoint)
    resumed, resumed_optimizer = probe_checkpoint_run(k, inputs, seed + 1)
    record("step", load(resumed, resumed_optimizer, restored))
    k.given.checkpoint_steps(resumed, resumed_optimizer, x, y, after)
    record("resumed", k.given.state(resumed))
    record("uninterrupted", k.given.state(model))


def run_save_checkpoint(k, inputs, record):
    probe_resume(k, k.answers.save_checkpoint, k.given.load, inputs, record)


def run_load_checkpoint(k, inputs, record):
    probe_resume(k, k.given.save, k.answers.load_checkpoint, inputs, record)


def judge_checkpoint(exercise: str):
    """The resumed run ends where the uninterrupted one does (parameters and buffers alike), the step
    comes back, and the checkpoint does not change when training goes on."""
    def judge(got: dict, want: dict) -> str | None:
        for key in ("step", "resumed", "uninterrupted", "checkpoint.model", "checkpoint.model_later"):
            if key not in got:
                return f"{exercise} gave no {key}"
        if compare_arrays(got["checkpoint.model_later"], got["checkpoint.model"], rtol=0, atol=0):
            return (f"{exercise}: the checkpoint's model weights changed when training went on after it was "
                    "saved: a state_dict holds the live tensors; save copies of them")
        if compare_arrays(got["step"], want["step"], rtol=0, atol=0):
            return f"{exercise}: load_checkpoint returned step {got['step']}; expected {want['step']}"
        message = compare_arrays(got["resumed"], got["uninterrupted"], rtol=TIGHT.rtol, atol=TIGHT.atol)
        if message:
            return (f"{exercise}: training resumed from the checkpoint does not end where the uninterrupted run "
                    f"does: the model's parameters and buffers (batch norm's running statistics) "
                    f"{message.replace('differs', 'differ', 1)}; "
                    "restore everything the run depends on (the model's state_dict and the optimizer's)")
        return compare_records(exercise, {k: got[k] for k in ("uninterrupted",)},
                               {k: want[k] for k in ("uninterrupted",)}, TIGHT)
    return judge


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
                        f"the parameters {message}; they first part {where}")
        return None
    return judge


def driver(name: str, probe_function):
    """A run that hands the answer called `name` to probe_function(k, answer, inputs, record)."""
    def run(k, inputs, record):
        probe_function(k, getattr(k.answers, name), inputs, record)
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
        "save_checkpoint": Exercise(run_save_checkpoint, judge=judge_checkpoint("save_checkpoint")),
        "load_checkpoint": Exercise(run_load_checkpoint, judge=judge_checkpoint("load_checkpoint")),
    },
)

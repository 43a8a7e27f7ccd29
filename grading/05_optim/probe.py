"""Probes of 05_optim: the student's update rules on secret parameters and gradients, step for step.

The gradients are written into `.grad` directly (in place once a gradient exists, as backward does
after zero_grad(set_to_none=False)), some parameters have none on some steps, every group's learning
rate changes between two steps (the only way to see a learning rate folded into the velocity), and
the optimizer is rebuilt from its own state_dict halfway (what it keeps must live in self.state).
The recorded trajectory is compared with the reference running through the same functions.

The checkpoint is judged on a run with everything a resume must restore (batch norm's buffers,
dropout's random state, an optimizer's state, a scheduler, a DataLoader shuffling with its own
generator): the student's save, then the student's load in a rebuilt program, against the run that went on.

The kernel's word (given.TorchOptimWatch): whether the student's optimizers hand their update to
torch.optim's own SGD, Adam or AdamW. A forger who empties that list gains only what subclassing
torch.optim would have given: an update copied from PyTorch instead of written.
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
    with k.using(k.given.TorchOptimWatch()) as calls:
        for call, how in enumerate(("list", "generator", "tuple")):
            probe_set_grads(k, params, inputs, "sgd", call)
            sgd_step(k.given.fed(params, how), float(inputs["sgd.lr"][call]))
            trajectory.append(k.given.flat(params))
            grads.append(k.given.grads_row(params))
    record("torch_optim", calls)
    record("trajectory", torch.stack(trajectory))
    record("grads_kept", torch.stack(grads))
    record("leaves", [[p.is_leaf, p.requires_grad] for p in params])


def probe_steps(k, make, inputs, prefix, record):
    """STEPS steps of make(params) on secret gradients; lr changed before one, rebuilt from state_dict after one."""
    params = probe_params(k, inputs, prefix)
    optimizer = make(params)
    trajectory = []
    with k.using(k.given.TorchOptimWatch()) as calls:
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
    record("torch_optim", calls)
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


def probe_adamw(k, AdamW, inputs, record):
    """Two param groups, the first with its own weight decay and betas, the second with its own lr; large
    enough a decay (lr * weight_decay up to 0.05) that where it acts shows on the first step."""
    lr, beta1, beta2, eps, wd, wd0, lr1, beta1_0 = (float(v) for v in inputs["adamw.hyper"])
    probe_steps(k, lambda ps: AdamW([{"params": ps[:2], "weight_decay": wd0, "betas": (beta1_0, beta2)},
                                     {"params": ps[2:], "lr": lr1}], lr=lr, betas=(beta1, beta2), eps=eps,
                                    weight_decay=wd),
                inputs, "adamw", record)


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
    inputs.update(_params_and_grads(rng, "adamw", STEPS))
    inputs["adamw.hyper"] = np.array([rng.uniform(0.02, 0.1), rng.uniform(0.5, 0.95), rng.uniform(0.8, 0.999),
                                      10 ** rng.uniform(-3, -1), rng.uniform(0.1, 0.5), rng.uniform(0.2, 0.5),
                                      rng.uniform(0.02, 0.1), rng.uniform(0.0, 0.9)])
    inputs["adamw.lr_new"] = rng.uniform(0.01, 0.1, size=2)
    n, d_in, h, d_out, classes = (int(v) for v in rng.integers(3, 10, size=5))
    inputs.update({**_mlp(rng, "train.regressor", d_in, h, d_out), **_mlp(rng, "train.classifier", d_in, h, classes),
                   "train.x": rng.standard_normal((n, d_in)), "train.y": rng.standard_normal((n, d_out)),
                   "train.labels": rng.integers(0, classes, size=n), "train.steps": np.asarray(int(rng.integers(4, 10))),
                   "train.hyper": np.array([rng.uniform(0.02, 0.2), rng.uniform(0.5, 0.95), rng.uniform(0.005, 0.05)])})
    batch_size = int(rng.integers(3, 6))
    n = batch_size * int(rng.integers(3, 6)) + int(rng.integers(0, 2))  # a last batch of 1 is dropped
    sizes = rng.integers(2, 7, size=3)
    inputs.update({"ckpt.seed": np.asarray(int(rng.integers(2**31))), "ckpt.sizes": sizes,
                   "ckpt.x": rng.standard_normal((n, int(sizes[0]))), "ckpt.y": rng.standard_normal((n, int(sizes[2]))),
                   "ckpt.lrs": rng.uniform(0.005, 0.05, size=2), "ckpt.adam": np.asarray(int(rng.integers(0, 2))),
                   "ckpt.batch_size": np.asarray(batch_size), "ckpt.generator": np.asarray(int(rng.integers(2**31))),
                   # epochs before the checkpoint (odd: a StepLR(step_size=2) started again would halve the
                   # rate an epoch early), then after it (at least 2: the scheduler acts after the resume)
                   "ckpt.epochs": np.array([int(rng.choice([1, 3])), int(rng.integers(2, 4))])})
    return inputs


# -- checkpoint and resume -------------------------------------------------------------------------

def probe_checkpoint_run(k, inputs, seed, generator_seed):
    """The run given.checkpoint_run builds, with secret weights and data: refs to (model, optimizer,
    scheduler, generator, loader)."""
    run = k.given.checkpoint_run(seed, inputs["ckpt.sizes"], inputs["ckpt.lrs"], int(inputs["ckpt.adam"]),
                                 inputs["ckpt.x"], inputs["ckpt.y"], int(inputs["ckpt.batch_size"]), generator_seed)
    return k.unpack(run, 5)


def run_checkpoint(k, inputs, record):
    """Train some epochs, checkpoint with the student's save, train on (the uninterrupted run); then, as a
    restarted program does, build everything again (other weights, another random state, another
    generator), restore it with the student's load from the checkpoint after a torch.save round trip,
    and train as far. Records both runs' learning rates, example order and final state (parameters and
    buffers), the step returned, and the checkpoint's weights when saved and after training went on."""
    before, after = (int(v) for v in inputs["ckpt.epochs"])
    seed, generator_seed = int(inputs["ckpt.seed"]), int(inputs["ckpt.generator"])
    model, optimizer, scheduler, generator, loader = probe_checkpoint_run(k, inputs, seed, generator_seed)
    k.given.checkpoint_epochs(model, optimizer, scheduler, loader, before)
    checkpoint = k.answers.save_checkpoint(model, optimizer, before, scheduler=scheduler, generator=generator)
    record("checkpoint.model", k.given.flat(checkpoint["model"].values()))
    uninterrupted = k.given.checkpoint_epochs(model, optimizer, scheduler, loader, after)
    record("checkpoint.model_later", k.given.flat(checkpoint["model"].values()))
    restored = k.given.through_torch_save(checkpoint)  # written after training went on, as a program might
    model2, optimizer2, scheduler2, generator2, loader2 = probe_checkpoint_run(k, inputs, seed + 1, generator_seed + 1)
    record("step", k.answers.load_checkpoint(model2, optimizer2, restored, scheduler=scheduler2, generator=generator2))
    resumed = k.given.checkpoint_epochs(model2, optimizer2, scheduler2, loader2, after)
    record("lrs.uninterrupted", uninterrupted[0])
    record("lrs.resumed", resumed[0])
    record("order.uninterrupted", uninterrupted[1])
    record("order.resumed", resumed[1])
    record("uninterrupted", k.given.state(model))
    record("resumed", k.given.state(model2))


def judge_checkpoint(exercise: str):
    """The resumed run ends where the uninterrupted one does (parameters and buffers alike), the step comes
    back, and the checkpoint does not change when training goes on; where the runs part, what parted them
    is named in the order a run depends on it: the learning rates, the examples' order, the rest."""
    def judge(got: dict, want: dict) -> str | None:
        for key in want:
            if key not in got:
                return f"{exercise} gave no {key}"
        if compare_arrays(got["checkpoint.model_later"], got["checkpoint.model"], rtol=0, atol=0):
            return (f"{exercise}: the checkpoint's model weights changed when training went on after it was "
                    "saved: it holds live tensors, not a snapshot")
        if compare_arrays(got["step"], want["step"], rtol=0, atol=0):
            return f"{exercise}: load_checkpoint returned step {got['step']}; expected {want['step']}"
        if compare_arrays(got["lrs.resumed"], got["lrs.uninterrupted"], rtol=TIGHT.rtol, atol=TIGHT.atol):
            return (f"{exercise}: after resuming, the learning rates epoch by epoch were "
                    f"{got['lrs.resumed'].tolist()}, the uninterrupted run's {got['lrs.uninterrupted'].tolist()}: "
                    "the scheduler's position did not come back with the checkpoint")
        if compare_arrays(got["order.resumed"], got["order.uninterrupted"], rtol=0, atol=0):
            return (f"{exercise}: after resuming, the DataLoader gave the examples in another order than in the "
                    "uninterrupted run: its shuffling draws from a generator whose state did not come back")
        message = compare_arrays(got["resumed"], got["uninterrupted"], rtol=TIGHT.rtol, atol=TIGHT.atol)
        if message:
            return (f"{exercise}: training resumed from the checkpoint does not end where the uninterrupted run "
                    f"does: the model's parameters and buffers {message.replace('differs', 'differ', 1)}, with "
                    "the same learning rates and the same order of examples. Something else the run depends on "
                    "did not come back: the optimizer's state, batch norm's running statistics (buffers), or "
                    "torch's random state, from which dropout draws its masks")
        return compare_records(exercise, {"uninterrupted": got["uninterrupted"]},
                               {"uninterrupted": want["uninterrupted"]}, TIGHT)
    return judge


# -- L2 against decoupled weight decay -------------------------------------------------------------

WEIGHT_DECAY_KEYS = ("adam_l2_small", "adam_l2_large", "adamw_small", "adamw_large")


def run_answer_weight_decay(k, inputs, record):
    answer = k.answers.answer_weight_decay
    for key in WEIGHT_DECAY_KEYS:
        record(key, answer[key])
    record("keys", k.module("builtins").sorted(answer))


def expected_answer_weight_decay(inputs) -> dict:
    """The notebook's question: p0 = 2, lr = 0.1, weight decays 0.01 (small) and 0.1 (large)."""
    from helpers.reference.optim import first_steps_under_weight_decay

    steps = first_steps_under_weight_decay(2.0, 0.1, (0.01, 0.1))
    return {"adam_l2_small": steps["adam_l2_0.01"], "adam_l2_large": steps["adam_l2_0.1"],
            "adamw_small": steps["adamw_0.01"], "adamw_large": steps["adamw_0.1"],
            "keys": sorted(WEIGHT_DECAY_KEYS)}


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


def delegated(exercise: str, got: dict) -> str | None:
    """What the student's code handed to torch.optim's own updates, in a sentence; None when nothing."""
    calls = got.get("torch_optim")
    if calls is not None and calls.size:
        names = ", ".join(sorted({str(name) for name in calls.reshape(-1)}))
        return (f"{exercise}: its update ran torch.optim's own ({names}): the exercise is to write the update "
                "yourself, from the parameters and their gradients")
    return None


def judge_sgd_step(got: dict, want: dict) -> str | None:
    return delegated("sgd_step", got) or compare_records("sgd_step", got, want, TIGHT)


def judge_trajectory(exercise: str):
    """A judge that names the first step where the trajectories part, and what that step changed."""
    def judge(got: dict, want: dict) -> str | None:
        for key in want:
            if key not in got:
                return f"{exercise} gave no {key}"
        if delegated(exercise, got):
            return delegated(exercise, got)
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
        "sgd_step": Exercise(driver("sgd_step", probe_sgd_step), tolerance=TIGHT, judge=judge_sgd_step),
        "SGDMomentum": Exercise(driver("SGDMomentum", probe_momentum), tolerance=TIGHT,
                                judge=judge_trajectory("SGDMomentum")),
        "Adam": Exercise(driver("Adam", probe_adam), tolerance=TIGHT, judge=judge_trajectory("Adam")),
        "AdamW": Exercise(driver("AdamW", probe_adamw), tolerance=TIGHT, judge=judge_trajectory("AdamW")),
        "answer_weight_decay": Exercise(run_answer_weight_decay, expected=expected_answer_weight_decay,
                                        tolerance=Tolerance(1e-4, 1e-7)),
        "train": Exercise(driver("train", probe_train), tolerance=TIGHT),
        # torch.optim on both sides: a resume that restores everything gives the same bits. save and load are
        # one design (what to keep, under which keys): each is judged by the pair
        "save_checkpoint": Exercise(run_checkpoint, judge=judge_checkpoint("save_checkpoint")),
        "load_checkpoint": Exercise(run_checkpoint, judge=judge_checkpoint("load_checkpoint")),
    },
)

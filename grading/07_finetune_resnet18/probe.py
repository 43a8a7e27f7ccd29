"""Probes of 07_finetune_resnet18: a frozen ResNet18 (weights=None, nothing downloaded) on tiny random images.

`finetune` is judged under the same seed as the reference (route chosen: exact, not properties):
the kernel builds the same frozen random ResNet18 and loaders as the reference's run does here, so `fc`
and the history must match the reference's within float tolerance, and the backbone's weights (every value
of a small tensor, 64 values of a large one at places drawn from a secret seed) and BatchNorm statistics
must be those of the model before training, read back raw. While `finetune` runs, `make_finetune_optimizer`
is the notebook's SGD(fc, momentum 0.9), so a mistake there is judged once, in its own exercise.
The stand-ins the kernel needs are in given.py.
"""

from __future__ import annotations

import numpy as np

from autograder.probes import Exercise, Probe, compare_arrays

IMAGE = (3, 32, 32)  # the smallest size whose features reach layer4 at 1x1: fast on a CPU


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Class counts, seeds, freezing patterns, a learning rate and a few tiny random images."""
    n_train, n_val, classes = int(rng.integers(20, 31)), int(rng.integers(8, 15)), int(rng.integers(3, 6))
    # batches of 2 or more: a model wrongly left in train mode then fails on its statistics, not on an error
    batch_size = next(int(b) for b in rng.permutation(np.arange(4, 9)) if n_train % b != 1)
    return {
        "build.classes": rng.choice(np.r_[2:10, 11:40], size=2, replace=False),
        "build.seeds": rng.integers(0, 2**31, size=2),
        "names.draws": rng.uniform(size=70),  # parameter i trainable when draws[i] < 0.3
        "optimizer.lr": np.asarray(float(rng.choice([1e-4, 3e-3, 0.02, 0.3]) * rng.uniform(0.5, 2))),
        "optimizer.classes": np.asarray(int(rng.integers(2, 9))), "optimizer.seed": np.asarray(int(rng.integers(2**31))),
        "optimizer.factor": np.asarray(float(rng.choice([0.01, 0.05, 0.2, 0.5]))),
        "finetune.x": rng.standard_normal((n_train + n_val, *IMAGE)).astype(np.float32),
        "finetune.y": rng.integers(0, classes, size=n_train + n_val),
        "finetune.sizes": np.asarray([n_train, classes, batch_size, int(rng.integers(2, 4))]),
        "finetune.seed": np.asarray(int(rng.integers(2**31))),
    }


def run_build_finetune_model(k, inputs, record):
    """What build_finetune_model makes, read raw: its type, its parameters' names and flags, fc, the output's
    shape; then with (stand-in) pretrained weights: the backbone it loaded, its flags, fc."""
    classes, classes_pretrained = (int(v) for v in inputs["build.classes"])
    seed, donor_seed = (int(v) for v in inputs["build.seeds"])
    k.module("torch").manual_seed(seed)
    model = k.answers.build_finetune_model(classes)
    record("type", k.type_name(model))
    record("parameters", k.given.named_flags(model))
    record("fc_shape", [model.fc.out_features, model.fc.in_features])
    record("output_shape", k.given.logits_shape(model))
    model = k.given.build_with_donor(k.answers.build_finetune_model, classes_pretrained, donor_seed)
    backbone = k.given.backbone(model, seed)
    record("pretrained_weights", backbone[0])
    record("pretrained_statistics", backbone[1])
    record("pretrained_parameters", k.given.named_flags(model))
    record("pretrained_fc_out", model.fc.out_features)


def run_make_finetune_optimizer(k, inputs, record):
    """Three cases on a small net with a head called fc: the body frozen; part of it unfrozen (drawn);
    the same with another backbone_factor. The optimizer's type and groups as they are, and fc's weight
    around one step."""
    lr, factor = float(inputs["optimizer.lr"]), float(inputs["optimizer.factor"])
    for case in ("frozen", "partly", "factor"):
        net = k.given.head_net(int(inputs["optimizer.seed"]), int(inputs["optimizer.classes"]),
                               inputs["names.draws"], case)
        optimizer = (k.answers.make_finetune_optimizer(net, lr, backbone_factor=factor) if case == "factor"
                     else k.answers.make_finetune_optimizer(net, lr))
        record(f"{case}.is_optimizer", k.isinstance(optimizer, k.module("torch.optim").Optimizer))
        groups = k.fetch(k.given.groups(optimizer, net))
        record(f"{case}.held", held(groups))
        record(f"{case}.settings", settings(groups))
        if case == "frozen":
            step = k.given.one_step(net, optimizer, int(inputs["optimizer.seed"]))
            record("fc_before", step[0])
            record("fc_after", step[1])


def held(groups) -> list[str]:
    """Each parameter an optimizer holds, as "name at lr", sorted."""
    try:
        return sorted(f"{name} at {float(options.get('lr', float('nan'))):.6g}" for names, options in groups
                      for name in names)
    except (TypeError, ValueError, AttributeError):
        return ["its param_groups are not lists of parameters with an lr"]


SETTINGS = ("momentum", "dampening", "weight_decay", "nesterov")  # SGD's, besides lr


def settings(groups) -> list[str]:
    """Each parameter's SGD settings other than its learning rate, sorted ("name: momentum 0.9, ...")."""
    try:
        return sorted(f"{name}: " + ", ".join(f"{key} {options.get(key)}" for key in SETTINGS)
                      for names, options in groups for name in names)
    except (TypeError, AttributeError):
        return ["its param_groups are not lists of parameters with settings"]


def run_finetune(k, inputs, record):
    """finetune on a frozen random ResNet18 (with the notebook's optimizer): the backbone read back raw,
    fc's weights and the history."""
    n_train, classes, batch_size, epochs = (int(v) for v in inputs["finetune.sizes"])
    seed = int(inputs["finetune.seed"])
    loaders = k.given.loaders(inputs["finetune.x"], inputs["finetune.y"], n_train, batch_size, seed)
    train_loader, val_loader = k.unpack(loaders, 2)
    model = k.given.frozen_resnet18(seed, classes)
    with k.using(k.given.StandIn(k.answers.finetune, {"make_finetune_optimizer": k.given.notebook_optimizer})):
        history = k.answers.finetune(model, train_loader, val_loader, epochs, k.module("torch").device("cpu"))
    model = model.cpu()
    backbone = k.given.backbone(model, seed)
    record("backbone_weights", backbone[0])
    record("batchnorm_statistics", backbone[1])
    record("fc_weight", model.fc.weight)
    record("fc_bias", model.fc.bias)
    for key in ("train_loss", "val_loss", "val_accuracy"):
        record(key, k.given.floats(history[key]))


HINTS = {  # what a difference in each key most likely means: the mistake, not the line that fixes it
    "type": "the model is not torchvision's ResNet18",
    "parameters": "only the new head's parameters (fc.weight, fc.bias) may require grad",
    "fc_shape": "the head must map the backbone's pooled features to num_classes logits",
    "pretrained_weights": "the weights asked for did not reach the backbone",
    "pretrained_statistics": "the weights asked for did not reach the backbone",
    "pretrained_parameters": "with pretrained weights, too, only the new head may learn",
    "frozen.held": "with the backbone frozen the optimizer holds the head's parameters alone, at learning_rate",
    "partly.held": ("the optimizer must hold every parameter that can learn, each once, and no frozen one: the "
                    "head's at learning_rate, the others at learning_rate * backbone_factor"),
    "factor.held": "the unfrozen backbone's rate is learning_rate * backbone_factor",
    "frozen.settings": "every setting but the learning rate (SGD, momentum 0.9) must be the same for every parameter",
    "partly.settings": "every setting but the learning rate (SGD, momentum 0.9) must be the same for every parameter",
    "factor.settings": "every setting but the learning rate (SGD, momentum 0.9) must be the same for every parameter",
    "backbone_weights": "parameters outside the head changed",
    "batchnorm_statistics": "BatchNorm's running statistics moved: the backbone ran in the mode that updates them",
    "fc_weight": ("the head did not end where one SGD step per batch, on that batch's own cross-entropy gradient, "
                  "with make_finetune_optimizer(model, learning_rate), takes it"),
    "train_loss": "the training loss is the mean over the epoch's samples, not over its batches",
    "val_loss": "the validation numbers are evaluate's, after each epoch's training",
    "val_accuracy": "the validation numbers are evaluate's, after each epoch's training",
}


NAME_LISTS = {"parameters", "pretrained_parameters", "frozen.held", "partly.held", "factor.held", "frozen.settings",
              "partly.settings", "factor.settings"}


def _names(values) -> str:
    names = [str(v) for v in np.asarray(values).ravel()]
    return "[" + ", ".join(names[:6]) + (f", ... ({len(names)} in all)]" if len(names) > 6 else "]")


def _judge(exercise: str, keys_tolerance: dict):
    def judge(got: dict, want: dict) -> str | None:
        for key in want:
            if key not in got:
                return f"{exercise} gave no {key}"
            rtol, atol = keys_tolerance.get(key, (1e-6, 1e-9))
            message = compare_arrays(got[key], np.asarray(want[key]), rtol=rtol, atol=atol)
            if message and key in NAME_LISTS:
                message = f"are {_names(got[key])}; expected {_names(want[key])}"
            if message:
                hint = f": {HINTS[key]}" if key in HINTS else ""
                return f"{exercise}: {key} {message} (on inputs your notebook never saw){hint}"
        return None
    return judge


def _judge_optimizer(got: dict, want: dict) -> str | None:
    keys = [k for k in want if not k.startswith("fc_")]
    problem = _judge("make_finetune_optimizer", {})({k: v for k, v in got.items() if k in keys},
                                                   {k: want[k] for k in keys})
    if problem:
        return problem
    if "fc_before" not in got or "fc_after" not in got:
        return "make_finetune_optimizer gave no fc_before"
    before, after = (np.asarray(got[key], dtype=np.float64) for key in ("fc_before", "fc_after"))
    if before.shape != after.shape or not np.all(np.isfinite(after)) or not np.any(after != before):
        return "make_finetune_optimizer: optimizer.step() did not move model.fc.weight"
    return None


PROBE = Probe(
    assignment="07_finetune_resnet18",
    reference="helpers.reference.finetune_resnet18",
    make_inputs=make_inputs,
    exercises={
        "build_finetune_model": Exercise(run_build_finetune_model, judge=_judge("build_finetune_model", {})),
        "make_finetune_optimizer": Exercise(run_make_finetune_optimizer, judge=_judge_optimizer),
        "finetune": Exercise(run_finetune, judge=_judge("finetune", {
            "backbone_weights": (1e-6, 1e-6), "batchnorm_statistics": (1e-6, 1e-6), "fc_weight": (1e-4, 1e-5),
            "fc_bias": (1e-4, 1e-5), "train_loss": (1e-4, 1e-6), "val_loss": (1e-4, 1e-6),
            "val_accuracy": (0.0, 1e-6)})),
    },
)

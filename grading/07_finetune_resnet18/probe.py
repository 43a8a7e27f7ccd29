"""Probes of 07_finetune_resnet18: a frozen ResNet18 (weights=None, nothing downloaded) on tiny random images.

`finetune` is judged under the same seed as the reference (route chosen: exact, not properties):
the kernel builds the same frozen random ResNet18 and loaders as the reference's run does here, so `fc`
and the history must match the reference's within float tolerance, and the backbone's weights and
BatchNorm statistics (per-tensor sums) must be those of the model before training. While `finetune`
runs, `make_finetune_optimizer` is the notebook's SGD(fc, momentum 0.9), so a mistake there is
judged once, in its own exercise.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import torch
import torch.nn.functional as F
import torchvision
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import ResNet18_Weights

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


def probe_frozen_resnet18(seed, num_classes):
    """A random ResNet18, all frozen but its fc: the model every finetune gets."""
    torch.manual_seed(int(seed))
    model = torchvision.models.resnet18(num_classes=int(num_classes)).requires_grad_(False)
    model.fc.requires_grad_(True)
    return model


def probe_backbone(model):
    """Per-tensor sums of everything but fc: (weights, BatchNorm statistics), float64."""
    weights, statistics = [], []
    for name, tensor in model.state_dict().items():
        if not name.startswith("fc."):
            is_parameter = name.endswith(("weight", "bias")) and "running" not in name
            (weights if is_parameter else statistics).append(tensor.detach().double().sum().item())
    return weights, statistics


def probe_finetune_loaders(inputs):
    n_train, _, batch_size, epochs = (int(v) for v in inputs["finetune.sizes"])
    x, y = torch.from_numpy(inputs["finetune.x"]), torch.from_numpy(inputs["finetune.y"])
    train = DataLoader(TensorDataset(x[:n_train], y[:n_train]), batch_size=batch_size, shuffle=True,
                       generator=torch.Generator().manual_seed(int(inputs["finetune.seed"])))
    return train, DataLoader(TensorDataset(x[n_train:], y[n_train:]), batch_size=5), epochs


def probe_masked(model, draws):
    """`model` with parameter i trainable exactly when draws[i] < 0.3."""
    for parameter, draw in zip(model.parameters(), draws):
        parameter.requires_grad_(bool(draw < 0.3))
    return model


class ProbeHeadNet(nn.Module):
    """Not a ResNet: a frozen body with batch norm, and a head called fc."""

    def __init__(self, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.ReLU())
        self.fc = nn.Linear(5, num_classes)

    def forward(self, x):
        return self.fc(self.body(x))


def run_build_finetune_model(answers, inputs, record):
    classes, classes_pretrained = (int(v) for v in inputs['build.classes'])
    seed, donor_seed = (int(v) for v in inputs['build.seeds'])
    torch.manual_seed(seed)
    model = answers.build_finetune_model(classes)
    record('is_resnet', isinstance(model, torchvision.models.ResNet))
    record('parameter_names', [name for name, _ in model.named_parameters()])
    record('trainable', [name for name, p in model.named_parameters() if p.requires_grad])
    record('fc_shape', [model.fc.out_features, model.fc.in_features])
    model.eval()
    with torch.no_grad():
        record('output_shape', list(model(torch.zeros(2, 3, 32, 32)).shape))
    torch.manual_seed(donor_seed)  # stands in for ImageNet's weights: no download
    donor = torchvision.models.resnet18().state_dict()
    with mock.patch.object(ResNet18_Weights, 'get_state_dict', lambda self, *args, **kwargs: donor):
        model = answers.build_finetune_model(classes_pretrained, weights=ResNet18_Weights.IMAGENET1K_V1)
    weights, statistics = probe_backbone(model)
    record('pretrained_weights', weights)
    record('pretrained_statistics', statistics)
    record('pretrained_trainable', [name for name, p in model.named_parameters() if p.requires_grad])
    record('pretrained_fc_out', model.fc.out_features)


def probe_optimizer_groups(optimizer, net):
    """Each parameter the optimizer holds, as "name at lr", sorted."""
    names = {id(p): name for name, p in net.named_parameters()}
    return sorted(f"{names.get(id(p), 'a tensor that is not the model' + chr(39) + 's')} at {float(group['lr']):.6g}"
                  for group in optimizer.param_groups for p in group['params'])


def run_make_finetune_optimizer(answers, inputs, record):
    """Three cases on a small net with a head called fc: the body frozen; part of it unfrozen (drawn);
    the same with another backbone_factor. What it holds at which rate, and a step that moves fc."""
    lr, factor = float(inputs['optimizer.lr']), float(inputs['optimizer.factor'])
    draws = inputs['names.draws']
    for case in ('frozen', 'partly', 'factor'):
        torch.manual_seed(int(inputs['optimizer.seed']))
        net = ProbeHeadNet(int(inputs['optimizer.classes']))
        net.body.requires_grad_(False)
        if case != 'frozen':
            body = list(net.body.parameters())
            for p, draw in zip(body, draws):
                p.requires_grad_(bool(draw < 0.5))
            if not any(p.requires_grad for p in body):
                body[0].requires_grad_(True)
        optimizer = (answers.make_finetune_optimizer(net, lr, backbone_factor=factor) if case == 'factor'
                     else answers.make_finetune_optimizer(net, lr))
        record(f'{case}.is_optimizer', isinstance(optimizer, torch.optim.Optimizer))
        record(f'{case}.held', probe_optimizer_groups(optimizer, net))
        if case == 'frozen':
            before = net.fc.weight.detach().clone()
            net.eval()
            F.cross_entropy(net(torch.randn(4, 6)), torch.arange(4) % net.fc.out_features).backward()
            optimizer.step()
            record('fc_step', (net.fc.weight.detach() - before).abs().sum())


def run_finetune(answers, inputs, record):
    train_loader, val_loader, epochs = probe_finetune_loaders(inputs)
    model = probe_frozen_resnet18(inputs['finetune.seed'], inputs['finetune.sizes'][1])
    names = answers.finetune.__globals__
    saved = names.get('make_finetune_optimizer')
    names['make_finetune_optimizer'] = lambda model, learning_rate: torch.optim.SGD(
        model.fc.parameters(), lr=learning_rate, momentum=0.9)
    try:
        history = answers.finetune(model, train_loader, val_loader, epochs, torch.device('cpu'))
    finally:
        if saved is None:
            names.pop('make_finetune_optimizer', None)
        else:
            names['make_finetune_optimizer'] = saved
    model.cpu()
    weights, statistics = probe_backbone(model)
    record('backbone_weights', weights)
    record('batchnorm_statistics', statistics)
    record('fc_weight', model.fc.weight)
    record('fc_bias', model.fc.bias)
    for key in ('train_loss', 'val_loss', 'val_accuracy'):
        record(key, [float(v) for v in history[key]])


def expected_build_finetune_model(inputs) -> dict:
    """The reference's names and shapes; the donor's backbone, which pretrained weights must bring."""
    from helpers.reference import finetune_resnet18 as ref

    classes, classes_pretrained = (int(v) for v in inputs["build.classes"])
    model = ref.build_finetune_model(classes)
    torch.manual_seed(int(inputs["build.seeds"][1]))
    weights, statistics = probe_backbone(torchvision.models.resnet18())  # the donor's backbone
    return {
        "is_resnet": True, "parameter_names": np.asarray([name for name, _ in model.named_parameters()]),
        "trainable": np.asarray(ref.trainable_parameter_names(model)),
        "fc_shape": [classes, 512], "output_shape": [2, classes],
        "pretrained_weights": weights, "pretrained_statistics": statistics,
        "pretrained_trainable": np.asarray(["fc.weight", "fc.bias"]),
        "pretrained_fc_out": classes_pretrained,
    }


def expected_make_finetune_optimizer(inputs) -> dict:
    """The reference on the same three cases."""
    from helpers.reference import finetune_resnet18 as ref

    got = {}
    run_make_finetune_optimizer(ref, inputs, lambda key, value: got.__setitem__(key, value))
    got["fc_step"] = 1.0
    return {key: np.asarray(value) if isinstance(value, list) else value for key, value in got.items()}


HINTS = {  # what a difference in each key most likely means
    "trainable": "only fc.weight and fc.bias may require grad: freeze everything, then replace fc",
    "parameter_names": "start from torchvision.models.resnet18(weights=weights) and replace its fc",
    "fc_shape": "replace fc with nn.Linear(model.fc.in_features, num_classes)",
    "pretrained_weights": "pass weights on: torchvision.models.resnet18(weights=weights)",
    "pretrained_trainable": "with pretrained weights the backbone is frozen too, fc trainable",
    "frozen.held": "a frozen backbone: model.fc's parameters only, at learning_rate",
    "partly.held": ("two groups: model.fc's parameters at learning_rate, the backbone's parameters that require "
                    "grad at learning_rate * backbone_factor; frozen parameters in neither"),
    "factor.held": "the backbone group's rate is learning_rate * backbone_factor",
    "backbone_weights": "only fc may change: optimize model.fc's parameters only",
    "batchnorm_statistics": "keep the model in eval mode while training fc: in train mode BatchNorm's "
                            "running statistics move",
    "fc_weight": "per batch: zero_grad, forward, F.cross_entropy, backward, step; with "
                 "make_finetune_optimizer(model, learning_rate)",
    "train_loss": "the mean training loss over the epoch's samples (each batch's loss times its size)",
    "val_loss": "evaluate(model, val_loader, F.cross_entropy, device) after each epoch",
    "val_accuracy": "evaluate(model, val_loader, F.cross_entropy, device) after each epoch",
}


NAME_LISTS = {"trainable", "pretrained_trainable", "frozen.held", "partly.held", "factor.held"}


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
    problem = _judge("make_finetune_optimizer", {})(
        {k: v for k, v in got.items() if k != "fc_step"}, {k: v for k, v in want.items() if k != "fc_step"})
    if problem:
        return problem
    step = np.asarray(got.get("fc_step", np.nan), dtype=np.float64)
    if step.shape != () or not np.isfinite(step) or step <= 0:
        return "make_finetune_optimizer: optimizer.step() did not move model.fc.weight"
    return None


PROBE = Probe(
    assignment="07_finetune_resnet18",
    reference="helpers.reference.finetune_resnet18",
    make_inputs=make_inputs,
    exercises={
        "build_finetune_model": Exercise(run_build_finetune_model, expected=expected_build_finetune_model,
                                         judge=_judge("build_finetune_model", {})),
        "make_finetune_optimizer": Exercise(run_make_finetune_optimizer, expected=expected_make_finetune_optimizer,
                                            judge=_judge_optimizer),
        "finetune": Exercise(run_finetune, judge=_judge("finetune", {
            "backbone_weights": (1e-6, 1e-6), "batchnorm_statistics": (1e-6, 1e-6), "fc_weight": (1e-4, 1e-5),
            "fc_bias": (1e-4, 1e-5), "train_loss": (1e-4, 1e-6), "val_loss": (1e-4, 1e-6),
            "val_accuracy": (0.0, 1e-6)})),
    },
)

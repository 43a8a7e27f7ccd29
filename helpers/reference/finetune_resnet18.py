"""Reference answers of 07_finetune_resnet18: freeze ResNet18, train a new `fc` only.

A frozen backbone means two things, and `requires_grad = False` gives only the first:
its weights get no gradient, and its BatchNorm running statistics (buffers, not parameters)
stay as they are. Those statistics move on every forward pass in training mode, so `finetune`
keeps the whole model in eval mode; `fc` has no dropout or batch norm, so eval mode changes
nothing about how it trains.

Losses are means over samples (each batch's mean weighted by its size); accuracy is a fraction.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
import torchvision
from torch import nn
from torch.utils.data import DataLoader

from helpers.reference.data_loading import evaluate  # 07 builds on 06's evaluate

LEARNING_RATE = 0.01  # fits a linear head on ResNet features in a few epochs (tried 1e-3..1e-1)
MOMENTUM = 0.9  # as in the lecture's fine-tuning example


def build_finetune_model(num_classes: int, weights=None) -> nn.Module:
    """torchvision's ResNet18 with every parameter frozen and a new, trainable `fc`.

    weights: None (random backbone) or a `torchvision.models.ResNet18_Weights` member.
    The model maps x: (N, 3, H, W) to logits (N, num_classes); `fc` is
    nn.Linear(512, num_classes), the only part with requires_grad=True.
    Freeze first, then replace `fc`: a new module's parameters require grad.
    """
    model = torchvision.models.resnet18(weights=weights)
    for parameter in model.parameters():
        parameter.requires_grad = False
    model.fc = nn.Linear(model.fc.in_features, num_classes)
    return model


def trainable_parameter_names(model: nn.Module) -> list[str]:
    """Names of the parameters with requires_grad=True, in `model.named_parameters()` order."""
    return [name for name, parameter in model.named_parameters() if parameter.requires_grad]


def make_finetune_optimizer(model: nn.Module, learning_rate: float,
                            backbone_factor: float = 0.1) -> torch.optim.Optimizer:
    """SGD with momentum in two parameter groups: `model.fc`'s parameters at `learning_rate`, and the
    backbone's parameters that require grad (a later stage unfreezes some) at learning_rate *
    backbone_factor. Frozen parameters are in no group; the backbone group is left out when nothing
    in the backbone trains."""
    head = list(model.fc.parameters())
    in_head = {id(p) for p in head}
    backbone = [p for p in model.parameters() if p.requires_grad and id(p) not in in_head]
    groups = [{"params": head, "lr": learning_rate}]
    if backbone:
        groups.append({"params": backbone, "lr": learning_rate * backbone_factor})
    return torch.optim.SGD(groups, lr=learning_rate, momentum=MOMENTUM)


def finetune(model: nn.Module, train_loader: DataLoader, val_loader: DataLoader, epochs: int,
             device: torch.device, learning_rate: float = LEARNING_RATE) -> dict[str, list[float]]:
    """Train `model.fc` for `epochs` with cross-entropy; the frozen backbone does not change at all.

    Batches are x: (B, 3, H, W), y: (B,) class indices. The model stays in eval mode throughout,
    so BatchNorm uses, and keeps, its running statistics. Returns
    {"train_loss": [...], "val_loss": [...], "val_accuracy": [...]}, one float per epoch,
    the validation numbers measured after each epoch's training.
    """
    model.to(device)
    optimizer = make_finetune_optimizer(model, learning_rate)
    history: dict[str, list[float]] = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in range(epochs):
        model.eval()  # not model.train(): that would update every BatchNorm's running statistics
        total, count = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
            count += len(x)
        val_loss, val_accuracy = evaluate(model, val_loader, F.cross_entropy, device)
        history["train_loss"].append(total / count)
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_accuracy)
    return history

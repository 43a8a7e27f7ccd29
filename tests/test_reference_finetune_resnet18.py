"""helpers.reference.finetune_resnet18 against PyTorch: frozen backbone, fc-only optimizer, eval-mode training."""

import copy
from unittest import mock

import pytest
import torch
import torch.nn.functional as F
import torchvision
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import ResNet18_Weights

from helpers.images import digit_datasets
from helpers.reference.finetune_resnet18 import (
    MOMENTUM,
    build_finetune_model,
    evaluate,
    finetune,
    make_finetune_optimizer,
    trainable_parameter_names,
)


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """Convolutions with two OpenMP threads per process thrash a CPU shared with other jobs (10x slower)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def digits5():
    """Small 5-class digit images (chance 20%), the setting of the notebook's visible test."""
    return digit_datasets(n_train=160, n_val=80, size=32, seed=3, classes=5)


def test_build_freezes_everything_but_a_new_fc():
    model = build_finetune_model(7)
    assert isinstance(model, torchvision.models.ResNet)
    assert isinstance(model.fc, nn.Linear) and (model.fc.in_features, model.fc.out_features) == (512, 7)
    assert trainable_parameter_names(model) == ["fc.weight", "fc.bias"]
    model.eval()
    with torch.no_grad():
        assert model(torch.randn(2, 3, 32, 32)).shape == (2, 7)


def test_build_passes_the_weights_to_torchvision():
    torch.manual_seed(0)
    donor = torchvision.models.resnet18().state_dict()
    with mock.patch.object(ResNet18_Weights, "get_state_dict", lambda self, *a, **k: donor):
        model = build_finetune_model(3, weights=ResNet18_Weights.IMAGENET1K_V1)
    for name, tensor in model.state_dict().items():
        if not name.startswith("fc."):
            assert torch.equal(tensor, donor[name]), name
    assert model.fc.out_features == 3


def test_trainable_parameter_names_follows_requires_grad_and_skips_buffers():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    net[1].requires_grad_(False)
    assert trainable_parameter_names(net) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert trainable_parameter_names(net.requires_grad_(False)) == []


def test_optimizer_holds_fc_only_and_steps_like_torch_sgd():
    model = build_finetune_model(4)
    optimizer = make_finetune_optimizer(model, 0.1)
    held = [p for group in optimizer.param_groups for p in group["params"]]
    assert [id(p) for p in held] == [id(model.fc.weight), id(model.fc.bias)]
    # Oracle: torch.optim.SGD with the same settings on a copy of fc, in float64.
    fc = model.fc.double()
    oracle = copy.deepcopy(fc)
    oracle_optimizer = torch.optim.SGD(oracle.parameters(), lr=0.1, momentum=MOMENTUM)
    features, y = torch.randn(6, 512, dtype=torch.float64), torch.tensor([0, 1, 2, 3, 0, 1])
    for _ in range(3):
        for module, opt in ((fc, optimizer), (oracle, oracle_optimizer)):
            opt.zero_grad()
            F.cross_entropy(module(features), y).backward()
            opt.step()
    torch.testing.assert_close(fc.weight, oracle.weight)
    torch.testing.assert_close(fc.bias, oracle.bias)


def test_finetune_changes_fc_only_and_learns(digits5):
    train_set, val_set = digits5
    torch.manual_seed(3)
    model = build_finetune_model(5)
    before = copy.deepcopy(model.state_dict())
    loader = DataLoader(train_set, batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(3))
    history = finetune(model, loader, DataLoader(val_set, batch_size=80), 3, torch.device("cpu"))
    after = model.state_dict()
    changed = sorted(name for name in before if not torch.equal(before[name], after[name]))
    assert changed == ["fc.bias", "fc.weight"]  # every BatchNorm statistic and backbone weight is unchanged
    assert set(history) == {"train_loss", "val_loss", "val_accuracy"}
    assert all(len(values) == 3 for values in history.values())
    assert all(isinstance(v, float) for values in history.values() for v in values)
    val_loss, val_accuracy = evaluate(model, DataLoader(val_set, batch_size=7), F.cross_entropy, torch.device("cpu"))
    assert history["val_accuracy"][-1] == pytest.approx(val_accuracy)
    assert history["val_loss"][-1] == pytest.approx(val_loss, rel=1e-5)
    assert val_accuracy >= 0.4  # chance is 0.2


def test_finetune_in_train_mode_would_have_moved_the_batchnorm_statistics(digits5):
    """Why finetune keeps eval mode: the same loop after model.train() changes the running statistics."""
    train_set, _ = digits5
    model = build_finetune_model(5).train()
    before = model.bn1.running_mean.clone()
    with torch.no_grad():
        model(train_set.tensors[0][:16])
    assert not torch.equal(before, model.bn1.running_mean)


def test_finetune_on_cached_features_matches_finetune_through_the_backbone(digits5):
    """The notebook's shortcut: a frozen eval-mode backbone is a fixed function, so training fc on
    features computed once gives the same fc as training through the backbone every epoch."""
    train_set, val_set = (TensorDataset(*dataset[:60]) for dataset in digits5)
    torch.manual_seed(0)
    model = build_finetune_model(5)
    head = copy.deepcopy(model.fc)
    train_loader = DataLoader(train_set, batch_size=20)  # the same order for both runs
    val_loader = DataLoader(val_set, batch_size=80)
    finetune(model, train_loader, val_loader, 2, torch.device("cpu"))

    backbone = copy.deepcopy(model).eval()
    backbone.fc = nn.Identity()
    with torch.no_grad():
        train_features = backbone(train_set.tensors[0])
        val_features = backbone(val_set.tensors[0])

    class Head(nn.Module):
        def __init__(self, fc):
            super().__init__()
            self.fc = fc

        def forward(self, features):
            return self.fc(features)

    cached = Head(head)
    finetune(cached, DataLoader(TensorDataset(train_features, train_set.tensors[1]), batch_size=20),
             DataLoader(TensorDataset(val_features, val_set.tensors[1]), batch_size=80), 2, torch.device("cpu"))
    torch.testing.assert_close(cached.fc.weight, model.fc.weight, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(cached.fc.bias, model.fc.bias, rtol=1e-4, atol=1e-5)


def test_optimizer_puts_an_unfrozen_backbone_in_a_slower_group_and_frozen_parameters_nowhere():
    model = build_finetune_model(4)
    model.layer4.requires_grad_(True)
    optimizer = make_finetune_optimizer(model, 0.2, backbone_factor=0.05)
    names = {id(p): name for name, p in model.named_parameters()}
    rates = {names[id(p)]: group["lr"] for group in optimizer.param_groups for p in group["params"]}
    assert set(rates) == {name for name, p in model.named_parameters() if p.requires_grad}
    assert {rates["fc.weight"], rates["fc.bias"]} == {0.2}
    assert all(rate == pytest.approx(0.01) for name, rate in rates.items() if name.startswith("layer4."))

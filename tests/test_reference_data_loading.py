"""helpers.reference.data_loading against hand-written loops and torch.utils.data."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.testing import assert_close
from torch.utils.data import DataLoader, TensorDataset

from helpers.reference.data_loading import (
    TensorPairDataset,
    evaluate,
    fit,
    make_loaders,
    train_one_epoch,
)

CPU = torch.device("cpu")


def classification_data(seed: int = 0, n: int = 30, d: int = 4, classes: int = 3):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g, dtype=torch.float64), torch.randint(classes, (n,), generator=g)


def make_classifier(seed: int = 0, d: int = 4, classes: int = 3, dropout: float = 0.0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(d, 8), nn.ReLU(), nn.Dropout(dropout), nn.Linear(8, classes)).double()


def ids_of(loader: DataLoader) -> list[int]:
    """The sample ids a loader yields, in order (datasets below store each id as its feature)."""
    return [int(i) for x, _ in loader for i in x[:, 0]]


def id_dataset(n: int) -> TensorDataset:
    return TensorDataset(torch.arange(n, dtype=torch.float32)[:, None], torch.zeros(n))


# --- TensorPairDataset -----------------------------------------------------------------------

def test_dataset_items_length_and_transform_on_features_only():
    x, y = classification_data()
    plain = TensorPairDataset(x, y)
    doubled = TensorPairDataset(x, y, transform=lambda t: 2 * t)
    assert len(plain) == len(doubled) == 30
    assert_close(plain[3][0], x[3])
    assert_close(doubled[3][0], 2 * x[3])
    assert torch.equal(doubled[3][1], y[3])
    xb, yb = next(iter(DataLoader(doubled, batch_size=8)))
    assert xb.shape == (8, 4) and yb.shape == (8,)
    assert_close(xb, 2 * x[:8])


def test_dataset_refuses_features_and_targets_of_different_lengths():
    with pytest.raises(ValueError, match="rows"):
        TensorPairDataset(torch.zeros(5, 2), torch.zeros(4))


# --- make_loaders ----------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "val_fraction", "n_val"), [(100, 0.2, 20), (37, 0.25, 9), (10, 0.5, 5)])
def test_make_loaders_split_sizes_disjoint_and_complete(n, val_fraction, n_val):
    train_loader, val_loader = make_loaders(id_dataset(n), batch_size=8, val_fraction=val_fraction, seed=0)
    train_ids, val_ids = ids_of(train_loader), ids_of(val_loader)
    assert len(val_ids) == n_val and len(train_ids) == n - n_val
    assert sorted(train_ids + val_ids) == list(range(n))


def test_make_loaders_depends_on_the_seed_only():
    torch.manual_seed(1)
    train_a, val_a = make_loaders(id_dataset(50), batch_size=8, val_fraction=0.2, seed=3)
    torch.manual_seed(2)
    train_b, val_b = make_loaders(id_dataset(50), batch_size=8, val_fraction=0.2, seed=3)
    _, val_c = make_loaders(id_dataset(50), batch_size=8, val_fraction=0.2, seed=4)
    assert ids_of(val_a) == ids_of(val_b) and ids_of(train_a) == ids_of(train_b)
    assert sorted(ids_of(val_a)) != sorted(ids_of(val_c))


def test_make_loaders_shuffles_train_each_epoch_but_not_validation():
    train_loader, val_loader = make_loaders(id_dataset(60), batch_size=8, val_fraction=0.25, seed=0)
    first, second = ids_of(train_loader), ids_of(train_loader)
    assert first != second and sorted(first) == sorted(second)
    assert ids_of(val_loader) == ids_of(val_loader)
    assert next(iter(train_loader))[0].shape == (8, 1)


# --- train_one_epoch -------------------------------------------------------------------------

def test_train_one_epoch_weights_batches_by_size_and_matches_a_hand_written_loop():
    x, y = classification_data(1, n=10)
    loader = DataLoader(TensorDataset(x, y), batch_size=4)  # batches of 4, 4, 2
    model_a = make_classifier(2)
    model_b = copy.deepcopy(model_a)
    model_a.eval()  # train_one_epoch must switch to training mode itself
    loss_fn = nn.CrossEntropyLoss()
    got = train_one_epoch(model_a, loader, torch.optim.SGD(model_a.parameters(), lr=0.5), loss_fn, CPU)

    opt_b = torch.optim.SGD(model_b.parameters(), lr=0.5)
    batch_losses, sizes = [], []
    for xb, yb in loader:
        opt_b.zero_grad()
        loss = loss_fn(model_b(xb), yb)
        loss.backward()
        opt_b.step()
        batch_losses.append(loss.item())
        sizes.append(len(xb))
    weighted = sum(b * s for b, s in zip(batch_losses, sizes)) / sum(sizes)
    unweighted = sum(batch_losses) / len(batch_losses)

    assert type(got) is float and model_a.training
    assert got == pytest.approx(weighted, rel=1e-12)
    assert abs(weighted - unweighted) > 1e-3  # the data tells the two means apart
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert_close(p, q)


# --- evaluate --------------------------------------------------------------------------------

def test_evaluate_in_eval_mode_without_a_graph():
    x, y = classification_data(3, n=21)
    model = make_classifier(4, dropout=0.5)
    seen = []
    model.register_forward_hook(lambda m, i, out: seen.append((m.training, out.requires_grad)))
    model.train()
    loss, accuracy = evaluate(model, DataLoader(TensorDataset(x, y), batch_size=8), nn.CrossEntropyLoss(), CPU)

    model.eval()
    with torch.no_grad():
        logits = model(x)
    assert type(loss) is float and type(accuracy) is float
    assert loss == pytest.approx(nn.functional.cross_entropy(logits, y).item(), rel=1e-12)
    assert accuracy == pytest.approx((logits.argmax(1) == y).double().mean().item(), abs=1e-12)
    assert seen[:3] == [(False, False)] * 3


# --- fit -------------------------------------------------------------------------------------

def test_fit_history_matches_epochs_of_train_and_evaluate(capsys):
    x, y = classification_data(5, n=40)

    def loaders():
        train = DataLoader(TensorDataset(x[:30], y[:30]), batch_size=8, shuffle=True,
                           generator=torch.Generator().manual_seed(0))
        return train, DataLoader(TensorDataset(x[30:], y[30:]), batch_size=8)

    model_a = make_classifier(6, dropout=0.2)
    model_b = copy.deepcopy(model_a)
    loss_fn = nn.CrossEntropyLoss()
    torch.manual_seed(0)
    history = fit(model_a, *loaders(), torch.optim.SGD(model_a.parameters(), lr=0.1), loss_fn, CPU, 3)
    assert capsys.readouterr().err == ""  # the progress bar never writes to stderr

    torch.manual_seed(0)
    train_b, val_b = loaders()
    opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
    expected = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in range(3):
        expected["train_loss"].append(train_one_epoch(model_b, train_b, opt_b, loss_fn, CPU))
        val_loss, val_accuracy = evaluate(model_b, val_b, loss_fn, CPU)
        expected["val_loss"].append(val_loss)
        expected["val_accuracy"].append(val_accuracy)
    assert set(history) == set(expected)
    for key, values in expected.items():
        assert history[key] == pytest.approx(values, rel=1e-12), key


def test_init_classifier_draws_he_weights_zero_biases_and_a_small_last_layer():
    import math

    from helpers.reference.data_loading import init_classifier

    torch.manual_seed(0)
    net = init_classifier(nn.Sequential(nn.Linear(300, 600), nn.ReLU(), nn.Linear(600, 10)), last_scale=0.01)
    assert net[0].weight.std().item() == pytest.approx(math.sqrt(2 / 300), rel=0.02)  # fan_in, not fan_out
    assert net[2].weight.std().item() == pytest.approx(0.01 * math.sqrt(2 / 600), rel=0.05)
    assert torch.count_nonzero(net[0].bias) == 0 and torch.count_nonzero(net[2].bias) == 0
    with torch.no_grad():
        loss = nn.functional.cross_entropy(net(torch.randn(512, 300)), torch.randint(0, 10, (512,))).item()
    assert loss == pytest.approx(math.log(10), abs=0.05)

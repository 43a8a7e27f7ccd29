"""helpers.images: the offline digit images, the network probe that never hangs, and the path choice."""

import socket
import threading

import pytest
import torch

from helpers import images


def test_digit_images_are_normalized_rgb_copies_of_the_digits():
    x, y = images.digit_images(size=16)
    assert x.shape == (1797, 3, 16, 16) and x.dtype == torch.float32
    assert y.shape == (1797,) and y.dtype == torch.int64 and set(y.tolist()) == set(range(10))
    pixels = images.denormalize(x)  # back to [0, 1]
    assert pixels.min() >= 0 and pixels.max() <= 1
    torch.testing.assert_close(pixels[:, 0], pixels[:, 2])  # grey: the three channels agree
    # Normalized with ImageNet's statistics: the blank background maps to (0 - mean) / std.
    background = (0 - torch.tensor(images.IMAGENET_MEAN)) / torch.tensor(images.IMAGENET_STD)
    torch.testing.assert_close(x[0, :, 0, 0], background)


def test_digit_split_is_disjoint_seeded_and_restricted_to_the_classes():
    _, y = images.digit_images(size=8)
    train, val = images.digit_split(y, 100, 50, seed=3, classes=4)
    assert len(train) == 100 and len(val) == 50
    assert not set(train.tolist()) & set(val.tolist())
    assert y[torch.cat([train, val])].max() < 4
    again, _ = images.digit_split(y, 100, 50, seed=3, classes=4)
    other, _ = images.digit_split(y, 100, 50, seed=4, classes=4)
    assert torch.equal(train, again) and not torch.equal(train, other)
    with pytest.raises(ValueError, match="only"):
        images.digit_split(y, 900, 900, classes=2)


def test_digit_datasets_hold_the_split_images():
    x, y = images.digit_images(size=8)
    train_idx, val_idx = images.digit_split(y, 20, 10, seed=1, classes=5)
    train, val = images.digit_datasets(20, 10, size=8, seed=1, classes=5)
    assert torch.equal(train.tensors[0], x[train_idx]) and torch.equal(val.tensors[1], y[val_idx])
    image, label = train[0]
    assert image.shape == (3, 8, 8) and label.dtype == torch.int64


def test_reachable_is_false_when_the_connection_fails(monkeypatch):
    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("no")

    monkeypatch.setattr(socket, "create_connection", refuse)
    assert images.reachable("example.org", timeout=1.0) is False


def test_reachable_gives_up_at_its_deadline_when_the_network_hangs(monkeypatch):
    """A connection that never answers (a firewall dropping packets) does not hold the caller.

    Judged by order, not by a clock: reachable() must return while the attempt still hangs.
    """
    release, finished = threading.Event(), threading.Event()

    def hang(*args, **kwargs):
        release.wait(60)  # nothing comes back until the test lets go
        finished.set()
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", hang)
    try:
        assert images.reachable("example.org", timeout=0.2) is False
        assert not finished.is_set()  # returned at its deadline, not when the attempt gave up
    finally:
        release.set()


def test_offline_environment_variable_forces_the_offline_path(monkeypatch, capsys):
    monkeypatch.setenv(images.OFFLINE_ENV, "1")
    monkeypatch.setattr(images, "_online_data", lambda *a, **k: pytest.fail("tried the network"))
    data = images.finetune_data(n_train=30, n_val=20)
    line = capsys.readouterr().out.strip()
    assert line.startswith("Offline path") and images.OFFLINE_ENV in line and "\n" not in line
    assert data.weights is None and not data.online and data.num_classes == 10
    assert len(data.train_set) == 30 and len(data.val_set) == 20
    x, y = data.train_set[0]
    assert x.shape == (3, 32, 32) and 0 <= int(y) < 10


@pytest.mark.parametrize("value, forced", [("", False), ("0", False), ("false", False), ("1", True), ("yes", True)])
def test_forced_offline_reads_the_variable(monkeypatch, value, forced):
    monkeypatch.setenv(images.OFFLINE_ENV, value)
    assert images.forced_offline() is forced


def test_a_failing_online_path_falls_back_offline_with_the_reason(monkeypatch, capsys):
    monkeypatch.delenv(images.OFFLINE_ENV, raising=False)

    def unreachable(*args, **kwargs):
        raise ConnectionError("download.pytorch.org unreachable")

    monkeypatch.setattr(images, "_online_data", unreachable)
    data = images.finetune_data(n_train=10, n_val=10)
    line = capsys.readouterr().out.strip()
    assert not data.online and "download.pytorch.org unreachable" in line


def test_online_path_is_not_attempted_without_a_cache_or_a_network(monkeypatch, tmp_path):
    """With nothing cached and no network, _online_data raises before any download starts."""
    monkeypatch.setattr(torch.hub, "get_dir", lambda: str(tmp_path / "hub"))
    monkeypatch.setattr(images, "reachable", lambda host, port=443, timeout=2.0: False)
    with pytest.raises(ConnectionError, match="unreachable"):
        images._online_data(10, 10, seed=0, timeout=0.1)
    assert not (tmp_path / "hub").exists()

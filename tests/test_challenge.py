"""helpers/challenge.py: a challenge model handed over as data, rebuilt and run by whoever judges it."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from helpers.challenge import BATCH, ChallengeError, Program, Traced, as_graded, model_size
from helpers.reference.data_loading import build_challenge_model


class Polar(nn.Module):
    """A class of its own: polar features, batch norm, layer norm, a skip, GELU."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 24), nn.BatchNorm1d(24), nn.ReLU(), nn.Linear(24, 24), nn.LayerNorm(24))
        self.head = nn.Linear(24, 3)

    def forward(self, x):
        r = torch.sqrt((x ** 2).sum(dim=1, keepdim=True))
        features = torch.cat([x, r, torch.atan2(x[:, 1:2], x[:, :1])], dim=1)
        h = self.body(features)
        return self.head(nn.functional.gelu(h) + h)


@pytest.mark.parametrize("make", [lambda: build_challenge_model(2, 3), Polar])
def test_the_rebuilt_program_gives_the_models_logits(make):
    torch.manual_seed(0)
    model = make()
    model.train()(torch.randn(64, 2))  # batch norm's statistics move away from their start
    model.eval()
    x = torch.randn(3 * BATCH + 7, 2)
    program = as_graded(model)
    with torch.no_grad():
        torch.testing.assert_close(program(x), model(x), rtol=1e-5, atol=1e-6)
    assert program.size() == sum(t.numel() for t in model.state_dict().values())


def test_numbers_read_but_not_registered_count_in_the_size():
    """Finding 3 of issue 37: a 3x256 MLP kept as NumPy arrays measured 0 when the kernel counted."""
    class NumpyNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.arrays = [np.ones((2, 256), np.float32), np.ones((256, 256), np.float32), np.ones((256, 3), np.float32)]
            self.biases = [torch.zeros(256), torch.zeros(256)]

        def forward(self, x):
            x = (x @ torch.from_numpy(self.arrays[0]) + self.biases[0]).relu()
            x = (x @ torch.from_numpy(self.arrays[1]) + self.biases[1]).relu()
            return x @ torch.from_numpy(self.arrays[2])

    model = NumpyNet()
    assert sum(t.numel() for t in model.state_dict().values()) == 0
    assert model_size(model) == 2 * 256 + 256 * 256 + 256 * 3 + 2 * 256


@pytest.mark.parametrize("forward, words", [
    (lambda self, x: self.layer(x) if x.sum() > 0 else -self.layer(x), "without Python `if`/`for`"),
    (lambda self, x: self.conv(x.unsqueeze(1)).squeeze(1)[:, :3], "Conv1d, which the challenge does not allow"),
    (lambda self, x: torch.fft.fft(x).real @ self.layer.weight.T, "fft, which the challenge does not allow"),
])
def test_a_model_outside_the_rules_is_refused_in_words_for_the_student(forward, words):
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer, self.conv = nn.Linear(2, 3), nn.Conv1d(1, 1, 1)

        def forward(self, x):
            return forward(self, x)

    with pytest.raises(ChallengeError, match=words.replace("(", r"\(").replace("`", ".")):
        as_graded(Model())


def hostile(nodes, layers=None, tensors=None):
    """A program as describe() writes it (keyword arguments as {"kwargs": [...]}), from a forger's data."""
    nodes = [[op, target, args, {"kwargs": []} if kwargs == {} else kwargs] for op, target, args, kwargs in nodes]
    return Program({"nodes": nodes, "layers": layers or {}, "tensors": {}}, tensors or {})


@pytest.mark.parametrize("description, words", [
    ([["placeholder", "x", [], {}], ["call_function", "os.system", ["echo marker"], {}], ["output", "output", [{"node": 1}], {}]],
     "os.system, which the challenge does not allow"),
    ([["placeholder", "x", [], {}], ["call_method", "__class__", [{"node": 0}], {}], ["output", "output", [{"node": 1}], {}]],
     "does not allow"),
    ([["placeholder", "x", [], {}], ["output", "output", [{"node": 5}], {}]], "made after it"),
    ([["placeholder", "x", [], {}], ["get_attr", "secret", [], {}], ["output", "output", [{"node": 1}], {}]],
     "does not hand over"),
])
def test_a_forged_program_runs_nothing_outside_the_allow_lists(description, words):
    with pytest.raises(ChallengeError, match=words):
        hostile(description)(torch.zeros(2, 2))


def test_a_forged_layer_larger_than_any_budget_is_refused_before_it_is_made():
    nodes = [["placeholder", "x", [], {}], ["call_module", "big", [{"node": 0}], {}], ["output", "output", [{"node": 1}], {}]]
    with pytest.raises(ChallengeError, match="far larger"):
        hostile(nodes, {"big": ["Linear", {"in_features": 100_000, "out_features": 100_000, "bias": True}]})


def test_a_program_whose_values_explode_is_stopped():
    nodes = [["placeholder", "x", [], {}], ["call_method", "unsqueeze", [{"node": 0}, 0], {}],
             ["call_method", "expand", [{"node": 1}, 100_000, -1, -1], {}], ["output", "output", [{"node": 2}], {}]]
    with pytest.raises(ChallengeError, match="numbers for"):
        hostile(nodes)(torch.zeros(BATCH, 2))


def test_one_trace_names_what_it_reads_once():
    """A tensor made inside forward (from NumPy) is a constant of the trace: the description and the tensors
    handed over come from the same trace, so their names agree."""
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.array = np.ones(3, np.float32)

        def forward(self, x):
            return x.sum(dim=1, keepdim=True) + torch.from_numpy(self.array)

    traced = Traced(Model())
    assert set(traced.description["tensors"]) == set(traced.tensors)
    Traced(Model())  # tracing again does not break the first
    assert Program(traced.description, traced.tensors).size() == 3

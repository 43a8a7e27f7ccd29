"""Probes of 04_nn_modules: the solutions pass, every mutant fails its exercise, tampering gains nothing."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from notebook_solutions import solution_namespace
from probe_harness import probe_failures

from autograder.probes import probe_for
from autograder.verify import exercises_by_cell

ASSIGNMENT = "04_nn_modules"
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
SOLUTIONS, _ = exercises_by_cell(nbformat.read(NOTEBOOK, as_version=4))

# Mutants no input/output probe can see, with the reason: none for 04.
ONLY_NBGRADER_SEES: dict[str, str] = {}


def namespace(*cells: str) -> dict:
    """The source solutions with the setup cell's imports, then `cells` run over them."""
    names = solution_namespace(NOTEBOOK)
    exec("import copy\nimport numpy as np", names)
    for cell in cells:
        exec(cell, names)
    return names


def failures(names: dict, seed: int, folder: Path, patches: dict | None = None) -> dict[str, str]:
    """exercise -> message for every exercise that fails on the inputs of `seed` (probe_harness)."""
    return probe_failures(PROBE, names, seed, folder, patches)


def test_every_exercise_of_the_notebook_is_probed():
    exercises = {name for names in SOLUTIONS.values() for name in names}
    inputs = PROBE.make_inputs(np.random.default_rng(0))
    assert set(PROBE.expected(inputs)) == set(PROBE.KERNEL_CODE) == exercises


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_source_solutions_pass(seed, tmp_path):
    assert failures(namespace(), seed, tmp_path) == {}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda path: path.stem)
def test_every_mutant_fails_the_exercise_it_replaces(mutant, tmp_path):
    if mutant.stem in ONLY_NBGRADER_SEES:
        pytest.skip(ONLY_NBGRADER_SEES[mutant.stem])
    source = mutant.read_text()
    exercises = SOLUTIONS[re.search(r"^# replaces: (\S+)", source, re.M).group(1)]
    for seed in (0, 1):
        failed = failures(namespace(source), seed, tmp_path)
        assert failed and set(failed) <= set(exercises), (seed, failed)


def test_only_real_mutants_are_excused():
    assert set(ONLY_NBGRADER_SEES) <= {path.stem for path in MUTANTS}


# Right answers written another way: each must pass.
VARIANTS = {
    "build_sequential": '''
from collections import OrderedDict
def build_sequential(d_in, h, d_out):
    return nn.Sequential(OrderedDict(first=nn.Linear(d_in, h), act=nn.ReLU(inplace=True), last=nn.Linear(h, d_out)))
''',
    "TwoLayerNet": '''
class TwoLayerNet(nn.Module):
    def __init__(self, d_in, h, d_out):
        super().__init__()
        self.linear2 = nn.Linear(h, d_out)  # registered first: parameters() lists it first
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(d_in, h)
    def forward(self, x):
        return self.linear2(self.relu(self.linear1(x)))
''',
    "ParallelBlock": '''
class ParallelBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_in, d_out), nn.Linear(d_in, d_out)
    def forward(self, x):
        return F.relu(torch.mul(self.linear1(x), self.linear2(x)))
''',
    "LinearRegression": '''
class LinearRegression(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_parameter("w", nn.Parameter(torch.zeros((1, d))))
        self.b = nn.Parameter(torch.tensor([0.0]))
    def forward(self, x):
        return F.linear(x, self.w, self.b)
''',
    "count_parameters": '''
def count_parameters(model):
    total = 0
    for _, p in model.named_parameters():
        total += p.numel() if p.requires_grad else 0
    return total
''',
    "train_manual_sgd": '''
def train_manual_sgd(model, x, y, learning_rate, steps):
    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        losses.append(float(loss.detach()))
        for p in model.parameters():
            if p.grad is not None:
                p.data.sub_(learning_rate * p.grad)
                p.grad = None
    return losses
''',
}


@pytest.mark.parametrize("exercise", VARIANTS)
def test_right_answers_written_another_way_pass(exercise, tmp_path):
    assert failures(namespace(VARIANTS[exercise]), 5, tmp_path) == {}


# Wrong answers that the notebook's own tests let through, or might: each must fail its exercise.
WRONG = {
    "build_sequential": '''
def build_sequential(d_in, h, d_out):  # Tanh for ReLU
    return nn.Sequential(nn.Linear(d_in, h), nn.Tanh(), nn.Linear(h, d_out))
''',
    "TwoLayerNet": '''
class TwoLayerNet(nn.Module):  # the ReLU on the input instead of the hidden layer
    def __init__(self, d_in, h, d_out):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_in, h), nn.Linear(h, d_out)
    def forward(self, x):
        return self.linear2(self.linear1(x.clamp(min=0)))
''',
    "ParallelBlock": '''
class ParallelBlock(nn.Module):  # one layer under two names
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear1 = nn.Linear(d_in, d_out)
        self.linear2 = self.linear1
    def forward(self, x):
        return (self.linear1(x) * self.linear2(x)).clamp(min=0)
''',
    "LinearRegression": '''
class LinearRegression(nn.Module):  # b of shape (1, 1)
    def __init__(self, d):
        super().__init__()
        self.w, self.b = nn.Parameter(torch.zeros(1, d)), nn.Parameter(torch.zeros(1, 1))
    def forward(self, x):
        return x @ self.w.T + self.b
''',
    "count_parameters": '''
def count_parameters(model):  # the state_dict holds buffers and frozen parameters too
    return sum(t.numel() for t in model.state_dict().values())
''',
    "train_manual_sgd": '''
def train_manual_sgd(model, x, y, learning_rate, steps):  # the sum of squares, not the mean
    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).sum()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= learning_rate * p.grad
        losses.append(loss.item())
    return losses
''',
}


@pytest.mark.parametrize("exercise", WRONG)
def test_wrong_answers_the_visible_tests_may_miss_fail(exercise, tmp_path):
    assert set(failures(namespace(WRONG[exercise]), 5, tmp_path)) == {exercise}


ALWAYS_EQUAL = '''
class AlwaysEqual:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return 0.0
    def __int__(self): return 0
    def __len__(self): return 2
    def __iter__(self): return iter([AlwaysEqual(), AlwaysEqual()])
    def __getattr__(self, name): return AlwaysEqual()
    def __call__(self, *args, **kwargs): return AlwaysEqual()
'''
FAKE_ANSWERS = {
    "build_sequential": "def build_sequential(d_in, h, d_out): return AlwaysEqual()",
    "TwoLayerNet": "TwoLayerNet = AlwaysEqual",
    "ParallelBlock": "ParallelBlock = AlwaysEqual",
    "LinearRegression": "LinearRegression = AlwaysEqual",
    "count_parameters": "def count_parameters(model): return AlwaysEqual()",
    "train_manual_sgd": "def train_manual_sgd(model, x, y, learning_rate, steps): return [AlwaysEqual()] * steps",
}


def test_answers_equal_to_everything_fail(tmp_path):
    failed = failures(namespace(ALWAYS_EQUAL, *FAKE_ANSWERS.values()), 0, tmp_path)
    assert set(failed) == set(FAKE_ANSWERS)


def always(value):
    return lambda *args, **kwargs: value


CHECKS = {(np, "allclose"): always(True), (np.testing, "assert_allclose"): always(None),
          (torch, "allclose"): always(True), (torch.testing, "assert_close"): always(None),
          (torch.autograd, "gradcheck"): always(True), (torch, "equal"): always(True)}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda path: path.stem)
def test_disarmed_checks_do_not_rescue_a_wrong_answer(mutant, tmp_path):
    source = mutant.read_text()
    names = namespace(source)
    exercises = SOLUTIONS[re.search(r"^# replaces: (\S+)", source, re.M).group(1)]
    assert set(failures(names, 0, tmp_path, patches=CHECKS)) & set(exercises)


def test_the_probe_run_is_quick(tmp_path):
    import time

    start = time.perf_counter()
    failures(namespace(), 7, tmp_path)
    assert time.perf_counter() - start < 10.0  # the bound on one notebook's probe run, cold imports included

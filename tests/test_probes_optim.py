"""Probes of 05_optim: the solutions pass, every mutant fails its exercise, tampering gains nothing."""

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

ASSIGNMENT = "05_optim"
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
SOLUTIONS, _ = exercises_by_cell(nbformat.read(NOTEBOOK, as_version=4))

# Mutants no input/output probe can see, with the reason: none for 05.
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
    "sgd_step": '''
def sgd_step(params, learning_rate):
    for p in params:
        if p.grad is not None:
            p.data.add_(p.grad, alpha=-learning_rate)
''',
    "SGDMomentum": '''
class SGDMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in (q for q in group["params"] if q.grad is not None):
                buf = self.state[p].get("velocity")
                if buf is None:
                    buf = self.state[p]["velocity"] = torch.clone(p.grad).detach()
                else:
                    buf.mul_(group["momentum"]).add_(p.grad)
                p.add_(buf, alpha=-group["lr"])
''',
    "Adam": '''
class Adam(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:  # torch's layout: a tensor step count
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["step"] += 1
                t = state["step"].item()
                state["exp_avg"].lerp_(p.grad, 1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad.conj(), value=1 - beta2)
                step_size = group["lr"] / (1 - beta1**t)
                denom = (state["exp_avg_sq"].sqrt() / (1 - beta2**t) ** 0.5).add_(group["eps"])
                p.addcdiv_(state["exp_avg"], denom, value=-step_size)
''',
    "train": '''
def train(model, optimizer, loss_fn, x, y, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
    return losses
''',
}


@pytest.mark.parametrize("exercise", VARIANTS)
def test_right_answers_written_another_way_pass(exercise, tmp_path):
    assert failures(namespace(VARIANTS[exercise]), 5, tmp_path) == {}


# Wrong answers that the notebook's own tests let through, or might: each must fail its exercise.
WRONG = {
    "sgd_step": '''
def sgd_step(params, learning_rate):  # zeroes the gradients too, which is zero_grad's job
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= learning_rate * p.grad
                p.grad.zero_()
''',
    "SGDMomentum": '''
class SGDMomentum(torch.optim.Optimizer):  # the velocity outside self.state: lost by state_dict()
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})
        self.velocity = {}

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["seen"] = True
                if p in self.velocity:
                    self.velocity[p].mul_(group["momentum"]).add_(p.grad)
                else:
                    self.velocity[p] = p.grad.clone()
                p -= group["lr"] * self.velocity[p]
''',
    "Adam": '''
class Adam(torch.optim.Optimizer):  # one step count for the optimizer, not one per parameter
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps})
        self.t = 0

    @torch.no_grad()
    def step(self, closure=None):
        self.t += 1
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["m"], state["v"] = torch.zeros_like(p), torch.zeros_like(p)
                state["m"].mul_(beta1).add_(p.grad, alpha=1 - beta1)
                state["v"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                m_hat, v_hat = state["m"] / (1 - beta1**self.t), state["v"] / (1 - beta2**self.t)
                p -= group["lr"] * m_hat / (v_hat.sqrt() + group["eps"])
''',
    "train": '''
def train(model, optimizer, loss_fn, x, y, steps):  # records the loss after the update
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        losses.append(loss_fn(model(x), y).item())
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
    "sgd_step": "def sgd_step(params, learning_rate): return AlwaysEqual()",
    "SGDMomentum": "class SGDMomentum(torch.optim.SGD):\n    def step(self, closure=None): return AlwaysEqual()",
    "Adam": "class Adam(torch.optim.Adam):\n    def step(self, closure=None): return AlwaysEqual()",
    "train": "def train(model, optimizer, loss_fn, x, y, steps): return [AlwaysEqual()] * steps",
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

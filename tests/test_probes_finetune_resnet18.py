"""Probes of 07_finetune_resnet18: the solutions pass, every mutant fails its exercise, tampering gains nothing."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from notebook_solutions import solution_namespace
from probe_harness import probe_failures

from autograder.probes import judge, probe_for, run_in_namespace
from autograder.verify import exercises_by_cell, student_code

ASSIGNMENT = "07_finetune_resnet18"
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
SOURCE = nbformat.read(NOTEBOOK, as_version=4)
SOLUTIONS, _ = exercises_by_cell(SOURCE)
SETUP = "import copy\nimport time\nimport torchvision\nfrom torch.utils.data import DataLoader, TensorDataset\n"
# The read-only cells the grader runs with the student's code: 06's evaluate, the test fixtures.
GIVEN = [text for kind, text in student_code(SOURCE, SOURCE)[0] if kind == "given"]

# Mutants no input/output probe can see, with the reason: none for 07.
ONLY_NBGRADER_SEES: dict[str, str] = {}


def namespace(*cells: str) -> dict:
    """The source solutions with the setup cell's imports and the given cells, then `cells` over them."""
    names = solution_namespace(NOTEBOOK, SETUP)
    for cell in (*GIVEN, *cells):
        exec(cell, names)
    return names


@functools.cache
def expected(seed: int) -> dict:
    """The reference's answers on the inputs of `seed`, computed once per test session."""
    return PROBE.expected(PROBE.make_inputs(np.random.default_rng(seed)))


def failures(names: dict, seed: int, folder: Path, patches: dict | None = None) -> dict[str, str]:
    """exercise -> message for every exercise that fails on the inputs of `seed` (probe_harness)."""
    return probe_failures(PROBE, names, seed, folder, patches, expected)


def test_every_exercise_of_the_notebook_is_probed():
    exercises = {name for names in SOLUTIONS.values() for name in names}
    inputs = PROBE.make_inputs(np.random.default_rng(0))
    assert set(PROBE.expected(inputs)) == set(PROBE.KERNEL_CODE) == exercises


def test_given_cells_hold_the_evaluate_finetune_uses():
    assert any("def evaluate(" in text for text in GIVEN)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_source_solutions_pass(seed, tmp_path):
    assert failures(namespace(), seed, tmp_path) == {}


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda path: path.stem)
def test_every_mutant_fails_the_exercise_it_replaces(mutant, tmp_path):
    if mutant.stem in ONLY_NBGRADER_SEES:
        pytest.skip(ONLY_NBGRADER_SEES[mutant.stem])
    source = mutant.read_text()
    exercises = SOLUTIONS[re.search(r"^# replaces: (\S+)", source, re.M).group(1)]
    failed = failures(namespace(source), 0, tmp_path)  # one seed: each of these fails on any input
    assert failed and set(failed) <= set(exercises), failed


def test_only_real_mutants_are_excused():
    assert set(ONLY_NBGRADER_SEES) <= {path.stem for path in MUTANTS}


def test_backbone_and_statistics_are_judged_as_numbers(tmp_path):
    inputs = PROBE.make_inputs(np.random.default_rng(3))
    want = PROBE.expected(inputs)["finetune"]
    # one per tensor of the backbone: 60 weights and biases, 60 BatchNorm statistics (20 layers x 3)
    assert len(want["backbone_weights"]) == 60 and len(want["batchnorm_statistics"]) == 60
    wrong = next(path for path in MUTANTS if path.stem == "finetune_train_mode").read_text()
    assert "batchnorm_statistics" in failures(namespace(wrong), 3, tmp_path)["finetune"]


# Right answers written another way: each must pass.
VARIANTS = {
    "build_finetune_model": '''
def build_finetune_model(num_classes, weights=None):
    model = torchvision.models.resnet18(weights=weights)
    model.fc = nn.Linear(512, num_classes)
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(name.startswith("fc."))
    return model
''',
    "trainable_parameter_names": '''
def trainable_parameter_names(model):
    return tuple(name for name, parameter in model.named_parameters() if parameter.requires_grad is True)
''',
    # the notebook asks for momentum 0.9, but its tests check only the tensors held and the rate
    "make_finetune_optimizer": '''
def make_finetune_optimizer(model, learning_rate):
    return torch.optim.SGD([{"params": [model.fc.bias]}, {"params": [model.fc.weight]}], lr=learning_rate)
''',
    "finetune": '''
def finetune(model, train_loader, val_loader, epochs, device, learning_rate=0.01):
    model = model.to(device).eval()
    optimizer = make_finetune_optimizer(model, learning_rate=learning_rate)
    criterion = nn.CrossEntropyLoss()
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for epoch in range(epochs):
        losses = []
        for x, y in train_loader:
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses += [loss.item()] * y.numel()
        history["train_loss"].append(sum(losses) / len(losses))
        for key, value in zip(("val_loss", "val_accuracy"), evaluate(model, val_loader, F.cross_entropy, device)):
            history[key].append(value)
    return history
''',
}


@pytest.mark.parametrize("exercise", VARIANTS)
def test_right_answers_written_another_way_pass(exercise, tmp_path):
    assert failures(namespace(VARIANTS[exercise]), 5, tmp_path) == {}


def test_finetune_is_judged_apart_from_a_wrong_optimizer(tmp_path):
    wrong = "def make_finetune_optimizer(model, learning_rate):\n    return torch.optim.Adam(model.parameters(), lr=1.0)"
    assert set(failures(namespace(wrong), 4, tmp_path)) == {"make_finetune_optimizer"}


ALWAYS_EQUAL = '''
class AlwaysEqual:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return 0.0
    def __int__(self): return 0
    def __len__(self): return 2
    def __iter__(self): return iter([AlwaysEqual(), AlwaysEqual()])
    def __getitem__(self, key): return AlwaysEqual()
    def __getattr__(self, name): return AlwaysEqual()
    def __call__(self, *args, **kwargs): return AlwaysEqual()
'''
FAKE_ANSWERS = {
    "build_finetune_model": "def build_finetune_model(num_classes, weights=None): return AlwaysEqual()",
    "trainable_parameter_names": "def trainable_parameter_names(model): return AlwaysEqual()",
    "make_finetune_optimizer": "def make_finetune_optimizer(model, learning_rate): return AlwaysEqual()",
    "finetune": "def finetune(model, train_loader, val_loader, epochs, device, learning_rate=0.01): return AlwaysEqual()",
}


def test_answers_equal_to_everything_fail(tmp_path):
    failed = failures(namespace(ALWAYS_EQUAL, *FAKE_ANSWERS.values()), 0, tmp_path)
    assert set(failed) == set(FAKE_ANSWERS)


def always(value):
    return lambda *args, **kwargs: value


CHECKS = {(np, "allclose"): always(True), (np.testing, "assert_allclose"): always(None),
          (torch, "allclose"): always(True), (torch.testing, "assert_close"): always(None),
          (torch.autograd, "gradcheck"): always(True), (torch, "equal"): always(True)}


@pytest.mark.parametrize("mutant", MUTANTS[::3], ids=lambda path: path.stem)
def test_disarmed_checks_do_not_rescue_a_wrong_answer(mutant, tmp_path):
    source = mutant.read_text()
    exercises = SOLUTIONS[re.search(r"^# replaces: (\S+)", source, re.M).group(1)]
    assert set(failures(namespace(source), 0, tmp_path, patches=CHECKS)) & set(exercises)


def test_the_probe_run_is_quick(tmp_path):
    import time

    failures(namespace(), 6, tmp_path)  # first calls pay for imports and lazy initialization
    start = time.process_time()  # CPU seconds of both threads: the machine may be busy with other work
    inputs = PROBE.make_inputs(np.random.default_rng(7))
    judge(PROBE, inputs, run_in_namespace(PROBE, namespace(), inputs, tmp_path))
    assert time.process_time() - start < 10.0

"""Probes of 06_data_loading: the solutions pass, every mutant fails its exercise, tampering gains nothing."""

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
from autograder.verify import exercises_by_cell

ASSIGNMENT = "06_data_loading"
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
SOLUTIONS, _ = exercises_by_cell(nbformat.read(NOTEBOOK, as_version=4))
# The setup cell's imports that the solution cells use (Dataset as a base class at definition time).
SETUP = ("import contextlib\nimport copy\nimport sys\n"
         "from torch.utils.data import DataLoader, Dataset, TensorDataset, random_split\n"
         "from tqdm.auto import tqdm\n")

# Mutants no input/output probe can see, with the reason: none for 06.
ONLY_NBGRADER_SEES: dict[str, str] = {}


def namespace(*cells: str) -> dict:
    """The source solutions with the setup cell's imports, then `cells` run over them."""
    names = solution_namespace(NOTEBOOK, SETUP)
    for cell in cells:
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


def test_no_hidden_test_imports_the_reference():
    assert "helpers.reference" not in NOTEBOOK.read_text()


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
    "TensorPairDataset": '''
class TensorPairDataset(Dataset):
    def __init__(self, features, targets, transform=None):
        self.pairs = list(zip(features, targets))
        self.transform = transform or (lambda x: x)

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, index):
        x, y = self.pairs[index]
        return self.transform(x), y
''',
    # another split than random_split draws (validation first, from a permutation): still a right answer
    "make_loaders": '''
def make_loaders(dataset, batch_size, val_fraction, seed):
    from torch.utils.data import Subset
    order = torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed)).tolist()
    n_val = int(val_fraction * len(dataset))
    val_set, train_set = Subset(dataset, order[:n_val]), Subset(dataset, order[n_val:])
    generator = torch.Generator()
    generator.manual_seed(seed + 1)
    return (DataLoader(train_set, batch_size, shuffle=True, generator=generator),
            DataLoader(val_set, batch_size))
''',
    "train_one_epoch": '''
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train(True)
    losses, sizes = [], []
    for batch in loader:
        x, y = (t.to(device) for t in batch)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        losses.append(loss.detach() * y.shape[0])
        sizes.append(y.shape[0])
    return float(torch.stack(losses).sum() / sum(sizes))
''',
    "evaluate": '''
def evaluate(model, loader, loss_fn, device):
    model.train(False)
    losses, hits, n = [], 0, 0
    with torch.inference_mode():
        for x, y in loader:
            logits = model(x.to(device))
            losses.append(loss_fn(logits, y.to(device)) * len(y))
            hits += int((logits.softmax(dim=1).argmax(dim=1) == y.to(device)).sum())
            n += len(y)
    return (torch.stack(losses).sum() / n).item(), hits / n
''',
    # the loop written out instead of calling train_one_epoch and evaluate: judged by its numbers
    "fit": '''
def fit(model, train_loader, val_loader, optimizer, loss_fn, device, num_epochs):
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in tqdm(range(num_epochs), file=sys.stdout, disable=True):
        model.train()
        total = count = 0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            total, count = total + loss.item() * len(y), count + len(y)
        model.eval()
        with torch.no_grad():
            pairs = [(model(x.to(device)), y.to(device)) for x, y in val_loader]
        n = sum(len(y) for _, y in pairs)
        history["train_loss"].append(total / count)
        history["val_loss"].append(sum(loss_fn(p, y).item() * len(y) for p, y in pairs) / n)
        history["val_accuracy"].append(sum((p.argmax(1) == y).sum().item() for p, y in pairs) / n)
    return history
''',
}


@pytest.mark.parametrize("exercise", VARIANTS)
def test_right_answers_written_another_way_pass(exercise, tmp_path):
    assert failures(namespace(VARIANTS[exercise]), 5, tmp_path) == {}


def test_fit_is_judged_apart_from_a_wrong_train_one_epoch(tmp_path):
    wrong = next(path for path in MUTANTS if path.stem == "train_one_epoch_no_zero_grad").read_text()
    assert set(failures(namespace(wrong), 4, tmp_path)) == {"train_one_epoch"}


ALWAYS_EQUAL = '''
class AlwaysEqual:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return 0.0
    def __int__(self): return 0
    def __index__(self): return 0
    def __len__(self): return 2
    def __iter__(self): return iter([AlwaysEqual(), AlwaysEqual()])
    def __getitem__(self, key): return AlwaysEqual()
    def __getattr__(self, name): return AlwaysEqual()
    def __call__(self, *args, **kwargs): return AlwaysEqual()
'''
FAKE_ANSWERS = {
    "TensorPairDataset": "class TensorPairDataset(Dataset):\n    def __init__(self, *args, **kwargs): pass\n"
                         "    def __len__(self): return 1\n"
                         "    def __getitem__(self, index): return AlwaysEqual(), AlwaysEqual()",
    "make_loaders": "def make_loaders(dataset, batch_size, val_fraction, seed): return AlwaysEqual(), AlwaysEqual()",
    "train_one_epoch": "def train_one_epoch(model, loader, optimizer, loss_fn, device): return AlwaysEqual()",
    "evaluate": "def evaluate(model, loader, loss_fn, device): return AlwaysEqual(), AlwaysEqual()",
    "fit": "def fit(*args): return AlwaysEqual()",
}


def test_answers_equal_to_everything_fail(tmp_path):
    failed = failures(namespace(ALWAYS_EQUAL, *FAKE_ANSWERS.values()), 0, tmp_path)
    assert set(failed) == set(FAKE_ANSWERS)


def always(value):
    return lambda *args, **kwargs: value


CHECKS = {(np, "allclose"): always(True), (np.testing, "assert_allclose"): always(None),
          (torch, "allclose"): always(True), (torch.testing, "assert_close"): always(None),
          (torch.autograd, "gradcheck"): always(True), (torch, "equal"): always(True)}


@pytest.mark.parametrize("mutant", MUTANTS[::2], ids=lambda path: path.stem)
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
    assert time.process_time() - start < 6.0

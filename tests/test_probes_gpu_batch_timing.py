"""Probes of 08_gpu_batch_timing: the solutions pass, every mutant fails its exercise, tampering gains nothing."""

from __future__ import annotations

import functools
import re
import time
from pathlib import Path
from unittest import mock

import nbformat
import numpy as np
import pytest
import torch
from notebook_solutions import solution_namespace
from probe_harness import probe_failures

from autograder.probes import probe_for
from autograder.verify import exercises_by_cell

ASSIGNMENT = "08_gpu_batch_timing"
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
SOLUTIONS, _ = exercises_by_cell(nbformat.read(NOTEBOOK, as_version=4))
SETUP = "import statistics\nimport time\nfrom unittest import mock\nfrom helpers.timing import benchmark\n"

# Mutants no input/output probe can see, with the reason: none for 08.
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


def test_get_device_is_judged_against_this_machine():
    here = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    assert expected(0)["get_device"]["type"] == here


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
    "get_device": '''
def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")
''',
    "to_device": '''
def to_device(batch, device):
    from torch.utils._pytree import tree_map
    return tree_map(lambda leaf: leaf.to(device) if isinstance(leaf, torch.Tensor) else leaf, batch)
''',
    "peak_tflops": '''
def peak_tflops(sm_count, cores_per_sm, flops_per_cycle, ghz):
    return float(sm_count * cores_per_sm * flops_per_cycle * (ghz * 1e9)) / 1e12
''',
    # the real clock, bound before the grader can stand in for it: judged on the real sleeps
    "time_train_step": '''
from time import perf_counter as wall_clock


def time_train_step(model, batch_size, device, warmup, repeats):
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    times = []
    for i in range(warmup + repeats):
        x = torch.randn(batch_size, *model.input_shape, device=device)
        y = torch.zeros(batch_size, dtype=torch.long, device=device)
        start = wall_clock()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if i >= warmup:
            times.append(wall_clock() - start)
    return sorted(times)[len(times) // 2]
''',
    "batch_size_sweep": '''
def batch_size_sweep(make_model, batch_sizes, device, warmup=3, repeats=10):
    seconds = [time_train_step(model=make_model(), batch_size=b, device=device, warmup=warmup, repeats=repeats)
               for b in batch_sizes]
    return [dict(batch_size=b, seconds=s, samples_per_second=b / s) for b, s in zip(batch_sizes, seconds)]
''',
    "find_saturation": '''
def find_saturation(results, tolerance=0.1):
    best = max(r["samples_per_second"] for r in results)
    return min(r["batch_size"] for r in results if r["samples_per_second"] >= best / (1 + tolerance))
''',
}


# A clock no stand-in can replace: read through a closure over the os module's monotonic clock.
REAL_CLOCK_VARIANT = '''
def _make_clock():
    import time as _t
    clock_id = _t.CLOCK_MONOTONIC
    def read():
        return _t.clock_gettime(clock_id)
    return read


def time_train_step(model, batch_size, device, warmup, repeats, clock=None):
    read = _make_clock()
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    times = []
    for i in range(warmup + repeats):
        start = read()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        if i >= warmup:
            times.append(read() - start)
    return statistics.median(times)
'''


@pytest.mark.parametrize("exercise", VARIANTS)
def test_right_answers_written_another_way_pass(exercise, tmp_path):
    assert failures(namespace(VARIANTS[exercise]), 5, tmp_path) == {}


@pytest.mark.parametrize("source", [VARIANTS["time_train_step"], REAL_CLOCK_VARIANT], ids=["bound-at-import", "real-clock"])
def test_right_timing_passes_on_a_stalled_machine(source, tmp_path):
    """Every sleep lasting five times longer (a machine far busier than CI) costs a correct answer nothing."""
    real_sleep = time.sleep
    with mock.patch("time.sleep", lambda seconds: real_sleep(5 * seconds)):
        assert failures(namespace(source), 5, tmp_path) == {}


@pytest.mark.parametrize("stalled", [False, True])
def test_a_mean_timed_by_the_real_clock_still_fails(stalled, tmp_path):
    """The real-time bound loosens nothing for a mean over steps with a hiccup among them."""
    mean = REAL_CLOCK_VARIANT.replace("statistics.median(times)", "statistics.mean(times)")
    real_sleep = time.sleep
    factor = 2 if stalled else 1
    with mock.patch("time.sleep", lambda seconds: real_sleep(factor * seconds)):
        failed = failures(namespace(mean), 5, tmp_path)
    assert set(failed) == {"time_train_step"} and "median" in failed["time_train_step"]


# Other wrong answers, each with what its message must say.
WRONG = {
    "per_sample": ('''
def time_train_step(model, batch_size, device, warmup, repeats):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    times = []
    for i in range(warmup + repeats):
        start = benchmark.timer()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        times.append(benchmark.timer() - start)
    return statistics.median(times[warmup:]) / batch_size
''', "time_train_step", "not per sample"),
    "one_model": ('''
def batch_size_sweep(make_model, batch_sizes, device, warmup=3, repeats=10):
    model = make_model()
    results = []
    for b in batch_sizes:
        s = time_train_step(model, b, device, warmup, repeats)
        results.append({"batch_size": b, "seconds": s, "samples_per_second": b / s})
    return results
''', "batch_size_sweep", "fresh make_model()"),
    "string_device": ('''
def get_device():
    return "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
''', "get_device", "is_device"),
    "momentum": ('''
def time_train_step(model, batch_size, device, warmup, repeats):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for _ in range(warmup):
        optimizer.zero_grad(); F.cross_entropy(model(x), y).backward(); optimizer.step()
    times = []
    for _ in range(repeats):
        start = benchmark.timer()
        optimizer.zero_grad(); F.cross_entropy(model(x), y).backward(); optimizer.step()
        times.append(benchmark.timer() - start)
    return statistics.median(times)
''', "time_train_step", "without momentum"),
}


@pytest.mark.parametrize("case", WRONG)
def test_other_wrong_answers_fail_with_a_message_that_says_why(case, tmp_path):
    source, exercise, words = WRONG[case]
    failed = failures(namespace(source), 2, tmp_path)
    assert set(failed) == {exercise} and words in failed[exercise]


ALWAYS_EQUAL = '''
class AlwaysEqual:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    def __gt__(self, other): return True
    def __float__(self): return 0.005
    def __int__(self): return 0
    def __len__(self): return 2
    def __iter__(self): return iter([AlwaysEqual(), AlwaysEqual()])
    def __getitem__(self, key): return AlwaysEqual()
    def __getattr__(self, name): return AlwaysEqual()
    def __call__(self, *args, **kwargs): return AlwaysEqual()
'''
FAKE_ANSWERS = {
    "get_device": "def get_device(): return AlwaysEqual()",
    "to_device": "def to_device(batch, device): return AlwaysEqual()",
    "peak_tflops": "def peak_tflops(sm_count, cores_per_sm, flops_per_cycle, ghz): return AlwaysEqual()",
    "time_train_step": "def time_train_step(model, batch_size, device, warmup, repeats): return AlwaysEqual()",
    "batch_size_sweep": "def batch_size_sweep(make_model, batch_sizes, device, warmup=3, repeats=10): return AlwaysEqual()",
    "find_saturation": "def find_saturation(results, tolerance=0.1): return AlwaysEqual()",
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


@pytest.mark.parametrize("seed", [6, 7])
def test_the_probe_sleeps_little(seed, tmp_path):
    """The probe model's real sleeps (the bulk of its run) add up to under two seconds: counted, not timed."""
    slept, real_sleep = [], time.sleep

    def sleep(seconds):
        slept.append(seconds)
        real_sleep(seconds)

    with mock.patch("time.sleep", sleep):
        assert failures(namespace(), seed, tmp_path) == {}
    assert slept and sum(slept) < 2.0, sum(slept)

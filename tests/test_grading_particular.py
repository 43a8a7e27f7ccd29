"""What one assignment's probe does that the common suite (test_grading_folders.py) does not check."""

from __future__ import annotations

import time
from unittest import mock

import numpy as np
import pytest
import torch
from probe_harness import COURSE, assignment, expected, failures, namespace

from autograder import grading_folder
from autograder.mutants import parse_mutant
from autograder.notebooks import grade_id, is_test, nbgrader, read_notebook
from autograder.verify import student_code


def sample(name: str, kind: str, stem: str) -> str:
    """The code of grading/<name>/<kind>/<stem>.py."""
    path = grading_folder.folder(COURSE.root, name) / kind / f"{stem}.py"
    return parse_mutant(path).code if kind == "mutants" else grading_folder.parse_sample(path).code


def test_02_the_trusted_run_runs_the_read_only_cells_the_answers_read():
    """answer_retain_grad is computed from the read-only regression cell's prediction and y."""
    source = read_notebook(COURSE.source_notebook("02_autograd"))
    given = [text for kind, text in student_code(source, source)[0] if kind == "given"]
    wanted = [c.source for c in source.cells if c.cell_type == "code" and nbgrader(c).get("locked")
              and not is_test(c) and grade_id(c) not in ("setup", "summary")]
    assert wanted and all(text in given for text in wanted)


def test_02_the_gpu_stand_in_refuses_numpy_as_cuda_does(tmp_path):
    wrong = sample("02_autograd", "mutants", "to_numpy_without_cpu")
    assert "to_numpy" in failures("02_autograd", namespace("02_autograd", {"to_numpy": wrong}), 0, tmp_path)


def test_03_relu_inputs_stay_away_from_the_kink():
    inputs = assignment("03_custom_functions").probe.make_inputs(np.random.default_rng(7))
    assert all(np.abs(inputs[k]).min() >= 0.05 - 1e-6 for k in inputs if k.lower().startswith("relu.x"))


def test_03_the_message_says_what_was_saved(tmp_path):
    wrong = sample("03_custom_functions", "mutants", "sigmoid_saves_input")
    failed = failures("03_custom_functions", namespace("03_custom_functions", {"Sigmoid": wrong}), 0, tmp_path)
    assert "none of them its output" in failed["Sigmoid"]


def test_06_fit_is_judged_apart_from_a_wrong_train_one_epoch(tmp_path):
    wrong = sample("06_data_loading", "mutants", "train_one_epoch_no_zero_grad")
    names = namespace("06_data_loading", {"train_one_epoch": wrong})
    assert set(failures("06_data_loading", names, 4, tmp_path)) == {"train_one_epoch"}


def test_07_backbone_and_statistics_are_judged_as_numbers(tmp_path):
    want = expected("07_finetune_resnet18", 3)["finetune"]
    # one per tensor of the backbone: 60 weights and biases, 60 BatchNorm statistics (20 layers x 3)
    assert len(want["backbone_weights"]) == 60 and len(want["batchnorm_statistics"]) == 60
    wrong = sample("07_finetune_resnet18", "mutants", "finetune_train_mode")
    names = namespace("07_finetune_resnet18", {"finetune": wrong})
    assert "batchnorm_statistics" in failures("07_finetune_resnet18", names, 3, tmp_path)["finetune"]


def test_07_finetune_is_judged_apart_from_a_wrong_optimizer(tmp_path):
    wrong = "def make_finetune_optimizer(model, learning_rate):\n    return torch.optim.Adam(model.parameters(), lr=1.0)"
    names = namespace("07_finetune_resnet18", None, wrong)
    assert set(failures("07_finetune_resnet18", names, 4, tmp_path)) == {"make_finetune_optimizer"}


def test_08_get_device_is_judged_against_this_machine():
    here = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    assert str(expected("08_gpu_batch_timing", 0)["get_device"]["type"]) == here


BOUND_AT_IMPORT = "time_train_step_by_the_real_clock_bound_at_import"
REAL_CLOCK = "time_train_step_real_clock_in_a_closure"


@pytest.mark.parametrize("stem", [BOUND_AT_IMPORT, REAL_CLOCK], ids=["bound-at-import", "real-clock"])
def test_08_right_timing_passes_on_a_stalled_machine(stem, tmp_path):
    """Every sleep lasting five times longer (a machine far busier than CI) costs a correct answer nothing."""
    names = namespace("08_gpu_batch_timing", None, sample("08_gpu_batch_timing", "variants", stem))
    real_sleep = time.sleep
    with mock.patch("time.sleep", lambda seconds: real_sleep(5 * seconds)):
        assert failures("08_gpu_batch_timing", names, 5, tmp_path) == {}


class Timeline:
    """A clock the test controls: it moves only when something sleeps, `factor` times as long."""

    def __init__(self, factor: float):
        self.now, self.factor = 5000.0, factor

    def sleep(self, seconds):
        self.now += self.factor * seconds

    def read(self, *args):
        return self.now


@pytest.mark.parametrize("factor", [1, 5])
@pytest.mark.parametrize("stem", [BOUND_AT_IMPORT, REAL_CLOCK], ids=["bound-at-import", "real-clock"])
def test_08_a_mean_still_fails_however_slow_the_steps(stem, factor, tmp_path):
    """The real-time bound loosens nothing for a mean over steps with hiccups among them.

    Every clock, the probe's own real clock included, reads a timeline that moves only when the
    probe model sleeps: the judgment is tested on exact times, whatever the machine is doing.
    """
    mean = sample("08_gpu_batch_timing", "variants", stem).replace("statistics.median(times)", "statistics.mean(times)")
    mean = mean.replace("sorted(times)[len(times) // 2]", "sum(times) / len(times)")
    assert mean != sample("08_gpu_batch_timing", "variants", stem)
    timeline = Timeline(factor)
    with mock.patch("time.sleep", timeline.sleep), mock.patch("time.perf_counter", timeline.read), \
            mock.patch("time.clock_gettime", timeline.read):
        names = namespace("08_gpu_batch_timing", None, mean)
        failed = failures("08_gpu_batch_timing", names, 5, tmp_path)
    assert set(failed) == {"time_train_step"} and "median" in failed["time_train_step"]


@pytest.mark.parametrize("seed", [6, 7])
def test_08_the_probe_sleeps_little(seed, tmp_path):
    """The probe model's real sleeps (the bulk of its run) add up to under two seconds: counted, not timed."""
    slept, real_sleep = [], time.sleep

    def sleep(seconds):
        slept.append(seconds)
        real_sleep(seconds)

    names = namespace("08_gpu_batch_timing")
    with mock.patch("time.sleep", sleep):
        assert failures("08_gpu_batch_timing", names, seed, tmp_path) == {}
    assert slept and sum(slept) < 2.0, sum(slept)

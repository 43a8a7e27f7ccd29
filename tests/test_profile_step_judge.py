"""08's profile_step under a busy machine: each step is profiled again until one run is right.

A busy machine can pause a process inside any operator, and a pause inside a small one makes a right
answer's profile wrong. The probe asks for another profile, PROFILE_RUNS times at most, and stops at the
first right run (a right answer on a quiet machine costs one run a step); the judge accepts a step when one
of its runs is right. With three fixed runs, a right answer was lost once in three `make course` at once
(load 12 on two cores). Driven in this process through the kernel's caller, with the reference paused.
"""

from __future__ import annotations

import collections

import numpy as np
from probe_harness import assignment, probe_module

from autograder.probes import kernel_inputs
from autograder.probes.session import Session, local_channel, run_exercise
from helpers.reference.gpu_batch_timing import profile_step as reference

PAUSED = ("aten::_local_scalar_dense", 0.02)  # what a run gives when the machine paused inside .item()


def graded(answer) -> tuple[str | None, collections.Counter]:
    """(the judge's verdict, how many runs each step took) for `answer(step, run)`, run counting from 0."""
    probe = probe_module("08_gpu_batch_timing")
    calls = collections.Counter()

    def profile_step(step):
        calls[step] += 1
        return answer(step, calls[step] - 1)

    inputs = probe.craft_inputs(np.random.default_rng(0))
    channel = local_channel({"profile_step": profile_step}, assignment("08_gpu_batch_timing").probe.given_module())
    got = run_exercise(probe.run_profile_step, Session(channel), kernel_inputs(inputs))
    return probe._judge_profile_step(got, probe.expected_profile_step(inputs)), calls


def test_a_right_answer_on_a_quiet_machine_is_profiled_once_a_step():
    verdict, calls = graded(lambda step, run: reference(step))
    assert verdict is None
    assert sorted(calls.values()) == [1] * 5


def test_a_right_answer_paused_in_all_runs_but_the_last_keeps_its_points():
    runs = probe_module("08_gpu_batch_timing").PROFILE_RUNS
    assert runs >= 5  # three lost a right answer at load 12
    verdict, calls = graded(lambda step, run: PAUSED if run < runs - 1 else reference(step))
    assert verdict is None, verdict
    assert sorted(calls.values()) == [runs] * 5


def test_a_wrong_answer_is_profiled_every_time_and_loses():
    runs = probe_module("08_gpu_batch_timing").PROFILE_RUNS
    verdict, calls = graded(lambda step, run: PAUSED)
    assert verdict is not None and "busiest operator" in verdict
    assert calls and set(calls.values()) == {runs}

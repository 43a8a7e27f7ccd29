"""helpers.async_device: the stand-in CUDA GPU on the CPU that 08's tests and probe time answers on."""

from __future__ import annotations

import time

import pytest
import torch

import helpers.timing
from helpers.async_device import AsyncDevice


class Clock:
    """A virtual clock: each reading one microsecond later."""

    def __init__(self):
        self.now = 100.0

    def read(self):
        self.now += 1e-6
        return self.now


def waits(synchronize) -> float:
    """Virtual seconds that `synchronize(gpu)` lets pass after 0.5 s of queued work."""
    clock = Clock()
    with AsyncDevice(clock) as gpu:
        start = clock.now
        gpu.queue(0.5)
        synchronize(gpu)
        return clock.now - start


def _events(gpu):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    gpu.queue(0.25)
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) == pytest.approx(250.0)


@pytest.mark.parametrize("synchronize", [
    lambda gpu: torch.cuda.synchronize(),
    lambda gpu: torch.cuda.synchronize(gpu.device),
    lambda gpu: torch.cuda.current_stream().synchronize(),
    lambda gpu: helpers.timing.synchronize(gpu.device),
    lambda gpu: helpers.timing.synchronized_timer(gpu.device),
    lambda gpu: helpers.timing.benchmark.timer(),
    lambda gpu: torch.ones(2, device=gpu.device).sum().item(),
    lambda gpu: float(torch.ones(()).to(gpu.device)),
    _events,
], ids=["cuda.synchronize", "cuda.synchronize(device)", "current_stream", "helpers.synchronize",
        "synchronized_timer", "benchmark.timer", "item", "float", "events"])
def test_every_way_of_waiting_for_a_gpu_waits(synchronize):
    assert waits(synchronize) >= 0.5


def test_a_bare_clock_does_not_wait_and_events_not_reached_raise():
    clock = Clock()
    with AsyncDevice(clock) as gpu:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        gpu.queue(0.5)
        end.record()
        assert clock.now - 100.0 < 1e-3  # queueing moved no clock
        with pytest.raises(RuntimeError, match="not ready"):
            start.elapsed_time(end)


def test_cuda_tensors_stay_on_the_cpu_and_code_sees_a_gpu():
    with AsyncDevice(Clock()) as gpu:
        model = torch.nn.Linear(3, 2).to(gpu.device)
        x = torch.randn(4, 3, device=gpu.device)
        y = torch.zeros(4, dtype=torch.long).cuda()
        assert gpu.device.type == "cuda" and torch.cuda.is_available()
        assert model(x).device.type == x.device.type == y.device.type == "cpu"


def test_names_bound_at_import_are_stood_in_and_set_back():
    names = {"wait": torch.cuda.synchronize, "other": 1}
    clock = Clock()
    with AsyncDevice(clock, namespaces=[names]) as gpu:
        gpu.queue(0.5)
        names["wait"]()
        names["added"] = 2  # a name made while active stays
    assert clock.now >= 100.5
    assert names == {"wait": torch.cuda.synchronize, "other": 1, "added": 2}


def test_real_clock_sleeps_for_the_queued_work():
    with AsyncDevice(Clock(), real_clock=time.perf_counter) as gpu:
        gpu.queue(0.05)
        start = time.perf_counter()
        torch.cuda.synchronize()
        assert time.perf_counter() - start >= 0.04

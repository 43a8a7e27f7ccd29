"""helpers.timing's synchronizing clock: which device it waits for, with the GPUs mocked.

A test cannot own a GPU here, so `torch.cuda` and `torch.mps` are patched: what is checked is that
the right `synchronize` is called, once per reading, before the clock is read.
"""

from unittest import mock

import pytest
import torch

from helpers import timing


def _no_gpu():
    return [mock.patch("torch.cuda.is_available", return_value=False),
            mock.patch("torch.backends.mps.is_available", return_value=False)]


def test_accelerator_names_the_gpu_of_a_device_or_the_best_present():
    assert timing.accelerator("cpu") is None
    assert timing.accelerator(torch.device("cuda", 1)) == "cuda"
    assert timing.accelerator("mps") == "mps"
    with mock.patch("torch.cuda.is_available", return_value=True):
        assert timing.accelerator() == "cuda"
    with mock.patch("torch.cuda.is_available", return_value=False), \
            mock.patch("torch.backends.mps.is_available", return_value=True):
        assert timing.accelerator() == "mps"
    cuda, mps = _no_gpu()
    with cuda, mps:
        assert timing.accelerator() is None


def test_synchronize_on_mps_waits_for_the_mps_queue():
    with mock.patch("torch.cuda.is_available", return_value=False), \
            mock.patch("torch.backends.mps.is_available", return_value=True), \
            mock.patch("torch.mps.synchronize") as mps, mock.patch("torch.cuda.synchronize") as cuda:
        timing.synchronize()
        timing.synchronize("mps")
    assert mps.call_count == 2 and cuda.call_count == 0


def test_synchronize_on_cuda_waits_for_that_device():
    with mock.patch("torch.cuda.is_available", return_value=True), \
            mock.patch("torch.cuda.synchronize") as cuda, mock.patch("torch.mps.synchronize") as mps:
        timing.synchronize()
        timing.synchronize(torch.device("cuda", 1))
    assert cuda.call_args_list == [mock.call(None), mock.call(torch.device("cuda", 1))]
    assert mps.call_count == 0


def test_synchronize_on_a_cpu_does_nothing_even_where_a_gpu_is_present():
    with mock.patch("torch.cuda.is_available", return_value=True), \
            mock.patch("torch.backends.mps.is_available", return_value=True), \
            mock.patch("torch.cuda.synchronize") as cuda, mock.patch("torch.mps.synchronize") as mps:
        timing.synchronize("cpu")
    cuda_available, mps_available = _no_gpu()
    with cuda_available, mps_available, mock.patch("torch.cuda.synchronize") as cuda_none:
        timing.synchronize()
    assert cuda.call_count == mps.call_count == cuda_none.call_count == 0


@pytest.mark.parametrize("kind, synchronize", [("cuda", "torch.cuda.synchronize"), ("mps", "torch.mps.synchronize")])
def test_synchronized_timer_waits_before_it_reads_the_clock(kind, synchronize):
    order = []
    with mock.patch(synchronize, side_effect=lambda *args: order.append("synchronize")), \
            mock.patch("timeit.default_timer", side_effect=lambda: order.append("read") or 42.0):
        assert timing.synchronized_timer(kind) == 42.0
    assert order == ["synchronize", "read"]


def test_benchmark_timer_takes_the_synchronizing_clock():
    """benchmark.Timer calls its `timer` with no argument: the default device is the one present."""
    with mock.patch("torch.cuda.is_available", return_value=False), \
            mock.patch("torch.backends.mps.is_available", return_value=True), \
            mock.patch("torch.mps.synchronize") as mps:
        measurement = timing.benchmark.Timer("x + 1", globals={"x": torch.ones(3)},
                                             timer=timing.synchronized_timer).timeit(5)
    assert measurement.median > 0
    assert mps.call_count >= 2  # at least around the timed block (the warm-up reads it too)

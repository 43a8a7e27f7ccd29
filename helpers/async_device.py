"""A stand-in CUDA GPU on the CPU, for timing tests: work is queued, and only synchronizing waits for it.

A GPU runs its work asynchronously: a kernel launch returns at once, and a clock read right after it
measures the launch, not the work. Timing code is right only if it waits for the queue before reading
the clock. To test that on a machine without a GPU, `AsyncDevice` plays one:

- `device` is `torch.device("cuda")`, so code that synchronizes only `if device.type == "cuda"` (or
  `!= "cpu"`, or `if torch.cuda.is_available()`) takes its GPU branch; while active, tensors asked for
  on "cuda" (`device=`, `.to(device)`, `.cuda()`, `model.to(device)`) are made on the CPU instead;
- a test model calls `queue(seconds)` in its forward pass: work that runs after the work queued
  before it, without making the caller wait;
- every way of waiting for a real GPU waits for the queue: `torch.cuda.synchronize(...)`,
  `torch.accelerator.synchronize()`, `torch.mps.synchronize()`, `torch.cuda.current_stream().synchronize()`,
  CUDA events (`torch.cuda.Event(enable_timing=True)`: `record`, `synchronize`, `elapsed_time`, which
  fails, as on a GPU, for an event the queue has not reached), `helpers.timing.synchronize` and
  `synchronized_timer`, `torch.utils.benchmark.timer` (also as `benchmark.Timer`'s default `timer=`),
  and reading a value on the host (`tensor.item()`, `.tolist()`, `.cpu()`, `float(tensor)`);
- a bare clock reading does not wait.

Waiting moves `clock.now` (a virtual clock: any object with a float `now` and `read()`) to the end of
the queued work; with `real_clock` given, it also sleeps until the queued work would be done in real time.
Names bound to the synchronizing functions (`from torch.cuda import synchronize`) in the `namespaces`
given get the stand-in too.
"""

from __future__ import annotations

import abc
import sys
import time
import timeit
from collections.abc import Callable, Iterable
from unittest import mock

import torch
from torch.overrides import TorchFunctionMode


def _on_the_cpu(device):
    """"cpu" in place of a CUDA device (a torch.device, "cuda", "cuda:0" or an index); anything else as it is."""
    if isinstance(device, torch.device) and device.type == "cuda":
        return torch.device("cpu")
    if isinstance(device, str) and device.split(":")[0] == "cuda":
        return "cpu"
    return device


class KeepOnTheCpu(TorchFunctionMode):
    """While active, tensors asked for on "cuda" are made, or left, on the CPU."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if "device" in kwargs:
            device = kwargs["device"]
            kwargs["device"] = "cpu" if isinstance(device, int) and not isinstance(device, bool) else _on_the_cpu(device)
        name = getattr(func, "__name__", "")
        if name == "cuda":  # Tensor.cuda(device=None, non_blocking=False), also what Module.cuda() calls
            return args[0]
        if name == "to":
            args = tuple(_on_the_cpu(value) for value in args)
        return func(*args, **kwargs)


class _Event:
    """torch.cuda.Event on the stand-in: its time is when the queue reaches it."""

    queue: AsyncDevice

    def __init__(self, *args, enable_timing=False, **kwargs):
        self.enable_timing, self.at, self.real_at = enable_timing, None, None

    def record(self, stream=None):
        self.at, self.real_at = self.queue.reached()

    def query(self):
        return self.at is None or self.queue.clock.now >= self.at

    def synchronize(self):
        if self.at is not None:
            self.queue.wait_until(self.at, self.real_at)

    def wait(self, stream=None):
        pass

    def elapsed_time(self, end):
        if not (self.enable_timing and end.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self.at is None or end.at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not end.query():
            raise RuntimeError("CUDA error: device not ready (the end event was read before the GPU reached it: "
                               "synchronize it first)")
        return (end.at - self.at) * 1e3



try:
    from torch._streambase import _EventBase
except ImportError:
    _EventBase = None
if isinstance(_EventBase, abc.ABCMeta):  # torch 2.4: importing torch._dynamo (an optimizer's first step
    _EventBase.register(_Event)  # does) asserts that torch.cuda.Event derives from this abstract base


class _Stream:
    """torch.cuda.current_stream() on the stand-in."""

    def __init__(self, queue):
        self.queue = queue

    def synchronize(self):
        self.queue.synchronize()

    def record_event(self, event=None):
        event = event or self.queue.Event()
        event.record()
        return event

    def wait_stream(self, stream):
        pass


class AsyncDevice:
    """A CUDA GPU's queue imitated on the CPU, on a virtual `clock`; a context manager (see the module)."""

    device = torch.device("cuda")

    def __init__(self, clock, namespaces: Iterable[dict] = (), real_clock: Callable[[], float] | None = None):
        self.clock, self.namespaces, self.real_clock = clock, list(namespaces), real_clock
        self.busy_until, self.real_busy_until = clock.now, 0.0
        self.Event = type("Event", (_Event,), {"queue": self})
        self._patches, self._bound, self._mode = [], [], None

    def queue(self, seconds: float) -> None:
        self.busy_until = max(self.busy_until, self.clock.now) + seconds
        if self.real_clock is not None:
            self.real_busy_until = max(self.real_busy_until, self.real_clock()) + seconds

    def reached(self):
        """(virtual, real) time at which the queue reaches what is queued next."""
        real = max(self.real_busy_until, self.real_clock()) if self.real_clock is not None else None
        return max(self.busy_until, self.clock.now), real

    def wait_until(self, at: float, real_at: float | None = None) -> None:
        self.clock.now = max(self.clock.now, at)
        if self.real_clock is not None and real_at is not None:
            wait = real_at - self.real_clock()
            if wait > 0:
                time.sleep(wait)

    def synchronize(self, *args, **kwargs) -> None:
        self.wait_until(self.busy_until, self.real_busy_until)

    def timer(self, *args, **kwargs) -> float:
        self.synchronize()
        return self.clock.read()

    def _waiting(self, method):
        def wrapper(tensor, *args, **kwargs):
            self.synchronize()
            return method(tensor, *args, **kwargs)
        return wrapper

    def __enter__(self):
        import helpers.timing

        benchmark = helpers.timing.benchmark
        stream = _Stream(self)
        # the real benchmark.timer, where it was defined (a virtual clock may stand in for benchmark.timer)
        real_timer = sys.modules[benchmark.Timer.__module__].timer
        stand_in = {helpers.timing.synchronized_timer: self.timer, helpers.timing.synchronize: self.synchronize,
                    torch.cuda.synchronize: self.synchronize}
        if real_timer not in (time.perf_counter, time.monotonic, time.time, timeit.default_timer):  # not a bare clock
            stand_in[real_timer] = self.timer
        patches = [mock.patch.object(helpers.timing, "synchronize", self.synchronize),
                   mock.patch.object(helpers.timing, "synchronized_timer", self.timer),
                   mock.patch.object(benchmark, "timer", self.timer),
                   mock.patch("torch.cuda.is_available", return_value=True),
                   mock.patch("torch.cuda.synchronize", self.synchronize),
                   mock.patch("torch.cuda.Event", self.Event),
                   mock.patch("torch.cuda.current_stream", lambda *args, **kwargs: stream),
                   mock.patch("torch.cuda.default_stream", lambda *args, **kwargs: stream)]
        patches += [mock.patch.object(torch.Tensor, name, self._waiting(getattr(torch.Tensor, name)))
                    for name in ("item", "tolist", "cpu", "__float__")]
        if hasattr(torch, "mps"):
            stand_in[torch.mps.synchronize] = self.synchronize
            patches.append(mock.patch("torch.mps.synchronize", self.synchronize))
        accelerator = getattr(torch, "accelerator", None)
        if accelerator is not None and hasattr(accelerator, "synchronize"):  # torch >= 2.6
            stand_in[accelerator.synchronize] = self.synchronize
            patches += [mock.patch.object(accelerator, "synchronize", self.synchronize),
                        mock.patch.object(accelerator, "is_available", return_value=True),
                        mock.patch.object(accelerator, "current_accelerator", return_value=self.device)]
        # benchmark.Timer's default timer= was bound when it was defined: the clock it reads becomes a waiting one
        clocks = {real_timer, benchmark.timer, getattr(self.clock, "read", None)}
        patches.append(mock.patch.object(benchmark.Timer.__init__, "__defaults__", tuple(
            self.timer if callable(value) and value in clocks else value for value in benchmark.Timer.__init__.__defaults__)))
        for names in self.namespaces:  # only these keys are set back afterwards (not the whole namespace)
            patches += [_Rebind(names, key, stand_in[value]) for key, value in list(names.items())
                        if callable(value) and not isinstance(value, type) and _hashable(value) and value in stand_in]
        self._patches = patches
        for patch in patches:
            patch.start()
        self._mode = KeepOnTheCpu()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc_info):
        self._mode.__exit__(*exc_info)
        for patch in reversed(self._patches):
            patch.stop()
        return False


class _Rebind:
    """Sets names[key] to value until stop(), then back to what it was; other names are left alone."""

    def __init__(self, names: dict, key: str, value):
        self.names, self.key, self.value, self.saved = names, key, value, names.get(key)

    def start(self):
        self.names[self.key] = self.value

    def stop(self):
        self.names[self.key] = self.saved


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True

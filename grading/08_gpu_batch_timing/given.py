"""What the grader hands 08's functions in the kernel: stand-in clocks and devices, models, batches, steps.

Stand-ins build inputs, run the student's functions under stand-in clocks and devices, and hand back what
they saw; they compute no property, no expected value and no verdict (autograder/probes/__init__.py).

What they note is the kernel's word, by nature: how an answer reads a clock and waits for a device can
only be seen where the answer runs. `Clock.reads` (readings of the stand-in clock), `StepModel`'s
`shapes`, `biases` and `real` (each forward pass's input shape, the bias it saw, when it ran in real
time), `Sweep.calls`, `MatmulCost.products`, `AutocastRecorder.seen`, the GPU yardsticks
(`gpu_seconds`, `matmul_events`), and `checkpoint_run`'s bytes alive after a forward pass and forward
calls per layer are fetched raw and judged by the probe (probe.py's docstring bounds what a kernel that
forges them gains).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import threading
import time
import timeit
from unittest import mock

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from helpers.async_device import AsyncDevice
from helpers.memory import LiveTensors
from helpers.ranks import ThreadGroup, data_parallel_rank

real_clock = time.perf_counter  # bound before a stand-in clock replaces time.perf_counter


# -- to_device ----------------------------------------------------------------------------------------------

def build(spec_text):
    """The batch that a spec (JSON: ["tensor", shape, dtype], ["list"|"tuple", items], ["dict", {key: item}],
    ["int"|"float"|"str", value], ["none"]) describes; tensors of ones."""
    def made(spec):
        kind = spec[0]
        if kind == "tensor":
            return torch.ones(spec[1], dtype=getattr(torch, spec[2]))
        if kind in ("list", "tuple"):
            items = [made(item) for item in spec[1]]
            return items if kind == "list" else tuple(items)
        if kind == "dict":
            return {key: made(value) for key, value in spec[1].items()}
        return None if kind == "none" else spec[1]
    return made(json.loads(spec_text))


# -- clocks and an asynchronous device -------------------------------------------------------------------

class Clock:
    """Stands in for the clocks while active: each reading one microsecond later, plus advance().

    Besides the clocks of `time` and `timeit`, it replaces every name in the globals (and default
    arguments) of the functions given that is bound to one of those clocks, so that
    `from time import perf_counter` reads it too, and the default `timer=` of `timeit.Timer` and
    `benchmark.Timer` (bound when they were defined). `reads` counts the readings.
    """

    # torch.utils.benchmark.timer too: torch < 2.9 binds it to the real clock at import on a CPU.
    names = ("time.perf_counter", "time.time", "time.monotonic", "timeit.default_timer",
             "torch.utils.benchmark.timer")
    ns_names = ("time.perf_counter_ns", "time.time_ns", "time.monotonic_ns")

    def __init__(self):
        self.now, self.reads = 1000.0, 0
        self.thread = threading.get_ident()  # the caller's, which calls the answer

    def read(self):
        self.now += 1e-6
        self.reads += 1
        return self.now

    def read_ns(self):
        return int(self.read() * 1e9)

    def standing_in_for(self, clock):
        """`clock` read in the answer's thread, the real one in any other: the kernel's own threads (its
        I/O, its heartbeat) read time.monotonic and time.time too, more often on a busy machine, and
        their readings must neither count as the answer's nor see the answer's time."""
        virtual = self.read_ns if clock in (time.perf_counter_ns, time.time_ns, time.monotonic_ns) else self.read

        def read():
            return virtual() if threading.get_ident() == self.thread else clock()
        return read

    def advance(self, seconds):
        self.now += seconds

    @contextlib.contextmanager
    def active(self, *functions):
        real = {time.perf_counter: self.read, time.time: self.read, time.monotonic: self.read,
                timeit.default_timer: self.read, time.perf_counter_ns: self.read_ns,
                time.time_ns: self.read_ns, time.monotonic_ns: self.read_ns}
        benchmark = sys.modules.get("torch.utils.benchmark")
        names = [name for name in self.names if benchmark or not name.startswith("torch.")]
        timers = [timeit.Timer.__init__]  # their default timer= was bound when they were defined
        if benchmark:
            real[benchmark.timer] = self.read
            timers.append(benchmark.Timer.__init__)
        patches = []
        for name in (*names, *self.ns_names):
            module, attribute = name.rsplit(".", 1)
            patches.append(mock.patch(name, self.standing_in_for(getattr(importlib.import_module(module), attribute))))
        for timer in timers:
            patches.append(mock.patch.object(timer, "__defaults__", tuple(
                real.get(v, v) if callable(v) else v for v in timer.__defaults__)))
        for function in functions:
            names = getattr(function, "__globals__", {})
            for key, value in list(names.items()):
                if callable(value) and not isinstance(value, type) and _hashable(value) and value in real:
                    patches.append(mock.patch.dict(names, {key: real[value]}))
            defaults = getattr(function, "__defaults__", None)
            if defaults and any(callable(v) and _hashable(v) and v in real for v in defaults):
                patches.append(mock.patch.object(function, "__defaults__", tuple(
                    real[v] if callable(v) and _hashable(v) and v in real else v for v in defaults)))
        for patch in patches:
            patch.start()
        try:
            yield self
        finally:
            for patch in reversed(patches):
                patch.stop()


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class AsyncGpu(AsyncDevice):
    """The stand-in CUDA GPU of helpers.async_device (its `device` is torch.device("cuda"), its tensors kept on
    the CPU). real=True: every way of waiting for it also sleeps until the queued work would be done.
    active(*functions) also stands in for the names their globals bound to a synchronizing function."""

    def __init__(self, clock, real=True):
        super().__init__(clock, real_clock=real_clock if real else None)

    @contextlib.contextmanager
    def active(self, *functions):
        self.namespaces = [getattr(function, "__globals__", {}) for function in functions]
        with self:
            yield self


@contextlib.contextmanager
def standing_in(answer, clock, device=None, cost=None):
    """While the calls inside run: `clock` for the clocks `answer` reads, `device` (an AsyncGpu) for a GPU,
    `cost` (a MatmulCost) billing products; afterwards the device's queue is waited for."""
    try:
        with clock.active(answer), device.active(answer) if device is not None else contextlib.nullcontext(), \
                cost if cost is not None else contextlib.nullcontext():
            yield
    finally:
        if device is not None:
            device.synchronize()


# -- models a timing answer trains -------------------------------------------------------------------------

class StepModel(nn.Module):
    """Logits = a float64 bias, whatever the input. Each call spends `launch` seconds of Python (and those in
    `delayed`, 1-based, `delay` more), for real and on `clock`, and queues `queued` seconds of work on
    `device`, an AsyncGpu. Notes each call's input shape, the bias it saw, and when it began and ended."""

    def __init__(self, input_shape, bias, delayed, launch, queued, delay, clock, device):
        super().__init__()
        self.input_shape = tuple(int(v) for v in input_shape)
        self.bias = nn.Parameter(torch.tensor(bias, dtype=torch.float64))
        self.delayed, self.launch, self.queued = {int(k) for k in delayed}, launch, queued
        self.delay, self.clock, self.device = delay, clock, device
        self.shapes, self.biases, self.real = [], [], []

    def forward(self, x):
        self.shapes.append(str(tuple(x.shape)))
        self.biases.append(self.bias.detach().clone())
        seconds = self.launch + (self.delay if len(self.shapes) in self.delayed else 0.0)
        start = real_clock()
        time.sleep(seconds)
        self.clock.advance(seconds)
        self.device.queue(self.queued)
        self.real.append([start, real_clock()])
        return self.bias.expand(x.shape[0], -1) + 0.0 * x.flatten(1).sum(1, keepdim=True)


def tiny_mlp():
    """A small real MLP (32 -> 64 -> 4) with its input_shape, the same weights every time."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    model.input_shape = (32,)
    return model


class GpuBusy(nn.Module):
    """Each forward pass queues 40 large matmuls on its device, then a tiny classifier."""

    def __init__(self):
        super().__init__()
        self.input_shape = (8,)
        self.linear = nn.Linear(8, 3)
        self.register_buffer("big", torch.randn(2048, 2048))

    def forward(self, x):
        for _ in range(40):
            torch.mm(self.big, self.big)
        return self.linear(x)


def gpu_seconds(runs=3):
    """Wall seconds of each of `runs` synchronized forward passes of a GpuBusy on CUDA, after one untimed."""
    model, x = GpuBusy().cuda(), torch.randn(4, 8, device="cuda")
    model(x)
    torch.cuda.synchronize()
    seconds = []
    for _ in range(runs):
        start = real_clock()
        model(x)
        torch.cuda.synchronize()
        seconds.append(real_clock() - start)
    return seconds


class Sweep:
    """make_model() hands out fresh models; time_throughput stands in for the notebook's: it notes each call
    (batch size, warmup, steps, which model: the index of make_model's, -1 for another) and answers
    fixed + per_sample * batch_size seconds."""

    def __init__(self, fixed, per_sample):
        self.fixed, self.per_sample, self.made, self.calls = fixed, per_sample, [], []

    def make_model(self):
        model = nn.Linear(2, 2)
        model.input_shape = (2,)
        self.made.append(model)
        return model

    def time_throughput(self, model, batch_size, device, warmup, steps):
        index = next((i for i, made in enumerate(self.made) if made is model), -1)
        self.calls.append([batch_size, warmup, steps, index])
        return self.fixed + self.per_sample * batch_size


def with_global(function, name, value, *args, **kwargs):
    """function(*args, **kwargs) with the global `name` of its module bound to `value` during the call."""
    names = function.__globals__
    missing = name not in names
    saved = names.get(name)
    names[name] = value
    try:
        return function(*args, **kwargs)
    finally:
        if missing:
            names.pop(name, None)
        else:
            names[name] = saved


# -- memory and mixed precision ----------------------------------------------------------------------------

def layers(codes, widths, double):
    """An nn.Sequential from codes (0 Linear to the next width, 1 ReLU, 2 Tanh), float64 when `double`."""
    made, width = [], int(widths[0])
    for code, out in zip(codes, widths[1:]):
        if int(code) == 0:
            made.append(nn.Linear(width, int(out)))
            width = int(out)
        else:
            made.append(nn.ReLU() if int(code) == 1 else nn.Tanh())
    model = nn.Sequential(*made)
    return model.double() if double else model


def mlp(w1, b1, w2, b2):
    """The float32 MLP Linear, ReLU, Linear with these weights (w: (out, in))."""
    model = nn.Sequential(nn.Linear(w1.shape[1], w1.shape[0]), nn.ReLU(), nn.Linear(w2.shape[1], w2.shape[0]))
    with torch.no_grad():
        for parameter, value in zip(model.parameters(), (w1, b1, w2, b2)):
            parameter.copy_(torch.as_tensor(value))
    return model


def autocast_state(kind):
    """[enabled, dtype] of autocast for device type `kind`, as strings, in the API of any torch from 2.2 on."""
    try:
        return [str(bool(torch.is_autocast_enabled(kind))), str(torch.get_autocast_dtype(kind))]
    except TypeError:  # torch < 2.4: one function per device type
        if kind == "cpu":
            return [str(bool(torch.is_autocast_cpu_enabled())), str(torch.get_autocast_cpu_dtype())]
        return [str(bool(torch.is_autocast_enabled())), str(torch.get_autocast_gpu_dtype())]


class AutocastRecorder(nn.Module):
    """No parameters: its forward pass notes under which autocast it runs, CUDA's and the CPU's."""

    def __init__(self):
        super().__init__()
        self.seen = ["not reached"]

    def forward(self, x):
        self.seen = [*autocast_state("cuda"), autocast_state("cpu")[0]]
        return x * 2.0


@contextlib.contextmanager
def mocked_cuda():
    """CUDA said to be there (with bfloat16) on a machine without it, while the calls inside run."""
    with mock.patch("torch.cuda.is_available", return_value=True), \
            mock.patch("torch.cuda.is_bf16_supported", return_value=True):
        yield


# -- matrix products -----------------------------------------------------------------------------------------

class MatmulCost(TorchFunctionMode):
    """While active, every matrix product costs what `seconds` gives its kind ("float32", "tf32" when float32 may
    use TF32, "bfloat16") for an (n, n) @ (n, n) product, in proportion to its multiply-adds; `products` notes
    each (a kind not in `seconds` costs a second per n**3 multiply-adds). Every fifth product is an outlier,
    four times slower, and drawing random numbers costs SETUP seconds a call. On the CPU (device None) the
    cost advances `clock`; on `device`, an AsyncGpu, each call spends LAUNCH seconds of Python on `clock` and
    queues its cost on the device, which only a synchronizing clock waits for.
    (A function mode: a dispatch mode would import torch._dynamo, seconds on a busy machine.)"""

    products_of = {"matmul": 0, "__matmul__": 0, "mm": 0, "bmm": 0, "addmm": 1, "baddbmm": 1}
    setup_functions = ("randn", "rand", "normal_", "uniform_", "randn_like", "rand_like")
    SETUP = 0.01
    LAUNCH = 1e-4

    def __init__(self, clock, seconds, n, device=None):
        super().__init__()
        self.clock, self.seconds, self.n, self.device, self.products = clock, seconds, n, device, []

    def spend(self, seconds):
        if self.device is None:
            self.clock.advance(seconds)
        else:
            self.clock.advance(self.LAUNCH)
            self.device.queue(seconds)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name in self.setup_functions:
            self.spend(self.SETUP)
        first = self.products_of.get(name)
        if first is not None and len(args) >= first + 2 and isinstance(out, torch.Tensor):
            a, b = args[first], args[first + 1]
            kind = str(a.dtype).replace("torch.", "")
            if a.dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32:  # read by either API
                kind = "tf32"
            self.products.append(f"{tuple(a.shape)} @ {tuple(b.shape)} in {kind}")
            outlier = 4.0 if len(self.products) % 5 == 0 else 1.0
            self.spend(outlier * self.seconds.get(kind, 1.0) * out.numel() * a.shape[-1] / self.n ** 3)
        return out


def matmul_precision():
    """torch.get_float32_matmul_precision(), or what is mixed where the legacy allow_tf32 flag and the
    newer API disagree (torch >= 2.9 then refuses to give one name)."""
    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError:
        return f"a mix (torch.backends.cuda.matmul.allow_tf32 = {torch.backends.cuda.matmul.allow_tf32} and another backend's precision)"


def matmul_events(n, products=10, windows=3):
    """Milliseconds of `products` back-to-back (n, n) @ (n, n) float16 products on CUDA in each of `windows`
    windows timed by CUDA events, after one untimed window."""
    a = torch.randn(n, n, device="cuda", dtype=torch.float16)
    milliseconds = []
    for window in range(windows + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(products):
            a @ a
        end.record()
        end.synchronize()
        if window:
            milliseconds.append(start.elapsed_time(end))
    return milliseconds


# -- profiling ---------------------------------------------------------------------------------------------

def profiled_steps(inner):
    """name -> step: one matrix product of each kind (mm, addmm, bmm, baddbmm) of inner size `inner`, and a
    sort beside a tiny product."""
    a, b = torch.randn(256, inner), torch.randn(inner, 256)
    p, q, c = torch.randn(8, 128, inner), torch.randn(8, inner, 128), torch.randn(8, 128, 128)
    layer = nn.Linear(inner, 64)
    v, small = torch.randn(2 ** 20), torch.randn(8, 8)
    return {"mm": lambda: (a @ b)[0, 0].item(),
            "addmm": lambda: layer(a)[0, 0].item(),
            "bmm": lambda: torch.bmm(p, q)[0, 0, 0].item(),
            "baddbmm": lambda: torch.baddbmm(c, p, q)[0, 0, 0].item(),
            "sort": lambda: torch.sort(v).values[0].item() + (small @ small)[0, 0].item()}


@contextlib.contextmanager
def profiling():
    """One thread (a busy machine's thread pool would bill its waits to small operators), no graph, and the
    profiler's stage logs off stderr."""
    os.environ.setdefault("KINETO_LOG_LEVEL", "6")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            yield
    finally:
        torch.set_num_threads(threads)


# -- activation checkpointing --------------------------------------------------------------------------------

def checkpoint_net(codes, widths, seed):
    """layers(codes, widths) in float32, its weights drawn after torch.manual_seed(seed)."""
    torch.manual_seed(int(seed))
    return layers(codes, widths, False)


def checkpoint_run(forward, model, x, boundaries, grad_out):
    """forward(model, x, boundaries), then backward(grad_out) through its output, watched: [the output, the bytes alive
    after the forward pass (helpers.memory.LiveTensors), each layer's forward calls in the forward pass, each layer's
    forward calls during backward, every parameter's gradient flattened into one vector (NaN where it got none)]."""
    calls = [0] * len(model)
    handles = [layer.register_forward_pre_hook(lambda module, args, i=i: calls.__setitem__(i, calls[i] + 1))
               for i, layer in enumerate(model)]
    try:
        with LiveTensors() as memory:
            out = forward(model, x, [int(b) for b in boundaries])
            kept, in_forward = memory.now, list(calls)
            out.backward(grad_out)
    finally:
        for handle in handles:
            handle.remove()
    grads = torch.cat([(p.grad if p.grad is not None else torch.full_like(p, float("nan"))).detach().reshape(-1)
                       for p in model.parameters()])
    return [out.detach(), kept, in_forward, [after - before for after, before in zip(calls, in_forward)], grads]


# -- data parallelism ------------------------------------------------------------------------------------------

def dp_net(seed, d_in, hidden, classes):
    """Linear, Tanh, Linear, ReLU, Linear: the model every rank starts from, its weights drawn from seed."""
    torch.manual_seed(int(seed))
    return nn.Sequential(nn.Linear(int(d_in), int(hidden)), nn.Tanh(), nn.Linear(int(hidden), int(hidden)), nn.ReLU(),
                         nn.Linear(int(hidden), int(classes)))


def dp_batches(x, y, sizes):
    """Consecutive batches of (x, y), batch k cut into slices of sizes[k][r] samples, rank r's the r-th."""
    x, y = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y, dtype=torch.long)
    batches, start = [], 0
    for row in sizes:
        ranks = []
        for size in row:
            ranks.append((x[start:start + int(size)], y[start:start + int(size)]))
            start += int(size)
        batches.append(ranks)
    return batches


def data_parallel(step, model, x, y, sizes, learning_rate, momentum, timeout_s=30.0):
    """step(model, optimizer, x_r, y_r) on every rank, as threads whose torch.distributed collectives
    helpers.ranks.ThreadGroup plays (a grading kernel has no network for gloo), on each batch in turn:
    [each rank's parameters after the last step, flattened: (world, P); each rank's returned losses, (world, steps);
    the type name of each returned loss]."""
    batches = dp_batches(x, y, sizes)
    results = ThreadGroup(len(batches[0]), timeout_s).run(data_parallel_rank, step, model, batches, float(learning_rate),
                                                           float(momentum))
    weights = torch.stack([torch.cat([v.reshape(-1) for v in r["state_dict"].values()]) for r in results])
    losses = [[_as_float(loss) for loss in r["losses"]] for r in results]
    return [weights, losses, [[type(loss).__name__ for loss in r["losses"]] for r in results]]


def _as_float(value):
    """float(value), or NaN for what is not one number."""
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        return float("nan")

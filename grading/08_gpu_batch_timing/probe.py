"""Probes of 08_gpu_batch_timing: devices, batch moves, timing and sweeps on cases the notebook never used.

Timings are not reproducible, so `time_train_step` runs a probe model whose every forward pass lasts
STEP seconds, and the warm-up and a minority of timed calls DELAY more, both slept for real and
added to a virtual clock (each reading one microsecond later) that stands in for the usual clocks,
including a clock the student's globals bound at import (`from time import perf_counter`). An answer
timed by a clock it cannot stand in for is judged against the real time each step can have taken,
measured in the same run, so a busy machine never costs a correct answer a point. It is judged by properties: how many forward passes, on which shapes, a result near STEP (the median
of the timed steps: not their mean, not per sample, not the warm-up), and weights that move by one
SGD step on a fresh gradient per call. A real run on a tiny MLP must give positive, finite numbers. `batch_size_sweep` times through a stand-in `time_train_step`.
`find_saturation` is a pure function, compared exactly with the reference.

Mixed precision is judged by properties: `autocast_forward`'s output dtype, the model's weights
left float32 and unchanged, autocast off afterwards, and which device's autocast the forward pass ran
under (with CUDA mocked on a CPU machine; on a GPU, the dtype of the output for float16 and bfloat16); `precision_error` against the reference on a model
whose outputs are large (relative, not absolute). `matmul_tflops` runs on a virtual clock that
every matrix product advances by its FLOPs over a rate this probe chose per dtype (TF32 apart),
so machine speed never enters; the float32 matmul precision must be as it was after each call.

`amp_train_step` runs three float16 steps with a real GradScaler and one whose gradients overflow, against the
reference; `profile_step` profiles, on one thread, a step that is one matrix product of each kind (mm, addmm,
bmm, baddbmm, of a secret size) and a step that sorts, judged by the busiest operator and the range of the products' share;
`epoch_seconds` is a pure function, compared with the reference on secret costs.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import sys
import threading
import time
import timeit
from unittest import mock

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from autograder.probes import EXACT, Exercise, Probe, Tolerance, compare_arrays
from helpers.async_device import AsyncDevice

STEP = 0.004  # seconds every step of the probe model lasts, synchronized: the answer a right median gives
LAUNCH = 0.001  # of them, seconds of Python per forward pass; the rest is queued on a stand-in asynchronous device
THROUGHPUT_LAUNCH, THROUGHPUT_QUEUED = 0.001, 0.004  # time_throughput's model: the device is the bottleneck
DELAY = 0.05  # seconds more for a slow call (warm-up, hiccups): a mean of 5 or 7 steps with 2 or 3 of them
# is at least 0.014 s above STEP
SLACK = 0.01  # what a real clock may add to STEP on a busy machine, below that 0.014
# time_train_step's batch sizes: none near STEP / LAUNCH (4), where a reading that did not wait for the device
# (LAUNCH) equals one divided by the batch size (STEP / batch_size), and the judge could not name the mistake.
STEP_BATCH_SIZES = (2, 6, 7, 8, 9)
PROFILE_RUNS = 3  # profile_step runs per step: a right answer must be right in one (a busy machine pauses operators)


def _spec(rng: np.random.Generator, depth: int = 0):
    """A random nested batch description: tensors, numbers, strings, None in lists, tuples and dicts."""
    kinds = ["tensor", "tensor", "int", "float", "str", "none"] + (["list", "tuple", "dict"] * 2 if depth < 3 else [])
    kind = str(rng.choice(kinds))
    if kind == "tensor":
        return ["tensor", [int(v) for v in rng.integers(1, 4, size=int(rng.integers(0, 3)))],
                str(rng.choice(["float32", "float64", "int64", "bool"]))]
    if kind in ("list", "tuple"):
        return [kind, [_spec(rng, depth + 1) for _ in range(int(rng.integers(0, 4)))]]
    if kind == "dict":
        return ["dict", {f"key{i}": _spec(rng, depth + 1) for i in range(int(rng.integers(0, 4)))}]
    return {"int": ["int", int(rng.integers(-9, 99))], "float": ["float", round(float(rng.uniform(-5, 5)), 3)],
            "str": ["str", str(rng.choice(["label", "id", "text"]))], "none": ["none"]}[kind]


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nested batches, GPU figures, slow calls for the timing, batch sizes and throughput curves."""
    warmup, repeats = int(rng.integers(2, 5)), int(rng.choice([5, 7]))
    hiccups = rng.choice(np.arange(warmup + 1, warmup + repeats + 1), size=(repeats - 1) // 2, replace=False)
    skeleton = ["tuple", [["dict", {"x": ["tensor", [2, 3], "float32"],
                                    "pairs": ["list", [["tuple", [["tensor", [4], "int64"], ["none"]]], ["str", "label"]]]}],
                          _spec(rng, 1), _spec(rng, 1)]]
    curves = 6
    sizes = np.stack([np.sort(rng.choice(2 ** np.arange(13), size=9, replace=False)) for _ in range(curves)])
    knees = 2.0 ** rng.integers(0, 9, size=(curves, 1))
    throughput = rng.uniform(1e2, 1e5, size=(curves, 1)) * sizes / (sizes + knees) * rng.uniform(0.93, 1.07, size=sizes.shape)
    throughput[-1] = throughput[-1, 0]  # a flat curve: the smallest batch already saturates
    sweep_sizes = rng.permutation(rng.choice(np.arange(1, 300), size=int(rng.integers(3, 6)), replace=False))
    d_in, hidden, d_out, n = int(rng.integers(5, 13)), int(rng.integers(16, 33)), int(rng.integers(3, 7)), int(rng.integers(4, 10))
    # matmul_tflops: (n, dtype 0 float32 / 1 bfloat16, tf32, precision before: 0 "highest" / 1 "high")
    # small n: real products of 32 and more can take milliseconds on a busy 2-core machine
    cases = np.asarray([[rng.integers(8, 21), 0, 0, 1], [rng.integers(8, 21), 0, 1, 0],
                        [rng.integers(8, 21), 1, rng.integers(0, 2), rng.integers(0, 2)]])
    return {
        "to_device.spec": np.asarray(json.dumps(skeleton)),
        "step.counts": np.asarray([warmup, repeats, int(rng.choice(STEP_BATCH_SIZES))]),  # and the batch size
        "step.shape": rng.integers(1, 5, size=int(rng.integers(1, 3))),
        "step.bias": rng.standard_normal(5) * 2,
        "step.delayed": np.concatenate([np.arange(1, warmup + 1), hiccups]),
        "throughput.counts": np.asarray([int(rng.integers(1, 4)), int(rng.integers(4, 11)), int(rng.integers(2, 10))]),
        "sweep.sizes": sweep_sizes, "sweep.counts": rng.integers(1, 6, size=2),
        "sweep.cost": np.asarray([rng.uniform(1e-4, 1e-2), rng.uniform(1e-6, 1e-4)]),
        "saturation.sizes": sizes, "saturation.throughput": throughput,
        "saturation.tolerance": np.concatenate([[-1.0], rng.uniform(0.01, 0.5, size=curves - 1)]),  # -1: default
        "mixed.x": rng.standard_normal((n, d_in)),
        "mixed.w1": rng.standard_normal((hidden, d_in)) / np.sqrt(d_in), "mixed.b1": rng.standard_normal(hidden) * 0.1,
        "mixed.w2": rng.standard_normal((d_out, hidden)) / np.sqrt(hidden), "mixed.b2": rng.standard_normal(d_out) * 0.1,
        "mixed.scale": np.asarray(10.0 ** rng.uniform(2, 4)),  # precision_error: outputs far from 1
        "tflops.cases": cases,
        **memory_inputs(rng),
        **craft_inputs(rng),
        # virtual seconds of one product by kind (float32, TF32, bfloat16), each kind its own: a timer
        # taking 0.2 s needs a few of them, one per block (at 0.02 s and more, the 1 us a clock reading
        # costs is below blocked_autorange's 1e-4 overhead)
        "tflops.seconds": rng.uniform(2e-2, 4e-2, size=(3, 1)) * np.asarray([2.5, 1.6, 1.0]) * rng.uniform(0.93, 1.07, (3, 3)),
    }


def craft_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A float16 training problem, the products a profiled step runs, DataLoader costs."""
    d_in, hidden, classes, n = (int(rng.integers(6, 13)), int(rng.integers(12, 25)), int(rng.integers(3, 6)),
                                int(rng.integers(20, 51)))
    return {
        "amp.w1": rng.standard_normal((hidden, d_in)) / np.sqrt(d_in), "amp.b1": rng.standard_normal(hidden) * 0.1,
        "amp.w2": rng.standard_normal((classes, hidden)) / np.sqrt(hidden), "amp.b2": rng.standard_normal(classes) * 0.1,
        "amp.x": 3 * rng.standard_normal((n, d_in)), "amp.y": rng.integers(0, classes, size=n),
        # max_norm, learning rate, log2 of the initial scale
        # (a small scale: gradients a step forgot to clear, divided by it, stay visible)
        "amp.settings": np.asarray([rng.uniform(0.02, 0.2), rng.uniform(0.3, 1.0), rng.integers(2, 6)]),
        # profile_step: the inner size of the products
        "profile.inner": np.asarray(int(rng.integers(2, 5)) * 512),
        # epoch_seconds: (num_batches, load, step, workers) per row
        "epoch.cases": np.stack([rng.integers(2, 40, size=8), rng.uniform(0.001, 0.1, size=8),
                                 rng.uniform(0.001, 0.1, size=8), np.concatenate([[0, 0, 1], rng.integers(2, 9, size=5)])], axis=1),
    }


def memory_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nets for activation_bytes: a Linear first, then Linear, ReLU and Tanh in any order (two
    activations or two Linears in a row included), some in float64, each with its batch size."""
    inputs = {"memory.nets": np.asarray(4)}
    for k in range(4):
        depth = int(rng.integers(2, 7))
        codes = np.concatenate([[0], rng.integers(0, 3, size=depth - 1)])
        inputs.update({f"memory.{k}.codes": codes, f"memory.{k}.widths": rng.integers(2, 40, size=depth + 1),
                       f"memory.{k}.double": np.asarray(int(k == 3)), f"memory.{k}.batch": np.asarray(int(rng.integers(1, 300)))})
    inputs["memory.0.codes"] = np.asarray([0, 1, 2, 0, 0, 1])  # ReLU then Tanh, then two Linears in a row
    inputs["memory.0.widths"] = rng.integers(2, 40, size=7)
    return inputs


def probe_build(spec):
    """The batch that a spec from make_inputs describes."""
    kind = spec[0]
    if kind == "tensor":
        return torch.ones(spec[1], dtype=getattr(torch, spec[2]))
    if kind in ("list", "tuple"):
        items = [probe_build(item) for item in spec[1]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {key: probe_build(value) for key, value in spec[1].items()}
    return None if kind == "none" else spec[1]


def probe_describe(batch, path="batch"):
    """One line per node: containers with their type and keys, tensors with device, dtype and shape."""
    if isinstance(batch, torch.Tensor):
        return [f"{path}: tensor on {batch.device.type}, {batch.dtype}, shape {tuple(batch.shape)}"]
    if isinstance(batch, dict):
        lines = [f"{path}: dict with keys {list(batch)}"]
        return lines + [line for key, value in batch.items() for line in probe_describe(value, f"{path}[{key!r}]")]
    if isinstance(batch, (list, tuple)):
        lines = [f"{path}: {type(batch).__name__} of {len(batch)}"]
        return lines + [line for i, item in enumerate(batch) for line in probe_describe(item, f"{path}[{i}]")]
    return [f"{path}: {type(batch).__name__} {batch!r}"]


probe_real_clock = time.perf_counter  # bound before the virtual clock stands in for it


class ProbeClock:
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
        self.thread = threading.get_ident()  # the probe's, which calls the answer

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
                if callable(value) and not isinstance(value, type) and value in real:
                    patches.append(mock.patch.dict(names, {key: real[value]}))
            defaults = getattr(function, "__defaults__", None)
            if defaults and any(callable(v) and v in real for v in defaults):
                patches.append(mock.patch.object(function, "__defaults__", tuple(
                    real[v] if callable(v) and v in real else v for v in defaults)))
        for patch in patches:
            patch.start()
        try:
            yield self
        finally:
            for patch in reversed(patches):
                patch.stop()


class ProbeAsync(AsyncDevice):
    """The stand-in CUDA GPU of helpers.async_device (its `device` is torch.device("cuda"), its tensors kept on
    the CPU), waiting for real too: every way of waiting for a GPU sleeps until the queued work would be done.
    active(*functions) also stands in for the names their globals bound to a synchronizing function."""

    def __init__(self, clock):
        super().__init__(clock, real_clock=probe_real_clock)

    @contextlib.contextmanager
    def active(self, *functions):
        self.namespaces = [getattr(function, "__globals__", {}) for function in functions]
        with self:
            yield self


class ProbeStepModel(nn.Module):
    """Logits = a float64 bias, whatever the input: records each call's input shape and bias; each call
    spends `launch` seconds of Python (and those in `delayed`, 1-based, `delay` more), for real and on
    `clock`, and queues `queued` seconds of work on `device`, a ProbeAsync."""

    def __init__(self, input_shape, bias, delayed, launch, queued, delay, clock, device):
        super().__init__()
        self.input_shape = tuple(int(v) for v in input_shape)
        self.bias = nn.Parameter(torch.tensor(bias, dtype=torch.float64))
        self.delayed, self.launch, self.queued = {int(k) for k in delayed}, launch, queued
        self.delay, self.clock, self.device = delay, clock, device
        self.calls, self.shapes, self.biases, self.real = 0, [], [], []

    def forward(self, x):
        self.calls += 1
        self.shapes.append(str(tuple(x.shape)))
        self.biases.append(self.bias.detach().clone())
        seconds = self.launch + (self.delay if self.calls in self.delayed else 0.0)
        start = probe_real_clock()
        time.sleep(seconds)
        self.clock.advance(seconds)
        self.device.queue(self.queued)
        self.real.append([start, probe_real_clock()])  # when this forward pass began and ended
        return self.bias.expand(x.shape[0], -1) + 0.0 * x.flatten(1).sum(1, keepdim=True)


class ProbeGpuBusy(nn.Module):
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


def probe_gpu_seconds(work, runs=3):
    """The least wall time of `work` over a few synchronized runs, after one untimed: what the GPU itself
    needs for it. Another process sharing the GPU, or clocks still ramping up, only lengthen a run, so the
    least is the fair yardstick for an answer measured at any other moment (before and after it, too)."""
    work()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best


def run_to_device(answers, inputs, record):
    batch = probe_build(json.loads(str(inputs['to_device.spec'])))
    record('moved', probe_describe(answers.to_device(batch, torch.device('meta'))))
    record('tensor', probe_describe(answers.to_device(torch.zeros(2, 1), torch.device('meta'))))


def run_time_train_step(answers, inputs, record):
    warmup, repeats, batch_size = (int(v) for v in inputs['step.counts'])
    clock = ProbeClock()
    device = ProbeAsync(clock)
    model = ProbeStepModel(inputs['step.shape'], inputs['step.bias'], inputs['step.delayed'], LAUNCH, STEP - LAUNCH,
                           DELAY, clock, device)
    called = probe_real_clock()
    with clock.active(answers.time_train_step), device.active(answers.time_train_step):
        seconds = answers.time_train_step(model, batch_size, device.device, warmup, repeats)
    device.synchronize()
    record('real_calls', [called, *(t for forward in model.real for t in forward), probe_real_clock()])
    record('virtual_reads', clock.reads)
    record('seconds', float(seconds))
    record('calls', model.calls)
    record('shapes', model.shapes)
    record('biases', torch.stack(model.biases + [model.bias.detach().clone()]))
    real = []  # a real step on a tiny MLP, by the real clock
    for size in (4, 256):
        torch.manual_seed(0)
        mlp = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
        mlp.input_shape = (32,)
        real.append(float(answers.time_train_step(mlp, size, torch.device('cpu'), 1, 3)))
    record('real_seconds', real)
    if torch.cuda.is_available():  # does the clock wait for queued GPU work?
        busy, x = ProbeGpuBusy().cuda(), torch.randn(4, 8, device='cuda')
        before = probe_gpu_seconds(lambda: busy(x))
        record('gpu_measured', float(answers.time_train_step(ProbeGpuBusy(), 4, torch.device('cuda'), 1, 3)))
        record('gpu_work', min(before, probe_gpu_seconds(lambda: busy(x))))


def run_time_throughput(answers, inputs, record):
    warmup, steps, batch_size = (int(v) for v in inputs['throughput.counts'])
    clock = ProbeClock()
    device = ProbeAsync(clock)
    model = ProbeStepModel(inputs['step.shape'], inputs['step.bias'], [1], THROUGHPUT_LAUNCH, THROUGHPUT_QUEUED,
                           DELAY, clock, device)
    with clock.active(answers.time_throughput), device.active(answers.time_throughput):
        seconds = answers.time_throughput(model, batch_size, device.device, warmup, steps)
    device.synchronize()
    record('virtual_reads', clock.reads)
    record('seconds', float(seconds))
    record('calls', model.calls)
    record('shapes', model.shapes)
    record('biases', torch.stack(model.biases + [model.bias.detach().clone()]))


def run_batch_size_sweep(answers, inputs, record):
    sizes = [int(b) for b in inputs['sweep.sizes']]
    warmup, repeats = (int(v) for v in inputs['sweep.counts'])
    fixed, per_sample = (float(v) for v in inputs['sweep.cost'])
    calls, made = [], []

    def make_model():
        net = nn.Linear(2, 2)
        net.input_shape = (2,)
        made.append(net)
        return net

    def fake_time_throughput(model, batch_size, device, warmup, steps):
        index = next((i for i, net in enumerate(made) if net is model), -1)
        calls.append([int(batch_size), int(warmup), int(steps), index])
        return fixed + per_sample * batch_size

    names = answers.batch_size_sweep.__globals__
    saved = names.get('time_throughput')
    names['time_throughput'] = fake_time_throughput
    try:
        results = answers.batch_size_sweep(make_model, sizes, torch.device('cpu'), warmup=warmup, repeats=repeats)
    finally:
        if saved is None:
            names.pop('time_throughput', None)
        else:
            names['time_throughput'] = saved
    record('calls', calls)
    for key in ('batch_size', 'seconds', 'samples_per_second'):
        record(key, [float(r[key]) for r in results])


def probe_layers(codes, widths):
    """An nn.Sequential from codes (0 Linear to the next width, 1 ReLU, 2 Tanh), float32 or float64."""
    layers, width = [], int(widths[0])
    for code, out in zip(codes, widths[1:]):
        if int(code) == 0:
            layers.append(nn.Linear(width, int(out)))
            width = int(out)
        else:
            layers.append(nn.ReLU() if int(code) == 1 else nn.Tanh())
    return nn.Sequential(*layers)


def run_activation_bytes(answers, inputs, record):
    """activation_bytes on secret nets (a Linear first), batch sizes and dtypes."""
    values = []
    for k in range(int(inputs["memory.nets"])):
        net = probe_layers(inputs[f"memory.{k}.codes"], inputs[f"memory.{k}.widths"])
        if int(inputs[f"memory.{k}.double"]):
            net = net.double()
        values.append(int(answers.activation_bytes(net, int(inputs[f"memory.{k}.batch"]),
                                                   int(inputs[f"memory.{k}.widths"][0]))))
    record("bytes", values)


def run_find_saturation(answers, inputs, record):
    chosen = []
    for sizes, throughput, tolerance in zip(inputs['saturation.sizes'], inputs['saturation.throughput'],
                                            inputs['saturation.tolerance']):
        results = [{'batch_size': int(b), 'seconds': int(b) / float(s), 'samples_per_second': float(s)}
                   for b, s in zip(sizes, throughput)]
        results = results[::2] + results[1::2]  # not sorted by batch size
        if tolerance < 0:  # the default tolerance
            chosen.append(int(answers.find_saturation(results)))
        else:
            chosen.append(int(answers.find_saturation(results, tolerance=float(tolerance))))
    record('batch_sizes', chosen)


def probe_mlp(inputs, scale=1.0):
    """The float32 MLP of the mixed-precision inputs: Linear, ReLU, Linear (the last one times `scale`)."""
    w1, w2 = inputs["mixed.w1"], inputs["mixed.w2"]
    model = nn.Sequential(nn.Linear(w1.shape[1], w1.shape[0]), nn.ReLU(), nn.Linear(w2.shape[1], w2.shape[0]))
    with torch.no_grad():
        for parameter, key, factor in zip(model.parameters(), ("w1", "b1", "w2", "b2"), (1, 1, scale, scale)):
            parameter.copy_(torch.as_tensor(inputs["mixed." + key] * factor))
    return model


def probe_autocast_state(kind):
    """(enabled, dtype) of autocast for device type `kind`, in the API of any torch from 2.2 on."""
    try:
        return bool(torch.is_autocast_enabled(kind)), str(torch.get_autocast_dtype(kind))
    except TypeError:  # torch < 2.4: one function per device type
        if kind == "cpu":
            return bool(torch.is_autocast_cpu_enabled()), str(torch.get_autocast_cpu_dtype())
        return bool(torch.is_autocast_enabled()), str(torch.get_autocast_gpu_dtype())


class ProbeAutocastRecorder(nn.Module):
    """No parameters: its forward pass notes under which autocast it runs, CUDA's and the CPU's."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x):
        cuda, cpu = probe_autocast_state("cuda"), probe_autocast_state("cpu")
        self.seen = [str(cuda[0]), cuda[1], str(cpu[0])]
        return x * 2.0


class ProbeMatmulCost(TorchFunctionMode):
    """While active, every matrix product advances `clock` by its FLOPs over a rate in FLOP/s chosen
    by its kind ("float32", "tf32" when float32 may use TF32, "bfloat16"); `products` notes each.
    Every fifth product is an outlier, four times slower (the median must not move), and drawing random
    numbers costs SETUP seconds a call (a timed statement that makes its matrices is slower).
    (A function mode: a dispatch mode would import torch._dynamo, seconds on a busy machine.)"""

    products_of = {"matmul": 0, "__matmul__": 0, "mm": 0, "bmm": 0, "addmm": 1, "baddbmm": 1}
    setup_functions = ("randn", "rand", "normal_", "uniform_", "randn_like", "rand_like")
    SETUP = 0.01

    def __init__(self, clock, rates):
        super().__init__()
        self.clock, self.rates, self.products = clock, rates, []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name in self.setup_functions:
            self.clock.advance(self.SETUP)
        first = self.products_of.get(name)
        if first is not None and len(args) >= first + 2 and isinstance(out, torch.Tensor):
            a, b = args[first], args[first + 1]
            kind = str(a.dtype).replace("torch.", "")
            if a.dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32:  # read by either API
                kind = "tf32"
            self.products.append(f"{tuple(a.shape)} @ {tuple(b.shape)} in {kind}")
            outlier = 4.0 if len(self.products) % 5 == 0 else 1.0
            self.clock.advance(outlier * 2 * out.numel() * a.shape[-1] / self.rates.get(kind, 1e6))
        return out


def probe_matmul_precision():
    """torch.get_float32_matmul_precision(), or what is mixed where the legacy allow_tf32 flag and the
    newer API disagree (torch >= 2.9 then refuses to give one name)."""
    try:
        return torch.get_float32_matmul_precision()
    except RuntimeError:
        return f"a mix (torch.backends.cuda.matmul.allow_tf32 = {torch.backends.cuda.matmul.allow_tf32} and another backend's precision)"


def run_autocast_forward(answers, inputs, record):
    model, x = probe_mlp(inputs), torch.as_tensor(inputs["mixed.x"], dtype=torch.float32)
    before = [p.detach().clone() for p in model.parameters()]
    out = answers.autocast_forward(model, x, torch.device("cpu"), torch.bfloat16)
    record("dtype", str(out.dtype))
    record("out", out.detach().float())
    record("weights", [str(p.dtype) for p in model.parameters()])
    record("weights_kept", all(p.dtype == q.dtype and torch.equal(p.detach(), q) for p, q in zip(model.parameters(), before)))
    record("autocast_after", probe_autocast_state("cpu")[0])
    if torch.cuda.is_available():  # each dtype asked for, so that autocast's default (float16) cannot pass for both
        dtypes = [torch.float16] + ([torch.bfloat16] if torch.cuda.is_bf16_supported() else [])
        returned = []
        for dtype in dtypes:
            with torch.no_grad():
                out = answers.autocast_forward(probe_mlp(inputs).cuda(), x.cuda(), torch.device("cuda"), dtype)
            returned.append([str(dtype), str(out.dtype)])
        record("cuda_dtypes", returned)
    else:  # CUDA mocked: the forward pass shows which device's autocast it ran under
        for dtype, key in ((torch.float16, "mocked_cuda"), (torch.bfloat16, "mocked_cuda_bfloat16")):
            recorder = ProbeAutocastRecorder()
            with mock.patch("torch.cuda.is_available", return_value=True), \
                    mock.patch("torch.cuda.is_bf16_supported", return_value=True):
                try:
                    answers.autocast_forward(recorder, x, torch.device("cuda"), dtype)
                except Exception:  # a right answer may move x to the device, which needs a real GPU
                    pass
            record(key, recorder.seen or ["not reached"])


def run_precision_error(answers, inputs, record):
    model, x = probe_mlp(inputs, float(inputs["mixed.scale"])), torch.as_tensor(inputs["mixed.x"], dtype=torch.float32)
    with torch.no_grad():
        record("norm_32", float(torch.linalg.vector_norm(model(x))))
    record("error", float(answers.precision_error(model, x, torch.device("cpu"), torch.bfloat16)))
    record("weights", [str(p.dtype) for p in model.parameters()])


def run_matmul_tflops(answers, inputs, record):
    saved, values, after, products = torch.get_float32_matmul_precision(), [], [], []
    for (n, bf16, tf32, high), seconds in zip(inputs["tflops.cases"], inputs["tflops.seconds"]):
        n, dtype = int(n), torch.bfloat16 if bf16 else torch.float32
        rates = {kind: 2 * n ** 3 / float(s) for kind, s in zip(("float32", "tf32", "bfloat16"), seconds)}
        clock = ProbeClock()
        cost = ProbeMatmulCost(clock, rates)
        torch.set_float32_matmul_precision("high" if high else "highest")
        try:
            with clock.active(answers.matmul_tflops), cost:
                values.append(float(answers.matmul_tflops(n, dtype, torch.device("cpu"), tf32=bool(tf32))))
            after.append(probe_matmul_precision())
        finally:
            torch.set_float32_matmul_precision(saved)
        products.append("; ".join(sorted(set(cost.products))) or "no matrix product")
    record("tflops", values)
    record("precision_after", after)
    record("products", products)
    if torch.cuda.is_available():  # does the clock wait for the GPU? the probe's own count by CUDA events
        a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
        before = probe_matmul_events(a)
        record("gpu_measured", float(answers.matmul_tflops(4096, torch.float16, torch.device("cuda"))))
        record("gpu_events", max(before, probe_matmul_events(a)))


def probe_matmul_events(a, products=10, windows=3):
    """The best TFLOP/s of `products` back-to-back a @ a over a few windows timed by CUDA events, after
    one untimed window: the rate the GPU reaches when nothing else slows it (see probe_gpu_seconds)."""
    best, flops = 0.0, 2 * a.shape[0] ** 3 * products
    for window in range(windows + 1):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(products):
            a @ a
        end.record()
        end.synchronize()
        if window:
            best = max(best, flops / (start.elapsed_time(end) / 1e3) / 1e12)
    return best


def run_amp_train_step(answers, inputs, record):
    """Three float16 steps with a GradScaler (growth_interval 2), then one whose gradients overflow (scale 2**100)."""
    max_norm, lr, log_scale = (float(v) for v in inputs["amp.settings"])
    model = nn.Sequential(nn.Linear(*inputs["amp.w1"].shape[::-1]), nn.ReLU(), nn.Linear(*inputs["amp.w2"].shape[::-1]))
    with torch.no_grad():
        for parameter, key in zip(model.parameters(), ("w1", "b1", "w2", "b2")):
            parameter.copy_(torch.as_tensor(inputs["amp." + key]))
    x, y = torch.as_tensor(inputs["amp.x"], dtype=torch.float32), torch.as_tensor(inputs["amp.y"], dtype=torch.long)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** log_scale, growth_interval=2)
    losses = [float(answers.amp_train_step(model, optimizer, scaler, x, y, max_norm)) for _ in range(3)]
    record("losses", losses)
    record("weights", torch.cat([p.detach().flatten() for p in model.parameters()]))
    record("scale", scaler.get_scale())
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 100)
    answers.amp_train_step(model, optimizer, scaler, x, y, max_norm)
    record("overflow_weights", torch.cat([p.detach().flatten() for p in model.parameters()]))  # as they were
    record("overflow_scale", scaler.get_scale())


def probe_profiled_steps(inputs):
    """{name: (step, the busiest operator, whether it is all products)}: one step per product kernel, and a sort."""
    inner = int(inputs["profile.inner"])
    a, b = torch.randn(256, inner), torch.randn(inner, 256)
    p, q, c = torch.randn(8, 128, inner), torch.randn(8, inner, 128), torch.randn(8, 128, 128)
    layer = nn.Linear(inner, 64)
    v, small = torch.randn(2 ** 20), torch.randn(8, 8)
    return {"mm": (lambda: (a @ b)[0, 0].item(), "aten::mm", True),
            "addmm": (lambda: layer(a)[0, 0].item(), "aten::addmm", True),
            "bmm": (lambda: torch.bmm(p, q)[0, 0, 0].item(), "aten::bmm", True),
            "baddbmm": (lambda: torch.baddbmm(c, p, q)[0, 0, 0].item(), "aten::baddbmm", True),
            "sort": (lambda: torch.sort(v).values[0].item() + (small @ small)[0, 0].item(), "aten::sort", False)}


def run_profile_step(answers, inputs, record):
    """profile_step on a step that is one product of the kind drawn, and on a sort: on one thread (a busy machine's
    thread pool would bill its waits to small operators)."""
    import os

    os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # the profiler's stage logs, on stderr
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            for name, (step, _, _) in probe_profiled_steps(inputs).items():
                step()
                runs = [answers.profile_step(step) for _ in range(PROFILE_RUNS)]
                record(f"{name}.busiest", [str(busiest) for busiest, _ in runs])
                record(f"{name}.share", [float(share) for _, share in runs])
    finally:
        torch.set_num_threads(threads)


def expected_profile_step(inputs) -> dict:
    return {f"{name}.{key}": value for name, (_, busiest, products) in probe_profiled_steps(inputs).items()
            for key, value in (("busiest", busiest), ("products", products))}


def _judge_profile_step(got: dict, want: dict) -> str | None:
    for name in ("mm", "addmm", "bmm", "baddbmm", "sort"):
        for key in ("busiest", "share"):
            if f"{name}.{key}" not in got:
                return f"profile_step gave no {key} for the {name} step"
        runs = list(zip(np.asarray(got[f"{name}.busiest"]).ravel(), np.asarray(got[f"{name}.share"], np.float64).ravel()))
        messages = [_judge_profile_run(str(busiest), float(share), want, name) for busiest, share in runs]
        if not runs or all(messages):  # a busy machine can pause any operator: one right run of PROFILE_RUNS is enough
            return messages[-1] if runs else "profile_step gave nothing"
    return None


def _judge_profile_run(busiest: str, share: float, want: dict, name: str) -> str | None:
    wanted = str(want[f"{name}.busiest"])
    if busiest != wanted:
        return (f"profile_step named {busiest} the busiest operator of a step that is almost all {wanted}: rank the "
                "operators by their own (self) CPU time; a total includes the operators called inside")
    if bool(want[f"{name}.products"]) and not 0.7 < share <= 1.0:
        return (f"profile_step gave a matrix-product share of {share:.3g} for a step that is almost all {wanted}: "
                "the self times of aten::mm, aten::addmm, aten::bmm and aten::baddbmm over the sum of every self time")
    if not bool(want[f"{name}.products"]) and not 0.0 <= share < 0.1:
        return f"profile_step gave a matrix-product share of {share:.3g} for a step that is almost all sorting"
    return None


def run_epoch_seconds(answers, inputs, record):
    record("seconds", [float(answers.epoch_seconds(int(n), float(load), float(step), int(workers)))
                       for n, load, step, workers in inputs["epoch.cases"]])


def expected_to_device(inputs) -> dict:
    from helpers.reference import gpu_batch_timing as ref

    meta = torch.device("meta")
    batch = probe_build(json.loads(str(inputs["to_device.spec"])))
    return {"moved": np.asarray(probe_describe(ref.to_device(batch, meta))),
            "tensor": np.asarray(probe_describe(torch.zeros(2, 1, device=meta)))}


def expected_time_train_step(inputs) -> dict:
    """What the properties of the timing are judged against."""
    warmup, repeats, batch_size = (int(v) for v in inputs["step.counts"])
    shape = (batch_size, *(int(v) for v in inputs["step.shape"]))
    return {"calls": warmup + repeats, "warmup": warmup, "shapes": np.asarray([str(shape)] * (warmup + repeats)),
            "gpu": torch.cuda.is_available(), "batch_size": batch_size}


def expected_batch_size_sweep(inputs) -> dict:
    sizes = [int(b) for b in inputs["sweep.sizes"]]
    fixed, per_sample = (float(v) for v in inputs["sweep.cost"])
    seconds = [fixed + per_sample * b for b in sizes]
    return {"calls": np.asarray([[b, *(int(v) for v in inputs["sweep.counts"]), i] for i, b in enumerate(sizes)]),
            "batch_size": np.asarray(sizes, dtype=float), "seconds": np.asarray(seconds),
            "samples_per_second": np.asarray(sizes) / np.asarray(seconds)}


def expected_find_saturation(inputs) -> dict:
    from helpers.reference import gpu_batch_timing as ref

    answers = []
    for sizes_row, throughput, tolerance in zip(inputs["saturation.sizes"], inputs["saturation.throughput"],
                                                inputs["saturation.tolerance"]):
        results = [{"batch_size": int(b), "samples_per_second": float(s)} for b, s in zip(sizes_row, throughput)]
        answers.append(ref.find_saturation(results) if tolerance < 0 else ref.find_saturation(results, float(tolerance)))
    return {"batch_sizes": np.asarray(answers)}


def _judge_to_device(got: dict, want: dict) -> str | None:
    """The first node that differs, named by its path in the batch."""
    for key in ("tensor", "moved"):
        if key not in got:
            return f"to_device gave no {key}"
        lines, wanted = [str(v) for v in np.asarray(got[key]).ravel()], [str(v) for v in want[key]]
        for line, expected_line in zip(lines + [""] * len(wanted), wanted):
            if line != expected_line:
                return (f"to_device(batch, meta) on a nested batch your notebook never saw: "
                        f"{line or 'nothing'}; expected {expected_line}")
        if len(lines) != len(wanted):
            return f"to_device(batch, meta): {len(lines)} nodes in the result; expected {len(wanted)}"
    return None


def _sgd_steps(biases: np.ndarray) -> str | None:
    """None when each update is -lr x the fresh gradient of the cross-entropy with labels 0, one lr for all."""
    logits = biases[:-1]  # (calls, C): the bias each forward pass saw; the last row is after the last step
    softmax = np.exp(logits - logits.max(axis=1, keepdims=True))
    gradients = softmax / softmax.sum(axis=1, keepdims=True) - np.eye(biases.shape[1])[0]  # (calls, C)
    updates = np.diff(biases, axis=0)
    if not np.any(updates):
        return ("the model's weights never changed: the timed step must be a whole training step "
                "(zero_grad, forward, F.cross_entropy, backward, optimizer.step())")
    rates = -np.sum(updates * gradients, axis=1) / np.sum(gradients * gradients, axis=1)
    residual = np.abs(updates + rates[:, None] * gradients).max(axis=1)
    if (np.all(rates > 0) and np.ptp(rates) <= 1e-3 * rates.max()
            and np.all(residual <= 1e-3 * np.abs(updates).max(axis=1))):
        return None
    if np.all(rates > 0) and rates[-1] > 1.5 * rates[0]:
        return ("each step moved the weights further than the one before, as when gradients pile up: "
                "call optimizer.zero_grad() in every step, and use torch.optim.SGD without momentum")
    return ("the weights did not move by one SGD step on a fresh gradient per step "
            "(torch.optim.SGD, labels torch.zeros(batch_size, dtype=torch.long), zero_grad every step)")


def _real_step_bound(stamps: np.ndarray, calls: int, warmup: int) -> float:
    """The median, over the timed steps, of the real time from the end of the forward pass before
    a step to the start of the forward pass after it: no timed step can have lasted longer, however
    busy the machine. stamps: [call start, (forward start, forward end) per call, call end]."""
    if stamps.shape != (2 * calls + 2,):
        return 0.0
    ends = np.concatenate([stamps[:1], stamps[2:-2:2]])  # ends[i]: end of forward i-1 (the call's start for i=0)
    starts = np.concatenate([stamps[3:-1:2], stamps[-1:]])  # starts[i]: start of forward i+1 (the call's end)
    return float(np.median((starts - ends)[warmup:]))


def _judge_time_train_step(got: dict, want: dict) -> str | None:
    for key in ("seconds", "calls", "shapes", "biases", "real_seconds"):
        if key not in got:
            return f"time_train_step gave no {key}"
    calls, expected_calls = int(got["calls"]), int(want["calls"])
    if calls != expected_calls:
        return (f"time_train_step ran {calls} forward passes; expected warmup + repeats = {expected_calls} "
                "(warm-up steps untimed, then one timed step per repeat)")
    shapes = [str(v) for v in np.asarray(got["shapes"]).ravel()]
    if shapes != [str(v) for v in want["shapes"]]:
        return f"time_train_step fed inputs of shapes {sorted(set(shapes))}; expected {want['shapes'][0]} = (batch_size, *model.input_shape)"
    seconds = float(got["seconds"])
    limit = STEP + SLACK
    if int(got.get("virtual_reads", 0)) < 2:  # timed by a clock the grader could not stand in for
        stamps = np.asarray(got.get("real_calls", []), np.float64).ravel()
        limit = max(limit, _real_step_bound(stamps, expected_calls, int(want["warmup"])))
    per_sample = abs(seconds * int(want["batch_size"]) / STEP - 1) < 0.25 if np.isfinite(seconds) else False
    if np.isfinite(seconds) and seconds < 0.75 * STEP and seconds < 2 * LAUNCH and not per_sample:
        return (f"time_train_step returned {seconds:.4g} s for steps that queue {STEP - LAUNCH:g} s of work on an "
                f"asynchronous device after {LAUNCH:g} s of Python: the clock was read before the device had finished. "
                "synchronize before each reading (synchronized_timer(device)), on every device")
    if not np.isfinite(seconds) or not 0.75 * STEP <= seconds <= limit:
        return (f"time_train_step returned {seconds:.4g} s for a model whose steps take {STEP} s, the warm-up and "
                f"a few hiccups {STEP + DELAY:g} s: return the median seconds of one timed step (not their mean, "
                "not per sample), and do not time the warm-up")
    problem = _sgd_steps(np.asarray(got["biases"], dtype=np.float64))
    if problem:
        return f"time_train_step: {problem}"
    real = np.asarray(got["real_seconds"], dtype=np.float64).ravel()
    if real.shape != (2,) or not np.all(np.isfinite(real)) or not np.all((real > 0) & (real < 5)):
        return f"time_train_step on a tiny MLP returned {real.tolist()} seconds: expected positive, finite, well under 5 s"
    if bool(want["gpu"]):
        if "gpu_measured" not in got or "gpu_work" not in got:
            return "time_train_step was not measured on the GPU"
        if not float(got["gpu_measured"]) > 0.5 * float(got["gpu_work"]):
            return ("on the GPU time_train_step returned less than the queued GPU work: synchronize before "
                    "reading the clock (benchmark.timer(), torch.cuda.synchronize() or CUDA events)")
    return None


def expected_time_throughput(inputs) -> dict:
    warmup, steps, batch_size = (int(v) for v in inputs["throughput.counts"])
    shape = (batch_size, *(int(v) for v in inputs["step.shape"]))
    # the last step's Python, then the device's queue of `steps` steps
    seconds = (THROUGHPUT_LAUNCH + steps * THROUGHPUT_QUEUED) / steps
    return {"calls": warmup + steps, "shapes": np.asarray([str(shape)] * (warmup + steps)), "seconds": seconds,
            "latency": THROUGHPUT_LAUNCH + THROUGHPUT_QUEUED}


def _judge_time_throughput(got: dict, want: dict) -> str | None:
    for key in ("seconds", "calls", "shapes", "biases"):
        if key not in got:
            return f"time_throughput gave no {key}"
    calls = int(got["calls"])
    if calls != int(want["calls"]):
        return (f"time_throughput ran {calls} forward passes; expected warmup + steps = {int(want['calls'])} "
                "(the warm-up untimed, then the timed steps back to back)")
    shapes = [str(v) for v in np.asarray(got["shapes"]).ravel()]
    if shapes != [str(v) for v in want["shapes"]]:
        return f"time_throughput fed inputs of shapes {sorted(set(shapes))}; expected {want['shapes'][0]}"
    seconds, expected = float(got["seconds"]), float(want["seconds"])
    upper = expected * 1.1 if int(got.get("virtual_reads", 0)) >= 2 else expected + SLACK  # a real clock: a busy machine
    if not np.isfinite(seconds) or not 0.9 * expected <= seconds <= upper:
        if np.isfinite(seconds) and abs(seconds - float(want["latency"])) <= 0.1 * float(want["latency"]):
            return ("time_throughput measured the latency of synchronized steps: something waits for the device in "
                    "every step (a synchronizing clock, loss.item()...). Run the timed steps back to back, between "
                    "two readings of a synchronizing clock")
        return (f"time_throughput returned {seconds:.4g} s per step where steps run back to back take {expected:.4g} s "
                "on a stand-in asynchronous device: synchronize before the first timed step and after the last, "
                "divide by the number of steps, and do not time the warm-up")
    problem = _sgd_steps(np.asarray(got["biases"], dtype=np.float64))
    return f"time_throughput: {problem}" if problem else None


def _judge_sweep(got: dict, want: dict) -> str | None:
    for key in ("calls", "batch_size", "seconds", "samples_per_second"):
        if key not in got:
            return f"batch_size_sweep gave no {key}"
    calls, wanted = np.asarray(got["calls"]), np.asarray(want["calls"])
    if calls.shape != wanted.shape or not np.array_equal(calls[:, :3], wanted[:, :3]):
        return (f"batch_size_sweep called time_throughput with (batch_size, warmup, steps) = "
                f"{calls[:, :3].tolist() if calls.ndim == 2 else calls.tolist()}; expected {wanted[:, :3].tolist()}: "
                "once per batch size, in the order given, warmup and repeats passed on")
    if not np.array_equal(calls[:, 3], wanted[:, 3]):
        return "batch_size_sweep timed the same model more than once: give every batch size a fresh make_model()"
    for key, rtol in (("batch_size", 0.0), ("seconds", 1e-12), ("samples_per_second", 1e-9)):
        message = compare_arrays(got[key], want[key], rtol=rtol, atol=0.0)
        if message:
            hint = " (batch_size / seconds)" if key == "samples_per_second" else ""
            return f"batch_size_sweep: the results' {key} {message}{hint}"
    return None


def expected_autocast_forward(inputs) -> dict:
    from helpers.reference import gpu_batch_timing as ref

    model, x = probe_mlp(inputs), torch.as_tensor(inputs["mixed.x"], dtype=torch.float32)
    with torch.no_grad():
        out = ref.autocast_forward(model, x, torch.device("cpu"), torch.bfloat16)
    return {"dtype": str(out.dtype), "out": out.float(), "gpu": torch.cuda.is_available()}


def _judge_autocast_forward(got: dict, want: dict) -> str | None:
    for key in ("dtype", "out", "weights", "weights_kept", "autocast_after"):
        if key not in got:
            return f"autocast_forward gave no {key}"
    weights = sorted({str(v) for v in np.asarray(got["weights"]).ravel()})
    if weights != ["torch.float32"] or not bool(got["weights_kept"]):
        return (f"autocast_forward changed the model: its weights are {', '.join(weights)} afterwards. Leave the model "
                "in float32 (no model.half() or model.to(dtype)): torch.autocast casts inside the forward pass")
    if str(got["dtype"]) != str(want["dtype"]):
        return (f"autocast_forward(model, x, cpu, torch.bfloat16) returned {got['dtype']}; expected {want['dtype']}: "
                "run model(x) inside `with torch.autocast(device.type, dtype=dtype):`, on the device's type")
    if bool(got["autocast_after"]):
        return "autocast was still on after autocast_forward returned: use it as a `with` block"
    message = compare_arrays(got["out"], want["out"], rtol=2.0 ** -7, atol=1e-3)
    if message:
        return f"autocast_forward: the output {message} (on inputs your notebook never saw)"
    if bool(want["gpu"]):
        returned = np.asarray(got.get("cuda_dtypes", [["torch.float16", "nothing"]])).reshape(-1, 2)
        for asked, dtype in returned:
            if str(dtype) != str(asked):
                return (f"autocast_forward on CUDA with {asked} returned {dtype}; expected {asked}: give torch.autocast "
                        "the device's type (device.type) and the dtype asked for (without dtype= it uses its default)")
    else:
        for key, dtype in (("mocked_cuda", "torch.float16"), ("mocked_cuda_bfloat16", "torch.bfloat16")):
            seen = [str(v) for v in np.asarray(got.get(key, ["not reached"])).ravel()]
            if seen != ["not reached"] and seen != ["True", dtype, "False"]:
                return (f"for device cuda and {dtype} the forward pass ran with CUDA's autocast "
                        f"{'on' if seen[0] == 'True' else 'off'} ({seen[1]}) and the CPU's "
                        f"{'on' if seen[2] == 'True' else 'off'}: give torch.autocast the device's type (device.type) and the dtype "
                        "asked for (without dtype= it uses its default)")
    return None


def _judge_precision_error(got: dict, want: dict) -> str | None:
    if "error" not in got:
        return "precision_error gave no error"
    if sorted({str(v) for v in np.asarray(got.get("weights", [])).ravel()}) != ["torch.float32"]:
        return "precision_error changed the model's dtype: compute the float32 output with the model as it was given"
    error, expected = float(got["error"]), float(want["error"])
    if np.isfinite(error) and abs(error - expected) <= 1e-3 * expected:
        return None
    unit_roundoff = 2.0 ** -8  # bfloat16: 8 significant bits
    if error == 0:
        return ("precision_error returned 0: the bfloat16 output was compared with itself. Compare with model(x) "
                "computed outside autocast, in float32")
    if abs(error - expected * float(want["norm_32"])) <= 1e-2 * error:
        return ("precision_error returned the absolute error ||y_low - y_32||; expected the relative one, divided "
                "by ||y_32||")
    return (f"precision_error returned {error:.4g}; expected {expected:.4g}, of the order of bfloat16's unit "
            f"roundoff {unit_roundoff:g}: ||y_low - y_32|| / ||y_32|| over all elements, y_32 in float32 without autocast")


def expected_matmul_tflops(inputs) -> dict:
    """The rate that the virtual clock gives each case; the precision as it was; one kind of product."""
    values, after, products = [], [], []
    for (n, bf16, tf32, high), seconds in zip(inputs["tflops.cases"], inputs["tflops.seconds"]):
        kind = 2 if bf16 else 1 if tf32 else 0
        values.append(2 * int(n) ** 3 / float(seconds[kind]) / 1e12)
        after.append("high" if high else "highest")
        products.append(f"({n}, {n}) @ ({n}, {n}) in {('float32', 'tf32', 'bfloat16')[kind]}")
    return {"tflops": np.asarray(values), "precision_after": np.asarray(after), "products": np.asarray(products),
            "cases": inputs["tflops.cases"], "gpu": torch.cuda.is_available()}


def _judge_matmul_tflops(got: dict, want: dict) -> str | None:
    for key in ("tflops", "precision_after", "products"):
        if key not in got:
            return f"matmul_tflops gave no {key}"
    values = np.asarray(got["tflops"], dtype=np.float64).ravel()
    for i, (n, bf16, tf32, _) in enumerate(np.asarray(want["cases"])):
        call = f"matmul_tflops({n}, torch.{'bfloat16' if bf16 else 'float32'}, cpu, tf32={bool(tf32)})"
        product, wanted = str(np.asarray(got["products"]).ravel()[i]), str(want["products"][i])
        if product != wanted:
            return (f"{call} multiplied {product}; expected {wanted}: (n, n) matrices of the dtype asked for, "
                    "with TF32 allowed for float32 exactly when tf32=True (torch.set_float32_matmul_precision)")
        after, before = str(np.asarray(got["precision_after"]).ravel()[i]), str(want["precision_after"][i])
        if after != before:
            return (f"{call} left the float32 matmul precision at {after!r}; it was {before!r} before the call: "
                    "save torch.get_float32_matmul_precision() first and restore it afterwards (in a finally)")
        ratio = values[i] / float(want["tflops"][i]) if i < len(values) else np.nan
        if not np.isfinite(ratio) or abs(ratio - 1) > 0.02:
            hint = (" An (n, n) @ (n, n) product is 2 n**3 FLOPs, not n**3." if abs(ratio - 0.5) < 0.02 else
                    " TFLOP/s is 1e12 FLOP/s." if np.isfinite(ratio) and ratio > 100 else "")
            return (f"{call} returned {values[i] if i < len(values) else None} TFLOP/s on a clock where each product "
                    f"takes {2 * int(n) ** 3 / float(want['tflops'][i]) / 1e12:.3g} s; expected {float(want['tflops'][i]):.4g}: "
                    f"2 n**3 FLOPs over the median seconds of one product, in TFLOP/s.{hint}")
    if bool(want["gpu"]):
        if "gpu_measured" not in got or "gpu_events" not in got:
            return "matmul_tflops was not measured on the GPU"
        if not float(got["gpu_measured"]) <= 2.0 * float(got["gpu_events"]):
            return (f"on the GPU matmul_tflops gave {float(got['gpu_measured']):.4g} TFLOP/s where CUDA events measure "
                    f"{float(got['gpu_events']):.4g}: the clock stopped before the products ran. Synchronize before "
                    "reading it (benchmark.Timer with synchronized_timer, or torch.cuda.synchronize())")
    return None


PROBE = Probe(
    assignment="08_gpu_batch_timing",
    reference="helpers.reference.gpu_batch_timing",
    make_inputs=make_inputs,
    exercises={
        "to_device": Exercise(run_to_device, expected=expected_to_device, judge=_judge_to_device),
        "time_train_step": Exercise(run_time_train_step, expected=expected_time_train_step,
                                    judge=_judge_time_train_step),
        "time_throughput": Exercise(run_time_throughput, expected=expected_time_throughput,
                                    judge=_judge_time_throughput),
        "batch_size_sweep": Exercise(run_batch_size_sweep, expected=expected_batch_size_sweep, judge=_judge_sweep),
        "activation_bytes": Exercise(run_activation_bytes, tolerance=EXACT),
        "find_saturation": Exercise(run_find_saturation, expected=expected_find_saturation, tolerance=EXACT),
        "autocast_forward": Exercise(run_autocast_forward, expected=expected_autocast_forward,
                                     judge=_judge_autocast_forward),
        "precision_error": Exercise(run_precision_error, judge=_judge_precision_error),
        "matmul_tflops": Exercise(run_matmul_tflops, expected=expected_matmul_tflops, judge=_judge_matmul_tflops),
        "amp_train_step": Exercise(run_amp_train_step, tolerance=Tolerance(1e-4, 1e-6)),
        "profile_step": Exercise(run_profile_step, expected=expected_profile_step, judge=_judge_profile_step),
        "epoch_seconds": Exercise(run_epoch_seconds, tolerance=Tolerance(1e-9, 1e-12)),
    },
)

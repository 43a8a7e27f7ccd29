"""Probes of 08_gpu_batch_timing: devices, batch moves, timing and sweeps on cases the notebook never used.

Every call is made from the grading process (autograder/probes/__init__.py); what the answers are handed in
the kernel, stand-in clocks, devices and models, is grading/08_gpu_batch_timing/given.py. Everything is
judged here from raw values: what the student's functions returned, and what the stand-ins saw.

Timings are not reproducible, so `time_train_step` runs a stand-in model whose every forward pass lasts
STEP seconds, and the warm-up and a minority of timed calls DELAY more, both slept for real and added to a
virtual clock (each reading one microsecond later) that stands in for the usual clocks, including a clock
the student's globals bound at import (`from time import perf_counter`). Of each step, LAUNCH seconds are
Python and the rest is queued on a stand-in asynchronous GPU (helpers.async_device), which only a
synchronizing clock waits for. An answer timed by a clock the stand-in cannot replace is judged against
the real time each step can have taken, measured in the same run, so a busy machine never costs a correct
answer a point. It is judged by properties: how many forward passes, on which shapes, a result near STEP
(the median of the timed steps: not their mean, not per sample, not the warm-up), and weights that move by
one SGD step on a fresh gradient per call. A real run on a tiny MLP must give positive, finite numbers.
`time_throughput` likewise, its steps run back to back; `batch_size_sweep` times through a stand-in
`time_throughput`. `matmul_tflops` runs on a virtual clock that every matrix product advances by the
seconds this probe chose for one product of its dtype (TF32 apart), once on the CPU and twice on the stand-in
asynchronous GPU (where a clock that never synchronizes measures the launches: issue 38); the float32
matmul precision must be as it was after each call.

Mixed precision: `autocast_forward`'s output dtype (bfloat16 and float16 asked for on the CPU), the model's
weights left float32 and unchanged, autocast off afterwards, and which device's autocast the forward pass
ran under (CUDA mocked on a CPU machine; on a GPU, the dtype of the output for float16 and bfloat16);
`precision_error` against the reference on a model whose outputs are large (relative, not absolute).
`amp_train_step` runs three float16 steps with a real GradScaler and one whose gradients overflow, against
the reference; `profile_step` profiles, on one thread, a step that is one matrix product of each kind (mm,
addmm, bmm, baddbmm, of a secret size) and a step that sorts, judged by the busiest operator and the range
of the products' share. `to_device`, `activation_bytes`, `find_saturation` and `epoch_seconds` are
compared with the reference on secret inputs (epoch_seconds on costs where loading is the bottleneck too,
which tell the workers' batches arriving w at a time from a steady rate).

`checkpointed_forward` runs on secret nets and boundaries inside given.checkpoint_run: its output and gradients (raw,
against the reference's run here on the same weights), each layer's forward calls in the forward pass and during
backward (forward pre-hooks), and the bytes alive after the forward pass (helpers.memory.LiveTensors, counted by
storage in the kernel; the reference's count here is the same number for a right answer, bytes not being time).
`data_parallel_step` runs on 2 and then 3 ranks, as threads of the kernel whose torch.distributed collectives
helpers.ranks.ThreadGroup plays (a grading kernel has no network for gloo); each rank's weights after the steps and
its returned losses are read back and judged against one process taking the same steps on whole batches, computed
here (and against two mistakes' weights, to name them).

The kernel's word (what only the kernel can see, fetched raw from the stand-ins and judged here): the
stand-in clock's readings and the answer's returned seconds on it, the stand-in model's calls, input
shapes, biases seen and real timestamps (time_train_step 4 points, time_throughput 3), the products a
matrix cost saw and the matmul precision after the call (matmul_tflops 2), which model each stand-in
time_throughput call timed (batch_size_sweep 2: the "fresh make_model()" rule only; the results are raw
returns), autocast's state after the call and the state a recorder saw under mocked CUDA (autocast_forward
2), the bytes alive after a checkpointed forward pass and the layers' forward calls (checkpointed_forward 3: its
output and gradients are raw returns), and on a GPU the yardsticks of the GPU's own speed. Nothing in the kernel says what the judges accept:
no expected value, tolerance or judge is there, so a generic forger gains nothing. One that knows this
probe could read the stand-ins' costs (the model's launch and queued seconds, a product's seconds),
as an answer that reads them could, and forge those records: at most those 16 of 41 points.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import torch

from autograder.probes import EXACT, Exercise, Probe, Tolerance, compare_arrays, given_name
from autograder.probes.caller import load_given
from autograder.probes.session import Opaque, Raised

ASSIGNMENT = "08_gpu_batch_timing"
STEP = 0.004  # seconds every step of the stand-in model lasts, synchronized: the answer a right median gives
LAUNCH = 0.001  # of them, seconds of Python per forward pass; the rest is queued on a stand-in asynchronous device
THROUGHPUT_LAUNCH, THROUGHPUT_QUEUED = 0.001, 0.004  # time_throughput's model: the device is the bottleneck
DELAY = 0.05  # seconds more for a slow call (warm-up, hiccups): a mean of 5 or 7 steps with 2 or 3 of them
# is at least 0.014 s above STEP
SLACK = 0.01  # what a real clock may add to STEP on a busy machine, below that 0.014
# time_train_step's batch sizes: none near STEP / LAUNCH (4), where a reading that did not wait for the device
# (LAUNCH) equals one divided by the batch size (STEP / batch_size), and the judge could not name the mistake.
STEP_BATCH_SIZES = (2, 6, 7, 8, 9)
PROFILE_RUNS = 8  # profile_step runs per step at most, until one is right (a busy machine pauses operators)
PROFILED = ("mm", "addmm", "bmm", "baddbmm", "sort")
TFLOPS_KINDS = ("float32", "tf32", "bfloat16")
GPU_MATMUL = (4096, 10)  # on a real GPU: matmul_tflops(4096, float16), against 10 products a window by CUDA events


@functools.cache
def stand_ins():
    """given.py as a module of this process: the expected values built from its models."""
    return load_given(Path(__file__).with_name("given.py").read_text(encoding="utf-8"), given_name(ASSIGNMENT))


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
    # matmul_tflops: (n, dtype 0 float32 / 1 bfloat16, tf32, precision before: 0 "highest" / 1 "high",
    # device 0 the CPU / 1 the stand-in asynchronous GPU)
    # small n: real products of 32 and more can take milliseconds on a busy 2-core machine
    cases = np.asarray([[rng.integers(8, 21), 0, 0, 1, 0], [rng.integers(8, 21), 0, 1, 0, 1],
                        [rng.integers(8, 21), 1, rng.integers(0, 2), rng.integers(0, 2), 1]])
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
        # drawn last, so that the draws above stay what they were before these exercises came
        **checkpoint_inputs(rng),
        **parallel_inputs(rng),
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
        "epoch.cases": np.concatenate([np.stack([
            rng.integers(2, 40, size=8), rng.uniform(0.001, 0.1, size=8), rng.uniform(0.001, 0.1, size=8),
            np.concatenate([[0, 0, 1], rng.integers(2, 9, size=5)])], axis=1), loading_bound(rng)]),
    }


def loading_bound(rng: np.random.Generator, cases: int = 3) -> np.ndarray:
    """epoch_seconds cases where the workers are the bottleneck (step < load / workers), whole rounds of 2-4
    workers: the batches arrive w at a time, one round every load seconds, and the epoch ends (w - 1) x
    (load / w - step) later than at a steady rate of one batch every load / w (issue 38: 4, 0.03, 0.01, 2
    takes 0.080 s, not 0.085)."""
    workers = rng.integers(2, 5, size=cases)
    load = rng.uniform(0.01, 0.1, size=cases)
    return np.stack([workers * rng.integers(2, 6, size=cases), load,
                     load / workers * rng.uniform(0.1, 0.5, size=cases), workers], axis=1)


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


CHECKPOINT_CASES = 3
PARALLEL_CASES = 2


def checkpoint_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nets for checkpointed_forward (a Linear first, then Linear, ReLU and Tanh in any order), their boundaries
    (the last case cut in two), inputs and the gradient backward starts from."""
    inputs = {}
    for i in range(CHECKPOINT_CASES):
        depth = int(rng.integers(5, 11))
        codes = np.concatenate([[0], rng.integers(0, 3, size=depth - 1)])
        widths = rng.integers(3, 20, size=depth + 1)
        cuts = 1 if i == CHECKPOINT_CASES - 1 else int(rng.integers(2, 4))
        boundaries = np.sort(np.concatenate([[0], rng.choice(np.arange(1, depth), size=cuts, replace=False)]))
        out = int(widths[0])
        for code, width in zip(codes, widths[1:]):
            out = int(width) if code == 0 else out
        batch = int(rng.integers(2, 12))
        inputs.update({f"ckpt.{i}.codes": codes, f"ckpt.{i}.widths": widths, f"ckpt.{i}.boundaries": boundaries,
                       f"ckpt.{i}.seed": np.asarray(int(rng.integers(2**31))),
                       f"ckpt.{i}.x": rng.standard_normal((batch, int(widths[0]))).astype(np.float32),
                       f"ckpt.{i}.grad": rng.standard_normal((batch, out)).astype(np.float32)})
    return inputs


def parallel_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Two runs of data_parallel_step: 2 ranks then 3, two or three steps, slices of 1 to 6 samples that differ
    between the ranks in the first step; a model's sizes and seed, data, a learning rate and a momentum."""
    inputs = {}
    for case, world in enumerate((2, 3)):
        steps = int(rng.integers(2, 4))
        sizes = rng.integers(1, 7, size=(steps, world))
        while len(set(sizes[0].tolist())) == 1:  # unequal slices: a mean of the ranks' means is then wrong
            sizes[0] = rng.integers(1, 7, size=world)
        d_in, hidden, classes = int(rng.integers(3, 8)), int(rng.integers(6, 14)), int(rng.integers(2, 6))
        total = int(sizes.sum())
        inputs.update({f"dp.{case}.sizes": sizes, f"dp.{case}.net": np.asarray([d_in, hidden, classes]),
                       f"dp.{case}.seed": np.asarray(int(rng.integers(2**31))),
                       f"dp.{case}.x": rng.standard_normal((total, d_in)).astype(np.float32),
                       f"dp.{case}.y": rng.integers(0, classes, size=total),
                       f"dp.{case}.settings": np.asarray([rng.uniform(0.05, 0.5), rng.choice([0.0, 0.9])])})
    return inputs


# -- reading what came back ----------------------------------------------------------------------------------

def _number(value) -> float | None:
    """A fetched value as a float when it is one number (a Python number, a 0-d or one-element array)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        return float(value.ravel()[0])
    return None


def _shown(value) -> str:
    """A fetched value in a few words, for a message."""
    text = str(value) if isinstance(value, Opaque) else repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def _strings(record) -> list[str]:
    return [str(v) for v in np.asarray(record).ravel()]


def _missing(name: str, got: dict, keys) -> str | None:
    return next((f"{name} gave no {key}" for key in keys if key not in got), None)


def _describe(k, ref) -> list[str]:
    """One line per node of the value `ref` holds: containers with their type and keys, tensors with device,
    dtype and shape, anything else with its type and value. Read raw: the structure as fetched, then each
    tensor's type, device type, dtype and shape."""
    lines, tensors = [], []

    def walk(value, node, path):
        if isinstance(value, dict):
            lines.append(f"{path}: dict with keys {list(value)}")
            for key, item in value.items():
                walk(item, node[key], f"{path}[{key!r}]")
        elif isinstance(value, (list, tuple)):
            lines.append(f"{path}: {type(value).__name__} of {len(value)}")
            for i, item in enumerate(value):
                walk(item, node[i], f"{path}[{i}]")
        elif isinstance(value, np.ndarray) or isinstance(value, Opaque) and value.type_name.startswith("Tensor"):
            parts: dict = {}
            for part, of in (("type", k.type_name(node)), ("device", node.device.type), ("dtype", node.dtype),
                             ("shape", node.shape)):
                k.later(of, functools.partial(parts.__setitem__, part))
            tensors.append((len(lines), path, parts))
            lines.append("")
        elif isinstance(value, Opaque):
            lines.append(f"{path}: {value.type_name}")
        else:
            lines.append(f"{path}: {type(value).__name__} {value!r}")

    walk(k.fetch(ref), ref, "batch")
    k.flush()
    for index, path, parts in tensors:
        kind = parts.get("type")
        if kind in ("Tensor", "Parameter") and not any(isinstance(v, Raised) for v in parts.values()):
            lines[index] = (f"{path}: tensor on {parts['device']}, {parts['dtype']}, "
                            f"shape {tuple(int(v) for v in parts['shape'])}")
        else:
            lines[index] = f"{path}: {kind if isinstance(kind, str) else 'an object'}"
    return lines


# -- to_device -------------------------------------------------------------------------------------------------

def run_to_device(k, inputs, record):
    torch_k = k.module("torch")
    meta = torch_k.device("meta")
    record("moved", _describe(k, k.answers.to_device(k.given.build(str(inputs["to_device.spec"])), meta)))
    record("tensor", _describe(k, k.answers.to_device(torch_k.zeros(2, 1), meta)))


def _judge_to_device(got: dict, want: dict) -> str | None:
    """The first node that differs, named by its path in the batch."""
    for key in ("tensor", "moved"):
        if key not in got:
            return f"to_device gave no {key}"
        lines, wanted = _strings(got[key]), _strings(want[key])
        for line, expected_line in zip(lines + [""] * len(wanted), wanted):
            if line != expected_line:
                return (f"to_device(batch, meta) on a nested batch your notebook never saw: "
                        f"{line or 'nothing'}; expected {expected_line}")
        if len(lines) != len(wanted):
            return f"to_device(batch, meta): {len(lines)} nodes in the result; expected {len(wanted)}"
    return None


# -- timing a step ---------------------------------------------------------------------------------------------

def _timed_model_records(k, record, answer, model, clock, gpu, *args):
    """answer(model, ...) on the stand-ins, then what it returned and what the stand-ins saw, raw."""
    given = k.given
    record("started", given.real_clock())
    with k.using(given.standing_in(answer, clock, gpu)):
        record("seconds", answer(model, *args))
    record("ended", given.real_clock())
    record("virtual_reads", clock.reads)
    record("forward_times", model.real)
    record("shapes", model.shapes)
    record("biases", model.biases)
    record("bias_after", model.bias)


def run_time_train_step(k, inputs, record):
    warmup, repeats, batch_size = (int(v) for v in inputs["step.counts"])
    given, answer, torch_k = k.given, k.answers.time_train_step, k.module("torch")
    clock = given.Clock()
    gpu = given.AsyncGpu(clock)
    model = given.StepModel(inputs["step.shape"], inputs["step.bias"], inputs["step.delayed"], LAUNCH, STEP - LAUNCH,
                            DELAY, clock, gpu)
    _timed_model_records(k, record, answer, model, clock, gpu, batch_size, gpu.device, warmup, repeats)
    cpu = torch_k.device("cpu")  # a real step on a tiny MLP, by the real clock
    record("real_seconds", k.value([answer(given.tiny_mlp(), size, cpu, 1, 3) for size in (4, 256)]))
    if torch.cuda.is_available():  # does the clock wait for queued GPU work? (decided here, not by the kernel)
        before = given.gpu_seconds()
        record("gpu_measured", answer(given.GpuBusy(), 4, torch_k.device("cuda"), 1, 3))
        record("gpu_work", k.value([before, given.gpu_seconds()]))


def expected_time_train_step(inputs) -> dict:
    """What the properties of the timing are judged against."""
    warmup, repeats, batch_size = (int(v) for v in inputs["step.counts"])
    shape = (batch_size, *(int(v) for v in inputs["step.shape"]))
    return {"calls": warmup + repeats, "warmup": warmup, "shapes": np.asarray([str(shape)] * (warmup + repeats)),
            "gpu": torch.cuda.is_available(), "batch_size": batch_size}


def _sgd_steps(biases: np.ndarray) -> str | None:
    """None when each update is -lr x the fresh gradient of the cross-entropy with labels 0, one lr for all."""
    if biases.ndim != 2 or biases.shape[0] < 2 or not np.all(np.isfinite(biases)):
        return "the model's weights came back as something else than its bias after each step"
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


def _biases(got: dict) -> np.ndarray:
    """The bias each forward pass saw, then the bias after the last step: (calls + 1, C)."""
    after = np.asarray(got["bias_after"], dtype=np.float64).ravel()
    seen = np.asarray(got["biases"], dtype=np.float64)
    return np.vstack([seen.reshape(-1, after.size), after[None]]) if seen.size % max(after.size, 1) == 0 else seen


def _real_step_bound(got: dict, calls: int, warmup: int) -> float:
    """The median, over the timed steps, of the real time from the end of the forward pass before
    a step to the start of the forward pass after it: no timed step can have lasted longer, however
    busy the machine. From the real timestamps: the call's start, (start, end) of each forward pass, its end."""
    started, ended = _number(got["started"]), _number(got["ended"])
    forwards = np.asarray(got["forward_times"], dtype=np.float64)
    if started is None or ended is None or forwards.shape != (calls, 2):
        return 0.0
    ends = np.concatenate([[started], forwards[:-1, 1]])  # ends[i]: end of forward i-1 (the call's start for i=0)
    starts = np.concatenate([forwards[1:, 0], [ended]])  # starts[i]: start of forward i+1 (the call's end)
    return float(np.median((starts - ends)[warmup:]))


def _judge_time_train_step(got: dict, want: dict) -> str | None:
    problem = _missing("time_train_step", got, ("seconds", "shapes", "biases", "bias_after", "real_seconds",
                                                "virtual_reads", "started", "ended", "forward_times"))
    if problem:
        return problem
    shapes = _strings(got["shapes"]) if np.asarray(got["shapes"]).size else []
    calls, expected_calls = len(shapes), int(want["calls"])
    if calls != expected_calls:
        return (f"time_train_step ran {calls} forward passes; expected warmup + repeats = {expected_calls} "
                "(warm-up steps untimed, then one timed step per repeat)")
    if shapes != _strings(want["shapes"]):
        return (f"time_train_step fed inputs of shapes {sorted(set(shapes))}; expected {_strings(want['shapes'])[0]} "
                "= (batch_size, *model.input_shape)")
    seconds = _number(got["seconds"])
    if seconds is None:
        return f"time_train_step returned {_shown(got['seconds'])}; expected a number of seconds (a float)"
    limit = STEP + SLACK
    reads = _number(got["virtual_reads"])
    if reads is None or reads < 2:  # timed by a clock the grader could not stand in for
        limit = max(limit, _real_step_bound(got, expected_calls, int(want["warmup"])))
    per_sample = abs(seconds * int(want["batch_size"]) / STEP - 1) < 0.25 if np.isfinite(seconds) else False
    if np.isfinite(seconds) and seconds < 0.75 * STEP and seconds < 2 * LAUNCH and not per_sample:
        return (f"time_train_step returned {seconds:.4g} s for steps that queue {STEP - LAUNCH:g} s of work on an "
                f"asynchronous device after {LAUNCH:g} s of Python: the clock was read before the device had finished "
                "(a reading that does not wait for the device's queue, on some device, measures the time to queue work)")
    if not np.isfinite(seconds) or not 0.75 * STEP <= seconds <= limit:
        return (f"time_train_step returned {seconds:.4g} s for a model whose steps take {STEP} s, the warm-up and "
                f"a few hiccups {STEP + DELAY:g} s: the warm-up steps were timed, or a hiccup moved the result (a mean "
                "follows every slow step), or the time is not one step's (not per sample)")
    problem = _sgd_steps(_biases(got))
    if problem:
        return f"time_train_step: {problem}"
    real = np.asarray(got["real_seconds"]).ravel()
    real = real.astype(np.float64) if real.dtype.kind in "iuf" else np.full(2, np.nan)
    if real.shape != (2,) or not np.all(np.isfinite(real)) or not np.all((real > 0) & (real < 5)):
        return f"time_train_step on a tiny MLP returned {real.tolist()} seconds: expected positive, finite, well under 5 s"
    if bool(want["gpu"]):
        if "gpu_measured" not in got or "gpu_work" not in got:
            return "time_train_step was not measured on the GPU"
        measured, work = _number(got["gpu_measured"]), np.asarray(got["gpu_work"], dtype=np.float64)
        if measured is None or not work.size or not measured > 0.5 * float(work.min()):
            return ("on the GPU time_train_step returned less than the queued GPU work: the clock was read before the "
                    "GPU had finished")
    return None


def run_time_throughput(k, inputs, record):
    warmup, steps, batch_size = (int(v) for v in inputs["throughput.counts"])
    given = k.given
    clock = given.Clock()
    gpu = given.AsyncGpu(clock)
    model = given.StepModel(inputs["step.shape"], inputs["step.bias"], [1], THROUGHPUT_LAUNCH, THROUGHPUT_QUEUED,
                            DELAY, clock, gpu)
    _timed_model_records(k, record, k.answers.time_throughput, model, clock, gpu, batch_size, gpu.device, warmup,
                         steps)


def expected_time_throughput(inputs) -> dict:
    warmup, steps, batch_size = (int(v) for v in inputs["throughput.counts"])
    shape = (batch_size, *(int(v) for v in inputs["step.shape"]))
    # the last step's Python, then the device's queue of `steps` steps
    seconds = (THROUGHPUT_LAUNCH + steps * THROUGHPUT_QUEUED) / steps
    return {"calls": warmup + steps, "shapes": np.asarray([str(shape)] * (warmup + steps)), "seconds": seconds,
            "latency": THROUGHPUT_LAUNCH + THROUGHPUT_QUEUED}


def _judge_time_throughput(got: dict, want: dict) -> str | None:
    problem = _missing("time_throughput", got, ("seconds", "shapes", "biases", "bias_after", "virtual_reads"))
    if problem:
        return problem
    shapes = _strings(got["shapes"]) if np.asarray(got["shapes"]).size else []
    if len(shapes) != int(want["calls"]):
        return (f"time_throughput ran {len(shapes)} forward passes; expected warmup + steps = {int(want['calls'])} "
                "(the warm-up untimed, then the timed steps back to back)")
    if shapes != _strings(want["shapes"]):
        return f"time_throughput fed inputs of shapes {sorted(set(shapes))}; expected {_strings(want['shapes'])[0]}"
    seconds, expected = _number(got["seconds"]), float(want["seconds"])
    if seconds is None:
        return f"time_throughput returned {_shown(got['seconds'])}; expected a number of seconds (a float)"
    reads = _number(got["virtual_reads"])
    upper = expected * 1.1 if reads is not None and reads >= 2 else expected + SLACK  # a real clock: a busy machine
    if not np.isfinite(seconds) or not 0.9 * expected <= seconds <= upper:
        if np.isfinite(seconds) and abs(seconds - float(want["latency"])) <= 0.1 * float(want["latency"]):
            return ("time_throughput measured the latency of synchronized steps: something waits for the device in "
                    "every step (a synchronizing clock, loss.item()...), so the steps never run back to back")
        return (f"time_throughput returned {seconds:.4g} s per step where steps run back to back take {expected:.4g} s "
                "on a stand-in asynchronous device: the clock missed some of the device's work, or timed the warm-up, "
                "or the time was not divided among the steps")
    problem = _sgd_steps(_biases(got))
    return f"time_throughput: {problem}" if problem else None


# -- batch sizes -------------------------------------------------------------------------------------------------

SWEEP_KEYS = ("batch_size", "seconds", "samples_per_second")


def run_batch_size_sweep(k, inputs, record):
    sizes = [int(b) for b in inputs["sweep.sizes"]]
    warmup, repeats = (int(v) for v in inputs["sweep.counts"])
    fixed, per_sample = (float(v) for v in inputs["sweep.cost"])
    sweep = k.given.Sweep(fixed, per_sample)
    results = k.given.with_global(k.answers.batch_size_sweep, "time_throughput", sweep.time_throughput,
                                  sweep.make_model, sizes, k.module("torch").device("cpu"), warmup=warmup,
                                  repeats=repeats)
    record("calls", sweep.calls)
    for key, column in _columns(k.fetch(results)).items():
        record(key, column)


def _columns(rows) -> dict:
    """key -> the numbers of each result under it; or {"results": what is wrong with the results}."""
    if not isinstance(rows, (list, tuple)) or not all(isinstance(row, dict) for row in rows):
        return {"results": f"{_shown(rows)}, not a list of dicts"}
    columns = {}
    for key in SWEEP_KEYS:
        numbers = [_number(row.get(key)) for row in rows]
        if any(number is None for number in numbers):
            row = rows[numbers.index(None)]
            return {"results": f"a result whose {key!r} is not a number: {_shown(row)}"}
        columns[key] = numbers
    return columns


def expected_batch_size_sweep(inputs) -> dict:
    sizes = [int(b) for b in inputs["sweep.sizes"]]
    fixed, per_sample = (float(v) for v in inputs["sweep.cost"])
    seconds = [fixed + per_sample * b for b in sizes]
    return {"calls": np.asarray([[b, *(int(v) for v in inputs["sweep.counts"]), i] for i, b in enumerate(sizes)]),
            "batch_size": np.asarray(sizes, dtype=float), "seconds": np.asarray(seconds),
            "samples_per_second": np.asarray(sizes) / np.asarray(seconds)}


def _judge_sweep(got: dict, want: dict) -> str | None:
    if "results" in got:
        return (f"batch_size_sweep returned {got['results']}: expected a list of dicts "
                "{'batch_size': b, 'seconds': s, 'samples_per_second': b / s}, one per batch size")
    problem = _missing("batch_size_sweep", got, ("calls", *SWEEP_KEYS))
    if problem:
        return problem
    calls, wanted = np.asarray(got["calls"]), np.asarray(want["calls"])
    if calls.dtype.kind not in "iuf" or calls.shape != wanted.shape or not np.array_equal(calls[:, :3], wanted[:, :3]):
        shown = calls[:, :3].tolist() if calls.ndim == 2 and calls.shape[1:] == (4,) else calls.tolist()
        return (f"batch_size_sweep called time_throughput with (batch_size, warmup, steps) = {shown}; expected "
                f"{wanted[:, :3].tolist()}: once per batch size, in the order given, warmup and repeats passed on")
    if not np.array_equal(calls[:, 3], wanted[:, 3]):
        return "batch_size_sweep timed the same model more than once: give every batch size a fresh make_model()"
    for key, rtol in (("batch_size", 0.0), ("seconds", 1e-12), ("samples_per_second", 1e-9)):
        message = compare_arrays(np.asarray(got[key]), np.asarray(want[key]), rtol=rtol, atol=0.0)
        if message:
            hint = " (batch_size / seconds)" if key == "samples_per_second" else ""
            return f"batch_size_sweep: the results' {key} {message}{hint}"
    return None


def run_find_saturation(k, inputs, record):
    chosen = []
    for sizes, throughput, tolerance in zip(inputs["saturation.sizes"], inputs["saturation.throughput"],
                                            inputs["saturation.tolerance"]):
        results = [{"batch_size": int(b), "seconds": int(b) / float(s), "samples_per_second": float(s)}
                   for b, s in zip(sizes, throughput)]
        results = k.value(results[::2] + results[1::2])  # not sorted by batch size
        if tolerance < 0:  # the default tolerance
            chosen.append(k.answers.find_saturation(results))
        else:
            chosen.append(k.answers.find_saturation(results, tolerance=float(tolerance)))
    record("batch_sizes", k.value(chosen))


# -- memory -------------------------------------------------------------------------------------------------------

def run_activation_bytes(k, inputs, record):
    """activation_bytes on secret nets (a Linear first), batch sizes and dtypes."""
    values = []
    for i in range(int(inputs["memory.nets"])):
        net = k.given.layers(inputs[f"memory.{i}.codes"], inputs[f"memory.{i}.widths"],
                             bool(inputs[f"memory.{i}.double"]))
        values.append(k.answers.activation_bytes(net, int(inputs[f"memory.{i}.batch"]),
                                                 int(inputs[f"memory.{i}.widths"][0])))
    record("bytes", k.value(values))


# -- activation checkpointing -------------------------------------------------------------------------------------

CHECKPOINT_KEYS = ("out", "kept", "forward", "recomputed", "grads")


def run_checkpointed_forward(k, inputs, record):
    """checkpointed_forward on secret nets and boundaries, watched by given.checkpoint_run: the output, the bytes alive
    after the forward pass, each layer's forward calls in the forward pass and during backward, the gradients."""
    for i in range(CHECKPOINT_CASES):
        model = k.given.checkpoint_net(inputs[f"ckpt.{i}.codes"], inputs[f"ckpt.{i}.widths"], int(inputs[f"ckpt.{i}.seed"]))
        run = k.given.checkpoint_run(k.answers.checkpointed_forward, model, k.tensor(inputs[f"ckpt.{i}.x"], "float32"),
                                     k.value([int(b) for b in inputs[f"ckpt.{i}.boundaries"]]),
                                     k.tensor(inputs[f"ckpt.{i}.grad"], "float32"))
        for j, key in enumerate(CHECKPOINT_KEYS):
            record(f"{i}.{key}", run[j])
        record(f"{i}.boundaries", k.value([int(b) for b in inputs[f"ckpt.{i}.boundaries"]]))  # for the judge's words


def _judge_checkpointed_forward(got: dict, want: dict) -> str | None:
    """Case by case: the output, the forward calls, the gradients, the recomputation, then the bytes kept."""
    for i in range(CHECKPOINT_CASES):
        problem = _missing("checkpointed_forward", got, [f"{i}.{key}" for key in CHECKPOINT_KEYS])
        if problem:
            return problem
        boundaries = [int(b) for b in np.asarray(want[f"{i}.boundaries"]).ravel()]
        where = f"on a net of {len(np.asarray(want[f'{i}.forward']).ravel())} layers cut at {boundaries}, which your notebook never saw"
        if compare_arrays(np.asarray(got[f"{i}.out"]), np.asarray(want[f"{i}.out"]), rtol=1e-5, atol=1e-6):
            return f"checkpointed_forward's output is not model(x) {where}: the segments do not run every layer once, in order"
        forward, wanted = np.asarray(got[f"{i}.forward"]).ravel(), np.asarray(want[f"{i}.forward"]).ravel()
        if forward.shape != wanted.shape or not np.array_equal(forward, wanted):
            return f"checkpointed_forward ran the layers {forward.tolist()} times in the forward pass {where}; expected once each"
        grads, wanted_grads = (np.asarray(got[f"{i}.grads"], dtype=np.float64).ravel(),
                               np.asarray(want[f"{i}.grads"], dtype=np.float64).ravel())
        if grads.shape == wanted_grads.shape and np.isnan(grads).any():
            return (f"checkpointed_forward: some parameters got no gradient {where}: a segment ran where autograd "
                    "records nothing, or under the reentrant checkpoint with an input that does not require grad")
        if compare_arrays(grads, wanted_grads, rtol=1e-4, atol=1e-6):
            return f"checkpointed_forward: the gradients are not model(x)'s {where}"
        again, wanted_again = np.asarray(got[f"{i}.recomputed"]).ravel(), np.asarray(want[f"{i}.recomputed"]).ravel()
        if again.shape != wanted_again.shape or not np.array_equal(again, wanted_again):
            last = boundaries[-1]
            if not again.any():
                reason = "nothing ran again: no segment was checkpointed"
            elif again.shape == wanted_again.shape and again[last:].all():
                reason = "the last segment ran again: it was checkpointed too, though its backward runs first"
            else:
                reason = "the checkpoints are not where the boundaries say"
            return (f"checkpointed_forward: during backward the layers ran {again.tolist()} more times {where}; expected "
                    f"{wanted_again.tolist()}: {reason}")
        kept, wanted_kept = _number(got[f"{i}.kept"]), int(np.asarray(want[f"{i}.kept"]))
        if kept != wanted_kept:
            return (f"checkpointed_forward kept {_shown(got[f'{i}.kept'])} bytes after the forward pass {where}; "
                    f"checkpointing every segment but the last keeps {wanted_kept}: the checkpointed segments' inputs and "
                    "what the last segment keeps")
    return None


# -- mixed precision ---------------------------------------------------------------------------------------------

def _weights(inputs, scale: float = 1.0) -> list[np.ndarray]:
    """The mixed-precision MLP's w1, b1, w2, b2 (the last layer times `scale`)."""
    return [inputs["mixed." + key] * factor for key, factor in zip(("w1", "b1", "w2", "b2"), (1, 1, scale, scale))]


def _parameters(model) -> list:
    """Refs to the parameters of given.mlp's model, in order: w1, b1, w2, b2."""
    return [model[0].weight, model[0].bias, model[2].weight, model[2].bias]


def run_autocast_forward(k, inputs, record):
    torch_k, given, answer = k.module("torch"), k.given, k.answers.autocast_forward
    cpu = torch_k.device("cpu")
    model, x = given.mlp(*_weights(inputs)), k.tensor(inputs["mixed.x"], "float32")
    out = answer(model, x, cpu, torch_k.bfloat16)
    record("dtype", out.dtype)
    record("out", out)
    parameters = _parameters(model)
    record("weight_dtypes", k.value([p.dtype for p in parameters]))
    for i, parameter in enumerate(parameters):
        record(f"weight{i}", parameter)
    record("autocast_after", given.autocast_state("cpu"))
    record("dtype16", answer(given.mlp(*_weights(inputs)), x, cpu, torch_k.float16).dtype)
    if torch.cuda.is_available():  # each dtype asked for, so that autocast's default (float16) cannot pass for both
        cuda = torch_k.device("cuda")
        dtypes = ["float16"] + (["bfloat16"] if k.fetch(torch_k.cuda.is_bf16_supported()) is True else [])
        returned = []
        for dtype in dtypes:
            with k.using(torch_k.no_grad()):
                out = answer(given.mlp(*_weights(inputs)).cuda(), x.cuda(), cuda, torch_k.attr(dtype))
            returned.append([f"torch.{dtype}", out.dtype])
        record("cuda_dtypes", k.value(returned))
    else:  # CUDA mocked: the forward pass shows which device's autocast it ran under
        for dtype, key in (("float16", "mocked_cuda"), ("bfloat16", "mocked_cuda_bfloat16")):
            recorder = given.AutocastRecorder()
            with k.using(given.mocked_cuda()):
                answer(recorder, x, torch_k.device("cuda"), torch_k.attr(dtype))  # may fail: what was seen counts
            record(key, recorder.seen)


def expected_autocast_forward(inputs) -> dict:
    from helpers.reference import gpu_batch_timing as ref

    weights = _weights(inputs)
    model, x = stand_ins().mlp(*weights), torch.as_tensor(inputs["mixed.x"], dtype=torch.float32)
    with torch.no_grad():
        out = ref.autocast_forward(model, x, torch.device("cpu"), torch.bfloat16)
    return {"dtype": str(out.dtype), "out": out.float(), "dtype16": "torch.float16", "gpu": torch.cuda.is_available(),
            **{f"weight{i}": w.astype(np.float32) for i, w in enumerate(weights)}}


def _judge_autocast_forward(got: dict, want: dict) -> str | None:
    problem = _missing("autocast_forward", got, ("dtype", "out", "weight_dtypes", "autocast_after", "dtype16",
                                                 *(f"weight{i}" for i in range(4))))
    if problem:
        return problem
    dtypes = sorted(set(_strings(got["weight_dtypes"])))
    kept = all(compare_arrays(np.asarray(got[f"weight{i}"]), np.asarray(want[f"weight{i}"]), 0.0, 0.0) is None
               for i in range(4))
    if dtypes != ["torch.float32"] or not kept:
        return (f"autocast_forward changed the model: its weights are {', '.join(dtypes)} afterwards"
                f"{'' if kept else ', their values changed'}. Leave the model in float32 (no model.half() or "
                "model.to(dtype)): torch.autocast casts inside the forward pass")
    for key, asked in (("dtype", "torch.bfloat16"), ("dtype16", "torch.float16")):
        if str(got[key]) != str(want[key]):
            return (f"autocast_forward(model, x, cpu, {asked}) returned {got[key]}; expected {want[key]}: run model(x) "
                    "inside `with torch.autocast(device.type, dtype=dtype):`, on the device's type, with the dtype "
                    "asked for (without dtype= it uses its default)")
    if _strings(got["autocast_after"])[:1] != ["False"]:
        return "autocast was still on after autocast_forward returned: use it as a `with` block"
    message = compare_arrays(np.asarray(got["out"]), np.asarray(want["out"]), rtol=2.0 ** -7, atol=1e-3)
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
            seen = _strings(got.get(key, ["not reached"]))
            if seen != ["not reached"] and seen != ["True", dtype, "False"]:
                return (f"for device cuda and {dtype} the forward pass ran with CUDA's autocast "
                        f"{'on' if seen[:1] == ['True'] else 'off'} ({seen[1] if len(seen) > 1 else '?'}) and the "
                        f"CPU's {'on' if seen[2:3] == ['True'] else 'off'}: give torch.autocast the device's type "
                        "(device.type) and the dtype asked for (without dtype= it uses its default)")
    return None


def run_precision_error(k, inputs, record):
    torch_k = k.module("torch")
    model = k.given.mlp(*_weights(inputs, float(inputs["mixed.scale"])))
    x = k.tensor(inputs["mixed.x"], "float32")
    record("error", k.answers.precision_error(model, x, torch_k.device("cpu"), torch_k.bfloat16))
    record("weight_dtypes", k.value([p.dtype for p in _parameters(model)]))


def expected_precision_error(inputs) -> dict:
    from helpers.reference import gpu_batch_timing as ref

    model = stand_ins().mlp(*_weights(inputs, float(inputs["mixed.scale"])))
    x = torch.as_tensor(inputs["mixed.x"], dtype=torch.float32)
    with torch.no_grad():
        norm_32 = float(torch.linalg.vector_norm(model(x)))
    return {"error": ref.precision_error(model, x, torch.device("cpu"), torch.bfloat16), "norm_32": norm_32}


def _judge_precision_error(got: dict, want: dict) -> str | None:
    if "error" not in got:
        return "precision_error gave no error"
    if sorted(set(_strings(got.get("weight_dtypes", [])))) != ["torch.float32"]:
        return "precision_error changed the model's dtype: compute the float32 output with the model as it was given"
    error, expected = _number(got["error"]), float(want["error"])
    if error is None:
        return f"precision_error returned {_shown(got['error'])}; expected a number (a Python float)"
    if np.isfinite(error) and abs(error - expected) <= 1e-3 * expected:
        return None
    unit_roundoff = 2.0 ** -8  # bfloat16: 8 significant bits
    if error == 0:
        return ("precision_error returned 0: the bfloat16 output was compared with itself. Compare with model(x) "
                "computed outside autocast, in float32")
    if abs(error - expected * float(want["norm_32"])) <= 1e-2 * abs(error):
        return ("precision_error returned the absolute error ||y_low - y_32||; expected the relative one, divided "
                "by ||y_32||")
    return (f"precision_error returned {error:.4g}; expected {expected:.4g}, of the order of bfloat16's unit "
            f"roundoff {unit_roundoff:g}: ||y_low - y_32|| / ||y_32|| over all elements, y_32 in float32 without autocast")


# -- matrix products ---------------------------------------------------------------------------------------------

def _seconds_by_kind(inputs) -> list[dict]:
    """Per case: kind -> virtual seconds of one (n, n) @ (n, n) product."""
    return [dict(zip(TFLOPS_KINDS, (float(s) for s in seconds))) for seconds in inputs["tflops.seconds"]]


def run_matmul_tflops(k, inputs, record):
    torch_k, given, answer = k.module("torch"), k.given, k.answers.matmul_tflops
    saved = torch_k.get_float32_matmul_precision()
    for i, ((n, bf16, tf32, high, on_gpu), seconds) in enumerate(zip(inputs["tflops.cases"], _seconds_by_kind(inputs))):
        n = int(n)
        clock = given.Clock()
        gpu = given.AsyncGpu(clock, False) if on_gpu else None  # virtual time only: nothing sleeps
        cost = given.MatmulCost(clock, seconds, n, gpu)  # the device's speed, not the answer: FLOPs are the exercise
        torch_k.set_float32_matmul_precision("high" if high else "highest")
        with k.using(given.standing_in(answer, clock, gpu, cost)):
            record(f"tflops{i}", answer(n, torch_k.bfloat16 if bf16 else torch_k.float32,
                                        gpu.device if on_gpu else torch_k.device("cpu"), tf32=bool(tf32)))
        record(f"precision_after{i}", given.matmul_precision())
        record(f"products{i}", cost.products)
        torch_k.set_float32_matmul_precision(saved)
    if torch.cuda.is_available():  # does the clock wait for the GPU? against the GPU's own count by CUDA events
        n, products = GPU_MATMUL
        before = given.matmul_events(n, products)
        record("gpu_measured", answer(n, torch_k.float16, torch_k.device("cuda")))
        record("gpu_events", k.value([before, given.matmul_events(n, products)]))


def expected_matmul_tflops(inputs) -> dict:
    """The rate that the virtual clock gives each case; the precision as it was; one kind of product."""
    values, after, products = [], [], []
    for (n, bf16, tf32, high, _), seconds in zip(inputs["tflops.cases"], _seconds_by_kind(inputs)):
        kind = "bfloat16" if bf16 else "tf32" if tf32 else "float32"
        values.append(2 * int(n) ** 3 / seconds[kind] / 1e12)
        after.append("high" if high else "highest")
        products.append(f"({n}, {n}) @ ({n}, {n}) in {kind}")
    return {"tflops": np.asarray(values), "precision_after": np.asarray(after), "products": np.asarray(products),
            "cases": inputs["tflops.cases"], "gpu": torch.cuda.is_available()}


def _judge_matmul_tflops(got: dict, want: dict) -> str | None:
    cases = np.asarray(want["cases"])
    for i, (n, bf16, tf32, _, on_gpu) in enumerate(cases):
        problem = _missing("matmul_tflops", got, (f"tflops{i}", f"precision_after{i}", f"products{i}"))
        if problem:
            return problem
        where = "cuda (a stand-in asynchronous GPU)" if on_gpu else "cpu"
        call = f"matmul_tflops({n}, torch.{'bfloat16' if bf16 else 'float32'}, {where}, tf32={bool(tf32)})"
        seen = _strings(got[f"products{i}"]) if np.asarray(got[f"products{i}"]).size else []
        product, wanted = "; ".join(sorted(set(seen))) or "no matrix product", str(want["products"][i])
        if product != wanted:
            return (f"{call} multiplied {product}; expected {wanted}: (n, n) matrices of the dtype asked for, "
                    "with TF32 allowed for float32 exactly when tf32=True (torch.set_float32_matmul_precision)")
        after, before = _strings(got[f"precision_after{i}"])[0], str(want["precision_after"][i])
        if after != before:
            return (f"{call} left the float32 matmul precision at {after!r}; it was {before!r} before the call: "
                    "the call did not restore what it found")
        value, expected = _number(got[f"tflops{i}"]), float(want["tflops"][i])
        if value is None:
            return f"{call} returned {_shown(got[f'tflops{i}'])}; expected a number of TFLOP/s (a Python float)"
        ratio = value / expected
        if not np.isfinite(ratio) or abs(ratio - 1) > 0.02:
            if on_gpu and np.isfinite(ratio) and ratio > 3:
                return (f"{call} returned {value:.4g} TFLOP/s where each product keeps the device busy "
                        f"{2 * int(n) ** 3 / expected / 1e12:.3g} s ({expected:.4g} TFLOP/s): the clock was read "
                        "before the device had finished the products: the Timer's clock does not wait for the device's "
                        "queue before each reading")
            hint = (" A multiply-add was counted as one FLOP." if abs(ratio - 0.5) < 0.02 else
                    " TFLOP/s is 1e12 FLOP/s." if np.isfinite(ratio) and ratio > 100 else "")
            return (f"{call} returned {value:.4g} TFLOP/s on a clock where each product takes "
                    f"{2 * int(n) ** 3 / expected / 1e12:.3g} s; expected {expected:.4g}: the product's FLOPs over the "
                    f"median seconds of one product, in TFLOP/s.{hint}")
    if bool(want["gpu"]):
        if "gpu_measured" not in got or "gpu_events" not in got:
            return "matmul_tflops was not measured on the GPU"
        n, products = GPU_MATMUL
        milliseconds = np.asarray(got["gpu_events"], dtype=np.float64).ravel()
        events = 2 * n ** 3 * products / (milliseconds.min() / 1e3) / 1e12 if milliseconds.size else np.nan
        measured = _number(got["gpu_measured"])
        if measured is None or not measured <= 2.0 * events:
            return (f"on the GPU matmul_tflops gave {_shown(got['gpu_measured'])} TFLOP/s where CUDA events measure "
                    f"{events:.4g}: the clock stopped before the products ran")
    return None


# -- a mixed-precision step, the profiler, the loader ------------------------------------------------------------

def run_amp_train_step(k, inputs, record):
    """Three float16 steps with a GradScaler (growth_interval 2), then one whose gradients overflow (scale 2**100); two
    more at a scale of 1 that never clip."""
    torch_k, answer = k.module("torch"), k.answers.amp_train_step
    parameters_to_vector = k.module("torch.nn.utils").parameters_to_vector
    max_norm, lr, log_scale = (float(v) for v in inputs["amp.settings"])
    model = k.given.mlp(*(inputs["amp." + key] for key in ("w1", "b1", "w2", "b2")))
    x, y = k.tensor(inputs["amp.x"], "float32"), k.tensor(inputs["amp.y"], "int64")
    optimizer = torch_k.optim.SGD(model.parameters(), lr=lr)
    scaler = torch_k.amp.GradScaler("cpu", init_scale=2.0 ** log_scale, growth_interval=2)
    record("losses", k.value([answer(model, optimizer, scaler, x, y, max_norm) for _ in range(3)]))
    record("weights", parameters_to_vector(model.parameters()))
    record("scale", scaler.get_scale())
    scaler = torch_k.amp.GradScaler("cpu", init_scale=2.0 ** 100)
    record("overflow_loss", answer(model, optimizer, scaler, x, y, max_norm))
    record("overflow_weights", parameters_to_vector(model.parameters()))  # as they were
    record("overflow_scale", scaler.get_scale())
    # Two steps at a scale of 1 and a bound that never clips, from fresh weights: a gradient the step forgot to clear
    # adds to the next one whole (above, divided by the scale and the clipping, it can hide within the tolerance)
    model = k.given.mlp(*(inputs["amp." + key] for key in ("w1", "b1", "w2", "b2")))
    optimizer = torch_k.optim.SGD(model.parameters(), lr=lr)
    scaler = torch_k.amp.GradScaler("cpu", init_scale=1.0, growth_interval=1000)
    record("unclipped_losses", k.value([answer(model, optimizer, scaler, x, y, 1e6) for _ in range(2)]))
    record("unclipped_weights", parameters_to_vector(model.parameters()))


def run_profile_step(k, inputs, record):
    """profile_step on a step that is one product of each kind, and on a sort; on one thread. Each step is
    profiled again, PROFILE_RUNS times at most, until a run is right: a right answer costs one run a step on
    a quiet machine, and a machine paused long enough inside a small operator, run after run, is rare
    (3 runs lost a right answer once at load 12: three `make course` at once on two cores)."""
    want = expected_profile_step(inputs)
    steps = k.given.profiled_steps(int(inputs["profile.inner"]))
    with k.using(k.given.profiling()):
        for name in PROFILED:
            step = steps[name]
            step()
            runs = []
            while len(runs) < PROFILE_RUNS:
                runs.append(k.answers.profile_step(step))
                if _fetched_run_is_right(k.fetch(runs[-1]), want, name):
                    break
            record(f"{name}.busiest", k.value([run[0] for run in runs]))
            record(f"{name}.share", k.value([run[1] for run in runs]))


def _fetched_run_is_right(value, want: dict, name: str) -> bool:
    """Whether one run, as fetched, is right (the judge's own rule, _judge_profile_run): asked here only to
    know whether to profile again; the verdict is the judge's, over every run recorded."""
    try:
        busiest, share = value
        return _judge_profile_run(str(busiest), float(share), want, name) is None
    except (TypeError, ValueError):
        return False


def expected_profile_step(inputs) -> dict:
    return {f"{name}.{key}": value for name in PROFILED
            for key, value in (("busiest", f"aten::{name}"), ("products", name != "sort"))}


def _judge_profile_step(got: dict, want: dict) -> str | None:
    for name in PROFILED:
        for key in ("busiest", "share"):
            if f"{name}.{key}" not in got:
                return f"profile_step gave no {key} for the {name} step"
        shares = np.asarray(got[f"{name}.share"]).ravel()
        shares = shares.astype(np.float64) if shares.dtype.kind in "iuf" else np.full(shares.size, np.nan)
        runs = list(zip(_strings(got[f"{name}.busiest"]), shares))
        messages = [_judge_profile_run(busiest, float(share), want, name) for busiest, share in runs]
        if not runs or all(messages):  # a busy machine can pause any operator: one right run of PROFILE_RUNS is enough
            return messages[-1] if runs else "profile_step gave nothing"
    return None


def _judge_profile_run(busiest: str, share: float, want: dict, name: str) -> str | None:
    wanted = str(want[f"{name}.busiest"])
    if busiest != wanted:
        return (f"profile_step named {busiest} the busiest operator of a step that is almost all {wanted}: a total "
                "includes the time of the operators called inside, so a caller outranks the operator doing the work")
    if bool(want[f"{name}.products"]) and not 0.7 < share <= 1.0:
        return (f"profile_step gave a matrix-product share of {share:.3g} for a step that is almost all {wanted}: "
                "the time of the products of matrices (and of batches of them) over all the time profiled, each "
                "microsecond counted once")
    if not bool(want[f"{name}.products"]) and not 0.0 <= share < 0.1:
        return f"profile_step gave a matrix-product share of {share:.3g} for a step that is almost all sorting"
    return None


def run_epoch_seconds(k, inputs, record):
    cases = inputs["epoch.cases"]
    record("cases", cases)  # the grader's own inputs, for the judge's words
    record("seconds", k.value([k.answers.epoch_seconds(int(n), float(load), float(step), int(workers))
                               for n, load, step, workers in cases]))


def _judge_epoch_seconds(got: dict, want: dict) -> str | None:
    """The first case that differs, with its arguments; the steady-rate model named when it is the one used."""
    if "seconds" not in got:
        return "epoch_seconds gave no seconds"
    seconds, wanted = np.asarray(got["seconds"]).ravel(), np.asarray(want["seconds"], dtype=np.float64).ravel()
    if seconds.dtype.kind not in "iuf" or seconds.shape != wanted.shape:
        return f"epoch_seconds returned {_shown(seconds)}; expected a number of seconds (a float) per call"
    for (n, load, step, workers), value, expected in zip(np.asarray(want["cases"]), seconds.astype(np.float64), wanted):
        if np.isclose(value, expected, rtol=1e-9, atol=1e-12):
            continue
        call = f"epoch_seconds({int(n)}, {load:.4g}, {step:.4g}, {int(workers)})"
        steady = load + step + (n - 1) * max(step, load / workers) if workers else np.nan
        hint = (" With w workers the batches arrive w at a time (each worker's k-th batch after k x load_seconds), "
                "not one every load_seconds / w: the loop can wait at the start of every round"
                if np.isclose(value, steady, rtol=1e-9) else "")
        return f"{call} returned {value:.6g}; expected {expected:.6g} (on costs your notebook never used).{hint}"
    return None


# -- data parallelism -----------------------------------------------------------------------------------------------

def _parallel_case(inputs, case: int):
    sizes = np.asarray(inputs[f"dp.{case}.sizes"])
    d_in, hidden, classes = (int(v) for v in inputs[f"dp.{case}.net"])
    learning_rate, momentum = (float(v) for v in inputs[f"dp.{case}.settings"])
    return sizes, (int(inputs[f"dp.{case}.seed"]), d_in, hidden, classes), learning_rate, momentum


def run_data_parallel_step(k, inputs, record):
    """data_parallel_step on 2, then 3, ranks (threads whose collectives helpers.ranks.ThreadGroup plays): each rank's
    weights after the steps, the losses it returned and their types."""
    for case in range(PARALLEL_CASES):
        sizes, net, learning_rate, momentum = _parallel_case(inputs, case)
        model = k.given.dp_net(*net)
        run = k.given.data_parallel(k.answers.data_parallel_step, model, k.value(inputs[f"dp.{case}.x"]),
                                    k.value(inputs[f"dp.{case}.y"]), k.value(sizes.tolist()), learning_rate, momentum)
        record(f"{case}.weights", run[0])
        record(f"{case}.losses", run[1])
        record(f"{case}.types", run[2])


def _one_process(model, batches, learning_rate: float, momentum: float, loss_of) -> tuple[np.ndarray, list[float]]:
    """(flattened weights, losses) of one process taking one SGD step per batch on loss_of(model, batch)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=momentum)
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss = loss_of(model, batch)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach().numpy(), losses


def expected_data_parallel_step(inputs) -> dict:
    """One process on whole batches (the answer); and what two mistakes give, to name them: every rank's mean counted
    alike, and the ranks' means added up; each rank's own first loss."""
    import torch.nn.functional as F

    given = stand_ins()
    whole = {"whole": lambda m, batch: F.cross_entropy(m(torch.cat([x for x, _ in batch])), torch.cat([y for _, y in batch])),
             "mean_of_means": lambda m, batch: sum(F.cross_entropy(m(x), y) for x, y in batch) / len(batch),
             "sum_of_means": lambda m, batch: sum(F.cross_entropy(m(x), y) for x, y in batch)}
    want: dict = {}
    for case in range(PARALLEL_CASES):
        sizes, net, learning_rate, momentum = _parallel_case(inputs, case)
        batches = given.dp_batches(inputs[f"dp.{case}.x"], inputs[f"dp.{case}.y"], sizes.tolist())
        for name, loss_of in whole.items():
            weights, losses = _one_process(given.dp_net(*net), batches, learning_rate, momentum, loss_of)
            want[f"{case}.{name}"], want[f"{case}.{name}.losses"] = weights, np.asarray(losses)
        with torch.no_grad():
            model = given.dp_net(*net)
            want[f"{case}.own"] = np.asarray([F.cross_entropy(model(x), y).item() for x, y in batches[0]])
        want[f"{case}.world"] = sizes.shape[1]
    return want


def _judge_data_parallel_step(got: dict, want: dict) -> str | None:
    for case in range(PARALLEL_CASES):
        problem = _missing("data_parallel_step", got, [f"{case}.{key}" for key in ("weights", "losses", "types")])
        if problem:
            return problem
        world = int(want[f"{case}.world"])
        where = f"on {world} ranks, slices of unequal sizes your notebook never saw"
        types = sorted(set(_strings(got[f"{case}.types"])))
        if types != ["float"]:
            return f"data_parallel_step returned {', '.join(types)} {where}; expected the loss as a Python float"
        weights = np.asarray(got[f"{case}.weights"], dtype=np.float64)
        whole = np.asarray(want[f"{case}.whole"], dtype=np.float64)
        if weights.shape != (world, whole.size):
            return f"data_parallel_step: the ranks' weights came back as {weights.shape} {where}"
        close = [compare_arrays(rank, whole, rtol=1e-4, atol=1e-6) is None for rank in weights]
        if not all(close):
            if any(compare_arrays(rank, weights[0], rtol=1e-4, atol=1e-6) for rank in weights[1:]):
                reason = "the ranks ended with different weights: each stepped on a gradient of its own"
            elif compare_arrays(weights[0], np.asarray(want[f"{case}.mean_of_means"]), rtol=1e-4, atol=1e-6) is None:
                reason = ("every rank's slice counted as much as another's, whatever its size: the whole batch's mean "
                          "weighs each sample alike")
            elif compare_arrays(weights[0], np.asarray(want[f"{case}.sum_of_means"]), rtol=1e-4, atol=1e-6) is None:
                reason = "the ranks' mean gradients were added up, each counting as a whole batch's"
            else:
                reason = "they are not one process's weights after the same steps on whole batches"
            return f"data_parallel_step: the ranks' weights after the steps {where}: {reason}"
        losses = np.asarray(got[f"{case}.losses"], dtype=np.float64)
        wanted = np.asarray(want[f"{case}.whole.losses"], dtype=np.float64)
        if losses.shape != (world, wanted.size) or compare_arrays(losses, np.tile(wanted, (world, 1)), rtol=1e-4, atol=1e-6):
            own = np.asarray(want[f"{case}.own"], dtype=np.float64)
            mine = losses.shape == (world, wanted.size) and np.allclose(losses[:, 0], own, rtol=1e-4, atol=1e-6)
            return (f"data_parallel_step returned the losses {np.round(losses, 4).tolist()} {where}; expected "
                    f"{np.round(wanted, 4).tolist()} on every rank"
                    + (": each rank returned its own slice's loss, not the whole batch's" if mine else ""))
    return None


PROBE = Probe(
    assignment=ASSIGNMENT,
    reference="helpers.reference.gpu_batch_timing",
    make_inputs=make_inputs,
    exercises={
        "to_device": Exercise(run_to_device, judge=_judge_to_device),
        "time_train_step": Exercise(run_time_train_step, expected=expected_time_train_step,
                                    judge=_judge_time_train_step),
        "time_throughput": Exercise(run_time_throughput, expected=expected_time_throughput,
                                    judge=_judge_time_throughput),
        "batch_size_sweep": Exercise(run_batch_size_sweep, expected=expected_batch_size_sweep, judge=_judge_sweep),
        "activation_bytes": Exercise(run_activation_bytes, tolerance=EXACT),
        "checkpointed_forward": Exercise(run_checkpointed_forward, judge=_judge_checkpointed_forward),
        "find_saturation": Exercise(run_find_saturation, tolerance=EXACT),
        "autocast_forward": Exercise(run_autocast_forward, expected=expected_autocast_forward,
                                     judge=_judge_autocast_forward),
        "precision_error": Exercise(run_precision_error, expected=expected_precision_error,
                                    judge=_judge_precision_error),
        "matmul_tflops": Exercise(run_matmul_tflops, expected=expected_matmul_tflops, judge=_judge_matmul_tflops),
        "amp_train_step": Exercise(run_amp_train_step, tolerance=Tolerance(1e-4, 1e-6)),
        "profile_step": Exercise(run_profile_step, expected=expected_profile_step, judge=_judge_profile_step),
        "epoch_seconds": Exercise(run_epoch_seconds, judge=_judge_epoch_seconds),
        "data_parallel_step": Exercise(run_data_parallel_step, expected=expected_data_parallel_step,
                                       judge=_judge_data_parallel_step),
    },
)

"""Reference answers of 08_gpu_batch_timing: devices, timing a train step, batch-size sweeps.

Decisions the notebook states:
- `time_train_step` makes its input from `model.input_shape`, the shape of ONE sample
  (e.g. (784,) or (3, 32, 32)); the batch is (batch_size, *model.input_shape). Labels are all
  class 0: a label's value does not change the cost of cross-entropy, and class 0 exists for
  every classifier.
- It runs `warmup` untimed steps, then `repeats` timed ones (exactly warmup + repeats forward
  passes), and returns the median. Each timed step is bracketed by two readings of
  `helpers.timing.synchronized_timer(device)`, a clock that waits for `device`'s queue (CUDA or
  MPS) before reading the time, so queued GPU work is counted. (`torch.utils.benchmark.timer`
  does the same only from torch 2.9 on; up to 2.8 it never synchronizes MPS.)
  It runs with the threads PyTorch already uses (`torch.get_num_threads()`); it does not go
  through `benchmark.Timer`, which would drop to 1 thread by default and add warm-up runs of its own.
- `find_saturation` returns the smallest batch size whose samples/s is within `tolerance`
  (10%) of the best samples/s measured: past it, bigger batches buy less than 10% more throughput.
- `autocast_forward` leaves the model and the input as they are (already on `device`, float32) and
  runs the forward pass inside `torch.autocast(device.type, dtype)`: autocast picks, op by op,
  which run in `dtype` (matmuls, convolutions) and which stay in float32 (reductions, softmax).
- `precision_error` is the relative error in the Frobenius norm (all elements as one vector):
  ||y_low - y_32|| / ||y_32||, y_32 the plain float32 forward, y_low the autocast one cast to
  float32. For bfloat16 (8 significant bits, unit roundoff 2**-8) it is of the order of 2**-8.
- `matmul_tflops` counts 2 n**3 FLOPs per (n, n) @ (n, n) product over the median seconds of
  `benchmark.Timer(...).blocked_autorange()`, timed by `synchronized_timer(device)` with the
  threads PyTorch uses. During the measurement float32 products may use TF32 exactly when `tf32`
  is true; the float32 matmul precision is restored afterwards, even when the measurement fails.
"""

from __future__ import annotations

import copy
import functools
import statistics
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.utils.checkpoint import checkpoint

from helpers.timing import benchmark, synchronized_timer

LEARNING_RATE = 1e-3  # the step's value only matters in that the step really updates the model


def get_device() -> torch.device:
    """torch.device("cuda") if CUDA is available, else torch.device("mps") if MPS is, else "cpu"."""
    if torch.cuda.is_available():
        return torch.device("cuda")
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def to_device(batch: Any, device: torch.device) -> Any:
    """`batch` with every tensor moved to `device`, at any depth of tuples, lists and mappings.

    Containers keep their type (a tuple stays a tuple, a namedtuple the same namedtuple, an
    OrderedDict or defaultdict stays one, keys in order); a mapping type that cannot be rebuilt
    from a dict becomes a dict. Anything that is not a tensor or a container (ints, strings,
    None) comes back as it is.
    """
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, Mapping):
        moved = {key: to_device(value, device) for key, value in batch.items()}
        if isinstance(batch, MutableMapping):  # as torch's pin_memory does: a copy keeps the type's own state
            clone = copy.copy(batch)
            clone.update(moved)
            return clone
        try:
            return type(batch)(moved)
        except TypeError:
            return moved
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple takes its fields one by one
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(item, device) for item in batch)
    return batch


def time_train_step(model: nn.Module, batch_size: int, device: torch.device, warmup: int,
                    repeats: int) -> float:
    """Median seconds of one training step (zero_grad, forward, cross-entropy, backward, SGD step).

    x: (batch_size, *model.input_shape) standard normal, y: (batch_size,) zeros, both on `device`.
    `warmup` untimed steps first (lazy initialization, allocator, cuDNN autotuning), then `repeats`
    timed steps, each between two calls of a clock that synchronizes the accelerator.
    """
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

    def step() -> None:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = synchronized_timer(device)  # waits for CUDA/MPS first: earlier work is not billed here
        step()
        times.append(synchronized_timer(device) - start)  # ...and for this step's kernels to finish
    return statistics.median(times)


def time_throughput(model: nn.Module, batch_size: int, device: torch.device, warmup: int,
                    steps: int) -> float:
    """Seconds per training step when `steps` steps run back to back (the same step and input as
    `time_train_step`): `warmup` untimed steps, then ONE interval of a synchronizing clock around
    all `steps` steps, divided by `steps`. Nothing inside the loop waits for the device, so the CPU
    queues the next step while the accelerator still runs this one, as a training loop does.
    """
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

    def step() -> None:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()

    for _ in range(warmup):
        step()
    start = synchronized_timer(device)
    for _ in range(steps):
        step()
    return (synchronized_timer(device) - start) / steps


def batch_size_sweep(make_model: Callable[[], nn.Module], batch_sizes: Sequence[int],
                     device: torch.device, warmup: int = 3, repeats: int = 10) -> list[dict]:
    """One `time_throughput` per batch size, each on a fresh `make_model()`, warm-up included.

    Returns [{"batch_size": b, "seconds": s, "samples_per_second": b / s}, ...] in the order of
    `batch_sizes`; seconds is the time per step of `repeats` steps run back to back on batches of
    b samples, so samples_per_second is a throughput.
    """
    results = []
    for batch_size in batch_sizes:
        seconds = time_throughput(make_model(), batch_size, device, warmup, repeats)
        results.append({"batch_size": batch_size, "seconds": seconds,
                        "samples_per_second": batch_size / seconds})
    return results


def find_saturation(results: Sequence[dict], tolerance: float = 0.1) -> int:
    """The smallest batch size whose samples/s is within `tolerance` of the best measured.

    results: dicts with "batch_size" and "samples_per_second", in any order. A batch size b
    qualifies when samples_per_second(b) * (1 + tolerance) >= max samples_per_second.
    """
    best = max(r["samples_per_second"] for r in results)
    for r in sorted(results, key=lambda r: r["batch_size"]):
        if r["samples_per_second"] * (1 + tolerance) >= best:
            return r["batch_size"]
    raise AssertionError("unreachable: the best batch size always qualifies")


def peak_tflops(sm_count: int, cores_per_sm: int, flops_per_cycle: float, ghz: float) -> float:
    """Peak TFLOP/s = SMs x cores per SM x FLOPs per core per cycle x clock (GHz) / 1000.

    RTX 3090: 82 x 128 x 2 (a fused multiply-add is 2 FLOPs) x 1.695 = 35.6 TFLOP/s (FP32).
    """
    return sm_count * cores_per_sm * flops_per_cycle * ghz / 1e3


def autocast_forward(model: nn.Module, x: torch.Tensor, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    """model(x) under torch.autocast(device.type, dtype); model and x are already on `device`, float32.

    x: (N, *input); returns the model's output as autocast leaves it, e.g. (N, D_out) in `dtype` when
    the model ends with a Linear. The model's parameters keep their float32 values and dtype.
    """
    with torch.autocast(device_type=torch.device(device).type, dtype=dtype):
        return model(x)


def precision_error(model: nn.Module, x: torch.Tensor, device: torch.device, dtype: torch.dtype) -> float:
    """||y_low - y_32|| / ||y_32|| (Frobenius: all elements as one vector), as a Python float.

    y_32 = model(x) in float32 without autocast; y_low = autocast_forward(model, x, device, dtype)
    cast to float32.
    """
    with torch.no_grad():  # a number, not a graph
        y_32 = model(x).float()
        y_low = autocast_forward(model, x, device, dtype).float()
    return float(torch.linalg.vector_norm(y_low - y_32) / torch.linalg.vector_norm(y_32))


def matmul_tflops(n: int, dtype: torch.dtype, device: torch.device, tf32: bool = False,
                  min_run_time: float = 0.2) -> float:
    """Measured TFLOP/s of an (n, n) @ (n, n) product of standard normal `dtype` matrices on `device`.

    2 n**3 FLOPs over the median seconds of benchmark.Timer(...).blocked_autorange(min_run_time),
    timed by synchronized_timer(device) on torch.get_num_threads() threads. tf32: float32 products
    may use TF32 tensor cores during the measurement (precision "high") or not ("highest"); the
    float32 matmul precision is restored afterwards.
    """
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        timer = benchmark.Timer(stmt="a @ b", globals={"a": a, "b": b}, num_threads=torch.get_num_threads(),
                                timer=functools.partial(synchronized_timer, device))
        seconds = timer.blocked_autorange(min_run_time=min_run_time).median
    finally:
        torch.set_float32_matmul_precision(previous)
    return 2 * n ** 3 / seconds / 1e12


def activation_bytes(model: nn.Sequential, batch_size: int, in_features: int) -> int:
    """Bytes of the activations autograd saves in one forward pass of `model` on (batch_size, in_features).

    `model` is an nn.Sequential of nn.Linear, nn.ReLU and nn.Tanh. A Linear keeps its input (its weight's
    gradient is grad_out.T @ input); ReLU and Tanh keep their output (their derivatives are computed from
    it); a tensor kept by two layers is stored once; parameters are not activations. Each number takes
    the parameters' element size. Proportional to batch_size.
    """
    size = next(model.parameters()).element_size()
    kept, width, source = set(), in_features, "input"  # (which tensor, its width): each tensor once
    for index, layer in enumerate(model):
        if isinstance(layer, nn.Linear):
            kept.add((source, width))  # its input
            width, source = layer.out_features, index
        elif isinstance(layer, (nn.ReLU, nn.Tanh)):
            source = index
            kept.add((source, width))  # its output
    return batch_size * size * sum(w for _, w in kept)


def checkpointed_forward(model: nn.Sequential, x: torch.Tensor, boundaries: Sequence[int]) -> torch.Tensor:
    """model(x) with activation checkpointing: the layers cut into segments at `boundaries`.

    model: an nn.Sequential; x: (N, D_in); boundaries: increasing layer indices starting at 0, each the first
    layer of a segment (the last segment runs to the end). Every segment but the last runs under
    torch.utils.checkpoint.checkpoint (non-reentrant): the forward pass keeps only its input, and the
    backward pass runs its layers once more to get their activations back. The last segment runs as it is:
    its backward comes first, right after the forward, so recomputing it would cost time and save nothing
    at the peak. Returns the output, exactly model(x); backward gives exactly model(x)'s gradients.
    """
    starts = [int(b) for b in boundaries]
    ends = [*starts[1:], len(model)]
    h = x
    for i, (start, end) in enumerate(zip(starts, ends)):
        segment = model[start:end]  # a Sequential of the same layers, no copy
        h = segment(h) if i == len(starts) - 1 else checkpoint(segment, h, use_reentrant=False)
    return h


def data_parallel_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> float:
    """One data-parallel training step, run by every rank of a torch.distributed group on its own slice.

    x: (n_r, D_in), y: (n_r,) class indices: this rank's samples, n_r >= 1, not the same on every rank.
    The ranks' models start equal; afterwards every rank's model holds what one process gets from one
    optimizer.step() on the mean cross-entropy over the whole batch (all ranks' samples, N = sum of n_r).
    That gradient is sum_r (sum of rank r's per-sample gradients) / N: each rank's sum of losses,
    divided by N (all-reduced first), all-reduced. Returns the whole batch's mean loss, the same on every rank.
    """
    optimizer.zero_grad()
    count = torch.tensor(float(len(x)))
    dist.all_reduce(count)  # N: the ranks' slices may differ in size
    loss_sum = F.cross_entropy(model(x), y, reduction="sum")
    (loss_sum / count).backward()  # this rank's share of the whole batch's mean
    for parameter in model.parameters():
        if parameter.grad is not None:
            dist.all_reduce(parameter.grad)  # the sum of the shares: the whole batch's gradient
    optimizer.step()
    total = loss_sum.detach()
    dist.all_reduce(total)
    return float(total / count)


def amp_train_step(model: nn.Module, optimizer: torch.optim.Optimizer, scaler: Any, x: torch.Tensor,
                   y: torch.Tensor, max_norm: float) -> float:
    """One float16 mixed-precision training step with a GradScaler; returns the loss as a Python float.

    x: (N, D_in) float32, y: (N,) class indices, both on the model's device. The forward pass and the loss
    run under torch.autocast(x.device.type, torch.float16); the loss is scaled before backward; the
    gradients are unscaled before they are clipped to total norm `max_norm` (the norm of the true
    gradients); scaler.step skips the update when they hold inf or NaN, and scaler.update adapts the scale.
    """
    optimizer.zero_grad()
    with torch.autocast(x.device.type, dtype=torch.float16):
        loss = F.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)  # the true gradients, so that max_norm means what it says
    nn.utils.clip_grad_norm_(model.parameters(), max_norm)
    scaler.step(optimizer)  # skipped when the gradients overflowed
    scaler.update()
    return loss.item()  # float(loss) would warn: the loss requires grad


# Where a product of two matrices, or of two batches of matrices, ends on a CPU. A matrix times a vector ends
# in aten::mv (whose own time is aten::addmv_'s), two vectors in aten::dot: not matrix products here.
MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm")


def profile_step(step: Callable[[], Any]) -> tuple[str, float]:
    """(the op with the most self CPU time, the share of self CPU time in MATMUL_OPS) over one call of step().

    Self time: the time of an op minus that of the ops it called (aten::linear calls aten::addmm), so
    that the self times of all ops add up to the profiled time once; totals would count it twice.
    """
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    self_time = {row.key: row.self_cpu_time_total for row in prof.key_averages()}
    busiest = max(self_time, key=self_time.get)
    share = sum(t for key, t in self_time.items() if key in MATMUL_OPS) / sum(self_time.values())
    return busiest, float(share)


def epoch_seconds(num_batches: int, load_seconds: float, step_seconds: float, num_workers: int) -> float:
    """Seconds of one epoch of `num_batches` batches, each taking `load_seconds` to load and `step_seconds` to train.

    num_workers == 0: the main process loads a batch, then trains on it, one after the other. With w
    workers, all starting at time 0, worker k loads batches k, k + w, k + 2w, ... back to back (prefetching
    as far ahead as needed), while the main process trains on the batches in order, each once it is
    loaded and the one before it is trained.
    """
    if num_workers == 0:
        return num_batches * (load_seconds + step_seconds)
    done = 0.0
    for i in range(num_batches):
        loaded = (i // num_workers + 1) * load_seconds  # the worker's (i // w + 1)-th batch
        done = max(done, loaded) + step_seconds
    return done

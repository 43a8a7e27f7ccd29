"""helpers.reference.gpu_batch_timing and helpers.timing: devices, batch moves, timing, sweeps, FLOP/s.

Timing on a shared CPU is noisy, so no test asserts a tight time: the slow steps are faked with
sleeps much longer than a real step, and the synchronization is checked by counting calls.
"""

import collections
import copy
import time
import types
from unittest import mock

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import helpers.reference.gpu_batch_timing as reference
from helpers import ranks, timing
from helpers.memory import LiveTensors


class VirtualClock:
    """Replaces the clock behind benchmark.timer() (timeit.default_timer): one microsecond per reading,
    plus what advance() adds. A busy machine then cannot change what the tests measure."""

    def __init__(self):
        self.now = 1000.0

    def read(self):
        self.now += 1e-6
        return self.now

    def advance(self, seconds):
        self.now += seconds


class Probe(nn.Module):
    """Counts forward passes; its k-th (1-based) lasts delays[k] seconds longer on `clock`."""

    def __init__(self, delays=None, input_shape=(4,), clock=None):
        super().__init__()
        self.input_shape = input_shape
        self.linear = nn.Linear(int(torch.tensor(input_shape).prod()), 3)
        self.delays, self.clock = dict(delays or {}), clock
        self.calls, self.shapes = 0, []

    def forward(self, x):
        self.calls += 1
        self.shapes.append(tuple(x.shape))
        if self.clock is not None:
            self.clock.advance(self.delays.get(self.calls, 0.0))
        return self.linear(x.flatten(1))


@pytest.mark.parametrize("cuda, mps, expected", [(True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")])
def test_get_device_prefers_cuda_then_mps_then_cpu(cuda, mps, expected):
    with mock.patch("torch.cuda.is_available", return_value=cuda), \
            mock.patch("torch.backends.mps.is_available", return_value=mps):
        device = reference.get_device()
    assert isinstance(device, torch.device) and device.type == expected


def test_to_device_moves_nested_tensors_and_keeps_everything_else():
    meta = torch.device("meta")
    x = torch.randn(2, 3)
    batch = {"x": x, "pairs": [(torch.ones(1), "a")], "n": 3, "none": None}
    moved = reference.to_device(batch, meta)
    assert moved["x"].device.type == "meta" and moved["x"].shape == (2, 3)
    assert isinstance(moved["pairs"], list) and isinstance(moved["pairs"][0], tuple)
    assert moved["pairs"][0][0].device.type == "meta" and moved["pairs"][0][1] == "a"
    assert moved["n"] == 3 and moved["none"] is None
    assert x.device.type == "cpu"  # the input is not modified


def test_to_device_keeps_namedtuples_and_mapping_subclasses():
    meta = torch.device("meta")
    pair = collections.namedtuple("Pair", ["x", "y"])
    moved = reference.to_device(pair(torch.ones(2), [torch.zeros(1), "id"]), meta)
    assert type(moved) is pair and moved.x.device.type == "meta" and moved.y[0].device.type == "meta"
    assert moved.y[1] == "id"

    ordered = collections.OrderedDict([("b", torch.ones(1)), ("a", torch.zeros(1))])
    moved = reference.to_device(ordered, meta)
    assert type(moved) is collections.OrderedDict and list(moved) == ["b", "a"]
    assert moved["b"].device.type == "meta" and ordered["b"].device.type == "cpu"  # the input is untouched

    counts = collections.defaultdict(list, {"x": torch.ones(3)})
    moved = reference.to_device(counts, meta)
    assert type(moved) is collections.defaultdict and moved.default_factory is list
    assert moved["x"].device.type == "meta" and moved["missing"] == []
    assert "missing" not in counts

    frozen = types.MappingProxyType({"x": torch.ones(1)})  # read-only, built from a dict
    moved = reference.to_device(frozen, meta)
    assert type(moved) is types.MappingProxyType and moved["x"].device.type == "meta"


def test_time_train_step_runs_warmup_plus_repeats_real_steps_and_returns_the_median():
    clock = VirtualClock()
    model = Probe(delays={1: 0.05, 2: 0.05, 4: 0.3}, input_shape=(2, 2), clock=clock)  # slow warm-up, one hiccup
    weight = model.linear.weight.detach().clone()
    with mock.patch("timeit.default_timer", clock.read):
        seconds = reference.time_train_step(model, 6, torch.device("cpu"), warmup=2, repeats=5)
    assert seconds == pytest.approx(1e-6)  # each timed step spans one clock tick; the mean would be 0.06
    assert model.calls == 7 and set(model.shapes) == {(6, 2, 2)}
    assert not torch.equal(weight, model.linear.weight)  # the step really steps


def test_time_train_step_matches_one_sgd_step_per_call():
    """Oracle: the same steps done by hand with torch.optim.SGD(lr=1e-3) give the same weights."""
    torch.manual_seed(0)
    model = Probe()
    oracle = Probe()
    oracle.load_state_dict(model.state_dict())
    torch.manual_seed(1)
    reference.time_train_step(model, 3, torch.device("cpu"), warmup=1, repeats=2)
    torch.manual_seed(1)
    x, y = torch.randn(3, 4), torch.zeros(3, dtype=torch.long)
    optimizer = torch.optim.SGD(oracle.parameters(), lr=reference.LEARNING_RATE)
    for _ in range(3):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(oracle(x), y).backward()
        optimizer.step()
    torch.testing.assert_close(model.linear.weight, oracle.linear.weight)


def test_time_train_step_reads_a_clock_that_synchronizes_the_device_it_times():
    """Every reading goes through helpers.timing.synchronized_timer(device), which waits for that
    device's queue on CUDA and MPS whatever the torch release (tests/test_timing.py)."""
    devices = []

    def clock(device=None):
        devices.append(device)
        return timing.synchronized_timer(device)

    with mock.patch.object(reference, "synchronized_timer", clock):
        reference.time_train_step(Probe(), 2, torch.device("cpu"), warmup=1, repeats=4)
    assert devices == [torch.device("cpu")] * (2 * 4)  # before and after each timed step


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_time_train_step_counts_the_queued_gpu_work():
    class Busy(Probe):
        def __init__(self):
            super().__init__()
            self.register_buffer("big", torch.randn(2048, 2048))

        def forward(self, x):
            for _ in range(40):
                torch.mm(self.big, self.big)
            return super().forward(x)

    cuda = torch.device("cuda")
    model, x = Busy().to(cuda), torch.randn(2, 4, device=cuda)
    model(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    model(x)
    torch.cuda.synchronize()
    work = time.perf_counter() - start
    assert reference.time_train_step(Busy(), 2, cuda, warmup=1, repeats=3) > 0.5 * work


class QueueClock(VirtualClock):
    """A VirtualClock with a queue: queue(s) adds device work that runs after the work queued before it;
    synchronized readings wait for it, bare readings do not (as a GPU's stream)."""

    def __init__(self):
        super().__init__()
        self.busy_until = self.now

    def queue(self, seconds):
        self.busy_until = max(self.busy_until, self.now) + seconds

    def synchronized(self, device=None):
        self.now = max(self.now, self.busy_until)
        return self.read()


class QueueProbe(Probe):
    """Each forward pass: `launch` seconds of Python on the clock, `queued` seconds of device work."""

    def __init__(self, clock, launch, queued):
        super().__init__()
        self.clock_, self.launch, self.queued = clock, launch, queued

    def forward(self, x):
        self.clock_.advance(self.launch)
        self.clock_.queue(self.queued)
        return super().forward(x)


@pytest.mark.parametrize("launch, queued", [(0.002, 0.004), (0.003, 0.001)])
def test_time_throughput_overlaps_python_with_the_device_and_latency_does_not(launch, queued):
    clock = QueueClock()
    with mock.patch.object(reference, "synchronized_timer", clock.synchronized):
        latency = reference.time_train_step(QueueProbe(clock, launch, queued), 4, torch.device("cpu"), 2, 5)
        throughput = reference.time_throughput(QueueProbe(clock, launch, queued), 4, torch.device("cpu"), 2, 8)
    assert latency == pytest.approx(launch + queued, rel=1e-3)
    # the last step's Python, then the queue: max(launch, queued) per step in the long run
    expected = (launch + 8 * queued if queued >= launch else 8 * launch + queued) / 8
    assert throughput == pytest.approx(expected, rel=1e-3)
    assert throughput < latency


def test_batch_size_sweep_times_each_size_through_time_throughput(monkeypatch):
    calls = []

    def fake(model, batch_size, device, warmup, steps):
        calls.append((type(model).__name__, batch_size, warmup, steps))
        return 0.01 * batch_size ** 0.5

    monkeypatch.setattr(reference, "time_throughput", fake)
    results = reference.batch_size_sweep(Probe, [4, 1, 16], torch.device("cpu"), warmup=2, repeats=3)
    assert calls == [("Probe", 4, 2, 3), ("Probe", 1, 2, 3), ("Probe", 16, 2, 3)]
    assert [r["batch_size"] for r in results] == [4, 1, 16]
    for r in results:
        assert r["seconds"] == pytest.approx(0.01 * r["batch_size"] ** 0.5)
        assert r["samples_per_second"] == pytest.approx(r["batch_size"] / r["seconds"])


def test_batch_size_sweep_runs_for_real_on_a_tiny_model():
    results = reference.batch_size_sweep(Probe, [1, 8], torch.device("cpu"), warmup=1, repeats=2)
    assert [r["batch_size"] for r in results] == [1, 8]
    assert all(r["seconds"] > 0 and r["samples_per_second"] > 0 for r in results)


def _results(pairs):
    return [{"batch_size": b, "seconds": b / s, "samples_per_second": s} for b, s in pairs]


def test_find_saturation_is_the_smallest_batch_within_tolerance_of_the_best():
    results = _results([(1, 60.0), (2, 118.0), (4, 230.0), (8, 430.0), (16, 800.0), (32, 950.0),
                        (64, 1000.0), (128, 990.0), (256, 1010.0)])
    assert reference.find_saturation(results) == 32  # 950 * 1.1 >= 1010 > 800 * 1.1
    assert reference.find_saturation(results[::-1]) == 32
    assert reference.find_saturation(results, tolerance=0.3) == 16
    assert reference.find_saturation(results, tolerance=0.0) == 256
    assert reference.find_saturation(_results([(8, 5.0), (2, 5.0), (4, 5.0)])) == 2
    assert reference.find_saturation(_results([(1, 10.0), (2, 50.0), (4, 100.0), (8, 40.0)])) == 4


def test_peak_tflops_reproduces_the_lecture():
    assert reference.peak_tflops(82, 128, 2, 1.695) == pytest.approx(35.58, abs=0.01)  # RTX 3090 FP32
    assert reference.peak_tflops(82, 4, 256, 1.695) == pytest.approx(142.3, abs=0.1)  # its tensor cores
    assert reference.peak_tflops(1, 1, 1, 1000.0) == pytest.approx(1.0)  # 10^12 FLOP/s is 1 TFLOP/s


# --- helpers.timing, which the same notebook uses -------------------------------------------------

def test_matmul_flops_counts_two_per_multiply_add():
    assert timing.matmul_flops(3) == 54


def test_plot_batch_sweep_draws_both_panels_with_the_saturation_line():
    results = _results([(1, 10.0), (2, 19.0), (4, 30.0)])
    figure = timing.plot_batch_sweep(results, saturation=2)
    left, right = figure.axes
    assert left.get_xscale() == "log" and right.get_ylabel() == "samples per second"
    assert len(left.lines) == 2  # the curve and the saturation line
    plt.close(figure)


def test_benchmark_is_torch_utils_benchmark():
    import torch.utils.benchmark

    assert timing.benchmark is torch.utils.benchmark


def _saved_bytes(model, x):
    """What autograd saves in model(x): each storage once, the model's parameters left out."""
    parameters = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved = {}

    def pack(tensor):
        if tensor.untyped_storage().data_ptr() not in parameters:
            saved[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        model(x)
    return sum(saved.values())


@pytest.mark.parametrize("layers", [
    [nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3)],
    [nn.Linear(6, 8), nn.Tanh(), nn.ReLU(), nn.Linear(8, 2)],
    [nn.Linear(6, 4), nn.Linear(4, 7), nn.Tanh()],
], ids=["relu", "tanh-relu", "linear-linear"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_activation_bytes_is_what_autograd_saves(layers, dtype):
    model = nn.Sequential(*layers).to(dtype)
    assert reference.activation_bytes(model, 9, 6) == _saved_bytes(model, torch.randn(9, 6, dtype=dtype))


# --- training craft: float16 with a scaler, the profiler, DataLoader workers ---------------------------

@pytest.mark.skipif(not hasattr(torch.amp, "GradScaler"), reason="torch.amp.GradScaler('cpu') needs torch >= 2.3")
def test_amp_train_step_clips_the_true_gradients_and_skips_an_overflow():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    x, y = 4 * torch.randn(32, 6), torch.randint(0, 3, (32,))
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    before = torch.cat([p.detach().flatten() for p in model.parameters()])
    with torch.no_grad():
        plain_loss = nn.functional.cross_entropy(model(x), y).item()
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 10)
    loss = reference.amp_train_step(model, optimizer, scaler, x, y, max_norm=0.01)
    after = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert isinstance(loss, float) and loss == pytest.approx(plain_loss, rel=0.01)  # not scaled
    assert torch.linalg.vector_norm(after - before).item() == pytest.approx(0.01, rel=1e-3)  # lr=1: the clipped gradient
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 100)  # float16 gradients overflow
    reference.amp_train_step(model, optimizer, scaler, x, y, max_norm=0.01)
    assert torch.equal(torch.cat([p.detach().flatten() for p in model.parameters()]), after)
    assert scaler.get_scale() == 2.0 ** 99


def test_profile_step_finds_the_product_by_its_own_time():
    a, b = torch.randn(256, 4096), torch.randn(4096, 256)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # no operator waits for a busy machine's thread pool
    try:
        with torch.no_grad():
            (a @ b).sum()
            runs = [reference.profile_step(lambda: (a @ b)[0, 0].item()) for _ in range(3)]
    finally:
        torch.set_num_threads(threads)
    assert any(busiest == "aten::mm" and 0.7 < share <= 1.0 for busiest, share in runs), runs


@pytest.mark.parametrize("n, load, step, workers, expected", [
    (10, 0.02, 0.01, 0, 0.3), (10, 0.02, 0.01, 2, 0.12), (10, 0.005, 0.01, 2, 0.105), (7, 0.03, 0.01, 3, 0.10),
    (3, 0.2, 0.05, 8, 0.35)])
def test_epoch_seconds_waits_for_the_first_batch_and_then_the_slower_side(n, load, step, workers, expected):
    assert reference.epoch_seconds(n, load, step, workers) == pytest.approx(expected)


# --- activation checkpointing: memory against recomputation -------------------------------------------------

def _deep_mlp(depth=6, width=32, seed=0):
    torch.manual_seed(seed)
    layers = [nn.Linear(12, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.Tanh()]
    return nn.Sequential(*layers, nn.Linear(width, 5))


def _run_counted(forward, model, x, grad_out):
    """(output, bytes alive after the forward, layer calls in the forward, in the backward, the gradients)."""
    calls = [0] * len(model)
    handles = [layer.register_forward_pre_hook(lambda module, args, i=i: calls.__setitem__(i, calls[i] + 1))
               for i, layer in enumerate(model)]
    try:
        with LiveTensors() as memory:
            out = forward(model, x)
            kept, in_forward = memory.now, list(calls)
            out.backward(grad_out)
    finally:
        for handle in handles:
            handle.remove()
    recomputed = [c - f for c, f in zip(calls, in_forward)]
    return out.detach(), kept, in_forward, recomputed, [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("boundaries", [[0], [0, 5], [0, 2, 7, 9], [0, 1, 2, 3]])
def test_checkpointed_forward_keeps_the_segments_inputs_and_recomputes_each_segment_once(boundaries):
    x = torch.randn(40, 12)
    grad_out = torch.randn(40, 5)
    plain = _run_counted(lambda m, v: m(v), _deep_mlp(), x, grad_out)
    model = _deep_mlp()
    out, kept, in_forward, recomputed, grads = _run_counted(
        lambda m, v: reference.checkpointed_forward(m, v, boundaries), model, x, grad_out)
    torch.testing.assert_close(out, plain[0], rtol=0, atol=0)
    for got, want in zip(grads, plain[4]):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
    assert in_forward == [1] * len(model)
    last = boundaries[-1]
    assert recomputed == [1] * last + [0] * (len(model) - last)
    # kept: the input of every checkpointed segment but the first (x is the caller's), and what the last segment
    # keeps when it runs plainly, its input included when one of its layers keeps it
    inputs, h = 0, x
    with torch.no_grad():
        for start, end in zip(boundaries[:-1], boundaries[1:]):
            inputs += h.numel() * h.element_size() if start else 0
            h = model[start:end](h)
    with LiveTensors() as memory:
        tail_input = h.clone() if last else h
        tail_out = model[last:](tail_input)
        del tail_input
        tail_kept = memory.now
    del tail_out
    assert kept == inputs + tail_kept


# --- data parallelism: a step on every rank against one process on the whole batch ---------------------------

def _batches(sizes_per_step, seed=0):
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for sizes in sizes_per_step:
        x = torch.randn(sum(sizes), 6, generator=generator)
        y = torch.randint(0, 3, (sum(sizes),), generator=generator)
        cuts = torch.tensor([0, *sizes]).cumsum(0).tolist()
        batches.append([(x[a:b], y[a:b]) for a, b in zip(cuts, cuts[1:])])
    return batches


def _one_process(model, batches, learning_rate, momentum):
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=momentum)
    losses = []
    for batch in batches:
        x, y = torch.cat([b[0] for b in batch]), torch.cat([b[1] for b in batch])
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model.state_dict(), losses


@pytest.mark.parametrize("how", [ranks.THREADS, pytest.param(ranks.PROCESSES, marks=pytest.mark.skipif(
    ranks.how_ranks_run() != ranks.PROCESSES, reason="no fork or no loopback network here"))])
@pytest.mark.parametrize("sizes", [[(4, 4), (4, 4)], [(5, 2), (1, 7), (3, 3)], [(2, 3, 4)]])
def test_data_parallel_step_is_one_process_on_the_whole_batch(sizes, how):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(6, 10), nn.Tanh(), nn.Linear(10, 3))
    batches = _batches(sizes)
    results, ran = ranks.run_ranks(ranks.data_parallel_rank, reference.data_parallel_step, model, batches, 0.3, 0.9,
                                   world_size=len(sizes[0]), how=how)
    assert ran == how
    state, losses = _one_process(model, batches, 0.3, 0.9)
    for result in results:
        assert result["losses"] == pytest.approx(losses, rel=1e-5)
        for key, value in state.items():
            torch.testing.assert_close(result["state_dict"][key], value, rtol=1e-5, atol=1e-6)

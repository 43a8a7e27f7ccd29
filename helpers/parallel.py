"""Real multi-process `torch.distributed` runs on one machine's CPU: data and model parallelism.

`launch(worker, *args)` starts `world_size` Python processes (torch.multiprocessing),
joins them into one process group over localhost with the gloo backend, runs
`worker(rank, world_size, *args)` in each and returns what every rank returned, in rank order.
A new process imports its target by module and name, so a function defined in a notebook
cannot be sent; the workers therefore live here. Two workers show the two ways of splitting
training across devices:

- `data_parallel_worker`: every rank holds the whole model and a slice of the batch; the
  gradients are averaged with `all_reduce` (by hand, then with `DistributedDataParallel`);
- `model_parallel_worker`: every rank holds a slice of the model (a "stage"); activations
  travel forward and their gradients travel back with `send`/`recv`, in micro-batches.

On GPUs the same algorithms run with the "nccl" backend and one device per rank; this module
stays on the CPU, where gloo needs nothing but the loopback interface.
"""

from __future__ import annotations

import glob
import io
import os
import socket
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:  # pyplot is imported where a plot is drawn: worker processes never need it
    import matplotlib.pyplot as plt

# Colours of the timeline: what a rank is doing at each moment.
ACTIVITY_COLORS = {"forward": "#3b82f6", "backward": "#f97316", "send": "#a855f7", "wait": "#d1d5db"}


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (the rendezvous port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(worker: Callable[..., Any], *args: Any, world_size: int = 2, timeout_s: float = 60.0) -> list[Any]:
    """Run `worker(rank, world_size, *args)` in `world_size` processes joined by gloo on localhost.

    `worker` must be importable (defined in a module, not in a notebook) and return tensors,
    numbers, strings, lists, tuples and dicts. Every rank receives its own copy of `args`.
    Returns the workers' values in rank order. A worker that raises makes this raise a
    RuntimeError holding every failed rank's traceback, the earliest first; a run longer than
    `timeout_s` seconds is terminated with a `TimeoutError`.
    """
    # Serialized here, so each rank unpickles private copies: torch.multiprocessing would
    # otherwise pass tensors through shared memory, and every rank (and this process) would
    # train one and the same set of weights.
    buffer = io.BytesIO()
    torch.save((worker, args), buffer)
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="torch-distributed-") as result_dir:
        context = mp.start_processes(_run_rank, args=(buffer.getvalue(), world_size, port, result_dir),
                                     nprocs=world_size, join=False, start_method=_start_method())
        deadline = time.monotonic() + timeout_s
        try:
            while not context.join(timeout=0.1):  # True once every rank has exited cleanly
                if time.monotonic() > deadline:
                    for process in context.processes:
                        if process.is_alive():
                            process.terminate()
                        process.join(5)
                    raise TimeoutError(f"the {world_size} ranks of {worker.__name__} did not finish in "
                                       f"{timeout_s:g} s; a rank may be waiting for a message that was never sent")
        except mp.ProcessRaisedException:
            raise RuntimeError(_failure_report(worker.__name__, result_dir)) from None
        return [torch.load(os.path.join(result_dir, f"rank{rank}.pt"), weights_only=True)
                for rank in range(world_size)]


def _failure_report(name: str, result_dir: str) -> str:
    """Every failed rank's traceback, the earliest first: a rank whose peer crashed fails too
    ("Connection closed by peer"), and the peer's error is the one to read."""
    reports = sorted((os.path.getmtime(path), path) for path in glob.glob(os.path.join(result_dir, "rank*.error")))
    parts = []
    for _, path in reports:
        with open(path) as f:
            parts.append(f"--- {os.path.basename(path)[:-len('.error')]} ---\n{f.read()}")
    return f"{name} failed; the first traceback is the cause:\n" + "\n".join(parts)


def _start_method() -> str:
    """"forkserver" where the platform has it (Linux, macOS), else "spawn" (Windows).

    Both start clean processes that import the worker by name (a process forked from a parent
    running threads, as "fork" does, can deadlock). "spawn" pays a fresh `import torch` in every
    rank at every launch; the fork server imports torch once and forks ready ranks from it, so
    after the first launch a run starts in a fraction of a second.
    """
    if "forkserver" not in mp.get_all_start_methods():
        return "spawn"
    # torch._dynamo too: DistributedDataParallel imports it, seconds that each rank would repeat.
    mp.set_forkserver_preload(["torch", "torch.distributed", "torch._dynamo", __name__])
    return "forkserver"


def _run_rank(rank: int, payload: bytes, world_size: int, port: int, result_dir: str) -> None:
    """The body of one rank's process: join the group, run the worker, save its result."""
    worker, args = torch.load(io.BytesIO(payload), weights_only=False)  # our own pickle, from launch()
    os.environ["MASTER_ADDR"] = "127.0.0.1"  # every rank on this machine, over loopback
    os.environ["MASTER_PORT"] = str(port)
    # The ranks share the machine's cores; more threads than cores would make them fight.
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // world_size))
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=60))
    try:
        result = worker(rank, world_size, *args)
        torch.save(result, os.path.join(result_dir, f"rank{rank}.pt"))
    except BaseException:
        with open(os.path.join(result_dir, f"rank{rank}.error"), "w") as f:  # for launch() to report
            f.write(traceback.format_exc())
        raise
    finally:
        dist.destroy_process_group()


def allreduce_worker(rank: int, world_size: int) -> dict[str, Any]:
    """The collective behind data parallelism: every rank ends with the sum of all ranks' tensors."""
    t = torch.full((3,), float(rank + 1))  # rank 0 holds [1, 1, 1], rank 1 holds [2, 2, 2], ...
    before = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return {"rank": rank, "pid": os.getpid(), "before": before, "after": t}


def data_parallel_worker(rank: int, world_size: int, model: nn.Module, x: torch.Tensor, y: torch.Tensor,
                         learning_rate: float, steps: int) -> dict[str, Any]:
    """Train a full copy of `model` on this rank's slice of (x, y), keeping all copies equal.

    x: (N, D_in), y: (N, D_out), N divisible by `world_size`; the loss is the mean squared error,
    so the mean of the ranks' gradients is the gradient of the whole batch.
    Before DDP, every rank but 0 initialises its copy afresh with its own seed (`reset_parameters`),
    as a script that seeded each process differently would: DDP's constructor broadcasts
    rank 0's parameters and buffers, so training starts from rank 0's weights anyway.
    Returns this rank's slice (`rows`), its own gradients at the start (`local_grads`), the
    gradients averaged by hand with all_reduce (`averaged_grads`), its weights just before and
    just after DDP was built (`state_dict_before_ddp`, `state_dict_at_ddp_start`), the loss of its
    slice at each of `steps` SGD steps taken with DistributedDataParallel (`losses`) and the final
    weights (`state_dict`).
    """
    rows = torch.arange(len(x)).tensor_split(world_size)[rank]
    x_local, y_local = x[rows], y[rows]  # (N / world_size, D_in), (N / world_size, D_out)
    params = list(model.parameters())

    # 1. By hand: the gradient of my slice, then the average over the ranks.
    loss = F.mse_loss(model(x_local), y_local)
    local_grads = torch.autograd.grad(loss, params)
    averaged_grads = [g.clone() for g in local_grads]
    for g in averaged_grads:
        dist.all_reduce(g, op=dist.ReduceOp.SUM)  # every rank now holds the sum ...
        g /= world_size  # ... and the mean

    # 2. The same with DDP. Its constructor broadcasts rank 0's parameters and buffers to every
    #    rank; to see that, the other ranks first initialise their copy afresh, with their own seed.
    if rank != 0:
        torch.manual_seed(rank)
        for module in model.modules():
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
    before_ddp = {key: value.clone() for key, value in model.state_dict().items()}
    # broadcast_buffers=True (the default) also sends rank 0's buffers (BatchNorm's running
    # statistics) at every forward; the gradients are all-reduced during backward(), bucket by
    # bucket, while the rest of backward still runs.
    ddp_model = nn.parallel.DistributedDataParallel(model)
    at_ddp_start = {key: value.clone() for key, value in model.state_dict().items()}
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=learning_rate)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(ddp_model(x_local), y_local)
        loss.backward()  # the gradients arrive already averaged over the ranks
        optimizer.step()
        step_loss = loss.item()  # this rank's slice only
        losses.append(step_loss)
    return {"rank": rank, "rows": rows, "local_grads": list(local_grads), "averaged_grads": averaged_grads,
            "state_dict_before_ddp": before_ddp, "state_dict_at_ddp_start": at_ddp_start,
            "losses": losses, "state_dict": dict(model.state_dict())}


def model_parallel_worker(rank: int, world_size: int, stages: Sequence[nn.Module], x: torch.Tensor,
                          y: torch.Tensor, microbatch_counts: Sequence[int]) -> list[dict[str, Any]]:
    """Rank r holds `stages[r]` only; one forward and backward pass of the whole batch per count.

    x: (N, D_in) enters stage 0; the last stage's output is compared with y: (N, D_out) by the
    mean squared error. The batch is cut into m micro-batches (m from `microbatch_counts`): all
    forwards, then all backwards (the GPipe schedule), so that while rank 1 works on micro-batch
    i, rank 0 can already work on i + 1. Activations are 2-D, (rows, features).
    Returns, per m: this stage's gradients (`grads`, in `parameters()` order), the loss (last
    rank; None elsewhere), the bytes this rank sent, and a timeline of (activity, micro-batch,
    start, end) with activity in ACTIVITY_COLORS and times from `time.perf_counter()`.
    """
    stage = stages[rank]
    # The first pass is a warm-up that is not returned: the first backward() of a process pays
    # one-off costs (autograd's worker thread, memory allocation) that are not parallelism.
    counts = [microbatch_counts[0], *microbatch_counts]
    return [_pipeline_pass(rank, world_size, stage, x, y, m) for m in counts][1:]


def _pipeline_pass(rank: int, world_size: int, stage: nn.Module, x: torch.Tensor, y: torch.Tensor,
                   m: int) -> dict[str, Any]:
    """One forward and backward pass of this rank's stage over m micro-batches (see above)."""
    first, last = rank == 0, rank == world_size - 1
    stage.zero_grad(set_to_none=True)
    xs, ys = x.tensor_split(m), y.tensor_split(m)
    events: list[tuple[str, int, float, float]] = []
    inputs, outputs = [], []
    total_loss, bytes_sent = 0.0, 0

    def send(t: torch.Tensor, dst: int, i: int) -> None:
        nonlocal bytes_sent
        start = time.perf_counter()
        dist.send(torch.tensor(t.shape), dst=dst)  # the shape first, so the receiver can allocate
        dist.send(t.contiguous(), dst=dst)
        bytes_sent += t.numel() * t.element_size()
        events.append(("send", i, start, time.perf_counter()))

    def recv(src: int, i: int) -> torch.Tensor:
        start = time.perf_counter()
        shape = torch.empty(2, dtype=torch.int64)
        dist.recv(shape, src=src)
        t = torch.empty(*shape.tolist())
        dist.recv(t, src=src)
        events.append(("wait", i, start, time.perf_counter()))
        return t

    dist.barrier()  # start together
    for i in range(m):  # forward, micro-batch after micro-batch
        inp = xs[i] if first else recv(rank - 1, i).requires_grad_()
        start = time.perf_counter()
        out = stage(inp)
        if last:  # scale each micro-batch's mean so that the sum is the whole batch's mean
            out = F.mse_loss(out, ys[i]) * (len(ys[i]) / len(y))
            total_loss += out.item()
        events.append(("forward", i, start, time.perf_counter()))
        if not last:
            send(out.detach(), rank + 1, i)
        inputs.append(inp)
        outputs.append(out)
    for i in range(m):  # backward: gradients flow from the last stage to the first
        grad_out = None if last else recv(rank + 1, i)
        start = time.perf_counter()
        outputs[i].backward(grad_out)  # accumulates into this stage's .grad
        events.append(("backward", i, start, time.perf_counter()))
        if not first:
            send(inputs[i].grad, rank - 1, i)
    return {"microbatches": m, "grads": [p.grad.clone() for p in stage.parameters()],
            "loss": total_loss if last else None, "bytes_sent": bytes_sent, "events": events}


def draw_strategies(world_size: int = 2) -> plt.Figure:
    """A sketch of the two ways to split training over devices, data parallel and model parallel."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    box = {"boxstyle": "round,pad=0.4", "edgecolor": "#334155"}
    arrow = {"arrowstyle": "-|>", "color": "#475569", "lw": 1.3}
    both = {"arrowstyle": "<|-|>", "color": "#a855f7", "lw": 1.5}
    ranks_x = [0.25 + 0.5 * r / max(1, world_size - 1) for r in range(world_size)]

    ax = axes[0]
    for r, x in enumerate(ranks_x):
        ax.text(x, 0.88, f"batch slice {r + 1} of {world_size}", ha="center", fontsize=8)
        ax.text(x, 0.55, f"rank {r}\nlayer 1\nlayer 2\n(full copy)", ha="center", va="center", fontsize=9,
                bbox={**box, "facecolor": "#bfdbfe"})
        ax.annotate("", xy=(x, 0.72), xytext=(x, 0.85), arrowprops=arrow)
    ax.annotate("", xy=(ranks_x[-1] - 0.12, 0.55), xytext=(ranks_x[0] + 0.12, 0.55), arrowprops=both)
    ax.text(0.5, 0.6, "gradients", ha="center", fontsize=8)
    ax.text(0.5, 0.12, "all-reduce: average the gradients\n(every step, size of the model)", ha="center",
            fontsize=8, color="#7e22ce")
    ax.set_title("data parallel: split the batch", fontsize=10)

    ax = axes[1]
    for r, x in enumerate(ranks_x):
        ax.text(x, 0.55, f"rank {r}\nlayer {r + 1}", ha="center", va="center", fontsize=9,
                bbox={**box, "facecolor": "#bbf7d0"})
    ax.text(ranks_x[0], 0.88, "whole batch", ha="center", fontsize=8)
    ax.annotate("", xy=(ranks_x[0], 0.66), xytext=(ranks_x[0], 0.85), arrowprops=arrow)
    ax.annotate("", xy=(ranks_x[-1] - 0.1, 0.6), xytext=(ranks_x[0] + 0.1, 0.6), arrowprops=arrow)
    ax.annotate("", xy=(ranks_x[0] + 0.1, 0.48), xytext=(ranks_x[-1] - 0.1, 0.48), arrowprops=arrow)
    ax.text(0.5, 0.66, "activations", ha="center", fontsize=8)
    ax.text(0.5, 0.38, "their gradients", ha="center", fontsize=8)
    ax.text(0.5, 0.12, "send / recv between neighbours\n(every micro-batch, size of the activations)",
            ha="center", fontsize=8, color="#7e22ce")
    ax.set_title("model parallel: split the layers", fontsize=10)
    for ax in axes:
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.axis("off")
    fig.tight_layout()
    return fig


def plot_timeline(events_by_rank: Sequence[Sequence[tuple[str, int, float, float]]], title: str = "",
                  ax: plt.Axes | None = None) -> plt.Axes:
    """One row per rank: when it computed (forward, backward), sent, or waited for a message.

    `events_by_rank[r]` is rank r's list of (activity, micro-batch, start, end) in seconds of one
    shared clock; the plot starts at the earliest event. Gaps and grey bars are idle time.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.8 + 0.6 * len(events_by_rank)))
    t0 = min(start for events in events_by_rank for _, _, start, _ in events)
    for rank, events in enumerate(events_by_rank):
        for activity, i, start, end in events:
            ax.broken_barh([((start - t0) * 1e3, (end - start) * 1e3)], (rank - 0.35, 0.7),
                           facecolors=ACTIVITY_COLORS[activity], edgecolor="white", linewidth=0.5)
            if activity in ("forward", "backward") and (end - start) * 1e3 > 0.04 * _span_ms(events_by_rank):
                ax.text((start + end - 2 * t0) / 2 * 1e3, rank, str(i), ha="center", va="center",
                        fontsize=8, color="white")
    ax.set_yticks(range(len(events_by_rank)), [f"rank {r}" for r in range(len(events_by_rank))])
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ACTIVITY_COLORS.values()]
    ax.legend(handles, ACTIVITY_COLORS.keys(), ncol=4, fontsize=8, loc="upper right", bbox_to_anchor=(1, 1.35))
    ax.set_title(title, fontsize=10, loc="left")
    return ax


def _span_ms(events_by_rank: Sequence[Sequence[tuple[str, int, float, float]]]) -> float:
    starts = [s for events in events_by_rank for _, _, s, _ in events]
    ends = [e for events in events_by_rank for _, _, _, e in events]
    return (max(ends) - min(starts)) * 1e3


def utilization(events_by_rank: Sequence[Sequence[tuple[str, int, float, float]]]) -> list[float]:
    """Per rank, the share of the whole run (first event of any rank to last) spent computing."""
    span_ms = _span_ms(events_by_rank)
    return [sum(e - s for activity, _, s, e in events if activity in ("forward", "backward")) * 1e3 / span_ms
            for events in events_by_rank]

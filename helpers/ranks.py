"""Run a function as every rank of a process group, from a notebook: processes where the machine allows it,
threads otherwise (nothing here is graded).

`run_ranks(worker, *args)` runs `worker(rank, world_size, *args)` once per rank and returns what each
returned, in rank order, with how it ran:

- **processes**: on Linux with a working loopback network (a laptop, Colab, a cluster node), each rank is
  a process forked from this one, joined to the others by `torch.distributed` with the gloo backend. A
  forked process starts with this one's memory, so `worker` may be a function defined in a notebook
  (`helpers.parallel.launch` starts clean processes, which must import their worker by name);
- **threads**: elsewhere (Windows and macOS, which do not fork safely; a machine without a network, such
  as a grading sandbox), each rank is a thread of this process, and the collectives of `torch.distributed`
  (`all_reduce`, `all_gather`, `broadcast`, `reduce`, `barrier`, `get_rank`, `get_world_size`...) are
  played by `ThreadGroup`, with the same results: every rank waits in a collective until all have joined
  it, and the sums of floating-point tensors are taken in rank order.

Each rank gets its own copy of `args` in both cases: a forked process by nature, a thread by a deep copy.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import multiprocessing
import os
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import torch
import torch.distributed as dist

from helpers.parallel import free_port

PROCESSES, THREADS = "processes", "threads"


def loopback_works() -> bool:
    """True when a TCP connection to 127.0.0.1 succeeds (gloo's ranks meet there)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=2):
                return True
    except OSError:
        return False


def how_ranks_run() -> str:
    """PROCESSES where this machine can fork ranks that meet over the loopback network, else THREADS."""
    forks = sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()
    return PROCESSES if forks and loopback_works() else THREADS


def run_ranks(worker: Callable[..., Any], *args: Any, world_size: int = 2, timeout_s: float = 60.0,
              how: str | None = None) -> tuple[list[Any], str]:
    """(what `worker(rank, world_size, *args)` returned on each rank, in rank order; PROCESSES or THREADS).

    `how` forces one way (default: `how_ranks_run()`). A rank that raises makes this raise a RuntimeError
    with its traceback; ranks still running after `timeout_s` seconds make it raise a TimeoutError.
    """
    how = how or how_ranks_run()
    if how == PROCESSES:
        return _in_processes(worker, args, world_size, timeout_s), PROCESSES
    return ThreadGroup(world_size, timeout_s).run(worker, *args), THREADS


# -- processes ------------------------------------------------------------------------------------------------

def _in_processes(worker, args, world_size: int, timeout_s: float) -> list[Any]:
    context = multiprocessing.get_context("fork")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="ranks-") as folder:
        processes = [context.Process(target=_forked_rank, args=(rank, world_size, port, folder, worker, args),
                                     daemon=True) for rank in range(world_size)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(timeout_s)
        if any(process.is_alive() for process in processes):
            for process in processes:
                process.kill()
                process.join()
            raise TimeoutError(f"the {world_size} ranks of {worker.__name__} did not finish in {timeout_s:g} s: "
                               "a rank may wait in a collective that another rank never called")
        # the earliest error first: a rank whose peer crashed fails too ("Connection closed by peer")
        errors = sorted((os.path.getmtime(os.path.join(folder, name)), name) for name in os.listdir(folder)
                        if name.endswith(".error"))
        if errors:
            name = errors[0][1]
            with open(os.path.join(folder, name)) as f:
                raise RuntimeError(f"{worker.__name__} failed on rank {name[4:-6]}:\n{f.read()}")
        return [torch.load(os.path.join(folder, f"rank{rank}.pt"), weights_only=True) for rank in range(world_size)]


def _forked_rank(rank: int, world_size: int, port: int, folder: str, worker, args) -> None:
    """One rank's process: join the gloo group over loopback, run the worker, save what it returned."""
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    torch.set_num_threads(1)  # as a DataLoader worker does: OpenMP is not safe to use across a fork with more
    try:
        dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=60))
        torch.save(worker(rank, world_size, *args), os.path.join(folder, f"rank{rank}.pt"))
    except BaseException:  # written before the group closes, so that the peers' errors come after it
        with open(os.path.join(folder, f"rank{rank}.error"), "w") as f:
            f.write(traceback.format_exc())
        os._exit(1)
    dist.destroy_process_group()


# -- threads --------------------------------------------------------------------------------------------------

class _Work:
    """What a collective called with async_op=True returns: it is already done."""

    def wait(self, *args, **kwargs):
        return True

    def is_completed(self):
        return True


def _reduced(values: list[torch.Tensor], op) -> torch.Tensor:
    """The reduction of the ranks' tensors by `op`, taken in rank order."""
    if op == dist.ReduceOp.SUM or op == dist.ReduceOp.AVG:
        total = values[0].clone()
        for value in values[1:]:
            total += value
        return total / len(values) if op == dist.ReduceOp.AVG else total
    if op == dist.ReduceOp.PRODUCT:
        return functools.reduce(torch.mul, values)
    if op == dist.ReduceOp.MIN:
        return functools.reduce(torch.minimum, values)
    if op == dist.ReduceOp.MAX:
        return functools.reduce(torch.maximum, values)
    raise ValueError(f"the ranks' stand-in collectives reduce with SUM, AVG, PRODUCT, MIN or MAX, not {op}")


class ThreadGroup:
    """torch.distributed's collectives for ranks that are threads of one process.

    `run(worker, *args)` runs `worker(rank, world_size, *copy of args)` in one thread per rank while the
    functions of `torch.distributed` named in COLLECTIVES (and any name a worker's module bound to them)
    are this group's: each call waits until every rank has made it, then gives every rank its result.
    A rank that fails, or waits `timeout_s` seconds for the others, fails every rank still waiting.
    """

    COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "broadcast",
                   "reduce", "barrier", "get_rank", "get_world_size", "is_initialized", "is_available")

    def __init__(self, world_size: int = 2, timeout_s: float = 60.0):
        self.world_size = world_size
        self._barrier = threading.Barrier(world_size, timeout=timeout_s)
        self._slots: list[Any] = [None] * world_size
        self._local = threading.local()

    # the collectives, as torch.distributed names them ---------------------------------------------------------

    def get_rank(self, group=None) -> int:
        rank = getattr(self._local, "rank", None)
        if rank is None:
            raise ValueError("Default process group has not been initialized: call this from a rank's worker")
        return rank

    def get_world_size(self, group=None) -> int:
        self.get_rank()
        return self.world_size

    def is_initialized(self) -> bool:
        return getattr(self._local, "rank", None) is not None

    def is_available(self) -> bool:
        return True

    def barrier(self, group=None, async_op=False, device_ids=None):
        self._exchange(None)
        return _Work() if async_op else None

    def all_reduce(self, tensor, op=dist.ReduceOp.SUM, group=None, async_op=False):
        result = _reduced(self._exchange(tensor.detach().clone()), op)
        with torch.no_grad():  # as a collective does: not an operation autograd records
            tensor.copy_(result)
        return _Work() if async_op else None

    def reduce(self, tensor, dst, op=dist.ReduceOp.SUM, group=None, async_op=False):
        result = _reduced(self._exchange(tensor.detach().clone()), op)
        if self.get_rank() == dst:
            with torch.no_grad():
                tensor.copy_(result)
        return _Work() if async_op else None

    def broadcast(self, tensor, src, group=None, async_op=False):
        values = self._exchange(tensor.detach().clone() if self.get_rank() == src else None)
        with torch.no_grad():
            tensor.copy_(values[src])
        return _Work() if async_op else None

    def all_gather(self, tensor_list, tensor, group=None, async_op=False):
        values = self._exchange(tensor.detach().clone())
        if len(tensor_list) != self.world_size:
            raise ValueError(f"all_gather: tensor_list holds {len(tensor_list)} tensors for {self.world_size} ranks")
        with torch.no_grad():
            for out, value in zip(tensor_list, values):
                out.copy_(value)
        return _Work() if async_op else None

    def all_gather_into_tensor(self, output_tensor, input_tensor, group=None, async_op=False):
        values = self._exchange(input_tensor.detach().clone())
        with torch.no_grad():
            output_tensor.copy_(torch.cat(values).reshape(output_tensor.shape))
        return _Work() if async_op else None

    def all_gather_object(self, object_list, obj, group=None):
        object_list[:] = self._exchange(copy.deepcopy(obj))

    # running the ranks ------------------------------------------------------------------------------------

    def _exchange(self, value) -> list:
        """Every rank's `value`, in rank order, once every rank has given its own."""
        self._slots[self.get_rank()] = value
        self._wait()
        values = list(self._slots)
        self._wait()  # every rank has read them before the next collective writes again
        return values

    def _wait(self) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise RuntimeError("a collective was left waiting: another rank failed, or called a different "
                               "collective, or none") from None

    def run(self, worker: Callable[..., Any], *args: Any) -> list[Any]:
        """worker(rank, world_size, *args) in one thread per rank; what each returned, in rank order."""
        results: list[Any] = [None] * self.world_size
        errors: list[tuple[int, BaseException, str]] = []
        copies = [copy.deepcopy(args) for _ in range(self.world_size)]

        def rank_body(rank: int) -> None:
            self._local.rank = rank
            try:
                results[rank] = worker(rank, self.world_size, *copies[rank])
            except BaseException as error:  # noqa: BLE001 - reported below, with the others' waits ended
                errors.append((rank, error, traceback.format_exc()))
                self._barrier.abort()

        threads = [threading.Thread(target=rank_body, args=(rank,), name=f"rank {rank}")
                   for rank in range(self.world_size)]
        with self.active(worker, *(arg for arg in args if callable(arg))):
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        if errors:  # the rank that failed first, not one that was only left waiting for it
            rank, error, text = min(errors, key=lambda e: "left waiting" in str(e[1]))
            raise RuntimeError(f"{getattr(worker, '__name__', 'the worker')} failed on rank {rank}:\n{text}") from error
        return results

    @contextlib.contextmanager
    def active(self, *functions):
        """While inside: torch.distributed's collectives are this group's, and so are the names that the
        globals of `functions` bound to them (`from torch.distributed import all_reduce`)."""
        real = {getattr(dist, name): getattr(self, name) for name in self.COLLECTIVES if hasattr(dist, name)}
        patches = [mock.patch.object(dist, name, getattr(self, name)) for name in self.COLLECTIVES]
        for function in functions:
            names = getattr(function, "__globals__", {})
            bound = {key: real[value] for key, value in names.items() if _is_one_of(value, real)}
            if bound:
                patches.append(mock.patch.dict(names, bound))
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            yield self


def _is_one_of(value, functions: dict) -> bool:
    try:
        return callable(value) and value in functions
    except TypeError:  # unhashable
        return False


def data_parallel_rank(rank: int, world_size: int, step: Callable[..., Any], model: torch.nn.Module,
                       batches: list, learning_rate: float, momentum: float = 0.9) -> dict[str, Any]:
    """One rank of a data-parallel run: SGD(learning_rate, momentum) over this rank's copy of `model`, then
    `step(model, optimizer, x, y)` on the rank's own slice (x, y) = batches[k][rank] of each batch k.

    Returns {"state_dict": the weights after the last step, "losses": what each call of step returned}.
    """
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=momentum)
    losses = [_plain(step(model, optimizer, *batch[rank])) for batch in batches]
    return {"state_dict": {key: value.detach().clone() for key, value in model.state_dict().items()},
            "losses": losses}


def _plain(value: Any) -> Any:
    """A number or a tensor as it is (a NumPy number as a float); anything else by its type's name."""
    if isinstance(value, (bool, int, float, torch.Tensor)):
        return value if not isinstance(value, float) else float(value)
    return f"a {type(value).__name__}"

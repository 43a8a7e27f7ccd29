"""helpers.ranks: ranks as forked gloo processes or as threads with stand-in collectives, alike."""

from __future__ import annotations

import pytest
import torch
import torch.distributed as dist
from torch.distributed import all_reduce as bound_all_reduce

from helpers import ranks

HOWS = [ranks.THREADS, pytest.param(ranks.PROCESSES, marks=pytest.mark.skipif(
    ranks.how_ranks_run() != ranks.PROCESSES, reason="no fork or no loopback network here"))]


def collectives(rank, world_size):
    """Every collective the stand-in plays, on values that tell the ranks apart."""
    t = torch.full((2,), float(rank + 1))
    summed, averaged, largest = t.clone(), t.clone(), t.clone()
    dist.all_reduce(summed)
    dist.all_reduce(averaged, op=dist.ReduceOp.AVG)
    dist.all_reduce(largest, op=dist.ReduceOp.MAX)
    gathered = [torch.zeros(2) for _ in range(world_size)]
    dist.all_gather(gathered, t)
    source = t.clone()
    dist.broadcast(source, src=1)
    reduced = t.clone()
    dist.reduce(reduced, dst=0)
    dist.barrier()
    bound = t.clone()
    bound_all_reduce(bound)  # a name bound at import
    return {"rank": dist.get_rank(), "world": dist.get_world_size(), "sum": summed, "avg": averaged,
            "max": largest, "gathered": torch.stack(gathered), "broadcast": source, "reduced": reduced, "bound": bound}


@pytest.mark.parametrize("how", HOWS)
def test_the_collectives_give_every_rank_the_same_as_gloo(how):
    results, ran = ranks.run_ranks(collectives, world_size=3, how=how)
    assert ran == how
    for rank, r in enumerate(results):
        assert (r["rank"], r["world"]) == (rank, 3)
        assert r["sum"].tolist() == r["bound"].tolist() == [6.0, 6.0]
        assert r["avg"].tolist() == [2.0, 2.0] and r["max"].tolist() == [3.0, 3.0]
        assert r["gathered"].tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]
        assert r["broadcast"].tolist() == [2.0, 2.0]
    assert results[0]["reduced"].tolist() == [6.0, 6.0]  # only dst's is defined: gloo leaves partial sums elsewhere


def fails_on_rank_1(rank, world_size):
    if rank == 1:
        raise ValueError("marker of rank 1")
    dist.barrier()  # left waiting for rank 1
    return rank


@pytest.mark.parametrize("how", HOWS)
def test_a_failing_rank_is_named_with_its_own_error(how):
    with pytest.raises(RuntimeError, match="(?s)rank.?1.*marker of rank 1"):
        ranks.run_ranks(fails_on_rank_1, how=how, timeout_s=20)


def skips_a_collective(rank, world_size):
    if rank == 0:
        dist.barrier()
    return rank


def test_a_rank_that_never_joins_a_collective_fails_the_run_after_the_timeout():
    with pytest.raises(RuntimeError, match="left waiting"):
        ranks.ThreadGroup(2, timeout_s=0.5).run(skips_a_collective)


def test_each_thread_rank_gets_its_own_copy_of_the_arguments():
    def grow(rank, world_size, t):
        t += rank + 1
        return t

    shared = torch.zeros(1)
    results, _ = ranks.run_ranks(grow, shared, how=ranks.THREADS)
    assert [r.item() for r in results] == [1.0, 2.0] and shared.item() == 0.0


def test_outside_a_rank_the_stand_in_says_there_is_no_group():
    group = ranks.ThreadGroup(2)
    with group.active(), pytest.raises(ValueError, match="not been initialized"):
        dist.get_rank()

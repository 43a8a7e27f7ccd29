"""helpers.parallel: real two-process gloo runs give the single-process answers."""

from __future__ import annotations

import copy
import socket

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers.parallel import (
    allreduce_worker,
    data_parallel_worker,
    free_port,
    launch,
    model_parallel_worker,
    plot_timeline,
    utilization,
)


def test_free_port_can_be_bound():
    port = free_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", port))


def test_utilization_and_timeline_from_made_up_events():
    events = [[("forward", 0, 0.0, 1.0), ("wait", 0, 1.0, 3.0), ("backward", 0, 3.0, 4.0)],
              [("wait", 0, 0.0, 1.0), ("forward", 0, 1.0, 2.0), ("backward", 0, 2.0, 3.0), ("send", 0, 3.0, 3.5)]]
    assert utilization(events) == pytest.approx([0.5, 0.5])
    ax = plot_timeline(events, title="test")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rank 0", "rank 1"]
    plt.close("all")


@pytest.mark.slow
def test_allreduce_sums_across_two_processes():
    results = launch(allreduce_worker, world_size=2)
    assert [r["rank"] for r in results] == [0, 1]
    assert results[0]["pid"] != results[1]["pid"]
    for r in results:
        assert r["after"].tolist() == [3.0, 3.0, 3.0]


@pytest.mark.slow
def test_data_parallel_matches_one_process_and_leaves_the_callers_model_alone():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 2))
    before = copy.deepcopy(model.state_dict())
    x, y = torch.randn(16, 6), torch.randn(16, 2)
    learning_rate, steps = 0.1, 5

    ranks = launch(data_parallel_worker, model, x, y, learning_rate, steps)

    for key, value in model.state_dict().items():  # the ranks trained copies, not our weights
        assert torch.equal(value, before[key]), "launch() must give each rank its own copy of the arguments"
    assert ranks[0]["rows"].tolist() == list(range(8)) and ranks[1]["rows"].tolist() == list(range(8, 16))

    # DDP's constructor made rank 1's freshly initialised copy equal to rank 0's, that is to the caller's model.
    for key, value in model.state_dict().items():
        assert torch.equal(ranks[0]["state_dict_before_ddp"][key], value)
        assert not torch.equal(ranks[1]["state_dict_before_ddp"][key], value), "rank 1 should start from its own initialisation"
        for r in ranks:
            assert torch.equal(r["state_dict_at_ddp_start"][key], value), "DDP broadcasts rank 0's weights"

    reference = copy.deepcopy(model)
    F.mse_loss(reference(x), y).backward()
    for got, expected in zip(ranks[0]["averaged_grads"], [p.grad for p in reference.parameters()]):
        torch.testing.assert_close(got, expected)
    assert not torch.allclose(ranks[0]["local_grads"][0], ranks[1]["local_grads"][0]), \
        "each rank's own gradient comes from its own rows and should differ"

    reference.zero_grad()
    optimizer = torch.optim.SGD(reference.parameters(), lr=learning_rate)
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(reference(x), y).backward()
        optimizer.step()
    for key, value in reference.state_dict().items():
        assert torch.equal(ranks[0]["state_dict"][key], ranks[1]["state_dict"][key])
        torch.testing.assert_close(ranks[0]["state_dict"][key], value, rtol=1e-5, atol=1e-6)
    assert len(ranks[0]["losses"]) == steps


@pytest.mark.slow
def test_model_parallel_gradients_match_one_process():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
    stages = [model[:2], model[2:]]
    x, y = torch.randn(12, 6), torch.randn(12, 3)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    expected = [[p.grad.clone() for p in stage.parameters()] for stage in stages]

    ranks = launch(model_parallel_worker, stages, x, y, [1, 3])

    for k, m in enumerate([1, 3]):
        for rank in (0, 1):
            result = ranks[rank][k]
            assert result["microbatches"] == m
            for got, want in zip(result["grads"], expected[rank]):
                torch.testing.assert_close(got, want)
            activities = {event[0] for event in result["events"]}
            assert {"forward", "backward"} <= activities
            assert [e[1] for e in result["events"] if e[0] == "forward"] == list(range(m))
        assert ranks[1][k]["loss"] == pytest.approx(loss.item(), rel=1e-5)
        assert ranks[0][k]["loss"] is None
        # rank 0 sends activations (12 x 10 floats), rank 1 sends their gradients (the same size)
        assert ranks[0][k]["bytes_sent"] == ranks[1][k]["bytes_sent"] == 12 * 10 * 4


@pytest.mark.slow
def test_a_failing_rank_raises_in_the_caller():
    # world_size 2 but one stage: rank 1 has nothing to run and raises IndexError.
    with pytest.raises(RuntimeError, match=r"(?s)failed; the first traceback is the cause:\n--- rank1 ---.*IndexError"):
        launch(model_parallel_worker, [nn.Linear(2, 2)], torch.randn(4, 2), torch.randn(4, 2), [1], timeout_s=60)


@pytest.mark.slow
def test_a_run_past_its_time_limit_is_stopped():
    model = nn.Linear(2, 2)
    with pytest.raises(TimeoutError, match="did not finish"):
        launch(data_parallel_worker, model, torch.randn(4, 2), torch.randn(4, 2), 0.1, 10**7, timeout_s=1)

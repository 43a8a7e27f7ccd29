"""06's challenge: the spirals generator, the stated rules, and the accuracies the grader's thresholds sit between.

The thresholds (90, 93, 94.5 % on the mean of three spirals) must be out of reach for a linear model and
within reach of the reference under the budget; the same seed must give the same score (one thread, seeded
generators); the size budget counts what the forward pass reads, and the training batches reach the kernel one
at a time from the trusted side, which counts them.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from probe_harness import probe_module
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.data import spirals
from helpers.reference.data_loading import build_challenge_model, train_challenge

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "source" / "06_data_loading" / "06_data_loading.ipynb"


def accuracy_after_training(build, train, seed: int) -> tuple[float, torch.Tensor]:
    """The grader's procedure on spirals(seed): its training points, batch size and held-out points, one thread."""
    probe = probe_module("06_data_loading")
    n, n_test = probe.CHALLENGE_N, probe.CHALLENGE_TEST_N
    x, y = (torch.from_numpy(a) for a in spirals(n + n_test, seed=seed))
    torch.manual_seed(seed)
    model = build(2, 3)
    loader = DataLoader(TensorDataset(x[:n], y[:n]), batch_size=probe.CHALLENGE_BATCH_SIZE, shuffle=True,
                        generator=torch.Generator().manual_seed(seed))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = train(model, loader, torch.device("cpu")).eval()
        with torch.no_grad():
            predictions = model(x[n:]).argmax(dim=1)
    finally:
        torch.set_num_threads(threads)
    return (predictions == y[n:]).double().mean().item(), predictions


def test_spirals_shapes_range_and_labels():
    x, y = spirals(600, seed=3)
    assert x.shape == (600, 2) and x.dtype == np.float32
    assert y.shape == (600,) and y.dtype == np.int64
    assert set(np.unique(y)) == {0, 1, 2}
    assert np.all(np.linalg.norm(x, axis=1) <= 1.0 + 1e-6)
    assert np.bincount(y).min() > 150  # classes drawn uniformly
    x4, y4 = spirals(50, seed=3, num_classes=4)
    assert set(np.unique(y4)) <= {0, 1, 2, 3} and x4.shape == (50, 2)


def test_spirals_one_seed_one_problem():
    a, b = spirals(200, seed=7), spirals(200, seed=7)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    other = spirals(200, seed=8)
    assert not np.array_equal(a[0], other[0])


def test_spirals_another_seed_turns_the_picture():
    """The mean direction of class 0's outer points moves with the seed: the grader's spiral is not the notebook's."""
    def outer_direction(seed):
        x, y = spirals(3000, seed=seed, noise=0.0)
        outer = x[(y == 0) & (np.linalg.norm(x, axis=1) > 0.9)]
        return np.arctan2(outer[:, 1].mean(), outer[:, 0].mean())

    assert abs(np.angle(np.exp(1j * (outer_direction(0) - outer_direction(60688))))) > 0.3


def test_spirals_rejects_bad_sizes():
    with pytest.raises(ValueError, match="n >= 1"):
        spirals(0, seed=0)
    with pytest.raises(ValueError, match="num_classes >= 2"):
        spirals(10, seed=0, num_classes=1)


def test_the_notebook_states_the_rules_the_probe_enforces():
    cell = next(c for c in json.loads(NOTEBOOK.read_text())["cells"]
                if c["metadata"].get("nbgrader", {}).get("grade_id") == "challenge_tools")
    stated = {node.targets[0].id: ast.literal_eval(node.value) for node in ast.parse("".join(cell["source"])).body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    probe = probe_module("06_data_loading")
    for name in ("CHALLENGE_MAX_SIZE", "CHALLENGE_MAX_BATCHES", "CHALLENGE_BATCH_SIZE"):
        assert stated[name] == getattr(probe, name), name
    assert sum(t.numel() for t in build_challenge_model(2, 3).state_dict().values()) <= probe.CHALLENGE_MAX_SIZE
    # "How it is graded" says how many spirals, training points and held-out points the grader uses.
    graded = next("".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"]
                  if "How it is graded" in "".join(c["source"])).replace("\n", " ")
    count = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}[probe.CHALLENGE_DRAWS]
    for words in (f"draws {count} spirals", f"on {probe.CHALLENGE_N:,} of its points",
                  f"how many of {probe.CHALLENGE_TEST_N:,} *other* points", f"**mean** of the {count} accuracies"):
        assert words in graded, words


def test_the_reference_clears_the_top_tier_by_more_than_the_graders_measure_can_err():
    """The tiers judge an accuracy measured on held-out points, so the measure errs by chance: its binomial
    sampling error at the top tier, over CHALLENGE_DRAWS * CHALLENGE_TEST_N points. The reference must sit
    at least four such errors above the tier, or it loses the tier on some of the grader's draws (it did,
    with 2,000 held-out points per spiral: 94.4 % on one draw of `make course`)."""
    probe = probe_module("06_data_loading")
    top = max(probe.CHALLENGE_TIERS.values())
    error = math.sqrt(top * (1 - top) / (probe.CHALLENGE_DRAWS * probe.CHALLENGE_TEST_N))
    accuracies = [accuracy_after_training(build_challenge_model, train_challenge, seed=seed)[0] for seed in (11, 12, 13)]
    margin = sum(accuracies) / 3 - top
    assert margin >= 4 * error, (f"the reference is {margin:.2%} above the top tier; the grader's measure errs by "
                                 f"{error:.2%} (one standard error)", accuracies)


def test_the_reference_scores_the_same_twice():
    first, predictions = accuracy_after_training(build_challenge_model, train_challenge, seed=11)
    again, predictions_again = accuracy_after_training(build_challenge_model, train_challenge, seed=11)
    assert again == first
    torch.testing.assert_close(predictions_again, predictions, rtol=0, atol=0)


def test_a_linear_model_stays_under_the_lowest_tier():
    accuracy, _ = accuracy_after_training(lambda d, k: nn.Linear(d, k), train_challenge, seed=11)
    assert accuracy < 0.6, accuracy


def given_06():
    from autograder.probes.caller import load_given

    return load_given((ROOT / "grading" / "06_data_loading" / "given.py").read_text(), "grading_given_06_test")


def test_the_grader_loader_holds_no_data_and_the_trusted_feed_stops_past_the_batch_budget(monkeypatch):
    """The kernel's loader asks the trusted side for each batch (Probe.serve); the training points are
    private inputs, never sent to the kernel; past the budget the feed refuses; the count is the feed's."""
    from autograder.probes import PRIVATE, caller, kernel_inputs

    probe = probe_module("06_data_loading")
    inputs = probe.challenge_inputs(np.random.default_rng(0)) | {"challenge.seed": np.asarray(7)}
    assert not [key for key in kernel_inputs(inputs) if "train" in key or "test" in key]
    x, y = inputs[PRIVATE + "challenge.1.x_train"], inputs[PRIVATE + "challenge.1.y_train"]
    feed = probe.PROBE.serve(inputs)
    monkeypatch.setattr(caller, "ASK", feed)
    loader = given_06().ChallengeLoader(1, probe.CHALLENGE_MAX_BATCHES)
    assert len(loader) == 40 and loader.batch_size == probe.CHALLENGE_BATCH_SIZE
    assert not hasattr(loader, "__dict__") and all(m.__closure__ is None for m in (  # nothing but the draw index
        type(loader).__iter__, type(loader).__len__, type(loader).__init__))
    epochs = [list(loader) for _ in range(probe.CHALLENGE_MAX_BATCHES // 40)]
    assert feed.served[1] == probe.CHALLENGE_MAX_BATCHES and all(len(epoch) == 40 for epoch in epochs)
    first = torch.cat([bx for bx, _ in epochs[0]])  # one epoch: every training point once, reshuffled
    assert sorted(map(tuple, first.tolist())) == sorted(map(tuple, x.tolist()))
    assert not torch.equal(first, torch.cat([bx for bx, _ in epochs[1]]))
    assert torch.equal(torch.cat([by for _, by in epochs[0]]), torch.from_numpy(y)[
        torch.cat([torch.from_numpy(np.flatnonzero((x == row).all(axis=1))) for row in first.numpy()])])
    with pytest.raises(RuntimeError, match=f"budget of {probe.CHALLENGE_MAX_BATCHES} batches"):
        next(iter(loader))
    assert feed("challenge 1 start") == "started" and feed("challenge 1 next") == "budget"  # asked directly
    assert feed("challenge 0 next").startswith("batch ")  # each spiral has its own budget
    assert feed("challenge 3 next") == "refused" and feed("send everything") == "refused"
    assert feed.served == [1, probe.CHALLENGE_MAX_BATCHES, 0]


def corner_points(labels: np.ndarray) -> np.ndarray:
    """A point per label that the program of `corner_model` classifies as that label."""
    corners = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]], dtype=np.float32)
    return corners[labels]


def corner_model(width: int = 3) -> nn.Module:
    """Logits (x0, x1, -x0 - x1): class 0, 1 or 2 for the three corners; `width` hidden units of identity."""
    model = nn.Sequential(nn.Linear(2, 3))
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]]))
        model[0].bias.zero_()
    return model


def handed_over(model: nn.Module, prefix: str) -> dict:
    """The records the probe's _hand_over makes of `model` (as a kernel would hand them back)."""
    from helpers.challenge import Traced

    traced = Traced(model)
    return {f"{prefix}.program": np.asarray(json.dumps(traced.description)),
            **{f"{prefix}.tensor.{name}": t.numpy() for name, t in traced.tensors.items()}}


def challenge_records(trained: nn.Module, batches: int = 400, built: nn.Module | None = None) -> dict:
    probe = probe_module("06_data_loading")
    got = {}
    for draw in range(probe.CHALLENGE_DRAWS):
        got |= handed_over(built or corner_model(), f"built{draw}") | handed_over(trained, f"trained{draw}")
        got[f"batches{draw}"] = np.asarray(batches)
    return got


def challenge_want(wrong: int, n: int = 3000) -> dict:
    """Held-out points of three draws, `wrong` of them (in all) labelled otherwise than the corner model says."""
    probe = probe_module("06_data_loading")
    labels = np.arange(n) % 3
    true = labels.copy()
    true[:wrong] = (true[:wrong] + 1) % 3
    parts = np.split(np.arange(n), [n // 3, 2 * n // 3])
    inputs = {}
    for draw, part in enumerate(parts):
        inputs[f"{probe.PRIVATE}challenge.{draw}.x_test"] = corner_points(labels[part])
        inputs[f"{probe.PRIVATE}challenge.{draw}.y_test"] = true[part]
    return probe.expected_train_challenge(inputs)


def test_the_probe_judges_rules_then_accuracy_against_the_lowest_tier():
    """The grader runs the handed-over programs itself on its held-out points (which never left it)."""
    probe = probe_module("06_data_loading")
    judge = probe._judge_train_challenge
    model = corner_model()
    assert judge(challenge_records(model), challenge_want(0)) is None
    assert judge(challenge_records(model), challenge_want(300)) is None  # 90.0 %
    message = judge(challenge_records(model), challenge_want(303))
    assert "89.9%" in message and "90%" in message
    assert "drew no batch" in judge(challenge_records(model, batches=0), challenge_want(0))
    wide = nn.Sequential(nn.Linear(2, 2000), nn.ReLU(), nn.Linear(2000, 3))
    assert "5,000" in judge(challenge_records(model, built=wide), challenge_want(0))
    assert "returned keeps or reads" in judge(challenge_records(wide), challenge_want(0))


def test_the_held_out_points_and_labels_never_reach_the_kernel(monkeypatch):
    """Every request the trusted run sends the kernel, read as it is sent: no private input is in any of them
    (the held-out points, their labels, the training points), and the grader still judges by them."""
    import base64
    import io

    from autograder.probes import PRIVATE, session

    probe = probe_module("06_data_loading").PROBE
    inputs = probe.make_inputs(np.random.default_rng(3))
    sent = []
    real = session.local_channel

    def spying(*args, **kwargs):
        channel = real(*args, **kwargs)
        return lambda request: sent.append(request) or channel(request)

    monkeypatch.setattr("autograder.probes.local_channel", spying)
    from probe_harness import failures, namespace

    assert failures("06_data_loading", namespace("06_data_loading"), 3, ROOT) == {}
    assert sent
    arrays = []

    def collect(data):
        if isinstance(data, dict) and "nd" in data:
            arrays.append(np.load(io.BytesIO(base64.b64decode(data["nd"])), allow_pickle=False))
        for value in data.values() if isinstance(data, dict) else data if isinstance(data, list) else ():
            collect(value)

    for request in sent:
        collect(json.loads(request))
    assert arrays
    for key, value in inputs.items():
        if key.startswith(PRIVATE):
            assert not any(a.shape == value.shape and np.array_equal(a, value) for a in arrays), \
                f"{key} was sent to the kernel"
            assert not any(a.size >= 50 and a.dtype == value.dtype and np.isin(a, value).all() for a in arrays
                           if value.dtype.kind == "f"), f"part of {key} was sent to the kernel"


def test_the_tier_cells_are_judged_on_the_graders_points_with_the_notebooks_thresholds():
    import re

    probe = probe_module("06_data_loading")
    cells = {c["metadata"].get("nbgrader", {}).get("grade_id"): "".join(c["source"])
             for c in json.loads(NOTEBOOK.read_text())["cells"]}
    for gid, threshold in probe.CHALLENGE_TIERS.items():
        assert re.search(rf">=\s*{threshold:g}\b", cells[gid]), f"{gid} states another threshold"
    assert re.search(rf">=\s*{probe.CHALLENGE_PASS:.2f}\b", cells["test_challenge_90"])
    exercise = probe.PROBE.exercises["train_challenge"]
    got, want = challenge_records(corner_model()), challenge_want(240)  # 92 % right
    assert exercise.judge(got, want) is None  # the lowest tier holds
    failing = {gid: judge(got, want) for gid, judge in exercise.cells.items()}
    assert set(failing) == {"test_challenge_93", "test_challenge_945"}
    assert all(message and "92.0%" in message for message in failing.values())
    got, want = challenge_records(corner_model()), challenge_want(0)
    assert not any(judge(got, want) for judge in exercise.cells.values())


@pytest.mark.slow
def test_in_a_grading_kernel_the_batches_come_from_the_trusted_feed_and_stop_at_the_budget(tmp_path):
    """GradingExecute answers the kernel's input() with the probe's feed: the loader in a real kernel gets
    400 batches of the spiral, then the refusal. (Without a feed, nbclient's default stands: input() is not
    answered, StdinNotImplementedError.)"""
    import nbformat

    from autograder.engine.execute import GradingExecute

    probe = probe_module("06_data_loading")
    inputs = probe.challenge_inputs(np.random.default_rng(1)) | {"challenge.seed": np.asarray(3)}
    served = []
    feed = probe.PROBE.serve(inputs)

    def counting(prompt):
        answer = feed(prompt)
        served.append(answer.split(" ")[0])
        return answer

    source = (ROOT / "grading" / "06_data_loading" / "given.py").read_text()
    cell = ("from autograder.probes.caller import load_given\n"
            f"given = load_given({source!r}, 'given_06')\n"
            "loader = given.ChallengeLoader(2, 400)\n"
            "epochs = [list(loader) for _ in range(10)]\n"
            "try:\n    next(iter(loader))\nexcept RuntimeError as error:\n    print(error)\n"
            "print(sum(len(y) for epoch in epochs for _, y in epoch), float(epochs[0][0][0].sum()))")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell), nbformat.v4.new_code_cell("input('batch?')")])
    executor = GradingExecute(kernel_name="python3", timeout=120)
    executor.feed = counting
    executor.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    text = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert not [o for o in nb.cells[0].outputs if o.output_type == "error"], nb.cells[0].outputs
    first = next(iter(DataLoader(TensorDataset(*(torch.from_numpy(inputs[f"private.challenge.2.{k}"])
                                                 for k in ("x_train", "y_train"))),
                                 batch_size=50, shuffle=True, generator=torch.Generator().manual_seed(5))))
    assert text.splitlines() == ["train_challenge drew more than the budget of 400 batches (10 epochs)",
                                 f"20000 {float(first[0].sum())}"]
    assert feed.served[2] == 400
    assert served.count("batch") == 400 and "budget" in served
    assert served[-1] == "refused"  # the second cell asked on its own, not as the loader does: refused


def test_the_hidden_tier_cell_counts_the_points_the_grader_counts():
    """Issue 38: the notebook said 20,000 held-out points, its hidden cell (and so the feedback) used 2,000. The hidden
    cell draws CHALLENGE_N training and CHALLENGE_TEST_N held-out points per spiral, CHALLENGE_DRAWS spirals, and says so."""
    probe = probe_module("06_data_loading")
    cell = next("".join(c["source"]) for c in json.loads(NOTEBOOK.read_text())["cells"]
                if c["metadata"].get("nbgrader", {}).get("grade_id") == "test_challenge_90")
    tree = ast.parse(cell)
    drawn = [ast.literal_eval(node.args[0]) for node in ast.walk(tree)
             if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "spirals"]
    assert drawn == [probe.CHALLENGE_N + probe.CHALLENGE_TEST_N], drawn
    cuts = {ast.literal_eval(bound) for node in ast.walk(tree) if isinstance(node, ast.Slice)
            for bound in (node.lower, node.upper) if bound is not None}
    assert cuts == {probe.CHALLENGE_N}, cuts
    seeds = next(node for node in ast.walk(tree) if isinstance(node, ast.For) and getattr(node.target, "id", "") == "hidden_seed")
    assert len(ast.literal_eval(seeds.iter)) == probe.CHALLENGE_DRAWS
    said = ast.get_docstring(tree).replace("\n", " ")
    assert f"{probe.CHALLENGE_N:,} points" in said and f"{probe.CHALLENGE_TEST_N:,} other points" in said, said

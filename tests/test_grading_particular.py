"""What one assignment's probe does that the common suite (test_grading_folders.py) does not check."""

from __future__ import annotations

import time
import timeit
from unittest import mock

import numpy as np
import pytest
import torch
from probe_harness import COURSE, assignment, expected, failures, namespace

from autograder.course import grading_folder
from autograder.course.mutants import parse_mutant
from autograder.course.notebooks import grade_id, is_test, nbgrader, read_notebook
from autograder.engine.verify import student_code


def sample(name: str, kind: str, stem: str) -> str:
    """The code of grading/<name>/<kind>/<stem>.py."""
    path = grading_folder.folder(COURSE.root, name) / kind / f"{stem}.py"
    return parse_mutant(path).code if kind == "mutants" else grading_folder.parse_sample(path).code


def test_02_the_trusted_run_runs_the_read_only_cells_the_answers_read():
    """answer_retain_grad is computed from the read-only regression cell's prediction and y; 01's
    training loop, the one-mode Functions and the given torch_mlp_forward are definitions (the fan-out
    question shows its code in the text: its answers are predicted, not read off a cell's objects)."""
    source = read_notebook(COURSE.source_notebook("02_autograd"))
    given = [text for kind, text in student_code(source, source)[0] if kind == "given"]
    locked = {grade_id(c): c.source for c in source.cells if c.cell_type == "code" and nbgrader(c).get("locked")
              and not is_test(c) and grade_id(c) not in ("setup", "summary")}
    assert set(locked) == {"numpy_mlp_from_01", "regression_graph", "modes", "given_torch_mlp_forward"}
    assert all(locked[gid] in given for gid in locked)


def test_02_the_gpu_stand_in_refuses_numpy_as_cuda_does(tmp_path):
    wrong = sample("02_autograd", "mutants", "to_numpy_without_cpu")
    assert "to_numpy" in failures("02_autograd", namespace("02_autograd", {"to_numpy": wrong}), 0, tmp_path)


def test_03_relu_inputs_stay_away_from_the_kink():
    inputs = assignment("03_custom_functions").probe.make_inputs(np.random.default_rng(7))
    assert all(np.abs(inputs[k]).min() >= 0.05 - 1e-6 for k in inputs if k.lower().startswith("relu.x"))


def test_03_the_message_says_what_was_saved(tmp_path):
    wrong = sample("03_custom_functions", "mutants", "sigmoid_saves_input")
    failed = failures("03_custom_functions", namespace("03_custom_functions", {"Sigmoid": wrong}), 0, tmp_path)
    assert "none of them its output" in failed["Sigmoid"]


SIGMOID_ASKS = '''
class Sigmoid(Sigmoid):
    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        x = torch.log(y / (1 - y))
        {how}
'''
HOW_A_BACKWARD_ASKS = {  # the gradient asked of PyTorch in other ways than grading/03_custom_functions/wrong/'s
    "torch.func.vjp": ("return torch.func.vjp(torch.sigmoid, x)[1](grad_y)[0]", "asks autograd"),
    "aten's sigmoid_backward": ("return torch.ops.aten.sigmoid_backward(grad_y, y)", "sigmoid_backward"),
    "sigmoid_backward with function modes off": (
        "with torch._C.DisableTorchFunction():\n            return torch.ops.aten.sigmoid_backward(grad_y, y)",
        "sigmoid_backward"),
}


@pytest.mark.parametrize("how", HOW_A_BACKWARD_ASKS)
def test_03_a_backward_that_asks_pytorch_for_its_gradient_loses(how, tmp_path):
    """Right values from PyTorch's own gradient: judged from the raw outcome of the backward called alone (what it
    raised, the functions and ATen operators it ran), with the reason (before: all three passed)."""
    code, words = HOW_A_BACKWARD_ASKS[how]
    names = namespace("03_custom_functions", None, SIGMOID_ASKS.format(how=code))
    failed = failures("03_custom_functions", names, 0, tmp_path, only={"Sigmoid"})
    assert words in failed.get("Sigmoid", ""), failed


def test_04_a_convolution_run_with_function_modes_off_is_still_seen(tmp_path):
    """F.conv2d under torch._C.DisableTorchFunction hides from a function mode; the ATen operators it runs do not
    (before: conv2d_forward passed)."""
    code = ("def conv2d_forward(x, weight, bias=None, stride=1, padding=0):\n"
            "    with torch._C.DisableTorchFunction():\n"
            "        return F.conv2d(x, weight, bias, stride=stride, padding=padding)\n")
    names = namespace("04_nn_modules", None, code)
    failed = failures("04_nn_modules", names, 0, tmp_path, only={"conv2d_forward"})
    assert "called PyTorch's convolution (convolution)" in failed.get("conv2d_forward", ""), failed


def test_06_fit_is_judged_apart_from_a_wrong_train_one_epoch(tmp_path):
    wrong = sample("06_data_loading", "mutants", "train_one_epoch_no_zero_grad")
    names = namespace("06_data_loading", {"train_one_epoch": wrong})
    assert set(failures("06_data_loading", names, 4, tmp_path)) == {"train_one_epoch"}


def test_06_a_challenge_model_over_the_size_budget_fails_on_its_size_and_is_not_trained(tmp_path):
    """The trusted run does not spend a training's time on a model its size already fails (a huge
    one would hold the grader for as long as training it takes)."""
    names = namespace("06_data_loading", {"challenge": sample("06_data_loading", "mutants",
                                                                "challenge_over_size_budget")})
    trained = []
    names["train_challenge"] = lambda model, loader, device: trained.append(model) or model
    failed = failures("06_data_loading", names, 0, tmp_path, only={"train_challenge"})
    assert trained == [], "the oversized model was trained"
    assert "the budget is 5,000" in failed["train_challenge"], failed


def test_07_backbone_and_statistics_are_judged_as_numbers(tmp_path):
    """Read back raw: every BatchNorm statistic (9,620 running means and variances, 20 counts), and the
    backbone's parameters (small tensors whole, 64 values of each large one)."""
    want = expected("07_finetune_resnet18", 3)["finetune"]
    assert len(want["batchnorm_statistics"]) == 2 * 4800 + 20 and len(want["backbone_weights"]) > 60 * 64
    wrong = sample("07_finetune_resnet18", "mutants", "finetune_train_mode")
    names = namespace("07_finetune_resnet18", {"finetune": wrong})
    assert "batchnorm_statistics" in failures("07_finetune_resnet18", names, 3, tmp_path)["finetune"]


def test_07_finetune_is_judged_apart_from_a_wrong_optimizer(tmp_path):
    wrong = ("def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):\n"
             "    return torch.optim.Adam(model.parameters(), lr=1.0)")
    names = namespace("07_finetune_resnet18", None, wrong)
    assert set(failures("07_finetune_resnet18", names, 4, tmp_path)) == {"make_finetune_optimizer"}


BOUND_AT_IMPORT = "time_train_step_by_the_real_clock_bound_at_import_after_synchronize"
REAL_CLOCK = "time_train_step_clock_gettime_in_a_closure_after_synchronize"


@pytest.mark.parametrize("stem", [BOUND_AT_IMPORT, REAL_CLOCK], ids=["bound-at-import", "real-clock"])
def test_08_right_timing_passes_on_a_stalled_machine(stem, tmp_path):
    """Every sleep lasting five times longer (a machine far busier than CI) costs a correct answer nothing."""
    names = namespace("08_gpu_batch_timing", None, sample("08_gpu_batch_timing", "variants", stem))
    real_sleep = time.sleep
    with mock.patch("time.sleep", lambda seconds: real_sleep(5 * seconds)):
        assert failures("08_gpu_batch_timing", names, 5, tmp_path) == {}


class Timeline:
    """A clock the test controls: it moves only when something sleeps, `factor` times as long."""

    def __init__(self, factor: float):
        self.now, self.factor = 5000.0, factor

    def sleep(self, seconds):
        self.now += self.factor * seconds

    def read(self, *args):
        return self.now


@pytest.mark.parametrize("factor", [1, 5])
@pytest.mark.parametrize("stem", [BOUND_AT_IMPORT, REAL_CLOCK], ids=["bound-at-import", "real-clock"])
def test_08_a_mean_still_fails_however_slow_the_steps(stem, factor, tmp_path):
    """The real-time bound loosens nothing for a mean over steps with hiccups among them.

    Every clock, the probe's own real clock included, reads a timeline that moves only when the
    probe model sleeps: the judgment is tested on exact times, whatever the machine is doing.
    """
    mean = sample("08_gpu_batch_timing", "variants", stem).replace("statistics.median(times)", "statistics.mean(times)")
    mean = mean.replace("sorted(times)[len(times) // 2]", "sum(times) / len(times)")
    assert mean != sample("08_gpu_batch_timing", "variants", stem)
    timeline = Timeline(factor)
    with mock.patch("time.sleep", timeline.sleep), mock.patch("time.perf_counter", timeline.read), \
            mock.patch("time.clock_gettime", timeline.read):
        names = namespace("08_gpu_batch_timing", None, mean)
        failed = failures("08_gpu_batch_timing", names, 5, tmp_path)
    assert set(failed) == {"time_train_step"} and "a mean follows every slow step" in failed["time_train_step"]


@pytest.mark.parametrize("seed", [6, 7])
def test_08_the_probe_sleeps_little(seed, tmp_path):
    """The probe model's real sleeps (the bulk of its run) add up to under two seconds: counted, not timed."""
    slept, real_sleep = [], time.sleep

    def sleep(seconds):
        slept.append(seconds)
        real_sleep(seconds)

    names = namespace("08_gpu_batch_timing")
    with mock.patch("time.sleep", sleep):
        assert failures("08_gpu_batch_timing", names, seed, tmp_path) == {}
    assert slept and sum(slept) < 2.0, sum(slept)


def _as_before_torch_2_9(monkeypatch, benchmark):
    """torch < 2.9 on a machine without CUDA: benchmark.timer is the real clock, bound at import, and
    so is benchmark.Timer's default timer=. On a GPU machine CUDA is hidden too: that real clock does not
    wait for the GPU, and an answer timed by it there is rightly failed."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    bound = benchmark.timer
    monkeypatch.setattr(benchmark, "timer", timeit.default_timer)
    monkeypatch.setattr(benchmark.Timer.__init__, "__defaults__", tuple(
        timeit.default_timer if value is bound else value for value in benchmark.Timer.__init__.__defaults__))


def test_08_the_notebooks_virtual_clock_stands_in_for_a_timer_bound_at_import(monkeypatch):
    """The VirtualClock of the notebook's read-only test cell reads for benchmark.timer() and benchmark.Timer."""
    names = namespace("08_gpu_batch_timing")
    benchmark = names["benchmark"]
    _as_before_torch_2_9(monkeypatch, benchmark)
    with names["VirtualClock"]() as clock:
        start = benchmark.timer()
        clock.advance(5.0)
        assert 5.0 <= benchmark.timer() - start < 5.0 + 1e-3
        measured = benchmark.Timer("advance(0.25)", globals={"advance": clock.advance}).timeit(4)
        assert measured.median == pytest.approx(0.25, rel=1e-3)
    assert benchmark.timer is timeit.default_timer  # restored


MIXED_RIGHT = '''
def time_train_step(model, batch_size, device, warmup, repeats):
    model = model.to(device)
    x = torch.randn(batch_size, *model.input_shape, device=device)
    y = torch.zeros(batch_size, dtype=torch.long, device=device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    times = []
    for i in range(warmup + repeats):
        start = benchmark.timer()
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        times.append(benchmark.timer() - start)
    return statistics.median(times[warmup:])


def matmul_tflops(n, dtype, device, tf32=False):
    a, b = torch.randn(n, n, device=device, dtype=dtype), torch.randn(n, n, device=device, dtype=dtype)
    previous = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    try:
        measurement = benchmark.Timer("a @ b", globals={"a": a, "b": b}).blocked_autorange()
    finally:
        torch.set_float32_matmul_precision(previous)
    return 2 * n ** 3 / measurement.median / 1e12
'''


def test_08_the_probe_clock_stands_in_for_a_timer_bound_at_import(monkeypatch, tmp_path):
    """benchmark.timer() and benchmark.Timer's default clock, bound to the real clock as before torch 2.9:
    right answers timed by them still read the probe's virtual clock."""
    names = namespace("08_gpu_batch_timing", None, MIXED_RIGHT)
    _as_before_torch_2_9(monkeypatch, names["benchmark"])
    assert failures("08_gpu_batch_timing", names, 3, tmp_path) == {}


def test_08_autocast_for_a_fixed_device_type_fails_under_mocked_cuda(tmp_path):
    """On a CPU grader, CUDA mocked: an answer with autocast fixed to "cpu" passes the CPU run, not the CUDA one."""
    fixed = ("def autocast_forward(model, x, device, dtype):\n"
             "    with torch.autocast('cpu', dtype=torch.bfloat16):\n        return model(x)\n")
    failed = failures("08_gpu_batch_timing", namespace("08_gpu_batch_timing", None, fixed), 2, tmp_path)
    assert set(failed) == {"autocast_forward"} and "device.type" in failed["autocast_forward"]


def _judge(exercise):
    return assignment("08_gpu_batch_timing").probe.exercises[exercise].judge


def test_08_on_a_gpu_matmul_tflops_must_synchronize():
    """The CUDA branch of the judgment, on records as a GPU grader would make them: the answer's TFLOP/s against
    the milliseconds of 10 products of 4096 x 4096 timed by CUDA events (about 275 TFLOP/s at 5 ms)."""
    want = dict(expected("08_gpu_batch_timing", 0)["matmul_tflops"], gpu=np.asarray(True))
    got = {f"{key}{i}": np.asarray(want[key][i]) for i in range(len(want["cases"]))
           for key in ("tflops", "precision_after", "products")}
    assert "not measured on the GPU" in _judge("matmul_tflops")(got, want)
    events = np.asarray([[5.0, 5.1, 5.2], [5.0, 5.0, 5.3]])
    assert _judge("matmul_tflops")(dict(got, gpu_events=events, gpu_measured=np.asarray(280.0)), want) is None
    message = _judge("matmul_tflops")(dict(got, gpu_events=events, gpu_measured=np.asarray(9000.0)), want)
    assert "stopped before the products ran" in message


def test_08_on_a_gpu_autocast_forward_must_give_the_dtype_asked_for():
    """The CUDA branch, on records as a GPU grader makes them: float16 and bfloat16 asked for in turn, so
    autocast without dtype= (float16 on CUDA) fails on bfloat16, and an answer that never reached CUDA fails."""
    want = dict(expected("08_gpu_batch_timing", 0)["autocast_forward"], gpu=np.asarray(True))
    got = {"dtype": want["dtype"], "dtype16": want["dtype16"], "out": want["out"],
           "weight_dtypes": np.asarray(["torch.float32"] * 4), "autocast_after": np.asarray(["False", "torch.bfloat16"]),
           **{f"weight{i}": want[f"weight{i}"] for i in range(4)}}
    right = np.asarray([["torch.float16", "torch.float16"], ["torch.bfloat16", "torch.bfloat16"]])
    assert _judge("autocast_forward")(dict(got, cuda_dtypes=right), want) is None
    assert _judge("autocast_forward")(dict(got, cuda_dtypes=right[:1]), want) is None  # a GPU without bfloat16
    default = np.asarray([["torch.float16", "torch.float16"], ["torch.bfloat16", "torch.float16"]])
    message = _judge("autocast_forward")(dict(got, cuda_dtypes=default), want)
    assert "with torch.bfloat16 returned torch.float16" in message and "device.type" in message
    float32 = np.asarray([["torch.float16", "torch.float32"], ["torch.bfloat16", "torch.float32"]])
    assert "expected torch.float16" in _judge("autocast_forward")(dict(got, cuda_dtypes=float32), want)
    assert "returned nothing" in _judge("autocast_forward")(got, want)


def test_08_mixed_tf32_apis_are_named_not_raised(tmp_path):
    """The legacy allow_tf32 flag left against the newer API (torch >= 2.9 then refuses a precision's name)."""
    left = ("def matmul_tflops(n, dtype, device, tf32=False):\n"
            "    torch.backends.cuda.matmul.allow_tf32 = bool(tf32)\n"
            "    a = torch.randn(n, n, dtype=dtype)\n"
            "    return 2 * n ** 3 / benchmark.Timer('a @ a', globals={'a': a}).blocked_autorange().median / 1e12\n")
    saved = torch.get_float32_matmul_precision()
    try:
        failed = failures("08_gpu_batch_timing", namespace("08_gpu_batch_timing", None, left), 1, tmp_path)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision(saved)
    assert set(failed) == {"matmul_tflops"} and "restore" in failed["matmul_tflops"]


def test_08_the_reference_matmul_tflops_passes_the_probe(tmp_path):
    """The probe judges matmul_tflops by properties, never against the reference: so the reference is judged too."""
    names = namespace("08_gpu_batch_timing", None, "from helpers.reference.gpu_batch_timing import matmul_tflops")
    assert names["matmul_tflops"].__module__ == "helpers.reference.gpu_batch_timing"
    assert "matmul_tflops" not in failures("08_gpu_batch_timing", names, 4, tmp_path)


def test_08_profile_step_needs_one_right_run_of_three():
    """A busy machine can pause any operator: profile_step passes a step when one of its runs names the busiest
    operator and a share in range; a mistake (ranking by total time) is wrong in every run and fails."""
    judge = assignment("08_gpu_batch_timing").probe.exercises["profile_step"].judge
    steps = ("mm", "addmm", "bmm", "baddbmm", "sort")
    want = {**{f"{name}.busiest": f"aten::{name}" for name in steps}, **{f"{name}.products": name != "sort" for name in steps}}
    right = {f"{name}.busiest": [f"aten::{name}"] * 3 for name in steps}
    right.update({f"{name}.share": [0.0 if name == "sort" else 0.99] * 3 for name in steps})
    paused = {**right, "addmm.busiest": ["aten::item", "aten::addmm", "aten::item"], "addmm.share": [0.04, 0.97, 0.05]}
    assert judge(right, want) is None and judge(paused, want) is None
    by_total = {**right, "mm.busiest": ["aten::matmul"] * 3}
    assert "a total includes the time of the operators called inside" in judge(by_total, want)


def test_08_no_batch_size_makes_an_unsynchronized_reading_look_per_sample():
    """At batch size STEP / LAUNCH a clock read before the device finished (LAUNCH seconds) equals the step's
    time divided by the batch size, and the judge told a never-synchronizing answer (grading/08/wrong/) to
    stop dividing by the batch size: no batch size the probe draws may come within 25 % of that."""
    probe = assignment("08_gpu_batch_timing").probe
    module = probe.make_inputs.__globals__  # the probe file's constants
    sizes = {int(probe.make_inputs(np.random.default_rng(seed))["step.counts"][2]) for seed in range(200)}
    assert sizes and all(abs(module["LAUNCH"] * size / module["STEP"] - 1) >= 0.25 for size in sizes), sorted(sizes)


def test_08_every_draw_tells_the_steady_rate_epoch_from_the_right_one():
    """epoch_seconds at the workers' average rate (load + step + (n - 1) x max(step, load / w)) agrees with the
    right one wherever training is the bottleneck, and the probe's eight random cases missed it on some draws
    (seed 2: it passed); the loading-bound cases differ on every draw by far more than the tolerance
    (issue 38: 4, 0.03, 0.01, 2 takes 0.080 s, not 0.085)."""
    from helpers.reference.gpu_batch_timing import epoch_seconds

    assert epoch_seconds(4, 0.03, 0.01, 2) == pytest.approx(0.080)
    probe = assignment("08_gpu_batch_timing").probe
    for seed in range(50):
        cases = probe.make_inputs(np.random.default_rng(seed))["epoch.cases"]
        gaps = [abs(epoch_seconds(int(n), load, step, int(w)) - (load + step + (n - 1) * max(step, load / w)))
                for n, load, step, w in cases if w]
        assert max(gaps) > 1e-3, (seed, cases)


def test_08_a_matmul_tflops_that_never_synchronizes_fails_on_the_stand_in_gpu(tmp_path):
    """Timed by a clock that never waits for the device, matmul_tflops is right on a CPU (a product has finished
    when it returns) and passed the probe when every case ran there; the cases on the stand-in asynchronous
    GPU fail it, naming the mistake (issue 38)."""
    wrong = sample("08_gpu_batch_timing", "wrong", "matmul_tflops_never_synchronizing")
    for seed in (3, 4):
        failed = failures("08_gpu_batch_timing", namespace("08_gpu_batch_timing", None, wrong), seed, tmp_path,
                          only={"matmul_tflops"})
        assert "stand-in asynchronous GPU" in failed["matmul_tflops"] and "does not wait for the device" in failed["matmul_tflops"]
    cases = assignment("08_gpu_batch_timing").probe.make_inputs(np.random.default_rng(3))["tflops.cases"]
    assert cases[:, 4].tolist() == [0, 1, 1]  # (n, bfloat16, tf32, high, on the stand-in GPU): one CPU case


@pytest.mark.parametrize("mutant_file", ["autocast_ignores_dtype", None])
def test_08_the_visible_autocast_test_holds_where_cuda_is_available(mutant_file, monkeypatch):
    """Where CUDA is available the visible test's mocked-CUDA branch is skipped, and on a CPU
    autocast's default is the bfloat16 it asks for: on an H200 autocast without dtype= passed it.
    It asks the CPU for float16 too, so the mutant fails it there as anywhere; the solution passes."""
    name = "08_gpu_batch_timing"
    replace = {}
    if mutant_file:
        mutant = parse_mutant(grading_folder.folder(COURSE.root, name) / "mutants" / f"{mutant_file}.py")
        replace = {mutant.replaces: mutant.code}
    names = namespace(name, replace)
    source = read_notebook(COURSE.source_notebook(name))
    test = next(cell.source for cell in source.cells if grade_id(cell) == "test_autocast_forward")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    if mutant_file:
        with pytest.raises(AssertionError, match="float16"):
            exec(test, names)
    else:
        exec(test, names)


def test_08_an_amp_step_that_never_clears_its_gradients_fails_on_every_draw(tmp_path):
    """Before: its leftover gradient, divided by the scale and clipped, hid within the weights' tolerance on most draws
    (seeds 2-6 of 0-7 passed it). Two steps at a scale of 1 that never clip show it whole."""
    wrong = sample("08_gpu_batch_timing", "mutants", "amp_gradients_never_cleared")
    names = namespace("08_gpu_batch_timing", {"amp_train_step": wrong})
    for seed in range(8):
        assert "amp_train_step" in failures("08_gpu_batch_timing", names, seed, tmp_path / str(seed), only={"amp_train_step"})


def test_08_checkpointed_forward_is_judged_on_the_bytes_a_forward_keeps(tmp_path):
    """One checkpoint per layer recomputes what the right answer recomputes, and differs only in what the forward pass
    keeps (each layer's input, a Linear's output among them): the kernel's count of live bytes tells them apart."""
    wrong = sample("08_gpu_batch_timing", "mutants", "checkpoint_every_layer")
    names = namespace("08_gpu_batch_timing", {"checkpointed_forward": wrong})
    failed = failures("08_gpu_batch_timing", names, 0, tmp_path, only={"checkpointed_forward"})
    assert "bytes after the forward pass" in failed["checkpointed_forward"], failed


@pytest.mark.parametrize("stem, words", [("data_parallel_mean_of_the_ranks_means", "whatever its size"),
                                         ("data_parallel_without_all_reduce", "different weights"),
                                         ("data_parallel_returns_its_own_loss", "its own slice's loss")])
def test_08_data_parallel_mistakes_are_named(stem, words, tmp_path):
    wrong = sample("08_gpu_batch_timing", "mutants", stem)
    names = namespace("08_gpu_batch_timing", {"data_parallel_step": wrong})
    failed = failures("08_gpu_batch_timing", names, 0, tmp_path, only={"data_parallel_step"})
    assert words in failed["data_parallel_step"], failed

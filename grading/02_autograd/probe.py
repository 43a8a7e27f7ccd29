"""Probes of 02_autograd: the functions on problems, upstream gradients and graphs the notebook never showed.

The kernel's word (given.SizeWatch): the size of the largest tensor pairwise_sq_distances makes. A forger who
reports a small one, or escapes the watch (as_subclass), gains what broadcasting every difference gives: the right
values, with n * m * d numbers made on the way.
"""

from __future__ import annotations

import numpy as np
import torch

from autograder.probes import EXACT, Exercise, Probe, Tolerance, compare_records, facts_once


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A small problem of random size, upstream gradients, stale .grad, random graphs, tensors to convert."""
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 12, size=4))
    m, graphs, length = int(rng.integers(3, 7)), 3, int(rng.integers(6, 12))
    k, c, side = int(rng.integers(2, 6)), int(rng.integers(2, 5)), (int(rng.integers(2, 5)), int(rng.integers(2, 5)))
    patch = int(rng.integers(2, 4))
    big = (int(rng.integers(120, 240)), int(rng.integers(120, 240)), int(rng.integers(24, 48)))  # n, m, d
    j_in, j_out = (int(v) for v in rng.choice(np.arange(2, 7), size=2, replace=False))  # never square
    return {
        "tensors.a": rng.standard_normal((n, d_in)), "tensors.b": rng.standard_normal((m, d_in)),
        "tensors.images": rng.standard_normal((k, c, *side)),
        "tensors.patch": np.asarray(patch),
        "tensors.patches": rng.standard_normal((k, c, side[0] * patch, side[1] * patch)),
        "tensors.big_a": rng.standard_normal((big[0], big[2])), "tensors.big_b": rng.standard_normal((big[1], big[2])),
        "tensors.near": rng.standard_normal((int(rng.integers(40, 80)), 16)) * 0.01 + rng.uniform(50, 100),
        "tensors.weights": rng.standard_normal((n, m)),
        "x": rng.standard_normal((n, d_in)), "y": rng.standard_normal((n, d_out)),
        "w1": rng.standard_normal((d_in, h)) * 0.3, "w2": rng.standard_normal((h, d_out)) * 0.3,
        "forward.grad": rng.standard_normal((n, d_out)),  # dL/dy_pred, not all ones
        "gradients.stale_w2": rng.standard_normal((h, d_out)),  # left in w2.grad by some earlier backward()
        "train.learning_rate": np.asarray(1e-3 * rng.uniform(1, 4)),
        "train.steps": np.asarray(int(rng.integers(4, 9))),
        "graph_ops.values": rng.standard_normal((5, m)),
        "graph_ops.codes": rng.integers(0, 100, size=(graphs, length)),
        "graph_ops.picks": rng.integers(0, 100, size=(graphs, length)),
        "to_numpy.f64": rng.standard_normal(tuple(int(v) for v in rng.integers(1, 5, size=2))),
        "to_numpy.f32": rng.standard_normal(int(rng.integers(2, 7))).astype(np.float32),
        "to_numpy.i64": rng.integers(-50, 50, size=int(rng.integers(2, 7))),
        "vjp.a": rng.standard_normal((d_in, d_out)) * 0.5, "vjp.x": rng.standard_normal((k, d_in)),
        "vjp.v": rng.standard_normal((k, d_out)), "vjp.scale": np.asarray(rng.uniform(0.5, 2.0)),
        "vjp.jacobian_a": rng.standard_normal((j_in, j_out)) * 0.5, "vjp.jacobian_x": rng.standard_normal(j_in),
    }


def probe_tensors(k, inputs, dtype, *keys, grad=()):
    """Fresh tensors of `dtype` in the kernel from the inputs; those named in `grad` require grad."""
    return [k.tensor(inputs[key], dtype=dtype, requires_grad=key in grad) for key in keys]


# -- tensors ----------------------------------------------------------------------------------------

def run_pairwise_sq_distances(k, inputs, record):
    """float64 and float32, n != m, and the gradient of a weighted sum; a larger float32 pair under the size
    watch; rows far from the origin against themselves (the floor at 0)."""
    for tag, dtype in (("", "float64"), ("32", "float32")):
        a, b = probe_tensors(k, inputs, dtype, "tensors.a", "tensors.b", grad=("tensors.a", "tensors.b"))
        out = k.answers.pairwise_sq_distances(a, b)
        record(f"distances{tag}", out)
        record(f"dtype{tag}", out.dtype)
        grads = k.given.gradients(out, k.tensor(inputs["tensors.weights"], dtype=dtype), [a, b])
        record(f"grad_a{tag}", grads[0])
        record(f"grad_b{tag}", grads[1])
    big_a, big_b = k.unpack(k.given.watched(*probe_tensors(k, inputs, "float32", "tensors.big_a", "tensors.big_b")), 2)
    record("big", k.given.plain(k.answers.pairwise_sq_distances(big_a, big_b)))
    record("largest", k.given.largest())
    near = k.tensor(inputs["tensors.near"], dtype="float32")
    record("near", k.answers.pairwise_sq_distances(near, near))


def judge_pairwise_sq_distances(got: dict, want: dict) -> str | None:
    """The distances and gradients against the reference's; the largest tensor made against the result's size; no
    squared distance below 0 (rows far from the origin against themselves: the diagonal is 0 up to rounding)."""
    for key in want:
        if key not in got:
            return f"pairwise_sq_distances gave no {key}"
    n, m = want["big"].shape
    if int(got["largest"]) > 4 * n * m:
        return (f"pairwise_sq_distances made a tensor of {int(got['largest']):,} numbers for {n} rows against {m}: "
                f"{int(got['largest']) / (n * m):.0f} per pair of rows, where the result holds one")
    if float(np.min(got["near"])) < 0:
        return (f"pairwise_sq_distances returned a negative squared distance ({float(np.min(got['near'])):.3g}) for "
                "rows far from the origin against themselves")
    message = compare_records("pairwise_sq_distances", {"near": got["near"]}, {"near": want["near"]}, Tolerance(0, 1.0))
    message = message or compare_records("pairwise_sq_distances", {"big": got["big"]}, {"big": want["big"]},
                                         Tolerance(1e-4, 1e-3))
    rest = [key for key in want if key not in ("big", "near", "largest")]
    for tolerance, keys in ((Tolerance(1e-7, 1e-9), [key for key in rest if not key.endswith("32")]),
                            (Tolerance(1e-4, 1e-4), [key for key in rest if key.endswith("32")])):
        message = message or compare_records("pairwise_sq_distances", {key: got[key] for key in keys},
                                             {key: want[key] for key in keys}, tolerance)
    return message


def run_pixels_as_rows(k, inputs, record):
    """One row per pixel, and per patch of a secret size."""
    record("rows", k.answers.pixels_as_rows(k.tensor(inputs["tensors.images"])))
    record("patches", k.answers.pixels_as_rows(k.tensor(inputs["tensors.patches"]), patch=int(inputs["tensors.patch"])))


def answer_values(name: str, facts):
    """`expected` of a question whose answers are what the installed torch does: `facts()`, and its keys."""
    def expected(inputs) -> dict:
        values = facts_once(f"02_autograd.{name}", facts)  # the same for every submission
        return {**values, "keys": sorted(values)}
    expected.__name__ = f"expected_{name}"
    return expected


def run_autograd_gradients(k, inputs, record):
    """Two calls with a stale w2.grad before the first, in float64 and float32; what each left in .grad."""
    for tag, dtype in (("", "float64"), ("32", "float32")):
        x, y, w1, w2 = probe_tensors(k, inputs, dtype, "x", "y", "w1", "w2", grad=("w1", "w2"))
        k.setattr(w2, "grad", k.tensor(inputs["gradients.stale_w2"], dtype=dtype))
        for call in ("first", "second"):
            grads = k.answers.autograd_gradients(x, y, w1, w2)
            record(f"grad_w1.{call}{tag}", grads[0])
            record(f"grad_w2.{call}{tag}", grads[1])
            record(f"left.w1.{call}{tag}", w1.grad)
            record(f"left.w2.{call}{tag}", w2.grad)


def judge_autograd_gradients(got: dict, want: dict) -> str | None:
    """The gradients compared; what is left in .grad after each call must be nothing (None or zeros)."""
    for key in [k for k in want if k.startswith("left.")]:
        left = got.get(key)
        if left is None:
            return f"autograd_gradients gave no {key}"
        if not (left.dtype.kind in "US" and str(left) == "None" or left.dtype.kind in "biuf" and not left.any()):
            weight, call = key.split(".")[1:3]
            return (f"autograd_gradients left gradients in {weight}.grad after its {call.rstrip('32')} call: a "
                    "later backward() would add to them (zero them, or set them to None, after taking the values)")
    return compare_records("autograd_gradients", got, {k: v for k, v in want.items() if not k.startswith("left.")},
                           AUTOGRAD_TOLERANCE)


AUTOGRAD_TOLERANCE = Tolerance(1e-4, 1e-4)


# -- vector-Jacobian products and the two modes -------------------------------------------------

def run_vector_jacobian_product(k, inputs, record):
    """A batch of inputs (k, n) -> (k, m), called twice: the second call must not see the first; then x as
    the calls left it (its grad, whether it requires grad, its values)."""
    f = k.given.tanh_layer(inputs["vjp.a"], float(inputs["vjp.scale"]))
    x, v = k.tensor(inputs["vjp.x"]), k.tensor(inputs["vjp.v"])
    for call in ("first", "second"):
        record(f"vjp.{call}", k.answers.vector_jacobian_product(f, x, v))
    record("x.grad", x.grad)
    record("x.requires_grad", x.requires_grad)
    record("x", x)


def jacobian_runner(name: str, mode: str):
    """A run recording the Jacobian `name` builds of x -> tanh(x @ a), differentiable in `mode` only."""
    def run(k, inputs, record):
        f = k.given.only_mode(mode, inputs["vjp.jacobian_a"])
        record("jacobian", getattr(k.answers, name)(f, k.tensor(inputs["vjp.jacobian_x"])))
    run.__name__ = f"run_{name}"
    return run


def expected_jacobian(inputs) -> dict:
    a, x = torch.tensor(inputs["vjp.jacobian_a"]), torch.tensor(inputs["vjp.jacobian_x"])
    return {"jacobian": torch.func.jacrev(lambda t: torch.tanh(t @ a))(x)}


PASSES = {"gradient_forward": 1_000_000, "gradient_reverse": 1, "jacobian_forward": 3, "jacobian_reverse": 1000}


def fan_out_facts() -> dict:
    """The notebook's fan-out question, run here: a hook on w, w used three times, two backward() calls."""
    w = torch.tensor(2.0, requires_grad=True)
    calls = []
    w.register_hook(lambda grad: calls.append(float(grad)))
    (w * w + 3 * w).backward()
    first = {"hook_calls": len(calls), "grad": float(w.grad)}
    (w * w + 3 * w).backward()
    return {**first, "hook_calls_after_second": len(calls), "grad_after_second": float(w.grad)}


def view_bytes_facts() -> dict:
    """The bytes of new memory each of the question's expressions takes on a (64, 1024, 4096) float32 tensor: 0 for
    the tensor itself or a view of it, else its result's storage (on the meta device: no memory needed)."""
    x = torch.empty(64, 1024, 4096, device="meta")
    results = {"swap_tokens_features": x.transpose(1, 2), "every_other_token": x[:, ::2],
               "flatten_batch": x.reshape(-1, 4096), "flatten_after_transpose": x.transpose(1, 2).reshape(64, -1),
               "one_head": x[..., :64].contiguous(), "mean_over_tokens": x.mean(dim=1),
               "to_bfloat16": x.to(torch.bfloat16), "float": x.float(), "first_token": x[:, 0],
               "first_token_plus_one": x[:, 0] + 1}
    return {key: 0 if y is x or y._base is x else y.untyped_storage().nbytes() for key, y in results.items()}


VIEW_BYTES_KEYS = ("swap_tokens_features", "every_other_token", "flatten_batch", "flatten_after_transpose", "one_head",
                   "mean_over_tokens", "to_bfloat16", "float", "first_token", "first_token_plus_one")


def graph_alive_facts() -> dict:
    """Whether the tensors each loop's graphs saved for backward outlive the loop (the notebook's question,
    measured with saved_tensors_hooks on the installed torch)."""
    import gc
    import weakref

    def saved_alive_after(loop) -> bool:
        alive = weakref.WeakSet()

        class Saved:
            def __init__(self, t):
                self.t = t.detach()  # a saved output would otherwise reference its own node: a cycle

        def pack(t):
            holder = Saved(t)
            alive.add(holder)
            return holder

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda holder: holder.t):
            result = loop()
        gc.collect()
        found = len(alive) > 0
        del result
        return found

    def steps(keep, no_grad=False, backward=False):
        def loop():
            generator = torch.Generator().manual_seed(0)
            w = torch.randn(8, 4, generator=generator, requires_grad=True)
            kept = []
            for _ in range(3):
                x = torch.randn(16, 8, generator=generator)
                with torch.no_grad() if no_grad else torch.enable_grad():
                    loss = (x @ w).relu().sum()
                if backward:
                    loss.backward()
                kept.append(keep(loss))
            return kept
        return loop

    def sum_into_total():
        generator = torch.Generator().manual_seed(0)
        w = torch.randn(8, 4, generator=generator, requires_grad=True)
        total = 0
        for _ in range(3):
            total = total + (torch.randn(16, 8, generator=generator) @ w).relu().sum()
        return total

    return {"append_loss": saved_alive_after(steps(lambda loss: loss)),
            "append_item": saved_alive_after(steps(lambda loss: loss.item())),
            "append_after_backward": saved_alive_after(steps(lambda loss: loss, backward=True)),
            "sum_into_total": saved_alive_after(sum_into_total),
            "append_under_no_grad": saved_alive_after(steps(lambda loss: loss, no_grad=True)),
            "append_detached": saved_alive_after(steps(lambda loss: loss.detach()))}


def run_train_autograd_mlp(k, inputs, record):
    """The losses (and what type each is), the trained weights, and the weights as the loop left them."""
    learning_rate, steps = float(inputs["train.learning_rate"]), int(inputs["train.steps"])
    for tag, dtype, n_steps in (("", "float64", steps), ("32", "float32", 3)):
        x, y, w1, w2 = probe_tensors(k, inputs, dtype, "x", "y", "w1", "w2", grad=("w1", "w2"))
        losses = k.answers.train_autograd_mlp(x, y, w1, w2, learning_rate, n_steps)
        record(f"losses{tag}", losses)
        record(f"loss_types{tag}", k.given.type_names(losses))
        record(f"w1{tag}", w1)
        record(f"w2{tag}", w2)
        record(f"still_leaves_that_require_grad{tag}", [w1.is_leaf, w1.requires_grad, w2.is_leaf, w2.requires_grad])


GRAPH_NAMES = ("random0", "random1", "random2", "diamond", "leaf used three times", "branch on the second input",
               "a leaf", "made under no_grad", "data only")  # given.graphs's, with 3 random graphs (make_inputs)


def run_graph_ops(k, inputs, record):
    graphs = k.given.graphs(inputs["graph_ops.values"], inputs["graph_ops.codes"], inputs["graph_ops.picks"])
    for name in GRAPH_NAMES:
        record(name, k.given.listed(k.answers.graph_ops(graphs[name])))


def run_to_numpy(k, inputs, record):
    """A stand-in GPU tensor, a leaf that requires grad, float32, int64 and a 0-d tensor: what came back,
    its type and its dtype."""
    cases = k.given.to_numpy_cases(inputs["to_numpy.f64"], inputs["to_numpy.f32"], inputs["to_numpy.i64"])
    text = k.module("builtins").str
    for name in ("gpu", "leaf", "float32", "int64", "scalar"):
        array = k.answers.to_numpy(cases[name])
        record(f"{name}.type", k.type_name(array))
        record(f"{name}.dtype", text(array.dtype))
        record(name, array)


def answer_runner(name: str, keys: tuple[str, ...]):
    """A run recording each key of the dict answer `name`, and the keys it has."""
    def run(k, inputs, record):
        answer = getattr(k.answers, name)
        for key in keys:
            record(key, answer[key])
        record("keys", k.module("builtins").sorted(answer))
    run.__name__ = f"run_{name}"
    return run


def run_answer_retain_grad(k, inputs, record):
    record("value", k.answers.answer_retain_grad)


def regression_graph() -> dict:
    """The notebook's read-only regression cell, rebuilt: x, y, w, b, prediction, loss."""
    generator = torch.Generator().manual_seed(0)
    x = torch.arange(0, 10, 0.1)[:, None]
    y = 3 * x + torch.randn(x.shape, generator=generator)
    w = torch.zeros(1, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    prediction = x @ w.T + b
    loss = torch.mean((prediction - y) ** 2)
    return {"x": x, "y": y, "w": w, "b": b, "prediction": prediction, "loss": loss}


def expected_answer_retain_grad(inputs) -> dict:
    from helpers.reference import autograd as ref

    graph = regression_graph()
    return {"value": ref.answer_retain_grad(graph["prediction"], graph["y"])}


FAN_OUT_KEYS = ("hook_calls", "grad", "hook_calls_after_second", "grad_after_second")
GRAPH_ALIVE_KEYS = ("append_loss", "append_item", "append_after_backward", "sum_into_total", "append_under_no_grad",
                    "append_detached")
# float32 results are compared with the reference's float32 run: rounding, not mistakes, differs.
PROBE = Probe(
    assignment="02_autograd",
    reference="helpers.reference.autograd",
    make_inputs=make_inputs,
    exercises={
        "pairwise_sq_distances": Exercise(run_pairwise_sq_distances, judge=judge_pairwise_sq_distances),
        "pixels_as_rows": Exercise(run_pixels_as_rows),
        "autograd_gradients": Exercise(run_autograd_gradients, judge=judge_autograd_gradients),
        "vector_jacobian_product": Exercise(run_vector_jacobian_product),
        "jacobian_forward": Exercise(jacobian_runner("jacobian_forward", "forward"), expected=expected_jacobian),
        "jacobian_reverse": Exercise(jacobian_runner("jacobian_reverse", "reverse"), expected=expected_jacobian),
        "answer_view_bytes": Exercise(answer_runner("answer_view_bytes", VIEW_BYTES_KEYS),
                                      expected=answer_values("answer_view_bytes", view_bytes_facts), tolerance=EXACT),
        "answer_passes": Exercise(answer_runner("answer_passes", tuple(PASSES)),
                                  expected=lambda inputs: {**PASSES, "keys": sorted(PASSES)}),
        "answer_fan_out": Exercise(answer_runner("answer_fan_out", tuple(FAN_OUT_KEYS)),
                                   expected=answer_values("answer_fan_out", fan_out_facts)),
        "train_autograd_mlp": Exercise(run_train_autograd_mlp, tolerance=Tolerance(1e-4, 1e-5)),
        "answer_graph_alive": Exercise(answer_runner("answer_graph_alive", GRAPH_ALIVE_KEYS),
                                       expected=answer_values("answer_graph_alive", graph_alive_facts)),
        "graph_ops": Exercise(run_graph_ops),
        "to_numpy": Exercise(run_to_numpy),
        "answer_retain_grad": Exercise(run_answer_retain_grad, expected=expected_answer_retain_grad),
    },
)

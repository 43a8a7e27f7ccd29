"""Probes of 02_autograd: the functions on problems, upstream gradients and graphs the notebook never showed."""

from __future__ import annotations

import numpy as np
import torch

from autograder.probes import EXACT, Exercise, Probe, Tolerance, facts_once


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A small problem of random size, upstream gradients, stale .grad, random graphs, tensors to convert."""
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 12, size=4))
    m, graphs, length = int(rng.integers(3, 7)), 3, int(rng.integers(6, 12))
    k, c, side = int(rng.integers(2, 6)), int(rng.integers(2, 5)), (int(rng.integers(2, 5)), int(rng.integers(2, 5)))
    j_in, j_out = (int(v) for v in rng.choice(np.arange(2, 7), size=2, replace=False))  # never square
    return {
        "tensors.a": rng.standard_normal((n, d_in)), "tensors.b": rng.standard_normal((m, d_in)),
        "tensors.images": rng.standard_normal((k, c, *side)),
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


def probe_tensors(inputs, dtype, *keys, grad=()):
    """Fresh tensors of `dtype` from the inputs; those named in `grad` require grad."""
    return [torch.tensor(inputs[k], dtype=dtype).requires_grad_(k in grad) for k in keys]


def probe_copy(value):
    """A tensor copied before the student's code can change it in place; anything else as it is."""
    return value.detach().clone() if isinstance(value, torch.Tensor) else value


# -- tensors ----------------------------------------------------------------------------------------

def run_pairwise_sq_distances(answers, inputs, record):
    """float64 and float32, n != m; the inputs must come back unchanged."""
    for tag, dtype in (("", torch.float64), ("32", torch.float32)):
        a, b = probe_tensors(inputs, dtype, "tensors.a", "tensors.b")
        out = answers.pairwise_sq_distances(a, b)
        record(f"distances{tag}", out)
        record(f"dtype{tag}", str(out.dtype))


def run_pixels_as_rows(answers, inputs, record):
    record("rows", answers.pixels_as_rows(torch.tensor(inputs["tensors.images"])))


def answer_values(name: str, facts):
    """`expected` of a question whose answers are what the installed torch does: `facts()`, and its keys."""
    def expected(inputs) -> dict:
        values = facts_once(f"02_autograd.{name}", facts)  # the same for every submission
        return {**values, "keys": sorted(values)}
    expected.__name__ = f"expected_{name}"
    return expected


def probe_graphs(inputs) -> dict:
    """name -> tensor: random chains of operations that reuse earlier results, and a few fixed shapes
    that a walk without a visited set, or along first inputs only, gets wrong."""
    unary = (torch.exp, torch.tanh, torch.sin, torch.relu, torch.sigmoid, torch.abs, lambda t: t * 2, lambda t: -t)
    binary = (torch.add, torch.mul, torch.sub, torch.maximum)
    values = torch.tensor(inputs["graph_ops.values"])  # (leaves, m)
    graphs = {}
    for g, (codes, picks) in enumerate(zip(inputs["graph_ops.codes"], inputs["graph_ops.picks"])):
        nodes = [values[i].clone().requires_grad_(i < 3) for i in range(values.shape[0])]  # 3 weights, data
        current = nodes[0]
        for code, pick in zip(codes.tolist(), picks.tolist()):
            other = nodes[pick % len(nodes)]  # any earlier tensor: leaves and results are reused
            if code % 2:
                current = binary[code // 2 % len(binary)](current, other)
            else:
                current = unary[code // 2 % len(unary)](current)
            nodes.append(current)
        graphs[f"random{g}"] = (current * nodes[picks[-1] % len(nodes)]).sum() if g % 2 else current.mean()
    w = values[0].clone().requires_grad_(True)
    z = w * values[1] + values[2]
    graphs["diamond"] = (z * z + z.sin()).sum()
    graphs["leaf used three times"] = (w * w * w).sum() + w.sum()
    graphs["branch on the second input"] = (values[3] * torch.tanh(w)).sum()
    graphs["a leaf"] = w
    with torch.no_grad():
        graphs["made under no_grad"] = w * 2
    graphs["data only"] = values[1].exp().sum()
    return graphs


class GpuLike(torch.Tensor):
    """A CPU tensor that converts to NumPy only as a CUDA tensor does: after .cpu() or .to('cpu'), or
    through numpy(force=True), which copies to the host itself."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.numpy and (kwargs.get("force") or any(a is True for a in args[1:])):
            return args[0].as_subclass(torch.Tensor).numpy(force=True)
        if func in (torch.Tensor.numpy, torch.Tensor.__array__):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first (a stand-in for a GPU tensor: call .cpu())")
        result = super().__torch_function__(func, types, args, kwargs)
        to_cpu = func is torch.Tensor.cpu or (
            func is torch.Tensor.to and any(str(a) == "cpu" for a in [*args[1:], *kwargs.values()]))
        return result.as_subclass(torch.Tensor) if to_cpu and isinstance(result, torch.Tensor) else result


def run_autograd_gradients(answers, inputs, record):
    """Two calls with a stale w2.grad before the first, in float64 and float32; nothing left in .grad."""
    for tag, dtype in (("", torch.float64), ("32", torch.float32)):
        x, y, w1, w2 = probe_tensors(inputs, dtype, "x", "y", "w1", "w2", grad=("w1", "w2"))
        w2.grad = torch.tensor(inputs["gradients.stale_w2"], dtype=dtype)
        for call in ("first", "second"):
            grad_w1, grad_w2 = answers.autograd_gradients(x, y, w1, w2)
            record(f"grad_w1.{call}{tag}", probe_copy(grad_w1))
            record(f"grad_w2.{call}{tag}", probe_copy(grad_w2))
            record(f"no_grad_left.{call}{tag}", [w.grad is None or not bool(w.grad.any()) for w in (w1, w2)])


# -- vector-Jacobian products and the two modes -------------------------------------------------

class ForwardModeOnly(torch.autograd.Function):
    """tanh(x @ a), differentiable in forward mode only: its backward raises."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x, a):
        return torch.tanh(x @ a)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[1], output)

    @staticmethod
    def jvp(ctx, x_tangent, a_tangent):
        a, y = ctx.saved_tensors
        return (1 - y ** 2) * (x_tangent @ a)

    @staticmethod
    def backward(ctx, grad_y):
        raise RuntimeError("reverse mode is switched off here: build the Jacobian from Jacobian-vector products")


class ReverseModeOnly(torch.autograd.Function):
    """tanh(x @ a), differentiable in reverse mode only: it has no jvp."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x, a):
        return torch.tanh(x @ a)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[1], output)

    @staticmethod
    def backward(ctx, grad_y):
        a, y = ctx.saved_tensors
        return (grad_y * (1 - y ** 2)) @ a.T, None


def run_vector_jacobian_product(answers, inputs, record):
    """A batch of inputs (k, n) -> (k, m), called twice: the second call must not see the first."""
    a, scale = torch.tensor(inputs["vjp.a"]), float(inputs["vjp.scale"])
    x, v = torch.tensor(inputs["vjp.x"]), torch.tensor(inputs["vjp.v"])

    def f(t):
        return torch.tanh(t @ a) * scale

    for call in ("first", "second"):
        record(f"vjp.{call}", probe_copy(answers.vector_jacobian_product(f, x, v)))
    record("x_left_as_it_was", [x.grad is None, not x.requires_grad, bool(torch.equal(x, torch.tensor(inputs["vjp.x"])))])


def jacobian_runner(name: str, function):
    """A run recording the Jacobian `name` builds of x -> function.apply(x, a)."""
    def run(answers, inputs, record):
        a, x = torch.tensor(inputs["vjp.jacobian_a"]), torch.tensor(inputs["vjp.jacobian_x"])
        record("jacobian", getattr(answers, name)(lambda t: function.apply(t, a), x))
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


def run_train_autograd_mlp(answers, inputs, record):
    learning_rate, steps = float(inputs["train.learning_rate"]), int(inputs["train.steps"])
    for tag, dtype, n_steps in (("", torch.float64, steps), ("32", torch.float32, 3)):
        x, y, w1, w2 = probe_tensors(inputs, dtype, "x", "y", "w1", "w2", grad=("w1", "w2"))
        losses = answers.train_autograd_mlp(x, y, w1, w2, learning_rate, n_steps)
        record(f"losses{tag}", [float(v) for v in losses])
        record(f"losses_are_floats{tag}", all(isinstance(v, float) for v in losses))
        record(f"w1{tag}", w1)
        record(f"w2{tag}", w2)
        record(f"still_leaves_that_require_grad{tag}", [w1.is_leaf, w1.requires_grad, w2.is_leaf, w2.requires_grad])


def run_graph_ops(answers, inputs, record):
    for name, t in probe_graphs(inputs).items():
        record(name, list(answers.graph_ops(t)))


def run_to_numpy(answers, inputs, record):
    """A stand-in GPU tensor, a leaf that requires grad, float32, int64 and a 0-d tensor."""
    leaf = torch.tensor(inputs["to_numpy.f64"], requires_grad=True)
    cases = {"gpu": (leaf * 3).as_subclass(GpuLike), "leaf": leaf,
             "float32": torch.tensor(inputs["to_numpy.f32"], requires_grad=True) * 2,
             "int64": torch.tensor(inputs["to_numpy.i64"]), "scalar": (leaf ** 2).sum()}
    for name, t in cases.items():
        array = answers.to_numpy(t)
        record(f"{name}.is_ndarray", isinstance(array, np.ndarray))
        record(f"{name}.dtype", str(array.dtype) if isinstance(array, np.ndarray) else type(array).__name__)
        record(name, array)


def answer_runner(name: str, keys: tuple[str, ...], as_text: bool = False):
    """A run recording each key of the dict answer `name` (as_text: its str(), for dtypes), and the
    keys it has."""
    def run(answers, inputs, record):
        answer = getattr(answers, name)
        for key in keys:
            record(key, str(answer[key]) if as_text else answer[key])
        record("keys", sorted(answer))
    run.__name__ = f"run_{name}"
    return run


def run_answer_retain_grad(answers, inputs, record):
    record("value", answers.answer_retain_grad)


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
        "pairwise_sq_distances": Exercise(run_pairwise_sq_distances, tolerance=Tolerance(1e-5, 1e-5)),
        "pixels_as_rows": Exercise(run_pixels_as_rows),
        "autograd_gradients": Exercise(run_autograd_gradients, tolerance=Tolerance(1e-4, 1e-4)),
        "vector_jacobian_product": Exercise(run_vector_jacobian_product),
        "jacobian_forward": Exercise(jacobian_runner("jacobian_forward", ForwardModeOnly), expected=expected_jacobian),
        "jacobian_reverse": Exercise(jacobian_runner("jacobian_reverse", ReverseModeOnly), expected=expected_jacobian),
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

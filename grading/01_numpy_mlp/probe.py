"""Probes of 01_numpy_mlp: every exercise on sizes, seeds and dtypes the notebook never used."""

from __future__ import annotations

import numpy as np

from autograder.probes import Exercise, Probe, Tolerance


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A small problem of random size (rows of examples, and a batch of sequences with one or two leading
    dimensions more), and arrays for relu and numeric_gradient."""
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 12, size=4))
    x, y = rng.standard_normal((n, d_in)), rng.standard_normal((n, d_out))
    w1, w2 = rng.standard_normal((d_in, h)) * 0.3, rng.standard_normal((h, d_out)) * 0.3
    shape = tuple(int(v) for v in rng.integers(2, 6, size=3))
    lead = tuple(int(v) for v in rng.integers(2, 4, size=int(rng.integers(1, 3))))  # (B,) or (B, B')
    return {
        "relu.h": rng.standard_normal(shape), "relu.h32": rng.standard_normal(shape[:2]).astype(np.float32),
        "x": x, "y": y, "w1": w1, "w2": w2,
        "x_seq": rng.standard_normal((*lead, n, d_in)), "y_seq": rng.standard_normal((*lead, n, d_out)),
        "numeric_gradient.w": rng.standard_normal((3, 4)), "numeric_gradient.c": rng.standard_normal((3, 4)),
        # a 3-d w, |w| >= 0.5, for the cubic at a large eps: an estimate of the first order errs there by 3 w eps
        "numeric_gradient.w3": rng.uniform(0.5, 1.5, (2, 2, 3)) * rng.choice([-1.0, 1.0], (2, 2, 3)),
        "learning_rate": np.asarray(1e-3 * rng.uniform(1, 5)),
        "steps": np.asarray(int(rng.integers(3, 9))),
    }


def run_relu(k, inputs, record):
    """float64 and float32, and the input left as it was."""
    h = k.value(inputs["relu.h"])
    record("out", k.answers.relu(h))
    record("out32", k.answers.relu(k.value(inputs["relu.h32"])))
    record("input_kept", h)


def run_mlp_forward(k, inputs, record):
    """Rows of examples and a batch of sequences."""
    w1, w2 = k.value(inputs["w1"]), k.value(inputs["w2"])
    for x, name in ((k.value(inputs["x"]), "y_pred"), (k.value(inputs["x_seq"]), "y_pred_seq")):
        record(name, k.answers.mlp_forward(x, w1, w2)[0])


def run_mlp_backward(k, inputs, record):
    """Rows of examples and a batch of sequences, each through the forward pass of its own side (the student's
    in the kernel, the reference's here)."""
    w1, w2 = k.value(inputs["w1"]), k.value(inputs["w2"])
    for x_key, y_key, suffix in (("x", "y", ""), ("x_seq", "y_seq", "_seq")):
        x, y = k.value(inputs[x_key]), k.value(inputs[y_key])
        grads = k.answers.mlp_backward(x, y, w1, w2, k.answers.mlp_forward(x, w1, w2)[1])
        record("grad_w1" + suffix, grads[0])
        record("grad_w2" + suffix, grads[1])


def run_numeric_gradient(k, inputs, record):
    """The gradient of sum(sin(w) * c), and the caller's w as it was (each perturbed entry put back); the
    gradient of sum(w ** 3) at eps = 1e-2 on a 3-d w, where an estimate of the first order errs by 3 w eps."""
    w = k.value(inputs["numeric_gradient.w"])
    record("grad", k.answers.numeric_gradient(k.given.sin_dot(inputs["numeric_gradient.c"]), w))
    record("w_kept", w)
    record("grad_cubic", k.answers.numeric_gradient(k.given.cube_sum(), k.value(inputs["numeric_gradient.w3"]),
                                                    eps=1e-2))


def run_train_numpy_mlp(k, inputs, record):
    """The trained weights and losses; the caller's w1 left as it was."""
    w1, w2 = k.value(inputs["w1"]), k.value(inputs["w2"])
    trained = k.answers.train_numpy_mlp(k.value(inputs["x"]), k.value(inputs["y"]), w1, w2,
                                        float(inputs["learning_rate"]), int(inputs["steps"]))
    record("w1", trained[0])
    record("w2", trained[1])
    record("losses", k.given.floats(trained[2]))
    record("w1_kept", w1)


PROBE = Probe(
    assignment="01_numpy_mlp",
    reference="helpers.reference.numpy_mlp",
    make_inputs=make_inputs,
    exercises={
        "relu": Exercise(run_relu),
        "mlp_forward": Exercise(run_mlp_forward),
        "mlp_backward": Exercise(run_mlp_backward),
        "numeric_gradient": Exercise(run_numeric_gradient, tolerance=Tolerance(1e-5, 1e-6)),
        "train_numpy_mlp": Exercise(run_train_numpy_mlp, tolerance=Tolerance(1e-6, 1e-8)),
    },
    # The point of 01 is NumPy by hand: PyTorch, or the course's own helpers, would do it for them.
    numpy_only=True,
    forbidden=("torch", "helpers"),
)

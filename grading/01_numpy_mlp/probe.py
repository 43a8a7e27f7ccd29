"""Probes of 01_numpy_mlp: every exercise on sizes, seeds and dtypes the notebook never used."""

from __future__ import annotations

import numpy as np

from autograder.probes import Exercise, Probe, Tolerance


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A small problem of random size, and arrays for relu and numeric_gradient."""
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 12, size=4))
    x, y = rng.standard_normal((n, d_in)), rng.standard_normal((n, d_out))
    w1, w2 = rng.standard_normal((d_in, h)) * 0.3, rng.standard_normal((h, d_out)) * 0.3
    shape = tuple(int(v) for v in rng.integers(2, 6, size=3))
    return {
        "relu.h": rng.standard_normal(shape), "relu.h32": rng.standard_normal(shape[:2]).astype(np.float32),
        "x": x, "y": y, "w1": w1, "w2": w2,
        "numeric_gradient.w": rng.standard_normal((3, 4)), "numeric_gradient.c": rng.standard_normal((3, 4)),
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
    y_pred = k.answers.mlp_forward(*(k.value(inputs[key]) for key in ("x", "w1", "w2")))[0]
    record("y_pred", y_pred)


def run_mlp_backward(k, inputs, record):
    """Through the reference's forward pass on the trusted side, the student's in the kernel."""
    x, y, w1, w2 = (k.value(inputs[key]) for key in ("x", "y", "w1", "w2"))
    cache = k.answers.mlp_forward(x, w1, w2)[1]
    grads = k.answers.mlp_backward(x, y, w1, w2, cache)
    record("grad_w1", grads[0])
    record("grad_w2", grads[1])


def run_numeric_gradient(k, inputs, record):
    """The gradient of sum(sin(w) * c), and the caller's w as it was (each perturbed entry put back)."""
    w = k.value(inputs["numeric_gradient.w"])
    record("grad", k.answers.numeric_gradient(k.given.sin_dot(inputs["numeric_gradient.c"]), w))
    record("w_kept", w)


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

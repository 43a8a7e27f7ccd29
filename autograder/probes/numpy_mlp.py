"""Probes of 01_numpy_mlp: every exercise on sizes, seeds and dtypes the notebook never used."""

from __future__ import annotations

import numpy as np

ASSIGNMENT = "01_numpy_mlp"
# The point of 01 is NumPy by hand: PyTorch, or the course's own helpers, would do it for them.
NUMPY_ONLY = True
FORBIDDEN = ("torch", "helpers")


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A small problem of random size, and arrays for the one-line exercises."""
    n, d_in, h, d_out = (int(v) for v in rng.integers(3, 12, size=4))
    x, y = rng.standard_normal((n, d_in)), rng.standard_normal((n, d_out))
    w1, w2 = rng.standard_normal((d_in, h)) * 0.3, rng.standard_normal((h, d_out)) * 0.3
    shape = tuple(int(v) for v in rng.integers(2, 6, size=3))
    return {
        "relu.h": rng.standard_normal(shape), "relu.h32": rng.standard_normal(shape[:2]).astype(np.float32),
        "x": x, "y": y, "w1": w1, "w2": w2,
        "numeric_gradient.w": rng.standard_normal((3, 4)), "numeric_gradient.c": rng.standard_normal((3, 4)),
        "relative_error.a": rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4),
        "relative_error.b": rng.standard_normal(shape), "learning_rate": np.asarray(1e-3 * rng.uniform(1, 5)),
        "steps": np.asarray(int(rng.integers(3, 9))),
    }


KERNEL_CODE = {
    "relu": "h = inputs['relu.h'].copy()\n"
            "record('out', relu(h))\n"
            "record('out32', relu(inputs['relu.h32'].copy()))\n"
            "record('input_kept', h)",
    "mlp_forward": "y_pred, cache = mlp_forward(inputs['x'], inputs['w1'], inputs['w2'])\n"
                   "record('y_pred', y_pred)",
    "l2_loss": "record('loss', float(l2_loss(inputs['x'][:, :2], inputs['y'][:, :2])))",
    "mlp_backward": "y_pred, cache = mlp_forward(inputs['x'], inputs['w1'], inputs['w2'])\n"
                    "grad_w1, grad_w2 = mlp_backward(inputs['x'], inputs['y'], inputs['w1'], inputs['w2'], cache)\n"
                    "record('grad_w1', grad_w1)\nrecord('grad_w2', grad_w2)",
    "numeric_gradient": "c = inputs['numeric_gradient.c']\n"
                        "record('grad', numeric_gradient(lambda w: float(np.sum(np.sin(w) * c)), "
                        "inputs['numeric_gradient.w'].copy()))",
    "relative_error": "a, b = inputs['relative_error.a'], inputs['relative_error.b']\n"
                      "record('error', float(relative_error(a, b)))\n"
                      "record('same', float(relative_error(a, a.copy())))",
    "train_numpy_mlp": "w1, w2 = inputs['w1'].copy(), inputs['w2'].copy()\n"
                       "w1_new, w2_new, losses = train_numpy_mlp(inputs['x'], inputs['y'], w1, w2, "
                       "float(inputs['learning_rate']), int(inputs['steps']))\n"
                       "record('w1', w1_new)\nrecord('w2', w2_new)\nrecord('losses', [float(v) for v in losses])\n"
                       "record('w1_kept', w1)",
}


def expected(inputs: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """The reference answers on the same inputs."""
    from helpers.reference import numpy_mlp as ref

    x, y, w1, w2 = inputs["x"], inputs["y"], inputs["w1"], inputs["w2"]
    y_pred, cache = ref.mlp_forward(x, w1, w2)
    grad_w1, grad_w2 = ref.mlp_backward(x, y, w1, w2, cache)
    c = inputs["numeric_gradient.c"]
    a, b = inputs["relative_error.a"], inputs["relative_error.b"]
    trained_w1, trained_w2, losses = ref.train_numpy_mlp(x, y, w1, w2, float(inputs["learning_rate"]),
                                                         int(inputs["steps"]))
    return {
        "relu": {"out": ref.relu(inputs["relu.h"]), "out32": ref.relu(inputs["relu.h32"]),
                 "input_kept": inputs["relu.h"]},
        "mlp_forward": {"y_pred": y_pred},
        "l2_loss": {"loss": ref.l2_loss(x[:, :2], y[:, :2])},
        "mlp_backward": {"grad_w1": grad_w1, "grad_w2": grad_w2},
        "numeric_gradient": {"grad": ref.numeric_gradient(lambda w: float(np.sum(np.sin(w) * c)),
                                                          inputs["numeric_gradient.w"])},
        "relative_error": {"error": ref.relative_error(a, b), "same": 0.0},
        "train_numpy_mlp": {"w1": trained_w1, "w2": trained_w2, "losses": np.asarray(losses), "w1_kept": w1},
    }


TOLERANCE = {"numeric_gradient": {"rtol": 1e-5, "atol": 1e-6},
             "train_numpy_mlp": {"rtol": 1e-6, "atol": 1e-8}}

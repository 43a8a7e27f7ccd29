"""One driver text for both sides: the kernel runs it on the student's names, the grader on the reference.

A probe module whose exercises need more than one call (build a model, load weights, train...)
writes that code once, as functions in its KERNEL_PRELUDE, each taking (answer, inputs, record).
Its KERNEL_CODE calls them with the student's names; `reference_answers` calls them here with the
reference's, so the two sides cannot drift apart.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np


def collect(driver, answer, inputs) -> dict[str, np.ndarray]:
    """What driver(answer, inputs, record) records, as plain arrays."""
    import torch

    out: dict[str, np.ndarray] = {}

    def record(key, value):
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        out[key] = np.asarray(value)

    driver(answer, inputs, record)
    return out


def reference_answers(prelude: str, drivers: dict[str, tuple[str, str]], reference: ModuleType,
                      inputs: dict[str, np.ndarray]) -> dict[str, dict[str, np.ndarray]]:
    """exercise -> what its driver records on the reference; drivers: exercise -> (driver, reference name)."""
    namespace = {"np": np}
    exec(compile(prelude, "<probe prelude>", "exec"), namespace)
    return {exercise: collect(namespace[driver], getattr(reference, name), inputs)
            for exercise, (driver, name) in drivers.items()}

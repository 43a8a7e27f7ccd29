"""Probes of NN_topic: each exercise on secret inputs, judged against helpers.reference.topic.

Each `run_<exercise>(k, inputs, record)` runs in the grading process and asks the student's kernel,
through `k`, to call the notebook's names (`k.answers.softplus`) on values it sends; the same calls
are asked of the reference module here, and the records must agree within the exercise's tolerance
(autograder/probes/__init__.py). The kernel only calls and hands back what came back.
"""

from __future__ import annotations

import numpy as np

from autograder.probes import Exercise, Probe


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Secret inputs: moderate values of a random shape, and values far out in both tails."""
    shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 3))))
    return {"softplus.x": rng.normal(0.0, 3.0, size=shape),
            "softplus.tails": rng.choice([-1.0, 1.0], size=7) * rng.uniform(50.0, 700.0, size=7)}


def run_softplus(k, inputs, record):
    """softplus on moderate values, then on values whose exp overflows float64."""
    record("moderate", k.answers.softplus(k.value(inputs["softplus.x"])))
    record("tails", k.answers.softplus(k.value(inputs["softplus.tails"])))


PROBE = Probe(
    assignment="NN_topic",
    reference="helpers.reference.topic",
    make_inputs=make_inputs,
    exercises={"softplus": Exercise(run_softplus)},
)

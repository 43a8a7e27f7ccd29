"""Probes of NN_topic: each exercise on secret inputs, judged against helpers.reference.topic.

Each `run_<exercise>(answers, inputs, record)` runs in the student's kernel (`answers` = the
notebook's names) and here on the reference (`answers` = the reference module); the records
must agree within the exercise's tolerance (autograder/probes/__init__.py).
"""

from __future__ import annotations

import numpy as np

from autograder.probes import Exercise, Probe


def make_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Secret inputs: moderate values of a random shape, and values far out in both tails."""
    shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(1, 3))))
    return {"softplus.x": rng.normal(0.0, 3.0, size=shape),
            "softplus.tails": rng.choice([-1.0, 1.0], size=7) * rng.uniform(50.0, 700.0, size=7)}


def run_softplus(answers, inputs, record):
    """softplus on moderate values, then on values whose exp overflows float64."""
    record("moderate", answers.softplus(inputs["softplus.x"].copy()))
    record("tails", answers.softplus(inputs["softplus.tails"].copy()))


PROBE = Probe(
    assignment="NN_topic",
    reference="helpers.reference.topic",
    make_inputs=make_inputs,
    exercises={"softplus": Exercise(run_softplus)},
)

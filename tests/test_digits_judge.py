"""04's DigitsCNN against the MLP: the grader's measure is steadier than the reference's margin.

The grader trains the student's CNN and the notebook's MLP on DIGITS_SPLITS secret splits of the digits and
compares their mean held-out accuracies (grading/04_nn_modules/probe.py). Training from a seed on 500 images
makes each split's difference a random number; the reference CNN must clear the MLP by several standard
deviations of that mean, or a sound CNN loses its points by luck. Measured here with the probe's own code
(its inputs, its training, its expected values) on fixed draws, so the figures are the same on every run.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from probe_harness import assignment, probe_module

from autograder.probes import kernel_inputs
from autograder.probes.session import Session, local_channel, run_exercise
from helpers.reference.nn_modules import DigitsCNN

ROOT = Path(__file__).resolve().parents[1]
DRAWS = 8  # x DIGITS_SPLITS splits
STANDARD_ERRORS = 3


def run_reference(probe, inputs) -> dict:
    """The DigitsCNN probe's records of the reference, through the kernel's caller in this process."""
    channel = local_channel({"DigitsCNN": DigitsCNN}, assignment("04_nn_modules").probe.given_module())
    return run_exercise(probe.run_digits_cnn, Session(channel), kernel_inputs(inputs))


def test_the_reference_beats_the_mlp_by_more_than_the_graders_measure_can_err():
    probe = probe_module("04_nn_modules")
    margins = []  # per split: the reference's held-out accuracy minus the MLP's
    for draw in range(DRAWS):
        inputs = probe.digits_inputs(np.random.default_rng(4000 + draw))
        assert len(np.ravel(inputs["digits.seed"])) == probe.DIGITS_SPLITS
        got = run_reference(probe, inputs)
        mlp = [probe.expected_digits_cnn({key: value[split:split + 1] for key, value in inputs.items()})
               for split in range(probe.DIGITS_SPLITS)]
        cnn = [probe.digits_accuracy({"logits": got["logits"][split:split + 1]}, mlp[split])
               for split in range(probe.DIGITS_SPLITS)]
        margins += [c - m["mlp_accuracy"] for c, m in zip(cnn, mlp)]
        # What the grader compares: the mean over the splits (all of one size), the probe's expected value.
        want = {"labels": np.stack([m["labels"][0] for m in mlp]),
                "mlp_accuracy": float(np.mean([m["mlp_accuracy"] for m in mlp]))}
        if draw == 0:
            assert probe.expected_digits_cnn(inputs)["mlp_accuracy"] == pytest.approx(want["mlp_accuracy"])
        assert probe.judge_digits_cnn(got, want) is None
        assert probe.judge_digits_cnn_beats_mlp(got, want) is None, (draw, cnn, mlp)
    mean, sd = float(np.mean(margins)), float(np.std(margins, ddof=1))
    print(f"{len(margins)} splits: the reference beats the MLP by {mean:.2%}, sd {sd:.2%}")
    error = sd / math.sqrt(probe.DIGITS_SPLITS)  # of the grader's measure, a mean over its splits
    assert mean >= STANDARD_ERRORS * error, (
        f"the reference beats the MLP by {mean:.2%} on average over {len(margins)} splits; the grader's measure "
        f"errs by {error:.2%} (one split: {sd:.2%}), and {STANDARD_ERRORS} of that is {STANDARD_ERRORS * error:.2%}")


def test_the_notebook_says_how_many_splits_the_grader_trains_on():
    probe = probe_module("04_nn_modules")
    count = {2: "two", 3: "three", 4: "four", 5: "five"}[probe.DIGITS_SPLITS]
    cells = json.loads((ROOT / "source" / "04_nn_modules" / "04_nn_modules.ipynb").read_text())["cells"]
    text = " ".join("".join(cell["source"]) for cell in cells).replace("\n", " ")
    assert f"the grader trains it again on {count} other splits of the digits" in text
    assert f"the grader also trains it on {count} other splits of the digits" in text  # the hidden test's words

"""`Probe.expected`: the reference's answers, computed on the trusted side."""

from __future__ import annotations

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from autograder.probes import Exercise, Probe


def test_the_reference_answers_silently(capsys):
    """06's reference `fit` draws a progress bar on stdout, as a student's should: computed for every
    graded submission, it reached the grader's terminal between the lines of `grade` and `check`."""

    def run(answers, inputs, record):
        print("a reference that talks")
        torch.manual_seed(0)
        net = nn.Linear(2, 3)
        loader = DataLoader(TensorDataset(torch.randn(4, 2), torch.tensor([0, 1, 2, 0])), batch_size=2)
        history = answers.fit(net, loader, loader, torch.optim.SGD(net.parameters(), lr=0.1),
                              nn.CrossEntropyLoss(), torch.device("cpu"), 2)
        record("epochs", len(history["train_loss"]))

    def expected(inputs):
        print("an expected() that talks")
        return {"value": 1.0}

    probe = Probe("06_data_loading", make_inputs=lambda rng: {}, reference="helpers.reference.data_loading",
                  exercises={"fit": Exercise(run), "other": Exercise(run, expected=expected)})
    want = probe.expected({})
    assert int(want["fit"]["epochs"]) == 2 and float(want["other"]["value"]) == 1.0, want
    out = capsys.readouterr().out
    assert out == "", f"the trusted side printed: {out!r}"

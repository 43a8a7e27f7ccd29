"""`Probe.expected`: the reference's answers, computed on the trusted side."""

from __future__ import annotations

from autograder.probes import Exercise, Probe


def test_the_reference_answers_silently(capsys):
    """06's reference `fit` draws a progress bar on stdout, as a student's should: computed for every
    graded submission, it reached the grader's terminal between the lines of `grade` and `check`."""

    def run(k, inputs, record):
        print("a probe that talks")
        torch_ = k.module("torch")
        nn_, data = k.module("torch.nn"), k.module("torch.utils.data")
        torch_.manual_seed(0)
        net = nn_.Linear(2, 3)
        loader = data.DataLoader(data.TensorDataset(torch_.randn(4, 2), torch_.tensor([0, 1, 2, 0])), batch_size=2)
        history = k.answers.fit(net, loader, loader, torch_.optim.SGD(net.parameters(), lr=0.1),
                                nn_.CrossEntropyLoss(), torch_.device("cpu"), 2)
        record("epochs", k.len(history["train_loss"]))

    def expected(inputs):
        print("an expected() that talks")
        return {"value": 1.0}

    probe = Probe("06_data_loading", make_inputs=lambda rng: {}, reference="helpers.reference.data_loading",
                  exercises={"fit": Exercise(run), "other": Exercise(run, expected=expected)})
    want = probe.expected({})
    assert int(want["fit"]["epochs"]) == 2 and float(want["other"]["value"]) == 1.0, want
    out = capsys.readouterr().out
    assert out == "", f"the trusted side printed: {out!r}"

"""The kernel's fixed caller (autograder/probes/caller.py), driven as the grader drives it, in this process."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from autograder.probes.caller import Caller, plain
from autograder.probes.session import ERROR, Opaque, Raised, Session, local_channel, run_exercise


def session(names: dict, numpy_only: bool = False) -> Session:
    return Session(local_channel(names, None, numpy_only))


def test_the_student_function_is_called_on_what_the_grader_sent_and_its_return_comes_back():
    names = {"double": lambda x: x * 2}
    k = session(names)
    x = np.arange(6.0).reshape(2, 3)
    out = k.fetch(k.answers.double(k.value(x)))
    np.testing.assert_array_equal(out, x * 2)
    assert out.dtype == np.float64


def test_tensors_come_back_as_their_values_and_other_objects_as_their_type_name_only():
    k = session({"make": lambda: (torch.ones(2, dtype=torch.bfloat16), torch.device("cpu"), object(), None)})
    made = k.fetch(k.answers.make())
    assert isinstance(made, tuple) and made[1] == "cpu" and made[3] is None
    np.testing.assert_array_equal(made[0], np.ones(2, dtype=np.float32))
    assert made[2] == Opaque("object")


def test_a_call_that_raises_fails_what_depends_on_it_and_its_first_line_comes_back():
    def broken(x):
        raise ValueError("no answer yet\nsecond line")

    k = session({"broken": broken, "twice": lambda x: x * 2})
    failed = k.answers.twice(k.answers.broken(k.value(1.0)))
    with pytest.raises(Raised, match="^ValueError: no answer yet$"):
        k.fetch(failed)
    with pytest.raises(Raised, match="NameError: name 'missing' is not defined"):
        k.fetch(k.answers.missing(1))


def test_attributes_items_operators_and_state_left_in_the_arguments_are_read_back():
    def fill(w):
        w.grad = torch.ones_like(w)
        return {"sum": w.sum()}

    k = session({"fill": fill})
    w = k.tensor(np.arange(3.0), requires_grad=True)
    out = k.answers.fill(w)
    records = {}
    k.later(out["sum"] * 2 + 1, lambda v: records.__setitem__("sum", v))
    k.later(w.grad, lambda v: records.__setitem__("grad", v))
    k.later([w.requires_grad, w.is_leaf], lambda v: records.__setitem__("flags", v))
    k.flush()
    assert float(records["sum"]) == 7.0 and records["grad"].tolist() == [1.0, 1.0, 1.0]
    assert records["flags"] == [True, True]


def test_a_record_is_a_snapshot_taken_where_it_was_asked_for():
    def grow(values):
        values.append(len(values))
        return values

    k = session({"grow": grow})
    values = k.value([])
    got = {}

    def record(key, value):
        k.later(value, lambda v: got.__setitem__(key, v))

    k.answers.grow(values)
    record("after one", values)
    k.answers.grow(values)
    record("after two", values)
    k.flush()
    assert got == {"after one": [0], "after two": [0, 1]}


def test_a_time_limit_inside_a_call_ends_the_batch_and_the_exercise():
    def slow(x):
        raise KeyboardInterrupt

    caller = Caller({"slow": slow}, None)
    results, stopped = caller.run([["answers", 1], ["attr", 2, 1, "slow"], ["call", 3, 2, [1], {}],
                                   ["fetch", None, 3], ["value", 4, 5], ["fetch", None, 4]])
    assert stopped == "KeyboardInterrupt" and results == [{"error": "KeyboardInterrupt"}]

    def run(k, inputs, record):
        record("out", k.answers.slow(1))
        record("after", k.value(2))

    records = run_exercise(run, Session(local_channel({"slow": slow})), {})
    assert str(records[ERROR]).startswith("stopped") or "KeyboardInterrupt" in str(records[ERROR])


def test_a_numpy_only_call_cannot_import_or_call_pytorch():
    def by_torch(x):
        import torch as t

        return t.tensor(x).numpy()

    k = session({"by_torch": by_torch, "by_numpy": lambda x: np.asarray(x) * 2}, numpy_only=True)
    with pytest.raises(Raised, match="NumPyOnly: called PyTorch"):
        k.fetch(k.answers.by_torch(k.value(np.ones(2))))
    assert k.fetch(k.answers.by_numpy(k.value(np.ones(2)))).tolist() == [2.0, 2.0]


def test_plain_refuses_nothing_silently_and_keeps_numbers_exact():
    assert plain(2 ** 60) == {"float": float(2 ** 60)}
    assert plain(float("nan")) == {"float": "nan"}
    assert plain(np.float32(1.5)) == 1.5
    assert plain(np.array([object()], dtype=object)) == {"object": "ndarray of object"}

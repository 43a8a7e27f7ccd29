"""Stand-ins shared by the grading folders' given.py: they swap a function's globals for a while and hand
back what the student's objects gave, as plain values."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.probes.stand_ins import StandIn, floats, listed, type_names

helper = "the student's own"


def uses_helper():
    return helper


def test_a_stand_in_replaces_the_globals_a_function_reads_then_puts_them_back():
    with StandIn(uses_helper, {"helper": "the grader's", "added": 1}):
        assert uses_helper() == "the grader's"
        assert uses_helper.__globals__["added"] == 1
    assert uses_helper() == "the student's own"
    assert "added" not in uses_helper.__globals__  # a name that was not there is gone again


def test_the_globals_come_back_when_the_students_code_raises():
    with pytest.raises(ZeroDivisionError):
        with StandIn(uses_helper, {"helper": "the grader's"}):
            raise ZeroDivisionError("the student's code failed")
    assert uses_helper() == "the student's own"


def test_returned_values_as_plain_floats_names_and_lists():
    torch = pytest.importorskip("torch")
    values = (torch.tensor(1.5, requires_grad=True), np.float32(2.0), 3)
    assert floats(values) == [1.5, 2.0, 3.0]
    assert type_names(values) == ["Tensor", "float32", "int"]
    assert listed(v for v in (1, 2)) == [1, 2] and listed((3,)) == [3]

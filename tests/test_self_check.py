"""helpers.checks.self_check: the ungraded self-checks of 02 (issue 20: no point for typing x.is_leaf)."""

from __future__ import annotations

import numpy as np

from helpers.checks import self_check


def test_right_wrong_and_unanswered_are_told_apart_with_the_reason_for_a_wrong_one(capsys):
    verdicts = self_check("Q1", {"x": True, "w": False, "loss": None}, {"x": True, "w": True, "loss": False},
                          {"w": "w is a leaf: you created it."})
    assert verdicts == {"x": True, "w": False, "loss": None}
    out = capsys.readouterr().out
    assert "1 of 3 right, 1 not answered yet" in out
    assert "w is a leaf: you created it." in out and "\u2718 w" in out and "\u2714 x" in out


def test_numpy_booleans_count_as_the_booleans_they_are():
    assert self_check("Q", {"a": np.True_, "b": np.bool_(False)}, {"a": True, "b": False}) == {"a": True, "b": True}


def test_an_answer_that_is_not_a_dict_raises_nothing(capsys):
    assert self_check("Q", None, {"a": True}) == {"a": None}
    assert "not answered yet" in capsys.readouterr().out


def test_check_equal_takes_a_numpy_boolean_for_the_boolean_it_is():
    """A question answered with np.True_ (what `(a == b).all()` gives) is right (issue 20, §6)."""
    from helpers.checks import CheckFailed, check_equal

    check_equal(np.True_, True, "answer")
    check_equal(np.int64(3), 3, "answer")
    for wrong in (np.False_, "True", 1):
        try:
            check_equal(wrong, True, "answer")
        except CheckFailed:
            continue
        raise AssertionError(f"check_equal accepted {wrong!r} for True")

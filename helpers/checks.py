"""Student-facing checks: each one passes quietly or fails with a message that teaches.

A failure says what was checked, what was expected, what came back and, where we can
tell, the likely mistake. Every check raises `CheckFailed` (an `AssertionError`), so a
test cell that fails scores 0 under nbgrader and shows the message in the feedback.

Typical use in a test cell::

    check_shape(grad_w1, (1000, 100), "grad_w1")
    check_close(grad_w1, expected_w1, "grad_w1", hint="did you multiply by the ReLU mask?")
    passed("mlp_backward")
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Any

import numpy as np
import torch

# Relative error below which two float64 gradients are taken to agree (cs231n's rule of thumb:
# about 1e-7 or less is right, 1e-2 or more is wrong).
GRAD_REL_TOL = 1e-6


class CheckFailed(AssertionError):
    """A check did not hold; the message is written for the student.

    In IPython (Jupyter, Colab) its traceback leaves out the frames of this module (which also set
    `__tracebackhide__`, a flag pytest honours) and of PyTorch: the student sees the lines of their
    cells, then the message (`helpers.tracebacks.render`). Raised while a test cell handled an error
    of the student's code, it shows the student's line that raised that error, not PyTorch's frames.
    """

    def _render_traceback_(self) -> list[str]:
        """IPython's hook for an exception's own traceback: the student's lines and the message."""
        from helpers.tracebacks import render

        return render(self)


def without_hidden_frames(tb: TracebackType | None) -> TracebackType | None:
    """A copy of the traceback chain `tb` without the frames whose locals set `__tracebackhide__ = True`."""
    kept = []
    while tb is not None:
        if tb.tb_frame.f_locals.get("__tracebackhide__") is not True:
            kept.append(tb)
        tb = tb.tb_next
    trimmed = None
    for entry in reversed(kept):
        trimmed = TracebackType(trimmed, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return trimmed


def render_without_hidden_frames(error: BaseException) -> list[str]:
    """The lines IPython would show for `error`, its hidden frames left out; plain Python's outside IPython."""
    tb = without_hidden_frames(error.__traceback__)
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:
        shell = None
    if shell is not None:
        try:  # the shell's own formatter, colours and all; it skips the frame of run_code itself
            return shell.InteractiveTB.structured_traceback(type(error), error, tb)
        except Exception:  # never lose the message to a formatting problem
            pass
    return traceback.format_exception(type(error), error, tb)


def _fail(message: str, hint: str | None = None) -> None:
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    if hint:
        message = f"{message}\nHint: {hint}"
    raise CheckFailed(message)


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"torch.Tensor of shape {tuple(value.shape)}, dtype {value.dtype}"
    if isinstance(value, np.ndarray):
        return f"numpy array of shape {value.shape}, dtype {value.dtype}"
    return f"{type(value).__name__} {value!r}"[:200]


def _as_float64(value: Any, name: str) -> np.ndarray:
    """A float64 NumPy copy of a tensor, array or number; fails on anything else."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().to(torch.float64).numpy()
    if isinstance(value, (np.ndarray, np.generic, int, float)) and not isinstance(value, bool):
        array = np.asarray(value)
        if array.dtype == object or not np.issubdtype(array.dtype, np.number):
            _fail(f"{name} should hold numbers, but it is {_describe(value)}.")
        return array.astype(np.float64)
    if isinstance(value, (list, tuple)):
        try:
            return np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            pass
    _fail(f"{name} should be an array or a tensor of numbers, but it is {_describe(value)}.")
    raise AssertionError("unreachable")


def _is_array(value: Any) -> bool:
    return isinstance(value, (np.ndarray, torch.Tensor))


def _both_scalars(actual: Any, expected: Any) -> bool:
    """A Python number against a 0-d array or tensor (or the other way round) is a fair comparison."""
    def scalar(v: Any) -> bool:
        return (isinstance(v, (int, float, np.generic)) and not isinstance(v, bool)) or (_is_array(v) and v.ndim == 0)
    return scalar(actual) and scalar(expected)


def _pair(got: float, want: float) -> tuple[str, str]:
    """Two numbers printed with enough digits to tell them apart (6, or up to 17 when close)."""
    for digits in (6, 10, 17):
        a, b = f"{got:.{digits}g}", f"{want:.{digits}g}"
        if a != b:
            break
    return a, b


def relative_error_of(actual: Any, expected: Any) -> float:
    """max |a - e| / max(1e-8, |a| + |e|), elementwise: 0 for equal arrays, about 1 for unrelated."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    a = _as_float64(actual, "actual")
    e = _as_float64(expected, "expected")
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - e) / np.maximum(1e-8, np.abs(a) + np.abs(e))))


def _type_phrase(t: type) -> str:
    """'an int', 'a NumPy bool', 'a torch.Tensor': a type as a student reads it (NumPy 2 names np.bool_ 'bool')."""
    package = t.__module__.split(".")[0]
    if package == "numpy":
        label = "NumPy " + {"ndarray": "array", "bool_": "bool"}.get(t.__name__, t.__name__)
    elif package == "torch":
        label = f"torch.{t.__name__}"
    else:
        label = t.__name__ if package == "builtins" else t.__qualname__
    return ("an " if label[0] in "aeiouAEIOU" else "a ") + label


def check_type(value: Any, types: type | tuple[type, ...], name: str, hint: str | None = None) -> None:
    """`value` is an instance of `types` (bool is not taken for a number)."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    types = types if isinstance(types, tuple) else (types,)
    ok = isinstance(value, types) and not (isinstance(value, bool) and bool not in types)
    if not ok:
        wanted = " or ".join(dict.fromkeys(_type_phrase(t) for t in types))
        _fail(f"{name} should be {wanted}, but it is {_describe(value)}.", hint)


def check_shape(value: Any, expected_shape: Sequence[int], name: str, hint: str | None = None) -> None:
    """`value` (array or tensor) has exactly `expected_shape`; a reversed shape suggests a transpose."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    if not isinstance(value, (np.ndarray, torch.Tensor)):
        _fail(f"{name} should be an array or a tensor of shape {tuple(expected_shape)}, "
              f"but it is {_describe(value)}.", hint)
    shape = tuple(value.shape)
    expected_shape = tuple(expected_shape)
    if shape == expected_shape:
        return
    message = f"{name} has shape {shape}; expected {expected_shape}."
    if len(shape) == 2 and shape == expected_shape[::-1]:
        hint = hint or "the shape is the transpose of the expected one - did you forget a transpose?"
    elif np.prod(shape, dtype=np.int64) == np.prod(expected_shape, dtype=np.int64):
        hint = hint or "same number of elements, different layout - check the order of a matmul or a reshape."
    _fail(message, hint)


def check_close(actual: Any, expected: Any, name: str, rtol: float = 1e-5, atol: float = 1e-8,
                hint: str | None = None) -> None:
    """`actual` equals `expected` elementwise within |a - e| <= atol + rtol * |e| (and has its shape)."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    if _is_array(expected) and not _both_scalars(actual, expected):
        check_shape(actual, tuple(expected.shape), name, None)
    a = _as_float64(actual, name)
    e = _as_float64(expected, "expected")
    if a.shape != e.shape:
        _fail(f"{name} has shape {a.shape}; expected {e.shape}.", hint)
    if not np.all(np.isfinite(a)):
        _fail(f"{name} contains NaN or infinity.",
              hint or "look for a division by zero, an overflow, or a learning rate that is too large.")
    close = np.abs(a - e) <= atol + rtol * np.abs(e)
    if np.all(close):
        return
    bad = np.argwhere(~close.reshape(a.shape) if a.shape else ~close)
    where = tuple(int(i) for i in bad[0]) if a.ndim else ()
    got, want = _pair(float(a[where]), float(e[where]))
    first = (f" First mismatch at index {where}: got {got}, expected {want}." if a.ndim
             else f" Got {got}, expected {want}.")
    _fail(f"{name} does not match the expected values: {int((~close).sum())} of {close.size} "
          f"elements differ beyond rtol={rtol:g}, atol={atol:g}.{first}", hint)


def check_relative_error(actual: Any, expected: Any, name: str, tol: float = GRAD_REL_TOL,
                         hint: str | None = None) -> None:
    """The relative error between `actual` and `expected` (see `relative_error_of`) is below `tol`."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    if _is_array(expected) and not _both_scalars(actual, expected):
        check_shape(actual, tuple(expected.shape), name, None)
    error = relative_error_of(actual, expected)
    if not np.isfinite(error) or error > tol:
        _fail(f"{name}: relative error {error:.2e} against the expected values; it must be below "
              f"{tol:.0e}. (About 1e-7 or less means right; 1e-2 or more means a real mistake.)", hint)


def check_equal(actual: Any, expected: Any, name: str, hint: str | None = None) -> None:
    """`actual == expected` for plain values (numbers, strings, booleans, lists of them); a NumPy scalar
    counts as the plain value it stands for (np.True_ as True)."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    plain = (bool, int, float, str, type(None), list, tuple, dict, set, frozenset)
    actual = _plain_answer(actual)  # np.True_, np.int64(3): the plain values they stand for
    if type(actual) not in plain or type(actual) is not type(expected):
        _fail(f"{name} should be the {type(expected).__name__} {expected!r}, but it is {_describe(actual)}.",
              hint)
    if actual != expected:
        _fail(f"{name} is {actual!r}; expected {expected!r}.", hint)


def check_true(condition: Any, message: str, hint: str | None = None) -> None:
    """`condition` is the boolean True; otherwise fail with `message`."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    if condition is not True and not (isinstance(condition, (np.bool_, torch.Tensor)) and bool(condition)):
        _fail(message, hint)


def check_gradients_match_autograd(
    loss_fn: Callable[..., torch.Tensor],
    inputs: dict[str, Any],
    grads: dict[str, Any],
    tol: float = GRAD_REL_TOL,
    hints: dict[str, str] | None = None,
) -> None:
    """Gradients the student computed equal those `torch.autograd` finds for `loss_fn(**inputs)`.

    `inputs` maps names to arrays or tensors (copied to float64 leaves that require grad);
    `grads` maps some of those names to the student's gradients.
    """
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    leaves = {k: torch.tensor(_as_float64(v, k), requires_grad=k in grads) for k, v in inputs.items()}
    loss = loss_fn(**leaves)
    if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
        raise TypeError("check_gradients_match_autograd: loss_fn must return a scalar tensor")
    loss.backward()
    for name, grad in grads.items():
        expected = leaves[name].grad
        check_relative_error(grad, expected, f"gradient of the loss with respect to {name}", tol,
                             (hints or {}).get(name))


def check_gradcheck(function: Callable[..., torch.Tensor], inputs: Iterable[torch.Tensor], name: str,
                    hint: str | None = None) -> None:
    """`torch.autograd.gradcheck` passes in float64: the backward agrees with finite differences."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    inputs = tuple(inputs)
    for x in inputs:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != torch.float64:
            raise TypeError("check_gradcheck needs float64 inputs; finite differences in float32 are too noisy")
    try:
        ok = torch.autograd.gradcheck(function, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True)
    except Exception as error:  # gradcheck raises GradcheckError (a RuntimeError) with the two Jacobians
        text = str(error).strip().splitlines()
        _fail(f"{name}: gradcheck failed, so backward does not compute the derivative of forward.\n"
              + "\n".join(text[:12]), hint)
    else:
        check_true(ok, f"{name}: gradcheck did not pass.", hint)


def check_no_grad_left(tensors: dict[str, torch.Tensor], hint: str | None = None) -> None:
    """None of the named leaf tensors carries an accumulated `.grad`."""
    __tracebackhide__ = True  # a failed check shows the student's line, not this frame
    for name, t in tensors.items():
        if t.grad is not None and bool(torch.any(t.grad != 0)):
            _fail(f"{name}.grad is not empty after your function returned: gradients accumulate across "
                  "backward() calls, so the next caller would get the sum of old and new gradients.",
                  hint or "zero the gradients (t.grad = None or t.grad.zero_()) once you have read them.")


# --- progress for the student -------------------------------------------------------------------
#
# The outcome of the last run of each visible test cell, by the name the cell hands to passed() or
# answer_recorded() on its last line: "passed", "recorded" (an answer's form), "failed" (a check did not
# hold: CheckFailed, or any AssertionError) or "error" (the code raised something else; the detail names
# it). A name missing has not run. passed() and answer_recorded() record their own outcome; a cell that
# raises never reaches them, so an IPython hook (watch_cells) reads every cell that ran and records its
# failure or error under the names the cell would have passed. The last run wins: a check that passed and
# then fails again is shown failed.

_outcomes: dict[str, tuple[str, str]] = {}  # name -> (outcome, detail)
_NAMED = re.compile(r"""\b(?:passed|answer_recorded)\(\s*(?P<q>["'])(?P<name>[^"'\n]+)(?P=q)\s*\)""")


def passed(exercise: str) -> None:
    """Record and announce that the visible checks of `exercise` passed (the last line of a test cell)."""
    _outcomes[exercise] = ("passed", "")
    print(f"\u2714 {exercise}: the visible checks pass.")


def answer_recorded(exercise: str) -> None:
    """Announce that an answer given as a value has the right form (the last line of its visible test).

    Only the hidden tests know the right value, so this is not a pass: `summary` does not count it.
    """
    _outcomes[exercise] = ("recorded", "")
    print(f"\u2022 {exercise}: answer recorded (form OK); its value is graded by the hidden tests.")


def _after_cell(result: Any) -> None:
    """IPython's post_run_cell hook: a cell that raised records its failure or error under every name it
    hands to passed() or answer_recorded()."""
    error = getattr(result, "error_in_exec", None) or getattr(result, "error_before_exec", None)
    if error is None:
        return  # passed() or answer_recorded() recorded the outcome themselves
    source = getattr(getattr(result, "info", None), "raw_cell", None) or ""
    outcome = ("failed", "") if isinstance(error, AssertionError) else ("error", type(error).__name__)
    for match in _NAMED.finditer(source):
        _outcomes[match.group("name")] = outcome


def watch_cells() -> None:
    """Record the outcome of every test cell that runs in this IPython session (Jupyter, Colab), once:
    importing this module does it where there is a shell; nothing happens outside IPython."""
    shell = None
    if "IPython" in sys.modules:  # no shell without IPython loaded: plain Python, the tests
        shell = sys.modules["IPython"].get_ipython()
    if shell is None:
        return
    callbacks = shell.events.callbacks["post_run_cell"]
    for callback in list(callbacks):  # this module imported again (a reload): one hook, the newest
        if getattr(callback, "__name__", "") == "_after_cell" and getattr(callback, "__module__", "") == __name__:
            shell.events.unregister("post_run_cell", callback)
    shell.events.register("post_run_cell", _after_cell)


def visible_results(points: dict[str, float]) -> dict[str, bool]:
    """{exercise: whether its visible checks passed on their last run}, for the exercises in `points`."""
    return {name: _outcomes.get(name, ("", ""))[0] == "passed" for name in points}


def _mark(name: str) -> str:
    outcome, detail = _outcomes.get(name, ("", ""))
    return {"passed": "\u2714 passed",
            "recorded": "\u2022 answer recorded, graded by the hidden tests",
            "failed": "\u2718 failed: a check did not hold on its last run",
            "error": f"\u2718 error: raised {detail} on its last run"}.get(outcome, "\u2718 not run yet")


def summary(points: dict[str, float]) -> None:
    """Print, exercise by exercise, what the last run of its visible checks gave in this session: not run
    yet, failed, an error, an answer recorded, or passed.

    Returns None, so that a notebook's last cell shows the table once (Jupyter would echo a returned
    value below it); `visible_results(points)` gives the passes as a dict. Hidden tests run only when
    the notebook is graded, so full marks here are necessary, not sufficient.
    """
    results = visible_results(points)
    width = max(len(name) for name in points)
    done = sum(points[name] for name, ok in results.items() if ok)
    for name in points:
        unit = "point" if points[name] == 1 else "points"
        print(f"  {name:<{width}}  {_mark(name)}  ({points[name]:g} {unit} at stake)")
    recorded = [name for name in points if _outcomes.get(name, ("", ""))[0] == "recorded"]
    print(f"Visible checks passed for {sum(results.values())} of {len(results)} exercises "
          f"({done:g} of {sum(points.values()):g} points at stake)"
          + (f"; {len(recorded)} answer(s) recorded, to be graded by the hidden tests." if recorded else "."))


def _plain_answer(value: Any) -> Any:
    """A NumPy scalar as the Python value it stands for (np.True_ -> True), anything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def self_check(question: str, predicted: dict[str, Any], actual: dict[str, Any],
               why: dict[str, str] | None = None) -> dict[str, bool | None]:
    """An ungraded self-check: print, key by key, whether a prediction matches what PyTorch does, and why.

    `predicted` holds the student's answers (None where not answered yet; NumPy booleans count as the
    booleans they are); `actual` what the code really gives. Never raises on a wrong or missing answer.
    Returns {key: True (right), False (wrong) or None (not answered)}.
    """
    why = why or {}
    predicted = predicted if isinstance(predicted, dict) else {}
    verdicts: dict[str, bool | None] = {}
    for key, truth in actual.items():
        guess = _plain_answer(predicted.get(key))
        verdicts[key] = None if guess is None else bool(guess == _plain_answer(truth))
    right = sum(v is True for v in verdicts.values())
    answered = sum(v is not None for v in verdicts.values())
    print(f"{question} (ungraded self-check): {right} of {len(verdicts)} right"
          + (f", {len(verdicts) - answered} not answered yet" if answered < len(verdicts) else "") + ".")
    for key, verdict in verdicts.items():
        if verdict is not None:
            mark = "\u2714" if verdict else "\u2718"
            print(f"  {mark} {key}: {actual[key]!r}." + ("" if verdict else f" {why.get(key, '')}".rstrip()))
    return verdicts


watch_cells()  # in Jupyter or Colab, from the setup cell's import on

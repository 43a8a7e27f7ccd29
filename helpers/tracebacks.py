"""What a student sees when their code raises: their own lines, the message, and the course's hint.

An error raised inside PyTorch by the student's code (a second backward through a freed graph, a
tensor changed in place after autograd saved it, mismatched shapes, dtypes or devices, a mode
mixed up) would show dozens of frames of `torch/` before its message. In IPython (Jupyter, Colab)
`install()` registers a handler through IPython's own hook for that (`set_custom_exc`): when a
traceback passes through library code (PyTorch, NumPy, the standard library, `helpers`), or its
message is one the course knows, the student sees the frames of their notebook's cells only, each
with its line, then the message and, where the course knows the mistake behind that message, a
hint. Any other error (a traceback entirely in the student's cells) is shown as IPython shows it.
`%tb` in a new cell prints the whole traceback.

A failed check (`helpers.checks.CheckFailed`) is rendered the same way: raised while the test
cell handled a PyTorch error, it shows the student's line that raised it, not PyTorch's frames.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import cache
from types import TracebackType
from typing import Any

# (what the message contains, the course's hint): the mistakes students make, in the course's words.
# The first whose text is in the error's message wins; texts are PyTorch's messages (torch 2.x).
HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("backward through the graph a second time",),
     "backward() and autograd.grad free the graph's saved tensors as they go. To go back through one "
     "graph more than once, pass retain_graph=True to every call but the last (or compute the outputs "
     "again, a new graph, for each pass)."),
    (("modified by an inplace operation",),
     "a tensor autograd saved for backward was changed in place afterwards (an operation ending in _, "
     "+=, or an assignment into a slice). Use the out-of-place form (y = y + 1), or change a .clone() of it instead. "
     "torch.autograd.set_detect_anomaly(True) names the forward operation that saved it."),
    (("a leaf Variable that requires grad is being used in an in-place operation",),
     "a weight that requires grad can only be changed in place while autograd is not recording: "
     "update it inside `with torch.no_grad():`."),
    (("does not require grad and does not have a grad_fn",),
     "nothing this tensor was computed from requires grad: it was computed under torch.no_grad() or "
     "torch.inference_mode(), from detached values (.detach(), .item(), .numpy()), or from weights "
     "replaced by new tensors (w = w - ...) instead of updated in place."),
    (("Inference tensors cannot be saved for backward", "Inplace update to inference tensor",
      "inference tensor"),
     "a tensor made under torch.inference_mode() met autograd later: make it outside inference mode "
     "(torch.no_grad() when only the graph is to be skipped), or use a .clone() of it."),
    (("Expected more than 1 value per channel when training",),
     "batch norm in training mode needs more than one sample per batch: put the model in eval mode "
     "(model.eval()) to predict, and back in train mode (model.train()) to train."),
    (("shapes cannot be multiplied", "size mismatch", "mat1 and mat2 must have the same", "Expected size for first two",
      "mismatch in its core dimension"),  # the last: NumPy's matmul
     "a matrix product (A @ B, a Linear layer) needs A's last dimension to equal B's first: print "
     "both shapes; the usual fix is a transpose (.T), the order of the operands, or in_features."),
    (("must match the size of tensor", "could not be broadcast together"),
     "elementwise operations need shapes that broadcast (equal, or 1, from the right): print both "
     "shapes; a missing [:, None], a reduction without keepdim=True, or a transpose."),
    (("same dtype", "expected scalar type", "Found dtype", "expected both vectors to have same dtype",
      "can't be cast to the desired output type", "not implemented for 'Long'", "not implemented for 'Int'"),
     "the operands have different dtypes: NumPy's float64 (torch.from_numpy keeps it) meeting float32 "
     "weights, or integers where floats are needed. Convert one side (.float(), .to(w.dtype)); "
     "cross_entropy wants int64 class indices."),
    (("Expected all tensors to be on the same device", "device type tensor to numpy",
      "Input type (torch.cuda", "should be the same or input should be a MKLDNN tensor"),
     "the tensors are on different devices: move the model and every tensor it meets to one device "
     "(model.to(device), x.to(device)), and bring results to the CPU (.cpu()) before NumPy."),
    (("Can't call numpy() on Tensor that requires grad",),
     "NumPy must not get at a tensor autograd is tracking: call .detach() before .numpy()."),
)


def course_hint(error: BaseException) -> str | None:
    """The course's hint for the mistake behind `error`'s message, or None when none is known."""
    message = str(error)
    for texts, hint in HINTS:
        if any(text in message for text in texts):
            return hint
    return None


@cache
def _library_roots() -> tuple[str, ...]:
    """Folders of code that is not the student's: the standard library, installed packages, helpers."""
    import helpers

    roots = {os.path.dirname(os.path.abspath(helpers.__file__))}
    paths = sysconfig.get_paths()
    roots.update(paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths)
    roots.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        roots.add(os.path.dirname(os.path.abspath(torch.__file__)))
    return tuple(sorted(os.path.realpath(r) for r in roots if r))


def _cell_name(filename: str, shell: Any) -> str | None:
    """'Cell In[5]' for the code of a notebook cell (IPython's own name for it), else None."""
    format_code_name = getattr(getattr(shell, "compile", None), "format_code_name", None)
    if format_code_name is not None:
        try:
            named = format_code_name(filename)
        except Exception:  # an older IPython: fall through
            named = None
        if named:
            return " ".join(named)
    if filename.startswith("<ipython-input-"):  # IPython 7 (Colab's)
        return filename.strip("<>")
    return None


def is_students(filename: str, shell: Any = None) -> bool:
    """Whether code in `filename` is the student's: a notebook cell, or a file outside the libraries."""
    if _cell_name(filename, shell):
        return True
    if filename.startswith("<"):  # <frozen ...>, <string>: nothing the student can open
        return False
    path = os.path.realpath(filename)
    return not any(path == root or path.startswith(root + os.sep) for root in _library_roots())


def _frames(tb: TracebackType | None) -> list[tuple[str, int, str]]:
    """(filename, line number, function name) of each frame of `tb`, outermost first."""
    frames = []
    while tb is not None:
        code = tb.tb_frame.f_code
        frames.append((code.co_filename, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    return frames


def _chain(error: BaseException) -> list[tuple[BaseException, str | None]]:
    """`error` and the exceptions it was raised from or while handling, oldest first, each with the
    sentence that leads from it to the next (None for the last)."""
    chain: list[tuple[BaseException, str | None]] = [(error, None)]
    seen = {id(error)}
    while True:
        current = chain[0][0]
        if current.__cause__ is not None:
            older, why = current.__cause__, "The above exception was the direct cause of the following exception:"
        elif current.__context__ is not None and not current.__suppress_context__:
            older, why = current.__context__, "During handling of the above exception, another exception occurred:"
        else:
            return chain
        if id(older) in seen:
            return chain
        seen.add(id(older))
        chain.insert(0, (older, why))


def _skip_shell_frame(tb: TracebackType | None) -> TracebackType | None:
    """`tb` without IPython's own first frame (run_code's exec), as IPython's tb_offset does."""
    if tb is not None and tb.tb_frame.f_code.co_name == "run_code" and "IPython" in tb.tb_frame.f_code.co_filename:
        return tb.tb_next
    return tb


def passes_through_libraries(error: BaseException, shell: Any = None) -> bool:
    """Whether a frame of `error`'s traceback, or of one it was raised while handling, is library code."""
    return any(not is_students(filename, shell)
               for e, _ in _chain(error) for filename, _, _ in _frames(_skip_shell_frame(e.__traceback__)))


def _message(error: BaseException) -> list[str]:
    text = str(error)
    lines = [f"{type(error).__name__}: {text}" if text else type(error).__name__]
    lines += [str(note) for note in getattr(error, "__notes__", ()) or ()]
    return lines


def render(error: BaseException, shell: Any = None) -> list[str]:
    """The lines a student sees for `error`: for it and each exception it was raised from or while
    handling, the frames of the student's code (where, and the line), then the message; last, the
    course's hint where one is known and the failure has none of its own."""
    if shell is None:
        shell = _shell()
    lines: list[str] = []
    for e, why in _chain(error):
        shown = None
        for filename, lineno, name in _frames(_skip_shell_frame(e.__traceback__)):
            if not is_students(filename, shell) or (filename, lineno) == shown:  # a comprehension's frame: once
                continue
            shown = (filename, lineno)
            where = _cell_name(filename, shell) or f'File "{filename}"'
            lines.append(f"{where}, line {lineno}" + ("" if name == "<module>" else f", in {name}"))
            source = _source_line(filename, lineno)
            if source:
                lines.append(f"    {source}")
        lines += _message(e)
        if why:
            lines += ["", why, ""]
    hint = None if "\nHint: " in str(error) else next(
        (h for e, _ in reversed(_chain(error)) if (h := course_hint(e))), None)
    if hint:
        lines.append(f"Hint: {hint}")
    if passes_through_libraries(error, shell):
        lines.append("(Frames of PyTorch and of the course's helpers are hidden; %tb in a new cell shows them.)")
    return lines


def _source_line(filename: str, lineno: int) -> str:
    import linecache

    return linecache.getline(filename, lineno).strip()


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _handler(shell: Any, etype: type, value: BaseException, tb: TracebackType | None,
             tb_offset: int | None = None) -> None:
    """IPython's custom exception handler: shows the traceback itself (IPython ignores what it returns)."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # for %tb
    if hasattr(value, "_render_traceback_") or not (
            passes_through_libraries(value, shell) or any(course_hint(e) for e, _ in _chain(value))):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)  # the student's own bug: IPython's view
        return
    shell._showtraceback(etype, value, render(value, shell))


def install(shell: Any = None) -> bool:
    """Show errors raised through library code as `render` writes them, in this IPython shell (the
    running one by default); False outside IPython. Installing twice changes nothing."""
    shell = shell if shell is not None else _shell()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((Exception,), _handler)
    return True


"""Stand-ins more than one assignment hands the student's functions in the kernel (grading/*/given.py use them).

Like every stand-in, they build inputs and hand back what the student's objects give; they compute no
property, expected value or verdict (autograder/probes/__init__.py). Standard library only at import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any


class StandIn:
    """`with StandIn(function, {name: value, ...}):` the globals `function` reads under those names are the
    values (the grader's stand-ins for the student's own helpers), then as they were."""

    def __init__(self, function: Callable, replacements: Mapping[str, Any]):
        self.names, self.replacements = function.__globals__, dict(replacements)

    def __enter__(self) -> StandIn:
        self.saved = {name: (name in self.names, self.names.get(name)) for name in self.replacements}
        self.names.update(self.replacements)
        return self

    def __exit__(self, *exc) -> bool:
        for name, (had, value) in self.saved.items():
            if had:
                self.names[name] = value
            else:
                self.names.pop(name, None)
        return False


def floats(values: Iterable) -> list[float]:
    """Each value of a sequence the student returned, as a float (a 0-d tensor or array too)."""
    return [float(v.detach()) if hasattr(v, "detach") else float(v) for v in values]


def type_names(values: Iterable) -> list[str]:
    """The type's name of each value of a sequence the student returned (floats, or tensors?)."""
    return [type(v).__name__ for v in values]


def listed(values: Iterable) -> list:
    """What the student returned, as a list (a tuple or a generator too)."""
    return list(values)

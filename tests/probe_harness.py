"""Drive a probe module without a kernel, as the probe tests of every assignment do."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest

from autograder.probes import judge, run_in_namespace


def probe_failures(probe: ModuleType, names: dict, seed: int, folder: Path, patches: dict | None = None,
                   expected: Callable[[int], dict] | None = None) -> dict[str, str]:
    """exercise -> message for every exercise that fails on the inputs of `seed`.

    patches: (object, attribute) -> value, in force while the student's side runs only (judging
    happens in another process when grading). expected: seed -> the reference's answers, to reuse
    them across tests (default: computed each time).
    """
    inputs = probe.make_inputs(np.random.default_rng(seed))
    with pytest.MonkeyPatch.context() as mp:
        for (target, attribute), value in (patches or {}).items():
            mp.setattr(target, attribute, value)
        outputs = run_in_namespace(probe, names, inputs, folder)
    if expected is not None:
        probe = SimpleNamespace(**vars(probe))
        probe.expected = lambda _inputs: expected(seed)
    return {name: v.message for name, v in judge(probe, inputs, outputs).items() if not v.ok}

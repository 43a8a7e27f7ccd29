"""A number a notebook computes or measures is printed by the notebook, not stated in its prose (issue 38, 3).

Prose that states a result ("the loss climbs more than twentyfold ... a plateau near 550") is true on the machine
it was written on; the printout is true on every machine, and the prose explains it. Each case: the sentence that
stated the number is gone, and a code cell prints it.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

CASES = [  # (notebook, a phrase that stated a computed number, what a code cell prints instead)
    ("source/01_numpy_mlp/01_numpy_mlp.ipynb", "about 7,000 for `w1` and 170,000 for `w2`", "mean |gradient|"),
    ("source/01_numpy_mlp/01_numpy_mlp.ipynb", "fourteen orders of magnitude", "orders of magnitude"),
    ("source/01_numpy_mlp/01_numpy_mlp.ipynb", "plateau near 550", "highest"),
    ("source/05_optim/05_optim.ipynb", "is fastest here", "at step 0"),
    ("notebooks/03_static_dynamic_graphs.ipynb", "The speedup is smaller than the ratio of memory traffic",
     "x eager"),
]


@pytest.mark.parametrize("path, stated, printed", CASES, ids=[f"{Path(p).stem}: {s[:24]}" for p, s, _ in CASES])
def test_the_number_is_printed_not_stated(path, stated, printed):
    cells = nbformat.read(ROOT / path, as_version=4).cells
    prose = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert stated not in " ".join(prose.split()), f"{path} states it: {stated!r}"
    assert any(printed in c.source and "print(" in c.source for c in cells if c.cell_type == "code"), \
        f"{path}: no code cell prints {printed!r}"

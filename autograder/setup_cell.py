"""The setup cell every notebook opens with, written from one template.

Its head (install where missing, seed, pick the device) is the same in every notebook and
carries the configured `helpers_wheel_url`; what follows `device = helpers.setup()` is the
notebook's own imports. `release` rewrites the head of each notebook from this template, so
the address is never typed by hand.
"""

from __future__ import annotations

from pathlib import Path

from autograder.course import REPO_ROOT, course_settings

ANCHOR = "device = helpers.setup()"

TEMPLATE = '''\
# Setup (read-only): run this cell first. It installs the course's `helpers` package where it
# is missing (Colab), seeds every random generator and picks the device.
try:
    import helpers
except ModuleNotFoundError:
    import sys

    if "google.colab" not in sys.modules:
        raise ModuleNotFoundError(
            "The course's helpers package is missing. Run  pip install {url}  "
            "in this notebook's environment, then restart the kernel."
        ) from None
    %pip install --quiet {url}
    import helpers
{anchor}'''


class SetupCellError(ValueError):
    """A notebook's first code cell is not a setup cell."""


def setup_head(root: Path = REPO_ROOT) -> str:
    """The shared head of the setup cell, ending with the `device = helpers.setup()` line."""
    return TEMPLATE.format(url=course_settings(root)["helpers_wheel_url"], anchor=ANCHOR)


def rewrite_setup_cell(source: str, head: str, where: str = "notebook") -> str:
    """`source` with everything up to and including the anchor line replaced by `head`."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == ANCHOR:
            return "\n".join([head, *lines[i + 1:]])
    raise SetupCellError(f"{where}: the first code cell must be the setup cell, with the line "
                         f"`{ANCHOR}` (see docs/authoring.md)")


def apply_setup_cell(nb, where: str = "notebook", root: Path = REPO_ROOT) -> bool:
    """Rewrite the first code cell of an nbformat notebook in place; True if it changed."""
    cell = next((c for c in nb.cells if c.cell_type == "code"), None)
    if cell is None:
        raise SetupCellError(f"{where}: no code cell, so no setup cell")
    new = rewrite_setup_cell(cell.source, setup_head(root), where)
    changed = new != cell.source
    cell.source = new
    return changed

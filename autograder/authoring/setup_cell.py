"""The setup cell every notebook opens with, rendered from autograder/authoring/setup_cell_head.py.

Its head (install where missing, seed, pick the device) is the same in every notebook and
carries the student wheel's address, derived from `[tool.course]` and `[project] version`
(autograder/course/settings.py); what follows `device = helpers.setup()` is the notebook's own imports.
`release` and `configure` rewrite the head of each notebook from the template, so no address
is ever typed by hand.
"""

from __future__ import annotations

from pathlib import Path

from autograder.course.settings import CourseSettings, course_settings

ANCHOR = "device = helpers.setup()"
TEMPLATE_FILE = Path(__file__).with_name("setup_cell_head.py")
CUT = "# ---- cut: the setup cell starts below ----\n"
PLACEHOLDERS = ('"{wheel_url}"', '"{not_installed}"')


class SetupCellError(ValueError):
    """A notebook's first code cell is not a setup cell."""


def not_installed_message(settings: CourseSettings) -> str:
    """The one line a student sees on Colab when the wheel cannot be installed: what they can do
    (a lost connection passes; a wheel not published yet needs the instructor, told where)."""
    return ("The course's helpers package could not be installed, so this notebook cannot run yet. "
            "Run this cell again; if it fails again, choose Runtime > Disconnect and delete runtime, "
            "then run the notebook from the top. Still failing? Tell your instructor, with this "
            f"line: the package did not install from {settings.wheel_url}")


def render_head(settings: CourseSettings) -> str:
    """The shared head of the setup cell for `settings`, ending with the anchor line."""
    template = TEMPLATE_FILE.read_text(encoding="utf-8").split(CUT, 1)[1]
    values = (settings.wheel_url, not_installed_message(settings))
    for placeholder, value in zip(PLACEHOLDERS, values):
        if template.count(placeholder) != 1:
            raise RuntimeError(f"{TEMPLATE_FILE}: expected {placeholder} exactly once")
        # A double-quoted literal, like the code around it (repr() would pick single quotes).
        template = template.replace(placeholder, '"' + value.replace("\\", "\\\\").replace(
            '"', '\\"') + '"')
    head = template.rstrip("\n")
    if not head.endswith(ANCHOR):
        raise RuntimeError(f"{TEMPLATE_FILE}: must end with the line `{ANCHOR}`")
    return head


def setup_head(root: Path) -> str:
    """The shared head of the setup cell of the course at `root`."""
    return render_head(course_settings(root))


def rewrite_setup_cell(source: str, head: str, where: str = "notebook") -> str:
    """`source` with everything up to and including the anchor line replaced by `head`."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == ANCHOR:
            return "\n".join([head, *lines[i + 1:]])
    raise SetupCellError(f"{where}: the first code cell must be the setup cell, with the line "
                         f"`{ANCHOR}` (see docs/authoring.md)")


def first_code_cell(nb, where: str = "notebook"):
    """The notebook's setup cell (its first code cell); SetupCellError if it has none."""
    cell = next((c for c in nb.cells if c.cell_type == "code"), None)
    if cell is None:
        raise SetupCellError(f"{where}: no code cell, so no setup cell")
    return cell


def apply_setup_cell(nb, head: str, where: str = "notebook") -> bool:
    """Rewrite the first code cell of an nbformat notebook in place; True if it changed.

    head: the rendered head (setup_head(root) of the course).
    """
    cell = first_code_cell(nb, where)
    new = rewrite_setup_cell(cell.source, head, where)
    changed = new != cell.source
    cell.source = new
    return changed

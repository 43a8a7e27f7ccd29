# The head of every notebook's setup cell, as code that ruff and tests read: never imported.
# autograder/authoring/setup_cell.py renders what follows the cut line into each notebook, replacing the
# quoted placeholders "{wheel_url}" and "{not_installed}" with string literals. It runs on Colab
# before `helpers` exists, so it is self-contained; when the wheel cannot be installed it stops
# with one line (IPython shows `_render_traceback_` instead of a traceback).
# ---- cut: the setup cell starts below ----
# Setup (read-only): run this cell first. It installs the course's `helpers` package where it
# is missing (Colab), seeds every random generator and picks the device.
try:
    import helpers
except ModuleNotFoundError:
    import importlib
    import subprocess
    import sys

    class SetupError(Exception):
        def _render_traceback_(self):  # Jupyter and Colab show this one line, no traceback
            return [str(self)]

    WHEEL = "{wheel_url}"
    if "google.colab" not in sys.modules:
        raise SetupError(f"The course's helpers package is missing: run  pip install {WHEEL}  "
                         "in this notebook's environment, then restart the kernel.") from None
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", WHEEL],
                         capture_output=True, text=True)
    if pip.returncode:
        said = (pip.stderr.strip().splitlines() or ["no output"])[-1]
        raise SetupError("{not_installed}" + f" (pip: {said})") from None
    importlib.invalidate_caches()  # a package installed while Python runs
    import helpers
device = helpers.setup()

"""Run a source notebook's solution cells without a kernel, for comparing them with the reference."""

from __future__ import annotations

import json
from pathlib import Path


def solution_namespace(notebook: Path) -> dict:
    """Run the solution cells of a source notebook (no kernel) and return the names they define."""
    cells = json.loads(Path(notebook).read_text())["cells"]
    namespace: dict = {}
    exec("import torch\nimport torch.nn.functional as F\nfrom torch import nn", namespace)
    for cell in cells:
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), namespace)
    return namespace

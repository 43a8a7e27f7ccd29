"""Run a source notebook's solution cells without a kernel, for comparing them with the reference."""

from __future__ import annotations

import json
from pathlib import Path


def solution_namespace(notebook: Path, imports: str = "") -> dict:
    """Run the solution cells of a source notebook (no kernel) and return the names they define.

    imports: more of the setup cell's imports, for solution cells that need them at definition time.
    """
    cells = json.loads(Path(notebook).read_text())["cells"]
    namespace: dict = {}
    exec("import torch\nimport torch.nn.functional as F\nfrom torch import nn\n" + imports, namespace)
    for cell in cells:
        if cell["cell_type"] == "code" and cell["metadata"].get("nbgrader", {}).get("solution"):
            exec("".join(cell["source"]), namespace)
    return namespace

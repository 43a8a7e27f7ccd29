"""Execute a notebook top to bottom with nbclient and keep the executed copy.

usage: python .github/scripts/execute_notebook.py NOTEBOOK OUT [--timeout SECONDS]
Exits 1 naming the cell that raised (the executed copy, error included, is still written).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def execute(notebook: Path, out: Path, timeout: int) -> int:
    """Run `notebook` in its own folder; write the executed notebook to `out`; 0 if no cell raised."""
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook.parent)}})
    status = 0
    try:
        client.execute()
    except CellExecutionError as error:
        print(f"{notebook}: a cell raised\n{error}", file=sys.stderr)
        status = 1
    out.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out)
    print(f"executed {notebook} -> {out}")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    args = parser.parse_args(argv)
    return execute(args.notebook.resolve(), args.out.resolve(), args.timeout)


if __name__ == "__main__":
    raise SystemExit(main())

"""The course's GPU paths, run where a CUDA device is: `python scripts/gpu_checks.py OUT`.

`make test` runs everywhere and skips what needs CUDA; this runs that part on a machine that has one
(a Colab GPU runtime, a lab machine): 08's source notebook, the four lecture notebooks, each executed
top to bottom with nbclient (every output kept in OUT/<name>.ipynb, each cell's wall time in
OUT/gpu_checks.json), then the tests that use the device (the `gpu` mark, 08's grading folder with its
probes on the GPU, the timing helpers). It exits non-zero when there is no CUDA device or a step fails.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import torch
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = [ROOT / "source" / "08_gpu_batch_timing" / "08_gpu_batch_timing.ipynb",
             *sorted((ROOT / "notebooks").glob("*.ipynb"))]
TESTS = ["tests/test_reference_gpu_batch_timing.py", "tests/test_reference_autograd.py",
         "tests/test_helpers.py", "tests/test_async_device.py", "tests/test_timing.py",
         "tests/test_grading_particular.py", "tests/test_grading_folders.py"]


def execute(path: Path, out: Path) -> dict:
    """Run one notebook in a fresh kernel, keep its outputs; the cells' wall times and the first error."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}})
    times, error = [], None
    started = time.perf_counter()
    with client.setup_kernel():
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            begin = time.perf_counter()
            try:
                client.execute_cell(cell, index)
            except Exception as exc:  # noqa: BLE001 - reported, and the next notebook runs
                error = f"cell {index}: {type(exc).__name__}: {str(exc)[-2000:]}"
                break
            finally:
                times.append((index, round(time.perf_counter() - begin, 3)))
    nbformat.write(nb, out / path.name)
    return {"notebook": path.name, "seconds": round(time.perf_counter() - started, 1),
            "cells": times, "error": error}


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    if not torch.cuda.is_available():
        print("no CUDA device here: nothing to check")
        return 2
    env = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "device": torch.cuda.get_device_name(0)}
    print(env, flush=True)
    report: dict = {"environment": env, "notebooks": [], "tests": None}
    failed = False
    for path in NOTEBOOKS:
        result = execute(path, out)
        report["notebooks"].append(result)
        failed |= result["error"] is not None
        print(f"{result['notebook']}: {result['seconds']} s, error: {result['error']}", flush=True)
        (out / "gpu_checks.json").write_text(json.dumps(report, indent=1))
    tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "-n", str(min(8, os.cpu_count() or 1)), "-rs", *TESTS,
                            "-k", "not grading_folders or 08_gpu"], cwd=ROOT)
    report["tests"] = tests.returncode
    (out / "gpu_checks.json").write_text(json.dumps(report, indent=1))
    return int(failed or tests.returncode != 0)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "build/gpu_checks")))

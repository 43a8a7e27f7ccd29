"""A proof is made once per course state: what `check` proved of an assignment, reused while nothing it rests on changed.

`check` grades an assignment's solution, untouched release, mutants and other answers, each through the whole
engine: minutes of CPU. `make course` does it, then `make test` asked the same of the same bytes again. So every
entry of the course report (build/course-report.json) carries `digest`, the sha256 of everything its result
depends on, and a caller that passes the report back (`check(..., reuse=path)`: the test suite's pipeline
fixture) gets the entry itself wherever the digest of the course as it is now is the same. Any changed byte
makes the assignment checked again.

What an assignment's result depends on (`inputs`):
- its own folders: source/<assignment>/, release/<assignment>/, grading/<assignment>/ (every file, by name
  and content);
- the code that grades and checks: every module of `autograder` but the classroom's (the engine, the probes,
  the course model, the batch layer, check and the authoring steps it runs; nbgrader_config.py), and every
  file of `helpers` (what the notebooks import, and the references the probes judge against);
- the versions of Python and of the packages that run or judge a notebook, the variables that change a
  score (batch/journal.py's rule, less where kernels come from), and check's cell timeout.
The trusted run's secret inputs are drawn afresh by every check, so a reused entry is the proof one check
made on these bytes, as `make course` printed it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
from pathlib import Path

from autograder.batch.journal import _ENV_IGNORED, _ENV_PREFIXES, _VERSIONED, _package_dir
from autograder.course.grading_folder import GRADING
from autograder.course.layout import Course

# Where a kernel comes from (the test suite's shared server), not what it computes.
_NOT_INPUTS = (*_ENV_IGNORED, "AUTOGRADER_KERNEL_SERVER")
_VERSIONS = (*_VERSIONED, "jupyter_client", "nbformat", "nbconvert")
_SKIPPED_PARTS = ("__pycache__", ".ipynb_checkpoints")


def _files(folder: Path, label: str) -> list[tuple[str, Path]]:
    """Every file under `folder`, named `label/<relative path>`, in a stable order."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return [(f"{label}/{p.relative_to(folder).as_posix()}", p) for p in sorted(folder.rglob("*"))
            if p.is_file() and not set(_SKIPPED_PARTS) & set(p.parts) and p.suffix != ".pyc"]


def code_files() -> list[tuple[str, Path]]:
    """The code every assignment's proof rests on: `autograder` but its classroom layer, and `helpers`."""
    files = []
    for name in ("autograder", "helpers"):
        package = _package_dir(name)
        if package is not None:
            files += [(label, path) for label, path in _files(package, name)
                      if not label.startswith("autograder/classroom/")]
    return files


def digests(course: Course, assignments: list[str], timeout: int | None = None) -> dict[str, str]:
    """assignment -> the digest of what its proof rests on (the code hashed once for them all)."""
    shared = _shared(timeout)
    return {a: hashlib.sha256(json.dumps(inputs(course, a, shared), sort_keys=True).encode()).hexdigest()
            for a in assignments}


def inputs(course: Course, assignment: str, shared: dict | None = None) -> dict:
    """What the proof of `assignment` rests on, each part hashed (see the module's docstring)."""
    own = (_files(course.source_dir / assignment, f"source/{assignment}")
           + _files(course.release_dir / assignment, f"release/{assignment}")
           + _files(Path(course.root) / GRADING / assignment, f"{GRADING}/{assignment}"))
    return {"assignment": _hash(own), **(shared if shared is not None else _shared(None))}


def _shared(timeout: int | None) -> dict:
    from importlib import metadata

    versions = {}
    for name in _VERSIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith(_ENV_PREFIXES) and k not in _NOT_INPUTS}
    return {"code": _hash(code_files()), "python": platform.python_version(), "versions": versions, "env": env,
            "timeout": timeout}


def _hash(files: list[tuple[str, Path]]) -> str:
    total = hashlib.sha256()
    for name, path in files:
        total.update(name.encode() + b"\0" + Path(path).read_bytes() + b"\0")
    return total.hexdigest()


def reusable(path: Path | None, digests: dict[str, str]) -> dict[str, dict]:
    """assignment -> its entry in the report at `path`, for each assignment whose entry carries the digest
    given for it (an unreadable report, or one written before digests, gives nothing)."""
    if path is None or not Path(path).is_file():
        return {}
    try:
        entries = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(entries, list):
        return {}
    return {entry["assignment"]: entry for entry in entries
            if isinstance(entry, dict) and entry.get("assignment") in digests
            and entry.get("digest") == digests[entry["assignment"]]}

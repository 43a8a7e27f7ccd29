"""The grading journal: one record per finished submission, so a batch can resume.

`OUT/.journal/<assignment>/<student>.json` holds a result and the fingerprint of everything
that determined it: the submitted notebook's bytes, the source notebook's bytes (solutions and
hidden tests), and the settings that change scores (cell timeout, nbgrader_config.py, the code
that grades: autograder's engine and the layers under it (autograder/layers.py), helpers and the
graded course's grading/; package versions, the AUTOGRADER_*/PYTORCH_COURSE_* variables, the
warnings found while collecting). A later run reuses a record only when its fingerprint
matches; anything else is graded again. Records are written atomically (temporary file,
then os.replace), so an interrupted run leaves whole records or none.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import platform
import secrets
import time
from collections.abc import Iterable
from pathlib import Path

from autograder import layers
from autograder.course.atomic import atomic_write
from autograder.course.grading_folder import GRADING
from autograder.engine.job import Failure, GradeJob, GradeResult

FOLDER = ".journal"
_VERSIONED = ("nbgrader", "nbclient", "ipykernel", "numpy", "torch", "torchvision")
# Environment that reaches the kernels and can change a score (07 online or offline, limits);
# not the ones that only change speed or where things are.
_ENV_PREFIXES = ("AUTOGRADER_", "PYTORCH_COURSE_")
_ENV_IGNORED = ("AUTOGRADER_WARM_KERNELS", "AUTOGRADER_ROOT")


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _sha256_files(files: Iterable[tuple[str, Path]]) -> str:
    """One digest of these files, each by its name and its content."""
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(name.encode() + b"\0")
        digest.update(Path(path).read_bytes() + b"\0")
    return digest.hexdigest()


def _python_files(folder: Path) -> list[Path]:
    return [p for p in sorted(Path(folder).rglob("*.py")) if "__pycache__" not in p.parts]


def grading_code(course_root: Path) -> list[tuple[str, Path]]:
    """The code that judges every submission of the course at `course_root`, by name: the
    modules of autograder's grading layers (layers.grading_files), helpers (what the notebooks
    import) and the course's grading/ (its probes)."""
    package = _package_dir("autograder") or layers.PACKAGE
    files = [(f"autograder/{p.relative_to(package)}", p) for p in layers.grading_files(package)]
    helpers = _package_dir("helpers")
    if helpers is not None:
        files += [(f"helpers/{p.relative_to(helpers)}", p) for p in _python_files(helpers)]
    grading = Path(course_root) / GRADING
    if grading.is_dir():
        files += [(f"{GRADING}/{p.relative_to(grading)}", p) for p in _python_files(grading)]
    return files


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def grading_settings(course_root: Path, timeout: int, restore_missing_cells: bool = True) -> dict:
    """What, besides the two notebooks, decides a score in the course at `course_root`;
    computed once per batch."""
    from autograder.engine.nbgrader_setup import CONFIG_FILE

    versions = {}
    for name in _VERSIONED:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    env = {k: v for k, v in sorted(os.environ.items())
           if k.startswith(_ENV_PREFIXES) and k not in _ENV_IGNORED}
    return {"timeout": int(timeout), "restore_missing_cells": bool(restore_missing_cells),
            "nbgrader_config": sha256_file(CONFIG_FILE), "code": _sha256_files(grading_code(course_root)),
            "python": platform.python_version(), "versions": versions, "env": env}


def fingerprint(job: GradeJob, source_notebook: Path, settings: dict) -> dict:
    """The inputs of one job, hashed; `digest` sums them up."""
    inputs = {"submission": sha256_file(job.notebook), "source": sha256_file(source_notebook),
              "settings": settings, "warnings": list(job.warnings)}
    inputs["digest"] = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    return inputs


class Journal:
    """The records under `out/.journal`."""

    def __init__(self, out: Path):
        self.dir = Path(out) / FOLDER

    def key(self) -> str:
        """This output folder's secret for the probes' inputs (autograder/engine/verify.py), made once:
        the same submission gets the same inputs on every run; kernels cannot read it."""
        path = self.dir / "key"
        try:
            return path.read_text(encoding="utf-8").strip()
        except OSError:
            self.dir.mkdir(parents=True, exist_ok=True)
            atomic_write(path, secrets.token_hex(32) + "\n")
            path.chmod(0o600)
            return path.read_text(encoding="utf-8").strip()

    def path(self, student_id: str, assignment: str) -> Path:
        # Student ids are folder names of SUBMITTED: already valid file names.
        return self.dir / assignment / f"{student_id}.json"

    def read(self, student_id: str, assignment: str) -> dict | None:
        """The record, or None when there is none or it cannot be read."""
        try:
            record = json.loads(self.path(student_id, assignment).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and "result" in record else None

    def reusable(self, job: GradeJob, inputs: dict) -> GradeResult | None:
        """The recorded result of `job`, if its inputs are the same and its outputs still there."""
        record = self.read(job.student_id, job.assignment)
        if record is None or record.get("inputs", {}).get("digest") != inputs["digest"]:
            return None
        try:
            result = GradeResult(**record["result"])
        except TypeError:  # written by another version of GradeResult
            return None
        if result.status == "graded":
            for made in (job.feedback_file, job.kept_notebook):
                if made is not None and not made.is_file():
                    return None
        return result

    def write(self, result: GradeResult, inputs: dict) -> bool:
        """Record a finished result; False (nothing written) when it must be graded again."""
        if result.status == "error" and Failure(result.failure).transient:  # says nothing of the work
            return False
        record = {"inputs": inputs, "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  "result": result.to_dict()}
        atomic_write(self.path(result.student_id, result.assignment),
                     json.dumps(record, indent=1) + "\n")
        return True

    def remove(self, student_id: str, assignment: str) -> None:
        self.path(student_id, assignment).unlink(missing_ok=True)

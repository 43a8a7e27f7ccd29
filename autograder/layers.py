"""The grader's layers: each module of `autograder` sits in one, and imports only from its own
layer and the layers below it (docs/design.md, "Layers"; tests/test_layers.py reads every import).

    __main__                  the command line: imports every command
    authoring/   classroom/   the commands before and during a term; siblings never import each other
    batch/                    many submissions: the session, backends, journal, `grade`, `bench`
    engine/                   one submission in, one result out (and nbgrader_config.py, its settings)
    course/                   the course on disk: settings, layout, notebooks, points, grading folders
    probes/                   the probe contract that grading/*/probe.py and the kernels import

A command (a module `__main__` imports as a module) is imported by `__main__` alone.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent

# Lowest first; the layers of one tuple are siblings.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("probes",),
    ("course",),
    ("engine",),
    ("batch",),
    ("authoring", "classroom"),
    ("__main__",),
)
# The modules at the package's top: the layer each belongs to.
TOP_LEVEL = {"__init__": "probes", "layers": "probes", "nbgrader_config": "engine",
             "__main__": "__main__"}
# The layer that grades one submission: its code and the code of the layers below it decide a
# score (the journal's fingerprint hashes them); the layers above only choose what is graded.
GRADES = "engine"


def layer_of(module: str) -> str | None:
    """The layer of a module of autograder ("autograder.engine.job" -> "engine"), None if it has none."""
    parts = module.split(".")
    if parts[0] != "autograder":
        return None
    name = parts[1] if len(parts) > 1 else "__init__"
    if name in TOP_LEVEL:
        return TOP_LEVEL[name]
    return name if any(name in names for names in LAYERS) else None


def rank(layer: str) -> int:
    """How high `layer` sits: 0 for the lowest."""
    return next(i for i, names in enumerate(LAYERS) if layer in names)


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """autograder/engine/job.py -> "autograder.engine.job"; a package's __init__.py -> its name."""
    parts = Path(path).relative_to(Path(package).parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def grading_files(package: Path = PACKAGE) -> list[Path]:
    """The .py files whose code decides a score: every module of GRADES and the layers below it."""
    top = rank(GRADES)
    files = []
    for path in sorted(Path(package).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        layer = layer_of(module_name(path, package))
        if layer is not None and rank(layer) <= top:
            files.append(path)
    return files

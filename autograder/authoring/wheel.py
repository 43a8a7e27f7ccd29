"""`python -m autograder wheel`: build the package students install, without the answers.

The student wheel holds `helpers` minus `helpers.reference` (the reference solutions of the
graded exercises), under the distribution name `pytorch-course-helpers`, with the same
runtime dependencies as the course. Attach it to the release v<[project] version> of the student
repository (`[tool.course]`): every setup cell installs it from there (autograder/course/settings.py).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.course.layout import Course
from autograder.course.settings import project_metadata

DIST_NAME = "pytorch-course-helpers"
# Subpackages of helpers that never reach a student.
EXCLUDED = ("reference",)


def _pyproject(version: str, dependencies: list[str]) -> str:
    deps = "".join(f'    "{d}",\n' for d in dependencies)
    return (
        "[build-system]\n"
        'requires = ["setuptools>=61"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        f'name = "{DIST_NAME}"\n'
        f'version = "{version}"\n'
        'description = "Setup, data, plotting, timing and checks for the PyTorch course notebooks."\n'
        'requires-python = ">=3.9"\n'
        f"dependencies = [\n{deps}]\n\n"
        "[tool.setuptools.packages.find]\n"
        'include = ["helpers*"]\n'
    )


def build_student_wheel(out_dir: Path, root: Path) -> Path:
    """Build the student wheel of the packages at `root` (Course.package_root) into `out_dir`; returns its path."""
    meta = project_metadata(root)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="student-wheel-") as tmp:
        stage = Path(tmp)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc", *EXCLUDED)
        shutil.copytree(root / "helpers", stage / "helpers", ignore=ignore)
        (stage / "pyproject.toml").write_text(_pyproject(meta["version"], meta["dependencies"]))
        before = set(out_dir.glob("*.whl"))
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
             "--wheel-dir", str(out_dir), str(stage)],
            check=True,
        )
    built = sorted(set(out_dir.glob("pytorch_course_helpers-*.whl")) - before) or sorted(
        out_dir.glob(f"pytorch_course_helpers-{meta['version']}-*.whl"))
    if not built:
        raise RuntimeError(f"pip wheel produced no pytorch_course_helpers wheel in {out_dir}")
    return built[-1]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for the wheel (default: the course's build/dist)")


def run(args: argparse.Namespace, course: Course) -> int:
    path = build_student_wheel(args.out or course.build_dir / "dist", course.package_root)
    print(f"Built {path}")
    return 0

"""`python -m autograder gradescope ASSIGNMENT [--out DIR]`: Gradescope's autograder.zip.

Gradescope (https://gradescope-autograders.readthedocs.io/en/latest/specs/) unpacks the zip into
/autograder/source of an Ubuntu image, runs `setup.sh` once there, then `run_autograder` for every
submission, which must leave /autograder/results/results.json. The zip holds:

  setup.sh          installs CPU PyTorch and the course's wheel (with its `grading` extra), makes
                    the user kernels run as where namespaces are forbidden (kernel_user.py)
  run_autograder    grades /autograder/submission/ with `python -m autograder grade` (results.py)
  dist/             the course's wheel: helpers (with helpers.reference, for the trusted run),
                    autograder (probes, sandbox, nbgrader_config.py)
  course/source/ASSIGNMENT/   the source notebook and the files beside it (the gradebook's truth)
  course/grading/ASSIGNMENT/  its probe, for the trusted run (mutants and variants ride along);
                    like course/source/, no grading kernel can read it: both are private paths
                    of the sandbox (autograder/batch/session.py), which tests/classroom/test_gradescope.py checks
                    from inside a kernel that run_autograder started; without namespaces, both
                    are closed to the kernels' user (tests/classroom/test_gradescope_privsep.py)

Both scripts are files beside this module (setup.sh, run_autograder), read as they are.
Written to DIR/autograder.zip (default build/gradescope/ASSIGNMENT/), whole or not at all.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from autograder.course.layout import Course

HERE = Path(__file__).resolve().parent
SCRIPTS = ("setup.sh", "run_autograder")  # at the zip's root, executable
COURSE_DIR = "course"  # the course folder inside /autograder/source
WHEEL_DIR = "dist"
# What the course's wheel is built from (pyproject.toml names README.md as its readme, LICENSE
# as its license file).
PROJECT_FILES = ("pyproject.toml", "README.md", "LICENSE")
PROJECT_PACKAGES = ("helpers", "autograder", "build_backend")  # build_backend: pyproject's backend-path
# The backend refuses a plain wheel of this distribution (it holds the answers) unless asked by name.
INSTRUCTOR_BUILD = "PYTORCH_COURSE_INSTRUCTOR_BUILD"


def build_course_wheel(out_dir: Path, root: Path) -> Path:
    """The course's own wheel (helpers, helpers.reference, autograder) of the packages at `root`
    (Course.package_root) in `out_dir`; its path.

    Built from a copy of the project files, so the checkout gets no build/ or egg-info of it.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="course-wheel-") as tmp:
        stage = Path(tmp)
        for name in PROJECT_FILES:
            if (root / name).is_file():
                shutil.copy2(root / name, stage / name)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for name in PROJECT_PACKAGES:
            if (root / name).is_dir():
                shutil.copytree(root / name, stage / name, ignore=ignore)
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--wheel-dir", str(out_dir), str(stage)], check=True,
                        env={**os.environ, INSTRUCTOR_BUILD: "1"})
    built = sorted(out_dir.glob("pytorch_course-*.whl"))
    if len(built) != 1:
        raise RuntimeError(f"expected one pytorch_course wheel in {out_dir}, found {built}")
    return built[0]


def build_zip(course: Course, assignment: str, out: Path) -> Path:
    """Write out/autograder.zip for one assignment of `course`; returns its path."""
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    target = out / "autograder.zip"
    with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
        stage = Path(tmp) / "zip"
        build_course_wheel(stage / WHEEL_DIR, course.package_root)
        shutil.copytree(course.source_dir / assignment, stage / COURSE_DIR / "source" / assignment,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "*.pyc"))
        grading = course.root / "grading" / assignment  # the probe the trusted run judges by
        if grading.is_dir():
            shutil.copytree(grading, stage / COURSE_DIR / "grading" / assignment,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        for name in SCRIPTS:
            shutil.copy2(HERE / name, stage / name)
        partial = Path(tmp) / "autograder.zip"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in stage.rglob("*") if p.is_file()):
                name = path.relative_to(stage).as_posix()
                info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
                mode = 0o755 if name in SCRIPTS else 0o644
                info.external_attr = (0o100000 | mode) << 16  # a regular file with its mode
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, path.read_bytes())
        shutil.move(str(partial), str(target))
    return target


def unpack(zip_path: Path, dest: Path) -> Path:
    """Extract the zip as Gradescope does (modes kept: run_autograder stays executable)."""
    dest = Path(dest)
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            path = Path(archive.extract(info, dest))
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)
    return dest


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment to grade on Gradescope")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder for autograder.zip (default: build/gradescope/ASSIGNMENT)")


def run(args: argparse.Namespace, course: Course) -> int:
    (assignment,) = course.select([args.assignment])
    out = args.out or course.build_dir / "gradescope" / assignment
    path = build_zip(course, assignment, out)
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
    print(f"Built {path} ({len(names)} files, {path.stat().st_size / 1e6:.1f} MB). Upload it as the "
          "assignment's autograder on Gradescope (Ubuntu base image); students submit their .ipynb.")
    return 0

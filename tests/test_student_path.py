"""The student's side: a release notebook alone, in an environment with only what a student has.

The environment is a fresh venv holding the student wheel (helpers without the answers), with
the third-party packages a Colab runtime already has: no nbgrader, no repository on the path. Each
release notebook, its solutions filled in from `source/`, is copied alone into an empty folder and
run with nbclient: every cell runs and every visible test passes, writing nothing to stderr (what
nbgrader's validator, the student's Validate button, would fail).

The untouched release is `check`'s (gate 'release', tests/test_pipeline.py): it scores 0, and every
visible test fails with an error that teaches, not a NameError or an import error. That run is in
the grading environment; what the student's environment lacks (nbgrader, `helpers.reference`, this
checkout) breaks a cell here, with the solutions filled in, as it would untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from autograder.authoring.wheel import build_student_wheel

ROOT = Path(__file__).resolve().parent.parent
FORK_SERVER = Path(__file__).resolve().parent / "student_kernels.py"
RELEASES = sorted((ROOT / "release").glob("*/*.ipynb"))
KERNEL = "course-student"

pytestmark = pytest.mark.slow


# What a student's machine lacks: the grading tools and this checkout's own packages.
NOT_A_STUDENTS = ("nbgrader", "autograder", "helpers", "pytorch_course", "__editable__")


def _host_packages(folder: Path) -> Path:
    """`folder` holding links to this environment's installed packages, those of NOT_A_STUDENTS
    and every .pth file (the editable install's hook among them) left out: what Colab has
    installed (torch, numpy, ipykernel, ...) without copying gigabytes of wheels."""
    folder.mkdir()
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if entry.suffix == ".pth" or entry.name.lower().startswith(NOT_A_STUDENTS):
            continue
        (folder / entry.name).symlink_to(entry, target_is_directory=entry.is_dir())
    return folder


@pytest.fixture(scope="module")
def student_kernel(tmp_path_factory) -> Iterator[tuple[dict[str, str], subprocess.Popen]]:
    """A kernel running in a venv with only the student wheel: the env that finds it, and its server.

    The venv sees this environment's third-party packages through a .pth line (as a Colab
    runtime has torch before the setup cell runs), and pip installs the wheel into it offline,
    checking that its dependencies are met there. Its kernels are forked from a server the venv's
    own Python runs (tests/student_kernels.py, standard library only, run by path: nothing installed
    there), which imported torch, IPython and matplotlib once: a cold kernel spent about 4 of its
    5.8 CPU-seconds starting.
    """
    base = tmp_path_factory.mktemp("student")
    wheel = build_student_wheel(base / "dist", ROOT)
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "host-packages.pth").write_text(f"{_host_packages(base / 'host')}\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
                    "--no-index", "--disable-pip-version-check", str(wheel)], check=True)
    probe = subprocess.run(
        [str(python), "-c", "import importlib.util as u, helpers; print(u.find_spec('nbgrader') is None, "
         "u.find_spec('helpers.reference') is None, u.find_spec('autograder') is None, "
         f"helpers.__file__.startswith({purelib!r}))"],
        capture_output=True, text=True, check=True, cwd=base)
    assert probe.stdout.split() == ["True"] * 4, (
        "the student environment must hold no grading code, and helpers from the wheel: " + probe.stdout)
    kernel_env = {"PYTHONPATH": "", "MPLBACKEND": "module://matplotlib_inline.backend_inline"}
    socket = tempfile.mkdtemp(prefix="stk-", dir="/tmp") + "/s"  # short: socket paths stop at ~100 bytes
    server = subprocess.Popen([str(python), str(FORK_SERVER), "serve", socket], cwd=base,
                              env={**os.environ, **kernel_env}, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert server.stdout.readline().strip() == b"listening", "the student's kernel server did not start"
    spec_dir = base / "jupyter" / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-I", "-S", str(FORK_SERVER), "launch", socket, "-f", "{connection_file}"],
        "display_name": "Student", "language": "python", "env": kernel_env,
    }))
    try:
        yield {"JUPYTER_PATH": str(base / "jupyter")}, server
    finally:
        server.stdin.close()  # the server ends with its kernels
        server.wait(timeout=30)
        server.stdout.close()
        shutil.rmtree(os.path.dirname(socket), ignore_errors=True)


def _run(nb, folder: Path, env: dict[str, str]) -> None:
    """Run `nb` in the student's kernel, in `folder`; the first failing cell raises CellExecutionError."""
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        NotebookClient(nb, timeout=120, kernel_name=KERNEL,
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_the_students_kernel_is_forked_warm_and_holds_no_grading_code(student_kernel, tmp_path):
    """A kernel of the student's environment comes from its server (forked: torch and IPython
    already imported, about 4 CPU-seconds saved a kernel), with the student's Python and nothing
    of the grader: no autograder, nbgrader or helpers.reference to import, no test folder on its path."""
    env, server = student_kernel
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import importlib.util, json, os, sys\n"
        "print(json.dumps([os.getppid(), sys.executable, 'torch' in sys.modules,\n"
        "      [m for m in ('autograder', 'nbgrader', 'helpers.reference') if importlib.util.find_spec(m)],\n"
        f"      {str(Path(__file__).parent)!r} in sys.path]))")])
    _run(nb, tmp_path, env)
    parent, python, preloaded, grading, tests_on_path = json.loads(nb.cells[0].outputs[0]["text"])
    assert parent == server.pid, "the kernel was not forked from the student's server"
    assert (python, preloaded, grading, tests_on_path) == (server.args[0], True, [], False)


def _grade_id(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


def _hidden_tests(release: Path) -> set[str]:
    """grade_ids of the cells whose tests the release hides (a hidden region in the source)."""
    source = nbformat.read(ROOT / "source" / release.parent.name / release.name, as_version=4)
    return {_grade_id(c) for c in source.cells if "BEGIN HIDDEN TESTS" in c.source}


def _is_visible_test(cell, hidden: set[str]) -> bool:
    """A graded test cell a student sees run (a hidden-test cell does nothing in the release)."""
    meta = cell.metadata.get("nbgrader", {})
    return (cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")
            and meta.get("grade_id") not in hidden)


@pytest.mark.parametrize("path", RELEASES, ids=[p.parent.name for p in RELEASES])
def test_release_with_solutions_filled_in_passes_every_visible_test(path, student_kernel, tmp_path):
    source = nbformat.read(ROOT / "source" / path.parent.name / path.name, as_version=4)
    solutions = {_grade_id(c): c.source for c in source.cells
                 if c.metadata.get("nbgrader", {}).get("solution")}
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = solutions[_grade_id(cell)]
    folder = tmp_path / "work"
    folder.mkdir()
    nbformat.write(nb, folder / path.name)
    try:
        _run(nb, folder, student_kernel[0])
    except CellExecutionError as error:
        pytest.fail(f"{path.name} with the solutions filled in fails for a student:\n{str(error)[-2000:]}")
    hidden = _hidden_tests(path)
    for cell in nb.cells:
        if _is_visible_test(cell, hidden):
            # a value answered as a question can only be checked for its form: "answer recorded"
            assert "\u2714" in _text(cell) or "answer recorded (form OK)" in _text(cell), \
                f"{_grade_id(cell)} printed no success line"
            # nbgrader's rule: a test cell that writes to stderr fails the student's Validate button.
            assert not _text(cell, "stderr"), f"{_grade_id(cell)} writes to stderr: {_text(cell, 'stderr')[:500]}"
    summary = _text([c for c in nb.cells if c.cell_type == "code"][-1])
    assert "Visible checks passed" in summary, "the last cell should sum up the visible checks"
    assert "not yet" not in summary, f"the summary still lists unsolved exercises:\n{summary}"


def _text(cell, stream: str | None = None) -> str:
    """What `cell` printed (on `stream` alone when given)."""
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if stream in (None, o.get("name")))

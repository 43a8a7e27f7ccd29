"""Grading kernels read only what they are given and never what is hidden from them
(autograder/engine/sandbox.py), warm or cold."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine import sandbox
from autograder.engine.execute import GradingExecute
from autograder.engine.job import GradeJob, grade_submission
from autograder.engine.kernel_server import KernelServer
from autograder.engine.template import build_template

PROBLEM = "; ".join(p for p in sandbox.problems() if "not sandboxed" in p or "can read" in p)
needs_namespaces = pytest.mark.skipif(bool(PROBLEM), reason=PROBLEM)
SOURCE = Path(__file__).parents[1] / "fixtures" / "course" / "source"

# What a student's cell would try: read the file, look under the mount, go through the parent.
SNOOP = """import ctypes, os
def attempt(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as error:
        return type(error).__name__
libc = ctypes.CDLL(None, use_errno=True)
print(repr(attempt({secret!r})))
print(libc.umount2({folder!r}.encode(), 2), repr(attempt({secret!r})))
print(repr(attempt(f"/proc/{{os.getppid()}}/root" + {secret!r})))
print(repr(attempt("visible.txt")))"""
HIDDEN = ["'FileNotFoundError'", "-1 'FileNotFoundError'", "'FileNotFoundError'", "'mine'"]


@pytest.fixture
def secrets(outside_tmp):
    """(a folder with a secret file, a secret file elsewhere, a job folder with a visible file)."""
    tmp_path = outside_tmp
    folder = tmp_path / "course" / "source"
    folder.mkdir(parents=True)
    (folder / "answers.txt").write_text("the answer is 42")
    loose = tmp_path / "course" / "gradebook.txt"
    loose.write_text("alice: 6/6")
    job = tmp_path / "job"
    job.mkdir()
    (job / "visible.txt").write_text("mine")
    return folder, loose, job


def snoop(folder: Path) -> str:
    return SNOOP.format(secret=str(folder / "answers.txt"), folder=str(folder))


def run_kernel(job: Path, code: str, **settings) -> list[str]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    GradingExecute(kernel_name="python3", timeout=60, **settings).preprocess(
        nb, {"metadata": {"path": str(job)}})
    assert not [o for o in nb.cells[0].outputs if o.output_type == "error"], nb.cells[0].outputs
    return "".join(o.get("text", "") for o in nb.cells[0].outputs).splitlines()


@needs_namespaces
def test_enter_kernel_hides_folders_and_files_and_holds_against_unmount(secrets):
    """In the kernel (process 1 of its namespace): inside what it may read (here the planted course,
    named as needed), hidden paths look empty; umount is refused, the parent is out of sight, the
    job folder is readable, what it writes stays its own, and what it was not given is not there."""
    folder, loose, job = secrets
    course = folder.parent
    (course.parent / "elsewhere.txt").write_text("not given")
    code = textwrap.dedent(f"""
        import os
        from autograder.engine import sandbox
        sandbox.enter_kernel(sandbox.Plan(hide=({str(folder)!r}, {str(loose)!r}, "/no/such/path"),
                                          job={str(job)!r}, needed=(*sandbox.needed_paths(), {str(course)!r})))
        print(os.getpid(), open({str(loose)!r}).read() == "", os.path.exists({str(course.parent / "elsewhere.txt")!r}))
        open("written.txt", "w").write("kept")
        print(open("written.txt").read())
    """) + snoop(folder)
    out = subprocess.run([sys.executable, "-c", code], cwd=job, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["1 True False", "kept", *HIDDEN]
    assert not (job / "written.txt").exists()  # the kernel's writes never reach the grader's disk


@needs_namespaces
def test_a_cold_kernel_cannot_read_hidden_paths_and_can_read_the_rest(secrets):
    folder, _, job = secrets
    assert run_kernel(job, snoop(folder), sandbox=False)[0] == "'the answer is 42'"  # the control
    assert run_kernel(job, snoop(folder), hide=[str(folder)]) == HIDDEN


@pytest.fixture(scope="module")
def server():
    """A kernel server."""
    with KernelServer(enabled=True) as server:
        yield server


@needs_namespaces
@pytest.mark.slow
def test_a_warm_kernel_cannot_read_hidden_paths(server, secrets):
    folder, loose, job = secrets
    assert run_kernel(job, snoop(folder), kernel_server=server.socket, hide=[str(folder)]) == HIDDEN
    read_loose = (f"try:\n    print(repr(open({str(loose)!r}).read()))\n"
                  "except OSError as error:\n    print(type(error).__name__)")
    assert run_kernel(job, read_loose, kernel_server=server.socket, sandbox=False) == ["'alice: 6/6'"]
    # Hidden or not: a kernel's view holds only what it needs, and this file is not among it.
    assert run_kernel(job, read_loose, kernel_server=server.socket, hide=[str(loose)]) == ["FileNotFoundError"]
    assert run_kernel(job, read_loose, kernel_server=server.socket, hide=[str(job / "x")]) == ["FileNotFoundError"]


@needs_namespaces
@pytest.mark.slow
def test_a_graded_submission_cannot_print_the_hidden_tests(server, tmp_path):
    """GradeJob.hide reaches the kernel: the source notebook is out of the student's reach."""
    template = build_template(SOURCE, ["00_fixture"], tmp_path / "template")
    nb = copy.deepcopy(read_notebook(template.source_notebook("00_fixture")))
    cell = next(c for c in nb.cells if grade_id(c) == "scale")
    cell.source = textwrap.dedent("""
        import glob
        found = [open(p).read() for p in glob.glob("../../../source/*/*.ipynb")]
        print("LEAKED" if any("BEGIN HIDDEN TESTS" in text for text in found) else "nothing")

        def scale(x, factor):
            return x * factor
    """)
    path = tmp_path / "in" / "00_fixture.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    result = grade_submission(GradeJob(
        student_id="mallory", assignment="00_fixture", notebook=path, template_dir=template.dir,
        work_dir=tmp_path / "work", autograded_dir=tmp_path / "out",
        kernel_server=server.socket, hide=(str(SOURCE.resolve()),)))
    assert (result.status, result.score) == ("graded", 6.0), result.reason
    graded = read_notebook(tmp_path / "out" / "00_fixture.ipynb")
    printed = "".join(o.get("text", "") for o in next(c for c in graded.cells if grade_id(c) == "scale").outputs)
    assert printed == "nothing\n"


@needs_namespaces
@pytest.mark.slow
@pytest.mark.parametrize("warm", [False, True])
def test_a_kernel_sees_its_own_job_folder_but_not_the_other_jobs_beside_it(server, outside_tmp, warm):
    """Every job lives under one batch folder, hidden from each kernel but for its own job."""
    batch = outside_tmp / "batch"
    mine, theirs = batch / "jobs" / "job-mine", batch / "jobs" / "job-theirs"
    for job, text in ((mine, "mine"), (theirs, "bob's notebook")):
        job.mkdir(parents=True)
        (job / "visible.txt").write_text(text)
    (batch / "template").mkdir()
    (batch / "template" / "source.ipynb").write_text("solutions")
    code = textwrap.dedent(f"""
        import os
        print(repr(open("visible.txt").read()))
        open("written.txt", "w").write("kept")
        print(sorted(os.listdir({str(batch / "jobs")!r})))
        print(os.path.exists({str(theirs / "visible.txt")!r}), os.path.exists({str(batch / "template")!r}))
    """)
    socket = server.socket if warm else None
    assert run_kernel(mine, code, kernel_server=socket or "", hide=[str(batch)]) == [
        "'mine'", "['job-mine']", "False False"]
    assert not (mine / "written.txt").exists()  # written into the kernel's own layer, gone with it


PLANT = """import os
os.makedirs(os.path.join("autograder", "engine"), exist_ok=True)
for name in ("__init__.py", os.path.join("engine", "__init__.py"), os.path.join("engine", "kernel_server.py")):
    with open(os.path.join("autograder", name), "w") as f:
        f.write("open({marker!r}, 'w').write('the launcher ran this')\\n")
print("planted")"""


@needs_namespaces
def test_the_launcher_never_imports_what_a_kernel_left_in_its_folder(outside_tmp):
    """A package planted in the job folder (by a kernel that could write there: here one run
    without the sandbox) is not what the next kernel's launcher, started in that folder, imports."""
    job, marker = outside_tmp / "job", outside_tmp / "escaped.txt"
    job.mkdir()
    assert run_kernel(job, PLANT.format(marker=str(marker)), sandbox=False) == ["planted"]
    assert (job / "autograder" / "engine" / "kernel_server.py").is_file()
    assert run_kernel(job, "print('graded')", hide=[str(outside_tmp / "nothing")]) == ["graded"]
    assert not marker.exists(), "the launcher ran code a kernel wrote"


@needs_namespaces
def test_a_kernels_environment_is_the_allow_list_and_home_is_its_job_folder(outside_tmp, monkeypatch):
    monkeypatch.setenv("CANVAS_TOKEN", "a-token")
    monkeypatch.setenv("PYTORCH_COURSE_OFFLINE", "1")
    job = outside_tmp / "job"
    job.mkdir()
    code = "import os, json\nprint(json.dumps(dict(os.environ)))"
    env = json.loads(run_kernel(job, code, hide=[str(outside_tmp / "nothing")])[0])
    assert "CANVAS_TOKEN" not in env and env["PYTORCH_COURSE_OFFLINE"] == "1"
    assert os.path.realpath(env["HOME"]) == os.path.realpath(job)
    added_by_ipykernel = {"CLICOLOR", "CLICOLOR_FORCE", "FORCE_COLOR", "GIT_PAGER", "PAGER",
                          "PYDEVD_USE_FRAME_EVAL"}
    assert set(env) - added_by_ipykernel <= set(sandbox.KEPT_VARIABLES) | {
        "HOME", "TMPDIR", "USER", "LOGNAME", "MPLCONFIGDIR"} | {
        k for k in env if k.startswith(sandbox.KEPT_PREFIXES)}


def test_the_sandbox_probe_answers_the_same_from_a_script_in_tmp():
    """A grader started from a script in /tmp (sys.path[0] = /tmp, which a kernel never has:
    kernels start isolated) is sandboxed as any other; the probe once said it was not."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", dir="/tmp") as script:
        script.write("from autograder.engine import sandbox\nprint(sandbox.problems())\n")
        script.flush()
        inline = subprocess.run([sys.executable, "-c", Path(script.name).read_text()],
                                capture_output=True, text=True, check=True)
        scripted = subprocess.run([sys.executable, script.name], capture_output=True, text=True, check=True)
    assert scripted.stdout == inline.stdout, scripted.stdout

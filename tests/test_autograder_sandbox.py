"""Grading kernels cannot read what is hidden from them (autograder/sandbox.py), warm or cold."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder import sandbox
from autograder.engine import GradeJob, grade_submission
from autograder.execute import GradingExecute
from autograder.kernel_server import KernelServer
from autograder.notebooks import grade_id, read_notebook
from autograder.template import build_template

PROBLEM = sandbox.problem()
needs_namespaces = pytest.mark.skipif(PROBLEM is not None, reason=f"{PROBLEM}")
SOURCE = Path(__file__).parent / "fixtures" / "course" / "source"

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


@pytest.fixture
def secrets(tmp_path):
    """(a folder with a secret file, a secret file elsewhere, a job folder with a visible file)."""
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
def test_enter_hides_folders_and_files_and_holds_against_unmount(secrets):
    folder, loose, job = secrets
    code = textwrap.dedent(f"""
        import sys
        from autograder import sandbox
        sandbox.enter([{str(folder)!r}, {str(loose)!r}, "/no/such/path"])
        print(open({str(loose)!r}).read() == "")
    """) + snoop(folder)
    out = subprocess.run([sys.executable, "-c", code], cwd=job, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "True",  # the file reads as empty
        "'FileNotFoundError'",  # the folder is empty
        "-1 'FileNotFoundError'",  # umount is refused (the mount is locked)
        "'PermissionError'",  # nor through the parent's root
        "'mine'",  # the working folder is untouched
    ]


@needs_namespaces
def test_a_cold_kernel_cannot_read_hidden_paths_and_can_read_the_rest(secrets):
    folder, _, job = secrets
    assert run_kernel(job, snoop(folder))[0] == "'the answer is 42'"  # not hidden: readable
    assert run_kernel(job, snoop(folder), hide=[str(folder)]) == [
        "'FileNotFoundError'", "-1 'FileNotFoundError'", "'PermissionError'", "'mine'"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A kernel server hiding a folder with a secret; (server, that folder)."""
    folder = tmp_path_factory.mktemp("hidden-by-server")
    (folder / "answers.txt").write_text("the answer is 42")
    with KernelServer(enabled=True, hide=[str(folder)]) as server:
        yield server, folder


@needs_namespaces
@pytest.mark.slow
def test_a_sandboxed_server_hides_paths_from_every_kernel_it_forks(server, secrets):
    server, folder = server
    _, loose, job = secrets
    assert (server.sandboxed, server.sandbox_problem) == (True, None)
    assert run_kernel(job, snoop(folder), kernel_server=server.socket) == [
        "'FileNotFoundError'", "-1 'FileNotFoundError'", "'PermissionError'", "'mine'"]
    # A job's own paths are hidden on top, in that kernel only.
    read_loose = f"print(repr(open({str(loose)!r}).read()))"
    assert run_kernel(job, read_loose, kernel_server=server.socket) == ["'alice: 6/6'"]
    assert run_kernel(job, read_loose, kernel_server=server.socket, hide=[str(loose)]) == ["''"]


def test_a_server_says_when_its_kernels_are_not_sandboxed(tmp_path):
    with KernelServer(enabled=False, hide=[str(tmp_path)]) as server:
        assert not server.sandboxed and "not sandboxed" in server.sandbox_problem
    with KernelServer(enabled=False) as server:
        assert (server.sandboxed, server.sandbox_problem) == (False, None)


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
        kernel_server=server[0].socket, hide=(str(SOURCE.resolve()),)))
    assert (result.status, result.score) == ("graded", 6.0), result.reason
    graded = read_notebook(tmp_path / "out" / "00_fixture.ipynb")
    printed = next(c for c in graded.cells if grade_id(c) == "scale").outputs[0].text
    assert printed == "nothing\n"


@needs_namespaces
@pytest.mark.slow
@pytest.mark.parametrize("warm", [False, True])
def test_a_kernel_sees_its_own_job_folder_but_not_the_other_jobs_beside_it(server, tmp_path, warm):
    """Every job lives under one batch folder, hidden from each kernel but for its own job."""
    batch = tmp_path / "batch"
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
    socket = server[0].socket if warm else None
    assert run_kernel(mine, code, kernel_server=socket or "", hide=[str(batch)]) == [
        "'mine'", "['job-mine']", "False False"]
    assert (mine / "written.txt").read_text() == "kept"  # the job folder stays writable

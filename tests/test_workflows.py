"""GitHub Actions: the workflows lint clean, and the scripts they call work against a local remote."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.course import REPO_ROOT

GITHUB = REPO_ROOT / ".github"
SCRIPTS = GITHUB / "scripts"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
# Every shell script CI or Gradescope runs.
SHELL_SCRIPTS = [*sorted(SCRIPTS.glob("*.sh")), REPO_ROOT / ".ci" / "run",
                 REPO_ROOT / "autograder" / "gradescope" / "setup.sh",
                 REPO_ROOT / "autograder" / "gradescope" / "run_autograder"]


def _tool(name: str) -> str:
    """A command-line tool from this environment's bin/ (the dev extra) or PATH."""
    found = shutil.which(name, path=os.pathsep.join([str(Path(sys.executable).parent),
                                                     os.environ.get("PATH", "")]))
    if found is None:
        pytest.fail(f"{name} is not installed: pip install -e '.[dev]'")
    return found


def _workflow(name: str) -> dict:
    with open(GITHUB / "workflows" / name) as f:
        return yaml.safe_load(f)


# -- lint ---------------------------------------------------------------------------------------

def test_actionlint_passes_on_the_workflows():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "publish.yml", "gpu.yml"}
    done = subprocess.run([_tool("actionlint"), *map(str, WORKFLOWS)], cwd=REPO_ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_fails_on_a_broken_workflow():
    broken = ("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
              "      - run: echo ${{ github.no_such_property }}\n"
              "      - uses: actions/checkout@v4\n        with:\n          depth: 1\n")
    done = subprocess.run([_tool("actionlint"), "-"], input=broken, cwd=REPO_ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 1
    assert "no_such_property" in done.stdout and "depth" in done.stdout


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_shell_scripts_parse_and_pass_shellcheck_where_it_is_installed(script):
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert os.access(script, os.X_OK), f"{script} is not executable"
    if shutil.which("shellcheck"):
        done = subprocess.run(["shellcheck", str(script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout


# -- what each workflow promises ------------------------------------------------------------------

def test_ci_runs_make_test_offline_with_a_pip_cache_keyed_on_pyproject():
    ci = _workflow("ci.yml")
    assert set(ci[True]) == {"push", "pull_request"}  # YAML 1.1 reads `on` as True
    assert "group" in ci["concurrency"] and ci["concurrency"]["cancel-in-progress"]
    job = ci["jobs"]["test"]
    assert job["timeout-minutes"] > 0 and job["env"]["PYTORCH_COURSE_OFFLINE"] == "1"
    python = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python"))
    assert python["with"]["cache"] == "pip"
    assert python["with"]["cache-dependency-path"] == "pyproject.toml"
    assert any(s.get("run") == "make test" for s in job["steps"])


def test_publish_runs_on_version_tags_and_calls_wheel_publish_site_and_the_push_script():
    publish = _workflow("publish.yml")
    assert publish[True] == {"push": {"tags": ["v*"]}}
    runs = "\n".join(s.get("run", "") for s in publish["jobs"]["publish"]["steps"])
    for command in ("python -m autograder wheel", "python -m autograder publish build/student",
                    "make site", ".github/scripts/publish-student.sh"):
        assert command in runs
    step = next(s for s in publish["jobs"]["publish"]["steps"] if "publish-student.sh" in s.get("run", ""))
    assert step["env"]["GH_TOKEN"] == "${{ secrets.STUDENT_REPO_TOKEN }}"


def test_gpu_is_started_by_hand_on_a_self_hosted_gpu_runner():
    gpu = _workflow("gpu.yml")
    assert set(gpu[True]) == {"workflow_dispatch"}
    assert gpu["jobs"]["gpu"]["runs-on"] == ["self-hosted", "gpu"]
    script = (SCRIPTS / "gpu-tests.sh").read_text()
    assert "pytest -m gpu" in script and "08_gpu_batch_timing.ipynb" in script


# -- the student repository name -----------------------------------------------------------------

def test_student_repository_is_read_from_pyproject(tmp_path):
    script = [sys.executable, str(SCRIPTS / "student_repository.py")]
    good = tmp_path / "good.toml"
    good.write_text('[tool.course]\nrepository = "a/b"\nstudent_repository = "course-org/students"\n')
    assert subprocess.run([*script, str(good)], capture_output=True, text=True,
                          check=True).stdout.strip() == "course-org/students"
    bad = tmp_path / "bad.toml"
    bad.write_text('[tool.course]\nstudent_repository = "not a repository"\n')
    done = subprocess.run([*script, str(bad)], capture_output=True, text=True)
    assert done.returncode == 1 and "bad.toml" in done.stderr and "student_repository" in done.stderr


# -- publishing to a local bare repository -------------------------------------------------------

def _git(*args: str, cwd: Path | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def student_remote(tmp_path) -> Path:
    remote = tmp_path / "students.git"
    _git("init", "--quiet", "--bare", "--initial-branch=main", str(remote))
    return remote


def _publish(tmp_path: Path, remote: Path, tag: str, tree: Path, site: Path, wheel: Path):
    env = dict(os.environ, TAG=tag, STUDENT_REMOTE=str(remote), STUDENT_REPO="course-org/students",
               GH_BIN="echo", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    env.pop("GH_TOKEN", None)
    return subprocess.run([str(SCRIPTS / "publish-student.sh"), str(tree), str(site), str(wheel)],
                          env=env, cwd=tmp_path, capture_output=True, text=True)


def test_publish_student_pushes_the_tree_the_tag_the_site_and_asks_for_the_release(tmp_path,
                                                                                  student_remote):
    tree, site = tmp_path / "tree", tmp_path / "site"
    (tree / "release" / "01_numpy_mlp").mkdir(parents=True)
    (tree / "README.md").write_text("# Course\n")
    (tree / "release" / "01_numpy_mlp" / "01_numpy_mlp.ipynb").write_text("{}\n")
    (tree / "old.txt").write_text("gone next time\n")
    site.mkdir()
    (site / "index.html").write_text("<html></html>\n")
    wheel = tmp_path / "pytorch_course_helpers-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"PK")

    first = _publish(tmp_path, student_remote, "v0.1.0", tree, site, wheel)
    assert first.returncode == 0, first.stderr
    files = _git("ls-tree", "-r", "--name-only", "main", cwd=student_remote).split()
    assert sorted(files) == ["README.md", "old.txt", "release/01_numpy_mlp/01_numpy_mlp.ipynb"]
    assert _git("rev-parse", "v0.1.0^{commit}", cwd=student_remote) == _git(
        "rev-parse", "main", cwd=student_remote)
    pages = _git("ls-tree", "-r", "--name-only", "gh-pages", cwd=student_remote).split()
    assert sorted(pages) == [".nojekyll", "index.html"]
    assert f"release create v0.1.0 {wheel} --repo course-org/students" in first.stdout

    (tree / "old.txt").unlink()
    (tree / "README.md").write_text("# Course, term two\n")
    second = _publish(tmp_path, student_remote, "v0.2.0", tree, site, wheel)
    assert second.returncode == 0, second.stderr
    files = _git("ls-tree", "-r", "--name-only", "main", cwd=student_remote).split()
    assert "old.txt" not in files and "README.md" in files
    assert _git("rev-list", "--count", "main", cwd=student_remote).strip() == "2"
    assert _git("show", "v0.1.0:old.txt", cwd=student_remote) == "gone next time\n"


def test_publish_student_pushes_nothing_when_the_site_is_missing(tmp_path, student_remote):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "README.md").write_text("# Course\n")
    (tmp_path / "site").mkdir()
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"PK")
    done = _publish(tmp_path, student_remote, "v0.1.0", tree, tmp_path / "site", wheel)
    assert done.returncode == 1 and "index.html is missing" in done.stderr
    assert _git("for-each-ref", cwd=student_remote) == ""


# -- executing a notebook (gpu.yml runs 08 so) ---------------------------------------------------

@pytest.mark.slow
def test_execute_notebook_keeps_outputs_and_fails_naming_the_error(tmp_path):
    good, bad = tmp_path / "good.ipynb", tmp_path / "bad.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")]), good)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")]), bad)
    script = [sys.executable, str(SCRIPTS / "execute_notebook.py")]
    done = subprocess.run([*script, str(good), str(tmp_path / "out" / "good.ipynb")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    executed = nbformat.read(tmp_path / "out" / "good.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == "42\n"
    done = subprocess.run([*script, str(bad), str(tmp_path / "out" / "bad.ipynb")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr

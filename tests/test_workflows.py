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

from autograder.course.settings import REPO_ROOT

GITHUB = REPO_ROOT / ".github"
SCRIPTS = GITHUB / "scripts"
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml"))
# Every shell script CI or Gradescope runs.
SHELL_SCRIPTS = [*sorted(SCRIPTS.glob("*.sh")), REPO_ROOT / ".ci" / "run",
                 REPO_ROOT / "autograder" / "classroom" / "gradescope" / "setup.sh",
                 REPO_ROOT / "autograder" / "classroom" / "gradescope" / "run_autograder"]


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
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "publish.yml", "publish-calendar.yml", "gpu.yml"}
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
    assert publish[True]["push"] == {"tags": ["v*"]}
    assert set(publish[True]) == {"push", "workflow_dispatch"}  # by hand: to force (below)
    runs = "\n".join(s.get("run", "") for s in publish["jobs"]["publish"]["steps"])
    for command in ("python -m autograder wheel", "python -m autograder publish build/student",
                    "python -m autograder site --out build/site --published build/student",
                    ".github/scripts/publish-student.sh"):
        assert command in runs
    step = next(s for s in publish["jobs"]["publish"]["steps"] if "publish-student.sh" in s.get("run", ""))
    assert step["env"]["GH_TOKEN"] == "${{ secrets.STUDENT_REPO_TOKEN }}"


def test_publish_tests_first_checks_the_tag_and_honours_the_branch():
    """The tag workflow published without a check, ignored [tool.course] branch and never looked
    at the tag: `git tag v1.0.0` on version 0.1.0 broke every setup cell."""
    steps = _workflow("publish.yml")["jobs"]["publish"]["steps"]
    runs = [s.get("run", "") for s in steps]

    def first(text: str) -> int:
        return next(k for k, run in enumerate(runs) if text in run)

    assert runs[first("make test")].strip() == "make test"
    assert first("make test") < first("check_release_tag.py") < first("autograder publish")
    assert 'check_release_tag.py "$GITHUB_REF_NAME"' in runs[first("check_release_tag.py")]
    assert "student_repository.py --branch" in runs[first("student_repository.py")]
    clone, push = steps[first("git init --quiet build/student")], steps[first("publish-student.sh")]
    assert first("git init --quiet build/student") < first("autograder publish build/student")
    for step in (clone, push):
        assert step["env"]["STUDENT_BRANCH"] == "${{ steps.student.outputs.branch }}"


PUBLISHING = ("publish.yml", "publish-calendar.yml")
NO_FORCE = ["-m", "autograder", "publish", "build/student"]


def _step(workflow: str, name: str) -> dict:
    """The step of `workflow` whose name starts with `name`."""
    (step,) = [s for s in _workflow(workflow)["jobs"]["publish"]["steps"]
               if s.get("name", "").startswith(name)]
    return step


def _run_step(step: dict, cwd: Path, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess, dict]:
    """Run a step's script as the runner does (bash -e), its `${{ }}` env given as `env`; returns
    the process and what it wrote to $GITHUB_OUTPUT."""
    output, summary = tmp_path / "github_output", tmp_path / "github_summary"
    output.write_text("")
    done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=cwd, capture_output=True, text=True,
                          env=dict(os.environ, GITHUB_OUTPUT=str(output),
                                   GITHUB_STEP_SUMMARY=str(summary), **env))
    return done, dict(line.split("=", 1) for line in output.read_text().splitlines())


def _recording_python(tmp_path: Path) -> dict:
    """PATH with a `python` first that writes its arguments, one a line, to tmp_path/argv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "python"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path / "argv"}\n')
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize("workflow", PUBLISHING)
def test_publishing_forces_only_when_started_by_hand_with_force(workflow, tmp_path):
    """`publish` refuses, without --force, to change a notebook students already have; the
    workflows had no way to force it (a tag stopped there, and only a publish by hand went on).
    Now: a workflow_dispatch input `force`, false unless ticked; a tag or the schedule never forces."""
    dispatch = _workflow(workflow)[True]["workflow_dispatch"]
    assert dispatch["inputs"]["force"]["type"] == "boolean"
    assert dispatch["inputs"]["force"]["default"] is False
    step = _step(workflow, "Student repository tree")
    # `inputs.force` is empty on a tag's push and on schedule: the comparison is then false.
    assert step["env"] == {"FORCE": "${{ inputs.force == true }}"}
    steps = _workflow(workflow)["jobs"]["publish"]["steps"]
    assert [s["run"] for s in steps if "autograder publish" in s.get("run", "")] == [step["run"]]
    # What publish says when it stops (can grade find the version students have, in the history
    # of release/?) holds only in a clone with the history.
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0
    path = _recording_python(tmp_path)
    for force, argv in (("false", NO_FORCE), ("", NO_FORCE), ("true", [*NO_FORCE, "--force"])):
        done, _ = _run_step(step, tmp_path, tmp_path, FORCE=force, **path)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "argv").read_text().split() == argv, force


def test_the_tag_workflow_started_by_hand_runs_only_from_a_tag():
    steps = _workflow("publish.yml")["jobs"]["publish"]["steps"]
    assert steps[0]["if"] == "github.ref_type != 'tag'" and "exit 1" in steps[0]["run"]


def test_publish_by_the_calendar_runs_daily_and_by_hand_and_pushes_only_what_changed():
    calendar = _workflow("publish-calendar.yml")
    assert set(calendar[True]) == {"schedule", "workflow_dispatch"}
    (cron,) = calendar[True]["schedule"]
    minute, hour, *days = cron["cron"].split()
    assert days == ["*", "*", "*"] and minute.isdigit() and hour.isdigit()  # once a day
    guide = (REPO_ROOT / "docs" / "instructors.md").read_text()
    assert f"every day at {int(hour):02}:{int(minute):02} UTC" in guide  # the guide says when
    assert "### When CI stops on a changed notebook" in guide
    tagged = _workflow("publish.yml")
    assert calendar["concurrency"] == tagged["concurrency"] == {"group": "publish",
                                                               "cancel-in-progress": False}
    assert calendar["permissions"] == tagged["permissions"] == {"contents": "read"}
    job, tag_job = calendar["jobs"]["publish"], tagged["jobs"]["publish"]
    assert job["env"] == tag_job["env"]
    steps = job["steps"]
    names = [s.get("name", s.get("uses")) for s in steps]
    changes = names.index("What changed on the student branch")
    assert names.index("Student repository tree (by the calendar)") < changes
    after = steps[changes + 1:]
    assert [s.get("name") for s in after] == [
        "Tests", "Release tag v<[project] version>; it and every setup cell agree", "Student wheel",
        "Website (what the student tree holds)", "Push, release and website"]
    assert all(s["if"] == "steps.changes.outputs.changed == 'true'" for s in after)
    assert after[0]["run"] == "make test"
    # The steps it shares with the tag's are the tag's, word for word.
    by_name = {s.get("name", s.get("uses")): s for s in tag_job["steps"]}
    for step in steps:
        name = step.get("name", step.get("uses"))
        if name in by_name and name != "Push, release and website":
            assert {k: v for k, v in step.items() if k != "if"} == by_name[name], name
    push = steps[-1]
    assert push["run"] == by_name["Push, release and website"]["run"]
    assert push["env"]["TAG"] == "${{ steps.tag.outputs.tag }}"
    # Secrets as the tag's workflow keeps them: the token in the env of the clone and the push only.
    for workflow in (calendar, tagged):
        with_secrets = [s["name"] for s in workflow["jobs"]["publish"]["steps"]
                        if "secrets." in yaml.safe_dump(s)]
        assert with_secrets == ["Clone of the student branch (what was published before)",
                                "Push, release and website"]
        for step in workflow["jobs"]["publish"]["steps"]:
            assert "secrets." not in step.get("run", "")
            assert {k: v for k, v in step.get("env", {}).items() if "secrets." in v} in (
                {}, {"GH_TOKEN": "${{ secrets.STUDENT_REPO_TOKEN }}"})


def test_publish_by_the_calendar_tags_the_version_the_setup_cells_install(tmp_path):
    """Its tag step, run in a course (with this .github/) at version 0.2.0: v0.2.0 once every setup
    cell installs that version's wheel, and a failure naming the cell before."""
    from authoring.test_configure import full_course_copy  # tests/ is on the path (its conftest)

    from autograder.authoring.readme import render_readme
    from autograder.authoring.setup_cell import apply_setup_cell, render_head
    from autograder.course.notebooks import read_notebook, write_notebook
    from autograder.course.settings import course_settings

    course = full_course_copy(tmp_path / "course")
    shutil.copytree(GITHUB, course.root / ".github")
    pyproject = course.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"'))
    step = _step("publish-calendar.yml", "Release tag")
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    stale, output = _run_step(step, course.root, tmp_path, PATH=path)
    assert stale.returncode == 1 and output == {}
    assert "source/00_fixture/00_fixture.ipynb: its setup cell installs" in stale.stderr
    settings = course_settings(course.root)  # what configure writes (release/ is not generated)
    for notebook in [course.source_notebook("00_fixture"), *course.root.glob("notebooks/*.ipynb")]:
        nb = read_notebook(notebook)
        apply_setup_cell(nb, render_head(settings))
        write_notebook(nb, notebook)
    readme = course.root / "README.md"
    readme.write_text(render_readme(readme.read_text(), course, settings))
    done, output = _run_step(step, course.root, tmp_path, PATH=path)
    assert done.returncode == 0, done.stderr
    assert output == {"tag": "v0.2.0"}


def _calendar_course(tmp_path: Path, second_release: str, second_due: str):
    """The fixture course with a second assignment (00_fixture's notebook) and a calendar: 00_fixture
    out and due long ago, 01_second released at `second_release`."""
    from authoring.test_configure import full_course_copy  # tests/ is on the path (its conftest)

    from autograder.authoring.readme import render_readme
    from autograder.course.settings import course_settings

    course = full_course_copy(tmp_path / "course")
    (course.source_dir / "01_second").mkdir()
    shutil.copyfile(course.source_notebook("00_fixture"), course.source_notebook("01_second"))
    pyproject = course.root / "pyproject.toml"
    base = pyproject.read_text()
    calendar = ('\n[tool.course.release]\n"00_fixture" = "2020-01-06T09:00:00+00:00"\n'
                '"01_second" = "{}"\n\n[tool.course.due]\n"00_fixture" = "2020-01-13T23:59:00+00:00"\n'
                '"01_second" = "{}"\n')
    pyproject.write_text(base + calendar.format(second_release, second_due))
    readme = course.root / "README.md"
    readme.write_text(render_readme(readme.read_text(), course, course_settings(course.root)))
    return course, lambda release, due: pyproject.write_text(base + calendar.format(release, due))


@pytest.mark.slow
def test_publish_by_the_calendar_publishes_what_opened_once_and_forces_only_when_asked(
        tmp_path, student_remote):
    """The scheduled workflow's own steps, run day after day against a local student repository:
    what the calendar opened is pushed once; a day with nothing new pushes nothing; a changed
    points value stops the run until it is started by hand with force."""
    from autograder.course.notebooks import read_notebook, write_notebook

    course, set_second = _calendar_course(tmp_path, "2100-01-06T09:00:00+00:00",
                                          "2100-01-13T23:59:00+00:00")
    env = {"AUTOGRADER_ROOT": str(course.root), "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_CONFIG_NOSYSTEM": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    clone = _step("publish-calendar.yml", "Clone of the student branch")
    url = '"https://x-access-token:${GH_TOKEN}@github.com/${STUDENT_REPO}.git"'
    assert url in clone["run"]
    clone = {**clone, "run": clone["run"].replace(url, str(student_remote))}
    site, wheel = tmp_path / "site", tmp_path / "pytorch_course_helpers-0.1.0-py3-none-any.whl"
    site.mkdir()
    (site / "index.html").write_text("<html></html>\n")
    wheel.write_bytes(b"PK")

    def day(force: str = "false") -> tuple[subprocess.CompletedProcess, str]:
        """One run: clone, publish, what changed, and the push when something did."""
        shutil.rmtree(course.root / "build" / "student", ignore_errors=True)
        work = tmp_path / "runner"
        work.mkdir(exist_ok=True)
        done, _ = _run_step(clone, course.root, work, STUDENT_BRANCH="main", **env)
        assert done.returncode == 0, done.stderr
        published, _ = _run_step(_step("publish-calendar.yml", "Student repository tree"),
                                 course.root, work, FORCE=force, **env)
        if published.returncode != 0:
            return published, "stopped"
        done, output = _run_step(_step("publish-calendar.yml", "What changed"), course.root, work,
                                 **env)
        assert done.returncode == 0, done.stderr
        if output["changed"] == "true":
            pushed = _publish(tmp_path, student_remote, "v0.1.0", course.root / "build" / "student",
                              site, wheel)
            assert pushed.returncode == 0, pushed.stderr
        return published, output["changed"]

    def released() -> list[str]:
        files = _git("ls-tree", "-r", "--name-only", "main", cwd=student_remote).split()
        return sorted(f.split("/")[1] for f in files if f.startswith("release/"))

    assert day()[1] == "true" and released() == ["00_fixture"]
    assert day()[1] == "false"  # the next day: nothing opened, nothing pushed
    assert _git("rev-list", "--count", "main", cwd=student_remote).strip() == "1"
    set_second("2020-01-14T09:00:00+00:00", "2020-01-21T23:59:00+00:00")  # 01_second's day came
    assert day()[1] == "true" and released() == ["00_fixture", "01_second"]
    path = course.source_notebook("00_fixture")  # a point changed in a notebook students have
    nb = read_notebook(path)
    test = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_scale")
    test.metadata["nbgrader"]["points"] = 2
    write_notebook(nb, path)
    stopped, changed = day()
    assert changed == "stopped" and stopped.returncode == 2
    assert "points 1 -> 2" in stopped.stdout and "--force" in stopped.stdout
    assert _git("rev-list", "--count", "main", cwd=student_remote).strip() == "2"
    forced, changed = day("true")
    assert changed == "true" and "Forced by hand" in forced.stdout
    assert _git("rev-list", "--count", "main", cwd=student_remote).strip() == "3"


def test_the_release_tag_must_be_the_version_the_setup_cells_install(tmp_path):
    from authoring.test_configure import full_course_copy  # tests/ is on the path (its conftest)

    script = [sys.executable, str(SCRIPTS / "check_release_tag.py")]
    good = subprocess.run([*script, "v0.1.0"], capture_output=True, text=True)
    version = __import__("autograder.course.settings", fromlist=["x"]).project_metadata(REPO_ROOT)["version"]
    assert version == "0.1.0", "this test names the course's version"
    assert good.returncode == 0, good.stderr
    bad = subprocess.run([*script, "v1.0.0"], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "the tag v1.0.0 is not v<[project] version> = v0.1.0" in bad.stderr
    course = full_course_copy(tmp_path / "course")  # version raised, setup cells not rewritten
    pyproject = course.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace('version = "0.1.0"', 'version = "0.2.0"'))
    stale = subprocess.run([*script, "v0.2.0", str(course.root)], capture_output=True, text=True)
    assert stale.returncode == 1
    assert "source/00_fixture/00_fixture.ipynb: its setup cell installs" in stale.stderr


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
    assert subprocess.run([*script, "--branch", str(good)], capture_output=True, text=True,
                          check=True).stdout.strip() == "main"
    branched = tmp_path / "branched.toml"
    branched.write_text('[tool.course]\nstudent_repository = "a/b"\nbranch = "term-2027"\n')
    assert subprocess.run([*script, "--branch", str(branched)], capture_output=True, text=True,
                          check=True).stdout.strip() == "term-2027"
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


def _record(tree: Path) -> None:
    """tree/.autograder-publish.json listing every file of `tree` (as publish writes it)."""
    import json

    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*")
                   if p.is_file() and p.name != ".autograder-publish.json" and ".git" not in p.parts)
    (tree / ".autograder-publish.json").write_text(json.dumps({"files": files}))


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

    _record(tree)
    first = _publish(tmp_path, student_remote, "v0.1.0", tree, site, wheel)
    assert first.returncode == 0, first.stderr
    files = _git("ls-tree", "-r", "--name-only", "main", cwd=student_remote).split()
    assert sorted(files) == [".autograder-publish.json", "README.md", "old.txt",
                             "release/01_numpy_mlp/01_numpy_mlp.ipynb"]
    assert _git("rev-parse", "v0.1.0^{commit}", cwd=student_remote) == _git(
        "rev-parse", "main", cwd=student_remote)
    pages = _git("ls-tree", "-r", "--name-only", "gh-pages", cwd=student_remote).split()
    assert sorted(pages) == [".nojekyll", "index.html"]
    assert f"release create v0.1.0 {wheel} --repo course-org/students" in first.stdout

    (tree / "old.txt").unlink()
    (tree / "README.md").write_text("# Course, term two\n")
    _record(tree)
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
    _record(tree)
    (tmp_path / "site").mkdir()
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"PK")
    done = _publish(tmp_path, student_remote, "v0.1.0", tree, tmp_path / "site", wheel)
    assert done.returncode == 1 and "index.html is missing" in done.stderr
    assert _git("for-each-ref", cwd=student_remote) == ""


def test_publish_student_keeps_the_student_repositorys_own_files(tmp_path, student_remote):
    """The CI publish deleted every file of the student repository that publish had not written
    (a local publish keeps them, as documented)."""
    clone = tmp_path / "clone"
    _git("init", "--quiet", "--initial-branch=main", str(clone))
    (clone / ".github" / "workflows").mkdir(parents=True)
    (clone / ".github" / "workflows" / "mine.yml").write_text("on: push\n")
    (clone / "syllabus.md").write_text("# Office hours\n")
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    _git(*env, "-C", str(clone), "add", "-A")
    _git(*env, "-C", str(clone), "commit", "--quiet", "-m", "the repository's own")
    _git("-C", str(clone), "push", "--quiet", str(student_remote), "main")
    tree, site = tmp_path / "tree", tmp_path / "site"
    (tree / "release" / "a").mkdir(parents=True)
    (tree / "README.md").write_text("# Course\n")
    (tree / "release" / "a" / "a.ipynb").write_text("{}\n")
    _record(tree)
    site.mkdir()
    (site / "index.html").write_text("<html></html>\n")
    wheel = tmp_path / "w.whl"
    wheel.write_bytes(b"PK")
    assert _publish(tmp_path, student_remote, "v0.1.0", tree, site, wheel).returncode == 0
    (tree / "release" / "a" / "a.ipynb").unlink()  # publish no longer writes it
    (tree / "release" / "b").mkdir()
    (tree / "release" / "b" / "b.ipynb").write_text("{}\n")
    _record(tree)
    done = _publish(tmp_path, student_remote, "v0.2.0", tree, site, wheel)
    assert done.returncode == 0, done.stderr
    files = sorted(_git("ls-tree", "-r", "--name-only", "main", cwd=student_remote).split())
    assert files == [".autograder-publish.json", ".github/workflows/mine.yml", "README.md",
                     "release/b/b.ipynb", "syllabus.md"]


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
    assert "".join(o.get("text", "") for o in executed.cells[0].outputs) == "42\n"
    done = subprocess.run([*script, str(bad), str(tmp_path / "out" / "bad.ipynb")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "ZeroDivisionError" in done.stderr

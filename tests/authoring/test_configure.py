"""`configure`, [tool.course] and the setup cell: one student repository, named once, agreed on everywhere."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from conftest import copy_fixture_course

from autograder.__main__ import main
from autograder.authoring.agreement import disagreements
from autograder.authoring.configure import set_course_table
from autograder.authoring.readme import block_text, render_readme
from autograder.authoring.setup_cell import apply_setup_cell, first_code_cell, render_head
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook, write_notebook
from autograder.course.settings import (
    REPO_ROOT,
    CourseSettings,
    SettingsError,
    check_repository,
    course_settings,
    load_settings,
    tomllib,
)

LEGACY_TABLE = '''[tool.course]
# Where students get the course.
repository = "pytorch-course/pytorch-course"  # GitHub owner/name that hosts release/
branch = "main"
# The student wheel.
helpers_wheel_url = "https://github.com/pytorch-course/pytorch-course/releases/latest/download/x.whl"
'''


def full_course_copy(dest: Path) -> Course:
    """The fixture course with this repository's pyproject.toml, README.md, LICENSE and lectures,
    its setup cell and README blocks as `configure` leaves them (release/ not generated)."""
    course = copy_fixture_course(dest)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(REPO_ROOT / name, dest / name)
    # The calendar's tables name this course's assignments, not the fixture's: left out.
    text = (dest / "pyproject.toml").read_text()
    (dest / "pyproject.toml").write_text(text[:text.index("\n[tool.course.due]")] + "\n")
    shutil.copytree(REPO_ROOT / "notebooks", dest / "notebooks")
    settings = course_settings(course.root)
    path = course.source_notebook("00_fixture")
    nb = read_notebook(path)
    apply_setup_cell(nb, render_head(settings))
    write_notebook(nb, path)
    readme = dest / "README.md"
    readme.write_text(render_readme(readme.read_text(), course, settings))
    return course


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "build" not in p.relative_to(folder).parts}


# -- [tool.course] ----------------------------------------------------------------------------------

def test_the_real_course_agrees_with_tool_course():
    """Every setup cell and README link of this repository derives from [tool.course]."""
    problems = disagreements(Course(REPO_ROOT))
    assert not problems, ("these files disagree with [tool.course] in pyproject.toml; run "
                          "`python -m autograder configure`:\n  - " + "\n  - ".join(problems))


def test_the_wheel_url_derives_from_repository_and_version():
    settings = CourseSettings("my-uni/dl-course", "fall", "1.2.0rc1")
    assert settings.wheel_url == ("https://github.com/my-uni/dl-course/releases/download/v1.2.0rc1/"
                                  "pytorch_course_helpers-1.2.0rc1-py3-none-any.whl")
    assert settings.colab_url("release/a/a.ipynb") == (
        "https://colab.research.google.com/github/my-uni/dl-course/blob/fall/release/a/a.ipynb")
    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert f"/v{version}/" in course_settings(REPO_ROOT).wheel_url
    assert "helpers_wheel_url" not in (REPO_ROOT / "pyproject.toml").read_text()


@pytest.mark.parametrize("value", ["my-uni/dl-course", "a/b", "Org-1/name.with_dots-2"])
def test_repository_names_github_accepts(value):
    assert check_repository(value) == value


@pytest.mark.parametrize("value", ["dl-course", "my uni/course", "-org/x", "org/", "org/x/y",
                                   "https://github.com/org/x", "org/..", "org/a b"])
def test_repository_names_github_refuses(value):
    with pytest.raises(SettingsError, match="is not a GitHub OWNER/NAME"):
        check_repository(value)


def test_the_table_edit_keeps_comments_and_the_rest_of_the_file():
    text = (REPO_ROOT / "pyproject.toml").read_text()
    new = set_course_table(text, {"student_repository": "my-uni/dl-course", "branch": "fall"})
    old_lines, new_lines = text.splitlines(), new.splitlines()
    changed = [(a, b) for a, b in zip(old_lines, new_lines) if a != b]
    assert len(old_lines) == len(new_lines) and len(changed) == 2, changed
    assert 'student_repository = "my-uni/dl-course"' in new
    assert 'branch = "fall"  # the student repository\'s branch that Colab opens' in new
    assert set_course_table(new, {"student_repository": "my-uni/dl-course", "branch": "fall"}) == new


def test_the_table_edit_migrates_the_old_keys_and_adds_a_missing_table():
    text = '[project]\nname = "x"\nversion = "0.1.0"\n\n' + LEGACY_TABLE + "\n[tool.other]\nkey = 1\n"
    new = set_course_table(text, {"student_repository": "my-uni/dl-course", "branch": "main"})
    table = tomllib.loads(new)["tool"]["course"]
    assert table == {"student_repository": "my-uni/dl-course", "branch": "main"}
    assert "# Where students get the course." in new and "[tool.other]\nkey = 1" in new
    bare = set_course_table('[project]\nversion = "1.0"\n', {"student_repository": "a/b", "branch": "b"})
    assert tomllib.loads(bare)["tool"]["course"] == {"student_repository": "a/b", "branch": "b"}


def test_old_settings_are_a_clear_error_pointing_at_configure(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nversion = "0.1.0"\n\n' + LEGACY_TABLE)
    with pytest.raises(SettingsError, match="no student_repository.*python -m autograder configure"):
        load_settings(tmp_path)


# -- the setup cell -------------------------------------------------------------------------------

SETTINGS = CourseSettings("my-uni/dl-course", "main", "0.3.0")


def run_head(monkeypatch, *, colab: bool, pip_returncode: int = 1, pip_stderr: str = ""):
    """Execute the rendered setup head where `helpers` is not installed; returns the pip calls."""
    calls = []

    def fake_pip(argv, **kwargs):
        calls.append(argv)
        if pip_returncode == 0:  # the install worked: helpers is importable again
            monkeypatch.delitem(sys.modules, "helpers")
        return subprocess.CompletedProcess(argv, pip_returncode, "", pip_stderr)

    monkeypatch.setitem(sys.modules, "helpers", None)  # `import helpers` raises ModuleNotFoundError
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", fake_pip)
    namespace: dict = {}
    try:
        exec(compile(render_head(SETTINGS), "<setup cell>", "exec"), namespace)
    finally:
        namespace.clear()
    return calls


def test_on_colab_a_missing_wheel_stops_with_one_line_saying_what_the_student_can_do(monkeypatch):
    """issue 39, 10: the line a student read told the instructor what to run."""
    stderr = ("ERROR: HTTP error 404 while getting https://github.com/my-uni/...\n"
              "ERROR: Could not install requirement from URL (404 Not Found)")
    with pytest.raises(Exception) as raised:
        run_head(monkeypatch, colab=True, pip_stderr=stderr)
    error = raised.value
    assert type(error).__name__ == "SetupError" and not isinstance(error, ImportError)
    lines = error._render_traceback_()  # what Jupyter and Colab show instead of a traceback
    assert len(lines) == 1 and "\n" not in lines[0]
    line = lines[0]
    assert SETTINGS.wheel_url in line and "404 Not Found" in line  # for the instructor they tell
    assert "Run this cell again" in line and "Runtime > Disconnect and delete runtime" in line
    assert "Tell your instructor" in line
    assert "python -m autograder" not in line and "Instructor:" not in line


def test_on_colab_the_wheel_comes_from_the_configured_url(monkeypatch):
    calls = run_head(monkeypatch, colab=True, pip_returncode=0)
    assert calls == [[sys.executable, "-m", "pip", "install", "--quiet", SETTINGS.wheel_url]]


def test_off_colab_the_cell_installs_nothing_and_says_what_to_run(monkeypatch):
    with pytest.raises(Exception, match=r"run  pip install https://github.com/my-uni/dl-course/"
                                        r"releases/download/v0.3.0/") as raised:
        run_head(monkeypatch, colab=False)
    assert type(raised.value).__name__ == "SetupError"


def test_ipython_shows_the_failure_as_its_one_line(monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setitem(sys.modules, "helpers", None)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(
        argv, 1, "", "ERROR: No connection"))
    import builtins

    added = {"__IPYTHON__", "display"} - set(vars(builtins))  # what the shell leaves in builtins
    shell = InteractiveShell.instance()
    try:
        result = shell.run_cell(render_head(SETTINGS))
    finally:  # later tests in this process must not find a shell (helpers render for IPython then)
        InteractiveShell.clear_instance()
        for name in added:
            vars(builtins).pop(name, None)
    shown = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert not result.success
    assert len(shown) == 1 and shown[0].startswith("The course's helpers package could not be"), shown
    assert shown[0].endswith("(pip: ERROR: No connection)")


# -- configure on a copy of the course ------------------------------------------------------------

@pytest.mark.slow
def test_configure_makes_every_file_agree_and_is_idempotent(tmp_path, capsys):
    course = full_course_copy(tmp_path / "course")
    root = course.root
    assert main(["configure", "--root", str(root), "--student-repository", "my-uni/dl-course",
                 "--branch", "fall-2026"]) == 0
    settings = load_settings(root)
    assert (settings.student_repository, settings.branch) == ("my-uni/dl-course", "fall-2026")
    head = render_head(settings)
    notebooks = ([course.source_notebook("00_fixture"), course.release_notebook("00_fixture")]
                 + sorted((root / "notebooks").glob("*.ipynb")))
    for path in notebooks:
        cell = first_code_cell(read_notebook(path))
        assert cell.source.startswith(head + "\n"), path
        assert settings.wheel_url in cell.source and "pytorch-course/" not in cell.source, path
    readme = (root / "README.md").read_text()
    links = block_text(readme, "colab-links")
    for rel in ["release/00_fixture/00_fixture.ipynb", "notebooks/01_hardware.ipynb"]:
        assert ("https://colab.research.google.com/github/my-uni/dl-course/blob/fall-2026/"
                f"{rel}") in links
    assert f"pip install {settings.wheel_url} jupyterlab" in block_text(readme, "local-install")
    assert "pytorch-course/pytorch-course" not in readme
    assert disagreements(course) == []
    before = snapshot(root)
    capsys.readouterr()
    assert main(["configure", "--root", str(root)]) == 0
    assert "No file(s) changed" in capsys.readouterr().out
    assert snapshot(root) == before


@pytest.mark.slow
def test_configure_refuses_a_bad_name_and_writes_nothing(tmp_path, capsys):
    course = full_course_copy(tmp_path / "course")
    before = snapshot(course.root)
    assert main(["configure", "--root", str(course.root), "--student-repository", "my uni"]) == 2
    err = capsys.readouterr().err
    assert "'my uni' is not a GitHub OWNER/NAME" in err
    assert snapshot(course.root) == before


def test_a_disagreeing_file_is_named_with_what_it_has(tmp_path):
    course = full_course_copy(tmp_path / "course")
    settings = course_settings(course.root)
    assert disagreements(course) == []
    lecture = course.root / "notebooks" / "02_computation_graph.ipynb"
    nb = read_notebook(lecture)
    other = CourseSettings("someone/else", "main", settings.version)
    first_code_cell(nb).source = first_code_cell(nb).source.replace(settings.wheel_url, other.wheel_url)
    write_notebook(nb, lecture)
    readme = course.root / "README.md"
    readme.write_text(readme.read_text().replace("/blob/main/", "/blob/old/", 1))
    problems = disagreements(course)
    assert len(problems) == 2, problems
    assert any(p.startswith("notebooks/02_computation_graph.ipynb: its setup cell installs "
                            f"{other.wheel_url}; [tool.course] gives {settings.wheel_url}")
               for p in problems), problems
    assert any(p.startswith("README.md: the generated block 'colab-links'") for p in problems)


def test_configure_has_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["configure", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "--student-repository OWNER/NAME" in out and "--branch" in out

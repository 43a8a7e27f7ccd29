"""One grading session for check and grade (autograder/session.py), and no import cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from autograder import cgroups, check, grade, sandbox, session
from autograder.layout import Course

AUTOGRADER = Path(__file__).resolve().parent.parent / "autograder"


def module_imports() -> dict[str, set[str]]:
    """autograder module -> the autograder modules it imports when it is imported (top level)."""
    graph = {}
    for path in AUTOGRADER.glob("*.py"):
        found = set()
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder"):
                parts = (node.module or "").split(".")
                found.add(parts[1] if len(parts) > 1 else node.names[0].name)
                if node.module == "autograder":
                    found.update(a.name for a in node.names)
            elif isinstance(node, ast.Import):
                found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("autograder."))
        graph[path.stem] = found - {path.stem}
    return graph


def test_no_module_of_the_grader_imports_itself_back():
    graph = module_imports()
    assert "backends" in graph["session"] and "engine" in graph["backends"]

    def visit(name, path):
        for other in graph.get(name, ()):
            assert other not in path, " -> ".join([*path, other])
            visit(other, [*path, other])

    for name in graph:
        visit(name, [name])


def test_kernels_never_see_the_course_the_checkout_home_or_the_output(tmp_path):
    import helpers.reference
    from autograder.course import REPO_ROOT

    hidden = session.hidden_paths(tmp_path, tmp_path / "out")
    for path in (tmp_path, tmp_path / "out", REPO_ROOT, Path.home(),
                 Path(helpers.reference.__file__).parent):
        assert str(path.resolve()) in hidden


def test_check_and_grade_run_in_the_same_session_class():
    assert check.GradingSession is grade.GradingSession is session.GradingSession


def test_a_session_says_once_what_it_cannot_do_and_cleans_up(fixture_course: Course, monkeypatch):
    monkeypatch.setattr(sandbox, "problems", lambda: ["grading kernels can reach the network (test)"])
    monkeypatch.setattr(cgroups, "problem", lambda: None)
    lines = []
    with session.GradingSession(fixture_course, "check", warm_kernels=False, hidden=[fixture_course.root / "x"],
                                warn=lines.append) as run:
        assert run.dir.is_dir() and str(run.dir.resolve()) in run.hide
        assert str(fixture_course.root.resolve()) in run.hide
        assert run.kernel_server is None
        folder = run.dir
    assert not folder.exists()
    assert lines == ["grading kernels can reach the network (test)"]


@pytest.mark.parametrize("module", [check, grade])
def test_check_and_grade_select_assignments_the_same_way(module):
    import argparse

    parser = argparse.ArgumentParser()
    module.configure(parser)
    args = ["--assignment", "b", "-a", "a"] + (["SUBMITTED"] if module is grade else [])
    parsed = parser.parse_args(args)
    course = type("FakeCourse", (), {"select": lambda self, wanted: wanted})()
    from autograder.layout import selected

    assert selected(parsed, course) == ["b", "a"]


def test_a_job_folder_that_will_not_go_away_at_once_fails_nothing(tmp_path, monkeypatch):
    """A file that appears while a job's folder is removed (seen at load 8: SQLite's journal)
    must not turn the job into "could not be graded"."""
    import errno
    import shutil

    from autograder import engine

    real, calls = shutil.rmtree, []

    def racing(path, *args, **kwargs):
        calls.append(path)
        if len(calls) == 1:
            raise OSError(errno.ENOTEMPTY, "Directory not empty", path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(engine.shutil, "rmtree", racing)
    with engine.scratch_folder(tmp_path, prefix="job-") as folder:
        (Path(folder) / "gradebook.db").write_text("")
    assert len(calls) == 2 and not Path(folder).exists()

    def never(path, *args, **kwargs):
        raise OSError(errno.ENOTEMPTY, "Directory not empty", path)

    monkeypatch.setattr(engine.shutil, "rmtree", never)
    monkeypatch.setattr(engine.time, "sleep", lambda seconds: None)
    with engine.scratch_folder(tmp_path) as folder:
        pass
    assert Path(folder).exists()  # left for the session's own folder, which goes at its end

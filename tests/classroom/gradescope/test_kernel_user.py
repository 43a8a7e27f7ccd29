"""Gradescope without namespaces: what the kernel's own user may not reach is closed to it, and when it
cannot be, results.json refuses instead of grading open (a throwaway user, as the attack:
tests/classroom/test_gradescope_privsep.py)."""

from __future__ import annotations

import os
import stat

import pytest

from autograder.classroom.gradescope import kernel_user
from autograder.engine import privsep


@pytest.fixture
def root(tmp_path, monkeypatch):
    """A Gradescope layout whose answers are a folder of its own (never this checkout's)."""
    reference = tmp_path / "venv" / "helpers" / "reference"
    reference.mkdir(parents=True)
    (reference / "optim.py").write_text("answer = 1\n")
    monkeypatch.setattr(kernel_user, "reference_folder", lambda: reference)
    root = tmp_path / "autograder"
    for folder in ("source/course/grading/01_a", "source/course/source/01_a", "submission", "source/dist"):
        (root / folder).mkdir(parents=True)
    (root / "source/course/grading/01_a/probe.py").write_text("PROBE = ...\n")
    (root / "submission" / "01_a.ipynb").write_text("{}")
    os.chmod(root / "source/course/grading/01_a/probe.py", 0o644)
    return root


def test_the_closed_paths_are_the_answers_the_results_and_the_submission(root):
    names = {p.relative_to(root.parent).as_posix() for p in kernel_user.closed(root)}
    assert names == {"autograder/source/course/grading", "autograder/source/course/source", "venv/helpers/reference",
                     "autograder/results", "autograder/submission", "autograder/source/dist"}
    assert root in kernel_user.fixed(root) and root / "source" in kernel_user.fixed(root)


@pytest.mark.skipif(os.geteuid() != 0, reason="closing the course is root's step (setup.sh)")
def test_closing_leaves_others_nothing_below_the_closed_paths_and_follows_no_link(root, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not the course's")
    os.chmod(outside, 0o644)
    (root / "submission" / "link").symlink_to(outside)
    kernel_user.close(root)
    for path in kernel_user.closed(root):
        for folder, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                item = os.path.join(folder, name)
                if not os.path.islink(item):
                    assert stat.S_IMODE(os.lstat(item).st_mode) & 0o077 == 0, item
    assert stat.S_IMODE((root / "source" / "course").stat().st_mode) == 0o700
    assert (root / "results").is_dir()
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a link's target is left as it is


def test_without_namespaces_and_without_the_user_grading_is_refused_with_the_reason(root, monkeypatch):
    monkeypatch.setattr(privsep, "namespaces_missing", lambda: "user namespaces are disabled")

    def no_user(name):
        raise privsep.Refusal(f"no user {name}")

    monkeypatch.setattr(privsep, "kernel_user", no_user)
    why = kernel_user.refusal(root, "autograder-kernel")
    assert why.startswith("The autograder refused to run your notebook: this machine gives it no sandbox "
                          "(user namespaces are disabled)")
    assert "no user autograder-kernel" in why and "this is not a grade" in why
    monkeypatch.setattr(privsep, "namespaces_missing", lambda: None)
    assert kernel_user.refusal(root) is None  # the namespace sandbox works: nothing to refuse


def test_the_user_is_the_settings_else_the_default(monkeypatch):
    monkeypatch.delenv(privsep.USER_SETTING, raising=False)
    assert kernel_user.user_name() == kernel_user.KERNEL_USER
    monkeypatch.setenv(privsep.USER_SETTING, " throwaway ")
    assert kernel_user.user_name() == "throwaway"

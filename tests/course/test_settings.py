"""The course's settings: `[tool.course]` and `[project] version`, and every address derived from them."""

from __future__ import annotations

import pytest

from autograder.course.settings import (
    REPO_ROOT,
    SettingsError,
    check_branch,
    check_repository,
    course_settings,
    load_settings,
    wheel_filename,
)


def pyproject(tmp_path, course: str, version: str = 'version = "0.2.0"'):
    (tmp_path / "pyproject.toml").write_text(f'[project]\nname = "c"\n{version}\n\n[tool.course]\n{course}\n')
    return tmp_path


def test_every_student_address_derives_from_the_repository_the_branch_and_the_version(tmp_path):
    settings = load_settings(pyproject(tmp_path, 'student_repository = "uni/course-student"\nbranch = "term/2027"'))
    assert settings.release_tag == "v0.2.0"
    assert settings.wheel_name == "pytorch_course_helpers-0.2.0-py3-none-any.whl"
    assert settings.wheel_url == ("https://github.com/uni/course-student/releases/download/v0.2.0/"
                                  "pytorch_course_helpers-0.2.0-py3-none-any.whl")
    assert settings.repository_url == "https://github.com/uni/course-student"
    assert settings.colab_url("release/01_a/01_a.ipynb") == (
        "https://colab.research.google.com/github/uni/course-student/blob/term/2027/release/01_a/01_a.ipynb")
    assert load_settings(pyproject(tmp_path, 'student_repository = "uni/c"')).branch == "main"


@pytest.mark.parametrize("course,version,message", [
    ("", 'version = "1"', "has no student_repository"),
    ('repository = "uni/c"', 'version = "1"', "the old key `repository`"),
    ('student_repository = "uni/c"\nhelpers_wheel_url = "https://x"', 'version = "1"', "is derived now"),
    ('student_repository = "uni/c"', "", r"\[project\] version is missing"),
    ('student_repository = "-uni/c"', 'version = "1"', "is not a GitHub OWNER/NAME"),
    ('student_repository = "uni/c"\nbranch = "a..b"', 'version = "1"', "is not a branch name"),
])
def test_what_is_missing_or_wrong_is_named_with_the_command_that_fixes_it(tmp_path, course, version, message):
    with pytest.raises(SettingsError, match=message) as error:
        load_settings(pyproject(tmp_path, course, version))
    assert "python -m autograder configure" in str(error.value) or "version" in message


@pytest.mark.parametrize("value,ok", [
    ("uni/course", True), ("a/b.c_d-e", True), ("my-uni/x", True), ("uni/..", False), ("uni/.", False),
    ("-uni/x", False), ("uni-/x", False), ("uni", False), ("uni/x/y", False), ("un i/x", False), (3, False)])
def test_a_repository_is_a_github_owner_and_name(value, ok):
    if ok:
        assert check_repository(value) == value
    else:
        with pytest.raises(SettingsError):
            check_repository(value)


@pytest.mark.parametrize("value,ok", [("main", True), ("term/2027", True), ("a..b", False),
                                      ("/main", False), ("main/", False), ("ma in", False), ("", False)])
def test_a_branch_is_one_git_accepts_in_an_address(value, ok):
    if ok:
        assert check_branch(value) == value
    else:
        with pytest.raises(SettingsError):
            check_branch(value)


def test_the_wheel_version_is_normalized_as_setuptools_names_it():
    assert wheel_filename("1.0.0-rc1") == "pytorch_course_helpers-1.0.0rc1-py3-none-any.whl"


def test_a_folder_without_pyproject_uses_this_checkouts_settings(tmp_path):
    assert course_settings(tmp_path) == load_settings(REPO_ROOT)
    with pytest.raises(SettingsError, match="no such file"):
        load_settings(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project\n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(tmp_path)

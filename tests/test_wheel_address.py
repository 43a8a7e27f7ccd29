"""The student wheel's address is said one way everywhere: the one `configure` generates.

`python -m autograder configure` writes into every setup cell and the README the address
CourseSettings.wheel_url derives from [tool.course] student_repository and [project] version: the
release v<version> of the student repository. The push script's header said the wheel came from
releases/latest/download/, which no setup cell uses (issue 39, item 9); these tests keep the words
of the scripts and documents on the code's address.
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.course.settings import REPO_ROOT, CourseSettings, course_settings

SAMPLE_VERSION = "9.8.7"
# Every text an instructor reads about publishing: the documents, the CI workflows and scripts,
# the instructor's scripts and the code's own docstrings (tests and their fixtures are left out:
# some hold old addresses on purpose, to prove they are refused).
TEXTS = sorted({*REPO_ROOT.glob("*.md"), *REPO_ROOT.glob("docs/**/*.md"),
                *(p for p in (REPO_ROOT / ".github").rglob("*") if p.is_file()),
                *REPO_ROOT.glob("scripts/*.py"), *REPO_ROOT.glob("autograder/**/*.py"),
                *REPO_ROOT.glob("helpers/**/*.py")})
# A GitHub release address, from the word `releases/` on.
RELEASE_PATH = re.compile(r"releases/[^\s)`'\"\]]*")


def generic_wheel_url() -> str:
    """CourseSettings.wheel_url as documents write it: OWNER/NAME and <version> for the values."""
    url = CourseSettings("OWNER/NAME", "main", SAMPLE_VERSION).wheel_url
    assert url.count(SAMPLE_VERSION) == 2, url  # the tag and the wheel's file name
    return url.replace(SAMPLE_VERSION, "<version>")


def header(script: Path) -> str:
    """The comment block at the top of a shell script, its `# ` markers taken off."""
    lines = []
    for line in script.read_text().splitlines()[1:]:
        if not line.startswith("#"):
            break
        lines.append(line[1:].strip())
    return "\n".join(lines)


def test_the_documents_name_the_address_configure_writes():
    url = generic_wheel_url()
    assert url == ("https://github.com/OWNER/NAME/releases/download/v<version>/"
                   "pytorch_course_helpers-<version>-py3-none-any.whl")
    assert url in header(REPO_ROOT / ".github" / "scripts" / "publish-student.sh")
    assert url in (REPO_ROOT / "docs" / "instructors.md").read_text()
    # README's install block is generated: the course's own address, as configure wrote it.
    assert course_settings(REPO_ROOT).wheel_url in (REPO_ROOT / "README.md").read_text()


def test_no_document_or_script_names_another_release_address():
    """Every `releases/...` path in what an instructor reads is the one configure writes: a
    download from the release v<version> (before: the push script said releases/latest/download/)."""
    others = []
    for path in TEXTS:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for match in RELEASE_PATH.finditer(text):
            # (the code that builds it writes "releases/download/" then the tag)
            if not re.fullmatch(r"releases/download/(v\S*)?", match.group()):
                line = text.count("\n", 0, match.start()) + 1
                others.append(f"{path.relative_to(REPO_ROOT)}:{line}: {match.group()}")
    assert not others, ("these name a release address that no setup cell installs from "
                        "(configure writes releases/download/v<version>/):\n" + "\n".join(others))

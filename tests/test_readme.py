"""README.md: Colab links from [tool.course], the two-command quick start, the sections others extend."""

import re
from pathlib import Path

from autograder.course import colab_url, course_settings
from autograder.layout import Course
from autograder.readme import student_readme

ROOT = Path(__file__).resolve().parent.parent


def test_readme_has_an_open_in_colab_link_for_every_notebook():
    readme = (ROOT / "README.md").read_text()
    notebooks = sorted((ROOT / "release").glob("*/*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    missing = [p.relative_to(ROOT).as_posix() for p in notebooks
               if colab_url(p.relative_to(ROOT).as_posix()) not in readme]
    assert not missing, (f"README.md lacks Colab links (from [tool.course]) for: {missing}; "
                         "run `python -m autograder configure`")
    assert f"pip install {course_settings().wheel_url}" in readme


def test_readme_quick_start_is_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [line.split("#")[0].strip() for line in quick.splitlines()[1:] if line.strip()]
    assert commands == ["make course", "make test"]


def test_readme_has_the_student_and_instructor_sections():
    readme = (ROOT / "README.md").read_text()
    headings = re.findall(r"(?m)^#{2,3} .*$", readme)
    for heading in ("## For students", "## For instructors", "### Adopt the course",
                    "### Publish to students"):
        assert heading in headings, heading
    instructors = headings.index("## For instructors")
    assert headings.index("### Adopt the course") > instructors
    assert headings.index("### Publish to students") > instructors


def test_the_student_readme_is_self_contained():
    """Every relative link of what students get points at a file the student repository has."""
    text = student_readme((ROOT / "README.md").read_text())
    course = Course(ROOT)
    published = ({f"release/{a}/{a}.ipynb" for a in course.assignments()}
                 | {f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")} | {"LICENSE"})
    links = re.findall(r"\]\((?!https?://|#)([^)]+)\)", text)
    assert links and [link for link in links if link not in published] == []
    assert "## For instructors" not in text and "## Quick start" not in text


def test_authoring_states_the_mutant_minimum_the_summary_contract_and_a_worked_example():
    """authoring.md said "at least four" without the gate, described a summary dict that 03 does
    not follow, and had no worked example of adding an assignment."""
    from autograder.check import MIN_MUTANTS
    from autograder.notebooks import read_notebook
    from autograder.points import summary_points

    text = (ROOT / "docs" / "authoring.md").read_text()
    assert f"MIN_MUTANTS = {MIN_MUTANTS}" in text
    # 03's summary has qualified keys; the contract the doc states names one of them.
    keys = summary_points(read_notebook(ROOT / "source" / "03_custom_functions" /
                                        "03_custom_functions.ipynb"))
    qualified = [k for k in keys if " " in k]
    assert qualified and any(f'"{k}"' in text for k in qualified)
    assert "passed(key)" in text and "add up to that exercise's points" in text
    example = text.split("### A worked example")[1]
    for step in ("python -m autograder new", "[tool.course.release]", "[tool.course.due]",
                 "mutants/", "check 09_attention", "publish --now"):
        assert step in example, step

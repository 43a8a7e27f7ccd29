"""README.md: Colab links from [tool.course], the two-command quick start, the sections others extend."""

import re
from pathlib import Path

from autograder.authoring.readme import student_readme
from autograder.course.layout import Course
from autograder.course.settings import course_settings

ROOT = Path(__file__).resolve().parents[2]


def test_readme_has_an_open_in_colab_link_for_every_notebook():
    readme = (ROOT / "README.md").read_text()
    notebooks = sorted((ROOT / "release").glob("*/*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    missing = [p.relative_to(ROOT).as_posix() for p in notebooks
               if course_settings(ROOT).colab_url(p.relative_to(ROOT).as_posix()) not in readme]
    assert not missing, (f"README.md lacks Colab links (from [tool.course]) for: {missing}; "
                         "run `python -m autograder configure`")
    assert f"pip install {course_settings(ROOT).wheel_url}" in readme


def test_readme_quick_start_is_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    commands = [line.split("#")[0].strip() for line in quick.splitlines()[1:] if line.strip()]
    assert commands == ["make course", "make test"]


def test_readme_is_the_front_door_and_the_instructors_guide_lives_in_docs():
    """The README was 28 KB, the instructor's guide inside it; it is the front door now: what the
    course is, the two commands, where students start, where instructors read on."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.encode()) < 12_000
    headings = re.findall(r"(?m)^#{2,3} .*$", readme)
    assert headings[:4] == ["## Quick start", "## The course", "## For students",
                            "## For instructors"]
    assert "](docs/instructors.md)" in readme
    guide = (ROOT / "docs" / "instructors.md").read_text()
    sections = re.findall(r"(?m)^## .*$", guide)
    for heading in ("## Adopt the course", "## Publish to students", "## A term's calendar",
                    "## Grade on Gradescope", "## Collect submissions", "## Export grades",
                    "## Return feedback", "## Rehearse a term"):
        assert heading in sections, heading
    for link in re.findall(r"\]\(([^)#]+)", guide):  # relative links from docs/ resolve
        if not link.startswith("http"):
            assert (ROOT / "docs" / link).resolve().exists(), link


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
    from autograder.authoring.check import MIN_MUTANTS
    from autograder.course.notebooks import read_notebook
    from autograder.course.points import summary_points

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


CPU_TORCH = "pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu"


def test_the_student_readme_says_how_to_install_the_cpu_build_of_torch_first():
    """issue 39, 10: a student's venv on a laptop without a GPU was 6.0 GB: pip's default torch on
    Linux brings the CUDA libraries. The student README says how to take the CPU build, before
    the line that installs the course's package (which would pull the default torch)."""
    readme = student_readme((ROOT / "README.md").read_text())
    install = readme.split("**On your machine**", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = install.splitlines()
    cpu = next(i for i, line in enumerate(lines) if CPU_TORCH in line)
    wheel = next(i for i, line in enumerate(lines) if course_settings(ROOT).wheel_url in line)
    assert cpu < wheel and lines[cpu].lstrip().startswith("#")  # a GPU machine keeps CUDA
    assert "GPU" in lines[cpu]

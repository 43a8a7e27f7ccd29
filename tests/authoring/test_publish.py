"""`publish`: the student repository's tree, with nothing that holds an answer, and safe to rerun."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.__main__ import main
from autograder.authoring.leaks import find_leaks, secrets, windows
from autograder.authoring.publish import MARKER, PublishError, publish
from autograder.authoring.readme import render_readme
from autograder.authoring.setup_cell import setup_head
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook, write_notebook
from autograder.course.settings import REPO_ROOT, course_settings
from tests.authoring.test_configure import full_course_copy

pytestmark = pytest.mark.slow  # nbgrader generates the release (seconds per notebook)

COURSE = Course(REPO_ROOT)


AFTER_THE_TERM = datetime(2027, 6, 1, tzinfo=timezone.utc)  # every assignment released and due


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """This course published into a fresh folder at the end of its term; treat as read-only."""
    out = tmp_path_factory.mktemp("student") / "repo"
    publish(COURSE, out, now=AFTER_THE_TERM)
    return out


@pytest.fixture(scope="module")
def found():
    return secrets(COURSE)


def files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def configured_copy(tmp_path: Path) -> Course:
    """A copy of the fixture course whose setup cells and README agree with its [tool.course]."""
    return full_course_copy(tmp_path / "course")


# -- what the real course publishes -----------------------------------------------------------------

def test_the_tree_is_release_lectures_readme_license_and_nothing_else(published):
    expected = {f"release/{a}/{a}.ipynb" for a in COURSE.assignments()}
    expected |= {f"notebooks/{p.name}" for p in (REPO_ROOT / "notebooks").glob("*.ipynb")}
    expected |= {"README.md", "LICENSE", MARKER}
    assert files(published) == expected
    assert (published / "LICENSE").read_bytes() == (REPO_ROOT / "LICENSE").read_bytes()
    assert "Copyright (c) 2026 The PyTorch course authors" in (published / "LICENSE").read_text()
    record = json.loads((published / MARKER).read_text())
    assert set(record["files"]) == expected - {MARKER}


def test_the_student_readme_links_every_notebook_and_says_how_to_hand_in(published):
    readme = (published / "README.md").read_text()
    settings = course_settings(REPO_ROOT)
    for rel in files(published):
        if rel.endswith(".ipynb"):
            assert settings.colab_url(rel) in readme, rel
            assert f"]({rel})" in readme, rel  # the relative link works in the student repository
    assert f"pip install {settings.wheel_url}" in readme
    assert "File > Download > Download .ipynb" in readme and "Copy of" in readme
    for instructor_only in ("## Quick start", "## For instructors", "make course", "source/"):
        assert instructor_only not in readme


def test_published_notebooks_carry_the_configured_setup_cell_and_no_outputs(published):
    head = setup_head(REPO_ROOT)
    for rel in sorted(files(published)):
        if rel.endswith(".ipynb"):
            nb = nbformat.read(published / rel, as_version=4)
            first = next(c for c in nb.cells if c.cell_type == "code")
            assert first.source.startswith(head), rel
            assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), rel


def test_the_search_covers_every_kind_of_secret(found):
    """Lines of solutions and of hidden tests, windows of references and of mutants: all there."""
    origins = list(found.lines.values()) + list(found.windows.values())
    assert len(found.lines) > 300 and len(found.windows) > 500
    for kind in (", solution of ", ", hidden tests of ", "helpers/reference/", "grading/"):
        assert any(kind in origin for origin in origins), kind
    files_searched = [p for folder in (REPO_ROOT / "helpers" / "reference", COURSE.grading_dir)
                      for p in sorted(folder.rglob("*.py")) if p.name != "__init__.py"]
    assert len(files_searched) > 60
    unsearched = [p.name for p in files_searched if not windows(p.read_text()) & set(found.windows)]
    assert unsearched == []


def test_nothing_published_holds_an_answer_hidden_test_reference_or_mutant(published, found):
    leaks = find_leaks(published, found)
    assert not leaks, "\n".join(str(leak) for leak in leaks[:20])


def _secret(found, kind: str, lines: bool) -> str:
    pool = found.lines if lines else found.windows
    return sorted(text for text, origin in pool.items() if kind in origin)[0]


@pytest.mark.parametrize("kind,lines,target", [
    (", solution of ", True, "release/05_optim/05_optim.ipynb"),
    (", hidden tests of ", True, "README.md"),
    ("helpers/reference/", False, "notebooks/01_hardware.ipynb"),
    ("grading/", False, "LICENSE"),
])
def test_the_search_finds_a_planted_leak(published, found, tmp_path, kind, lines, target):
    """The same tree with one secret planted in one file: the search names that file and origin."""
    tree = tmp_path / "tree"
    shutil.copytree(published, tree)
    secret = _secret(found, kind, lines)
    path = tree / target
    if path.suffix == ".ipynb":
        nb = read_notebook(path)
        nb.cells.append(new_markdown_cell("A helpful hint:"))
        nb.cells.append(new_code_cell("def hint():\n" + "".join(f"    {line}\n" for line in secret.splitlines())))
        write_notebook(nb, path)
    else:
        path.write_text(path.read_text() + "\n```python\n" + secret + "\n```\n")
    leaks = find_leaks(tree, found)
    assert (target, secret) in [(leak.file, leak.text) for leak in leaks]
    assert {leak.file for leak in leaks} == {target}  # its lines may be secrets too
    assert any(kind in leak.origin for leak in leaks)


# -- publishing safely --------------------------------------------------------------------------------

def test_publish_refuses_a_folder_that_is_not_a_publish(tmp_path, capsys):
    course = configured_copy(tmp_path)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("mine")
    assert main(["publish", "--root", str(course.root), str(out)]) == 2
    assert "not empty and holds no earlier publish" in capsys.readouterr().out
    assert files(out) == {"thesis.tex"}


def test_publish_into_a_fresh_clone_then_again_keeps_what_it_did_not_write(tmp_path, capsys):
    course = configured_copy(tmp_path)
    out = tmp_path / "student"
    (out / ".git").mkdir(parents=True)
    (out / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert main(["publish", "--root", str(course.root), str(out)]) == 0
    printed = capsys.readouterr().out
    settings = course_settings(course.root)
    assert f"gh release create {settings.release_tag} build/dist/{settings.wheel_name}" in printed
    assert {"release/00_fixture/00_fixture.ipynb", "README.md", "LICENSE", MARKER,
            ".git/HEAD"} <= files(out)
    # The instructor adds a workflow; an old publish had a file that is no longer produced.
    (out / ".github" / "workflows").mkdir(parents=True)
    (out / ".github" / "workflows" / "check.yml").write_text("on: push\n")
    record = json.loads((out / MARKER).read_text())
    record["files"].append("release/99_gone/99_gone.ipynb")
    (out / MARKER).write_text(json.dumps(record))
    (out / "release" / "99_gone").mkdir()
    (out / "release" / "99_gone" / "99_gone.ipynb").write_text("{}")
    changed = publish(course, out)
    assert changed == ["release/99_gone/99_gone.ipynb (removed)"]
    assert not (out / "release" / "99_gone").exists()
    assert (out / ".github" / "workflows" / "check.yml").read_text() == "on: push\n"
    assert (out / ".git" / "HEAD").is_file()
    before = snapshot(out)
    assert publish(course, out) == []
    assert snapshot(out) == before


def test_publish_refuses_to_overwrite_a_file_it_did_not_write(tmp_path):
    course = configured_copy(tmp_path)
    out = tmp_path / "student"
    publish(course, out)
    record = json.loads((out / MARKER).read_text())
    record["files"].remove("LICENSE")
    (out / MARKER).write_text(json.dumps(record))
    before = snapshot(out)
    with pytest.raises(PublishError, match="did not write: LICENSE"):
        publish(course, out)
    assert snapshot(out) == before


def test_publish_writes_nothing_when_the_tree_would_leak(tmp_path):
    course = configured_copy(tmp_path)
    mutant = sorted(course.grading_dir.glob("*/mutants/*.py"))[0]
    lecture = course.root / "notebooks" / "01_hardware.ipynb"
    nb = read_notebook(lecture)
    nb.cells.append(new_code_cell(mutant.read_text()))
    write_notebook(nb, lecture)
    out = tmp_path / "student"
    with pytest.raises(PublishError, match=r"notebooks/01_hardware.ipynb: .* from grading/"):
        publish(course, out)
    assert not out.exists()


def test_publish_writes_nothing_when_a_setup_cell_disagrees(tmp_path):
    course = configured_copy(tmp_path)
    path = course.source_notebook("00_fixture")
    nb = read_notebook(path)
    nb.cells[0].source = nb.cells[0].source.replace("/releases/download/", "/releases/latest/download/")
    write_notebook(nb, path)
    out = tmp_path / "student"
    with pytest.raises(PublishError) as raised:
        publish(course, out)
    assert "run `python -m autograder configure`" in str(raised.value)
    assert "\n  - source/00_fixture/00_fixture.ipynb: its setup cell installs" in str(raised.value)
    assert not out.exists()


def test_publish_has_help(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["publish", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "OUT" in out and MARKER in out and "nothing is written" in out


# -- the calendar ----------------------------------------------------------------------------------

def calendar_course(tmp_path: Path, calendar: str) -> Course:
    """configured_copy with a second assignment, 01_second (00_fixture's notebook), and
    `calendar` (TOML tables) appended to its pyproject.toml."""
    course = configured_copy(tmp_path)
    (course.source_dir / "01_second").mkdir()
    shutil.copyfile(course.source_notebook("00_fixture"), course.source_notebook("01_second"))
    pyproject = course.root / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + calendar)
    readme = course.root / "README.md"  # its Colab table lists the new assignment
    readme.write_text(render_readme(readme.read_text(), course, course_settings(course.root)))
    return course


CALENDAR = """
[tool.course.release]
"00_fixture" = "2026-11-24T09:00:00+00:00"
"01_second" = "2026-12-02T09:00:00+00:00"
[tool.course.due]
"00_fixture" = "2026-12-01T23:59:00+00:00"
"01_second" = "2026-12-08T23:59:00+00:00"
"""


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_publish_writes_what_the_calendar_released_and_keeps_what_it_published(tmp_path, capsys):
    """`publish OUT 00_fixture` after a full publish removed the others from the student
    repository; and every assignment was handed out on day one."""
    course = calendar_course(tmp_path, CALENDAR)
    out = tmp_path / "student"
    publish(course, out, now=at("2026-11-25T12:00:00+00:00"))
    assert {f for f in files(out) if f.startswith("release/")} == {
        "release/00_fixture/00_fixture.ipynb"}
    with pytest.raises(PublishError, match=r"not released yet: 01_second \(on 2026-12-02"):
        publish(course, out, ["01_second"], now=at("2026-11-25T12:00:00+00:00"))
    assert main(["publish", "--root", str(course.root), str(out), "--now",
                 "2026-12-03T00:00:00+00:00"]) == 0
    assert "release/01_second/01_second.ipynb" in files(out)
    publish(course, out, ["00_fixture"], now=at("2026-12-03T00:00:00+00:00"))
    assert {f for f in files(out) if f.startswith("release/")} == {
        "release/00_fixture/00_fixture.ipynb", "release/01_second/01_second.ipynb"}


def test_publish_refuses_a_notebook_that_shows_an_earlier_answer_before_its_due_date(tmp_path):
    """07's release held 06's `evaluate` solution, and publish handed it out before 06 was due."""
    course = calendar_course(tmp_path, CALENDAR.replace('"01_second" = "2026-12-02T09:00:00+00:00"',
                                                        '"01_second" = "2026-12-01T10:00:00+00:00"'))
    answer = "return float(np.mean(np.asarray(x, dtype=float) ** 2))"
    assert answer in read_notebook(course.source_notebook("00_fixture")).cells[-1].source or any(
        answer in c.source for c in read_notebook(course.source_notebook("00_fixture")).cells)
    path = course.source_notebook("01_second")
    nb = read_notebook(path)
    nb.cells.append(new_markdown_cell("Last week's `mean_square`, to build on:"))
    nb.cells.append(new_code_cell(f"def last_weeks_mean_square(x):\n    {answer}\n"))
    write_notebook(nb, path)
    out = tmp_path / "student"
    publish(course, out, now=at("2026-11-25T12:00:00+00:00"))  # 00_fixture alone
    before = snapshot(out)
    with pytest.raises(PublishError, match=r"01_second shows 00_fixture's answer mean_square .* "
                                           r"before 00_fixture is due: release 01_second after "
                                           r"2026-12-01T23:59"):
        publish(course, out, now=at("2026-12-01T12:00:00+00:00"))
    assert snapshot(out) == before
    publish(course, out, now=at("2026-12-02T00:00:00+00:00"))  # 00_fixture is due: it may show
    assert "release/01_second/01_second.ipynb" in files(out)


def test_the_course_calendar_releases_no_notebook_before_the_answers_it_shows_are_due():
    """This course's [tool.course.release]: at each assignment's release time, the gate passes
    for it (03 shows 02's training loop, 07 06's evaluate: each opens after that one is due)."""
    from autograder.authoring.student_tree import shown_answers
    from autograder.course.term import course_term

    term = course_term(REPO_ROOT, COURSE.assignments())
    assert set(term.release) == set(COURSE.assignments())
    for assignment, when in term.release.items():
        assert shown_answers(COURSE, [assignment], term, when) == [], assignment


def test_publish_never_writes_through_a_symbolic_link_inside_out(tmp_path):
    course = configured_copy(tmp_path)
    out = tmp_path / "student"
    publish(course, out)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "00_fixture.ipynb").write_text("mine")
    shutil.rmtree(out / "release" / "00_fixture")
    (out / "release" / "00_fixture").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(PublishError, match="symbolic links where publish writes: release/00_fixture"):
        publish(course, out)
    assert (elsewhere / "00_fixture.ipynb").read_text() == "mine"


@pytest.mark.parametrize("link", ["LICENSE", "notebooks/99_borrowed.ipynb", "notebooks",
                                  "source/00_fixture/data.txt", "source/00_fixture"])
def test_publish_never_follows_a_symbolic_link_in_the_course(tmp_path, link):
    """issue 37, 12: a course whose LICENSE was a link to another file published that file. Every
    link among what publish reads (README.md, LICENSE, notebooks/, the assignments' source folders)
    stops it, named, before anything is written."""
    course = configured_copy(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    secret = elsewhere / ("private.ipynb" if link.endswith(".ipynb") else "private.txt")
    if link.endswith(".ipynb"):
        write_notebook(nbformat.v4.new_notebook(cells=[new_markdown_cell("PRIVATE-MARKER")]), secret)
    else:
        secret.write_text("PRIVATE-MARKER: not for students\n")
    path = course.root / link
    if path.is_dir():  # the folder moved away, a link in its place
        shutil.move(path, elsewhere / path.name)
        path.symlink_to(elsewhere / path.name, target_is_directory=True)
    else:
        path.unlink(missing_ok=True)
        path.symlink_to(secret)
    out = tmp_path / "student"
    with pytest.raises(PublishError, match=f"symbolic link.*{link}"):
        publish(course, out)
    assert not out.exists()


def test_publish_says_what_changed_in_a_published_notebook_and_asks_for_force(tmp_path, capsys):
    """issue 39, 8: a published assignment changed after its due date was silently updated for
    students (and an old copy then graded 40/44)."""
    course = configured_copy(tmp_path)
    out = tmp_path / "student"
    publish(course, out)
    path = course.source_notebook("00_fixture")
    nb = read_notebook(path)
    prose = next(c for c in nb.cells if c.cell_type == "markdown")
    prose.source += "\n\nA sentence added for clarity."
    write_notebook(nb, path)
    assert publish(course, out) == [  # prose alone: published, and said
        "release/00_fixture/00_fixture.ipynb (changed after publishing: intro changed)"]
    test = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_scale")
    test.metadata["nbgrader"]["points"] = 2
    write_notebook(nb, path)
    before = snapshot(out)
    with pytest.raises(PublishError, match=r"(?s)00_fixture.*already published.*test_scale.*--force"):
        publish(course, out)
    assert snapshot(out) == before
    assert main(["publish", "--root", str(course.root), str(out)]) == 2
    assert "points 1 -> 2" in capsys.readouterr().out
    changed = publish(course, out, force=True)
    assert [line.split(" ")[0] for line in changed] == ["release/00_fixture/00_fixture.ipynb"]
    assert snapshot(out) != before

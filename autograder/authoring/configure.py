"""`python -m autograder configure [--student-repository OWNER/NAME] [--branch BRANCH]`.

Points the course at its student repository. Writes `student_repository` and `branch` in
`[tool.course]` of pyproject.toml (those lines only: comments and the rest stay as they are),
then everything derived from them and from `[project] version`: the setup cell of every
notebook in source/ and notebooks/ (from autograder/authoring/setup_cell_head.py), release/ (regenerated
with nbgrader) and README.md's generated blocks (Colab links, install commands).

Without options it keeps [tool.course] and rewrites the rest: run it after changing
`[project] version`. A second run changes nothing. `make test` fails, naming the file, while
any of them disagrees with [tool.course].
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from autograder.authoring.readme import ReadmeError, render_readme, stale_blocks
from autograder.authoring.setup_cell import (
    SetupCellError,
    apply_setup_cell,
    first_code_cell,
    render_head,
    rewrite_setup_cell,
)
from autograder.course.layout import Course, CourseError
from autograder.course.notebooks import read_notebook, write_notebook
from autograder.course.settings import (
    CourseSettings,
    SettingsError,
    check_branch,
    check_repository,
    course_settings,
    tomllib,
)

COMMAND = "python -m autograder configure"
LEGACY_KEYS = ("repository", "helpers_wheel_url")  # one repository for both sides; a typed URL
_TABLE = re.compile(r"(?m)^\[tool\.course\][ \t]*(#.*)?$")
_NEXT_TABLE = re.compile(r"(?m)^[ \t]*\[")
_WHEEL = re.compile(r"https://\S+?\.whl")


def _key_line(key: str) -> re.Pattern:
    return re.compile(rf"(?m)^([ \t]*{re.escape(key)}[ \t]*=[ \t]*)(\"[^\"\n]*\"|'[^'\n]*')(.*)$")


def set_course_table(text: str, values: dict[str, str]) -> str:
    """pyproject.toml's `text` with `[tool.course]` holding `values`; other lines untouched.

    Existing keys keep their place and trailing comment; missing ones follow the table's last
    key; the legacy keys are removed. Raises SettingsError if the result does not read back.
    """
    header = _TABLE.search(text)
    if header is None:
        text = text.rstrip("\n") + "\n\n[tool.course]\n"
        body_start = body_end = len(text)
    else:
        body_start = header.end() + 1
        following = _NEXT_TABLE.search(text, body_start)
        body_end = following.start() if following else len(text)
    body = text[body_start:body_end]
    for key in LEGACY_KEYS:
        body = re.sub(rf"(?m)^[ \t]*{key}[ \t]*=.*\n?", "", body)
    for key, value in values.items():
        literal = '"' + value + '"'
        pattern = _key_line(key)
        if pattern.search(body):
            body = pattern.sub(lambda m, v=literal: m.group(1) + v + m.group(3), body, count=1)
        else:
            keys = list(re.finditer(r"(?m)^[ \t]*[\w-]+[ \t]*=.*$", body))
            at = keys[-1].end() + 1 if keys else len(body.rstrip("\n")) + (1 if body.strip() else 0)
            body = body[:at] + f"{key} = {literal}\n" + body[at:]
    new = text[:body_start] + body + text[body_end:]
    try:
        table = tomllib.loads(new).get("tool", {}).get("course", {})
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"pyproject.toml would not be valid TOML after the edit ({error})") from None
    wrong = {k: table.get(k) for k, v in values.items() if table.get(k) != v}
    if wrong or any(k in table for k in LEGACY_KEYS):
        raise SettingsError(f"pyproject.toml: [tool.course] did not read back as {values} "
                            f"(got {table}); edit it by hand")
    return new


def _setup_cell_problem(path: Path, where: str, head: str, settings: CourseSettings) -> str | None:
    """Why the notebook at `path` disagrees with the setup head, or None if it agrees."""
    try:
        cell = first_code_cell(read_notebook(path), where)
        if rewrite_setup_cell(cell.source, head, where) == cell.source:
            return None
    except SetupCellError as error:
        return str(error)
    except Exception as error:
        return f"{where}: not a readable notebook ({type(error).__name__}: {error})"
    found = _WHEEL.search(cell.source.split("device = helpers.setup()")[0])
    if found and found.group(0) != settings.wheel_url:
        return f"{where}: its setup cell installs {found.group(0)}; [tool.course] gives {settings.wheel_url}"
    return (f"{where}: its setup cell differs from the template autograder/authoring/setup_cell_head.py "
            f"(for {settings.wheel_url})")


def notebook_paths(course: Course, release: bool = True) -> list[Path]:
    """Every notebook that carries a setup cell: source/, release/ (unless not `release`), notebooks/."""
    paths = [course.source_notebook(a) for a in course.assignments()]
    if release and course.release_dir.is_dir():
        paths += sorted(course.release_dir.glob("*/*.ipynb"))
    return paths + sorted((course.root / "notebooks").glob("*.ipynb"))


def disagreements(course: Course, release: bool = True) -> list[str]:
    """Each file of `course` that disagrees with [tool.course] and [project] version, and how.

    release=False leaves release/ out (publish generates it afresh from source/).
    """
    try:
        settings = course_settings(course.root)
    except SettingsError as error:
        return [str(error)]
    head = render_head(settings)
    problems = []
    for path in notebook_paths(course, release):
        where = path.relative_to(course.root).as_posix()
        problem = _setup_cell_problem(path, where, head, settings)
        if problem:
            problems.append(problem)
    readme = course.root / "README.md"
    if readme.is_file():
        stale = stale_blocks(readme.read_text(encoding="utf-8"), course, settings)
        problems += [f"README.md: the generated block {name!r} (between `<!-- begin {name}` and "
                     f"`<!-- end {name} -->`) differs from what [tool.course] gives"
                     for name in stale]
    return problems


def configure_course(course: Course, student_repository: str | None = None,
                     branch: str | None = None) -> list[str]:
    """The whole `configure` command; returns the files that changed (relative paths).

    Everything but release/ is computed and checked before the first write; release/ is then
    regenerated by `release`.
    """
    from autograder.authoring.student_release import release

    pyproject = course.root / "pyproject.toml"
    if not pyproject.is_file():
        raise CourseError(f"{pyproject}: no such file; configure writes [tool.course] there")
    text = pyproject.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CourseError(f"{pyproject}: not valid TOML ({error})") from None
    current = data.get("tool", {}).get("course", {})
    repository = student_repository or current.get("student_repository")
    if not repository:
        raise CourseError(f"{pyproject}: [tool.course] names no student repository yet; run "
                          f"`{COMMAND} --student-repository OWNER/NAME`")
    branch = branch or current.get("branch") or "main"
    try:
        values = {"student_repository": check_repository(repository),
                  "branch": check_branch(branch)}
        new_text = set_course_table(text, values)
    except SettingsError as error:
        raise CourseError(str(error)) from None
    version = data.get("project", {}).get("version")
    if not version:
        raise CourseError(f"{pyproject}: [project] version is missing; the student wheel needs it")
    settings = CourseSettings(values["student_repository"], values["branch"], version)
    head = render_head(settings)

    writes: dict[Path, object] = {}
    errors: list[str] = []
    lectures = sorted((course.root / "notebooks").glob("*.ipynb"))
    for path in [course.source_notebook(a) for a in course.assignments()] + lectures:
        where = path.relative_to(course.root).as_posix()
        try:
            nb = read_notebook(path)
            if apply_setup_cell(nb, where, head=head):
                writes[path] = nb
        except SetupCellError as error:
            errors.append(str(error))
        except Exception as error:
            errors.append(f"{where}: not a readable notebook ({type(error).__name__}: {error})")
    readme = course.root / "README.md"
    if readme.is_file():
        old = readme.read_text(encoding="utf-8")
        try:
            new = render_readme(old, course, settings)
            if new != old:
                writes[readme] = new
        except ReadmeError as error:
            errors.append(str(error))
    if errors:
        raise CourseError("configure stopped, nothing written:\n  - " + "\n  - ".join(errors))

    changed = []
    if new_text != text:
        pyproject.write_text(new_text, encoding="utf-8")
        changed.append("pyproject.toml")
    for path, content in writes.items():
        if isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        else:
            write_notebook(content, path)
        changed.append(path.relative_to(course.root).as_posix())
    if course.assignments():
        changed += [c for c in release(course) if c not in changed]
    return changed


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--student-repository", metavar="OWNER/NAME",
                        help="the public GitHub repository students get (default: keep "
                             "[tool.course] student_repository)")
    parser.add_argument("--branch", help="its branch that Colab opens (default: keep "
                                         "[tool.course] branch, else main)")


def run(args: argparse.Namespace, course: Course) -> int:
    from autograder.authoring.student_release import SourceError
    from autograder.engine.template import GenerationError

    try:
        changed = configure_course(course, args.student_repository, args.branch)
    except SourceError as error:
        print("configure: [tool.course], the setup cells and README.md are written; release/ "
              "was not regenerated because of problems in the source notebooks:")
        for line in error.errors:
            print(f"  - {line}")
        return 2
    except GenerationError as error:
        print(f"configure: release/ was not regenerated: {error}")
        return 2
    settings = course_settings(course.root)
    for path in changed:
        print(f"  updated {path}")
    print(f"Student repository {settings.student_repository} (branch {settings.branch}); "
          f"student wheel {settings.wheel_url}. {len(changed) or 'No'} file(s) changed.")
    return 0

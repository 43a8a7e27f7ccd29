"""Which version of an assignment a student's notebook came from, and that version's source.

nbgrader writes into every graded and read-only cell of a release a checksum of the cell as
generated (`metadata.nbgrader.checksum`: its text, type, grade_id and points), and a student's
copy keeps them as they were when it was downloaded. The versions a course handed out are its
committed releases: release/ is committed beside source/ and a test keeps the two in sync, so
`git log -- release/<a>/<a>.ipynb` lists every version, and source/<a>/ at the same commit is
what that version is graded by.

Compared: every cell that carries a grade_id and a checksum (setup, read-only prose and code,
solution cells as released, tests). A version agrees with a notebook when every cell the two
share has the same checksum, one cell at least; of the versions that agree, the one whose set of
cells is nearest the notebook's (a student deletes cells, an editor strips metadata), then the
newest. A release's checksum covers what students see, so versions that differ only in their
hidden tests cannot be told apart: the newest is taken. `grade` grades by the version found only where its
graded cells (tests and read-only code but the setup cell, which decides no score) differ from
the current ones. The checksums are the student's data: a notebook may name any version that was
handed out, and `grade` says on its row which one it was graded by.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from autograder.course.notebooks import nbgrader

_CHECKSUM_CHARS = 64  # an md5 is 32 hex digits; anything longer is not nbgrader's
_GIT_TIMEOUT = 60  # seconds for one git command on a local repository


@dataclass(frozen=True)
class Version:
    """One release of an assignment: a commit's, or the current one (commit "")."""

    commit: str
    date: str  # the commit's date, ISO 8601
    checksums: dict[str, str]  # cell_checksums of its release notebook
    graded: frozenset[str]  # the grade_ids among them that decide a score (graded_ids)

    @property
    def short(self) -> str:
        return self.commit[:10] or "current"

    def graded_checksums(self) -> dict[str, str]:
        return {g: c for g, c in self.checksums.items() if g in self.graded}


def cell_checksums(nb: NotebookNode) -> dict[str, str]:
    """grade_id -> nbgrader's checksum of every cell of `nb` that carries both."""
    found = {}
    for cell in nb.cells:
        meta = nbgrader(cell)
        gid, checksum = meta.get("grade_id"), meta.get("checksum")
        if isinstance(gid, str) and isinstance(checksum, str) and len(checksum) <= _CHECKSUM_CHARS:
            found[gid] = checksum
    return found


def graded_ids(nb: NotebookNode) -> frozenset[str]:
    """The grade_ids of the cells that decide a score: test cells and read-only code cells but
    the setup cell (the first code cell)."""
    first_code = next((c for c in nb.cells if c.get("cell_type") == "code"), None)
    return frozenset(nbgrader(c)["grade_id"] for c in nb.cells
                     if c is not first_code and c.get("cell_type") == "code"
                     and isinstance(nbgrader(c).get("grade_id"), str)
                     and (nbgrader(c).get("grade") or nbgrader(c).get("locked")))


def version_of(nb: NotebookNode, commit: str = "", date: str = "") -> Version:
    """The Version a release notebook is."""
    return Version(commit, date, cell_checksums(nb), graded_ids(nb))


def agrees(notebook: dict[str, str], version: dict[str, str]) -> bool:
    """Whether checksums read from a notebook agree with a version's (module doc)."""
    shared = notebook.keys() & version.keys()
    return bool(shared) and all(notebook[g] == version[g] for g in shared)


def differing(notebook: dict[str, str], version: dict[str, str]) -> list[str]:
    """The grade_ids whose checksum differs between the two, or that one of them lacks."""
    return sorted(g for g in notebook.keys() | version.keys() if notebook.get(g) != version.get(g))


def received(notebook: dict[str, str], versions: list[Version]) -> Version | None:
    """The version (of `versions`, newest first) a notebook's checksums say it came from: of
    those that agree, the one whose cells differ least from the notebook's (cells it lacks, cells
    the version lacks), then the newest; None when none agrees."""
    agreeing = [(len(v.checksums.keys() ^ notebook.keys()), k, v) for k, v in enumerate(versions)
                if agrees(notebook, v.checksums)]
    return min(agreeing, key=lambda t: t[:2])[2] if agreeing else None


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              timeout=_GIT_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired):
        return None


def history(root: Path, assignment: str) -> list[Version]:
    """The committed releases of `assignment` in the git repository holding the course at `root`,
    newest first; [] where there is no repository (or no git)."""
    path = f"./release/{assignment}/{assignment}.ipynb"
    log = _git(root, "log", "--format=%H %cI", "--", path)
    if log is None or log.returncode:
        return []
    versions = []
    for line in log.stdout.decode().splitlines():
        commit, _, date = line.partition(" ")
        shown = _git(root, "show", f"{commit}:{path}")
        if shown is None or shown.returncode:
            continue  # the commit that removed it
        try:
            nb = nbformat.reads(shown.stdout.decode(), as_version=4)
        except Exception:  # not a notebook at that commit
            continue
        versions.append(version_of(nb, commit, date))
    return versions


def export_source(root: Path, commit: str, assignment: str, dest: Path) -> Path:
    """Write source/<assignment>/ as it was at `commit` into `dest`/<assignment>/; returns
    `dest`. OSError when git cannot."""
    import io
    import tarfile

    archive = _git(root, "archive", "--format=tar", commit, f"./source/{assignment}")
    if archive is None or archive.returncode:
        said = archive.stderr.decode(errors="replace").strip() if archive is not None else "no git"
        raise OSError(f"git archive {commit} source/{assignment}: {said}")
    prefix = _git(root, "rev-parse", "--show-prefix")
    inside = (prefix.stdout.decode().strip() if prefix is not None else "") + f"source/{assignment}/"
    folder = Path(dest) / assignment
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        for member in tar.getmembers():  # regular files only, each under source/<assignment>/
            if not member.isfile() or not member.name.startswith(inside) or ".." in member.name.split("/"):
                continue
            target = folder / member.name[len(inside):]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(tar.extractfile(member).read())
    return Path(dest)


def changes(old: NotebookNode, new: NotebookNode) -> tuple[list[str], list[str]]:
    """What changed between two releases of a notebook, one line each: (changes to what students
    run or are graded on: code cells but the setup cell, points; the other changes: prose, the
    setup cell)."""
    old_sums, new_sums = cell_checksums(old), cell_checksums(new)
    cells = {nbgrader(c).get("grade_id"): c for nb in (old, new) for c in nb.cells}
    setup = {_setup_id(old), _setup_id(new)}
    code, other = [], []
    for gid in sorted(g for g in old_sums.keys() | new_sums.keys() if old_sums.get(g) != new_sums.get(g)):
        what = "added" if gid not in old_sums else "removed" if gid not in new_sums else "changed"
        points = [nbgrader(c).get("points") for c in _by_id(old, gid) + _by_id(new, gid)]
        if (what == "changed" and len(points) == 2 and points[0] != points[1]
                and all(isinstance(x, (int, float)) for x in points)):
            what += f" (points {points[0]:g} -> {points[1]:g})"
        is_code = cells[gid].get("cell_type") == "code" and gid not in setup
        (code if is_code else other).append(f"{gid} {what}")
    for kind, bucket in (("code", code), ("markdown", other)):
        before, after = _unlabelled(old, kind), _unlabelled(new, kind)
        if before != after:
            bucket.append(f"{len(before ^ after)} unlabelled {kind} cell(s) changed")
    return code, other


def _setup_id(nb: NotebookNode) -> str | None:
    first = next((c for c in nb.cells if c.get("cell_type") == "code"), None)
    return nbgrader(first).get("grade_id") if first is not None else None


def _by_id(nb: NotebookNode, gid: str) -> list[NotebookNode]:
    return [c for c in nb.cells if nbgrader(c).get("grade_id") == gid]


def _unlabelled(nb: NotebookNode, kind: str) -> set[str]:
    return {c.source for c in nb.cells if c.get("cell_type") == kind and not nbgrader(c).get("grade_id")}

"""`python -m autograder collect DOWNLOAD --from canvas|gradescope|zip --assignment NN_name`.

Lays an LMS bulk download (the zip, or the folder it was extracted into) out as nbgrader's
`SUBMITTED/<student>/<assignment>/<assignment>.ipynb` (default SUBMITTED: build/submitted), with
the submission time, where the download has one, in nbgrader's `timestamp.txt` beside it
(`2026-11-20 17:03:00.000000 UTC`). What each source looks like:

  canvas      Canvas's "Download Submissions": one file per uploaded file, named
              `{lastfirst}_{LATE_}{user_id}_{file_id}_{original filename}` (canvas-lms
              lib/content_zipper.rb: the name downcased and reduced to word characters, the marker
              `LATE` (`late` in downloads of older Canvas); file_id is Canvas's id of the uploaded
              file; `-1`, `-2` on a name uploaded again). Names are read from the left, as Canvas
              writes them: the first `_`-separated numbers after the name are the user and the
              file, whatever numbers the student's own file name holds after them, and a path is
              read from its first part that is such a name (a folder a student's file name or a
              zip made inside it never names another student). The student is the Canvas user
              id, the `ID` column of Canvas's gradebook export. The zip carries no submission
              time (its entries are stamped when the zip is made); --times takes them from
              Canvas's Submissions API (autograder/classroom/canvas_times.py: a file, or a folder
              of its pages, or --times once per page), and with them the student's own due date
              (`cached_due_date`: an extension), written as `due.txt` beside `timestamp.txt`.
              Each file is checked against it: a file the API does not list among that user's
              current files is not placed (a name that lies, or a student who handed in again
              after the download), whatever its name says.
  gradescope  Gradescope's "Export Submissions": `submission_metadata.yml` and one folder
              `submission_<id>/` per submission; the YAML maps each folder to its
              `:submitters:` (`:name:`, `:sid:`, `:email:`) and `:created_at:`. The student is
              the SID, else the email; a group submission is laid out for each member.
  zip         A zip (or folder) of `<student>/anything.ipynb`, `<student>/<assignment>/anything
              .ipynb` (nbgrader's own layout; a `timestamp.txt` there is kept) or
              `<student>_<assignment>.ipynb` at the top.

What the LMS said of each placed notebook (Canvas user, file and submission ids, the name;
Gradescope's submission id, name and email; the time) goes to SUBMITTED/lms.csv
(autograder/classroom/lms_manifest.py), which `feedback --submitted` reads to name files for the LMS.

Notebook names may be what Colab and browsers make of them (`Copy of 01_numpy_mlp (1).ipynb`).
Every file not placed is a line of "not placed" with the reason, and every other file is placed
whatever those are: not a notebook, a name that cannot be read, no metadata, a second notebook
from the same student (the newest is kept), a hidden name (`.x`, `__MACOSX/`), a symbolic link
(never followed, in a zip or a folder), two zip members of one name, a path leading outside the
download, a file over --max-size (20 MB by default; read no further than that, whatever the zip's
header says), a corrupt member (bad CRC). Nothing is written half: the tree is built in a
temporary folder inside SUBMITTED and moved into place at the end; nothing is written through a
symbolic link inside SUBMITTED; a download with nothing to place writes nothing (no lms.csv);
a student who already has this assignment in SUBMITTED stops the command unless --replace.
"""

from __future__ import annotations

import argparse
import os
import re
import stat
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from autograder.classroom.canvas_times import file_mismatch, read_canvas_times, record_of
from autograder.classroom.lms_manifest import MANIFEST, LmsRecord, manifest_text, read_manifest
from autograder.course.lateness import DUE_FILE, TIMESTAMP_FILE, format_timestamp, parse_timestamp
from autograder.course.layout import Course, CourseError
from autograder.course.safe_text import safe_line
from autograder.course.term import course_term

SOURCES = ("canvas", "gradescope", "zip")
# Canvas's "Download Submissions" names: {lastfirst}_{LATE_}{user_id}_{file_id}_{filename}, read
# from the left: the name is word characters only (canvas-lms strips the rest), so the first
# `_<digits>_<digits>_` after it are the user and the file, whatever the student's file name holds.
CANVAS_NAME = re.compile(r"^(?P<name>\w*?)_(?:(?P<late>(?i:late))_)?(?P<user>[0-9]+)_(?P<file_id>[0-9]+)_"
                         r"(?P<file>.+)$", re.DOTALL)
# An assignment graded anonymously names files by the submission's anonymous id, not the user:
# `{LATE_}anon_{anonymous_id}_{file_id}_{filename}` (get_filename, when anonymize_students?).
CANVAS_ANONYMOUS = re.compile(r"^(?:(?i:late)_)?anon_[0-9A-Za-z]+_[0-9]+_.")
GRADESCOPE_METADATA = "submission_metadata.yml"
MAX_BYTES = 20 * 2**20  # --max-size's default: a notebook with its outputs is far smaller
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@._+-]*$")


@dataclass
class Entry:
    """One file of the download: its path inside it and how to read it."""

    path: PurePosixPath
    read: Callable[[], bytes]


@dataclass
class Candidate:
    """A notebook that could be a student's submission."""

    student: str
    entry: Entry
    names_assignment: bool  # its file name is the assignment's, give or take Colab's renames
    submitted_at: datetime | None = None
    due_at: datetime | None = None  # the student's own due date, where the LMS gave one
    order: tuple = ()  # among one student's notebooks, the greatest is the newest
    notes: list[str] = field(default_factory=list)
    lms: dict[str, str] = field(default_factory=dict)  # LmsRecord's fields the download gave


@dataclass
class Collected:
    """What collect did: notebooks placed per student, files left out with the reason."""

    placed: dict[str, Candidate] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why)
    source: str = ""  # canvas, gradescope or zip


def names_assignment(filename: str, assignment: str) -> int | None:
    """The copy number when `filename` names `assignment` ('Copy of X (2).ipynb' -> 2, 'X.ipynb'
    -> 0, Canvas's 'X-1.ipynb' -> 1); None when it names something else."""
    stem = filename[:-len(".ipynb")] if filename.lower().endswith(".ipynb") else filename
    stem = re.sub(r"^((Copy[ _]of[ _])+)", "", stem.strip(), flags=re.IGNORECASE)
    number = re.search(r"(?:[ _]?\((\d+)\)|-(\d+))$", stem)
    copy = 0
    if number:
        stem, copy = stem[:number.start()], int(number.group(1) or number.group(2))
    return copy if stem.strip() == assignment else None


def _hidden(path: PurePosixPath) -> str:
    """Why a member's name hides it (macOS resource forks, .DS_Store, checkpoints); ""."""
    if any(part == "__MACOSX" for part in path.parts):
        return "a macOS resource fork (__MACOSX)"
    if any(part.startswith(".") for part in path.parts):
        return "a hidden name (a part starts with '.')"
    return ""


def _member_path(name: str) -> PurePosixPath | None:
    """A zip member's name as a relative path; None when it could reach outside the folder it is
    extracted into (absolute, a drive, `..`)."""
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or "\\" in name:
        return None
    path = PurePosixPath(name)
    return None if ".." in path.parts or not path.parts else path


_CHUNK = 1 << 20


def _stream(opened, max_bytes: int, keep: bool) -> bytes | None:
    """Read a file object to its end in chunks; its bytes (`keep`) or b"" when they fit in
    `max_bytes`, None past it. Not keeping them, memory holds one chunk at a time."""
    kept, size = [], 0
    while True:
        chunk = opened.read(_CHUNK)
        if not chunk:
            return b"".join(kept)
        size += len(chunk)
        if size > max_bytes:
            return None
        if keep:
            kept.append(chunk)


class _ZipMember:
    """Reads one member of a zip when asked (the member was checked whole before: its CRC, its
    size), so that a download's members are never all in memory at once."""

    def __init__(self, download: Path, info: zipfile.ZipInfo, max_bytes: int):
        self.download, self.info, self.max_bytes = download, info, max_bytes

    def __call__(self) -> bytes:
        with zipfile.ZipFile(self.download) as archive, archive.open(self.info) as member:
            data = _stream(member, self.max_bytes, keep=True)
        if data is None:
            raise CourseError(f"{self.download}: {self.info.filename} changed since it was checked")
        return data


def _read_zip(download: Path, found: Collected, max_bytes: int) -> list[Entry]:
    try:
        archive = zipfile.ZipFile(download)
    except (zipfile.BadZipFile, OSError) as error:
        raise CourseError(f"{download}: not a readable zip ({error})") from None
    entries = []
    with archive:
        infos = [i for i in archive.infolist() if not i.is_dir()]
        count: dict[str, int] = {}
        for info in infos:
            count[info.filename] = count.get(info.filename, 0) + 1
        for info in infos:
            name = info.filename
            path = _member_path(name)
            mode = info.external_attr >> 16
            why = ""
            if path is None:
                why = "a path that leads outside the download (absolute or with '..')"
            elif count[name] > 1:
                why = (f"the zip holds {count[name]} members named so: which one is the "
                       "submission cannot be told")
            elif stat.S_ISLNK(mode):
                why = "a symbolic link (never followed)"
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                why = "not a regular file"
            elif _hidden(path):
                why = _hidden(path)
            elif info.file_size > max_bytes:
                why = f"{info.file_size} bytes, over the cap of {max_bytes} (--max-size)"
            if not why:
                try:  # read whole once, in chunks, to check its CRC; kept only when asked for
                    with archive.open(info) as member:
                        if _stream(member, max_bytes, keep=False) is None:  # a header that lies
                            why = f"over the cap of {max_bytes} bytes (--max-size)"
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError,
                        NotImplementedError) as error:
                    why = f"a corrupt member, not readable ({error})"
            if why:
                found.skipped.append((name, why))
                continue
            entries.append(Entry(path, _ZipMember(download, info, max_bytes)))
    return entries


class _FolderFile:
    """Reads one file of a folder download when asked, never through a symbolic link."""

    def __init__(self, path: Path, max_bytes: int):
        self.path, self.max_bytes = path, max_bytes

    def __call__(self) -> bytes:
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as f:
            data = _stream(f, self.max_bytes, keep=True)
        if data is None:
            raise CourseError(f"{self.path} grew past --max-size since it was checked")
        return data


def _read_folder(download: Path, found: Collected, max_bytes: int) -> list[Entry]:
    entries = []
    for top, dirs, files in os.walk(download, followlinks=False):
        here = Path(top)
        for name in sorted(dirs):
            if (here / name).is_symlink():
                dirs.remove(name)
                found.skipped.append(((here / name).relative_to(download).as_posix(),
                                      "a symbolic link (never followed)"))
        for name in files:
            full = here / name
            path = PurePosixPath(full.relative_to(download).as_posix())
            info = full.lstat()
            why = ("a symbolic link (never followed)" if stat.S_ISLNK(info.st_mode)
                   else "not a regular file" if not stat.S_ISREG(info.st_mode)
                   else _hidden(path)
                   or (f"{info.st_size} bytes, over the cap of {max_bytes} (--max-size)"
                       if info.st_size > max_bytes else ""))
            if not why and not os.access(full, os.R_OK):
                why = "not readable (permission denied)"
            if why:
                found.skipped.append((str(path), why))
                continue
            entries.append(Entry(path, _FolderFile(full, max_bytes)))
    return entries


def read_download(download: Path, found: Collected | None = None,
                  max_bytes: int = MAX_BYTES) -> list[Entry]:
    """Every file of a zip or a folder that can be a submission, in name order; each other one
    (hidden, a symbolic link, a duplicate name, over `max_bytes`, corrupt, a path that leads
    outside) is a line of `found.skipped` with the reason, and the rest are read all the same."""
    download = Path(download)
    found = found if found is not None else Collected()
    if download.is_dir():
        entries = _read_folder(download, found, max_bytes)
    elif zipfile.is_zipfile(download):
        entries = _read_zip(download, found, max_bytes)
    else:
        raise CourseError(f"{download} is neither a folder nor a zip file")
    return sorted(entries, key=lambda e: str(e.path))


def _is_notebook(entry: Entry) -> bool:
    return entry.path.suffix.lower() == ".ipynb"


def canvas_name(path: PurePosixPath) -> re.Match | None:
    """The Canvas name in `path`, read from the left: its first part that is one, with the rest
    of the path as the file ("doejane_1001_7001_hw/x_777_1_2_y.ipynb" is user 1001's "hw/...");
    the folders before it are where the download was extracted. None when no part is one."""
    parts = path.parts
    for at, part in enumerate(parts):
        if CANVAS_NAME.match(part):  # the name and both ids lie within this part: no `/` in them
            return CANVAS_NAME.match("/".join(parts[at:]))
    return None


def _canvas(entries: list[Entry], assignment: str, found: Collected) -> list[Candidate]:
    out = []
    for entry in entries:
        match = canvas_name(entry.path)
        if CANVAS_ANONYMOUS.match(match.string if match else entry.path.name):
            found.skipped.append((str(entry.path), "named by Canvas's anonymous id, not the user's "
                                  "(the assignment is graded anonymously): whose it is cannot be "
                                  "told; download the submissions once Canvas shows student names"))
            continue
        if not match:
            found.skipped.append((str(entry.path), "not a Canvas download name "
                                  "({lastfirst}_{LATE_}{user_id}_{file_id}_{file})"))
            continue
        if not _is_notebook(entry):
            found.skipped.append((str(entry.path), f"user {match['user']} ({match['name']}): not a notebook"))
            continue
        copy = names_assignment(match["file"], assignment)
        candidate = Candidate(match["user"], entry, copy is not None,
                              order=(int(match["file_id"]), copy or 0),
                              lms={"name": match["name"], "user_id": match["user"],
                                   "file_id": match["file_id"], "file": match.string})
        if match["late"]:
            candidate.notes.append("marked late by Canvas")
            candidate.lms["late"] = "late"
        out.append(candidate)
    return out


def _gradescope_time(value) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if isinstance(value, str) and value.strip():
        from dateutil import parser

        when = parser.parse(value)
        return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
    return None


def _inside(path: PurePosixPath, base: PurePosixPath) -> tuple[str, ...]:
    """`path`'s parts below `base` (the export's top folder); () when it is not below it."""
    if base == PurePosixPath("."):
        return path.parts
    return path.relative_to(base).parts if path.is_relative_to(base) else ()


def _gradescope(entries: list[Entry], assignment: str, found: Collected) -> list[Candidate]:
    import yaml

    metas = [e for e in entries if e.path.name == GRADESCOPE_METADATA]
    if len(metas) != 1:
        raise CourseError(f"a Gradescope export holds one {GRADESCOPE_METADATA}; this one has "
                          f"{len(metas)} (is it Gradescope's \"Export Submissions\" zip?)")
    base = metas[0].path.parent
    try:
        metadata = yaml.safe_load(metas[0].read()) or {}
    except yaml.YAMLError as error:
        raise CourseError(f"{metas[0].path}: not readable YAML ({error})") from None
    if not isinstance(metadata, dict):
        raise CourseError(f"{metas[0].path}: expected a mapping of submission_<id> folders")
    out = []
    for entry in entries:
        if entry is metas[0]:
            continue
        parts = _inside(entry.path, base)
        record = metadata.get(parts[0]) if len(parts) > 1 else None
        if not isinstance(record, dict):
            found.skipped.append((str(entry.path), f"not inside a submission folder listed in "
                                  f"{GRADESCOPE_METADATA}"))
            continue
        if not _is_notebook(entry):
            found.skipped.append((str(entry.path), f"{parts[0]}: not a notebook"))
            continue
        try:
            when = _gradescope_time(record.get(":created_at"))
        except (ValueError, OverflowError):
            when = None
            found.skipped.append((str(entry.path), f"{parts[0]}: :created_at: "
                                  f"{record.get(':created_at')!r} is not a time; placed without one"))
        submitters = record.get(":submitters") or []
        students = [str(s.get(":sid") or s.get(":email") or "").strip()
                    for s in submitters if isinstance(s, dict)]
        if not students or not all(students):
            found.skipped.append((str(entry.path), f"{parts[0]}: a submitter without :sid: or "
                                  f":email: in {GRADESCOPE_METADATA}"))
            continue
        copy = names_assignment(entry.path.name, assignment)
        by_student = {str(s.get(":sid") or s.get(":email") or "").strip(): s for s in submitters
                      if isinstance(s, dict)}
        for student in students:
            person = by_student[student]
            out.append(Candidate(student, entry, copy is not None, when,
                                 order=(when or datetime.min.replace(tzinfo=timezone.utc), copy or 0),
                                 lms={"name": str(person.get(":name") or ""),
                                      "email": str(person.get(":email") or ""),
                                      "submission_id": parts[0].removeprefix("submission_"),
                                      "file": entry.path.name}))
    return out


def _zip(entries: list[Entry], assignment: str, found: Collected) -> list[Candidate]:
    times = {}
    for entry in entries:
        if entry.path.name == TIMESTAMP_FILE:
            try:
                times[entry.path.parent] = parse_timestamp(entry.read().decode("utf-8", "replace"))
            except (ValueError, OverflowError) as error:
                found.skipped.append((str(entry.path), f"not a time ({error}); placed without one"))
    out = []
    for entry in entries:
        parts = entry.path.parts
        if entry.path.name == TIMESTAMP_FILE:
            continue
        if not _is_notebook(entry):
            found.skipped.append((str(entry.path), "not a notebook"))
            continue
        copy = names_assignment(entry.path.name, assignment)
        if len(parts) == 1:  # <student>_<assignment>.ipynb
            match = re.match(r"^(?P<student>.+?)[_ -]+(?P<rest>(Copy[ _]of[ _])*"
                             + re.escape(assignment) + r".*)$", parts[0], re.IGNORECASE)
            if not match or names_assignment(match["rest"], assignment) is None:
                found.skipped.append((str(entry.path), f"a notebook at the top must be named "
                                      f"<student>_{assignment}.ipynb"))
                continue
            student, copy = match["student"], names_assignment(match["rest"], assignment)
        elif len(parts) == 2 or (len(parts) == 3 and parts[1] == assignment):
            student = parts[0]
        else:
            found.skipped.append((str(entry.path), f"expected <student>/{{notebook}}.ipynb or "
                                  f"<student>/{assignment}/{{notebook}}.ipynb"))
            continue
        when = times.get(entry.path.parent)
        out.append(Candidate(student, entry, copy is not None, when,
                             order=(when or datetime.min.replace(tzinfo=timezone.utc), copy or 0),
                             lms={"file": entry.path.name}))
    return out


READERS = {"canvas": _canvas, "gradescope": _gradescope, "zip": _zip}


def choose(candidates: list[Candidate], found: Collected) -> None:
    """One notebook per student: one named for the assignment if any, the newest of those."""
    by_student: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        if not _SAFE_ID.match(candidate.student) or ".." in candidate.student:
            found.skipped.append((str(candidate.entry.path), f"student id {candidate.student!r} "
                                  "cannot name a folder"))
            continue
        by_student.setdefault(candidate.student, []).append(candidate)
    for student, mine in sorted(by_student.items()):
        named = [c for c in mine if c.names_assignment] or mine
        keep = max(named, key=lambda c: c.order)
        found.placed[student] = keep
        for other in mine:
            if other is not keep:
                why = "newer" if other in named else "named for the assignment"
                found.skipped.append((str(other.entry.path), f"{student}: a second notebook; kept "
                                      f"the {why} {keep.entry.path.name}"))


def collect(download: Path, source: str, assignment: str, times: Path | list[Path] | None = None,
            max_bytes: int = MAX_BYTES) -> Collected:
    """Read a download and choose each student's notebook; writes nothing.

    times: Canvas's Submissions API answer (autograder/classroom/canvas_times.py): a file, a folder
    of its pages, or a list of those; for --from canvas only. A file it does not list among its
    user's current files is not placed (a line of `skipped`), before each student's is chosen.
    max_bytes: a file larger is not read (a line of `skipped`).
    """
    if times is not None and source != "canvas":
        raise CourseError(f"--times is for --from canvas (a {source} download carries its times)")
    found = Collected()
    candidates = READERS[source](read_download(download, found, max_bytes), assignment, found)
    api = read_canvas_times(times) if times is not None else None
    if api is not None:
        kept = []
        for candidate in candidates:
            why = file_mismatch(api, candidate.student, candidate.lms["file_id"])
            if why:
                found.skipped.append((str(candidate.entry.path), why))
            else:
                kept.append(candidate)
        candidates = kept
    choose(candidates, found)
    found.source = source
    if api is not None:
        for candidate in found.placed.values():
            record = record_of(api, candidate.student, str(candidate.entry.path))
            candidate.submitted_at, candidate.due_at = record.submitted_at, record.due_at
            candidate.lms["submission_id"] = record.submission_id
    return found


def place(found: Collected, assignment: str, submitted: Path, replace: bool = False) -> None:
    """Write SUBMITTED/<student>/<assignment>/ for every placed notebook and its row of
    SUBMITTED/lms.csv, all or nothing.

    CourseError (nothing written) when a student already has the assignment and not `replace`.
    """
    submitted = Path(submitted)
    if not found.placed:
        return  # nothing to place: SUBMITTED and its lms.csv stay as they are
    links = [str(p) for p in [submitted] + [submitted / s for s in found.placed]
             + [submitted / s / assignment for s in found.placed] if p.is_symlink()]
    if links:
        raise CourseError(f"{', '.join(links[:10])}: a symbolic link inside SUBMITTED; collect "
                          "writes nothing through one (it could lead outside). Nothing was written.")
    clashes = sorted(s for s in found.placed if (submitted / s / assignment).exists())
    if clashes and not replace:
        raise CourseError(f"{submitted} already holds {assignment} for {len(clashes)} student(s) "
                          f"({', '.join(clashes[:10])}{', ...' if len(clashes) > 10 else ''}); "
                          "nothing was written. Pass --replace to put the download in their place.")
    records = read_manifest(submitted)  # a broken lms.csv stops us before anything is written
    for student, candidate in found.placed.items():
        when, due = (t.astimezone(timezone.utc).isoformat() if t else ""
                     for t in (candidate.submitted_at, candidate.due_at))
        records[(student, assignment)] = LmsRecord(student, assignment, found.source or "zip",
                                                   submitted_at=when, due_at=due, **candidate.lms)
    submitted.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".collect-", dir=submitted) as tmp:
        staged, old = Path(tmp) / "new", Path(tmp) / "old"
        (Path(tmp) / MANIFEST).write_text(manifest_text(records), encoding="utf-8")
        for student, candidate in found.placed.items():
            folder = staged / student / assignment
            folder.mkdir(parents=True)
            (folder / f"{assignment}.ipynb").write_bytes(candidate.entry.read())
            if candidate.submitted_at is not None:
                (folder / TIMESTAMP_FILE).write_text(format_timestamp(candidate.submitted_at) + "\n")
            if candidate.due_at is not None:
                (folder / DUE_FILE).write_text(format_timestamp(candidate.due_at) + "\n")
        for student in found.placed:  # renames only from here: nothing can fail half-way
            dest = submitted / student / assignment
            if dest.exists():
                (old / student).mkdir(parents=True)
                dest.rename(old / student / assignment)
            dest.parent.mkdir(exist_ok=True)
            (staged / student / assignment).rename(dest)
        (Path(tmp) / MANIFEST).replace(submitted / MANIFEST)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("download", type=Path, metavar="DOWNLOAD",
                        help="the LMS's bulk download: a zip file or the folder it was extracted into")
    parser.add_argument("--from", dest="source", choices=SOURCES, required=True,
                        help="where DOWNLOAD comes from (see above)")
    parser.add_argument("--assignment", "-a", required=True, metavar="ASSIGNMENT",
                        help="the assignment of source/ these submissions are for")
    parser.add_argument("--out", type=Path, default=None, metavar="SUBMITTED",
                        help="the submitted tree to add to (default: build/submitted)")
    parser.add_argument("--max-size", type=float, default=MAX_BYTES / 2**20, metavar="MB",
                        help="a file larger than this is not placed (default: %(default)g MB)")
    parser.add_argument("--replace", action="store_true",
                        help="replace a student's earlier copy of this assignment in SUBMITTED")
    parser.add_argument("--times", type=Path, action="append", default=None, metavar="FILE",
                        help="Canvas only: the submission times and each student's due date, as "
                             "Canvas's Submissions API lists them (GET /api/v1/courses/:course_id/"
                             "assignments/:assignment_id/submissions, saved as JSON): a file, or a "
                             "folder of its pages (*.json), or --times once per page")


def run(args: argparse.Namespace, course: Course) -> int:
    (assignment,) = course.select([args.assignment])
    if not args.download.exists():
        raise CourseError(f"{args.download} does not exist")
    out = args.out or course.build_dir / "submitted"
    if args.max_size <= 0:
        raise CourseError(f"--max-size {args.max_size:g}: a size in MB above 0")
    found = collect(args.download, args.source, assignment, args.times,
                    int(args.max_size * 2**20))
    place(found, assignment, out, replace=args.replace)
    for path, why in found.skipped:
        print(safe_line(f"  not placed: {path}: {why}"), file=sys.stderr)  # names from the download
    late = [s for s, c in found.placed.items() if c.notes]
    timed = sum(c.submitted_at is not None for c in found.placed.values())
    print(safe_line(f"collect: {len(found.placed)} notebook(s) of {assignment} placed in {out} "
                    f"({timed} with a submission time); {len(found.skipped)} file(s) not placed"
                    + (f"; marked late by Canvas: {', '.join(late)}" if late else "")))
    own = {s: c.due_at for s, c in found.placed.items() if c.due_at is not None}
    term = course_term(course.root, course.assignments()) if own else None
    own = {s: when for s, when in own.items() if when != term.due.get(assignment)}
    if own:
        print(safe_line(f"  {len(own)} student(s) with their own due date in Canvas (an extension; "
                        f"[tool.course.due] says {term.show(term.due.get(assignment)) or 'none'}), "
                        "which their late penalty follows: "
                        + ", ".join(f"{s} {term.show(when)}" for s, when in sorted(own.items()))))
    if args.source == "canvas" and args.times is None and found.placed:
        print("  Canvas's download carries no submission time, so no late penalty can apply: pass "
              "--times FILE, the assignment's submissions saved from Canvas's Submissions API "
              "(see `collect --help`)")
    if not found.placed:
        print(safe_line(f"  nothing placed: {out} was left as it was"))
        return 1
    print(safe_line(f"  what the LMS said of each: {out / MANIFEST}"))
    return 0

"""Files written whole or not at all: a reader sees the old file or the new one, never half."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

_UMASK = os.umask(0o022)
os.umask(_UMASK)  # read once: there is no way to read it without setting it


def atomic_write(path: Path, text: str) -> None:
    """Write `text` to `path` so that a reader sees the old file or the new one, never half.

    Written to a temporary file beside it, flushed to disk, then renamed over it (os.replace is
    atomic on POSIX and Windows); the folder is synced so the rename survives a power cut.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 would hide grades from co-instructors
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:  # Windows: folders cannot be opened
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)

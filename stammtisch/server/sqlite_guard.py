"""One server process per SQLite file.

SQLite serves one writer process well, and the server keeps each live table in its own memory:
two processes on one file would each run the same tables and write the same event numbers. So
``stammtisch serve`` holds an exclusive ``flock`` on a file beside the database for as long as
it runs; the kernel lets it go when the process ends in any way (``kill -9`` included), so a
crash leaves no stale lock. Several processes belong on PostgreSQL.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class SqliteInUse(Exception):
    """Another process serves this SQLite file."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


def sqlite_path(url: str) -> Path | None:
    """The database file of a ``sqlite:///`` URL; None for another database or ``:memory:``."""
    if not url.startswith("sqlite:///") or url == "sqlite:///:memory:":
        return None
    return Path(url[len("sqlite:///"):].split("?", 1)[0])


def hold_sqlite(url: str) -> int | None:
    """Take the file's serving lock for this process (the descriptor, kept open until exit);
    None when ``url`` is not a SQLite file. Raises ``SqliteInUse`` when another process holds
    it."""
    path = sqlite_path(url)
    if path is None:
        return None
    lock = path.with_name(path.name + ".serve-lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise SqliteInUse(path) from None
    return fd

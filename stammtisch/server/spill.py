"""The spill file: where events go while the database stalls, so that tables keep playing.

An event (a deal's deck, an action) counts as committed once it is durable; normally that is
the database's commit. When the database does not commit a group of events within
``ServerLimits.spill_after`` seconds (another process holds a lock, a slow disk, a lost
PostgreSQL connection), the group is appended to this file instead and made durable with
``fsync``; the tables carry on as if it had been committed (it has: it survives a crash).
From then on every group goes to the file, until the database takes the file's rows again
(the drain); once all of them are in the database, the file is emptied. At start-up, rows
left in the file by a crash are moved into the database before the tables are loaded
(``TableManager.load_all``).

The file holds one JSON line per row: ``[kind, params]`` as ``Storage.write_batch`` takes
them. A group is acknowledged only after its ``fsync``, so a torn last line (a crash in the
middle of an append) belongs to a group nobody was told about, and is ignored.

A row may reach the database twice (a timed-out commit that went through after all, then
the drain): ``Storage.write_missing`` inserts only the rows the database lacks.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from .storage import Write

log = logging.getLogger("stammtisch.server")


class Spill:
    """The spill file of one server. ``append`` and ``clear`` run on one thread (they do
    blocking I/O); ``pending`` and ``appending`` belong to the event loop."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.pending: list[Write] = []  # the rows in the file
        self.drained = 0  # how many of ``pending`` (from the start) are in the database too
        self.appending = 0  # groups on their way into the file
        self.stalled = False  # new groups go straight to the file until a drain succeeds
        self.stalled_since = 0.0  # time.monotonic() when the database last stalled

    def append(self, writes: list[Write]) -> None:
        """Append a group and make it durable (blocking)."""
        data = "".join(json.dumps([kind, params], separators=(",", ":")) + "\n"
                       for kind, params in writes).encode()
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def read(self) -> list[Write]:
        """The complete rows in the file (a torn last line is left out)."""
        try:
            text = self.path.read_bytes().decode("utf-8", "replace")
        except FileNotFoundError:
            return []
        rows: list[Write] = []
        for line in text.split("\n")[:-1]:  # the part after the last newline is torn
            try:
                kind, params = json.loads(line)
            except (ValueError, TypeError):
                log.warning("spill file %s: an unreadable line was skipped", self.path)
                continue
            if kind == "deal":  # a file from before deal keys: its deals have none
                params.setdefault("deal_key", None)
            rows.append((kind, params))
        return rows

    def clear(self) -> None:
        """Empty the file (its rows are all in the database)."""
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

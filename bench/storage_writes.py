"""The web table's group commit of action rows on SQLite, in three layouts.

Keyed by (table_id, deal, idx), at 1,000 live tables each row of a group commit lands in a
different leaf of the primary-key index: every row dirties a page of its own, which the commit
writes to the write-ahead log (two system calls and 4 KiB each). This bench repeats the
server's commit pattern (``Storage.write_batch(now=True)``: one multi-row INSERT per group,
the row writer's pragmas, a checkpoint every ``ROWS_BETWEEN_CHECKPOINTS`` rows) on three
layouts of the action rows, each in a database file of its own (DDL from ``models.py``, and
``TABLE_KEY_DDL`` here):

- ``table_key``: ``st_actions``, keyed by (table_id, deal, idx): the layout before deal keys;
- ``deal_key``: ``st_moves``, keyed by (deal key, idx), the deal key global to the server:
  the live deals are the newest keys, so a group's rows share the rightmost few leaves;
- ``no_index``: a plain append-only table, the floor (a table's rows could not be found).

Prints one JSON line: per layout the CPU µs per row (user and system, best of ``--repeat``
rounds, the layouts alternating), with the rows per commit and tables.

    python bench/storage_writes.py [--tables 1000] [--rows 70] [--commits 1500] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import tempfile
import time
from typing import Any

from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.schema import CreateTable

from stammtisch.server.event_store import ROWS_BETWEEN_CHECKPOINTS
from stammtisch.server.models import MoveRow, TableRow
from stammtisch.server.row_writer import ROW_WRITER_PRAGMAS

LAYOUTS = ("table_key", "deal_key", "no_index")
TABLE_KEY_DDL = ("CREATE TABLE st_actions (table_id VARCHAR(32) NOT NULL, deal INTEGER NOT NULL, "
                 "idx INTEGER NOT NULL, seat INTEGER, action VARCHAR(200) NOT NULL, "
                 "created FLOAT NOT NULL, PRIMARY KEY (table_id, deal, idx), "
                 "FOREIGN KEY(table_id) REFERENCES st_tables (id))")
NO_INDEX_DDL = ("CREATE TABLE st_actions (table_id VARCHAR(32) NOT NULL, deal INTEGER NOT NULL, "
                "idx INTEGER NOT NULL, seat INTEGER, action VARCHAR(200) NOT NULL, "
                "created FLOAT NOT NULL)")


def ddl(model: Any) -> str:
    return str(CreateTable(model.__table__).compile(dialect=sqlite_dialect.dialect()))


def run(layout: str, tables: int, rows: int, commits: int, seed: int) -> dict[str, float]:
    """Warm the database with ``commits`` groups (the tables get a history), then measure as
    many more; the CPU µs per row of the process, user and system."""
    path = os.path.join(tempfile.mkdtemp(prefix="stammtisch-storage-"), "bench.sqlite")
    con = sqlite3.connect(path, isolation_level=None)
    for pragma in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON",
                   "PRAGMA busy_timeout=0", "PRAGMA wal_autocheckpoint=0",
                   "PRAGMA cache_size=-32768", *ROW_WRITER_PRAGMAS):
        con.execute(pragma)
    con.execute(ddl(TableRow))
    con.execute({"table_key": TABLE_KEY_DDL, "deal_key": ddl(MoveRow),
                 "no_index": NO_INDEX_DDL}[layout])
    rng = random.Random(seed)
    ids = [f"{rng.getrandbits(128):032x}" for _ in range(tables)]
    con.executemany("INSERT INTO st_tables (id, ruleset, options, first_dealer, started, "
                    "admin_digest, spectator_digest, created) VALUES (?, 'tippen/grupp-1975', "
                    "'{}', 0, 1, '', '', 0)", [(i,) for i in ids])
    deal_of = {t: [0, 0, k] for k, t in enumerate(ids)}  # deal, idx, the deal's global key
    next_key = [tables]
    columns = "(deal_key, idx, table_id, deal, seat, action, created)" if layout == "deal_key" \
        else "(table_id, deal, idx, seat, action, created)"
    width = 7 if layout == "deal_key" else 6
    sql = (f"INSERT INTO {'st_moves' if layout == 'deal_key' else 'st_actions'} {columns} VALUES "
           + ", ".join(["(" + ", ".join("?" * width) + ")"] * rows))
    written = [0]

    def group() -> None:
        params: list[Any] = []
        for _ in range(rows):
            t = ids[rng.randrange(tables)]
            d = deal_of[t]
            d[1] += 1
            if d[1] > 8:  # a Grupp deal: ~8 actions
                d[0], d[1], d[2] = d[0] + 1, 0, next_key[0]
                next_key[0] += 1
            if layout == "deal_key":
                params += [d[2], d[1], t, d[0], 1, "play:HA", time.time()]
            else:
                params += [t, d[0], d[1], 1, "play:HA", time.time()]
        con.execute("BEGIN")
        con.execute(sql, params)
        con.execute("COMMIT")
        written[0] += rows
        if written[0] >= ROWS_BETWEEN_CHECKPOINTS:
            con.execute("PRAGMA wal_checkpoint(PASSIVE)")
            written[0] = 0

    for _ in range(commits):
        group()
    before = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(commits):
        group()
    after = resource.getrusage(resource.RUSAGE_SELF)
    con.close()
    n = rows * commits
    return {"user_us_per_row": round((after.ru_utime - before.ru_utime) / n * 1e6, 2),
            "system_us_per_row": round((after.ru_stime - before.ru_stime) / n * 1e6, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--rows", type=int, default=70,
                        help="rows per group commit (~70 at 1,000 tables with the 20 ms window)")
    parser.add_argument("--commits", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    best: dict[str, dict[str, float]] = {}
    for r in range(args.repeat):
        for layout in LAYOUTS:
            got = run(layout, args.tables, args.rows, args.commits, seed=r)
            total = got["user_us_per_row"] + got["system_us_per_row"]
            old = best.get(layout)
            if old is None or total < old["user_us_per_row"] + old["system_us_per_row"]:
                best[layout] = got
    print(json.dumps({"tables": args.tables, "rows_per_commit": args.rows,
                      "commits_measured": args.commits, **best}))


if __name__ == "__main__":
    main()

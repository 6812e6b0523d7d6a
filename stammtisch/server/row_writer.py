"""The writer of the event rows (decks and actions) of the group commit: a DB-API connection
of its own and INSERTs compiled once (``Storage.write_batch`` is the server's hot path)."""

from __future__ import annotations

from itertools import groupby
from operator import itemgetter
from typing import Any

from sqlalchemy import Float, Insert, Integer, String, bindparam, insert, select
from sqlalchemy import cast as sql_cast
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import BindParameter

from .models import DealRow, MoveRow, core_table

#: ("move" | "deal" | "action", the row's columns). An "action" names its deal by (table,
#: number) instead of its key (``Storage.action_row``): it is stored as a move of that deal.
Write = tuple[str, dict[str, Any]]

#: A query run first in a group commit's transaction, and its parameters: it returns the ids
#: of the tables whose rows may be written (several processes: those whose lease this
#: process holds, peers.py); the other tables' rows are left out.
LeaseFence = tuple[str, tuple[Any, ...]]


def insert_action_as_move() -> Insert:
    """The INSERT of an "action" row (``Storage.action_row``): a move under the key its deal's
    row holds, looked up in the same statement (so the deal may be a row of the same group)."""
    table_id: BindParameter[str] = bindparam("table_id")
    deal: BindParameter[int] = bindparam("deal")
    # typed, for PostgreSQL: a parameter in a SELECT list has no column to take a type from
    key = select(DealRow.deal_key, sql_cast(bindparam("idx"), Integer),
                 sql_cast(table_id, String(32)), sql_cast(deal, Integer),
                 sql_cast(bindparam("seat"), Integer), sql_cast(bindparam("action"), String(200)),
                 sql_cast(bindparam("created"), Float)
                 ).where(DealRow.table_id == table_id, DealRow.number == deal)
    return insert(core_table(MoveRow)).from_select(
        ["deal_key", "idx", "table_id", "deal", "seat", "action", "created"], key)


#: The INSERT of each kind of event row, with its columns in the order of its parameters
#: (None: as the statement names them).
EVENT_INSERTS: dict[str, tuple[Insert, list[str] | None]] = {
    "move": (insert(core_table(MoveRow)),
             ["deal_key", "idx", "table_id", "deal", "seat", "action", "created"]),
    "action": (insert_action_as_move(), None),
    "deal": (insert(core_table(DealRow)), ["table_id", "number", "deck", "created", "deal_key"]),
}


#: Rows per multi-row INSERT of the writer (``Storage.write_batch``): 140 × 7 columns stays under
#: the 999 parameters that older SQLite builds allow in one statement.
ROWS_PER_INSERT = 140

#: The settings of the SQLite connections that write the event rows (``RowWriter``). A
#: multi-row INSERT inside a transaction keeps a statement journal (the pages it changes, to
#: undo the statement alone if it fails half-way), and past 64 KiB SQLite moves that journal
#: to a temporary file. A group commit's rows belong to many different tables and change many
#: pages, so that file would cost a system call more per row and about double the commit's
#: system time; kept in memory, the journal costs none (bench/storage_writes.py measures the
#: commit pattern with these pragmas).
ROW_WRITER_PRAGMAS = ("PRAGMA temp_store=MEMORY",)

#: The clause that makes the writer's INSERTs skip a row whose key is in already.
ON_CONFLICT_SKIP = " ON CONFLICT DO NOTHING"


class RowWriter:
    """A DB-API connection of its own for the event rows (``Storage.write_batch``), with their
    INSERTs compiled once by SQLAlchemy for the database's dialect: the same SQL, without
    SQLAlchemy's work per statement (the server's hot path). Not in the pool: its settings
    (``pragmas``) stay its own."""

    def __init__(self, engine: Engine, pragmas: tuple[str, ...] = ()):
        self.sql: dict[str, tuple[str, bool, list[str]]] = {}
        self.multi_sql: dict[tuple[str, int, bool], str] = {}
        for kind, (stmt, keys) in EVENT_INSERTS.items():
            compiled = stmt.compile(dialect=engine.dialect, column_keys=keys)
            self.sql[kind] = (compiled.string, bool(compiled.positional),
                              list(compiled.positiontup or keys or []))
        assert engine.dialect.dbapi is not None
        self.errors: type[Exception] = engine.dialect.dbapi.Error  # the driver's own errors
        self.conn = engine.raw_connection()
        self.conn.detach()  # closed for good when closed, never handed out with its pragmas
        self.cursor = self.conn.cursor()
        for pragma in pragmas:
            self.cursor.execute(pragma)

    def insert(self, writes: list[Write], skip_existing: bool = False,
               fence: LeaseFence | None = None) -> set[str]:
        """The rows in one transaction, committed on return; rolled back when it fails.
        With ``fence``, only the rows of the tables it returns; the others' tables are
        returned (none without)."""
        cur = self.cursor
        refused: set[str] = set()
        committed = False
        try:
            if fence is not None:
                cur.execute(*fence)
                held = {row[0] for row in cur.fetchall()}
                refused = {params["table_id"] for _, params in writes} - held
                if refused:
                    writes = [w for w in writes if w[1]["table_id"] in held]
            # one executemany per run of rows of one kind, not one execute per row: the driver
            # leaves and retakes the GIL around every statement, and each time the writer
            # thread waits for the busy event loop to hand it back (bench/server_load.py's
            # ``server_us_per_action_steady_split`` shows the CPU of the threads beside the loop)
            for kind, run in groupby(writes, key=itemgetter(0)):
                sql, positional, order = self.sql[kind]
                if not positional:
                    cur.executemany(sql + (ON_CONFLICT_SKIP if skip_existing else ""),
                                    [params for _, params in run])
                    continue
                if kind == "action":  # an INSERT … SELECT: one row per statement
                    cur.executemany(sql + (ON_CONFLICT_SKIP if skip_existing else ""),
                                    [[params[k] for k in order] for _, params in run])
                    continue
                # positional drivers (SQLite): many rows per INSERT … VALUES (…), (…). sqlite3
                # leaves the interpreter lock around every statement it steps, and a thread
                # that leaves it while the event loop is busy waits a switch interval (5 ms)
                # to get it back: with executemany that would be once per row, and under load
                # a group of a hundred rows could take long enough to push events to the spill
                # file (bench/server_load.py --tables 1000 shows the load where it matters)
                rows = [params for _, params in run]
                for i in range(0, len(rows), ROWS_PER_INSERT):
                    chunk = rows[i:i + ROWS_PER_INSERT]
                    cur.execute(self._multi_row_sql(kind, len(chunk), skip_existing),
                                [params[k] for params in chunk for k in order])
            self.conn.commit()
            committed = True
        finally:
            if not committed:
                self._roll_back()
        return refused

    def _roll_back(self) -> None:
        """After a failed transaction: undone, if the connection still answers (the caller
        closes this writer then anyway, and raises the first error)."""
        try:
            self.conn.rollback()
        except self.errors:
            pass

    def _multi_row_sql(self, kind: str, rows: int, skip_existing: bool = False) -> str:
        """The positional INSERT of ``kind`` with ``rows`` groups of values."""
        key = (kind, rows, skip_existing)
        sql = self.multi_sql.get(key)
        if sql is None:
            single = self.sql[kind][0]
            head, sep, values = single.rpartition(" VALUES ")
            assert sep, single  # an INSERT compiled by SQLAlchemy
            sql = head + sep + ", ".join([values.strip()] * rows)
            if skip_existing:
                sql += ON_CONFLICT_SKIP
            self.multi_sql[key] = sql
        return sql

    def close(self) -> None:
        try:
            self.conn.close()
        except self.errors:
            pass

"""Storage of tables, decks and actions: SQLAlchemy 2 over SQLite (WAL) or PostgreSQL.

The database is the authority for every table: a table is its rule set, its seats, and per
deal the deck and the actions in order. The in-memory ``stammtisch.table.Table`` is rebuilt
from these rows by replaying them through the engine (see ``tables.TableManager.load_all``).

Every event (a deal's deck, one action) is committed before anything is broadcast: the
server commits the events of many tables together (``write_batch``, a group commit). A deal
gets a key global to the server (``new_deal_key``), and its actions are rows of ``st_moves``
keyed by (deal key, idx): the live deals are the newest keys, so the rows of a group commit
share the newest leaves of that table's index. (Keyed by (table, deal, idx) as in
``st_actions``, where the deals dealt before deal keys keep their actions, every row of a
group lands in a leaf of its own, a page written per row: ``bench/storage_writes.py``.) Seat
tokens are stored only as SHA-256 digests: a copy of the database does not let anyone act for
a seat.

The tables are dialect-neutral (plain ``String``/``Integer``/``Text``/``Boolean`` columns,
JSON as text); SQLite-specific are the connection pragmas, the multi-row INSERTs and the event
loop's own connection (``write_batch(now=True)``).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, cast

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    func,
    insert,
    select,
    update,
)
from sqlalchemy import Table as SqlTable
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.pool import StaticPool

from .migrations import migrate


def default_data_dir() -> Path:
    return Path(os.environ.get("STAMMTISCH_DATA", "./data"))


def default_database_url(data_dir: Path | None = None) -> str:
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(data_dir / 'stammtisch.sqlite').resolve()}"


def spill_path_for(url: str, data_dir: Path | None = None) -> Path | None:
    """Where the server's spill file lives (``spill.py``): beside an SQLite file, in the data
    directory for another database; None for an in-memory database (nothing else can stall it)."""
    if url in ("sqlite://", "sqlite:///:memory:"):
        return None
    if url.startswith("sqlite:///"):
        return Path(url[len("sqlite:///"):] + ".spill")
    directory = Path(data_dir) if data_dir is not None else default_data_dir()
    directory.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]  # one file per database
    return directory / f"spill-{digest}.jsonl"


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` mean PostgreSQL through psycopg 3 (the
    ``postgres`` extra); SQLAlchemy alone would look for the older psycopg2."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Base(DeclarativeBase):
    pass


class TableRow(Base):
    __tablename__ = "st_tables"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    ruleset: Mapped[str] = mapped_column(String(64))
    options: Mapped[str] = mapped_column(Text)  # JSON object: the overrides as given
    first_dealer: Mapped[int | None] = mapped_column(Integer, nullable=True)
    started: Mapped[bool] = mapped_column(Boolean, default=False)
    admin_digest: Mapped[str] = mapped_column(String(64))
    spectator_digest: Mapped[str] = mapped_column(String(64))
    created: Mapped[float] = mapped_column(Float)


class SeatRow(Base):
    __tablename__ = "st_seats"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64))
    bot: Mapped[str | None] = mapped_column(String(32), nullable=True)
    token_digest: Mapped[str | None] = mapped_column(String(64), nullable=True)


class DealRow(Base):
    __tablename__ = "st_deals"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    deck: Mapped[str] = mapped_column(Text)  # JSON list of card strings, top first
    created: Mapped[float] = mapped_column(Float)
    # the deal's key (its actions are ``MoveRow``s); None: a deal dealt before deal keys, whose
    # actions are ``ActionRow``s. Added to older databases by ``migrations``
    deal_key: Mapped[int | None] = mapped_column(Integer, nullable=True)


class MoveRow(Base):
    """An action of a deal with a deal key. No foreign key: the deal's row vouches for the
    table, and the check cost a lookup per row of every group commit."""

    __tablename__ = "st_moves"

    deal_key: Mapped[int] = mapped_column(Integer, primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    deal: Mapped[int] = mapped_column(Integer)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    action: Mapped[str] = mapped_column(String(200))
    created: Mapped[float] = mapped_column(Float)


class ActionRow(Base):
    """An action of a deal dealt before deal keys (see ``MoveRow``)."""

    __tablename__ = "st_actions"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    deal: Mapped[int] = mapped_column(Integer, primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    action: Mapped[str] = mapped_column(String(200))
    created: Mapped[float] = mapped_column(Float)


class TableStateRow(Base):
    """What the server decided about a table besides its play (a separate table, so databases
    made before it existed gain it by ``create_all``): its deal limit, when somebody first
    joined, when it was closed, and when and why it was archived (then it is no longer loaded
    at start-up)."""

    __tablename__ = "st_table_state"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    max_deals: Mapped[int | None] = mapped_column(Integer, nullable=True)
    joined_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    closed_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    archived_at: Mapped[float | None] = mapped_column(Float, nullable=True)
    archived_reason: Mapped[str | None] = mapped_column(String(32), nullable=True)


class SocialRow(Base):
    """A table's social settings: its turn timer, whether it is listed in the lobby
    and which seats a stranger from the lobby may still take, and the table its rematch made.
    A separate table, so databases made before it existed gain it by ``create_all``."""

    __tablename__ = "st_table_social"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    turn_seconds: Mapped[int] = mapped_column(Integer, default=0)
    listed: Mapped[bool] = mapped_column(Boolean, default=False)
    open_seats: Mapped[str] = mapped_column(Text, default="[]")  # JSON list of seat numbers
    rematch_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    # the address that made the table (or asked for its rematch): its live tables are counted
    creator: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # JSON lists of seat numbers: the seats that were the lobby's, the human seats that ever
    # connected, and the seats whose old link has led on to the rematch
    lobby_seats: Mapped[str | None] = mapped_column(Text, nullable=True)
    humans: Mapped[str | None] = mapped_column(Text, nullable=True)
    rematch_claimed: Mapped[str | None] = mapped_column(Text, nullable=True)
    # "wait" (the next deal when every seated person asks for it) or seconds between deals
    pace: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # a practice table: any seat may ask the search bot for a hint
    hints: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


class ChatRow(Base):
    """One line of a table's chat (plain text, as the seat wrote it after cleaning)."""

    __tablename__ = "st_chat"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    created: Mapped[float] = mapped_column(Float)


def _table(model: type[Base]) -> SqlTable:
    """A model's Core table (typed: SQLAlchemy declares ``__table__`` as a FromClause)."""
    return cast(SqlTable, model.__table__)


Write = tuple[str, dict[str, Any]]  # ("move" | "action" | "deal", the row's columns)


@dataclass
class StoredSeat:
    seat: int
    name: str
    bot: str | None
    token_digest: str | None


@dataclass
class StoredSocial:
    """``SocialRow`` and the latest chat lines of a table."""

    turn_seconds: int = 0
    listed: bool = False
    open_seats: list[int] = field(default_factory=list)
    rematch_id: str | None = None
    chat: list[tuple[int, str, float]] = field(default_factory=list)  # (seat, text, time), oldest first
    chat_count: int = 0  # lines stored in all (the next line's number)
    creator: str = ""  # the address that made the table
    lobby_seats: list[int] = field(default_factory=list)  # open for strangers when it was made
    humans: list[int] = field(default_factory=list)  # human seats that ever connected
    rematch_claimed: list[int] = field(default_factory=list)  # old links that led to the rematch
    pace: str | None = None  # "wait", or seconds between deals as text; None: the server's default
    hints: bool = False  # any seat may ask the search bot for a hint


@dataclass
class StoredTable:
    id: str
    ruleset: str
    options: dict[str, Any]
    first_dealer: int | None
    started: bool
    admin_digest: str
    spectator_digest: str
    seats: list[StoredSeat]
    deals: list[tuple[list[str], list[tuple[int | None, str]]]] = field(default_factory=list)
    created: float = 0.0
    last_event_at: float = 0.0  # the latest deal or action (created, if none)
    max_deals: int | None = None
    joined_at: float | None = None
    closed_at: float | None = None
    archived_reason: str | None = None
    social: StoredSocial = field(default_factory=StoredSocial)
    last_deal_key: int | None = None  # the latest deal's key (None: dealt before deal keys)


def _sqlite_pragmas(busy_ms: int) -> Callable[[Any, Any], None]:
    def on_connect(dbapi_conn: Any, _record: Any) -> None:
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA foreign_keys=ON")
        # one attempt waits this long for another writer; the server retries with backoff
        cur.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
        cur.close()
    return on_connect


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

    def __init__(self, storage: Storage, pragmas: tuple[str, ...] = ()):
        self.sql: dict[str, tuple[str, bool, list[str]]] = {}
        self.multi_sql: dict[tuple[str, int, bool], str] = {}
        for kind, stmt, keys in (
            ("move", storage._insert_move,
             ["deal_key", "idx", "table_id", "deal", "seat", "action", "created"]),
            ("action", storage._insert_action, ["table_id", "deal", "idx", "seat", "action", "created"]),
            ("deal", storage._insert_deal, ["table_id", "number", "deck", "created", "deal_key"]),
        ):
            compiled = stmt.compile(dialect=storage.engine.dialect, column_keys=keys)
            self.sql[kind] = (compiled.string, bool(compiled.positional),
                              list(compiled.positiontup or keys))
        self.conn = storage.engine.raw_connection()
        self.conn.detach()  # closed for good when closed, never handed out with its pragmas
        self.cursor = self.conn.cursor()
        for pragma in pragmas:
            self.cursor.execute(pragma)

    def insert(self, writes: list[Write], skip_existing: bool = False) -> None:
        """The rows in one transaction, committed on return; rolled back when it fails."""
        cur = self.cursor
        try:
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
        except Exception:
            try:
                self.conn.rollback()
            except Exception:
                pass
            raise

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
        except Exception:
            pass


class Storage:
    """The repository: one SQLAlchemy engine, small explicit transactions."""

    def __init__(self, url: str, busy_ms: int = 5000):
        url = normalise_url(url)
        self.url = url
        kwargs: dict[str, Any] = {}
        self.is_sqlite = url.startswith("sqlite")
        # an in-memory database is one connection that every thread shares
        self.one_connection = url in ("sqlite://", "sqlite:///:memory:")
        if self.is_sqlite:
            kwargs["connect_args"] = {"check_same_thread": False}
            if self.one_connection:
                kwargs["poolclass"] = StaticPool
        self.engine: Engine = create_engine(url, **kwargs)
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas(busy_ms))
        migrate(self.engine, Base.metadata.create_all)
        # statements built once: SQLAlchemy then reuses their compiled form (the hot path)
        self._insert_move = insert(_table(MoveRow))
        self._insert_action = insert(_table(ActionRow))
        self._insert_deal = insert(_table(DealRow))
        self._next_deal_key: int | None = None  # read_deal_keys

    def read_deal_keys(self) -> None:
        """Start the deal keys above every key the database holds. Once, after the start-up
        has moved a spill file's rows in (``TableManager.load_all``); else at the first deal.
        One server per database, as for the tables it keeps in memory."""
        with self.engine.connect() as conn:
            top = max(conn.execute(select(func.max(DealRow.deal_key))).scalar() or 0,
                      conn.execute(select(func.max(MoveRow.deal_key))).scalar() or 0)
        self._next_deal_key = top + 1

    def new_deal_key(self) -> int:
        """A key for the next deal (``read_deal_keys``)."""
        if self._next_deal_key is None:
            self.read_deal_keys()
            assert self._next_deal_key is not None
        key = self._next_deal_key
        self._next_deal_key = key + 1
        return key

    def close(self) -> None:
        self._close_writers()
        self.engine.dispose()

    # --- writes (each one transaction, committed on return) ---------------------------

    def create_table(self, table_id: str, ruleset: str, options: dict[str, Any], seats: list[StoredSeat],
                     admin_digest: str, spectator_digest: str, max_deals: int | None = None,
                     social: StoredSocial | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(_table(TableRow)).values(
                id=table_id, ruleset=ruleset, options=json.dumps(options), first_dealer=None,
                started=False, admin_digest=admin_digest, spectator_digest=spectator_digest,
                created=time.time(),
            ))
            conn.execute(insert(_table(TableStateRow)).values(table_id=table_id,
                                                                max_deals=max_deals))
            conn.execute(insert(_table(SeatRow)), [
                dict(table_id=table_id, seat=s.seat, name=s.name, bot=s.bot,
                     token_digest=s.token_digest) for s in seats
            ])
            if social is not None:
                conn.execute(insert(_table(SocialRow)).values(
                    table_id=table_id, turn_seconds=social.turn_seconds, listed=social.listed,
                    open_seats=json.dumps(social.open_seats), rematch_id=social.rematch_id,
                    creator=social.creator, lobby_seats=json.dumps(social.lobby_seats),
                    humans=json.dumps(social.humans),
                    rematch_claimed=json.dumps(social.rematch_claimed), pace=social.pace,
                    hints=social.hints))

    def start_deal(self, table_id: str, number: int, deck: list[str], first_dealer: int,
                   deal_key: int | None = None) -> None:
        """Write a table's first deal and mark the table started (with its first dealer), in
        one transaction. (Later decks are rows of the group commit: ``deal_row``.)"""
        params = self.deal_row(table_id, number, deck, deal_key)[1]
        try:
            with self.engine.begin() as conn:
                conn.execute(update(_table(TableRow)).where(TableRow.id == table_id)
                             .values(started=True, first_dealer=first_dealer))
                conn.execute(self._insert_deal, params)
        except Exception:
            if not self._already_written("deal", params):
                raise

    def _set_state(self, table_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            done = conn.execute(update(_table(TableStateRow))
                                .where(TableStateRow.table_id == table_id).values(**values))
            if done.rowcount == 0:  # a table made before st_table_state existed
                conn.execute(insert(_table(TableStateRow)).values(table_id=table_id, **values))

    def mark_joined(self, table_id: str) -> None:
        self._set_state(table_id, joined_at=time.time())

    def close_table(self, table_id: str) -> None:
        self._set_state(table_id, closed_at=time.time())

    def archive(self, table_id: str, reason: str) -> None:
        """The table is kept (its record stays available) but no longer loaded at start-up."""
        self._set_state(table_id, archived_at=time.time(), archived_reason=reason)

    def set_seat_digest(self, table_id: str, seat: int, digest: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(_table(SeatRow)).where(SeatRow.table_id == table_id,
                                                         SeatRow.seat == seat)
                         .values(token_digest=digest))

    # --- social: lobby seats, rematch, chat --------------------------------------------

    def _set_social(self, conn: Any, table_id: str, **values: Any) -> None:
        done = conn.execute(update(_table(SocialRow)).where(SocialRow.table_id == table_id)
                            .values(**values))
        if done.rowcount == 0:  # a table made before st_table_social existed
            conn.execute(insert(_table(SocialRow)).values(table_id=table_id, **values))

    def take_seat(self, table_id: str, seat: int, digest: str, open_seats: list[int],
                  name: str | None = None) -> None:
        """A stranger from the lobby takes an open seat: its new token (and his name, before
        the table started) and the seats still open, in one transaction."""
        values: dict[str, Any] = {"token_digest": digest}
        if name is not None:
            values["name"] = name
        with self.engine.begin() as conn:
            conn.execute(update(_table(SeatRow)).where(SeatRow.table_id == table_id,
                                                         SeatRow.seat == seat)
                         .values(**values))
            self._set_social(conn, table_id, open_seats=json.dumps(open_seats))

    def mark_rematch(self, table_id: str, rematch_id: str) -> None:
        """The table's rematch was made: the table is closed and points to the new one."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, rematch_id=rematch_id)
            done = conn.execute(update(_table(TableStateRow))
                                .where(TableStateRow.table_id == table_id)
                                .values(closed_at=time.time()))
            if done.rowcount == 0:
                conn.execute(insert(_table(TableStateRow)).values(table_id=table_id,
                                                                    closed_at=time.time()))

    def set_humans(self, table_id: str, humans: list[int]) -> None:
        """The human seats that have connected so far."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, humans=json.dumps(humans))

    def set_rematch_claimed(self, table_id: str, seats: list[int]) -> None:
        """The seats whose link of this table has led on to its rematch (once each)."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, rematch_claimed=json.dumps(seats))

    def add_chat(self, table_id: str, idx: int, seat: int, text: str, created: float) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(_table(ChatRow)).values(table_id=table_id, idx=idx, seat=seat,
                                                        text=text, created=created))

    @staticmethod
    def _load_social(conn: Any, table_id: str, keep: int = 50) -> StoredSocial:
        row = conn.execute(select(_table(SocialRow)).where(SocialRow.table_id == table_id)).first()
        count = conn.execute(select(func.count()).select_from(_table(ChatRow))
                             .where(ChatRow.table_id == table_id)).scalar_one()
        lines = conn.execute(select(ChatRow.seat, ChatRow.text, ChatRow.created)
                             .where(ChatRow.table_id == table_id)
                             .order_by(ChatRow.idx.desc()).limit(keep)).all()
        chat = [(r.seat, r.text, r.created) for r in reversed(lines)]
        if row is None:
            return StoredSocial(chat=chat, chat_count=count)
        return StoredSocial(turn_seconds=row.turn_seconds or 0, listed=bool(row.listed),
                            open_seats=list(json.loads(row.open_seats or "[]")),
                            rematch_id=row.rematch_id, chat=chat, chat_count=count,
                            creator=row.creator or "",
                            lobby_seats=list(json.loads(row.lobby_seats or "[]")),
                            humans=list(json.loads(row.humans or "[]")),
                            rematch_claimed=list(json.loads(row.rematch_claimed or "[]")),
                            pace=row.pace, hints=bool(row.hints))

    def set_spectator_digest(self, table_id: str, digest: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(_table(TableRow)).where(TableRow.id == table_id)
                         .values(spectator_digest=digest))

    _writer: RowWriter | None = None  # the writer thread's connection for event rows
    _writer_now: RowWriter | None = None  # the event loop's (``write_batch(now=True)``)

    @property
    def writes_now(self) -> bool:
        """Whether ``write_batch(now=True)`` may be used: an SQLite file. (Another database is
        a network away; an in-memory one is a single connection that every thread shares.)"""
        return self.is_sqlite and not self.one_connection

    def write_batch(self, writes: list[Write], now: bool = False) -> None:
        """Several INSERTs (``action_row``/``deal_row``: events of different tables, or one
        table's events in order) in ONE transaction, committed on return: the group commit of
        the server. All or nothing.

        ``now``: on the calling thread's own connection (the event loop's), which never waits:
        it fails at once when another connection holds the write lock (``busy_timeout`` 0),
        and never checkpoints the write-ahead log (a checkpoint syncs the file to disk: the
        caller has ``checkpoint`` run elsewhere), so the caller is never held up by the
        database; after a failure nothing of the group is in, and the caller hands the group
        to the writer thread (``write_batch()``), which waits and retries. Without ``now``,
        on the writer thread's connection."""
        if now:
            assert self.writes_now, "write_batch(now=True) needs an SQLite file"
            # a page cache of 32 MiB: the pages a commit changes are those of the latest rows
            # of each table (at 1,000 tables ~1,000 leaves of the actions' index); with
            # SQLite's default 2 MiB most of them would be read back from the file, a system
            # call each (bench/server_load.py --tables 1000 is the load this is sized for)
            self._insert_on("_writer_now", ("PRAGMA busy_timeout=0",
                                            "PRAGMA wal_autocheckpoint=0",
                                            "PRAGMA cache_size=-32768",
                                            *ROW_WRITER_PRAGMAS), writes)
            return
        try:
            self._insert_batch(writes)
        except Exception:
            if all(self._already_written(kind, params) for kind, params in writes):
                return  # the commit did happen (its answer was lost)
            raise

    def checkpoint(self) -> None:
        """Copy the write-ahead log's pages into the database file (SQLite; PASSIVE: it never
        waits for another connection). The event loop's connection never does it itself."""
        if not self.is_sqlite:
            return
        with self.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def _insert_batch(self, writes: list[Write], skip_existing: bool = False) -> None:
        """``write_batch``'s transaction on the writer thread, without its check for a commit
        whose answer was lost; ``skip_existing``: a row whose key is in already is left out
        (``ON CONFLICT DO NOTHING``, on SQLite and PostgreSQL alike)."""
        self._insert_on("_writer", ROW_WRITER_PRAGMAS if self.is_sqlite else (), writes,
                        skip_existing)

    def _insert_on(self, name: str, pragmas: tuple[str, ...], writes: list[Write],
                   skip_existing: bool = False) -> None:
        """``RowWriter.insert`` on the writer kept as ``name`` (opened with ``pragmas`` when
        there is none); a failure closes that writer alone: the other may be in use on its
        own thread right now."""
        writer = getattr(self, name)
        if writer is None:
            writer = RowWriter(self, pragmas)
            setattr(self, name, writer)
        try:
            writer.insert(writes, skip_existing)
        except Exception:
            writer.close()
            setattr(self, name, None)
            raise

    @staticmethod
    def move_row(deal_key: int, table_id: str, deal: int, idx: int, seat: int | None,
                 action: str) -> Write:
        """An action of a deal with a key (``deal_row(…, deal_key)``)."""
        return ("move", {"deal_key": deal_key, "idx": idx, "table_id": table_id, "deal": deal,
                         "seat": seat, "action": action, "created": time.time()})

    @staticmethod
    def action_row(table_id: str, deal: int, idx: int, seat: int | None, action: str) -> Write:
        """An action of a deal without a key (dealt before deal keys)."""
        return ("action", {"table_id": table_id, "deal": deal, "idx": idx, "seat": seat,
                           "action": action, "created": time.time()})

    @staticmethod
    def deal_row(table_id: str, number: int, deck: list[str], deal_key: int | None = None) -> Write:
        return ("deal", {"table_id": table_id, "number": number, "deck": json.dumps(deck),
                         "created": time.time(), "deal_key": deal_key})

    def write_missing(self, writes: list[Write]) -> None:
        """The rows of ``writes`` the database does not hold yet, in one transaction (the
        spill file's drain: some of its rows may have been committed already, by a commit
        that went through after it was given up on). Usually none is: then it is one
        ``write_batch``'s transaction."""
        try:
            # not write_batch itself: its check for a lost answer queries row by row (up to a
            # whole chunk of them), which is what the conflict-skipping insert below does in
            # one statement; those queries would hold the interpreter for long after each lock
            self._insert_batch(writes)
            return
        except Exception:
            pass  # some row is in already, or the database fails still (then this fails too)
        # the same INSERTs with the conflict clause: a row with the key of one already in is
        # the same row (the event was committed once, by the attempt that was given up on), so
        # skipping it is right. (Not SQLAlchemy's executemany: on SQLite it steps row by row,
        # and under load the writer thread would wait for the interpreter lock at every row,
        # for seconds after each lock (bench/soak.py locks the database), while new group
        # commits queue behind.)
        self._insert_batch(writes, skip_existing=True)

    def _already_written(self, kind: str, params: dict[str, Any]) -> bool:
        """Whether the row of an INSERT is in the database with the same content (a retried
        commit whose first attempt succeeded but reported an error must not be refused)."""
        try:
            with self.engine.connect() as conn:
                if kind == "move":
                    move = conn.execute(select(MoveRow.seat, MoveRow.action).where(
                        MoveRow.deal_key == params["deal_key"],
                        MoveRow.idx == params["idx"])).first()
                    return move is not None and (move.seat, move.action) == (params["seat"],
                                                                             params["action"])
                if kind == "action":
                    row = conn.execute(select(ActionRow.seat, ActionRow.action).where(
                        ActionRow.table_id == params["table_id"], ActionRow.deal == params["deal"],
                        ActionRow.idx == params["idx"])).first()
                    return row is not None and (row.seat, row.action) == (params["seat"],
                                                                          params["action"])
                deal = conn.execute(select(DealRow.deck).where(
                    DealRow.table_id == params["table_id"],
                    DealRow.number == params["number"])).first()
                return deal is not None and deal.deck == params["deck"]
        except Exception:
            return False

    def _close_writers(self) -> None:
        for name in ("_writer", "_writer_now"):
            writer = getattr(self, name)
            setattr(self, name, None)
            if writer is not None:
                writer.close()

    # --- reads ---------------------------------------------------------------------------

    def table_ids(self) -> list[str]:
        """The tables to load at start-up: every table not archived, oldest first."""
        with self.engine.connect() as conn:
            archived = select(TableStateRow.table_id).where(TableStateRow.archived_at.is_not(None))
            return [r[0] for r in conn.execute(select(TableRow.id)
                                               .where(TableRow.id.not_in(archived))
                                               .order_by(TableRow.created))]

    def load_table(self, table_id: str) -> StoredTable | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(_table(TableRow)).where(TableRow.id == table_id)).first()
            if row is None:
                return None
            seats = [
                StoredSeat(r.seat, r.name, r.bot, r.token_digest)
                for r in conn.execute(select(_table(SeatRow))
                                      .where(SeatRow.table_id == table_id).order_by(SeatRow.seat))
            ]
            deal_rows = conn.execute(select(_table(DealRow)).where(DealRow.table_id == table_id)
                                     .order_by(DealRow.number)).all()
            decks = {r.number: json.loads(r.deck) for r in deal_rows}
            last_event_at = max([row.created] + [r.created for r in deal_rows])
            actions: dict[int, list[tuple[int | None, str]]] = {n: [] for n in decks}
            # a deal's actions are moves (it has a key) or, dealt before deal keys, actions
            for r in conn.execute(select(_table(ActionRow)).where(ActionRow.table_id == table_id)
                                  .order_by(ActionRow.deal, ActionRow.idx)):
                actions.setdefault(r.deal, []).append((r.seat, r.action))
                last_event_at = max(last_event_at, r.created)
            for r in conn.execute(select(DealRow.number, MoveRow.seat, MoveRow.action,
                                         MoveRow.created)
                                  .join(MoveRow, MoveRow.deal_key == DealRow.deal_key)
                                  .where(DealRow.table_id == table_id)
                                  .order_by(DealRow.number, MoveRow.idx)):
                actions[r.number].append((r.seat, r.action))
                last_event_at = max(last_event_at, r.created)
            state = conn.execute(select(_table(TableStateRow))
                                 .where(TableStateRow.table_id == table_id)).first()
            social = self._load_social(conn, table_id)
        numbers = sorted(decks)
        if numbers != list(range(len(numbers))):
            raise ValueError(f"table {table_id}: deals are not numbered 0…n-1 ({numbers})")
        return StoredTable(
            id=row.id, ruleset=row.ruleset, options=json.loads(row.options),
            first_dealer=row.first_dealer, started=bool(row.started),
            admin_digest=row.admin_digest, spectator_digest=row.spectator_digest,
            seats=seats, deals=[(decks[n], actions[n]) for n in numbers],
            created=row.created, last_event_at=last_event_at,
            max_deals=state.max_deals if state else None,
            joined_at=state.joined_at if state else None,
            closed_at=state.closed_at if state else None,
            archived_reason=state.archived_reason if state else None,
            social=social,
            last_deal_key=deal_rows[-1].deal_key if deal_rows else None,
        )

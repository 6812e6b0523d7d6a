"""Storage of tables, decks and actions: SQLAlchemy 2 over SQLite (WAL) or PostgreSQL.

The database is the authority for every table: a table is its rule set, its seats, and per
deal the deck and the actions in order. The in-memory ``stammtisch.table.Table`` is rebuilt
from these rows by replaying them through the engine (see ``manager.TableManager.load_all``).

Every event (a deal's deck, one action) is committed before anything is broadcast: the
server commits the events of many tables together (``write_batch``, a group commit). A deal
gets a key global to the server (``new_deal_key``), and its actions are rows of ``st_moves``
keyed by (deal key, idx): the live deals are the newest keys, so the rows of a group commit
share the newest leaves of that table's index. (Keyed by (table, deal, idx), every row of a
group would land in a leaf of its own, a page written per row: ``bench/storage_writes.py``.)
Seat tokens are stored only as SHA-256 digests: a copy of the database does not let anyone act
for a seat.

The tables (``models.py``) are dialect-neutral (plain ``String``/``Integer``/``Text``/``Boolean``
columns, JSON as text); SQLite-specific are the connection pragmas, the multi-row INSERTs of the
event rows' writer (``row_writer.py``) and the event loop's own connection
(``write_batch(now=True)``).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, func, insert, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool

from .migrations import migrate
from .models import (
    Base,
    ChatRow,
    DealRow,
    MoveRow,
    SeatRow,
    SocialRow,
    TableRow,
    TableStateRow,
    core_table,
)
from .refusals import STORAGE_ERRORS, LeaseLost
from .row_writer import EVENT_INSERTS, ROW_WRITER_PRAGMAS, RowWriter
from .row_writer import LeaseFence as LeaseFence
from .row_writer import Write as Write

#: Deal keys a server process takes from PostgreSQL's sequence at once (``new_deal_key``).
DEAL_KEY_BLOCK = 1000
#: The advisory lock under which the sequence of deal keys is made (any fixed number).
DEAL_KEYS_LOCK = 0x57A4_0001


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


#: PostgreSQL ends a transaction left open this long between two of its statements
#: (milliseconds), and with it the connection. The server's transactions run statement after
#: statement, so only a stalled process (stopped, swapped out) leaves one open; it would keep
#: the lease rows its group commit locked (peers.py) and with them its tables from moving to
#: another process for as long as it stalls. Shorter than a lease, so that a stalled holder's
#: locks are gone by the time its lease expires, or soon after.
STALLED_TRANSACTION_MS = 2000


def normalise_url(url: str) -> str:
    """``postgresql://`` and ``postgres://`` mean PostgreSQL through psycopg 3 (the
    ``postgres`` extra); SQLAlchemy alone would look for the older psycopg2."""
    for prefix in ("postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()




@dataclass
class StoredSeat:
    seat: int
    name: str
    bot: str | None
    token_digest: str | None


@dataclass
class StoredTokens:
    """The digests of a table's tokens (``Storage.table_tokens``): who a token is, without
    reading the table."""

    admin_digest: str
    spectator_digest: str
    seat_digests: list[str | None]  # by seat (None: a bot's, or an open seat's)


@dataclass
class StoredSocial:
    """``SocialRow`` and the latest chat lines of a table."""

    turn_seconds: int = 0
    listed: bool = False
    open_seats: list[int] = field(default_factory=list)
    rematch_id: str | None = None
    # (seat, text, time, a spectator's name), oldest first; a spectator's seat is SPECTATOR_SEAT
    chat: list[tuple[int, str, float, str | None]] = field(default_factory=list)
    chat_count: int = 0  # lines stored in all (the next line's number)
    creator: str = ""  # the address that made the table
    lobby_seats: list[int] = field(default_factory=list)  # open for strangers when it was made
    humans: list[int] = field(default_factory=list)  # human seats that ever connected
    rematch_claimed: list[int] = field(default_factory=list)  # old links that led to the rematch
    pace: str | None = None  # "wait", or seconds between deals as text; None: the server's default
    hints: bool = False  # any seat may ask the search bot for a hint
    # a rematch's evening: the tables before it, oldest first ({"table", "deals", "balances"})
    evening: list[dict[str, Any]] = field(default_factory=list)
    spectator_chat: bool = True  # spectators may chat (the players may switch it off)


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
    last_deal_key: int | None = None  # the latest deal's key (None: no deal yet)


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
        elif url.startswith("postgresql"):
            kwargs["connect_args"] = {
                "options": f"-c idle_in_transaction_session_timeout={STALLED_TRANSACTION_MS}"}
        self.engine: Engine = create_engine(url, **kwargs)
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas(busy_ms))
        migrate(self.engine, Base.metadata.create_all)
        self._next_deal_key: int | None = None  # read_deal_keys
        self._deal_keys_end: int | None = None  # PostgreSQL: the end of this process's block
        # the event loop takes keys for its deals; the spill drain's thread for a deal row of
        # an old spill file (``write_missing``)
        self._deal_key_lock = threading.Lock()

    def read_deal_keys(self) -> None:
        """Start the deal keys above every key the database holds. Once, after the start-up
        has moved a spill file's rows in (``TableManager.load_all``); else at the first deal.
        On SQLite one server holds the database (``sqlite_guard``): it counts on from the
        highest key. On PostgreSQL several server processes may share the database: keys come
        in blocks of ``DEAL_KEY_BLOCK`` from one sequence, each block a process's own."""
        with self.engine.connect() as conn:
            top = max(conn.execute(select(func.max(DealRow.deal_key))).scalar() or 0,
                      conn.execute(select(func.max(MoveRow.deal_key))).scalar() or 0)
        if self.is_sqlite:
            self._next_deal_key, self._deal_keys_end = top + 1, None
            return
        with self.engine.begin() as conn:
            # several processes may start at once: one of them makes the sequence, above the
            # keys of the database as it was before there were several
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": DEAL_KEYS_LOCK})
            conn.execute(text(f"CREATE SEQUENCE IF NOT EXISTS st_deal_key_blocks "
                              f"INCREMENT BY {DEAL_KEY_BLOCK} START WITH {int(top) + 1}"))
        self._next_deal_key = self._deal_keys_end = 0  # the first key takes a block

    def _deal_key_block(self) -> None:
        """The next block of deal keys from the sequence (PostgreSQL). On the event loop, at
        one deal in ``DEAL_KEY_BLOCK``: a round trip that rare costs less than the machinery
        to fetch it ahead."""
        with self.engine.begin() as conn:
            first = int(conn.execute(text("SELECT nextval('st_deal_key_blocks')")).scalar_one())
        self._next_deal_key, self._deal_keys_end = first, first + DEAL_KEY_BLOCK

    def new_deal_key(self) -> int:
        """A key for the next deal (``read_deal_keys``)."""
        with self._deal_key_lock:
            if self._next_deal_key is None:
                self.read_deal_keys()
                assert self._next_deal_key is not None
            if self._deal_keys_end is not None and self._next_deal_key >= self._deal_keys_end:
                self._deal_key_block()
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
            conn.execute(insert(core_table(TableRow)).values(
                id=table_id, ruleset=ruleset, options=json.dumps(options), first_dealer=None,
                started=False, admin_digest=admin_digest, spectator_digest=spectator_digest,
                created=time.time(),
            ))
            conn.execute(insert(core_table(TableStateRow)).values(table_id=table_id,
                                                                max_deals=max_deals))
            conn.execute(insert(core_table(SeatRow)), [
                dict(table_id=table_id, seat=s.seat, name=s.name, bot=s.bot,
                     token_digest=s.token_digest) for s in seats
            ])
            if social is not None:
                conn.execute(insert(core_table(SocialRow)).values(
                    table_id=table_id, turn_seconds=social.turn_seconds, listed=social.listed,
                    open_seats=json.dumps(social.open_seats), rematch_id=social.rematch_id,
                    creator=social.creator, lobby_seats=json.dumps(social.lobby_seats),
                    humans=json.dumps(social.humans),
                    rematch_claimed=json.dumps(social.rematch_claimed), pace=social.pace,
                    hints=social.hints, evening=json.dumps(social.evening),
                    spectator_chat=social.spectator_chat))
                if social.chat:  # a rematch goes on with the chat of the table before it
                    conn.execute(insert(core_table(ChatRow)), [
                        dict(table_id=table_id, idx=i, seat=seat, text=text, created=at, name=name)
                        for i, (seat, text, at, name) in enumerate(social.chat)])

    def start_deal(self, table_id: str, number: int, deck: list[str], first_dealer: int,
                   deal_key: int | None = None, fence: LeaseFence | None = None) -> None:
        """Write a table's first deal and mark the table started (with its first dealer), in
        one transaction. (Later decks are rows of the group commit: ``deal_row``.) With
        ``fence`` (several processes): only if it lets the table write, else ``LeaseLost``."""
        params = self.deal_row(table_id, number, deck,
                               self.new_deal_key() if deal_key is None else deal_key)[1]
        try:
            with self.engine.begin() as conn:
                if fence is not None and not conn.exec_driver_sql(*fence).first():
                    raise LeaseLost(f"table {table_id}: this process no longer holds its lease")
                conn.execute(update(core_table(TableRow)).where(TableRow.id == table_id)
                             .values(started=True, first_dealer=first_dealer))
                conn.execute(EVENT_INSERTS["deal"][0], params)
        except STORAGE_ERRORS:
            if not self._already_written("deal", params):
                raise

    def _set_state(self, table_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            done = conn.execute(update(core_table(TableStateRow))
                                .where(TableStateRow.table_id == table_id).values(**values))
            if done.rowcount == 0:  # a table made before st_table_state existed
                conn.execute(insert(core_table(TableStateRow)).values(table_id=table_id, **values))

    def mark_joined(self, table_id: str) -> None:
        self._set_state(table_id, joined_at=time.time())

    def close_table(self, table_id: str) -> None:
        self._set_state(table_id, closed_at=time.time())

    def archive(self, table_id: str, reason: str) -> None:
        """The table is kept (its record stays available) but no longer loaded at start-up."""
        self._set_state(table_id, archived_at=time.time(), archived_reason=reason)

    def set_seat_digest(self, table_id: str, seat: int, digest: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(core_table(SeatRow)).where(SeatRow.table_id == table_id,
                                                         SeatRow.seat == seat)
                         .values(token_digest=digest))

    # --- social: lobby seats, rematch, chat --------------------------------------------

    def _set_social(self, conn: Any, table_id: str, **values: Any) -> None:
        done = conn.execute(update(core_table(SocialRow)).where(SocialRow.table_id == table_id)
                            .values(**values))
        if done.rowcount == 0:  # a table made before st_table_social existed
            conn.execute(insert(core_table(SocialRow)).values(table_id=table_id, **values))

    def take_seat(self, table_id: str, seat: int, digest: str, open_seats: list[int],
                  name: str | None = None) -> None:
        """A stranger from the lobby takes an open seat: its new token (and his name, before
        the table started) and the seats still open, in one transaction."""
        values: dict[str, Any] = {"token_digest": digest}
        if name is not None:
            values["name"] = name
        with self.engine.begin() as conn:
            conn.execute(update(core_table(SeatRow)).where(SeatRow.table_id == table_id,
                                                         SeatRow.seat == seat)
                         .values(**values))
            self._set_social(conn, table_id, open_seats=json.dumps(open_seats))

    def mark_rematch(self, table_id: str, rematch_id: str) -> None:
        """The table's rematch was made: the table is closed and points to the new one."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, rematch_id=rematch_id)
            done = conn.execute(update(core_table(TableStateRow))
                                .where(TableStateRow.table_id == table_id)
                                .values(closed_at=time.time()))
            if done.rowcount == 0:
                conn.execute(insert(core_table(TableStateRow)).values(table_id=table_id,
                                                                    closed_at=time.time()))

    def set_humans(self, table_id: str, humans: list[int]) -> None:
        """The human seats that have connected so far."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, humans=json.dumps(humans))

    def set_rematch_claimed(self, table_id: str, seats: list[int]) -> None:
        """The seats whose link of this table has led on to its rematch (once each)."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, rematch_claimed=json.dumps(seats))

    def add_chat(self, table_id: str, idx: int, seat: int, text: str, created: float,
                 name: str | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(core_table(ChatRow)).values(table_id=table_id, idx=idx, seat=seat,
                                                        text=text, created=created, name=name))

    def set_spectator_chat(self, table_id: str, on: bool) -> None:
        """Whether the table's spectators may chat."""
        with self.engine.begin() as conn:
            self._set_social(conn, table_id, spectator_chat=on)

    @staticmethod
    def _load_social(conn: Any, table_id: str, keep: int = 50) -> StoredSocial:
        row = conn.execute(select(core_table(SocialRow)).where(SocialRow.table_id == table_id)).first()
        count = conn.execute(select(func.count()).select_from(core_table(ChatRow))
                             .where(ChatRow.table_id == table_id)).scalar_one()
        lines = conn.execute(select(ChatRow.seat, ChatRow.text, ChatRow.created, ChatRow.name)
                             .where(ChatRow.table_id == table_id)
                             .order_by(ChatRow.idx.desc()).limit(keep)).all()
        chat = [(r.seat, r.text, r.created, r.name) for r in reversed(lines)]
        if row is None:
            return StoredSocial(chat=chat, chat_count=count)
        return StoredSocial(turn_seconds=row.turn_seconds or 0, listed=bool(row.listed),
                            open_seats=list(json.loads(row.open_seats or "[]")),
                            rematch_id=row.rematch_id, chat=chat, chat_count=count,
                            creator=row.creator or "",
                            lobby_seats=list(json.loads(row.lobby_seats or "[]")),
                            humans=list(json.loads(row.humans or "[]")),
                            rematch_claimed=list(json.loads(row.rematch_claimed or "[]")),
                            pace=row.pace, hints=bool(row.hints),
                            evening=list(json.loads(row.evening or "[]")),
                            spectator_chat=row.spectator_chat is not False)

    def set_spectator_digest(self, table_id: str, digest: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(core_table(TableRow)).where(TableRow.id == table_id)
                         .values(spectator_digest=digest))

    _writer: RowWriter | None = None  # the writer thread's connection for event rows
    _writer_now: RowWriter | None = None  # the event loop's (``write_batch(now=True)``)

    @property
    def writes_now(self) -> bool:
        """Whether ``write_batch(now=True)`` may be used: an SQLite file. (Another database is
        a network away; an in-memory one is a single connection that every thread shares.)"""
        return self.is_sqlite and not self.one_connection

    def write_batch(self, writes: list[Write], now: bool = False,
                    fence: LeaseFence | None = None) -> set[str]:
        """Several INSERTs (``move_row``/``deal_row``: events of different tables, or one
        table's events in order) in ONE transaction, committed on return: the group commit of
        the server. All or nothing; with ``fence`` (several processes), all of the tables it
        lets write: the others' rows are left out, and those tables returned.

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
            return self._insert_on("_writer_now", ("PRAGMA busy_timeout=0",
                                                   "PRAGMA wal_autocheckpoint=0",
                                                   "PRAGMA cache_size=-32768",
                                                   *ROW_WRITER_PRAGMAS), writes)
        try:
            return self._insert_batch(writes, fence=fence)
        except STORAGE_ERRORS:
            if all(self._already_written(kind, params) for kind, params in writes):
                return set()  # the commit did happen (its answer was lost)
            raise

    def checkpoint(self) -> None:
        """Copy the write-ahead log's pages into the database file (SQLite; PASSIVE: it never
        waits for another connection). The event loop's connection never does it itself."""
        if not self.is_sqlite:
            return
        with self.engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")

    def _insert_batch(self, writes: list[Write], skip_existing: bool = False,
                      fence: LeaseFence | None = None) -> set[str]:
        """``write_batch``'s transaction on the writer thread, without its check for a commit
        whose answer was lost; ``skip_existing``: a row whose key is in already is left out
        (``ON CONFLICT DO NOTHING``, on SQLite and PostgreSQL alike)."""
        return self._insert_on("_writer", ROW_WRITER_PRAGMAS if self.is_sqlite else (), writes,
                               skip_existing, fence)

    def _insert_on(self, name: str, pragmas: tuple[str, ...], writes: list[Write],
                   skip_existing: bool = False, fence: LeaseFence | None = None) -> set[str]:
        """``RowWriter.insert`` on the writer kept as ``name`` (opened with ``pragmas`` when
        there is none); a failure closes that writer alone: the other may be in use on its
        own thread right now."""
        writer: RowWriter | None = getattr(self, name)
        if writer is None:
            writer = RowWriter(self.engine, pragmas)
            setattr(self, name, writer)
        try:
            return writer.insert(writes, skip_existing, fence)
        except BaseException:  # any failure: this connection's state is unknown, never reused
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
        """An action of the deal ``deal`` of a table, stored as a move under that deal's key
        (which its row, in the database or earlier in the same group, holds): for a writer
        that does not know the key, such as a spill file written before deal keys."""
        return ("action", {"table_id": table_id, "deal": deal, "idx": idx, "seat": seat,
                           "action": action, "created": time.time()})

    @staticmethod
    def deal_row(table_id: str, number: int, deck: list[str], deal_key: int) -> Write:
        return ("deal", {"table_id": table_id, "number": number, "deck": json.dumps(deck),
                         "created": time.time(), "deal_key": deal_key})

    def write_missing(self, writes: list[Write]) -> None:
        """The rows of ``writes`` the database does not hold yet, in one transaction (the
        spill file's drain: some of its rows may have been committed already, by a commit
        that went through after it was given up on). Usually none is: then it is one
        ``write_batch``'s transaction. A deal row without a key (a spill file written before
        deal keys) gets a new one; if its deal is in already, the row is skipped and its
        actions go under the key the database holds."""
        writes = [(kind, {**params, "deal_key": self.new_deal_key()})
                  if kind == "deal" and params.get("deal_key") is None else (kind, params)
                  for kind, params in writes]
        try:
            # not write_batch itself: its check for a lost answer queries row by row (up to a
            # whole chunk of them), which is what the conflict-skipping insert below does in
            # one statement; those queries would hold the interpreter for long after each lock
            self._insert_batch(writes)
            return
        except STORAGE_ERRORS:
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
                    row = conn.execute(select(MoveRow.seat, MoveRow.action)
                                       .join(DealRow, DealRow.deal_key == MoveRow.deal_key)
                                       .where(DealRow.table_id == params["table_id"],
                                              DealRow.number == params["deal"],
                                              MoveRow.idx == params["idx"])).first()
                    return row is not None and (row.seat, row.action) == (params["seat"],
                                                                          params["action"])
                deal = conn.execute(select(DealRow.deck).where(
                    DealRow.table_id == params["table_id"],
                    DealRow.number == params["number"])).first()
                return deal is not None and deal.deck == params["deck"]
        except STORAGE_ERRORS:
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

    def table_tokens(self, table_id: str) -> StoredTokens | None:
        """The digests of a table's tokens in one small query (None: no such table): a
        request for an archived table is checked with this before its table is read."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(TableRow.admin_digest, TableRow.spectator_digest, SeatRow.seat,
                                       SeatRow.token_digest)
                                .select_from(TableRow)
                                .outerjoin(SeatRow, SeatRow.table_id == TableRow.id)
                                .where(TableRow.id == table_id).order_by(SeatRow.seat)).all()
        if not rows:
            return None
        return StoredTokens(rows[0].admin_digest, rows[0].spectator_digest,
                            [r.token_digest for r in rows if r.seat is not None])

    def load_table(self, table_id: str) -> StoredTable | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(core_table(TableRow)).where(TableRow.id == table_id)).first()
            if row is None:
                return None
            seats = [
                StoredSeat(r.seat, r.name, r.bot, r.token_digest)
                for r in conn.execute(select(core_table(SeatRow))
                                      .where(SeatRow.table_id == table_id).order_by(SeatRow.seat))
            ]
            deal_rows = conn.execute(select(core_table(DealRow)).where(DealRow.table_id == table_id)
                                     .order_by(DealRow.number)).all()
            decks = {r.number: json.loads(r.deck) for r in deal_rows}
            last_event_at = max([row.created] + [r.created for r in deal_rows])
            actions: dict[int, list[tuple[int | None, str]]] = {n: [] for n in decks}
            for r in conn.execute(select(DealRow.number, MoveRow.seat, MoveRow.action,
                                         MoveRow.created)
                                  .join(MoveRow, MoveRow.deal_key == DealRow.deal_key)
                                  .where(DealRow.table_id == table_id)
                                  .order_by(DealRow.number, MoveRow.idx)):
                actions[r.number].append((r.seat, r.action))
                last_event_at = max(last_event_at, r.created)
            state = conn.execute(select(core_table(TableStateRow))
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

"""Storage of tables, decks and actions: SQLAlchemy 2 over SQLite (WAL) or PostgreSQL.

The database is the authority for every table: a table is its rule set, its seats, and per
deal the deck and the actions in order. The in-memory ``stammtisch.table.Table`` is rebuilt
from these rows by replaying them through the engine (see ``tables.TableManager.load_all``).

Every event (a deal's deck, one action) is written in its own transaction and committed
before anything is broadcast. Seat tokens are stored only as SHA-256 digests: a copy of the
database does not let anyone act for a seat.

The code is dialect-neutral (plain ``String``/``Integer``/``Text``/``Boolean`` columns, JSON as
text); only the SQLite connection pragmas are SQLite-specific.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import (
    Boolean,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    create_engine,
    event,
    insert,
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.pool import StaticPool


def default_data_dir() -> Path:
    return Path(os.environ.get("STAMMTISCH_DATA", "./data"))


def default_database_url(data_dir: Path | None = None) -> str:
    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    data_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(data_dir / 'stammtisch.sqlite').resolve()}"


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


class ActionRow(Base):
    __tablename__ = "st_actions"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    deal: Mapped[int] = mapped_column(Integer, primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    action: Mapped[str] = mapped_column(String(200))
    created: Mapped[float] = mapped_column(Float)


@dataclass
class StoredSeat:
    seat: int
    name: str
    bot: str | None
    token_digest: str | None


@dataclass
class StoredTable:
    id: str
    ruleset: str
    options: dict
    first_dealer: int | None
    started: bool
    admin_digest: str
    spectator_digest: str
    seats: list[StoredSeat]
    deals: list[tuple[list[str], list[tuple[int | None, str]]]] = field(default_factory=list)


def _sqlite_pragmas(dbapi_conn, _record) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.execute("PRAGMA busy_timeout=5000")
    cur.close()


class Storage:
    """The repository: one SQLAlchemy engine, small explicit transactions."""

    def __init__(self, url: str):
        url = normalise_url(url)
        self.url = url
        kwargs: dict = {}
        self.is_sqlite = url.startswith("sqlite")
        if self.is_sqlite:
            kwargs["connect_args"] = {"check_same_thread": False}
            if url in ("sqlite://", "sqlite:///:memory:"):
                kwargs["poolclass"] = StaticPool
        self.engine: Engine = create_engine(url, **kwargs)
        if self.is_sqlite:
            event.listen(self.engine, "connect", _sqlite_pragmas)
        Base.metadata.create_all(self.engine)
        # statements built once: SQLAlchemy then reuses their compiled form (the hot path)
        self._insert_action = insert(ActionRow.__table__)
        self._insert_deal = insert(DealRow.__table__)

    def close(self) -> None:
        self._close_writer()
        self.engine.dispose()

    # --- writes (each one transaction, committed on return) ---------------------------

    def create_table(self, table_id: str, ruleset: str, options: dict, seats: list[StoredSeat],
                     admin_digest: str, spectator_digest: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(TableRow.__table__).values(
                id=table_id, ruleset=ruleset, options=json.dumps(options), first_dealer=None,
                started=False, admin_digest=admin_digest, spectator_digest=spectator_digest,
                created=time.time(),
            ))
            conn.execute(insert(SeatRow.__table__), [
                dict(table_id=table_id, seat=s.seat, name=s.name, bot=s.bot,
                     token_digest=s.token_digest) for s in seats
            ])

    def start_deal(self, table_id: str, number: int, deck: list[str],
                   first_dealer: int | None = None) -> None:
        """Write a deal's deck (and, for the first deal, the first dealer) in one transaction.

        A later deal's deck goes through the writer connection like an action (one INSERT,
        committed on return); the first deal also marks the table started."""
        if first_dealer is not None:
            with self.engine.begin() as conn:
                conn.execute(update(TableRow.__table__).where(TableRow.id == table_id)
                             .values(started=True, first_dealer=first_dealer))
                conn.execute(self._insert_deal, {"table_id": table_id, "number": number,
                                                 "deck": json.dumps(deck), "created": time.time()})
            return
        self._write("deal", {"table_id": table_id, "number": number, "deck": json.dumps(deck),
                            "created": time.time()})

    def append_action(self, table_id: str, deal: int, idx: int, seat: int | None,
                      action: str) -> None:
        """One action, committed on return (the hot path of the server).

        Runs the INSERT that SQLAlchemy compiled once for this database's dialect directly on
        a dedicated DB-API connection: the same SQL, a third of the cost per action."""
        self._write("action", {"table_id": table_id, "deal": deal, "idx": idx, "seat": seat,
                               "action": action, "created": time.time()})

    _writer = None

    def _write(self, kind: str, params: dict) -> None:
        """One precompiled INSERT (``kind``: "action" or "deal") committed on return."""
        if self._writer is None:
            self._open_writer()
        sql, positional, order = self._sql[kind]
        cur = self._writer_cursor
        try:
            if positional:
                cur.execute(sql, tuple(params[k] for k in order))
            else:
                cur.execute(sql, params)
            self._writer.commit()
        except Exception:
            try:
                self._writer.rollback()
            finally:
                self._close_writer()
            raise

    def _open_writer(self) -> None:
        self._sql = {}
        for kind, stmt, keys in (
            ("action", self._insert_action, ["table_id", "deal", "idx", "seat", "action", "created"]),
            ("deal", self._insert_deal, ["table_id", "number", "deck", "created"]),
        ):
            compiled = stmt.compile(dialect=self.engine.dialect, column_keys=keys)
            self._sql[kind] = (compiled.string, bool(compiled.positional),
                               list(compiled.positiontup or keys))
        self._writer = self.engine.raw_connection()
        self._writer_cursor = self._writer.cursor()

    def _close_writer(self) -> None:
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.close()
            except Exception:
                pass

    # --- reads ---------------------------------------------------------------------------

    def table_ids(self) -> list[str]:
        with self.engine.connect() as conn:
            return [r[0] for r in conn.execute(select(TableRow.id).order_by(TableRow.created))]

    def load_table(self, table_id: str) -> StoredTable | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(TableRow.__table__).where(TableRow.id == table_id)).first()
            if row is None:
                return None
            seats = [
                StoredSeat(r.seat, r.name, r.bot, r.token_digest)
                for r in conn.execute(select(SeatRow.__table__)
                                      .where(SeatRow.table_id == table_id).order_by(SeatRow.seat))
            ]
            decks = {
                r.number: json.loads(r.deck)
                for r in conn.execute(select(DealRow.__table__).where(DealRow.table_id == table_id))
            }
            actions: dict[int, list[tuple[int | None, str]]] = {n: [] for n in decks}
            for r in conn.execute(select(ActionRow.__table__).where(ActionRow.table_id == table_id)
                                  .order_by(ActionRow.deal, ActionRow.idx)):
                actions.setdefault(r.deal, []).append((r.seat, r.action))
        numbers = sorted(decks)
        if numbers != list(range(len(numbers))):
            raise ValueError(f"table {table_id}: deals are not numbered 0…n-1 ({numbers})")
        return StoredTable(
            id=row.id, ruleset=row.ruleset, options=json.loads(row.options),
            first_dealer=row.first_dealer, started=bool(row.started),
            admin_digest=row.admin_digest, spectator_digest=row.spectator_digest,
            seats=seats, deals=[(decks[n], actions[n]) for n in numbers],
        )

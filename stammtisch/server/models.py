"""The web table's database schema as SQLAlchemy models (the latest version; ``migrations``
brings an older database to it). The repository over them is ``storage.Storage``."""

from __future__ import annotations

from typing import cast

from sqlalchemy import BigInteger, Boolean, Double, Float, ForeignKey, Integer, String, Text, text
from sqlalchemy import Table as SqlTable
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


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
    # the deal's key (its actions are ``MoveRow``s). Every deal has one (``migrations`` gave
    # the deals of older databases theirs); nullable as the column those databases gained
    deal_key: Mapped[int | None] = mapped_column(Integer, nullable=True)


class MoveRow(Base):
    """An action of a deal, under the deal's key. No foreign key: the deal's row vouches for
    the table, and the check cost a lookup per row of every group commit."""

    __tablename__ = "st_moves"

    deal_key: Mapped[int] = mapped_column(Integer, primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    table_id: Mapped[str] = mapped_column(String(32))
    deal: Mapped[int] = mapped_column(Integer)
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
    # a rematch's evening: JSON list of the tables before it, oldest first, each
    # {"table": id, "deals": finished deals, "balances": per seat}
    evening: Mapped[str | None] = mapped_column(Text, nullable=True)
    # whether spectators may chat (None: yes); a seated player or the admin switches it
    spectator_chat: Mapped[bool | None] = mapped_column(Boolean, nullable=True)


class ChatRow(Base):
    """One line of a table's chat (plain text, as the seat wrote it after cleaning). A
    spectator's line has seat ``SPECTATOR_SEAT`` and the name he chose (None: none)."""

    __tablename__ = "st_chat"

    table_id: Mapped[str] = mapped_column(ForeignKey("st_tables.id"), primary_key=True)
    idx: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    text: Mapped[str] = mapped_column(Text)
    created: Mapped[float] = mapped_column(Float)
    name: Mapped[str | None] = mapped_column(String(64), nullable=True)


#: ``ChatRow.seat`` of a spectator's line
SPECTATOR_SEAT = -1


# --- several server processes over one PostgreSQL database (peers.py); unused on SQLite ---


class ProcessRow(Base):
    """A live process of the service: how the others reach it (``--peer-url``), and when it
    last said it was alive (the database's clock, seconds)."""

    __tablename__ = "st_processes"

    id: Mapped[str] = mapped_column(Text, primary_key=True)
    url: Mapped[str] = mapped_column(Text)
    heartbeat: Mapped[float] = mapped_column(Double)


class LeaseRow(Base):
    """Which process runs a live table, until when (the database's clock, seconds), and under
    which epoch: counted up at each take of the lease, it fences the group commits of a copy
    of the table taken before."""

    __tablename__ = "st_leases"

    table_id: Mapped[str] = mapped_column(Text, primary_key=True)
    owner: Mapped[str] = mapped_column(Text)
    expires: Mapped[float] = mapped_column(Double)
    epoch: Mapped[int] = mapped_column(BigInteger, server_default=text("0"))


class ServiceSettingRow(Base):
    """A setting the processes of the service share (``peer_secret``: the secret with which
    they open their links to each other)."""

    __tablename__ = "st_service"

    name: Mapped[str] = mapped_column(Text, primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class AddressBucketRow(Base):
    """The limits per client address of the whole service: a token bucket per (kind,
    address), with its tokens at the time ``at`` (the database's clock, seconds)."""

    __tablename__ = "st_address_buckets"

    kind: Mapped[str] = mapped_column(Text, primary_key=True)
    address: Mapped[str] = mapped_column(Text, primary_key=True)
    tokens: Mapped[float] = mapped_column(Double)
    at: Mapped[float] = mapped_column(Double)


def core_table(model: type[Base]) -> SqlTable:
    """A model's Core table (typed: SQLAlchemy declares ``__table__`` as a FromClause)."""
    return cast(SqlTable, model.__table__)

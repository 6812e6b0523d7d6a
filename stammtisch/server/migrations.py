"""The web table's database schema across versions: numbered steps, each run once.

A new database is made whole from the models (``models.Base``) and marked with the latest
version. An older one is brought up to date at start-up by the steps above its version, in
order, each in its own transaction (both SQLite and PostgreSQL change their schema inside a
transaction, so a step that fails leaves the database as it was). A database made before this
module kept no version: it counts as version 0, and each step checks what is already there.

An older server cannot read a newer database: copy the database before upgrading if you may
want to go back (docs/deployment.md).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

from sqlalchemy import Connection, Engine, inspect, text

log = logging.getLogger("stammtisch.server")

#: The table that holds the schema's version (one row).
VERSION_TABLE = "st_schema"


def _columns(conn: Connection, table: str) -> set[str]:
    return {c["name"] for c in inspect(conn).get_columns(table)}


def _add_columns(conn: Connection, table: str, columns: dict[str, str]) -> None:
    have = _columns(conn, table)
    for name, sql_type in columns.items():
        if name not in have:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {sql_type}"))


def _deal_keys(conn: Connection) -> None:
    """A deal's key: its actions are rows of ``st_moves`` (until step 4, deals dealt before
    kept theirs in ``st_actions``)."""
    _add_columns(conn, "st_deals", {"deal_key": "INTEGER"})


def _social_owners(conn: Connection) -> None:
    """Who made a table (for the live tables an address may hold), the seats that were the
    lobby's (never reissued to the table's admin), the human seats that ever connected (a
    table that never had two lives shorter), and the seats whose link went on to the rematch."""
    _add_columns(conn, "st_table_social", {"creator": "VARCHAR(64)", "lobby_seats": "TEXT",
                                           "humans": "TEXT", "rematch_claimed": "TEXT"})
    # the seats open now were the lobby's; their links, made for the creator by the servers
    # before, stop working (a stranger who takes such a seat gets a link of his own)
    rows = conn.execute(text("SELECT table_id, open_seats FROM st_table_social "
                             "WHERE lobby_seats IS NULL")).all()
    for table_id, open_seats in rows:
        seats = [int(s) for s in json.loads(open_seats or "[]")]
        conn.execute(text("UPDATE st_table_social SET lobby_seats = :seats WHERE table_id = :t"),
                     {"seats": json.dumps(seats), "t": table_id})
        for seat in seats:
            conn.execute(text("UPDATE st_seats SET token_digest = NULL "
                              "WHERE table_id = :t AND seat = :s"), {"t": table_id, "s": seat})


def _table_choices(conn: Connection) -> None:
    """What a table's creator chose beyond the rules: the pace between deals, and hints."""
    _add_columns(conn, "st_table_social", {"pace": "VARCHAR(16)", "hints": "BOOLEAN"})


def _one_action_table(conn: Connection) -> None:
    """Every action in ``st_moves``: each deal without a key gets one (above every key in use,
    in the order the deals were dealt), its actions are copied from ``st_actions`` under it
    with their numbers, and ``st_actions`` is dropped. Rows of ``st_actions`` without their
    deal's row were never loaded; they go with the table (a warning counts them)."""
    if "st_actions" not in set(inspect(conn).get_table_names()):
        return
    top = max(conn.execute(text("SELECT MAX(deal_key) FROM st_deals")).scalar() or 0,
              conn.execute(text("SELECT MAX(deal_key) FROM st_moves")).scalar() or 0)
    keyless = conn.execute(text("SELECT table_id, number FROM st_deals WHERE deal_key IS NULL "
                                "ORDER BY created, table_id, number")).all()
    if keyless:
        conn.execute(text("UPDATE st_deals SET deal_key = :k WHERE table_id = :t AND number = :n"),
                     [{"k": top + i, "t": t, "n": n} for i, (t, n) in enumerate(keyless, 1)])
    copied = conn.execute(text(
        "INSERT INTO st_moves (deal_key, idx, table_id, deal, seat, action, created) "
        "SELECT d.deal_key, a.idx, a.table_id, a.deal, a.seat, a.action, a.created "
        "FROM st_actions a JOIN st_deals d ON d.table_id = a.table_id AND d.number = a.deal "
        "WHERE d.deal_key > :top"), {"top": top}).rowcount
    total = int(conn.execute(text("SELECT COUNT(*) FROM st_actions")).scalar_one())
    if copied != total:
        log.warning("%d row(s) of st_actions belonged to no deal (never loaded) and were dropped",
                    total - copied)
    conn.execute(text("DROP TABLE st_actions"))


def _peer_tables(conn: Connection) -> None:
    """The tables of several processes over one database (``models.ProcessRow`` and those
    after it), made by the models now: a database whose processes made them before keeps
    their rows and gains what they lacked, the lease's epoch and the name ``st_service`` for
    the shared settings (``st_cluster`` before; the peer secret moves over unchanged)."""
    _add_columns(conn, "st_leases", {"epoch": "BIGINT NOT NULL DEFAULT 0"})
    if "st_cluster" in set(inspect(conn).get_table_names()):
        conn.execute(text("INSERT INTO st_service (name, value) SELECT name, value FROM st_cluster "
                          "WHERE name NOT IN (SELECT name FROM st_service)"))
        conn.execute(text("DROP TABLE st_cluster"))


def _rematch_evening(conn: Connection) -> None:
    """A rematch keeps the evening: the tables before it, with their deals and balances."""
    _add_columns(conn, "st_table_social", {"evening": "TEXT"})


def _spectator_chat(conn: Connection) -> None:
    """Spectators chat: a chat line may be a spectator's, with the name he chose, and the
    players may switch the spectators' chat off."""
    _add_columns(conn, "st_chat", {"name": "VARCHAR(64)"})
    _add_columns(conn, "st_table_social", {"spectator_chat": "BOOLEAN"})


def _retired_bots(conn: Connection) -> None:
    """The ``ismcts`` bot is no longer offered (it lost to the heuristic): its seats at the
    stored tables play on as the Expert, the nearest level that searches."""
    conn.execute(text("UPDATE st_seats SET bot = 'expert' WHERE bot = 'ismcts'"))


#: The steps, in order: step ``i`` (1-based) brings version ``i - 1`` to ``i``.
STEPS: list[Callable[[Connection], None]] = [_deal_keys, _social_owners, _table_choices,
                                             _one_action_table, _peer_tables, _rematch_evening,
                                             _spectator_chat, _retired_bots]
LATEST = len(STEPS)


def schema_version(conn: Connection) -> int | None:
    """The database's version; None for a database without any table of ours."""
    names = set(inspect(conn).get_table_names())
    if VERSION_TABLE in names:
        return int(conn.execute(text(f"SELECT version FROM {VERSION_TABLE}")).scalar_one())
    return 0 if "st_tables" in names else None


#: The advisory lock (PostgreSQL) under which one server process at a time migrates.
MIGRATION_LOCK = 0x57A4_0003


def migrate(engine: Engine, create_all: Callable[[Engine], None]) -> int:
    """Bring the database to ``LATEST`` (``create_all`` makes the tables of the models that do
    not exist yet); returns the version found. On PostgreSQL several server processes may
    start at once on one database (peers.py): one migrates, the others wait for it."""
    if engine.dialect.name != "postgresql":
        return _migrate(engine, create_all)
    with engine.connect() as lock:
        lock.execute(text("SELECT pg_advisory_lock(:k)"), {"k": MIGRATION_LOCK})
        try:
            return _migrate(engine, create_all)
        finally:
            lock.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": MIGRATION_LOCK})


def _migrate(engine: Engine, create_all: Callable[[Engine], None]) -> int:
    with engine.begin() as conn:
        found = schema_version(conn)
    create_all(engine)
    with engine.begin() as conn:
        if VERSION_TABLE not in set(inspect(conn).get_table_names()):
            conn.execute(text(f"CREATE TABLE {VERSION_TABLE} (version INTEGER NOT NULL)"))
            conn.execute(text(f"INSERT INTO {VERSION_TABLE} (version) VALUES (:v)"),
                         {"v": LATEST if found is None else found})
    if found is None:  # a new database: the models are the latest schema
        return LATEST
    if found > LATEST:
        raise RuntimeError(f"the database's schema is version {found}, newer than this server "
                           f"knows ({LATEST}): run the newer server, or a copy made before it")
    for version in range(found, LATEST):
        with engine.begin() as conn:
            STEPS[version](conn)
            conn.execute(text(f"UPDATE {VERSION_TABLE} SET version = :v"), {"v": version + 1})
    return found

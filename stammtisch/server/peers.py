"""Several server processes over one PostgreSQL database, forming one service.

A live table is run by one process at a time: the holder of its lease, a row of ``st_leases``
with an expiry that the holder renews every ``RENEW_EVERY`` seconds. The holder runs the
table's bots, turn timer and next deal, sees its players come and go, and commits every event
of it. Any process accepts any client: a request or a WebSocket about a table that another
live process holds is relayed to that process (relay.py), and its answers and messages
come back the same way; a table nobody holds (its holder stopped, or died and its lease
expired) is taken by the process a client of it reaches, which loads it from the database.

Why relay rather than keep a copy of each table in every process, fed by LISTEN/NOTIFY: a
table's rules of play read the presence of its players (bots wait for a watcher, the next deal
for every seated player's Next, a rematch for every seated player's yes, the turn timer for
the seat on turn), so copies would need every process's presence too, and two writers of one
table would race. With one writer per table the rules of play are those of one process, and
the price is one hop between processes for the clients that reach another one.

Safety: every group commit checks, in its own transaction, that this process holds the lease of
each table whose rows it writes, unexpired by the database's clock and under the epoch the
table was taken with (``lease_fence``); it locks those lease rows (FOR SHARE) until it commits,
so a process that takes a table does so before that commit or after it, and loads the table
after its take (a holder that stalls mid-commit holds them until PostgreSQL ends its open
transaction: ``STALLED_TRANSACTION_MS``, storage.py). Each take of a lease counts its epoch up:
rows of an older copy of a table (dropped here, then taken here again) are refused too. The
rows of a table that lost its lease are not written: the event is undone and the table dropped
here; a dropped table closes its connections with "come again" and accepts none, and its
retried writes stop. A holder that could not renew its leases lately commits nothing at all
(``fresh``) well before they can expire. Should two processes ever write the same event all the
same, the database's keys refuse the second: a deal is (table, number), an action (deal key,
index), and every process takes its deal keys from one sequence.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import re
import secrets
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import text
from starlette.types import Scope

from .refusals import STORAGE_ERRORS
from .storage import Storage

if TYPE_CHECKING:
    from .manager import TableManager

log = logging.getLogger("stammtisch.server")

T = TypeVar("T")

#: How long a lease lasts after its last renewal (seconds): a dead process's tables move to a
#: live one this long after its last renewal, at the next client that comes for them.
LEASE_SECONDS = 5.0
#: How often a process renews its leases and says it is alive (seconds).
RENEW_EVERY = 1.0
#: A process commits nothing once its last renewal is older than LEASE_SECONDS minus this:
#: its leases may be about to expire, and another process to take its tables.
FENCE_MARGIN = 1.5
#: How long a process remembers where another process's table is (seconds).
WHERE_KEPT = 1.0
#: The header with which a process opens its link to another (relay.py): the service's shared
#: secret.
PEER_HEADER = b"x-stammtisch-peer"

#: The paths about one table: ``/ws/{id}`` and ``/api/tables/{id}[/…]`` (an id of the form
#: ``routes.deps.TABLE_ID`` takes; any other goes to the app, which refuses it).
TABLE_PATH = re.compile(r"^/(?:ws|api/tables)/([A-Za-z0-9_-]{1,32})(?:/|$)")
#: Holders remembered at most (``Peers._where``); past it, the expired ones are forgotten.
WHERE_MAX = 10_000

#: The database's clock at the start of the transaction: one time for a whole statement.
NOW_TX = "EXTRACT(EPOCH FROM transaction_timestamp())"
#: Buckets full again (unused that long) are deleted now and then (``Peers._take_token``),
#: so the table does not grow with every address ever seen (seconds).
BUCKETS_KEPT = 3600.0
#: The database's clock, in seconds: every process compares expiries with one clock.
NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
#: The first statement of a group commit's transaction (``EventStore.lease_fence``): of the
#: tables whose rows it writes (ids, epochs), those whose lease this process (owner) holds,
#: unexpired, under that epoch; their lease rows stay locked until the commit, so a take waits.
LEASE_FENCE = (
    "SELECT l.table_id FROM st_leases l "
    "JOIN unnest(%s::text[], %s::bigint[]) AS f(table_id, epoch) "
    "ON l.table_id = f.table_id AND l.epoch = f.epoch "
    f"WHERE l.owner = %s AND l.expires > {NOW} FOR SHARE OF l")
#: How long a take waits for a lease row that a group commit holds (its holder may have
#: stalled mid-commit): the client is told to come again rather than the renewals waiting.
TAKE_LOCK_TIMEOUT = "1s"


def default_peer_url(host: str, port: int, uds: str | None) -> str:
    """How the other processes reach this one when ``--peer-url`` is not given."""
    if uds is not None:
        return f"unix:{os.path.abspath(uds)}"
    if host in ("0.0.0.0", "::", ""):
        host = socket.gethostname()
    return f"http://{host}:{port}"


class Peers:
    """This process's part in the service: its row in ``st_processes``, its leases, and where
    the tables of the others are (see the module's docstring)."""

    def __init__(self, storage: Storage, peer_url: str):
        self.storage = storage
        self.engine = storage.engine
        self.url = peer_url
        self.id = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(4)}"
        self.secret = b""
        self.manager: TableManager | None = None
        self.renewed_at = -float("inf")  # time.monotonic() at the start of the last renewal
        self._claimed_at: dict[str, float] = {}  # tables taken since, by time.monotonic()
        self._where: dict[str, tuple[str, float]] = {}  # table → (the holder's URL, until)
        self._locating: dict[str, asyncio.Future[str | None]] = {}  # lookups under way
        # its own thread: a renewal must not wait behind the group commits
        self._io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-peers")
        self._task: asyncio.Task[None] | None = None
        self._failing = False

    # --- start and stop -----------------------------------------------------------------

    def setup(self, manager: TableManager) -> None:
        """Read the shared secret (made by the first process), say this process is alive, and
        fence the event store with ``fresh``."""
        self.manager = manager
        manager.peers = self
        manager.store.fence = self.fresh
        manager.store.lease_fence = self.lease_fence
        with self.engine.begin() as conn:  # the tables are the storage's (models.py)
            conn.execute(text("INSERT INTO st_service (name, value) VALUES ('peer_secret', :v) "
                              "ON CONFLICT DO NOTHING"), {"v": secrets.token_urlsafe(32)})
            self.secret = str(conn.execute(text(
                "SELECT value FROM st_service WHERE name = 'peer_secret'")).scalar_one()).encode()
            # processes that ended long ago without a word (killed): their leases expired then
            conn.execute(text(f"DELETE FROM st_processes WHERE heartbeat < {NOW} - 3600"))
        self._renew(set())
        self.renewed_at = time.monotonic()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renewing())

    def stop(self) -> None:
        """This process stops: its leases are given up at once (the next client of each of its
        tables takes it elsewhere, without waiting for the expiry)."""
        if self._task is not None:
            self._task.cancel()
        try:
            with self.engine.begin() as conn:
                conn.execute(text("DELETE FROM st_leases WHERE owner = :me"), {"me": self.id})
                conn.execute(text("DELETE FROM st_processes WHERE id = :me"), {"me": self.id})
        except STORAGE_ERRORS:
            log.warning("could not give up this process's leases; they expire in %.0f s",
                        LEASE_SECONDS, exc_info=True)
        self._io.shutdown(wait=False)

    # --- leases ---------------------------------------------------------------------------

    def lease_fence(self, epochs: dict[str, int]) -> tuple[str, tuple[Any, ...]]:
        """The lease check of a transaction that writes rows of these tables (by epoch)."""
        return LEASE_FENCE, (list(epochs), list(epochs.values()), self.id)

    def fresh(self) -> bool:
        """Whether this process surely still holds its leases (the event store's fence)."""
        return time.monotonic() - self.renewed_at < LEASE_SECONDS - FENCE_MARGIN

    async def _renewing(self) -> None:
        while True:
            await asyncio.sleep(RENEW_EVERY)
            assert self.manager is not None
            started = time.monotonic()
            tables = set(self.manager.tables)
            try:
                held = await self._run(self._renew, tables)
            except Exception:  # whatever fails, renewing must go on (and commits wait for it)
                if not self._failing:
                    log.warning("could not renew this process's leases; it commits nothing "
                                "while it cannot", exc_info=True)
                self._failing = True
                continue
            if self._failing:
                log.warning("leases renewed again")
                self._failing = False
            self.renewed_at = started
            for tid in tables - held:
                live = self.manager.tables.get(tid)
                if live is not None and self._claimed_at.get(tid, -1.0) < started:
                    log.warning("table %s: its lease went to another process; dropped here", tid)
                    self.manager.drop(live)
            for tid in [t for t, at in self._claimed_at.items() if at < started]:
                del self._claimed_at[tid]

    def _renew(self, tables: set[str]) -> set[str]:
        """Renew the leases of ``tables`` that this process holds; returns those."""
        with self.engine.begin() as conn:
            conn.execute(text(
                f"INSERT INTO st_processes (id, url, heartbeat) VALUES (:me, :url, {NOW}) "
                f"ON CONFLICT (id) DO UPDATE SET heartbeat = EXCLUDED.heartbeat"),
                {"me": self.id, "url": self.url})
            if not tables:
                return set()
            rows = conn.execute(text(
                f"UPDATE st_leases SET expires = {NOW} + :ttl WHERE owner = :me "
                f"AND table_id = ANY(:ids) RETURNING table_id"),
                {"me": self.id, "ttl": LEASE_SECONDS, "ids": sorted(tables)})
            return {r[0] for r in rows}

    async def claim(self, table_id: str) -> int:
        """Hold the lease of a table this process has just made; returns its epoch."""
        self._claimed_at[table_id] = time.monotonic()
        epoch = await self._run(self._take, table_id)
        if epoch is None:
            raise RuntimeError(f"table {table_id}: a new table's lease is held by another process")
        return epoch

    def _take(self, table_id: str) -> int | None:
        """Take the lease of a table if nobody holds it (or its holder's lease expired): its
        new epoch, else None."""
        with self.engine.begin() as conn:
            conn.execute(text(f"SET LOCAL lock_timeout = '{TAKE_LOCK_TIMEOUT}'"))
            row = conn.execute(text(
                f"INSERT INTO st_leases (table_id, owner, expires, epoch) "
                f"VALUES (:t, :me, {NOW} + :ttl, 1) "
                f"ON CONFLICT (table_id) DO UPDATE SET owner = EXCLUDED.owner, "
                f"expires = EXCLUDED.expires, epoch = st_leases.epoch + 1 "
                f"WHERE st_leases.expires < {NOW} OR st_leases.owner = EXCLUDED.owner "
                f"RETURNING epoch"),
                {"t": table_id, "me": self.id, "ttl": LEASE_SECONDS}).first()
        return None if row is None else int(row[0])

    def _release(self, table_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(text("DELETE FROM st_leases WHERE table_id = :t AND owner = :me"),
                         {"t": table_id, "me": self.id})

    def _holder(self, table_id: str) -> tuple[str, str] | None:
        """The live holder of a table's lease other than this process: (id, URL), else None."""
        with self.engine.connect() as conn:
            row = conn.execute(text(
                f"SELECT l.owner, p.url FROM st_leases l JOIN st_processes p ON p.id = l.owner "
                f"WHERE l.table_id = :t AND l.expires > {NOW} AND l.owner <> :me"),
                {"t": table_id, "me": self.id}).first()
        return None if row is None else (str(row[0]), str(row[1]))

    async def other_processes(self) -> list[str]:
        """The URLs of the other live processes."""
        return await self._run(self._other_processes)

    def _other_processes(self) -> list[str]:
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                f"SELECT url FROM st_processes WHERE id <> :me AND heartbeat > {NOW} - :ttl"),
                {"me": self.id, "ttl": LEASE_SECONDS})
            return sorted({str(r[0]) for r in rows})

    async def locate(self, table_id: str) -> str | None:
        """Where the requests about a table go: None when this process serves them (it holds
        the table, or took it now, or the table is not live: then the app answers as for
        any unknown or archived table), else the URL of the process that holds it."""
        manager = self.manager
        assert manager is not None
        if table_id in manager.tables:
            return None
        known = self._where.get(table_id)
        if known is not None and known[1] > time.monotonic():
            return known[0]
        # two clients of one table at once: one lookup (and take), which both await; shielded,
        # so that a client that goes away does not cancel it for the other
        lookup = self._locating.get(table_id)
        if lookup is None:
            lookup = self._locating[table_id] = asyncio.ensure_future(self._look_up(table_id))
            lookup.add_done_callback(lambda _: self._locating.pop(table_id, None))
        return await asyncio.shield(lookup)

    async def _look_up(self, table_id: str) -> str | None:
        manager = self.manager
        assert manager is not None
        for _ in range(3):
            if table_id in manager.tables:
                return None
            holder = await self._run(self._holder, table_id)
            if holder is not None:
                now = time.monotonic()
                if len(self._where) >= WHERE_MAX:
                    self._where = {t: w for t, w in self._where.items() if w[1] > now}
                self._where[table_id] = (holder[1], now + WHERE_KEPT)
                return holder[1]
            if await self._adopt(table_id):
                return None
        return None

    async def _adopt(self, table_id: str) -> bool:
        """Take a table nobody holds and load it; False when another process took it first.
        (True too for a table that is not live: nothing to load, the app answers.)"""
        assert self.manager is not None
        epoch = await self._run(self._take, table_id)
        if epoch is None:
            return False
        self._claimed_at[table_id] = time.monotonic()
        if table_id in self.manager.tables:
            # loaded meanwhile: that copy keeps its epoch, so should it have missed events
            # (its lease lost and taken back), its next commit is refused and it is dropped
            return True
        loaded = False
        try:
            st = await self.manager.store.read(self.storage.load_table, table_id)
            loaded = True
        finally:
            if not loaded:  # let the next client's process take it at once
                await self._run(self._release, table_id)
        if st is None or st.archived_reason is not None:
            await self._run(self._release, table_id)
            return True
        live = self.manager.rebuild(st)
        live.lease = epoch
        self.manager.tables[table_id] = live
        live.schedule()
        log.info("table %s: taken over by this process", table_id)
        return True

    # --- limits per client address, for the whole service -------------------------------

    async def allow(self, kind: str, address: str, per_minute: float, burst: float) -> bool:
        """Take one token of ``address``'s bucket of ``kind`` (refilled at ``per_minute``, at
        most ``burst``) for the whole service; False when it has none now."""
        assert self.manager is not None
        return await self.manager.store.commit(self._take_token, kind, address,
                                               per_minute / 60.0, float(burst))

    def _take_token(self, kind: str, address: str, per_second: float, burst: float) -> bool:
        refilled = f"LEAST(:burst, b.tokens + ({NOW_TX} - b.at) * :rate)"
        with self.engine.begin() as conn:
            row = conn.execute(text(
                f"INSERT INTO st_address_buckets AS b (kind, address, tokens, at) "
                f"VALUES (:kind, :address, :burst - 1, {NOW_TX}) "
                f"ON CONFLICT (kind, address) DO UPDATE SET tokens = {refilled} - 1, "
                f"at = {NOW_TX} WHERE {refilled} >= 1 RETURNING tokens"),
                {"kind": kind, "address": address, "burst": burst, "rate": per_second}).first()
            if secrets.randbelow(1000) == 0:  # now and then: the buckets long full are moot
                conn.execute(text(f"DELETE FROM st_address_buckets WHERE at < {NOW_TX} - :kept"),
                             {"kept": BUCKETS_KEPT})
        return row is not None

    async def made_by(self, address: str) -> list[list[str | None]]:
        """The live tables (not archived) of the whole service that ``address`` made: per
        table, its seats' bots (None: a person), the closed tables' as an empty list."""
        assert self.manager is not None
        return await self.manager.store.read(self._made_by, address)

    def _made_by(self, address: str) -> list[list[str | None]]:
        with self.engine.connect() as conn:
            rows = conn.execute(text(
                "SELECT so.table_id, st.closed_at IS NOT NULL, s.bot FROM st_table_social so "
                "LEFT JOIN st_table_state st ON st.table_id = so.table_id "
                "LEFT JOIN st_seats s ON s.table_id = so.table_id "
                "WHERE so.creator = :a AND (st.archived_at IS NULL)"), {"a": address}).all()
        tables: dict[str, list[str | None]] = {}
        for table_id, closed, bot in rows:
            seats = tables.setdefault(str(table_id), [])
            if not closed:
                seats.append(bot)
        return list(tables.values())

    def forget(self, table_id: str) -> None:
        """The holder remembered for a table did not answer: look it up again next time."""
        self._where.pop(table_id, None)

    def from_peer(self, scope: Scope) -> bool:
        """Whether a request comes from another process of the service (its secret header)."""
        for name, value in scope.get("headers", ()):
            if name == PEER_HEADER:
                return hmac.compare_digest(value, self.secret)
        return False

    async def _run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._io, fn, *args)

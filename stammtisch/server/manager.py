"""The registry of the live tables: loading them at start-up, creating them (with their
tokens and the limits on who may create how many), issuing new links, and archiving those
that expired."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..bots import SEARCH_BOTS, algorithm_of
from ..rules import Rules
from .buckets import AddressBuckets
from .event_store import EventStore
from .fanout import Outbox
from .limits import ServerLimits, count_down
from .live_table import LiveTable
from .protocol import CloseCode, Error
from .refusals import MESSAGES, Refusal, RefusalKind, StorageUnavailable
from .scheduler import Scheduler
from .spill import Spill
from .storage import Storage, StoredSeat, StoredSocial, StoredTable, token_digest
from .table_core import Seat
from .table_social import SOCIAL_MESSAGES, new_token
from .thinker import Thinker

if TYPE_CHECKING:
    from .peers import Peers

log = logging.getLogger("stammtisch.server")


def new_table_id() -> str:
    return secrets.token_urlsafe(9)


class TableManager:
    def __init__(self, storage: Storage, bot_delay: float = 0.6, deal_pause: float = 8.0,
                 limits: ServerLimits | None = None, spill: Spill | None = None,
                 scheduler: Scheduler | None = None):
        self.storage = storage
        self.bot_delay = bot_delay
        self.deal_pause = deal_pause
        self.limits = limits or ServerLimits()
        self.retry_later = 1.0  # seconds before a bot or the next deal tries again
        self.tables: dict[str, LiveTable] = {}
        self.scheduler = scheduler or Scheduler()  # the tables' clock (a test's own clock too)
        self.store = EventStore(storage, self.limits, spill, self.scheduler)
        self.thinker = Thinker()  # the worker process of the search bots
        self.ws_per_address: dict[str, int] = {}
        self.refusals: dict[str, int] = {}
        self.outbox = Outbox()  # the fast-path messages of the loop's turn
        self.peers: Peers | None = None  # several processes over one database (peers.py)
        self.draining = False  # the process is stopping: no new tables or connections
        self._sockets_gone: asyncio.Event | None = None  # see sockets_closed
        # tables made per client address (a rematch counts as made by the seat that asked)
        self.creations = AddressBuckets(self.limits.creations_per_minute, self.limits.creation_burst)
        self.evictions = 0  # tables archived to make room for a new one (``make_room``)

    async def creation_refusal(self, address: str) -> Refusal | None:
        """Why ``address`` may not make a table now, or None (then it has used one creation):
        too many made lately, as many live tables as one address may hold, or the server
        full of tables in play (``make_room``). A refusal is counted (``count_refusal``)."""
        limits, peers = self.limits, self.peers
        if self.draining:
            rule, message = "restarting", MESSAGES["restarting"]
        elif not (self.creations.allow(address) if peers is None else await peers.allow(
                "create", address, limits.creations_per_minute, limits.creation_burst)):
            rule, message = "rate", SOCIAL_MESSAGES["rate"]
        elif await self.tables_made_by(address) >= limits.tables_per_address:
            rule, message = "quota", SOCIAL_MESSAGES["quota"].format(n=limits.tables_per_address)
        elif len(self.tables) >= limits.max_live_tables and not await self.make_room():
            rule, message = "capacity", SOCIAL_MESSAGES["capacity"]
        else:
            return None
        self.count_refusal(rule)
        if rule == "restarting":  # another process of the service may take it at once
            return Refusal(rule, message, RefusalKind.UNAVAILABLE, 1)
        return Refusal(rule, message, RefusalKind.TOO_MANY, 60)

    async def make_room(self) -> bool:
        """Room for one more table under ``max_live_tables``: the tables that expired are
        archived, and if that is not enough, one table nobody plays (``to_evict``). False
        when every table is in play.

        Why: the cap bounds the server's memory, and a few dozen addresses, each within its
        own quota, filled it with tables nobody ever joined, so that a player's new table was
        refused. A table is in play while a seated person is connected to it: those are never
        evicted. An evicted table is archived as an expired one is (its record stays)."""
        limits = self.limits
        if await self.sweep() and len(self.tables) < limits.max_live_tables:
            return True
        while len(self.tables) >= limits.max_live_tables:
            victim = self.to_evict()
            if victim is None or not await self.archive(victim, "evicted"):
                return False
            self.evictions += 1
            log.info("table %s (made from %s) evicted to make room for a new table",
                     victim.id, victim.creator or "an unknown address")
        return True

    def to_evict(self) -> LiveTable | None:
        """The table to give up when the server is full: one nobody plays (no seated person
        connected), made from the address that made the most live tables (a flood comes from
        few addresses, each holding many); of its tables, one that never started before one
        that did, one nobody watches before one a spectator watches, then the one idle
        longest. None when every table is in play."""
        made = Counter(t.creator for t in self.tables.values())
        best: LiveTable | None = None
        best_key: tuple[int, bool, bool, float] | None = None
        for live in self.tables.values():
            if live.fanout.seats_online():
                continue  # in play
            key = (-made[live.creator], live.started, live.fanout.watched(), live.last_activity)
            if best_key is None or key < best_key:
                best, best_key = live, key
        return best

    def count_refusal(self, rule: str) -> None:
        self.refusals[rule] = self.refusals.get(rule, 0) + 1

    # --- WebSocket clients ---------------------------------------------------------------

    def socket_opened(self, address: str) -> None:
        self.ws_per_address[address] = self.ws_per_address.get(address, 0) + 1

    def socket_closed(self, address: str) -> None:
        count_down(self.ws_per_address, address)
        if not self.ws_per_address and self._sockets_gone is not None:
            self._sockets_gone.set()

    def sockets_open(self) -> int:
        """The WebSocket clients connected now."""
        return sum(self.ws_per_address.values())

    async def sockets_closed(self) -> None:
        """Return once no WebSocket client is connected."""
        if self.ws_per_address:
            self._sockets_gone = asyncio.Event()
            await self._sockets_gone.wait()

    def load_all(self) -> None:
        """Rebuild every table not archived from the database (replaying its decks and actions),
        after moving in what a crash left in the spill file. Several processes over one
        database (``peers``) load none now: a table is loaded by the process that takes its
        lease, when a client of it comes."""
        self.store.replay_spill()
        self.storage.read_deal_keys()  # now, not on the event loop at the first deal
        if self.peers is not None:
            return
        for tid in self.storage.table_ids():
            st = self.storage.load_table(tid)
            assert st is not None
            self.tables[tid] = self.rebuild(st)

    def rebuild(self, st: StoredTable) -> LiveTable:
        """A stored table as a live one (its deals replayed); a table the current engine cannot
        replay is marked broken instead."""
        try:
            return LiveTable.from_stored(self, st)
        except Exception as e:  # the engine may fail in any way on old rows: the table stays, broken
            log.exception("table %s cannot be rebuilt", st.id)
            live = LiveTable(self, st.id, st.ruleset, st.options,
                             [Seat(s.name, s.bot, s.token_digest) for s in st.seats],
                             st.admin_digest, st.spectator_digest)
            live.broken = f"the table cannot be rebuilt: {e}"
            return live

    def drop(self, live: LiveTable) -> None:
        """Forget a live table that another process runs now (its lease moved, ``peers``):
        no more timers, its clients disconnected (they reconnect and are relayed there)."""
        if self.tables.get(live.id) is live:
            del self.tables[live.id]
        # closed here (not in the database): nothing it still has coming (a bot's decision, a
        # timer, a client's last message) may make an event the new holder makes too; a
        # client that connects to it from now on is closed at once (``LiveTable.attach``)
        live.dropped = True
        live.closed = True
        live.turns.cancel()
        live.fanout.close()

    async def drain(self) -> list[LiveTable]:
        """The process stops: no new tables or connections from now (``draining``), and
        every table stops once the event it is committing is committed (it holds the table's
        lock until then): closed here (not in the database, as ``drop``), no bots, timers or
        next deals, no longer this process's. Returns them; their clients are still
        connected."""
        self.draining = True
        tables = list(self.tables.values())

        async def stop(live: LiveTable) -> None:
            await live.lock.acquire()
            try:
                live.closed = True
                live.turns.cancel()
                if self.tables.get(live.id) is live:
                    del self.tables[live.id]
            finally:
                live.lock.release()

        await asyncio.gather(*(stop(live) for live in tables))
        return tables

    def resume(self) -> None:
        """Schedule bots and next deals of loaded tables (needs the running loop)."""
        for live in self.tables.values():
            live.schedule()

    def shutdown(self) -> None:
        for live in self.tables.values():
            live.turns.cancel()
            live.fanout.close()
        self.thinker.shutdown()
        self.store.shutdown()

    def get(self, table_id: str) -> LiveTable | None:
        return self.tables.get(table_id)

    async def create(self, ruleset_id: str, options: dict[str, Any], seats: list[tuple[str, str | None]],
                     max_deals: int | None = None, social: StoredSocial | None = None,
                     rules: Rules | None = None) -> dict[str, Any]:
        """Create a table (``rules``: those ``ruleset_id`` and ``options`` make, when the caller
        has built them already); returns the tokens (shown once: only digests are stored). A seat
        open for a stranger from the lobby gets no token: nobody but the player who takes it
        may ever hold its link (``take_seat`` makes his). A table without a human seat plays
        at most ``bot_table_max_deals`` deals."""
        table_id = new_table_id()
        while table_id in self.tables:
            table_id = new_table_id()
        admin, spectator = new_token(), new_token()
        lobby = set(social.open_seats) if social is not None else set()
        tokens = [None if bot or i in lobby else new_token() for i, (_, bot) in enumerate(seats)]
        live_seats = [Seat(name, bot, token_digest(tok) if tok else None)
                      for (name, bot), tok in zip(seats, tokens, strict=True)]
        if all(bot for _, bot in seats):
            cap = self.limits.bot_table_max_deals
            max_deals = cap if max_deals is None else min(max_deals, cap)
        live = LiveTable(self, table_id, ruleset_id, options, live_seats,
                         token_digest(admin), token_digest(spectator), max_deals, rules)
        await self.store.commit(
            self.storage.create_table, table_id, ruleset_id, options,
            [StoredSeat(i, s.name, s.bot, s.digest) for i, s in enumerate(live_seats)],
            live.admin_digest, live.spectator_digest, max_deals, social,
        )
        if social is not None:
            live.set_social(social)
        self.tables[table_id] = live
        if self.peers is not None:
            live.lease = await self.peers.claim(table_id)
        return {"id": table_id, "admin_token": admin, "spectator_token": spectator,
                "seat_tokens": tokens, "table": live}

    async def reissue(self, live: LiveTable, seat: int | None) -> str:
        """A new link for a seat (None: the spectators); the old one stops working at once."""
        token = new_token()
        digest = token_digest(token)
        if seat is None:
            await self.store.commit(self.storage.set_spectator_digest, live.id, digest)
            live.spectator_digest = digest
            live.fanout.drop_seat(None, "the spectator link was replaced by the table's admin")
        else:
            await self.store.commit(self.storage.set_seat_digest, live.id, seat, digest)
            live.seats[seat].digest = digest
            live.fanout.drop_seat(seat, "this seat's link was replaced by the table's admin")
        return token

    # --- expiry -------------------------------------------------------------------------

    def expired(self, live: LiveTable, now: float) -> str | None:
        """Why a table should be archived now, or None."""
        if live.fanout.conns:
            return None
        if live.closed:
            return "closed"
        limits, idle = self.limits, now - live.last_activity
        if not live.joined and now - live.created > limits.unjoined_expiry:
            return "unjoined"
        # short lives for what costs a patient abuser nothing: a table that never started,
        # and one that never had two people at it (one person and bots, or bots alone)
        if not live.started and idle > limits.unstarted_after:
            return "unstarted"
        if len(live.humans) < 2 and idle > limits.lonely_after:
            return "lonely"
        if idle > limits.abandoned_after:
            return "abandoned"
        return None

    async def tables_made_by(self, address: str) -> int:
        """The live tables ``address`` made: here, or with several processes in the whole
        service (a read of the database; in-memory with one process)."""
        if self.peers is None:
            return sum(1 for t in self.tables.values() if t.creator == address)
        return len(await self.peers.made_by(address))

    async def search_bots_of(self, address: str) -> int:
        """The search-bot seats (pimc and its levels) of the open tables ``address`` made (with
        several processes: of the whole service)."""
        if self.peers is None:
            return sum(1 for t in self.tables.values() if t.creator == address and not t.closed
                       for s in t.seats if s.bot and algorithm_of(s.bot) in SEARCH_BOTS)
        return sum(1 for bots in await self.peers.made_by(address)
                   for bot in bots if bot and algorithm_of(bot) in SEARCH_BOTS)

    async def sweep(self, now: float | None = None) -> int:
        """Archive the tables that expired; returns how many."""
        now = time.time() if now is None else now
        done = 0
        for live in list(self.tables.values()):
            reason = self.expired(live, now)
            if reason is not None and await self.archive(live, reason):
                done += 1
        if done:
            log.info("archived %d tables", done)
        return done

    async def archive(self, live: LiveTable, reason: str) -> bool:
        """Archive a live table (it expired, or it is evicted): stored so, no longer live
        here; a client still connected is told and closed for good. False when the database
        could not store it now."""
        try:
            await self.store.commit(self.storage.archive, live.id, reason)
        except StorageUnavailable:
            log.warning("table %s could not be archived now", live.id, exc_info=True)
            return False
        live.turns.cancel()
        if self.tables.get(live.id) is live:
            del self.tables[live.id]
        if live.fanout.conns:
            live.fanout.send_all(Error.encode("archived", MESSAGES["archived"].format(
                id=live.id, reason=reason)))
            live.fanout.close(CloseCode.GONE)
        return True

    async def sweeper(self) -> None:
        while True:
            await asyncio.sleep(self.limits.sweep_interval)
            # a task of its own: a fault of one sweep is logged (by the scheduler), the next comes
            await asyncio.wait((self.scheduler.task(self.sweep()),))

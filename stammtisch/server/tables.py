"""Live tables: the in-memory ``Table`` per table id, the bot driver, and the broadcast.

One asyncio lock per table makes it the single writer of that table: an event (a deal's deck,
one action) is applied to the in-memory table (the engine validates it), committed to the
database, and only then put on every connection's outgoing queue. If the commit fails, the
table is rebuilt from the database (the authority) and the client gets an error.

Each connection has its own bounded outgoing queue and sender task, so a slow client never
holds up a table; a client whose queue overflows is disconnected (it reconnects and gets the
full view again).

Flow of a table: created → started (``start``: first dealer drawn, deal 1 dealt) → deal after
deal. When a deal is over, the next one starts after ``deal_pause`` seconds, or at once when
a seated human sends ``{"type": "next"}``. Bot seats act ``bot_delay`` seconds after their
turn comes.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import time
from dataclasses import dataclass
from typing import Any

from ..bots import make_bot
from ..games.base import IllegalAction
from ..rules import ruleset as build_ruleset
from ..table import Table, draw_first_dealer, summarise_deal
from .storage import Storage, StoredSeat, StoredTable, token_digest

try:  # orjson is much faster for the many views we serialise; json is the fallback
    import orjson

    def dumps(obj: Any) -> str:
        return orjson.dumps(obj).decode()
except ImportError:  # pragma: no cover
    import json

    def dumps(obj: Any) -> str:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


log = logging.getLogger("stammtisch.server")

_sysrand = secrets.SystemRandom()

QUEUE_LIMIT = 512  # outgoing messages waiting for one slow client before it is dropped


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_table_id() -> str:
    return secrets.token_urlsafe(9)


@dataclass
class Seat:
    name: str
    bot: str | None
    digest: str | None  # SHA-256 of the seat token (None for bot seats)


class Conn:
    """One WebSocket client: its seat (None: spectator), outgoing queue and rate bucket."""

    def __init__(self, seat: int | None, send_text, close, rate: float = 20.0,
                 burst: float = 20.0):
        self.seat = seat
        self._send_text = send_text
        self._close = close
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(QUEUE_LIMIT)
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.stamp = time.monotonic()
        self.strikes = 0
        self.closed = False

    def allow(self) -> bool:
        """Token bucket: ``burst`` messages at once, refilled at ``rate`` per second."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        self.strikes += 1
        return False

    def send(self, text: str) -> None:
        if self.closed:
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            log.warning("dropping a client that does not read its messages")
            self.closed = True
            # make room for the close marker
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)

    async def sender(self) -> None:
        """Send queued messages in order until the close marker (None)."""
        try:
            while True:
                text = await self.queue.get()
                if text is None:
                    break
                await self._send_text(text)
        except Exception:  # the socket went away; the receive loop will notice
            pass
        finally:
            self.closed = True
            try:
                await self._close()
            except Exception:
                pass

    def stop(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


class LiveTable:
    def __init__(self, manager: TableManager, table_id: str, ruleset_id: str, options: dict,
                 seats: list[Seat], admin_digest: str, spectator_digest: str):
        self.manager = manager
        self.id = table_id
        self.ruleset_id = ruleset_id
        self.options = options
        self.rules = build_ruleset(ruleset_id, options)
        self.seats = seats
        self.admin_digest = admin_digest
        self.spectator_digest = spectator_digest
        self.table = Table(self.rules, [s.name for s in seats], 0)
        self.started = False
        self.broken: str | None = None
        self.lock = asyncio.Lock()
        self.conns: list[Conn] = []
        self.events = 0  # deal starts + actions so far: the number of the latest state
        self.score: list[dict] = []
        self.bots = {i: make_bot(s.bot, self.rules.family) for i, s in enumerate(seats) if s.bot}
        self.pending: asyncio.TimerHandle | asyncio.Task | None = None
        self.next_deal_at: float | None = None
        self._info_cache: tuple[int, int, str] | None = None
        self._view_cache: tuple[int, dict] | None = None  # (event, seat → view JSON)
        self._dealer_cache: tuple[int, int] | None = None  # (event, dealer of its views)
        self._msg_cache: tuple[int, dict] | None = None
        self._presence_version = 0

    # --- identity --------------------------------------------------------------------

    def auth(self, token: str) -> tuple[str, int | None] | None:
        """Who a token is: ("seat", i), ("spectator", None), ("admin", None) or None.

        Every digest is compared (constant time, no early exit)."""
        if not isinstance(token, str) or not token or len(token) > 200:
            return None
        d = token_digest(token)
        found = None
        for i, s in enumerate(self.seats):
            if s.digest is not None and hmac.compare_digest(d, s.digest):
                found = ("seat", i)
        if hmac.compare_digest(d, self.spectator_digest):
            found = ("spectator", None)
        if hmac.compare_digest(d, self.admin_digest):
            found = ("admin", None)
        return found

    # --- rebuilding ------------------------------------------------------------------

    @classmethod
    def from_stored(cls, manager: TableManager, st: StoredTable) -> LiveTable:
        live = cls(manager, st.id, st.ruleset, st.options,
                   [Seat(s.name, s.bot, s.token_digest) for s in st.seats],
                   st.admin_digest, st.spectator_digest)
        live._replay(st)
        return live

    def _replay(self, st: StoredTable) -> None:
        self.table = Table(self.rules, [s.name for s in self.seats], st.first_dealer or 0)
        self.started = st.started
        self.events = 0
        self.score = []
        for deck, actions in st.deals:
            self.table.start_deal(self.table.game.deck_from_strings(deck))
            self.events += 1
            for seat, text in actions:
                self.table.apply(text, seat)
                self.events += 1
            self._note_finished()
        self._info_cache = self._view_cache = self._msg_cache = self._dealer_cache = None

    def reload(self) -> None:
        st = self.manager.storage.load_table(self.id)
        self._replay(st)

    # --- what clients see ------------------------------------------------------------

    def connected(self) -> list[bool]:
        on = [False] * len(self.seats)
        for c in self.conns:
            if c.seat is not None and not c.closed:
                on[c.seat] = True
        for i, s in enumerate(self.seats):
            if s.bot:
                on[i] = True
        return on

    def _note_finished(self) -> None:
        t = self.table
        while len(self.score) < len(t.deals) and t.deals[len(self.score)].result is not None:
            k = len(self.score)
            deal = summarise_deal(t.deals[k].result, t.num_players)
            entry = {"deal": k + 1, "dealer": deal["dealer"], "net": deal["net"],
                     "outcome": deal["outcome"],
                     "pot": t.ledger.pot + t.ledger.reserve}  # called as each deal ends
            if "contract" in deal:
                entry["declarer"] = deal["declarer"]
                entry["contract"] = deal["contract"]
            self.score.append(entry)

    def info(self) -> dict:
        t = self.table
        return {
            "id": self.id,
            "ruleset": self.ruleset_id,
            "title": self.rules.title,
            "family": self.rules.family,
            # seats are listed in the direction of play; Modern Tapp plays counter-clockwise
            "clockwise": getattr(self.rules, "clockwise", True),
            "options": self.options,
            "players": list(t.players),
            "seats": [{"name": s.name, "bot": s.bot, "connected": c}
                      for s, c in zip(self.seats, self.connected())],
            "started": self.started,
            "in_deal": t.in_deal,
            "deal_number": len(t.deals),
            "dealer": self._dealer(),
            "balances": t.ledger.player_balances(),
            "pot": t.ledger.pot,
            "reserve": t.ledger.reserve,
            "score": self.score,
            "events": self.events,
            "next_deal_at": self.next_deal_at,
            "broken": self.broken,
        }

    def _dealer(self) -> int:
        """The dealer of the deal on the table (as its views say), else the next dealer."""
        if self.table.state is None:
            return self.table.dealer
        if self._dealer_cache is None or self._dealer_cache[0] != self.events:
            self.view(None)
        return self._dealer_cache[1]

    def info_json(self) -> str:
        key = (self.events, self._presence_version)
        if self._info_cache is None or self._info_cache[:2] != key:
            self._info_cache = (*key, dumps(self.info()))
        return self._info_cache[2]

    def view(self, seat: int | None) -> dict | None:
        state = self.table.state
        if state is None:
            return None
        view = state.view(seat)
        self._dealer_cache = (self.events, view["dealer"])
        return view

    def view_json(self, seat: int | None) -> str:
        """A seat's view as JSON, computed once per event. Only the text is kept: the view's
        many small dicts and lists would otherwise live until the next event, and the
        garbage collector's passes over them were the server's longest stalls."""
        if self._view_cache is None or self._view_cache[0] != self.events:
            self._view_cache = (self.events, {})
        texts = self._view_cache[1]
        text = texts.get(seat)
        if text is None:
            text = texts[seat] = dumps(self.view(seat))
        return text

    def state_message(self, seat: int | None) -> str:
        """The state message for a seat (None: spectators), serialised once per event."""
        if self._msg_cache is None or self._msg_cache[0] != self.events:
            self._msg_cache = (self.events, {})
        msgs = self._msg_cache[1]
        key = (seat, self._presence_version)
        if key not in msgs:
            view_json = self.view_json(seat)
            msgs[key] = ('{"type":"state","event":%d,"view":%s,"table":%s}'
                         % (self.events, view_json, self.info_json()))
        return msgs[key]

    def broadcast_state(self) -> None:
        for c in self.conns:
            c.send(self.state_message(c.seat))

    def broadcast_presence(self) -> None:
        self._presence_version += 1
        msg = dumps({"type": "presence", "seats": self.info()["seats"]})
        for c in self.conns:
            c.send(msg)

    # --- connections -----------------------------------------------------------------

    def attach(self, conn: Conn) -> None:
        self.conns.append(conn)
        conn.send(self.state_message(conn.seat))
        self.broadcast_presence()

    def detach(self, conn: Conn) -> None:
        if conn in self.conns:
            self.conns.remove(conn)
            conn.stop()
            self.broadcast_presence()

    # --- events (callers hold no lock; these take it) ---------------------------------

    async def start(self) -> None:
        async with self.lock:
            if self.started:
                raise IllegalAction("started", "the table has already started")
            n = len(self.seats)
            first = draw_first_dealer(self.rules, _sysrand)  # by Ace or by lot, as the rules say
            self.table = Table(self.rules, [s.name for s in self.seats], first)
            self._deal(first_dealer=first)
            self.started = True
            self._after_event()

    async def next_deal(self, early: bool = False) -> None:
        async with self.lock:
            if not self.started or self.table.in_deal or self.broken:
                if early:
                    raise IllegalAction("deal in progress", "the deal is not over yet")
                return
            self._deal()
            self._after_event()

    def _deal(self, first_dealer: int | None = None) -> None:
        deck = self.table.shuffled_deck(_sysrand)
        number = len(self.table.deals)
        names = [self.table.pack.cards[c] for c in deck]
        self.manager.storage.start_deal(self.id, number, names, first_dealer)  # commit first
        self.table.start_deal(deck)
        self.events += 1
        self._note_finished()

    async def act(self, seat: int, text: str) -> None:
        """A seat's action; raises IllegalAction (state unchanged) when refused."""
        async with self.lock:
            self._act_locked(seat, text)

    def _act_locked(self, seat: int, text: str) -> None:
        if self.broken:
            raise IllegalAction("table broken", self.broken)
        if not self.started:
            raise IllegalAction("not started", "the table has not started yet")
        t = self.table
        t.apply(text, seat)  # the engine is the judge; raises with the state unchanged
        deal = len(t.deals) - 1
        entry = t.deals[-1].actions[-1]
        canonical = entry["action"] if isinstance(entry, dict) else entry
        try:
            self.manager.storage.append_action(self.id, deal, len(t.deals[-1].actions) - 1,
                                               seat, canonical)
        except Exception:
            log.exception("table %s: could not store an action; rebuilding from the database",
                          self.id)
            self.reload()
            raise IllegalAction("storage", "the server could not store the action; try again")
        self.events += 1
        self._note_finished()
        self._after_event()

    def _after_event(self) -> None:
        self.schedule()
        self.broadcast_state()

    # --- scheduling: bots and the next deal -------------------------------------------

    def schedule(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None
        self.next_deal_at = None
        self._info_cache = self._msg_cache = None
        if not self.started or self.broken:
            return
        t = self.table
        loop = asyncio.get_running_loop()
        if t.in_deal:
            seat = t.state.current_player()
            if seat in self.bots:
                self.pending = loop.create_task(self._bot_turn(self.events, seat))
        else:
            pause = self.manager.deal_pause
            self.next_deal_at = time.time() + pause
            self.pending = loop.create_task(self._next_deal_later(pause))

    async def _next_deal_later(self, pause: float) -> None:
        await asyncio.sleep(pause)
        self.pending = None
        try:
            await self.next_deal()
        except Exception:
            log.exception("table %s: next deal failed", self.id)

    async def _bot_turn(self, event: int, seat: int) -> None:
        await asyncio.sleep(self.manager.bot_delay)
        async with self.lock:
            if self.events != event:
                return
            self.pending = None
            state = self.table.state
            try:
                action = self.bots[seat].act(state, seat)
                self._act_locked(seat, state.action_to_string(action))
            except Exception:
                log.exception("table %s: bot at seat %d failed", self.id, seat)
                self.broken = f"the bot at seat {seat} failed"


class TableManager:
    def __init__(self, storage: Storage, bot_delay: float = 0.6, deal_pause: float = 8.0,
                 base_url: str = ""):
        self.storage = storage
        self.bot_delay = bot_delay
        self.deal_pause = deal_pause
        self.tables: dict[str, LiveTable] = {}

    def load_all(self) -> None:
        """Rebuild every table from the database (replaying its decks and actions)."""
        for tid in self.storage.table_ids():
            st = self.storage.load_table(tid)
            try:
                live = LiveTable.from_stored(self, st)
            except Exception as e:  # a table the current engine cannot replay
                log.exception("table %s cannot be rebuilt", tid)
                live = LiveTable(self, st.id, st.ruleset, st.options,
                                 [Seat(s.name, s.bot, s.token_digest) for s in st.seats],
                                 st.admin_digest, st.spectator_digest)
                live.broken = f"the table cannot be rebuilt: {e}"
            self.tables[tid] = live

    def resume(self) -> None:
        """Schedule bots and next deals of loaded tables (needs the running loop)."""
        for live in self.tables.values():
            live.schedule()

    def shutdown(self) -> None:
        for live in self.tables.values():
            if live.pending is not None:
                live.pending.cancel()
                live.pending = None
            for c in list(live.conns):
                c.stop()

    def get(self, table_id: str) -> LiveTable | None:
        return self.tables.get(table_id)

    def create(self, ruleset_id: str, options: dict, seats: list[tuple[str, str | None]]) -> dict:
        """Create a table; returns the tokens (shown once: only digests are stored)."""
        table_id = new_table_id()
        while table_id in self.tables:
            table_id = new_table_id()
        admin, spectator = new_token(), new_token()
        tokens = [None if bot else new_token() for _, bot in seats]
        live_seats = [Seat(name, bot, token_digest(tok) if tok else None)
                      for (name, bot), tok in zip(seats, tokens)]
        live = LiveTable(self, table_id, ruleset_id, options, live_seats,
                         token_digest(admin), token_digest(spectator))
        self.storage.create_table(
            table_id, ruleset_id, options,
            [StoredSeat(i, s.name, s.bot, s.digest) for i, s in enumerate(live_seats)],
            live.admin_digest, live.spectator_digest,
        )
        self.tables[table_id] = live
        return {"id": table_id, "admin_token": admin, "spectator_token": spectator,
                "seat_tokens": tokens, "table": live}

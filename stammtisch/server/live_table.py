"""A live table: its rules of play as one class (``LiveTable``), and the events that change it
(a deal, an action), each applied, committed and broadcast.

The table holds its collaborators and reaches each through a narrow interface: the turn clock
(``table_turns.TurnClock``: the timers, their pacing, the bots), the social side
(``table_social.TableSocial``: chat, hints, rematch; it reaches back through ``SocialHost``),
the fan-out (``fanout.TableFanout``: the connections and the JSON; it is handed one snapshot
of what the clients are shown, ``table_info.TableShown``, per broadcast), its record in the
event store (``event_store.TableRecord``) and the registry of tables (``table_core.Registry``).

One asyncio lock per table makes it the single writer of that table: an event (a deal's deck,
one action) is applied to the in-memory table (the engine validates it), committed through
the event store, and only then put on every connection's outgoing queue (the fan-out).
Whoever reads a table's state (a connecting client, ``GET /api/tables/{id}``) takes the same
lock, so nobody sees an event before its commit.

A player's action enters once, through ``take`` with the lock held, whether it came from the
socket's read (taken at once when the lock is free and nothing is ahead of it) or from the
connection's queue (``routes.live.Connection.action`` is the one place that knows). It is
applied, its row handed to the group commit (``_commit``), and the rest (the broadcast, or
the refusal) done when the commit is over, the lock held until then. A failed or timed-out
commit is retried with backoff for ``ServerLimits.commit_deadline`` seconds; if it still
fails, the event is undone (the table is rebuilt as it was before its latest deal, and that
deal's committed events replayed), the client is told "try again", and nothing is broadcast.

Flow of a table: created → started (``start``: first dealer drawn, deal 1 dealt) → deal after
deal, up to its deal limit → closed by its admin (no more deals; every seat may download the
full record) → archived (no longer loaded at start-up).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import os
import random
import time
import zlib
from collections.abc import Callable
from functools import partial
from typing import Any, Self

from ..bots import SEARCH_BOTS, algorithm_of
from ..explain import explain_messages
from ..games.base import IllegalAction
from ..i18n import Message as CatalogueMessage
from ..rules import Rules
from ..rules import ruleset as build_ruleset
from ..table import Table, draw_first_dealer, summarise_deal
from .buckets import Bucket
from .event_store import TableRecord
from .fanout import Conn, TableFanout
from .limits import ServerLimits
from .locks import TableLock
from .names import look_alike_pair
from .protocol import ChatLines, CloseCode
from .refusals import MESSAGES, STORAGE_ERRORS, LeaseLost, Refusal, RefusalKind, StorageUnavailable
from .replay import replay_deal
from .storage import Storage, StoredSocial, StoredTable, Write, token_digest
from .table_core import SCORE_ROWS_SHOWN, SERVER_FAULT, TRY_AGAIN, DealStart, History, Registry, Seat
from .table_info import TableShown
from .table_social import SOCIAL_MESSAGES, TableSocial, new_token
from .table_turns import TurnClock
from .thinker import DealSoFar

log = logging.getLogger("stammtisch.server")


async def awaited(start: Callable[[Callable[[BaseException | None], None]], None]) -> None:
    """An event started with ``start(then)`` (``LiveTable.take``, ``_play``, ``_commit``),
    awaited: returns once it is committed and shown; raises its refusal or fault."""
    outcome: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

    def then(error: BaseException | None) -> None:
        if not outcome.done():  # the caller may be gone (cancelled); the event counts anyway
            outcome.set_result(error)

    start(then)
    error = await outcome
    if error is not None:
        raise error


class LiveTable:
    """One live table: its state, what its clients see of it, its events, timers and social
    features (see the module's docstring)."""

    __slots__ = ("admin_digest", "away", "broken", "buckets", "clock", "closed", "committed",
                 "created", "creator", "deal_key", "deal_start", "dropped", "evening", "events", "fanout",
                 "first_dealer", "hints", "humans", "id", "joined", "last_activity",
                 "last_explanation", "last_watched", "lease", "limits", "listed", "lobby_seats", "lock",
                 "manager", "max_deals", "next_ready", "open_seats", "options", "pace", "record",
                 "rules", "ruleset_id", "score", "scored", "seats", "social", "spectator_digest",
                 "started", "table", "turn_seconds", "turns")


    def __init__(self, manager: Registry, table_id: str, ruleset_id: str, options: dict[str, Any],
                 seats: list[Seat], admin_digest: str, spectator_digest: str,
                 max_deals: int | None = None, rules: Rules | None = None):
        self.manager = manager
        self.record = TableRecord(manager.store, self)
        self.id = table_id
        self.ruleset_id = ruleset_id
        self.options = options
        # the route that made the table passes the rules it validated; a loaded table builds them
        self.rules = rules if rules is not None else build_ruleset(ruleset_id, options)
        self.seats = seats
        self.admin_digest = admin_digest
        self.spectator_digest = spectator_digest
        self.max_deals = max_deals
        self.table = Table(self.rules, [s.name for s in seats], 0)
        self.first_dealer: int | None = None
        self.started = False
        self.closed = False
        # several processes (peers.py): the epoch of the lease this copy was taken under
        # (None: not yet), and whether it was dropped here (another process runs the table)
        self.lease: int | None = None
        self.dropped = False
        self.broken: str | None = None
        self.lock = TableLock()
        self.fanout = TableFanout(self.shown, [s.bot is not None for s in seats],
                                  manager.limits.presence_delay, manager.scheduler)
        self.events = 0  # deal starts + actions so far: the number of the latest state
        # the latest deal's committed deck and actions (a list of at most one), and the table
        # just before it: the undo source
        self.committed: History = []
        self.deal_start: DealStart | None = None
        # the latest deal's key (its actions are Storage.move_row rows); None: no deal yet
        self.deal_key: int | None = None
        self.score: list[dict[str, Any]] = []  # the score sheet's last SCORE_ROWS_SHOWN rows
        self.scored = 0  # the finished deals so far (rows of the whole score sheet)
        self.last_explanation: list[CatalogueMessage] | None = None
        self.clock = manager.scheduler  # the time and the timers (a test's clock too)
        self.limits: ServerLimits = manager.limits
        self.turns = TurnClock(self.clock, manager, self.rules.family,
                               {i: s.bot for i, s in enumerate(seats) if s.bot})
        now = self.clock.time()
        self.created = now
        self.last_activity = now  # the latest event, connection or departure (wall clock)
        self.last_watched = self.clock.monotonic()  # when a person was last connected
        self.joined = False  # somebody connected at least once
        self.buckets: dict[int, Bucket] = {}
        # --- social
        self.turn_seconds = 0  # the turn timer (0: off)
        self.away: set[int] = set()  # human seats a stand-in bot plays for until they return
        self.listed = False  # shown in the lobby's list of open tables
        self.open_seats: set[int] = set()  # seats a stranger from the lobby may still take
        # "wait": the next deal comes when every seated person asked for it (``next_ready``);
        # a number: that many seconds after a deal; None: the server's pause (a table of bots)
        self.pace: str | float | None = "wait" if any(s.bot is None for s in seats) else None
        self.next_ready: set[int] = set()
        self.hints = False  # a practice table: a seat on turn may ask the search bot for a hint
        self.creator = ""  # the address that made the table (its live tables are counted)
        self.lobby_seats: set[int] = set()  # seats that were the lobby's (never the admin's)
        self.humans: set[int] = set()  # human seats that ever connected
        # a rematch's evening: the tables before it, oldest first ({"table", "deals", "balances"})
        self.evening: list[dict[str, Any]] = []
        self.social = TableSocial(self, manager)  # chat, hints, rematch

    def set_social(self, social: StoredSocial) -> None:
        self.turn_seconds = social.turn_seconds
        self.listed = social.listed
        self.open_seats = {s for s in social.open_seats if 0 <= s < len(self.seats)}
        self.away |= self.open_seats  # a bot plays a free seat until somebody takes it
        if social.pace is not None:
            self.pace = "wait" if social.pace == "wait" else float(social.pace)
        self.hints = social.hints
        self.creator = social.creator
        self.lobby_seats = set(social.lobby_seats) | self.open_seats
        self.humans = set(social.humans)
        self.evening = list(social.evening)
        self.social.load(social)

    def auth(self, token: str) -> tuple[str, int | None] | None:
        """Who a token is: ("seat", i), ("spectator", None), ("admin", None) or None.

        Every digest is compared (constant time, no early exit)."""
        if not isinstance(token, str) or not token or len(token) > 200:
            return None
        d = token_digest(token)
        found: tuple[str, int | None] | None = None
        for i, s in enumerate(self.seats):
            if s.digest is not None and hmac.compare_digest(d, s.digest):
                found = ("seat", i)
        if hmac.compare_digest(d, self.spectator_digest):
            found = ("spectator", None)
        if hmac.compare_digest(d, self.admin_digest):
            found = ("admin", None)
        return found

    def bucket_for(self, seat: int | None) -> Bucket:
        """The rate bucket of a seat (shared by its sockets); a spectator gets its own."""
        if seat is None:
            return Bucket(self.limits.seat_rate, self.limits.seat_burst)
        bucket = self.buckets.get(seat)
        if bucket is None:
            bucket = self.buckets[seat] = Bucket(self.limits.seat_rate, self.limits.seat_burst)
        return bucket

    @classmethod
    def from_stored(cls, manager: Registry, st: StoredTable) -> Self:
        live = cls(manager, st.id, st.ruleset, st.options,
                   [Seat(s.name, s.bot, s.token_digest) for s in st.seats],
                   st.admin_digest, st.spectator_digest, st.max_deals)
        live.created = st.created or live.created
        live.last_activity = st.last_event_at or live.created
        live.last_watched = -math.inf  # after a restart, bots wait until somebody comes
        live.joined = st.joined_at is not None
        live.closed = st.closed_at is not None
        live.set_social(st.social)
        live._replay(st.first_dealer, st.started, st.deals)
        live.deal_key = st.last_deal_key
        return live

    def _replay(self, first_dealer: int | None, started: bool, deals: History,
                start: DealStart | None = None) -> None:
        """Rebuild the table from its deals (``start``: as it was before the first of them)."""
        self.table = Table(self.rules, [s.name for s in self.seats], first_dealer or 0)
        self.first_dealer = first_dealer
        self.started = started
        if start is None:
            self.events = self.scored = 0
            self.score = []
            self.last_explanation = None
        else:
            self.table.resume(start.dealer, start.balances, start.deals_before)
            self.events, self.scored = start.events, start.scored
            self.score = list(start.score)
            self.last_explanation = start.explanation
        self.deal_start = start
        self.committed = []
        for deck, actions in deals:
            self.deal_start = DealStart.before(self.table, self.events, self.score, self.scored,
                                               self.last_explanation)
            replay_deal(self.table, deck, actions)
            self.events += 1 + len(actions)
            self.committed = [(list(deck), list(actions))]
            self._note_finished()
            self.table.forget_finished()
        self.fanout.reset()

    def _undo(self) -> None:
        """Back to the last committed event (after a refused commit or an engine fault): the
        table before its latest deal, and that deal's committed events replayed."""
        history = [(deck, list(actions)) for deck, actions in self.committed]
        self._replay(self.first_dealer, self.started, history, self.deal_start)

    def _note_finished(self) -> None:
        t = self.table
        # only the latest deal can be unscored: this runs after every event
        while (self.scored < t.deal_count
               and t.deals[self.scored - t.deals_forgotten].result is not None):
            k = self.scored
            result = t.deals[k - t.deals_forgotten].result
            assert result is not None  # the loop condition
            deal = summarise_deal(result, t.num_players)
            entry = {"deal": k + 1, "dealer": deal["dealer"], "net": deal["net"],
                     "outcome": deal["outcome"],
                     "pot": t.ledger.pot + t.ledger.reserve}  # called as each deal ends
            if "contract" in deal:
                entry["declarer"] = deal["declarer"]
                entry["contract"] = deal["contract"]
            self.score = [*self.score[1 - SCORE_ROWS_SHOWN:], entry]
            self.scored += 1
            # why every counter moved, for the last finished deal only (messages stay small),
            # as catalogue messages: each page renders them in its reader's language
            suits = str(getattr(self.rules, "suits", "french"))
            self.last_explanation = explain_messages(result.summary, t.players, suits)

    def shown(self) -> TableShown:
        """The table as its clients are shown it now: one snapshot for the fan-out (per
        broadcast or state sent) and for the routes."""
        turns = self.turns
        return TableShown(self.id, self.ruleset_id, self.rules, self.options, self.table,
                          self.events, self.seats, self.away, self.open_seats, self.started,
                          self.max_deals, self.closed, self.broken, self.turn_seconds,
                          self.listed, self.social.rematch_id, self.social.rematch_votes, self.pace,
                          turns.deal_pause(None), self.next_ready, self.hints,
                          turns.next_deal_at, turns.waiting, turns.turn_deadline,
                          turns.bot_trouble, self.score, self.scored, self.last_explanation,
                          self.social.rematch_waiting(), self.social.rematch_deadline,
                          self.evening, self.social.spectator_chat)

    def info(self) -> dict[str, Any]:
        return self.shown().info(self.fanout.seats_online())

    def view(self, seat: int | None, head: bool = True) -> dict[str, Any] | None:
        state = self.table.state
        if state is None:
            return None
        return state.view(seat, head)

    def broadcast_state(self) -> None:
        self.fanout.broadcast_state()

    def _check_open(self) -> None:
        if self.closed:
            raise Refusal("closed", "the table is closed", RefusalKind.CONFLICT)
        if self.broken:
            raise Refusal("table broken", self.broken, RefusalKind.CONFLICT)

    def _deals_on(self) -> bool:
        """Whether the next deal may come now (the lock held)."""
        return (self.started and not self.table.in_deal and not self.broken and not self.closed
                and not (self.max_deals is not None and self.table.deal_count >= self.max_deals)
                and not self.social.rematch_votes)

    def seated_humans(self) -> set[int]:
        """The human seats whose player is at the table now (connected)."""
        return {seat for seat in self.fanout.seats_online() if not self.seats[seat].bot}

    def deal_so_far(self) -> DealSoFar:
        """The deal in progress as the thinker's worker rebuilds it."""
        t = self.table
        log_entry = t.deals[-1]
        ts = t.table_state()
        return DealSoFar(self.ruleset_id, dict(self.options), ts.dealer, ts.pot, ts.reserve,
                         tuple(log_entry.deck),
                         tuple(a["action"] if isinstance(a, dict) else a for a in log_entry.actions))


    def rematch_of(self, creator: str) -> tuple[str, dict[str, Any], list[tuple[str, str | None]],
                                               int | None, StoredSocial]:
        """What a rematch of this table is made of (``TableManager.create``'s arguments):
        the same rule set, options, seats, deal limit and social settings, made by
        ``creator``; and the evening goes on: this table joins the tables before it, and the
        chat lines kept here are the new table's first."""
        t = self.table
        if t.in_deal and self.deal_start is not None:  # a closed table's unfinished deal: not counted
            balances = [self.deal_start.balances.get(p, 0) for p in range(t.num_players)]
        else:
            balances = t.ledger.player_balances()
        evening = [*self.evening, {"table": self.id, "deals": self.scored, "balances": balances}]
        chat = self.social.stored_chat()
        social = StoredSocial(turn_seconds=self.turn_seconds, listed=self.listed,
                              open_seats=sorted(self.open_seats), creator=creator,
                              lobby_seats=sorted(self.lobby_seats),
                              pace=None if self.pace is None else str(self.pace),
                              hints=self.hints, evening=evening, chat=chat, chat_count=len(chat),
                              spectator_chat=self.social.spectator_chat)
        return (self.ruleset_id, self.options, [(s.name, s.bot) for s in self.seats],
                self.max_deals, social)

    def close_for_rematch(self) -> None:
        """The rematch was made: this table is closed, its timers stopped."""
        self.closed = True
        self.turns.stop()
        self.fanout.seats_changed()

    def _set_away(self, seat: int, away: bool) -> None:
        """Mark a human seat away (a stand-in bot plays for it) or back; the caller holds the
        lock. Coming back restarts the seat's turn timer if it is on turn."""
        if away == (seat in self.away) or self.seats[seat].bot:
            return
        if away:
            self.away.add(seat)
            self.turns.turn_deadline = None  # the stand-in plays now
            log.info("table %s: seat %d is away; a bot plays for it", self.id, seat)
        else:
            self.away.discard(seat)
            self.schedule()  # a stand-in's pending turn is cancelled; the timer starts again
        self.fanout.seats_changed()
        self.broadcast_state()

    async def back(self, seat: int) -> None:
        """The player of an away seat says he is back."""
        async with self.lock:
            self._set_away(seat, False)

    async def take_seat(self, seat: int | None, name: str | None = None) -> tuple[int, str]:
        """A stranger from the lobby takes an open seat (``None``: the first one); returns the
        seat and its new token. ``name`` (already cleaned): his name, taken only before the
        table starts (a started table keeps the names of its deals). Raises a Refusal
        (nothing changed) when no seat is free or the name clashes with another seat's."""
        async with self.lock:
            if not self.listed or self.closed or self.broken or not self.open_seats:
                raise Refusal("no free seat", SOCIAL_MESSAGES["no free seat"])
            if seat is None:
                seat = min(self.open_seats)
            if seat not in self.open_seats:
                raise Refusal("taken", SOCIAL_MESSAGES["taken"], RefusalKind.CONFLICT)
            if self.started or name == self.seats[seat].name:
                name = None
            if name is not None:
                names = [name if i == seat else s.name for i, s in enumerate(self.seats)]
                alike = look_alike_pair(names)
                if len({n.casefold() for n in names}) != len(names) or alike:
                    raise Refusal("names", SOCIAL_MESSAGES["names"].format(name=name),
                                  RefusalKind.INVALID)
            token = new_token()
            digest = token_digest(token)
            left = sorted(self.open_seats - {seat})
            try:
                await self.record.take_seat(seat, digest, left, name)
            except StorageUnavailable:
                log.warning("table %s: could not store a taken seat", self.id, exc_info=True)
                raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
            self.seats[seat].digest = digest
            if name is not None:  # not started: the table has no deals to keep a name for
                self.seats[seat].name = name
                self.table = Table(self.rules, [s.name for s in self.seats], 0)
            self.open_seats.discard(seat)
            self.fanout.drop_seat(seat, "this seat was taken by a player from the lobby")
            self.fanout.seats_changed()
            self.broadcast_state()
            return seat, token

    def schedule(self, delay: float | None = None) -> None:
        """What comes next, on the turn clock: a bot's turn, the turn timer of the seat on
        turn, or the next deal (``delay``: after that many seconds instead of the usual);
        nothing while nobody watches, or while the table waits for its players."""
        turns = self.turns
        turns.stop()
        self.fanout.info_changed()
        if not self.started or self.broken or self.closed:
            return
        if self._wait_for_people():
            return
        turns.waiting = False
        t = self.table
        if t.in_deal:
            assert t.state is not None
            seat = t.state.current_player()
            if turns.thinking_for == self.events:
                return  # a search bot is thinking about this very state already
            if seat in turns.bots or seat in self.away:
                turns.bot_after(delay, partial(turns.run_soon, self._bot_turn, self.events, seat,
                                               False))
            elif self.turn_seconds > 0:  # the turn timer: a stand-in bot plays when it runs out
                turns.turn_timer(self.turn_seconds if delay is None else delay,
                                 partial(turns.run_soon, self._bot_turn, self.events, seat, True))
        elif (humans := {i for i, s in enumerate(self.seats) if not s.bot}) and humans <= self.away:
            turns.waiting = True  # stand-ins do not play deal after deal on their own
        elif self.social.rematch_votes:  # a rematch was asked for: the next deal waits for the answer
            return
        elif self.max_deals is None or self.table.deal_count < self.max_deals:
            if self.pace == "wait":
                if not (seated := self.seated_humans()) or not seated <= self.next_ready:
                    return  # until every seated player pressed Next (or left); nobody seated: wait
                pause = 0.0 if delay is None else delay
            else:
                pause = turns.deal_pause(self.pace) if delay is None else delay
            turns.deal_after(pause, self._deal_due)

    def _wait_for_people(self) -> bool:
        """Whether bots must stop now: bots act and deals follow only while a person watches
        (and ``watcher_grace`` seconds after); then the table waits for a client."""
        if self.fanout.watched() or \
                self.clock.monotonic() - self.last_watched < self.limits.watcher_grace:
            return False
        self.turns.waiting = True
        self.fanout.info_changed()
        return True

    def _deal_due(self) -> None:
        """The pause after a deal is over: the next deal. With the lock free, it is dealt here
        and its row joins the group commit (``_commit``), as an action taken at once is:
        no task, no sleeping coroutine and no chain of coroutines suspended over the commit.
        With the lock held (a client joining, say), a task waits for it (``next_deal``). A
        deal refused (a database hiccup) is tried again later; a fault is logged."""
        def refused(error: BaseException) -> None:
            if isinstance(error, Refusal):
                log.warning("table %s: next deal refused (%s); trying again", self.id, error.rule)
                self.schedule(delay=self.turns.retry_later)
            else:
                log.error("table %s: next deal failed", self.id, exc_info=error)

        async def queued() -> None:
            self.turns.pending = None
            try:
                await self.next_deal()
            except Refusal as e:  # a fault goes up: the scheduler logs it
                refused(e)

        self.turns.pending = None
        if self._wait_for_people():
            return
        if not self.lock.try_acquire():
            self.turns.run(queued())
            return
        try:
            if not self._deals_on():
                self.lock.release()
                return
            number, names, key, before = self._deal_in_memory()
        except Refusal as e:
            self.lock.release()
            refused(e)
            return
        except BaseException:  # a fault too: the lock is free again, and the fault goes up
            self.lock.release()
            raise

        def committed() -> None:
            self._deal_committed(names, key, before)
            self.schedule()
            self.broadcast_state()

        def then(error: BaseException | None) -> None:
            try:
                if error is not None:
                    refused(error)
            finally:
                self.lock.release()

        self._commit(Storage.deal_row(self.id, number, names, key), committed, then)

    async def _bot_turn(self, event: int, seat: int, take_over: bool) -> None:
        """A bot acts for ``seat``: the seat's own bot, or the stand-in of a human seat that is
        away; ``take_over``: the seat's turn timer ran out, so it is away from now on. A search
        bot (pimc) thinks in the thinker's worker process with the lock released; its
        action counts only if the table is still at ``event`` when it comes back."""
        async with self.lock:
            if self.events != event or self.closed:
                return
            turns = self.turns
            turns.pending = None
            if self._wait_for_people():
                return
            if take_over:
                self._set_away(seat, True)
            state = self.table.state
            assert state is not None
            name = turns.bot_name(seat, self.seats[seat].bot)
            if algorithm_of(name) not in SEARCH_BOTS:
                bot = turns.bot_for(seat)
                retry = await self._bot_acts(seat, lambda: state.action_to_string(bot.act(state, seat)))
                if retry and self.events == event:
                    self.schedule(delay=turns.retry_later)
                return
            deal = self.deal_so_far()
            turns.thinking_for = event
        try:
            text = await self.manager.thinker.decide(
                deal, name, seat, seed=zlib.crc32(f"{self.id}:{event}".encode()),
                owner=self.creator, table=self.id)
        except Exception as e:  # a search bot may fail in any way: it is asked again, ever later
            async with self.lock:
                turns.thinking_for = None
                delay, shown = turns.search_failed(self.id, seat, name, e)
                if shown:
                    self.fanout.seats_changed()
                    self.broadcast_state()
                if self.events == event:
                    self.schedule(delay=delay)
            return
        async with self.lock:
            turns.thinking_for = None
            if turns.search_worked():
                self.fanout.seats_changed()
            if self.events != event or self.closed:
                return
            retry = await self._bot_acts(seat, lambda: text)
            if retry and self.events == event:
                self.schedule(delay=turns.retry_later)

    async def _bot_acts(self, seat: int, choose: Callable[[], str]) -> bool:
        """Apply a bot's action, ``choose()`` (the caller holds the lock); True when a
        transient failure (storage) left the table unchanged and the bot should try again."""
        try:
            await awaited(lambda then: self._play(seat, choose(), then))
        except (Refusal, IllegalAction) as e:
            if e.rule in ("storage", "server"):
                return True
            log.error("table %s: the bot at seat %d chose an illegal action", self.id, seat)
            self.broken = f"the bot at seat {seat} failed"
        except Exception:  # a bot, or its action, may fail in any way (undone): the table shows it
            log.exception("table %s: bot at seat %d failed", self.id, seat)
            self.broken = f"the bot at seat {seat} failed"
        return False

    async def attach(self, conn: Conn) -> bool:
        """A client connects; False when this copy of the table was dropped meanwhile
        (another process runs it now): the client is closed with "come again" and reaches
        the new holder then."""
        async with self.lock:  # never show an event whose commit is still under way
            if self.dropped:
                conn.stop(CloseCode.RESTARTING)
                return False
            self.fanout.add(conn)
            self.last_watched = self.clock.monotonic()
            self.last_activity = self.clock.time()
            if conn.seat in self.away:  # the player is back: he plays again himself
                self._set_away(conn.seat, False)
            if self.turns.waiting:  # somebody came: the bots play on
                self.schedule()
            elif self.pace == "wait" and self.next_ready and not self.table.in_deal:
                self.schedule()  # the players who asked for the next deal are all here
            if self.social.rematch_votes and conn.seat is not None:
                self.broadcast_state()  # the rematch question waits for him too now
            else:
                self.fanout.send_state(conn)
            if self.social.chat:
                conn.send(ChatLines.encode(self.social.chat, history=True))
            if self.social.rematch_id is not None:
                await self.social.send_rematch(conn)
        self.fanout.presence_changed()
        if not self.joined:
            self.joined = True
            self.record.mark_joined()
        seat = conn.seat
        if seat is not None and not self.seats[seat].bot and seat not in self.humans:
            self.humans.add(seat)  # two humans at a table give it the long life (``expired``)
            self.record.set_humans(sorted(self.humans))
        return True

    def detach(self, conn: Conn) -> None:
        if self.fanout.remove(conn):
            self.last_watched = self.clock.monotonic()
            self.last_activity = self.clock.time()
            self.fanout.presence_changed()
            if self.pace == "wait" and self.next_ready and self.started and not self.table.in_deal:
                self.schedule()  # who left no longer holds up the next deal
            self.social.seat_left()  # nor an open rematch question

    async def start(self) -> None:
        async with self.lock:
            self._check_open()
            if self.started:
                raise Refusal("started", "the table has already started", RefusalKind.CONFLICT)
            # by Ace or by lot, as the rules say; the draw is public and only has to be fair, so
            # a generator seeded with 256 fresh bits does (SystemRandom read os.urandom per card)
            first = draw_first_dealer(self.rules, random.Random(os.urandom(32)))
            self.table = Table(self.rules, [s.name for s in self.seats], first)
            self.first_dealer = first
            try:
                await self._deal(first_dealer=first)
            except Refusal:
                self.first_dealer = None
                self._replay(None, False, [])
                raise
            self.started = True
            self.schedule()
            self.broadcast_state()

    async def next_deal(self, early: bool = False, seat: int | None = None) -> None:
        """The next deal (``early``: a seated player asks for it, ``seat``). At a table that
        waits (``pace`` "wait") a player's ask counts until every seated player has asked;
        otherwise it deals at once instead of after the pause."""
        async with self.lock:
            if not self._deals_on():
                if early:
                    self._check_open()
                    if not self.started or self.table.in_deal:
                        raise Refusal("deal in progress", "the deal is not over yet")
                    if self.social.rematch_votes:
                        raise Refusal("rematch asked", SOCIAL_MESSAGES["rematch asked"])
                    raise Refusal("deal limit", f"the table has played its {self.max_deals} deals")
                return
            if early and self.pace == "wait" and seat is not None:
                self.next_ready.add(seat)
                seated = self.seated_humans()  # every seated player asked for it?
                if not seated or not seated <= self.next_ready:
                    self.fanout.seats_changed()
                    self.broadcast_state()
                    return
            await self._deal()
            self.schedule()
            self.broadcast_state()

    async def _deal(self, first_dealer: int | None = None) -> None:
        """Deal the next hand: in memory first (the engine may refuse), then committed."""
        number, names, key, before = self._deal_in_memory()
        if first_dealer is None:
            row = Storage.deal_row(self.id, number, names, key)
            await awaited(lambda then: self._commit(
                row, lambda: self._deal_committed(names, key, before), then))
            return
        committed = False
        try:  # the first deal also marks the table started: its own transaction
            await self.record.start(number, names, first_dealer, key)
            committed = True
        except (StorageUnavailable, LeaseLost) as e:
            raise self._commit_failed(e) from None
        finally:
            if not committed:  # a fault too: the deal made in memory is undone
                self._undo()
        self._deal_committed(names, key, before)

    def _deal_in_memory(self) -> tuple[int, list[str], int, DealStart]:
        """The next deal dealt in memory (the lock held): its number, deck in notation (as the
        record keeps it), key and the table before it. Raises a Refusal, the table
        unchanged, when the engine cannot deal."""
        deck = self.table.secret_deck()  # one os.urandom read per deck
        number = self.table.deal_count
        before = DealStart.before(self.table, self.events, self.score, self.scored,
                                  self.last_explanation)
        try:
            self.table.start_deal(deck)
        except Exception:  # the engine may fail in any way on a deal (a huge stake): tried later
            log.exception("table %s: the engine could not deal; nothing was stored", self.id)
            self._undo()
            raise Refusal("server", SERVER_FAULT, RefusalKind.CONFLICT) from None
        return number, self.table.deals[-1].deck, self.record.new_deal_key(), before

    def _deal_committed(self, names: list[str], key: int, before: DealStart) -> None:
        self.next_ready.clear()
        self.deal_key = key
        self.committed = [(names, [])]
        self.deal_start = before
        self.table.forget_finished()  # the database has the earlier deals
        self.events += 1
        self.last_activity = self.clock.time()
        self._note_finished()

    def take(self, seat: int, text: str, event: int | None,
             then: Callable[[BaseException | None], None]) -> None:
        """The one way a player's action enters the table, the caller holding the table's
        lock (``routes.live.Connection``, whether the action came from the socket's read or
        from its queue; ``act``). ``event``: the number of the state the player saw when he
        chose it (a stale one is refused). Applied in memory and handed to the group commit;
        a refusal before the commit is raised with the state unchanged. The commit's outcome
        comes in ``then`` (``_commit``), the lock held until then: None when the action is
        committed and broadcast, else its refusal or fault."""
        if seat in self.away:  # whoever acts is back, even if the action is refused
            self._set_away(seat, False)
        if event is not None and event != self.events:
            raise Refusal("stale", f"this action answered event {event}, but the table is at "
                                   f"event {self.events} now; look again", RefusalKind.CONFLICT)
        self._play(seat, text, then)

    async def act(self, seat: int, text: str, event: int | None = None) -> None:
        """``take`` awaited, with the table's lock taken and released here; raises the
        action's refusal (a Refusal or the engine's IllegalAction, the state unchanged)."""
        # the lock without ``async with``: its __aenter__ and __aexit__ are two coroutines
        # more per action, the most frequent message
        await self.lock.acquire()
        try:
            await awaited(lambda then: self.take(seat, text, event, then))
        finally:
            self.lock.release()

    def _play(self, seat: int, text: str, then: Callable[[BaseException | None], None]) -> None:
        """An action applied in memory and committed, the caller holding the lock (``take``,
        a bot): ``then`` hears the outcome. Raises a Refusal or the engine's IllegalAction
        with the state unchanged."""
        self._check_open()
        if not self.started:
            raise Refusal("not started", "the table has not started yet", RefusalKind.CONFLICT)
        t = self.table
        applied = False
        try:
            canonical = t.apply(text, seat)  # the engine is the judge; raises with the state unchanged
            applied = True
        except IllegalAction:
            applied = True  # refused by the rules: nothing changed
            raise
        finally:
            if not applied:  # the engine failed: undone, and its fault goes up (answered as one)
                self._undo()
        key = self.deal_key
        assert key is not None  # every deal is dealt with its key (and migrated ones got one)
        row = Storage.move_row(key, self.id, t.deal_count - 1, len(t.deals[-1].actions) - 1,
                               seat, canonical)

        def committed() -> None:
            self.committed[-1][1].append((seat, canonical))
            self.events += 1
            self.last_activity = self.clock.time()
            self._note_finished()
            self.schedule()
            self.broadcast_state()

        self._commit(row, committed, then)

    def _commit(self, row: Write, committed: Callable[[], None],
                then: Callable[[BaseException | None], None]) -> None:
        """The one way an event made in memory under the lock (an action, a later deal) is
        committed, the lock held until the commit is over; its steps, in order:

        1. the row joins the next group commit (``EventStore.write_soon``);
        2. a storage error of that first try: ``EventStore.write`` retries it until
           ``commit_deadline`` (a task: the rare case);
        3. committed: ``committed()`` (the event counted and broadcast), then ``then(None)``;
           failed for good: the event is undone (``_undo``), then ``then(refusal)``
           (``_commit_failed``). A fault of ``committed`` or of the undo goes to ``then`` as
           well, and up to the loop's handler (logged).

        Callbacks, not a coroutine: the usual outcome (committed at the first try) costs no
        task and no coroutine resumed, server CPU an action taken at once from the socket's
        read would otherwise pay (bench/server_side_by_side.py)."""
        deadline = time.monotonic() + self.limits.commit_deadline

        def over(error: BaseException | None) -> None:  # step 3
            answer: BaseException | None = RuntimeError("the event was committed, but not shown")
            try:
                if error is None:
                    committed()
                    answer = None
                else:
                    answer = error
                    self._undo()
                    answer = self._commit_failed(error)
            finally:
                then(answer)

        async def retried(failed: BaseException) -> None:  # step 2
            attempt = asyncio.ensure_future(self.record.write(row, deadline, failed))
            await asyncio.wait((attempt,))  # its outcome, a fault too, goes to ``over``
            over(asyncio.CancelledError() if attempt.cancelled() else attempt.exception())

        def first_try(done: asyncio.Future[None]) -> None:
            error = asyncio.CancelledError() if done.cancelled() else done.exception()
            if isinstance(error, STORAGE_ERRORS):
                self.manager.scheduler.run_soon(retried(error))
            else:
                over(error)

        self.record.write_soon(row).add_done_callback(first_try)  # step 1

    def _commit_failed(self, error: BaseException) -> BaseException:
        """An event's commit (an action's, a deal's) failed for good with ``error`` (or was
        cancelled), and the event was undone: what to answer. The database did not take
        it in time: "try again". This process lost the table's lease: the table is dropped
        here (its clients connect again and reach the new holder). Any other error is a
        fault of the server's: it is the answer (logged with its traceback where answered)."""
        if isinstance(error, LeaseLost):
            log.warning("table %s: its lease went to another process; an event was refused "
                        "and the table dropped here", self.id)
            self.manager.drop(self)
            return Refusal("restarting", MESSAGES["restarting"], RefusalKind.UNAVAILABLE, 1)
        if isinstance(error, (StorageUnavailable, asyncio.CancelledError)):
            log.warning("table %s: could not store an event; undone", self.id, exc_info=error)
            return Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE)
        return error

    async def close(self) -> None:
        """The admin closes the table: no more deals or actions (an unfinished deal stays out
        of the record), every seat may now download the full record."""
        async with self.lock:
            if self.closed:
                return
            await self.record.close()
            self.closed = True
            self.turns.cancel()
            self.turns.next_deal_at = None
            self.fanout.seats_changed()
            self.broadcast_state()

"""A live table's state: the in-memory ``Table`` of one table id, its seats and social
settings, how it is rebuilt from its deals, and what its clients are shown of it.

The table's rules of play are one class, ``live_table.LiveTable``, written in four modules by
concern: this one (the state and what it shows), ``table_turns`` (the timers: bots, the turn
timer, the next deal), ``table_social`` (seats, chat, hints, rematch) and ``live_table`` (the
events: a deal, an action, and how each is committed). Its collaborators are reached through
small interfaces: the registry (``Registry``, the ``TableManager``), the event store
(``EventStore``), the scheduler and the fan-out (``TableFanout``, which owns the connections
and the serialised JSON).

A live table keeps only its latest deal in memory; its database holds the record (the record
and analysis routes read it from there), so a table that plays all evening does not grow.
"""

from __future__ import annotations

import hmac
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self

from ..bots import Bot, make_bot
from ..explain import explain_messages
from ..games.base import Account
from ..i18n import Message as CatalogueMessage
from ..rules import Rules
from ..rules import ruleset as build_ruleset
from ..table import Table, summarise_deal
from .buckets import Bucket
from .event_store import EventStore, TableRecord
from .fanout import Conn, TableFanout
from .limits import ServerLimits
from .locks import TableLock
from .refusals import Refusal, RefusalKind
from .replay import replay_deal
from .scheduler import Pending, Scheduler
from .storage import StoredSocial, StoredTable, Write, token_digest
from .thinker import DealSoFar, Thinker

if TYPE_CHECKING:
    from .live_table import LiveTable

log = logging.getLogger("stammtisch.server")

# Refusals a table gives (rule code → English message); a translation catalogue comes later.
TRY_AGAIN = "the server could not store this just now; nothing changed, please try again"
SERVER_FAULT = "the server could not apply this; the table is unchanged"

#: The bot that plays for a seat whose turn timer ran out, until the person returns.
STAND_IN_BOT = "heuristic"

#: Rows of the score sheet a state message carries (the last deals; the record has them all).
SCORE_ROWS_SHOWN = 20

History = list[tuple[list[str], list[tuple[int | None, str]]]]


@dataclass
class Seat:
    name: str
    bot: str | None
    digest: str | None  # SHA-256 of the seat token (None for bot seats)


@dataclass(frozen=True)
class DealStart:
    """A live table just before one of its deals: with that deal's committed deck and actions,
    all ``_undo`` needs. A live table keeps no earlier deal in memory (its database has the
    record), so memory does not grow deal by deal however long a table plays."""

    dealer: int
    balances: dict[Account, int]
    deals_before: int
    events: int
    score: list[dict[str, Any]]  # the score sheet's rows shown (the last SCORE_ROWS_SHOWN)
    scored: int  # the finished deals so far
    explanation: list[CatalogueMessage] | None


class Registry(Protocol):
    """What a live table needs of the registry of tables (``TableManager``)."""

    limits: ServerLimits
    store: EventStore
    scheduler: Scheduler
    thinker: Thinker  # the search bots' worker process
    bot_delay: float  # seconds before a bot acts
    deal_pause: float  # seconds between deals at a table of bots
    retry_later: float  # seconds before a bot or the next deal tries again

    def get(self, table_id: str) -> LiveTable | None: ...

    async def create(self, ruleset_id: str, options: dict[str, Any],
                     seats: list[tuple[str, str | None]], max_deals: int | None = None,
                     social: StoredSocial | None = None) -> dict[str, Any]: ...

    async def creation_refusal(self, address: str) -> Refusal | None: ...

    async def reissue(self, live: LiveTable, seat: int | None) -> str: ...

    def drop(self, live: LiveTable) -> None: ...


class TableCore:
    """The state of a live table and what its clients see of it (see the module's docstring);
    the events, timers and social features are its subclasses' (``LiveTable``)."""

    # attributes in slots, not a dict per table: one lookup less at each of the many reads
    # an event makes (bench/server_side_by_side.py weighs such small savings)
    __slots__ = ("clock", "fanout", "next_ready", "pace", "hints", "hint_buckets", "bot_failures",
                 "bot_trouble", "creator",
                 "humans", "lobby_seats",
                 "rematch_asker", "rematch_claimed", "rematch_votes",
                 "admin_digest", "away", "bots", "record", "broken", "buckets", "chat", "chat_buckets",
                 "chat_count", "closed", "committed", "dropped", "lease", "created", "deal_key", "deal_start", "events",
                 "first_dealer", "id", "joined", "last_activity", "last_explanation",
                 "last_watched", "listed", "lock", "manager", "max_deals", "next_deal_at",
                 "open_seats", "options", "pending", "rematch_id", "rematch_links", "rules",
                 "ruleset_id", "score", "scored", "seats", "spectator_digest", "stand_ins",
                 "started", "table", "thinking_for", "turn_deadline", "turn_seconds", "waiting")

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
        # several processes (cluster.py): the epoch of the lease this copy was taken under
        # (None: not yet), and whether it was dropped here (another process runs the table)
        self.lease: int | None = None
        self.dropped = False
        self.broken: str | None = None
        self.lock = TableLock()
        self.fanout = TableFanout(self, [s.bot is not None for s in seats],
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
        self.bots = {i: make_bot(s.bot, self.rules.family) for i, s in enumerate(seats) if s.bot}
        self.thinking_for: int | None = None  # the event a search bot is thinking about
        self.pending: Pending | None = None
        self.next_deal_at: float | None = None
        self.waiting = False  # bots wait for a person to connect
        self.clock = manager.scheduler  # the time and the timers (a test's clock too)
        now = self.clock.time()
        self.created = now
        self.last_activity = now  # the latest event, connection or departure (wall clock)
        self.last_watched = self.clock.monotonic()  # when a person was last connected
        self.joined = False  # somebody connected at least once
        self.buckets: dict[int, Bucket] = {}
        # --- social
        self.turn_seconds = 0  # the turn timer (0: off)
        self.turn_deadline: float | None = None  # when the timer of the seat on turn runs out
        self.away: set[int] = set()  # human seats a stand-in bot plays for until they return
        self.stand_ins: dict[int, Bot] = {}
        self.listed = False  # shown in the lobby's list of open tables
        self.open_seats: set[int] = set()  # seats a stranger from the lobby may still take
        self.rematch_id: str | None = None  # the table this table's rematch made
        self.rematch_links: dict[int | None, str] = {}  # links of the rematch not yet delivered
        # "wait": the next deal comes when every seated person asked for it (``next_ready``);
        # a number: that many seconds after a deal; None: the server's pause (a table of bots)
        self.pace: str | float | None = "wait" if any(s.bot is None for s in seats) else None
        self.next_ready: set[int] = set()
        self.hints = False  # a practice table: a seat on turn may ask the search bot for a hint
        self.hint_buckets: dict[str, Bucket] = {}  # per asking address
        self.rematch_votes: set[int] = set()  # seats that asked for (agreed to) a rematch
        self.rematch_asker = ""  # the address of the first seat that asked (its creation)
        self.rematch_claimed: set[int] = set()  # seats whose link led on to the rematch
        self.creator = ""  # the address that made the table (its live tables are counted)
        self.lobby_seats: set[int] = set()  # seats that were the lobby's (never the admin's)
        self.humans: set[int] = set()  # human seats that ever connected
        # a search bot's decisions that failed in a row, and the seat whose bot keeps failing
        self.bot_failures = 0
        self.bot_trouble: int | None = None
        self.chat: list[dict[str, Any]] = []  # the latest chat lines (at most chat_keep)
        self.chat_count = 0  # chat lines stored in all: the next line's number
        self.chat_buckets: dict[int, Bucket] = {}

    def set_social(self, social: StoredSocial) -> None:
        self.turn_seconds = social.turn_seconds
        self.listed = social.listed
        self.open_seats = {s for s in social.open_seats if 0 <= s < len(self.seats)}
        self.away |= self.open_seats  # a bot plays a free seat until somebody takes it
        self.rematch_id = social.rematch_id
        if social.pace is not None:
            self.pace = "wait" if social.pace == "wait" else float(social.pace)
        self.hints = social.hints
        self.creator = social.creator
        self.lobby_seats = set(social.lobby_seats) | self.open_seats
        self.humans = set(social.humans)
        self.rematch_claimed = set(social.rematch_claimed)
        self.chat = [self._chat_line(seat, text, at) for seat, text, at in social.chat]
        self.chat_count = social.chat_count

    def _chat_line(self, seat: int, text: str, at: float) -> dict[str, Any]:
        name = self.seats[seat].name if 0 <= seat < len(self.seats) else "?"
        return {"seat": seat, "name": name, "text": text, "at": at}

    @property
    def limits(self) -> ServerLimits:
        return self.manager.limits

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
            self.deal_start = self._before_deal()
            replay_deal(self.table, deck, actions)
            self.events += 1 + len(actions)
            self.committed = [(list(deck), list(actions))]
            self._note_finished()
            self.table.forget_finished()
        self.fanout.reset()

    def _before_deal(self) -> DealStart:
        t = self.table
        return DealStart(t.dealer, dict(t.ledger.balances), t.deal_count, self.events,
                         list(self.score), self.scored, self.last_explanation)

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

    def _bot_for(self, seat: int) -> Bot:
        bot = self.bots.get(seat)
        if bot is None:
            bot = self.stand_ins.get(seat)
            if bot is None:
                bot = self.stand_ins[seat] = make_bot(STAND_IN_BOT, self.rules.family)
        return bot

    def connected(self) -> list[bool]:
        """Per seat: whether a client of it is connected (a bot always is)."""
        online = self.fanout.seats_online()
        return [bool(s.bot) or i in online for i, s in enumerate(self.seats)]

    def may_play(self) -> bool:
        """Bots act and deals follow only while a person watches (and a short grace after)."""
        if self.fanout.watched():
            return True
        return self.clock.monotonic() - self.last_watched < self.limits.watcher_grace

    def deal_limit_reached(self) -> bool:
        return self.max_deals is not None and self.table.deal_count >= self.max_deals

    def info(self) -> dict[str, Any]:
        return {**self.info_fixed(), "seats": self.seat_infos(), **self.info_ledger(),
                **self.info_deal(), "events": self.events, **self.info_flags()}

    # ``info`` in parts, by how often each changes: ``TableFanout.info_bytes`` serialises each
    # part only when it moved (the order of keys is the same as in ``info``, but for the
    # per-deal part)
    def info_fixed(self) -> dict[str, Any]:
        """What stays as long as the table keeps its ``Table`` (the names are the players')."""
        return {
            "id": self.id,
            "ruleset": self.ruleset_id,
            "title": self.rules.title,
            "family": self.rules.family,
            # seats are listed in the direction of play; Modern Tapp plays counter-clockwise
            "clockwise": getattr(self.rules, "clockwise", True),
            "options": self.options,
            "players": list(self.table.players),
        }

    def info_ledger(self) -> dict[str, Any]:
        """Moves when a deal starts or ends."""
        t = self.table
        return {
            "started": self.started,
            "in_deal": t.in_deal,
            "deal_number": t.deal_count,
            "max_deals": self.max_deals,
            "dealer": self._dealer(),
            "balances": t.ledger.player_balances(),
            "pot": t.ledger.pot,
            "reserve": t.ledger.reserve,
        }

    def info_deal(self) -> dict[str, Any]:
        """Moves when a deal ends (``info_deal_key``); last in ``info_json``."""
        return {
            # the score sheet's last rows only: every state message carries it, and a table
            # that plays all evening must not make each message longer (the record has all)
            "score": self.score,
            "score_earlier": self.scored - len(self.score),
            "explanation": self.last_explanation,
        }

    def info_deal_key(self) -> tuple[Any, ...]:
        return (self.scored, id(self.last_explanation))

    def info_flags(self) -> dict[str, Any]:
        return {
            "next_deal_at": self.next_deal_at,
            "waiting": self.waiting,
            "closed": self.closed,
            "broken": self.broken,
            "turn_seconds": self.turn_seconds,
            "turn_deadline": self.turn_deadline,
            "listed": self.listed,
            "rematch": self.rematch_id,
            # seats that asked for a rematch: it is made once every seated player agrees
            "rematch_votes": sorted(self.rematch_votes),
            # "wait" (the next deal when every seated player pressed Next: ``next_ready``) or
            # seconds between deals (then ``next_deal_at`` says when)
            "pace": self.manager.deal_pause if self.pace is None else self.pace,
            "next_ready": sorted(self.next_ready),
            "hints": self.hints,
            # the seat whose search bot keeps failing (the table tries again, ever less often)
            "bot_trouble": self.bot_trouble,
        }

    def seat_infos(self) -> list[dict[str, Any]]:
        """Per seat: name, bot, connected, ``away`` (a stand-in bot plays for it after its turn
        timer ran out) and ``open`` (free for a stranger from the lobby)."""
        return [{"name": s.name, "bot": s.bot, "connected": c, "away": i in self.away,
                 "open": i in self.open_seats}
                for i, (s, c) in enumerate(zip(self.seats, self.connected(), strict=True))]

    def _dealer(self) -> int:
        """The dealer of the deal on the table (as its views say), else the next dealer."""
        state = self.table.state
        return self.table.dealer if state is None else state.dealer

    def info_key(self) -> tuple[Any, ...]:
        """Everything ``info`` shows but the event number and the seats: the table's JSON
        stays the same, but for that number, while this and the fan-out's presence version
        do. (The ledger, the dealer and the score sheet move only when a deal starts or ends;
        the flags move with the presence version.)"""
        t = self.table
        return (id(t), t.deal_count, t.in_deal, self.started,
                self.next_deal_at, self.waiting, self.closed, self.broken, self.turn_seconds,
                self.turn_deadline, self.listed, self.rematch_id, self.max_deals,
                self.scored, id(self.last_explanation), tuple(sorted(self.rematch_votes)),
                self.bot_trouble, self.pace, tuple(sorted(self.next_ready)))

    def info_json(self) -> str:
        """``dumps(info())``, except that the keys of ``info_deal`` come last
        (``TableFanout.info_bytes``)."""
        return self.fanout.info_bytes().decode()

    def view(self, seat: int | None, head: bool = True) -> dict[str, Any] | None:
        state = self.table.state
        if state is None:
            return None
        return state.view(seat, head)

    def views(self, seats: list[int | None]) -> list[dict[str, Any]]:
        """The views of several seats (the table in a deal), without their heads: the engine
        computes their public part once."""
        state = self.table.state
        assert state is not None
        return state.views(seats, head=False)

    def send_state(self, conn: Conn) -> None:
        self.fanout.send_state(conn)

    def broadcast_state(self) -> None:
        self.fanout.broadcast_state()

    def drop_seat_connections(self, seat: int | None, message: str) -> None:
        """Close the sockets of a seat (None: spectators) whose link was revoked."""
        self.fanout.drop_seat(seat, message)

    def listing(self) -> dict[str, Any] | None:
        """What the lobby shows of this table, or None when it is not open to strangers."""
        if not self.listed or not self.open_seats or self.closed or self.broken:
            return None
        return {"id": self.id, "ruleset": self.ruleset_id, "title": self.rules.title,
                "family": self.rules.family, "started": self.started,
                "deal_number": self.table.deal_count, "turn_seconds": self.turn_seconds,
                "hints": self.hints,
                "seats": [{"seat": i, "name": s.name, "bot": s.bot, "free": i in self.open_seats}
                          for i, s in enumerate(self.seats)],
                "free": len(self.open_seats), "taken": len(self.seats) - len(self.open_seats)}

    def _check_open(self) -> None:
        if self.closed:
            raise Refusal("closed", "the table is closed", RefusalKind.CONFLICT)
        if self.broken:
            raise Refusal("table broken", self.broken, RefusalKind.CONFLICT)

    def _deals_on(self) -> bool:
        """Whether the next deal may come now (the lock held)."""
        return (self.started and not self.table.in_deal and not self.broken and not self.closed
                and not self.deal_limit_reached() and not self.rematch_votes)

    def _seats_changed(self) -> None:
        """Something every client shows about the seats changed (away, open): a new state."""
        self.fanout.seats_changed()

    def _seated_humans(self) -> set[int]:
        """The human seats whose player is at the table now (connected)."""
        return {seat for seat in self.fanout.seats_online() if not self.seats[seat].bot}

    def _everybody_ready(self) -> bool:
        """Whether every seated player (a human seat whose player is connected) asked for the
        next deal; a table where nobody sits waits."""
        seated = self._seated_humans()
        return bool(seated) and seated <= self.next_ready

    def _everybody_away(self) -> bool:
        """Whether the table has human seats and a stand-in bot plays every one of them."""
        humans = {i for i, s in enumerate(self.seats) if not s.bot}
        return bool(humans) and humans <= self.away

    def _deal_so_far(self) -> DealSoFar:
        """The deal in progress as the thinker's worker rebuilds it."""
        t = self.table
        log_entry = t.deals[-1]
        ts = t.table_state()
        return DealSoFar(self.ruleset_id, dict(self.options), ts.dealer, ts.pot, ts.reserve,
                         tuple(log_entry.deck),
                         tuple(a["action"] if isinstance(a, dict) else a for a in log_entry.actions))
    if TYPE_CHECKING:  # the parts of the table the other modules write (``LiveTable``)
        def schedule(self, delay: float | None = None) -> None: ...

        def cancel_pending(self) -> None: ...

        def _set_away(self, seat: int, away: bool) -> None: ...

        async def next_deal(self, early: bool = False, seat: int | None = None) -> None: ...

        def _play(self, seat: int, text: str,
                  then: Callable[[BaseException | None], None]) -> None: ...

        @staticmethod
        async def _awaited(start: Callable[[Callable[[BaseException | None], None]], None]) -> None: ...

        def _after_event(self) -> None: ...

        def _deal_in_memory(self) -> tuple[int, list[str], int, DealStart]: ...

        def _deal_committed(self, names: list[str], key: int, before: DealStart) -> None: ...

        def _commit(self, row: Write, committed: Callable[[], None],
                    then: Callable[[BaseException | None], None]) -> None: ...

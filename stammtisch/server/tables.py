"""Live tables: the in-memory ``Table`` per table id, the bot driver, and the broadcast.

One asyncio lock per table makes it the single writer of that table: an event (a deal's deck,
one action) is applied to the in-memory table (the engine validates it), committed to the
database, and only then put on every connection's outgoing queue. Whoever reads a table's
state (a connecting client, ``GET /api/tables/{id}``) takes the same lock, so nobody sees an
event before its commit.

Database work runs on one writer thread (``TableManager.commit``), never on the event loop:
a stalled write holds up only the tables waiting for it. Events (actions, decks) go through a
group commit (``TableManager.write``): the rows that arrive while one commit is under way, or
within ``TableManager.commit_wait`` after the first of them (up to ``ServerLimits.commit_window``
on a busy server, next to nothing on a quiet one), are committed together, and each table
hears of its commit only after it happened. A client's action that finds its table's lock free
and nothing ahead of it from the same client is taken at once, from the socket's read
(``act_now``): applied, its row handed to the group commit, and the rest (the broadcast, or
the refusal) done in the commit's callback, the lock held until then.
A failed or timed-out commit is retried with backoff for ``ServerLimits.commit_deadline``
seconds; if it still fails, the event is undone (the table is rebuilt as it was before its
latest deal, and that deal's committed events replayed), the client is told "try again", and
nothing is broadcast. A bot or the
next-deal timer meeting such an error tries again later: a transient database error never
breaks a table.

Each connection has its own bounded outgoing queue and sender task, so a slow client never
holds up a table; a client whose queue overflows is disconnected (it reconnects and gets the
full view again). Messages are rate-limited per seat (all sockets of a seat share one bucket).

A live table keeps only its latest deal in memory; its database holds the record (the record
and analysis routes read it from there), so a table that plays all evening does not grow.

Flow of a table: created → started (``start``: first dealer drawn, deal 1 dealt) → deal after
deal, up to its deal limit → closed by its admin (no more deals; every seat may download the
full record) → archived (no longer loaded at start-up). Bots act and deals follow each other
only while a person (a human seat or a spectator) is connected, and ``watcher_grace`` seconds
after the last one left: a table of bots is for watching, not for filling the disk.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import os
import random
import secrets
import time
import zlib
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from ..bots import SEARCH_BOTS, Bot, algorithm_of, make_bot
from ..engine_facts import choice_message_for
from ..explain import explain_messages
from ..games.base import Account, IllegalAction
from ..i18n import Message as CatalogueMessage
from ..rules import ruleset as build_ruleset
from ..table import Table, draw_first_dealer, summarise_deal
from .limits import ServerLimits
from .locks import TableLock
from .names import look_alike_pair
from .spill import Spill
from .storage import Storage, StoredSeat, StoredSocial, StoredTable, Write, token_digest
from .thinker import DealSoFar, Thinker
from .worker_pool import WorkersFailing

#: Rows the event loop commits itself between two checkpoints of the write-ahead log, which
#: the writer thread runs (``TableManager._checkpoint``). A checkpoint copies each page once,
#: however often the log holds it, so rarer checkpoints cost the writer thread less CPU per
#: action, at the price of a larger log (some MiB at this setting; bench/server_load.py shows
#: the writer thread's CPU per action).
ROWS_BETWEEN_CHECKPOINTS = 4000

#: How long the event loop's next group commit waits for a checkpoint (seconds); a slower
#: one goes on by itself, and the log starts over at a later one.
CHECKPOINT_WAIT = 0.05


def dumpb(obj: Any) -> bytes:
    """``obj`` as compact JSON, UTF-8 (orjson: the server serialises a view per seat and event)."""
    return orjson.dumps(obj)


#: ``view_head_json`` of the engines in use, by engine (a strong key: no reused ids); cleared
#: whole when full, as tables with ever new options could otherwise fill it without bound
_VIEW_HEADS: dict[Any, bytes] = {}
VIEW_HEADS_KEPT = 256


def view_head_json(game: Any) -> bytes:
    """The opening of every view's JSON for ``game``'s tables: ``{`` and the keys of its
    ``view_head``, each with its comma. Serialised once per engine, not in every view: the
    options are about a third of a view's bytes, and would be copied and serialised anew for
    every seat at every event."""
    head = _VIEW_HEADS.get(game)
    if head is None:
        if len(_VIEW_HEADS) >= VIEW_HEADS_KEPT:
            _VIEW_HEADS.clear()
        head = _VIEW_HEADS[game] = dumpb(game.view_head())[:-1] + b","
    return head


def view_bytes(game: Any, body: dict[str, Any]) -> bytes:
    """``dumpb`` of a whole view, from the view without its head (``view(head=False)``)."""
    return view_head_json(game) + dumpb(body)[1:]


def dumps(obj: Any) -> str:
    return dumpb(obj).decode()


#: A message to a client: JSON text, or the same text already encoded as UTF-8 (the state
#: messages: they are built from encoded parts and go to the socket as they are).
Message = str | bytes


log = logging.getLogger("stammtisch.server")

QUEUE_LIMIT = 512  # outgoing messages waiting for one slow client before it is dropped

T = TypeVar("T")

# Refusals a table gives (rule code → English message); a translation catalogue comes later.
TRY_AGAIN = "the server could not store this just now; nothing changed, please try again"
SERVER_FAULT = "the server could not apply this; the table is unchanged"

# Refusals of the social features: rule code → English message.
SOCIAL_MESSAGES = {
    "chat empty": "a chat line needs some text",
    "chat length": "a chat line is at most {n} characters",
    "chat rate": "you are chatting too fast; wait a moment",
    "spectator chat": "only the seats of a table chat",
    "taken": "this seat is not free (any more); choose another one",
    "no free seat": "this table has no free seat",
    "rematch": "a rematch can start when no deal is being played",
    "rematch asked": "a rematch was asked for: agree to it or decline it first",
    "rematch taken": "this table went on to a rematch, and your seat's link to it was given out "
                     "already; the rematch table's admin can make you a new one",
    "names": "another seat of this table has the name {name!r} or one that looks alike; choose another",
    "capacity": "the server holds as many tables as it may; try again later",
    "rate": "too many new tables from your address; try again in a minute",
    "quota": "your address has as many live tables as it may ({n}); close or finish one first",
    "no hints": "this table gives no hints; a practice table does",
    "hint turn": "a hint is for the seat on turn",
    "hint rate": "you are asking for hints too fast; wait a moment",
    "hint failed": "no hint could be computed just now; try again",
}

#: Actions that name a card or a set of cards: no menu entry of their own (``_choices_json``).
CARD_ACTIONS = ("play:", "exchange:", "discard:")

#: The bot that plays for a seat whose turn timer ran out, until the person returns.
STAND_IN_BOT = "heuristic"

#: A search bot's decisions that fail in a row before the table shows the seat's trouble, and
#: the longest pause before it is asked again (seconds).
BOT_TROUBLE_AFTER = 3
BOT_RETRY_MAX = 60.0


def clean_chat(text: str, limit: int) -> str:
    """A chat line as it is stored and shown: control and format characters (new lines,
    bidirectional overrides) become spaces, the ends are trimmed. Raises IllegalAction when
    the line is empty or longer than ``limit`` characters."""
    line = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    if not line:
        raise IllegalAction("chat empty", SOCIAL_MESSAGES["chat empty"])
    if len(line) > limit:
        raise IllegalAction("chat length", SOCIAL_MESSAGES["chat length"].format(n=limit))
    return line


def new_token() -> str:
    return secrets.token_urlsafe(24)


def new_table_id() -> str:
    return secrets.token_urlsafe(9)


@dataclass
class Seat:
    name: str
    bot: str | None
    digest: str | None  # SHA-256 of the seat token (None for bot seats)


class Bucket:
    """Token bucket: ``burst`` messages at once, refilled at ``rate`` per second."""

    def __init__(self, rate: float, burst: float):
        self.rate, self.burst = rate, burst
        self.tokens = burst
        self.stamp = time.monotonic()
        self.strikes = 0

    def ready(self) -> bool:
        """Whether ``allow`` would let a message through now (it takes nothing)."""
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        return self.tokens >= 1.0

    def allow(self) -> bool:
        if self.ready():
            self.tokens -= 1.0
            self.strikes = 0
            return True
        self.strikes += 1
        return False


class AddressBuckets:
    """A token bucket per client address (table creation), pruned so it cannot grow."""

    def __init__(self, per_minute: float, burst: int, max_addresses: int = 10_000):
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.max_addresses = max_addresses
        self.buckets: dict[str, Bucket] = {}

    def allow(self, address: str) -> bool:
        bucket = self.buckets.get(address)
        if bucket is None:
            if len(self.buckets) >= self.max_addresses:
                self.buckets.clear()  # forgetting is safe: a forgotten address starts full
            bucket = self.buckets[address] = Bucket(self.rate, self.burst)
        return bucket.allow()


class Conn:
    """One WebSocket client: its seat (None: spectator), outgoing queue and rate bucket (shared
    by every socket of the same seat).

    The outgoing queue is a plain deque with one wake-up future for the sender task: a
    broadcast puts one message on every connection's queue, and ``asyncio.Queue``'s
    bookkeeping per message (getter and putter futures, task counting) cost more than the
    rest of queueing it. With ``write_now`` (the ASGI server's socket, app.direct_writer), a
    message that nothing waits before goes out at once, without waking the sender task: that
    is nearly every message, and the wake-up, the task step and the ASGI send coroutine cost
    more than writing the frame. With an ``Outbox`` such a message waits for the end of the
    event loop's turn and is written then. The queue is left for a socket that cannot take
    more (its transport paused writing: a client that does not read) and for what comes after
    it."""

    def __init__(self, seat: int | None, send_text: Callable[[str], Awaitable[None]],
                 close: Callable[[], Awaitable[None]], bucket: Bucket | None = None,
                 address: str = "", write_now: Callable[[Message], bool] | None = None,
                 outbox: Outbox | None = None):
        self.seat = seat
        self.address = address
        self._send_text = send_text
        self._close = close
        # the fast path (app.direct_writer): a message written to the socket at once when
        # nothing waits before it; False (or an error) when the socket cannot take it now
        self._write_now = write_now
        # with an outbox, fast-path messages wait for the end of the event loop's turn
        self._outbox = outbox
        self._held: list[Message] = []
        self._busy = False  # the sender task is sending a message
        self._queue: deque[Message | None] = deque()  # None: the close marker
        self._wake: asyncio.Future[None] | None = None  # the sender waits on it when idle
        self.bucket = bucket or Bucket(20.0, 20.0)
        self.closed = False
        # the table's info last sent to this client, by its key (LiveTable.send_state)
        self.table_sent: tuple[Any, ...] | None = None
        self.told_rematch = False  # this client was given its seat's link of the rematch

    def allow(self) -> bool:
        return self.bucket.allow()

    @property
    def strikes(self) -> int:
        return self.bucket.strikes

    def _put(self, item: Message | None) -> None:
        self._queue.append(item)
        wake, self._wake = self._wake, None
        if wake is not None and not wake.done():
            wake.set_result(None)

    def send(self, text: Message) -> None:
        if self.closed:
            return
        if len(self._queue) >= QUEUE_LIMIT:
            log.warning("dropping a client that does not read its messages")
            self.closed = True
            self._queue.clear()  # its messages are moot: it reconnects and gets the full view
            self._held.clear()
            self._put(None)
            return
        if self._write_now is not None and not self._queue and not self._busy:
            if self._outbox is not None:
                self._held.append(text)
                if len(self._held) == 1:
                    self._outbox.add(self)
                return
            if self._written_now(text):
                return
        self._put(text)

    def _written_now(self, text: Message) -> bool:
        """Whether the fast path took the message; if not, the caller queues it."""
        try:
            return self._write_now is not None and self._write_now(text)
        except Exception:  # the socket is going away: the sender's own send finds out
            return False

    def write_held(self) -> None:
        """Write the messages held for the outbox, in order; what the socket does not take
        now goes to the queue (the sender task's path)."""
        held, self._held = self._held, []
        if self.closed:
            return
        for i, text in enumerate(held):
            if not self._written_now(text):
                for rest in held[i:]:
                    self._put(rest)
                return

    async def sender(self) -> None:
        """Send queued messages in order until the close marker (None)."""
        queue = self._queue
        try:
            while True:
                if not queue:
                    self._wake = asyncio.get_running_loop().create_future()
                    await self._wake
                    continue
                text = queue.popleft()
                if text is None:
                    break
                self._busy = True
                await self._send_text(text if isinstance(text, str) else text.decode())
                self._busy = False
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
            self._queue.extend(self._held)  # the last words (an error, say) still go out
            self._held.clear()
            self._put(None)


class Outbox:
    """The fast-path messages of one event-loop turn, written together at its end.

    Why: writing each event's messages as the broadcast goes would put the next seat's view
    between two writes, and on a loaded server the turn's many events would alternate Python
    work and system calls. Held until the turn ends (``call_soon``: before
    the loop next waits for I/O, so no message waits on the network), the writes follow one
    another, and several messages for one socket in one turn still go in order."""

    def __init__(self) -> None:
        self._conns: list[Conn] = []

    def add(self, conn: Conn) -> None:
        if not self._conns:
            asyncio.get_running_loop().call_soon(self.flush)
        self._conns.append(conn)

    def flush(self) -> None:
        conns, self._conns = self._conns, []
        for conn in conns:
            conn.write_held()


#: The time over which ``TableManager.row_rate`` counts the event rows (seconds).
RATE_SECONDS = 0.5

#: Rows of the spill file moved into the database in one transaction (``TableManager._drain``).
DRAIN_CHUNK = 2_000

#: The pause before a failed group commit's first retry (seconds); each next one doubles, up
#: to a second (``TableManager.write``).
FIRST_RETRY_PAUSE = 0.05

#: Rows of the score sheet a state message carries (the last deals; the record has them all).
SCORE_ROWS_SHOWN = 20

History = list[tuple[list[str], list[tuple[int | None, str]]]]


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


class LiveTable:
    # attributes in slots, not a dict per table: one lookup less at each of the many reads
    # an event makes (bench/server_side_by_side.py weighs such small savings)
    __slots__ = ("_deal_parts", "_dealer_cache", "_fixed_part", "_info_cache", "_info_parts",
                 "_choices_cache", "next_ready", "pace", "hints", "hint_buckets", "bot_failures",
                 "bot_trouble", "creator",
                 "humans", "lobby_seats",
                 "rematch_asker", "rematch_claimed", "rematch_votes",
                 "_seats_part",
                 "_presence_handle", "_presence_sent", "_presence_version", "_seats_cache",
                 "_view_cache",
                 "admin_digest", "away", "bots", "broken", "buckets", "chat", "chat_buckets",
                 "chat_count", "closed", "committed", "conns", "created", "deal_key", "deal_start", "events",
                 "first_dealer", "id", "joined", "last_activity", "last_explanation",
                 "last_watched", "listed", "lock", "manager", "max_deals", "next_deal_at",
                 "open_seats", "options", "pending", "rematch_id", "rematch_links", "rules",
                 "ruleset_id", "score", "scored", "seats", "spectator_digest", "stand_ins",
                 "started", "table", "thinking_for", "turn_deadline", "turn_seconds", "waiting")

    def __init__(self, manager: TableManager, table_id: str, ruleset_id: str, options: dict[str, Any],
                 seats: list[Seat], admin_digest: str, spectator_digest: str,
                 max_deals: int | None = None):
        self.manager = manager
        self.id = table_id
        self.ruleset_id = ruleset_id
        self.options = options
        self.rules = build_ruleset(ruleset_id, options)
        self.seats = seats
        self.admin_digest = admin_digest
        self.spectator_digest = spectator_digest
        self.max_deals = max_deals
        self.table = Table(self.rules, [s.name for s in seats], 0)
        self.first_dealer: int | None = None
        self.started = False
        self.closed = False
        self.broken: str | None = None
        self.lock = TableLock()
        self.conns: list[Conn] = []
        self.events = 0  # deal starts + actions so far: the number of the latest state
        # the latest deal's committed deck and actions (a list of at most one), and the table
        # just before it: the undo source
        self.committed: History = []
        self.deal_start: DealStart | None = None
        # the latest deal's key (its actions are Storage.move_row rows); None: no deal yet, or
        # one dealt before deal keys (its actions are action_row rows, as they were)
        self.deal_key: int | None = None
        self.score: list[dict[str, Any]] = []  # the score sheet's last SCORE_ROWS_SHOWN rows
        self.scored = 0  # the finished deals so far (rows of the whole score sheet)
        self.last_explanation: list[CatalogueMessage] | None = None
        self.bots = {i: make_bot(s.bot, self.rules.family) for i, s in enumerate(seats) if s.bot}
        self.thinking_for: int | None = None  # the event a search bot is thinking about
        self.pending: asyncio.TimerHandle | asyncio.Task[None] | None = None
        self.next_deal_at: float | None = None
        self.waiting = False  # bots wait for a person to connect
        now = time.time()
        self.created = now
        self.last_activity = now  # the latest event, connection or departure (wall clock)
        self.last_watched = time.monotonic()  # when a person was last connected
        self.joined = False  # somebody connected at least once
        self.buckets: dict[int, Bucket] = {}
        self._presence_sent: list[bool] | None = None
        self._presence_handle: asyncio.TimerHandle | None = None
        self._info_cache: tuple[int, int, bytes] | None = None
        self._deal_parts: tuple[tuple[int, int], bytes] | None = None  # see info_bytes
        self._info_parts: tuple[tuple[Any, ...], bytes, bytes] | None = None  # see info_bytes
        self._fixed_part: tuple[Table, bytes] | None = None  # see info_bytes
        self._seats_part: tuple[int, bytes] | None = None  # see info_bytes
        self._view_cache: tuple[int, dict[int | None, bytes]] | None = None  # (event, seat → view JSON)
        self._choices_cache: tuple[int, bytes] | None = None  # (event, the seat on turn's choices)
        self._dealer_cache: tuple[int, int] | None = None  # (event, dealer of its views)
        self._presence_version = 0
        self._seats_cache: list[int | None] | None = None  # see _conn_seats
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
        self.hint_buckets: dict[int, Bucket] = {}
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

    # --- identity --------------------------------------------------------------------

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

    # --- rebuilding ------------------------------------------------------------------

    @classmethod
    def from_stored(cls, manager: TableManager, st: StoredTable) -> LiveTable:
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
            self.table.start_deal(self.table.game.deck_from_strings(deck))
            self.events += 1
            self.committed = [(list(deck), [])]
            for seat, text in actions:
                self.table.apply(text, seat)
                self.events += 1
                self.committed[-1][1].append((seat, text))
            self._note_finished()
            self.table.forget_finished()
        self._info_cache = self._view_cache = self._dealer_cache = self._choices_cache = None
        self._deal_parts = self._info_parts = self._fixed_part = self._seats_part = None

    def _before_deal(self) -> DealStart:
        t = self.table
        return DealStart(t.dealer, dict(t.ledger.balances), t.deal_count, self.events,
                         list(self.score), self.scored, self.last_explanation)

    def _undo(self) -> None:
        """Back to the last committed event (after a refused commit or an engine fault): the
        table before its latest deal, and that deal's committed events replayed."""
        history = [(deck, list(actions)) for deck, actions in self.committed]
        self._replay(self.first_dealer, self.started, history, self.deal_start)

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

    def watched(self) -> bool:
        for c in self.conns:  # a loop, not any() over a generator: this runs every event
            if not c.closed:
                return True
        return False

    def may_play(self) -> bool:
        """Bots act and deals follow only while a person watches (and a short grace after)."""
        if self.watched():
            return True
        return time.monotonic() - self.last_watched < self.limits.watcher_grace

    def deal_limit_reached(self) -> bool:
        return self.max_deals is not None and self.table.deal_count >= self.max_deals

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

    def info(self) -> dict[str, Any]:
        return {**self._info_fixed(), **self._info_seats(), **self._info_ledger(),
                **self._info_deal(), "events": self.events, **self._info_flags()}

    # ``info`` in parts, by how often each changes: ``info_bytes`` serialises each part only
    # when it moved (the order of keys is the same as in ``info``, but for the per-deal part)
    def _info_fixed(self) -> dict[str, Any]:
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

    def _info_seats(self) -> dict[str, Any]:
        """Moves with the presence version."""
        return {"seats": self._seat_infos()}

    def _info_ledger(self) -> dict[str, Any]:
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

    def _info_deal(self) -> dict[str, Any]:
        """Moves when a deal ends; last in ``info_json``."""
        return {
            # the score sheet's last rows only: every state message carries it, and a table
            # that plays all evening must not make each message longer (the record has all)
            "score": self.score,
            "score_earlier": self.scored - len(self.score),
            "explanation": self.last_explanation,
        }

    def _info_flags(self) -> dict[str, Any]:
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

    def _seat_infos(self) -> list[dict[str, Any]]:
        """Per seat: name, bot, connected, ``away`` (a stand-in bot plays for it after its turn
        timer ran out) and ``open`` (free for a stranger from the lobby)."""
        return [{"name": s.name, "bot": s.bot, "connected": c, "away": i in self.away,
                 "open": i in self.open_seats}
                for i, (s, c) in enumerate(zip(self.seats, self.connected(), strict=True))]

    def _dealer(self) -> int:
        """The dealer of the deal on the table (as its views say), else the next dealer."""
        if self.table.state is None:
            return self.table.dealer
        if self._dealer_cache is None or self._dealer_cache[0] != self.events:
            self.view(None)
        assert self._dealer_cache is not None
        return self._dealer_cache[1]

    def _info_key(self) -> tuple[Any, ...]:
        """Everything ``info`` shows but the event number: the table's JSON stays the same,
        but for that number, while this does. (The ledger, the dealer and the score sheet move
        only when a deal starts or ends; seats and flags move with the presence version.)"""
        t = self.table
        return (self._presence_version, id(t), t.deal_count, t.in_deal, self.started,
                self.next_deal_at, self.waiting, self.closed, self.broken, self.turn_seconds,
                self.turn_deadline, self.listed, self.rematch_id, self.max_deals,
                self.scored, id(self.last_explanation), tuple(sorted(self.rematch_votes)),
                self.bot_trouble, self.pace, tuple(sorted(self.next_ready)))

    def info_json(self) -> str:
        """``dumps(info())``, except that the keys of ``_info_deal`` come last (see
        ``info_bytes``)."""
        return self.info_bytes().decode()

    def info_bytes(self) -> bytes:
        """``info_json`` encoded. Built from ``info``'s parts: most events change nothing in it
        but the event number, so the rest is serialised only when ``_info_key`` changes, and
        of that only the parts that moved (rebuilding the whole info at a deal's start and end
        would be the largest cost of a deal's boundary under load)."""
        key = (self.events, self._presence_version)
        if self._info_cache is not None and self._info_cache[:2] == key:
            return self._info_cache[2]
        info_key = self._info_key()
        if self._info_parts is None or self._info_parts[0] != info_key:
            t = self.table
            if self._fixed_part is None or self._fixed_part[0] is not t:  # held: no id reuse
                self._fixed_part = (t, dumpb(self._info_fixed())[:-1])
            if self._seats_part is None or self._seats_part[0] != self._presence_version:
                self._seats_part = (self._presence_version, dumpb(self._info_seats())[1:-1])
            deal_key = (self.scored, id(self.last_explanation))
            if self._deal_parts is None or self._deal_parts[0] != deal_key:
                self._deal_parts = (deal_key, dumpb(self._info_deal())[1:-1])
            head = b"%b,%b,%b,\"events\":" % (self._fixed_part[1], self._seats_part[1],
                                              dumpb(self._info_ledger())[1:-1])
            tail = b",%b,%b}" % (dumpb(self._info_flags())[1:-1], self._deal_parts[1])
            self._info_parts = (info_key, head, tail)
        data = b"%b%d%b" % (self._info_parts[1], self.events, self._info_parts[2])
        self._info_cache = (*key, data)
        return data

    def view(self, seat: int | None, head: bool = True) -> dict[str, Any] | None:
        state = self.table.state
        if state is None:
            return None
        view = state.view(seat, head)
        self._dealer_cache = (self.events, view["dealer"])
        return view

    def _view_texts(self) -> dict[int | None, bytes]:
        """The current event's view JSON by seat (a new event starts with none)."""
        if self._view_cache is None or self._view_cache[0] != self.events:
            self._view_cache = (self.events, {})
        return self._view_cache[1]

    def view_json(self, seat: int | None) -> bytes:
        """A seat's view as JSON (UTF-8), computed once per event. Only the text is kept: the
        view's many small dicts and lists would otherwise live until the next event, and the
        garbage collector's passes over them would be the server's longest stalls."""
        texts = self._view_texts()
        text = texts.get(seat)
        if text is None:
            body = self.view(seat, head=False)
            text = texts[seat] = dumpb(None) if body is None else view_bytes(self.table.game, body)
        return text

    def state_message(self, seat: int | None, with_table: bool) -> bytes:
        """The state message for a seat (None: spectators), as UTF-8: it goes to the socket as
        it is, never decoded and encoded again. ``with_table``: with the table's info
        (``info_json``), else without it."""
        choices = self._choices_json(seat)
        if with_table:
            return b'{"type":"state","event":%d,"view":%b,"table":%b%b}' % (
                self.events, self.view_json(seat), self.info_bytes(), choices)
        return b'{"type":"state","event":%d,"view":%b%b}' % (self.events, self.view_json(seat), choices)

    def _choices_json(self, seat: int | None) -> bytes:
        """``,"choices":[…]`` for the seat on turn when a legal action is a word, a bid or a
        contract, else nothing: per legal action (in the view's order) its menu entry as a
        catalogue message, with a contract's goal and value in the table's unit
        (``engine_facts.choice_message_for``, as the terminal shows them), or null for a card
        played or a set of cards (the page names cards itself). Nothing in the play phase: the
        messages of most events stay as they are."""
        state = self.table.state
        if seat is None or state is None or state.is_terminal() or state.current_player() != seat:
            return b""
        cached = self._choices_cache
        if cached is not None and cached[0] == self.events:
            return cached[1]
        texts = [state.action_to_string(a) for a in state.legal_actions()]
        worded = [not (text.startswith(CARD_ACTIONS)) for text in texts]
        data = b""
        if any(worded):
            data = b',"choices":' + dumpb([choice_message_for(self.rules, text) if w else None
                                          for text, w in zip(texts, worded, strict=True)])
        self._choices_cache = (self.events, data)
        return data

    def send_state(self, conn: Conn) -> None:
        self._send_states([conn])

    def _send_states(self, conns: list[Conn]) -> None:
        """The current state to each of ``conns``, with the table's info only when it changed
        since the connection last got it, but for the event number that every state message
        carries (the client keeps the last info it got). Within a deal nothing else changes,
        so most messages are without it: the info is about half of a message's bytes, and
        serialising and sending it with every action would cost server CPU
        (bench/server_side_by_side.py). Each message is made once per call (connections of one
        seat, or spectators, share it), not kept across calls: a cache of messages per event
        would cost more than it saves."""
        key = self._info_key()
        made: dict[tuple[int | None, bool], bytes] = {}
        for c in conns:
            with_table = c.table_sent != key
            c.table_sent = key
            message = made.get((c.seat, with_table))
            if message is None:
                message = made[c.seat, with_table] = self.state_message(c.seat, with_table)
            c.send(message)

    def _render_views(self, seats: list[int | None]) -> None:
        """The views of several seats for the current event, rendered together: the engine
        computes their public part once (``views``), the JSON is the same as ``view_json``'s."""
        state = self.table.state
        if state is None:
            return
        texts = self._view_texts()
        missing = [s for s in seats if s not in texts]
        if len(missing) < 2:
            return  # one view alone: view_json renders it
        views = state.views(missing, head=False)
        self._dealer_cache = (self.events, views[0]["dealer"])
        for seat, view in zip(missing, views, strict=True):
            texts[seat] = view_bytes(state.game, view)

    def _conn_seats(self) -> list[int | None]:
        """The seats that clients watch from (None: spectators), each once; kept until a
        connection comes or goes (``attach`` and ``detach`` drop it)."""
        if self._seats_cache is None:
            self._seats_cache = list(dict.fromkeys(c.seat for c in self.conns))
        return self._seats_cache

    def broadcast_state(self) -> None:
        self._render_views(self._conn_seats())
        self._send_states(self.conns)

    def _presence_changed(self) -> None:
        """Coalesce presence: one message per ``presence_delay`` window, and only when a seat's
        connected flag really changed (spectators coming and going change nothing)."""
        self._presence_version += 1
        self._info_cache = None
        if self._presence_handle is None:
            loop = asyncio.get_running_loop()
            self._presence_handle = loop.call_later(self.limits.presence_delay, self._flush_presence)

    def _flush_presence(self) -> None:
        self._presence_handle = None
        now = self.connected()
        if now == self._presence_sent:
            return
        self._presence_sent = now
        msg = dumps({"type": "presence", "seats": self._seat_infos()})
        for c in self.conns:
            c.send(msg)

    # --- connections -----------------------------------------------------------------

    async def attach(self, conn: Conn) -> None:
        async with self.lock:  # never show an event whose commit is still under way
            self.conns.append(conn)
            self._seats_cache = None
            self.last_watched = time.monotonic()
            self.last_activity = time.time()
            if conn.seat in self.away:  # the player is back: he plays again himself
                self._set_away(conn.seat, False)
            if self.waiting:  # somebody came: the bots play on
                self.schedule()
            elif self.pace == "wait" and self.next_ready and not self.table.in_deal:
                self.schedule()  # the players who asked for the next deal are all here
            self.send_state(conn)
            if self.chat:
                conn.send(dumps({"type": "chat", "messages": self.chat, "history": True}))
            if self.rematch_id is not None:
                await self._send_rematch(conn)
        if self._presence_sent is None:
            self._presence_sent = [s.bot is not None for s in self.seats]
        self._presence_changed()
        if not self.joined:
            self.joined = True
            self.manager.background(self.manager.storage.mark_joined, self.id)
        seat = conn.seat
        if seat is not None and not self.seats[seat].bot and seat not in self.humans:
            self.humans.add(seat)  # two humans at a table give it the long life (``expired``)
            self.manager.background(self.manager.storage.set_humans, self.id, sorted(self.humans))

    def detach(self, conn: Conn) -> None:
        if conn in self.conns:
            self.conns.remove(conn)
            self._seats_cache = None
            conn.stop()
            self.last_watched = time.monotonic()
            self.last_activity = time.time()
            self._presence_changed()
            if self.pace == "wait" and self.next_ready and self.started and not self.table.in_deal:
                self.schedule()  # who left no longer holds up the next deal
    def drop_seat_connections(self, seat: int | None, message: str) -> None:
        """Close the sockets of a seat (None: spectators) whose link was revoked."""
        for c in list(self.conns):
            if c.seat == seat:
                c.send(dumps({"type": "error", "rule": "revoked", "message": message}))
                c.stop()

    # --- events (callers hold no lock; these take it) ---------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise IllegalAction("closed", "the table is closed")
        if self.broken:
            raise IllegalAction("table broken", self.broken)

    async def start(self) -> None:
        async with self.lock:
            self._check_open()
            if self.started:
                raise IllegalAction("started", "the table has already started")
            # by Ace or by lot, as the rules say; the draw is public and only has to be fair, so
            # a generator seeded with 256 fresh bits does (SystemRandom read os.urandom per card)
            first = draw_first_dealer(self.rules, random.Random(os.urandom(32)))
            self.table = Table(self.rules, [s.name for s in self.seats], first)
            self.first_dealer = first
            try:
                await self._deal(first_dealer=first)
            except IllegalAction:
                self.first_dealer = None
                self._replay(None, False, [])
                raise
            self.started = True
            self._after_event()

    def _deals_on(self) -> bool:
        """Whether the next deal may come now (the lock held)."""
        return (self.started and not self.table.in_deal and not self.broken and not self.closed
                and not self.deal_limit_reached() and not self.rematch_votes)

    async def next_deal(self, early: bool = False, seat: int | None = None) -> None:
        """The next deal (``early``: a seated player asks for it, ``seat``). At a table that
        waits (``pace`` "wait") a player's ask counts until every seated player has asked;
        otherwise it deals at once instead of after the pause."""
        async with self.lock:
            if not self._deals_on():
                if early:
                    self._check_open()
                    if not self.started or self.table.in_deal:
                        raise IllegalAction("deal in progress", "the deal is not over yet")
                    if self.rematch_votes:
                        raise IllegalAction("rematch asked", SOCIAL_MESSAGES["rematch asked"])
                    raise IllegalAction("deal limit", f"the table has played its {self.max_deals} deals")
                return
            if early and self.pace == "wait" and seat is not None:
                self.next_ready.add(seat)
                if not self._everybody_ready():
                    self._seats_changed()
                    self.broadcast_state()
                    return
            await self._deal()
            self._after_event()

    def _everybody_ready(self) -> bool:
        """Whether every seated player (a human seat whose player is connected) asked for the
        next deal; a table where nobody sits waits."""
        seated = self._seated_humans()
        return bool(seated) and seated <= self.next_ready

    async def _deal(self, first_dealer: int | None = None) -> None:
        """Deal the next hand: in memory first (the engine may refuse), then committed."""
        number, names, key, before = self._deal_in_memory()
        try:
            if first_dealer is None:
                await self.manager.write(Storage.deal_row(self.id, number, names, key))
            else:  # the first deal also marks the table started: its own transaction
                await self.manager.commit(self.manager.storage.start_deal, self.id, number, names,
                                          first_dealer, key)
        except Exception as e:
            raise self._storage_refusal(e) from None
        self._deal_committed(names, key, before)

    def _deal_in_memory(self) -> tuple[int, list[str], int, DealStart]:
        """The next deal dealt in memory (the lock held): its number, deck in notation (as the
        record keeps it), key and the table before it. Raises IllegalAction, the table
        unchanged, when the engine cannot deal."""
        deck = self.table.secret_deck()  # one os.urandom read per deck
        number = self.table.deal_count
        before = self._before_deal()
        try:
            self.table.start_deal(deck)
        except Exception:
            log.exception("table %s: the engine could not deal; nothing was stored", self.id)
            self._undo()
            raise IllegalAction("server", SERVER_FAULT) from None
        return number, self.table.deals[-1].deck, self.manager.storage.new_deal_key(), before

    def _deal_committed(self, names: list[str], key: int, before: DealStart) -> None:
        self.next_ready.clear()
        self.deal_key = key
        self.committed = [(names, [])]
        self.deal_start = before
        self.table.forget_finished()  # the database has the earlier deals
        self.events += 1
        self.last_activity = time.time()
        self._note_finished()

    async def act(self, seat: int, text: str, event: int | None = None) -> None:
        """A seat's action; raises IllegalAction (state unchanged) when refused. ``event``: the
        event number the client saw when it chose the action (a stale one is refused)."""
        # the lock without ``async with``: its __aenter__ and __aexit__ are two coroutines
        # more per action, the most frequent message
        await self.lock.acquire()
        try:
            self._seat_acts(seat, event)
            await self._act_locked(seat, text)
        finally:
            self.lock.release()

    async def _act_locked(self, seat: int, text: str) -> None:
        """An action applied and committed (the caller holds the lock: ``act``, the bots)."""
        canonical, row = self._apply_action(seat, text)
        try:
            await self.manager.write(row)
        except Exception as e:
            raise self._storage_refusal(e) from None
        self._action_committed(seat, canonical)

    def act_now(self, seat: int, text: str, event: int | None,
                report: Callable[[BaseException], None]) -> None:
        """``act`` without a coroutine, for an action taken at once from the socket's read
        (``app.ws_endpoint``'s ``take_now``): the caller saw the lock free, with nothing
        awaited since. A refusal before the commit raises IllegalAction (state unchanged, lock
        free again). The commit's outcome comes in a callback, with the lock held until then:
        committed, the event is broadcast as ``act`` would; a failed commit is retried by
        ``TableManager.write``, then refused; that refusal, or any fault after the commit,
        goes to ``report``.

        Why: an action through the receive loop's task costs a wake-up for the message, then a
        chain of coroutines suspended over the group commit and resumed; taken at once, it
        saves that server CPU per action (bench/server_side_by_side.py)."""
        if not self.lock.try_acquire():
            raise RuntimeError("act_now needs the table's lock free")
        try:
            self._seat_acts(seat, event)
            canonical, row = self._apply_action(seat, text)
        except BaseException:
            self.lock.release()
            raise
        self._store_soon(row, lambda: self._action_committed(seat, canonical), report)

    def _store_soon(self, row: Write, committed: Callable[[], None],
                    report: Callable[[BaseException], None]) -> None:
        """An event made in memory under the lock, without a coroutine (``act_now``,
        ``_deal_due``): its row joins the next group commit, and the lock stays held until the
        commit is over. Then ``committed()``; or, when the commit failed and
        ``TableManager.write``'s retries until ``commit_deadline`` failed too, the event is
        undone and its refusal goes to ``report``, as does any fault of ``committed``."""
        deadline = time.monotonic() + self.limits.commit_deadline
        self.manager.write_soon(row).add_done_callback(
            lambda done: self._stored(done, row, deadline, committed, report))

    def _stored(self, done: asyncio.Future[None], row: Write, deadline: float,
                committed: Callable[[], None], report: Callable[[BaseException], None]) -> None:
        """``_store_soon``'s first try at its commit is over (the lock is still held)."""
        if done.cancelled():  # nothing more to try
            try:
                refusal = self._storage_refusal(None)
            finally:
                self.lock.release()
            report(refusal)
            return
        error = done.exception()
        if error is not None:
            self.manager.run_soon(self._store_again(row, deadline, error, committed, report))
            return
        try:
            committed()
        except Exception as e:
            report(e)
        finally:
            self.lock.release()

    async def _store_again(self, row: Write, deadline: float, error: BaseException,
                           committed: Callable[[], None],
                           report: Callable[[BaseException], None]) -> None:
        """``_store_soon``'s first try at its commit failed with ``error``:
        ``TableManager.write`` retries it until ``deadline``."""
        try:
            try:
                await self.manager.write(row, deadline, failed=error)
            except Exception as e:
                raise self._storage_refusal(e) from None
            committed()
        except Exception as e:
            report(e)
        finally:
            self.lock.release()

    def _seat_acts(self, seat: int, event: int | None) -> None:
        """A player's action comes (the lock held): he is back if he was away, and an action
        that answered an earlier event is refused (IllegalAction "stale")."""
        if seat in self.away:  # whoever acts is back, even if the action is refused
            self._set_away(seat, False)
        if event is not None and event != self.events:
            raise IllegalAction("stale", f"this action answered event {event}, but the table "
                                         f"is at event {self.events} now; look again")

    def _apply_action(self, seat: int, text: str) -> tuple[str, Write]:
        """An action applied in memory, with the lock held: its canonical text and the row
        that stores it. Raises IllegalAction with the state unchanged."""
        self._check_open()
        if not self.started:
            raise IllegalAction("not started", "the table has not started yet")
        t = self.table
        try:
            t.apply(text, seat)  # the engine is the judge; raises with the state unchanged
        except IllegalAction:
            raise
        except Exception:
            log.exception("table %s: the engine failed on %r; undone", self.id, text[:60])
            self._undo()
            raise IllegalAction("server", SERVER_FAULT) from None
        deal = t.deal_count - 1
        entry = t.deals[-1].actions[-1]
        canonical = entry["action"] if isinstance(entry, dict) else entry
        idx = len(t.deals[-1].actions) - 1
        key = self.deal_key
        return canonical, (Storage.action_row(self.id, deal, idx, seat, canonical) if key is None
                           else Storage.move_row(key, self.id, deal, idx, seat, canonical))

    def _storage_refusal(self, error: BaseException | None) -> IllegalAction:
        """An event's commit (an action's, a deal's) failed for good with ``error`` (None: it
        was cancelled): the event is undone; the refusal to raise or report."""
        log.warning("table %s: could not store an event; undone", self.id, exc_info=error)
        self._undo()
        return IllegalAction("storage", TRY_AGAIN)

    def _action_committed(self, seat: int, canonical: str) -> None:
        self.committed[-1][1].append((seat, canonical))
        self.events += 1
        self.last_activity = time.time()
        self._note_finished()
        self._after_event()

    def _after_event(self) -> None:
        self.schedule()
        self.broadcast_state()

    async def close(self) -> None:
        """The admin closes the table: no more deals or actions (an unfinished deal stays out
        of the record), every seat may now download the full record."""
        async with self.lock:
            if self.closed:
                return
            await self.manager.commit(self.manager.storage.close_table, self.id)
            self.closed = True
            self.cancel_pending()
            self.next_deal_at = None
            self._info_cache = None
            self._presence_version += 1
            self.broadcast_state()

    # --- scheduling: bots and the next deal -------------------------------------------

    def cancel_pending(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None

    def schedule(self, delay: float | None = None) -> None:
        self.cancel_pending()
        self.next_deal_at = None
        self.turn_deadline = None
        self._info_cache = None
        if not self.started or self.broken or self.closed:
            return
        if not self.may_play():
            self.waiting = True
            return
        self.waiting = False
        t = self.table
        loop = asyncio.get_running_loop()
        if t.in_deal:
            assert t.state is not None
            seat = t.state.current_player()
            if self.thinking_for == self.events:
                return  # a search bot is thinking about this very state already
            if seat in self.bots or seat in self.away:
                wait = self.manager.bot_delay if delay is None else delay
                self.pending = loop.create_task(self._bot_turn(self.events, seat, wait))
            elif self.turn_seconds > 0:  # the turn timer: a stand-in bot plays when it runs out
                wait = self.turn_seconds if delay is None else delay
                self.turn_deadline = time.time() + wait
                self.pending = loop.create_task(self._bot_turn(self.events, seat, wait,
                                                               take_over=True))
        elif self._everybody_away():  # stand-ins do not play deal after deal on their own
            self.waiting = True
        elif self.rematch_votes:  # a rematch was asked for: the next deal waits for the answer
            return
        elif not self.deal_limit_reached():
            if self.pace == "wait":
                if not self._everybody_ready():
                    return  # until every seated player pressed Next (or left)
                pause = 0.0 if delay is None else delay
            else:
                pause = (self.manager.deal_pause if self.pace is None else float(self.pace)) \
                    if delay is None else delay
            self.next_deal_at = time.time() + pause
            self.pending = loop.call_later(pause, self._deal_due)

    def _wait_for_people(self) -> bool:
        """Whether bots must stop now (nobody watches); then the table waits for a client."""
        if self.may_play():
            return False
        self.waiting = True
        self._info_cache = None
        return True

    def _deal_due(self) -> None:
        """The pause after a deal is over: the next deal. With the lock free, it is dealt here
        and its row joins the group commit (``_store_soon``), as an action taken at once is:
        no task, no sleeping coroutine and no chain of coroutines suspended over the commit.
        With the lock held (a client joining, say), a task waits for it (``next_deal``)."""
        self.pending = None
        if self._wait_for_people():
            return
        if not self.lock.try_acquire():
            self.pending = asyncio.get_running_loop().create_task(self._next_deal_queued())
            return
        try:
            if not self._deals_on():
                self.lock.release()
                return
            number, names, key, before = self._deal_in_memory()
        except Exception as e:
            self.lock.release()
            self._deal_refused(e)
            return
        except BaseException:
            self.lock.release()
            raise

        def committed() -> None:
            self._deal_committed(names, key, before)
            self._after_event()

        self._store_soon(Storage.deal_row(self.id, number, names, key), committed,
                         self._deal_refused)

    async def _next_deal_queued(self) -> None:
        self.pending = None
        try:
            await self.next_deal()
        except Exception as e:
            self._deal_refused(e)

    def _deal_refused(self, error: BaseException) -> None:
        """The next deal that came due failed: after a refusal (a database hiccup), it is tried
        again later."""
        if isinstance(error, IllegalAction):
            log.warning("table %s: next deal refused (%s); trying again", self.id, error.rule)
            self.schedule(delay=self.manager.retry_later)
        else:
            log.error("table %s: next deal failed", self.id, exc_info=error)

    async def _bot_turn(self, event: int, seat: int, delay: float, take_over: bool = False) -> None:
        """A bot acts for ``seat``: the seat's own bot, or the stand-in of a human seat that is
        away; ``take_over``: the seat's turn timer ran out, so it is away from now on. A search
        bot (pimc, ismcts) thinks in the manager's worker process with the lock released; its
        action counts only if the table is still at ``event`` when it comes back."""
        await asyncio.sleep(delay)
        async with self.lock:
            if self.events != event or self.closed:
                return
            self.pending = None
            if self._wait_for_people():
                return
            if take_over:
                self._set_away(seat, True)
            state = self.table.state
            assert state is not None
            name = self._bot_name(seat)
            if algorithm_of(name) not in SEARCH_BOTS:
                try:
                    text = state.action_to_string(self._bot_for(seat).act(state, seat))
                except Exception:
                    log.exception("table %s: bot at seat %d failed", self.id, seat)
                    self.broken = f"the bot at seat {seat} failed"
                    return
                retry = await self._bot_acts(seat, text)
                if retry and self.events == event:
                    self.schedule(delay=self.manager.retry_later)
                return
            deal = self._deal_so_far()
            self.thinking_for = event
        try:
            text = await self.manager.thinker.decide(
                deal, name, seat, seed=zlib.crc32(f"{self.id}:{event}".encode()),
                owner=self.creator, table=self.id)
        except Exception as e:
            async with self.lock:
                self.thinking_for = None
                delay = self._search_bot_failed(seat, name, e)
                if self.events == event:
                    self.schedule(delay=delay)
            return
        async with self.lock:
            self.thinking_for = None
            self._search_bot_worked()
            if self.events != event or self.closed:
                return
            retry = await self._bot_acts(seat, text)
            if retry and self.events == event:
                self.schedule(delay=self.manager.retry_later)

    def _search_bot_failed(self, seat: int, name: str, error: BaseException) -> float:
        """A search bot's decision failed (the lock held): the seconds until it is asked again,
        ever longer while it keeps failing (up to ``BOT_RETRY_MAX``). From the
        ``BOT_TROUBLE_AFTER``-th failure in a row the table shows which seat's bot keeps
        failing, until one of its decisions comes. The first failure of a run is logged with
        its traceback; the worker pool logs its own deaths and refusals once."""
        self.bot_failures += 1
        if isinstance(error, WorkersFailing):
            log.warning("table %s: the %s bot at seat %d waits: %s", self.id, name, seat, error)
        elif self.bot_failures == 1:
            log.error("table %s: the %s bot at seat %d failed", self.id, name, seat, exc_info=error)
        if self.bot_failures >= BOT_TROUBLE_AFTER and self.bot_trouble != seat:
            self.bot_trouble = seat
            self._seats_changed()
            self.broadcast_state()
        backoff = self.manager.retry_later * 2.0 ** min(self.bot_failures - 1, 10)
        wait = error.retry_after if isinstance(error, WorkersFailing) else 0.0
        return max(min(backoff, BOT_RETRY_MAX), wait)

    def _search_bot_worked(self) -> None:
        """A search bot's decision came: the run of failures is over (the lock held)."""
        self.bot_failures = 0
        if self.bot_trouble is not None:
            self.bot_trouble = None
            self._seats_changed()

    async def _bot_acts(self, seat: int, text: str) -> bool:
        """Apply a bot's action (the caller holds the lock); True when a transient failure
        (storage) left the table unchanged and the bot should try again."""
        try:
            await self._act_locked(seat, text)
        except IllegalAction as e:
            if e.rule in ("storage", "server"):
                return True
            log.error("table %s: the bot at seat %d chose an illegal action", self.id, seat)
            self.broken = f"the bot at seat {seat} failed"
        except Exception:
            log.exception("table %s: bot at seat %d failed", self.id, seat)
            self.broken = f"the bot at seat {seat} failed"
        return False

    def _bot_name(self, seat: int) -> str:
        """The name of the bot that plays ``seat`` now: its own, or the stand-in's."""
        own = self.seats[seat].bot
        return own if own and seat in self.bots else STAND_IN_BOT

    def _deal_so_far(self) -> DealSoFar:
        """The deal in progress as the thinker's worker rebuilds it."""
        t = self.table
        log_entry = t.deals[-1]
        ts = t.table_state()
        return DealSoFar(self.ruleset_id, dict(self.options), ts.dealer, ts.pot, ts.reserve,
                         tuple(log_entry.deck),
                         tuple(a["action"] if isinstance(a, dict) else a for a in log_entry.actions))

    # --- social: stand-in bots, chat, lobby seats, rematch ----------------------------

    def _bot_for(self, seat: int) -> Bot:
        bot = self.bots.get(seat)
        if bot is None:
            bot = self.stand_ins.get(seat)
            if bot is None:
                bot = self.stand_ins[seat] = make_bot(STAND_IN_BOT, self.rules.family)
        return bot

    def _everybody_away(self) -> bool:
        """Whether the table has human seats and a stand-in bot plays every one of them."""
        humans = {i for i, s in enumerate(self.seats) if not s.bot}
        return bool(humans) and humans <= self.away

    def _seats_changed(self) -> None:
        """Something every client shows about the seats changed (away, open): a new state."""
        self._presence_version += 1
        self._info_cache = None

    def _set_away(self, seat: int, away: bool) -> None:
        """Mark a human seat away (a stand-in bot plays for it) or back; the caller holds the
        lock. Coming back restarts the seat's turn timer if it is on turn."""
        if away == (seat in self.away) or self.seats[seat].bot:
            return
        if away:
            self.away.add(seat)
            self.turn_deadline = None  # the stand-in plays now
            log.info("table %s: seat %d is away; a bot plays for it", self.id, seat)
        else:
            self.away.discard(seat)
            self.schedule()  # a stand-in's pending turn is cancelled; the timer starts again
        self._seats_changed()
        self.broadcast_state()

    async def back(self, seat: int) -> None:
        """The player of an away seat says he is back."""
        async with self.lock:
            self._set_away(seat, False)

    async def say(self, seat: int | None, text: str) -> None:
        """A chat line from a seat: cleaned, length- and rate-limited, stored, then sent to
        every client. Raises IllegalAction (nothing stored, nothing sent) when refused."""
        if seat is None:
            raise IllegalAction("spectator chat", SOCIAL_MESSAGES["spectator chat"])
        line = clean_chat(text, self.limits.chat_max_chars)
        bucket = self.chat_buckets.get(seat)
        if bucket is None:
            bucket = self.chat_buckets[seat] = Bucket(self.limits.chat_rate, self.limits.chat_burst)
        if not bucket.allow():
            raise IllegalAction("chat rate", SOCIAL_MESSAGES["chat rate"])
        idx = self.chat_count
        self.chat_count += 1  # taken now: two lines under way never share a number
        at = time.time()
        try:
            await self.manager.commit(self.manager.storage.add_chat, self.id, idx, seat, line, at)
        except Exception:
            log.warning("table %s: could not store a chat line", self.id, exc_info=True)
            raise IllegalAction("storage", TRY_AGAIN) from None
        entry = self._chat_line(seat, line, at)
        self.chat = (self.chat + [entry])[-self.limits.chat_keep:]
        self.last_activity = at
        msg = dumps({"type": "chat", "messages": [entry]})
        for c in self.conns:
            c.send(msg)

    async def hint(self, seat: int) -> dict[str, Any]:
        """What the search bot would do for ``seat``, on turn at a practice table, from what
        that seat sees: ``{"action", "why"}`` (``why`` a catalogue message), for that seat
        alone. Every client is told that the seat asked, never the hint. Raises IllegalAction
        when the table has no hints, the seat is not on turn, or it asks too often."""
        async with self.lock:
            if not self.hints:
                raise IllegalAction("hints", SOCIAL_MESSAGES["no hints"])
            state = self.table.state
            if (self.closed or state is None or state.is_terminal()
                    or state.current_player() != seat):
                raise IllegalAction("hint turn", SOCIAL_MESSAGES["hint turn"])
            bucket = self.hint_buckets.get(seat)
            if bucket is None:
                bucket = self.hint_buckets[seat] = Bucket(self.limits.hint_rate,
                                                          self.limits.hint_burst)
            if not bucket.allow():
                raise IllegalAction("hint rate", SOCIAL_MESSAGES["hint rate"])
            deal = self._deal_so_far()
            event = self.events
            asked = dumps({"type": "hint asked", "seat": seat, "name": self.seats[seat].name})
            for c in self.conns:
                c.send(asked)
        try:
            # its own queue slot (beside a bot's decision); a second hint waiting: ValueError
            advice: dict[str, Any] = await self.manager.thinker.advise(
                deal, seat, seed=zlib.crc32(f"{self.id}:{event}:hint".encode()),
                owner=self.creator, table=self.id)
        except ValueError:
            raise IllegalAction("hint rate", SOCIAL_MESSAGES["hint rate"]) from None
        except Exception as e:
            log.warning("table %s: no hint for seat %d: %s", self.id, seat, e)
            raise IllegalAction("hint failed", SOCIAL_MESSAGES["hint failed"]) from None
        return {"type": "hint", "event": event, **advice}

    def listing(self) -> dict[str, Any] | None:
        """What the lobby shows of this table, or None when it is not open to strangers."""
        if not self.listed or not self.open_seats or self.closed or self.broken:
            return None
        return {"id": self.id, "ruleset": self.ruleset_id, "title": self.rules.title,
                "family": self.rules.family, "started": self.started,
                "deal_number": self.table.deal_count, "turn_seconds": self.turn_seconds,
                "seats": [{"seat": i, "name": s.name, "bot": s.bot, "free": i in self.open_seats}
                          for i, s in enumerate(self.seats)],
                "free": len(self.open_seats), "taken": len(self.seats) - len(self.open_seats)}

    async def take_seat(self, seat: int | None, name: str | None = None) -> tuple[int, str]:
        """A stranger from the lobby takes an open seat (``None``: the first one); returns the
        seat and its new token. ``name`` (already cleaned): his name, taken only before the
        table starts (a started table keeps the names of its deals). Raises IllegalAction
        (nothing changed) when no seat is free or the name clashes with another seat's."""
        async with self.lock:
            if not self.listed or self.closed or self.broken or not self.open_seats:
                raise IllegalAction("no free seat", SOCIAL_MESSAGES["no free seat"])
            if seat is None:
                seat = min(self.open_seats)
            if seat not in self.open_seats:
                raise IllegalAction("taken", SOCIAL_MESSAGES["taken"])
            if self.started or name == self.seats[seat].name:
                name = None
            if name is not None:
                names = [name if i == seat else s.name for i, s in enumerate(self.seats)]
                alike = look_alike_pair(names)
                if len({n.casefold() for n in names}) != len(names) or alike:
                    raise IllegalAction("names", SOCIAL_MESSAGES["names"].format(name=name))
            token = new_token()
            digest = token_digest(token)
            left = sorted(self.open_seats - {seat})
            try:
                await self.manager.commit(self.manager.storage.take_seat, self.id, seat, digest,
                                          left, name)
            except Exception:
                log.warning("table %s: could not store a taken seat", self.id, exc_info=True)
                raise IllegalAction("storage", TRY_AGAIN) from None
            self.seats[seat].digest = digest
            if name is not None:  # not started: the table has no deals to keep a name for
                self.seats[seat].name = name
                self.table = Table(self.rules, [s.name for s in self.seats], 0)
            self.open_seats.discard(seat)
            self.drop_seat_connections(seat, "this seat was taken by a player from the lobby")
            self._seats_changed()
            self.broadcast_state()
            return seat, token

    def _seated_humans(self) -> set[int]:
        """The human seats whose player is at the table now (connected)."""
        return {c.seat for c in self.conns
                if c.seat is not None and not c.closed and not self.seats[c.seat].bot}

    async def rematch(self, seat: int, agree: bool = True, address: str = "") -> None:
        """A seat asks for a rematch (``agree``), or declines one that was asked for. A new
        table with the same seats, rule set and options is made once every seated player (a
        human seat with its player connected) has agreed; meanwhile the next deal waits. A
        decline ends the question. The rematch counts as a table made by the address of the
        first seat that asked (``TableManager.creation_refusal``). Once made, this table is
        closed and every client is sent its own link to its new seat (``rematch`` message);
        asking again then sends the asker his link again."""
        async with self.lock:
            if self.rematch_id is not None:
                if agree:  # his link again, to the devices that were told it
                    for c in list(self.conns):
                        if c.seat == seat and c.told_rematch:
                            await self._send_rematch(c, again=True)
                return
            if not agree:
                if self.rematch_votes:
                    self._end_rematch_question()
                return
            # a closed table may have an unfinished deal
            if not self.started or self.broken or (self.table.in_deal and not self.closed):
                raise IllegalAction("rematch", SOCIAL_MESSAGES["rematch"])
            if not self.rematch_votes:
                self.rematch_asker = address
            self.rematch_votes.add(seat)
            if self._seated_humans() <= self.rematch_votes:
                await self._make_rematch()  # tells every client
                return
            self._seats_changed()
            self.schedule()  # the next deal waits for the answer
            self.broadcast_state()

    def _end_rematch_question(self) -> None:
        """No rematch (declined, or refused): the votes are gone and the table goes on."""
        self.rematch_votes.clear()
        self.rematch_asker = ""
        self._seats_changed()
        self.schedule()
        self.broadcast_state()

    async def _make_rematch(self) -> None:
        manager = self.manager
        refusal = await manager.creation_refusal(self.rematch_asker)
        if refusal is not None:
            self._end_rematch_question()
            raise refusal
        social = StoredSocial(turn_seconds=self.turn_seconds, listed=self.listed,
                              open_seats=sorted(self.open_seats), creator=self.rematch_asker,
                              lobby_seats=sorted(self.lobby_seats),
                              pace=None if self.pace is None else str(self.pace),
                              hints=self.hints)
        try:
            made = await manager.create(self.ruleset_id, self.options,
                                        [(s.name, s.bot) for s in self.seats], self.max_deals,
                                        social=social)
            await manager.commit(manager.storage.mark_rematch, self.id, made["id"])
        except Exception:
            log.warning("table %s: could not make the rematch", self.id, exc_info=True)
            raise IllegalAction("storage", TRY_AGAIN) from None
        new: LiveTable = made["table"]
        self.rematch_id = new.id
        self.rematch_links = {i: f"/t/{new.id}#{tok}" for i, tok in enumerate(made["seat_tokens"])
                              if tok}
        self.rematch_links[None] = f"/t/{new.id}#{made['spectator_token']}"
        self.rematch_votes.clear()
        self.closed = True
        self.cancel_pending()
        self.next_deal_at = self.turn_deadline = None
        self._seats_changed()
        try:
            await new.start()
        except IllegalAction:  # the seats can start it themselves
            log.warning("table %s: the rematch %s did not start", self.id, new.id)
        self.broadcast_state()
        for c in list(self.conns):  # every device of a seat here now is told its link
            await self._send_rematch(c, again=True)

    async def _send_rematch(self, conn: Conn, again: bool = False) -> None:
        """Tell a client of this table where its seat went: the link made with the rematch,
        or, when that link is gone (a restart), a new one. A seat's old link leads on to the
        new table once: a later connection with it is told that the link went on already
        (``again``: the devices that were here when it went on are told it again). So an old
        link never takes the seat from the player who sits there."""
        if self.rematch_id is None:
            return
        seat = conn.seat
        if seat is not None and seat in self.rematch_claimed and not again:
            conn.send(dumps({"type": "error", "rule": "rematch taken",
                             "message": SOCIAL_MESSAGES["rematch taken"]}))
            return
        link = self.rematch_links.get(seat)
        if link is None:
            if seat is None:
                return
            new = self.manager.get(self.rematch_id)
            if new is None or seat >= len(new.seats) or new.seats[seat].bot \
                    or seat in new.open_seats:
                return
            try:  # nobody holds the new seat's link: the one made with the rematch was lost
                token = await self.manager.reissue(new, seat)
            except Exception:
                log.warning("table %s: no new link for seat %d", self.id, seat, exc_info=True)
                return
            link = self.rematch_links[seat] = f"/t/{new.id}#{token}"
        if seat is not None and seat not in self.rematch_claimed:
            self.rematch_claimed.add(seat)
            try:
                await self.manager.commit(self.manager.storage.set_rematch_claimed, self.id,
                                          sorted(self.rematch_claimed))
            except Exception:
                log.warning("table %s: could not store that seat %d went on to the rematch",
                            self.id, seat, exc_info=True)
        conn.told_rematch = True
        conn.send(dumps({"type": "rematch", "table": self.rematch_id, "link": link}))


class TableManager:
    def __init__(self, storage: Storage, bot_delay: float = 0.6, deal_pause: float = 8.0,
                 limits: ServerLimits | None = None, spill: Spill | None = None):
        self.storage = storage
        self.bot_delay = bot_delay
        self.deal_pause = deal_pause
        self.limits = limits or ServerLimits()
        self.retry_later = 1.0  # seconds before a bot or the next deal tries again
        self.tables: dict[str, LiveTable] = {}
        # one writer thread: SQLite has one writer anyway, and the writer connection is its own
        self.db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-db")
        # reads (a table's record, an archived table) on a thread of their own: a long read
        # must not hold up the group commits every table's next event waits for. (An
        # in-memory database has one connection: its reads stay on the writer thread.)
        self.reader = (self.db if storage.one_connection
                       else ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-read"))
        self.thinker = Thinker()  # the worker process of the search bots
        self._background: set[asyncio.Task[None]] = set()
        self._batch: list[tuple[Write, asyncio.Future[None]]] = []  # rows for the next group commit
        self._flushing = False
        self.row_rate = 0.0  # event rows a second lately (``commit_wait``)
        self._last_group_at = time.monotonic()
        self.rows_written_now = 0  # by the event loop since the last checkpoint
        # events that the database did not commit in time go to the spill file (spill.py)
        self.spill = spill if self.limits.spill_after is not None else None
        self.spill_io = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stammtisch-spill")
        self._draining = False
        self.ws_per_address: dict[str, int] = {}
        self.refusals: dict[str, int] = {}
        self.outbox = Outbox()  # the fast-path messages of the loop's turn
        # tables made per client address (a rematch counts as made by the seat that asked)
        self.creations = AddressBuckets(self.limits.creations_per_minute, self.limits.creation_burst)

    async def creation_refusal(self, address: str) -> IllegalAction | None:
        """Why ``address`` may not make a table now, or None (then it has used one creation):
        too many made lately, as many live tables as one address may hold, or the server
        full. A refusal is counted (``count_refusal``)."""
        limits = self.limits
        if not self.creations.allow(address):
            rule, message = "rate", SOCIAL_MESSAGES["rate"]
        elif sum(1 for t in self.tables.values() if t.creator == address) >= limits.tables_per_address:
            rule, message = "quota", SOCIAL_MESSAGES["quota"].format(n=limits.tables_per_address)
        elif len(self.tables) >= limits.max_live_tables and (
                await self.sweep() == 0 or len(self.tables) >= limits.max_live_tables):
            rule, message = "capacity", SOCIAL_MESSAGES["capacity"]
        else:
            return None
        self.count_refusal(rule)
        return IllegalAction(rule, message)

    def count_refusal(self, rule: str) -> None:
        self.refusals[rule] = self.refusals.get(rule, 0) + 1

    async def commit(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a database write on the writer thread; retry with backoff until
        ``commit_deadline``; raise the last error if it never succeeds."""
        return await self._retried(self.db, fn, *args)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a database read on the reader thread, retried like ``commit``."""
        return await self._retried(self.reader, fn, *args)

    async def _retried(self, executor: ThreadPoolExecutor, fn: Callable[..., T], *args: Any) -> T:
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + self.limits.commit_deadline
        pause = 0.05
        while True:
            try:
                return await loop.run_in_executor(executor, fn, *args)
            except Exception:
                if time.monotonic() + pause > deadline:
                    raise
                log.info("a database call failed; retrying in %.2f s", pause, exc_info=True)
                await asyncio.sleep(pause)
                pause = min(pause * 2, 1.0)

    async def write(self, row: Write, deadline: float | None = None,
                    failed: BaseException | None = None) -> None:
        """Commit one event row (an action or a later deal's deck) in a group commit: rows that
        arrive while a commit is under way go together in the next one. Retried with backoff
        like ``commit`` until ``deadline`` (``time.monotonic()``; default: ``commit_deadline``
        from now); returns only once the row is committed, else raises the last error.
        ``failed``: the error of a first try (``write_soon``) made already."""
        if deadline is None:
            deadline = time.monotonic() + self.limits.commit_deadline
        pause = FIRST_RETRY_PAUSE
        error = failed
        while True:
            if error is None:
                try:
                    return await self.write_soon(row)
                except Exception as e:
                    error = e
            if time.monotonic() + pause > deadline:
                raise error
            log.info("a group commit failed; retrying in %.2f s", pause, exc_info=error)
            error = None
            await asyncio.sleep(pause)
            pause = min(pause * 2, 1.0)

    def write_soon(self, row: Write) -> asyncio.Future[None]:
        """One try of ``write``: the row joins the next group commit; the future ends with it
        (its error if it failed)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._batch.append((row, done))
        if not self._flushing:
            self._flushing = True
            loop.create_task(self._flush())
        return done

    async def _flush(self) -> None:
        try:
            while self._batch:
                wait = self.commit_wait()
                if wait > 0:  # let more events join this commit
                    await asyncio.sleep(wait)
                batch, self._batch = self._batch, []
                self._note_group(len(batch))
                try:
                    await self._commit_rows([row for row, _ in batch])
                except Exception as e:
                    for _, done in batch:
                        if not done.done():
                            done.set_exception(e)
                else:
                    for _, done in batch:
                        if not done.done():
                            done.set_result(None)
        finally:
            self._flushing = False

    def commit_wait(self) -> float:
        """How long a group commit waits for more events to join it: ``commit_window`` on a
        busy server (``commit_busy_rows`` event rows a second or more, lately), less in
        proportion on a quieter one, where few or no other events would come in the window
        and each would only wait longer (like PostgreSQL's ``commit_delay``, which waits
        only while enough other transactions are active)."""
        limits = self.limits
        if limits.commit_window <= 0 or self.row_rate >= limits.commit_busy_rows:
            return max(limits.commit_window, 0.0)
        return limits.commit_window * self.row_rate / limits.commit_busy_rows

    def _note_group(self, rows: int) -> None:
        """Count a group of ``rows`` into ``row_rate``, the rows of the last ``RATE_SECONDS``
        or so a second: each earlier row counts the less the longer ago its group was, so
        the rate falls at once when the server has been quiet."""
        now = time.monotonic()
        since, self._last_group_at = now - self._last_group_at, now
        self.row_rate = self.row_rate * math.exp(-since / RATE_SECONDS) + rows / RATE_SECONDS

    async def _commit_rows(self, rows: list[Write]) -> None:
        """Make one group of event rows durable: in the database, or in the spill file when
        the database does not commit them within ``spill_after`` seconds (or fails), and while
        it is stalled. (Groups need no order between them: a table's next event waits for the
        commit of its last, under the table's lock.)"""
        loop = asyncio.get_running_loop()
        spill = self.spill
        if self._may_write_now(spill):
            if self.rows_written_now >= ROWS_BETWEEN_CHECKPOINTS:
                await self._checkpoint()
            try:
                self.storage.write_batch(rows, now=True)
            except Exception:
                pass  # locked, or failing: the writer thread waits, retries and spills below
            else:
                self.rows_written_now += len(rows)
                return
        if spill is None:
            await loop.run_in_executor(self.db, self.storage.write_batch, rows)
            return
        attempt: asyncio.Future[None] | None = None
        if not spill.stalled:
            attempt = loop.run_in_executor(self.db, self.storage.write_batch, rows)
            done, _ = await asyncio.wait({attempt}, timeout=self.limits.spill_after)
            if done and attempt.exception() is None:
                return
            if not done:  # it may still go through: the drain then skips its rows
                attempt.add_done_callback(lambda f: f.cancelled() or f.exception())
            else:
                attempt = None
            if not spill.stalled:
                spill.stalled = True
                spill.stalled_since = time.monotonic()
                log.info("the database did not commit in time: events go to the spill file "
                         "until it is back")
        spill.appending += 1
        try:
            await loop.run_in_executor(self.spill_io, spill.append, rows)
            spill.pending.extend(rows)
        except Exception:
            spill.appending -= 1
            spill.stalled = False  # the file fails too (a full disk): the next group tries the database
            if attempt is not None:
                # the database attempt still running decides: refusing the events while it
                # might commit them would fork the table
                await attempt
                return
            raise
        else:
            spill.appending -= 1
        if not self._draining:
            self._draining = True
            loop.create_task(self._drain())

    def _may_write_now(self, spill: Spill | None) -> bool:
        """Whether the next group is committed on the event loop itself (``write_batch(now=
        True)``): on an SQLite file that is not stalled.

        Why this deviates from "database work only on the writer thread": under load the
        hand-off to the writer thread, and its fight with the busy loop for the interpreter
        lock, cost more CPU per action than the INSERTs themselves (bench/server_side_by_side.py).
        The loop's connection never waits (it fails at once when locked; the group then goes
        to the writer thread instead) and never checkpoints (a checkpoint syncs the file to
        disk): ``_checkpoint`` does, on the writer thread."""
        return self.storage.writes_now and (spill is None or not spill.stalled)

    async def _checkpoint(self) -> None:
        """Copy the write-ahead log into the database file, on the writer thread, while the
        loop commits nothing (for up to ``CHECKPOINT_WAIT``): a checkpoint that copies every
        frame lets the log start over at the next commit; one that overlaps commits leaves
        the newest frames behind, and with commits every few milliseconds the log would never
        start over and grow without end (tests/test_server_write_now.py bounds it). Only a
        checkpoint, not a commit of the writer thread's: another connection's commit would
        empty the loop connection's page cache, which it then read back page by page."""
        self.rows_written_now = 0
        job = asyncio.get_running_loop().run_in_executor(self.db, self.storage.checkpoint)
        try:
            await asyncio.wait_for(asyncio.shield(job), CHECKPOINT_WAIT)
        except TimeoutError:
            job.add_done_callback(lambda f: f.cancelled() or f.exception())
        except Exception:
            log.warning("a checkpoint of the database failed", exc_info=True)

    async def _drain(self) -> None:
        """Move the spill file's rows into the database (retried with backoff until it takes
        them), then empty the file. The first rows the database takes show it is back: new
        groups go to it again, and the drain only has to catch up with the groups that were
        on their way into the file."""
        loop = asyncio.get_running_loop()
        spill = self.spill
        assert spill is not None
        pause = 0.05
        try:
            while spill.pending or spill.appending:
                # in chunks: the first one that goes in shows the database is back, and new
                # groups go to it again while the drain catches up
                rows = spill.pending[spill.drained:spill.drained + DRAIN_CHUNK]
                if not rows:  # a group is still on its way into the file
                    await asyncio.sleep(0.005)
                    continue
                try:
                    await loop.run_in_executor(self.db, self.storage.write_missing, rows)
                except Exception:
                    log.info("the spill file could not be drained yet; again in %.2f s", pause,
                             exc_info=True)
                    await asyncio.sleep(pause)
                    pause = min(pause * 2, 1.0)
                    continue
                pause = 0.05
                spill.drained += len(rows)
                if spill.stalled:
                    spill.stalled = False
                    stall = time.monotonic() - spill.stalled_since
                    # short stalls are common on a busy machine (a checkpoint, the writer
                    # thread waiting for the interpreter); long ones are worth an operator's eye
                    log.log(logging.WARNING if stall > 1.0 else logging.INFO,
                            "the database stalled for %.1f s; %d event(s) went to the spill file "
                            "meanwhile, and it takes them again", stall, len(spill.pending))
                if spill.drained == len(spill.pending) and not spill.appending:
                    # every row in the file is in the database; a group that spills from now
                    # on is appended after this, on the same thread
                    spill.pending.clear()
                    spill.drained = 0
                    await loop.run_in_executor(self.spill_io, spill.clear)
        finally:
            self._draining = False

    def drain_spill_now(self) -> None:
        """At shut-down: one attempt to move the spill file's rows into the database (what
        stays in the file is moved in at the next start)."""
        spill = self.spill
        if spill is None or not spill.pending:
            return
        try:
            self.storage.write_missing(spill.pending[spill.drained:])
        except Exception:
            log.warning("%d event(s) stay in the spill file until the next start",
                        len(spill.pending) - spill.drained)
            return
        if not spill.appending:
            spill.pending.clear()
            spill.drained = 0
            spill.clear()

    def replay_spill(self) -> None:
        """At start-up: move rows a crash left in the spill file into the database (before
        the tables are loaded from it)."""
        if self.spill is None:
            return
        rows = self.spill.read()
        if not rows:
            return
        deadline = time.monotonic() + max(30.0, self.limits.commit_deadline)
        while True:
            try:
                self.storage.write_missing(rows)
                break
            except Exception:
                if time.monotonic() > deadline:
                    raise
                log.warning("the database does not take the spill file's rows yet; retrying",
                            exc_info=True)
                time.sleep(0.5)
        self.spill.clear()
        log.warning("%d event(s) from the spill file are now in the database", len(rows))

    def background(self, fn: Callable[..., Any], *args: Any) -> None:
        """A write nobody waits for (bookkeeping such as "somebody joined"), retried."""
        async def run() -> None:
            try:
                await self.commit(fn, *args)
            except Exception:
                log.warning("a bookkeeping write failed", exc_info=True)
        self.run_soon(run())

    def run_soon(self, work: Coroutine[Any, Any, None]) -> None:
        """``work`` as a task that nobody awaits, kept until it ends (the loop holds tasks
        only weakly)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def load_all(self) -> None:
        """Rebuild every table not archived from the database (replaying its decks and actions),
        after moving in what a crash left in the spill file."""
        self.replay_spill()
        self.storage.read_deal_keys()  # now, not on the event loop at the first deal
        for tid in self.storage.table_ids():
            st = self.storage.load_table(tid)
            assert st is not None
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
            live.cancel_pending()
            if live._presence_handle is not None:
                live._presence_handle.cancel()
            for c in list(live.conns):
                c.stop()
        self.thinker.shutdown()
        self.db.shutdown(wait=True)
        self.reader.shutdown(wait=True)
        self.spill_io.shutdown(wait=True)
        self.drain_spill_now()

    def get(self, table_id: str) -> LiveTable | None:
        return self.tables.get(table_id)

    async def create(self, ruleset_id: str, options: dict[str, Any], seats: list[tuple[str, str | None]],
                     max_deals: int | None = None, social: StoredSocial | None = None) -> dict[str, Any]:
        """Create a table; returns the tokens (shown once: only digests are stored). A seat
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
                         token_digest(admin), token_digest(spectator), max_deals)
        await self.commit(
            self.storage.create_table, table_id, ruleset_id, options,
            [StoredSeat(i, s.name, s.bot, s.digest) for i, s in enumerate(live_seats)],
            live.admin_digest, live.spectator_digest, max_deals, social,
        )
        if social is not None:
            live.set_social(social)
        self.tables[table_id] = live
        return {"id": table_id, "admin_token": admin, "spectator_token": spectator,
                "seat_tokens": tokens, "table": live}

    async def reissue(self, live: LiveTable, seat: int | None) -> str:
        """A new link for a seat (None: the spectators); the old one stops working at once."""
        token = new_token()
        digest = token_digest(token)
        if seat is None:
            await self.commit(self.storage.set_spectator_digest, live.id, digest)
            live.spectator_digest = digest
            live.drop_seat_connections(None, "the spectator link was replaced by the table's admin")
        else:
            await self.commit(self.storage.set_seat_digest, live.id, seat, digest)
            live.seats[seat].digest = digest
            live.drop_seat_connections(seat, "this seat's link was replaced by the table's admin")
        return token

    # --- expiry -------------------------------------------------------------------------

    def expired(self, live: LiveTable, now: float) -> str | None:
        """Why a table should be archived now, or None."""
        if live.conns:
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

    def search_bots_of(self, address: str) -> int:
        """The search-bot seats (pimc, ismcts) of the live tables ``address`` made."""
        return sum(1 for t in self.tables.values() if t.creator == address and not t.closed
                   for s in t.seats if s.bot and algorithm_of(s.bot) in SEARCH_BOTS)

    async def sweep(self, now: float | None = None) -> int:
        """Archive the tables that expired; returns how many."""
        now = time.time() if now is None else now
        done = 0
        for live in list(self.tables.values()):
            reason = self.expired(live, now)
            if reason is None:
                continue
            try:
                await self.commit(self.storage.archive, live.id, reason)
            except Exception:
                log.warning("table %s could not be archived now", live.id, exc_info=True)
                continue
            live.cancel_pending()
            self.tables.pop(live.id, None)
            done += 1
        if done:
            log.info("archived %d tables", done)
        return done

    async def sweeper(self) -> None:
        while True:
            await asyncio.sleep(self.limits.sweep_interval)
            try:
                await self.sweep()
            except Exception:
                log.exception("sweeping tables failed")

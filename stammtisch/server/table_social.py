"""The social side of a live table (``TableSocial``, a collaborator of ``LiveTable``): the
chat, hints at a practice table and the rematch, with their state; and the refusals of the
social features, the seats included (who sits where is the table's own: away seats, seats a
stranger from the lobby takes)."""

from __future__ import annotations

import logging
import secrets
import zlib
from typing import TYPE_CHECKING, Any, Protocol

from .buckets import Bucket
from .models import SPECTATOR_SEAT
from .names import NameError_, clean_name
from .protocol import ChatLines, Error, HintAsked, RematchSeat
from .refusals import Refusal, RefusalKind, StorageUnavailable
from .table_core import TRY_AGAIN
from .worker_pool import WorkerError

if TYPE_CHECKING:
    from ..table import Table
    from .event_store import TableRecord
    from .fanout import Conn, TableFanout
    from .limits import ServerLimits
    from .locks import TableLock
    from .scheduler import Pending, Scheduler
    from .storage import StoredSocial
    from .table_core import Registry, Seat
    from .thinker import DealSoFar

log = logging.getLogger("stammtisch.server")

# Refusals of the social features: rule code → English message.
SOCIAL_MESSAGES = {
    "chat empty": "a chat line needs some text",
    "chat length": "a chat line is at most {n} characters",
    "chat rate": "you are chatting too fast; wait a moment",
    "spectator chat": "the players switched the spectators' chat off",
    "spectator chat switch": "only a seated player or the table's admin switches the "
                             "spectators' chat",
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


def clean_chat(text: str, limit: int) -> str:
    """A chat line as it is stored and shown: control and format characters (new lines,
    bidirectional overrides) become spaces, the ends are trimmed. Raises a Refusal when
    the line is empty or longer than ``limit`` characters."""
    line = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    if not line:
        raise Refusal("chat empty", SOCIAL_MESSAGES["chat empty"], RefusalKind.INVALID)
    if len(line) > limit:
        raise Refusal("chat length", SOCIAL_MESSAGES["chat length"].format(n=limit),
                      RefusalKind.INVALID)
    return line


def spectator_name(raw: str | None) -> str | None:
    """The name a spectator chats under, cleaned as a seat's name is (None: he chose none,
    and is shown as a spectator). Raises a Refusal when it is too long."""
    if raw is None or not "".join(ch for ch in raw if ch.isprintable()).strip():
        return None
    try:
        return clean_name(raw)
    except NameError_ as e:
        raise Refusal("spectator name", str(e), RefusalKind.INVALID) from None


def new_token() -> str:
    return secrets.token_urlsafe(24)


class SocialHost(Protocol):
    """What the social side needs of its table (``LiveTable``)."""

    id: str
    seats: list[Seat]
    lock: TableLock
    fanout: TableFanout
    record: TableRecord
    clock: Scheduler
    table: Table
    events: int
    hints: bool
    started: bool
    broken: str | None
    closed: bool
    last_activity: float
    limits: ServerLimits

    def schedule(self, delay: float | None = None) -> None: ...

    def broadcast_state(self) -> None: ...

    def seated_humans(self) -> set[int]: ...

    def deal_so_far(self) -> DealSoFar: ...

    def rematch_of(self, creator: str) -> tuple[str, dict[str, Any], list[tuple[str, str | None]],
                                               int | None, StoredSocial]: ...

    def close_for_rematch(self) -> None: ...


class TableSocial:
    """The social side of one live table: its chat, hints and rematch, with their state
    (see the module's docstring). The table's lock is the caller's where a method says so;
    ``hint`` and ``rematch`` take it themselves, as the table's own events do."""

    __slots__ = ("_host", "_registry", "_rematch_timer", "chat", "chat_buckets", "chat_count",
                 "hint_buckets", "rematch_asker", "rematch_claimed", "rematch_deadline",
                 "rematch_id", "rematch_links", "rematch_votes", "spectator_buckets",
                 "spectator_chat")

    def __init__(self, host: SocialHost, registry: Registry) -> None:
        self._host = host
        self._registry = registry
        self.chat: list[dict[str, Any]] = []  # the latest chat lines (at most chat_keep)
        self.chat_count = 0  # chat lines stored in all: the next line's number
        # per seat; a spectator's line also counts for his token (SPECTATOR_SEAT, the admin's
        # one below) and his address (spectator_buckets): the spectators share one link
        self.chat_buckets: dict[int, Bucket] = {}
        self.spectator_buckets: dict[str, Bucket] = {}
        self.spectator_chat = True  # spectators may chat (a seat or the admin switches it)
        self.hint_buckets: dict[str, Bucket] = {}  # per asking address
        self.rematch_id: str | None = None  # the table this table's rematch made
        self.rematch_links: dict[int | None, str] = {}  # links of the rematch not yet delivered
        self.rematch_votes: set[int] = set()  # seats that asked for (agreed to) a rematch
        self.rematch_asker = ""  # the address of the first seat that asked (its creation)
        self.rematch_claimed: set[int] = set()  # seats whose link led on to the rematch
        # when an open rematch question ends unanswered (wall clock), and its timer
        self.rematch_deadline: float | None = None
        self._rematch_timer: Pending | None = None

    def load(self, social: StoredSocial) -> None:
        """As stored: the rematch made, the links that led on to it, the chat."""
        self.rematch_id = social.rematch_id
        self.rematch_claimed = set(social.rematch_claimed)
        self.chat = [self.chat_line(seat, text, at, name) for seat, text, at, name in social.chat]
        self.chat_count = social.chat_count
        self.spectator_chat = social.spectator_chat

    def chat_line(self, seat: int, text: str, at: float, name: str | None = None) -> dict[str, Any]:
        """A stored line as the clients are sent it: a seat's under the seat's name, a
        spectator's (``SPECTATOR_SEAT``) with seat null, the name he chose (or null) and
        ``spectator``."""
        if seat == SPECTATOR_SEAT:
            return {"seat": None, "name": name, "text": text, "at": at, "spectator": True}
        shown = self._host.seats[seat].name if 0 <= seat < len(self._host.seats) else "?"
        return {"seat": seat, "name": shown, "text": text, "at": at}

    def stored_chat(self) -> list[tuple[int, str, float, str | None]]:
        """The lines kept here as they are stored (``StoredSocial.chat``)."""
        return [(SPECTATOR_SEAT, x["text"], x["at"], x["name"]) if x.get("spectator")
                else (x["seat"], x["text"], x["at"], None) for x in self.chat]

    def _allow(self, buckets: dict[Any, Bucket], key: Any) -> bool:
        limits = self._host.limits
        bucket = buckets.get(key)
        if bucket is None:
            bucket = buckets[key] = Bucket(limits.chat_rate, limits.chat_burst)
        return bucket.allow()

    async def say(self, seat: int | None, text: str, name: str | None = None,
                  address: str = "", admin: bool = False) -> None:
        """A chat line from a seat, or from a spectator (``seat`` None; the admin's link
        too) under the ``name`` he chose: cleaned, length- and rate-limited (a seat's per
        seat; a spectator's per link and per ``address``), stored, then sent to every client.
        Raises a Refusal (nothing stored, nothing sent) when refused, and for a spectator
        when the players switched the spectators' chat off."""
        host = self._host
        shown: str | None = None
        if seat is None:
            if not self.spectator_chat:
                raise Refusal("spectator chat", SOCIAL_MESSAGES["spectator chat"],
                              RefusalKind.FORBIDDEN)
            shown = spectator_name(name)
        line = clean_chat(text, host.limits.chat_max_chars)
        key = seat if seat is not None else SPECTATOR_SEAT - int(admin)
        if not self._allow(self.chat_buckets, key) or (
                seat is None and not self._allow(self.spectator_buckets, address)):
            raise Refusal("chat rate", SOCIAL_MESSAGES["chat rate"], RefusalKind.TOO_MANY)
        stored = SPECTATOR_SEAT if seat is None else seat
        idx = self.chat_count
        self.chat_count += 1  # taken now: two lines under way never share a number
        at = host.clock.time()
        try:
            await host.record.add_chat(idx, stored, line, at, shown)
        except StorageUnavailable:
            log.warning("table %s: could not store a chat line", host.id, exc_info=True)
            raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
        entry = self.chat_line(stored, line, at, shown)
        self.chat = (self.chat + [entry])[-host.limits.chat_keep:]
        host.last_activity = at
        host.fanout.send_all(ChatLines.encode([entry]))

    async def switch_spectator_chat(self, on: bool) -> None:
        """A seated player or the admin lets the spectators chat (``on``) or not: stored with
        the table, then every client is told it by the table's info (``spectator_chat``)."""
        host = self._host
        async with host.lock:
            if on == self.spectator_chat:
                return
            try:
                await host.record.set_spectator_chat(on)
            except StorageUnavailable:
                log.warning("table %s: could not store the spectators' chat", host.id,
                            exc_info=True)
                raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
            self.spectator_chat = on
            host.fanout.seats_changed()  # the table's flags
            host.broadcast_state()

    async def hint(self, seat: int, address: str = "") -> tuple[int, dict[str, Any]]:
        """What the Master would do for ``seat``, on turn at a practice table, from what
        that seat sees: the event it answers and ``{"action", "why"}`` (``why`` a catalogue
        message), for that seat alone (``protocol.HintGiven``). Every client is told that the
        seat asked, never the hint. Raises a Refusal when the table has no hints, the seat is
        not on turn, or the asker asks too often.
        A hint counts for the asker's ``address``, not the table's creator's: its allowance
        of hints, and its turn at the search bots' worker."""
        host = self._host
        async with host.lock:
            if not host.hints:
                raise Refusal("hints", SOCIAL_MESSAGES["no hints"], RefusalKind.CONFLICT)
            state = host.table.state
            if (host.closed or state is None or state.is_terminal()
                    or state.current_player() != seat):
                raise Refusal("hint turn", SOCIAL_MESSAGES["hint turn"], RefusalKind.CONFLICT)
            bucket = self.hint_buckets.get(address)
            if bucket is None:
                bucket = self.hint_buckets[address] = Bucket(host.limits.hint_rate,
                                                             host.limits.hint_burst)
            if not bucket.allow():
                raise Refusal("hint rate", SOCIAL_MESSAGES["hint rate"], RefusalKind.TOO_MANY)
            deal = host.deal_so_far()
            event = host.events
            host.fanout.send_all(HintAsked.encode(seat, host.seats[seat].name))
        try:
            # its own queue slot (beside a bot's decision); a second hint waiting: ValueError
            advice: dict[str, Any] = await self._registry.thinker.advise(
                deal, seat, seed=zlib.crc32(f"{host.id}:{event}:hint".encode()),
                owner=address, table=host.id)
        except ValueError:
            raise Refusal("hint rate", SOCIAL_MESSAGES["hint rate"],
                          RefusalKind.TOO_MANY) from None
        except WorkerError as e:  # the worker failed (its fault is the cause), or keeps dying
            log.warning("table %s: no hint for seat %d: %s", host.id, seat, e)
            raise Refusal("hint failed", SOCIAL_MESSAGES["hint failed"],
                          RefusalKind.UNAVAILABLE) from None
        return event, advice

    async def rematch(self, seat: int, agree: bool = True, address: str = "") -> None:
        """A seat asks for a rematch (``agree``), or declines one that was asked for. A new
        table with the same seats, rule set and options is made once every seated player (a
        human seat with its player connected) has agreed; meanwhile the next deal waits. A
        decline ends the question. The rematch counts as a table made by the address of the
        first seat that asked (``TableManager.creation_refusal``). Once made, this table is
        closed and every client is sent its own link to its new seat (``rematch`` message);
        asking again then sends the asker his link again."""
        host = self._host
        async with host.lock:
            if self.rematch_id is not None:
                if agree:  # his link again, to the devices that were told it
                    for c in host.fanout.of_seat(seat):
                        if c.told_rematch:
                            await self.send_rematch(c, again=True)
                return
            if not agree:
                if self.rematch_votes:
                    self.end_rematch_question()
                return
            # a closed table may have an unfinished deal
            if not host.started or host.broken or (host.table.in_deal and not host.closed):
                raise Refusal("rematch", SOCIAL_MESSAGES["rematch"], RefusalKind.CONFLICT)
            if not self.rematch_votes:
                self.rematch_asker = address
                seconds = host.limits.rematch_seconds
                self.rematch_deadline = host.clock.time() + seconds
                self._rematch_timer = host.clock.later(seconds, self._rematch_due)
            self.rematch_votes.add(seat)
            if host.seated_humans() <= self.rematch_votes:
                await self._make_rematch()  # tells every client
                return
            host.fanout.seats_changed()
            host.schedule()  # the next deal waits for the answer
            host.broadcast_state()

    def rematch_waiting(self) -> list[int]:
        """The seated players an open rematch question waits for (none when none is open)."""
        if not self.rematch_votes:
            return []
        return sorted(self._host.seated_humans() - self.rematch_votes)

    def _rematch_due(self) -> None:
        self._rematch_timer = None
        self._host.clock.run_soon(self._rematch_timed_out())

    async def _rematch_timed_out(self) -> None:
        """Nobody answered in time: the question ends as if declined."""
        async with self._host.lock:
            if self.rematch_votes and self.rematch_id is None:
                self.end_rematch_question()

    def seat_left(self) -> None:
        """A connection closed: an open question is checked again over the players still
        seated (who left no longer holds it up)."""
        if self.rematch_votes and self.rematch_id is None:
            self._host.clock.run_soon(self._recheck_rematch())

    async def _recheck_rematch(self) -> None:
        """Every player still seated agreed: the rematch is made; none of those who agreed
        is still seated: the question ends; else the table shows whom it waits for now."""
        host = self._host
        async with host.lock:
            if not self.rematch_votes or self.rematch_id is not None:
                return
            seated = host.seated_humans()
            if not seated & self.rematch_votes:
                self.end_rematch_question()
            elif seated <= self.rematch_votes:
                try:
                    await self._make_rematch()
                except Refusal as e:  # nobody to tell: the table goes on
                    log.warning("table %s: no rematch (%s)", host.id, e.rule)
                    if self.rematch_votes:
                        self.end_rematch_question()
            else:
                host.fanout.seats_changed()
                host.broadcast_state()

    def _question_over(self) -> None:
        self.rematch_votes.clear()
        self.rematch_asker = ""
        self.rematch_deadline = None
        if self._rematch_timer is not None:
            self._rematch_timer.cancel()
            self._rematch_timer = None

    def end_rematch_question(self) -> None:
        """No rematch (declined, refused, unanswered in time, or nobody who agreed is still
        there): the votes are gone and the table goes on."""
        host = self._host
        self._question_over()
        host.fanout.seats_changed()
        host.schedule()
        host.broadcast_state()

    async def _make_rematch(self) -> None:
        host = self._host
        manager = self._registry
        refusal = await manager.creation_refusal(self.rematch_asker)
        if refusal is not None:
            self.end_rematch_question()
            raise refusal
        ruleset_id, options, seats, max_deals, social = host.rematch_of(self.rematch_asker)
        try:
            made = await manager.create(ruleset_id, options, seats, max_deals, social=social)
            await host.record.mark_rematch(made["id"])
        except StorageUnavailable:
            log.warning("table %s: could not make the rematch", host.id, exc_info=True)
            raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
        new = made["table"]
        self.rematch_id = new.id
        self.rematch_links = {i: f"/t/{new.id}#{tok}" for i, tok in enumerate(made["seat_tokens"])
                              if tok}
        self.rematch_links[None] = f"/t/{new.id}#{made['spectator_token']}"
        self._question_over()
        host.close_for_rematch()
        try:
            await new.start()
        except Refusal:  # the seats can start it themselves
            log.warning("table %s: the rematch %s did not start", host.id, new.id)
        host.broadcast_state()
        for c in list(host.fanout.conns):  # every device of a seat here now is told its link
            await self.send_rematch(c, again=True)

    async def send_rematch(self, conn: Conn, again: bool = False) -> None:
        """Tell a client of this table where its seat went: the link made with the rematch,
        or, when that link is gone (a restart), a new one. A seat's old link leads on to the
        new table once: a later connection with it is told that the link went on already
        (``again``: the devices that were here when it went on are told it again). So an old
        link never takes the seat from the player who sits there."""
        host = self._host
        if self.rematch_id is None:
            return
        seat = conn.seat
        if seat is not None and seat in self.rematch_claimed and not again:
            conn.send(Error.encode("rematch taken", SOCIAL_MESSAGES["rematch taken"]))
            return
        link = self.rematch_links.get(seat)
        if link is None:
            if seat is None:
                return
            new = self._registry.get(self.rematch_id)
            if new is None or seat >= len(new.seats) or new.seats[seat].bot \
                    or seat in new.open_seats:
                return
            try:  # nobody holds the new seat's link: the one made with the rematch was lost
                token = await self._registry.reissue(new, seat)
            except StorageUnavailable:
                log.warning("table %s: no new link for seat %d", host.id, seat, exc_info=True)
                return
            link = self.rematch_links[seat] = f"/t/{new.id}#{token}"
        if seat is not None and seat not in self.rematch_claimed:
            self.rematch_claimed.add(seat)
            try:
                await host.record.set_rematch_claimed(sorted(self.rematch_claimed))
            except StorageUnavailable:
                log.warning("table %s: could not store that seat %d went on to the rematch",
                            host.id, seat, exc_info=True)
        conn.told_rematch = True
        conn.send(RematchSeat.encode(self.rematch_id, link))



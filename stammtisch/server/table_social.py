"""The social side of a live table: who sits where (away seats, seats a stranger from the
lobby takes), chat, hints at a practice table, and the rematch."""

from __future__ import annotations

import logging
import secrets
import zlib
from typing import TYPE_CHECKING, Any

from ..table import Table
from .buckets import Bucket
from .fanout import Conn
from .names import look_alike_pair
from .protocol import ChatLines, Error, HintAsked, RematchSeat
from .refusals import Refusal, RefusalKind, StorageUnavailable
from .storage import StoredSocial, token_digest
from .table_core import TRY_AGAIN, TableCore
from .worker_pool import WorkerError

if TYPE_CHECKING:
    from .live_table import LiveTable

log = logging.getLogger("stammtisch.server")

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


def new_token() -> str:
    return secrets.token_urlsafe(24)


class TableSocial(TableCore):
    """A live table's social features (see the module's docstring)."""

    __slots__ = ()

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
        every client. Raises a Refusal (nothing stored, nothing sent) when refused."""
        if seat is None:
            raise Refusal("spectator chat", SOCIAL_MESSAGES["spectator chat"],
                          RefusalKind.FORBIDDEN)
        line = clean_chat(text, self.limits.chat_max_chars)
        bucket = self.chat_buckets.get(seat)
        if bucket is None:
            bucket = self.chat_buckets[seat] = Bucket(self.limits.chat_rate, self.limits.chat_burst)
        if not bucket.allow():
            raise Refusal("chat rate", SOCIAL_MESSAGES["chat rate"], RefusalKind.TOO_MANY)
        idx = self.chat_count
        self.chat_count += 1  # taken now: two lines under way never share a number
        at = self.clock.time()
        try:
            await self.record.add_chat(idx, seat, line, at)
        except StorageUnavailable:
            log.warning("table %s: could not store a chat line", self.id, exc_info=True)
            raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
        entry = self._chat_line(seat, line, at)
        self.chat = (self.chat + [entry])[-self.limits.chat_keep:]
        self.last_activity = at
        self.fanout.send_all(ChatLines.encode([entry]))

    async def hint(self, seat: int, address: str = "") -> tuple[int, dict[str, Any]]:
        """What the search bot would do for ``seat``, on turn at a practice table, from what
        that seat sees: the event it answers and ``{"action", "why"}`` (``why`` a catalogue
        message), for that seat alone (``protocol.HintGiven``). Every client is told that the
        seat asked, never the hint. Raises a Refusal when the table has no hints, the seat is
        not on turn, or the asker asks too often.
        A hint counts for the asker's ``address``, not the table's creator's: its allowance
        of hints, and its turn at the search bots' worker."""
        async with self.lock:
            if not self.hints:
                raise Refusal("hints", SOCIAL_MESSAGES["no hints"], RefusalKind.CONFLICT)
            state = self.table.state
            if (self.closed or state is None or state.is_terminal()
                    or state.current_player() != seat):
                raise Refusal("hint turn", SOCIAL_MESSAGES["hint turn"], RefusalKind.CONFLICT)
            bucket = self.hint_buckets.get(address)
            if bucket is None:
                bucket = self.hint_buckets[address] = Bucket(self.limits.hint_rate,
                                                             self.limits.hint_burst)
            if not bucket.allow():
                raise Refusal("hint rate", SOCIAL_MESSAGES["hint rate"], RefusalKind.TOO_MANY)
            deal = self._deal_so_far()
            event = self.events
            self.fanout.send_all(HintAsked.encode(seat, self.seats[seat].name))
        try:
            # its own queue slot (beside a bot's decision); a second hint waiting: ValueError
            advice: dict[str, Any] = await self.manager.thinker.advise(
                deal, seat, seed=zlib.crc32(f"{self.id}:{event}:hint".encode()),
                owner=address, table=self.id)
        except ValueError:
            raise Refusal("hint rate", SOCIAL_MESSAGES["hint rate"],
                          RefusalKind.TOO_MANY) from None
        except WorkerError as e:  # the worker failed (its fault is the cause), or keeps dying
            log.warning("table %s: no hint for seat %d: %s", self.id, seat, e)
            raise Refusal("hint failed", SOCIAL_MESSAGES["hint failed"],
                          RefusalKind.UNAVAILABLE) from None
        return event, advice

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
            self.drop_seat_connections(seat, "this seat was taken by a player from the lobby")
            self._seats_changed()
            self.broadcast_state()
            return seat, token

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
                    for c in self.fanout.of_seat(seat):
                        if c.told_rematch:
                            await self._send_rematch(c, again=True)
                return
            if not agree:
                if self.rematch_votes:
                    self._end_rematch_question()
                return
            # a closed table may have an unfinished deal
            if not self.started or self.broken or (self.table.in_deal and not self.closed):
                raise Refusal("rematch", SOCIAL_MESSAGES["rematch"], RefusalKind.CONFLICT)
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
            await self.record.mark_rematch(made["id"])
        except StorageUnavailable:
            log.warning("table %s: could not make the rematch", self.id, exc_info=True)
            raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
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
        except Refusal:  # the seats can start it themselves
            log.warning("table %s: the rematch %s did not start", self.id, new.id)
        self.broadcast_state()
        for c in list(self.fanout.conns):  # every device of a seat here now is told its link
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
            conn.send(Error.encode("rematch taken", SOCIAL_MESSAGES["rematch taken"]))
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
            except StorageUnavailable:
                log.warning("table %s: no new link for seat %d", self.id, seat, exc_info=True)
                return
            link = self.rematch_links[seat] = f"/t/{new.id}#{token}"
        if seat is not None and seat not in self.rematch_claimed:
            self.rematch_claimed.add(seat)
            try:
                await self.record.set_rematch_claimed(sorted(self.rematch_claimed))
            except StorageUnavailable:
                log.warning("table %s: could not store that seat %d went on to the rematch",
                            self.id, seat, exc_info=True)
        conn.told_rematch = True
        conn.send(RematchSeat.encode(self.rematch_id, link))

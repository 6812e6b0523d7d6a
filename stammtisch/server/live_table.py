"""A live table: its rules of play as one class, and the events that change it (a deal, an
action), each applied, committed and broadcast.

One asyncio lock per table makes it the single writer of that table: an event (a deal's deck,
one action) is applied to the in-memory table (the engine validates it), committed through
the event store, and only then put on every connection's outgoing queue (the fan-out).
Whoever reads a table's state (a connecting client, ``GET /api/tables/{id}``) takes the same
lock, so nobody sees an event before its commit.

A client's action that finds its table's lock free and nothing ahead of it from the same
client is taken at once, from the socket's read (``act_now``): applied, its row handed to the
group commit, and the rest (the broadcast, or the refusal) done in the commit's callback, the
lock held until then. A failed or timed-out commit is retried with backoff for
``ServerLimits.commit_deadline`` seconds; if it still fails, the event is undone (the table is
rebuilt as it was before its latest deal, and that deal's committed events replayed), the
client is told "try again", and nothing is broadcast.

Flow of a table: created → started (``start``: first dealer drawn, deal 1 dealt) → deal after
deal, up to its deal limit → closed by its admin (no more deals; every seat may download the
full record) → archived (no longer loaded at start-up).
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import Callable

from ..games.base import IllegalAction
from ..table import Table, draw_first_dealer
from .fanout import Conn
from .protocol import ChatLines, CloseCode
from .refusals import MESSAGES, STORAGE_ERRORS, LeaseLost, Refusal, RefusalKind, StorageUnavailable
from .storage import Storage, Write
from .table_core import SERVER_FAULT, TRY_AGAIN, DealStart
from .table_social import SOCIAL_MESSAGES, TableSocial
from .table_turns import TableTurns

log = logging.getLogger("stammtisch.server")


class LiveTable(TableTurns, TableSocial):
    """One live table (see the module's docstring and ``TableCore``'s)."""

    __slots__ = ()

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
            if self.waiting:  # somebody came: the bots play on
                self.schedule()
            elif self.pace == "wait" and self.next_ready and not self.table.in_deal:
                self.schedule()  # the players who asked for the next deal are all here
            self.send_state(conn)
            if self.chat:
                conn.send(ChatLines.encode(self.chat, history=True))
            if self.rematch_id is not None:
                await self._send_rematch(conn)
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
            self._after_event()

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
                    if self.rematch_votes:
                        raise Refusal("rematch asked", SOCIAL_MESSAGES["rematch asked"])
                    raise Refusal("deal limit", f"the table has played its {self.max_deals} deals")
                return
            if early and self.pace == "wait" and seat is not None:
                self.next_ready.add(seat)
                if not self._everybody_ready():
                    self._seats_changed()
                    self.broadcast_state()
                    return
            await self._deal()
            self._after_event()

    async def _deal(self, first_dealer: int | None = None) -> None:
        """Deal the next hand: in memory first (the engine may refuse), then committed."""
        number, names, key, before = self._deal_in_memory()
        if first_dealer is None:
            row = Storage.deal_row(self.id, number, names, key)
            await self._awaited(lambda then: self._commit(
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
        before = self._before_deal()
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
            await self._awaited(lambda then: self.take(seat, text, event, then))
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
        self._commit(row, lambda: self._action_committed(seat, canonical), then)

    @staticmethod
    async def _awaited(start: Callable[[Callable[[BaseException | None], None]], None]) -> None:
        """An event started with ``start(then)`` (``take``, ``_play``, ``_commit``), awaited:
        returns once it is committed and shown; raises its refusal or fault."""
        outcome: asyncio.Future[BaseException | None] = asyncio.get_running_loop().create_future()

        def then(error: BaseException | None) -> None:
            if not outcome.done():  # the caller may be gone (cancelled); the event counts anyway
                outcome.set_result(error)

        start(then)
        error = await outcome
        if error is not None:
            raise error

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

    def _action_committed(self, seat: int, canonical: str) -> None:
        self.committed[-1][1].append((seat, canonical))
        self.events += 1
        self.last_activity = self.clock.time()
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
            await self.record.close()
            self.closed = True
            self.cancel_pending()
            self.next_deal_at = None
            self.fanout.seats_changed()
            self.broadcast_state()

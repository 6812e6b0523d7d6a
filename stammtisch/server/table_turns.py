"""The timers of a live table: its bots and stand-in bots, the turn timer, the next deal.

Bots act and deals follow each other only while a person (a human seat or a spectator) is
connected, and ``watcher_grace`` seconds after the last one left: a table of bots is for
watching, not for filling the disk. A bot or the next-deal timer meeting a transient error
(storage) tries again later: a transient database error never breaks a table. A search bot
(pimc, ismcts) thinks in the thinker's worker process, with the table's lock released.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Callable
from functools import partial

from ..bots import SEARCH_BOTS, algorithm_of
from ..games.base import IllegalAction
from .refusals import Refusal
from .storage import Storage
from .table_core import STAND_IN_BOT, TableCore
from .worker_pool import WorkersFailing

log = logging.getLogger("stammtisch.server")

#: A search bot's decisions that fail in a row before the table shows the seat's trouble, and
#: the longest pause before it is asked again (seconds).
BOT_TROUBLE_AFTER = 3
BOT_RETRY_MAX = 60.0


class TableTurns(TableCore):
    """A live table's timers (see the module's docstring)."""

    __slots__ = ()

    def cancel_pending(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None

    def schedule(self, delay: float | None = None) -> None:
        self.cancel_pending()
        self.next_deal_at = None
        self.turn_deadline = None
        self.fanout.info_changed()
        if not self.started or self.broken or self.closed:
            return
        if not self.may_play():
            self.waiting = True
            return
        self.waiting = False
        t = self.table
        clock = self.clock
        if t.in_deal:
            assert t.state is not None
            seat = t.state.current_player()
            if self.thinking_for == self.events:
                return  # a search bot is thinking about this very state already
            if seat in self.bots or seat in self.away:
                wait = self.manager.bot_delay if delay is None else delay
                self.pending = clock.later(wait, partial(self._bot_due, self.events, seat, False))
            elif self.turn_seconds > 0:  # the turn timer: a stand-in bot plays when it runs out
                wait = self.turn_seconds if delay is None else delay
                self.turn_deadline = self.clock.time() + wait
                self.pending = clock.later(wait, partial(self._bot_due, self.events, seat, True))
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
            self.next_deal_at = self.clock.time() + pause
            self.pending = clock.later(pause, self._deal_due)

    def _wait_for_people(self) -> bool:
        """Whether bots must stop now (nobody watches); then the table waits for a client."""
        if self.may_play():
            return False
        self.waiting = True
        self.fanout.info_changed()
        return True

    def _deal_due(self) -> None:
        """The pause after a deal is over: the next deal. With the lock free, it is dealt here
        and its row joins the group commit (``_commit``), as an action taken at once is:
        no task, no sleeping coroutine and no chain of coroutines suspended over the commit.
        With the lock held (a client joining, say), a task waits for it (``next_deal``)."""
        self.pending = None
        if self._wait_for_people():
            return
        if not self.lock.try_acquire():
            self.pending = self.clock.task(self._next_deal_queued())
            return
        try:
            if not self._deals_on():
                self.lock.release()
                return
            number, names, key, before = self._deal_in_memory()
        except Refusal as e:
            self.lock.release()
            self._deal_refused(e)
            return
        except BaseException:  # a fault too: the lock is free again, and the fault goes up
            self.lock.release()
            raise

        def committed() -> None:
            self._deal_committed(names, key, before)
            self._after_event()

        def then(error: BaseException | None) -> None:
            try:
                if error is not None:
                    self._deal_refused(error)
            finally:
                self.lock.release()

        self._commit(Storage.deal_row(self.id, number, names, key), committed, then)

    async def _next_deal_queued(self) -> None:
        self.pending = None
        try:
            await self.next_deal()
        except Refusal as e:  # a fault goes up: the scheduler logs it
            self._deal_refused(e)

    def _deal_refused(self, error: BaseException) -> None:
        """The next deal that came due failed: after a refusal (a database hiccup), it is tried
        again later."""
        if isinstance(error, Refusal):
            log.warning("table %s: next deal refused (%s); trying again", self.id, error.rule)
            self.schedule(delay=self.manager.retry_later)
        else:
            log.error("table %s: next deal failed", self.id, exc_info=error)

    def _bot_due(self, event: int, seat: int, take_over: bool) -> None:
        """A bot's delay or a seat's turn timer ran out (at ``event``): the bot acts, in a
        task of its own (a search bot thinks with the lock released)."""
        self.pending = self.clock.task(self._bot_turn(event, seat, take_over))

    async def _bot_turn(self, event: int, seat: int, take_over: bool) -> None:
        """A bot acts for ``seat``: the seat's own bot, or the stand-in of a human seat that is
        away; ``take_over``: the seat's turn timer ran out, so it is away from now on. A search
        bot (pimc, ismcts) thinks in the thinker's worker process with the lock released; its
        action counts only if the table is still at ``event`` when it comes back."""
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
                bot = self._bot_for(seat)
                retry = await self._bot_acts(seat, lambda: state.action_to_string(bot.act(state, seat)))
                if retry and self.events == event:
                    self.schedule(delay=self.manager.retry_later)
                return
            deal = self._deal_so_far()
            self.thinking_for = event
        try:
            text = await self.manager.thinker.decide(
                deal, name, seat, seed=zlib.crc32(f"{self.id}:{event}".encode()),
                owner=self.creator, table=self.id)
        except Exception as e:  # a search bot may fail in any way: it is asked again, ever later
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
            retry = await self._bot_acts(seat, lambda: text)
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

    async def _bot_acts(self, seat: int, choose: Callable[[], str]) -> bool:
        """Apply a bot's action, ``choose()`` (the caller holds the lock); True when a
        transient failure (storage) left the table unchanged and the bot should try again."""
        try:
            await self._awaited(lambda then: self._play(seat, choose(), then))
        except (Refusal, IllegalAction) as e:
            if e.rule in ("storage", "server"):
                return True
            log.error("table %s: the bot at seat %d chose an illegal action", self.id, seat)
            self.broken = f"the bot at seat {seat} failed"
        except Exception:  # a bot, or its action, may fail in any way (undone): the table shows it
            log.exception("table %s: bot at seat %d failed", self.id, seat)
            self.broken = f"the bot at seat {seat} failed"
        return False

    def _bot_name(self, seat: int) -> str:
        """The name of the bot that plays ``seat`` now: its own, or the stand-in's."""
        own = self.seats[seat].bot
        return own if own and seat in self.bots else STAND_IN_BOT

"""The turn clock of a live table: its timers (a bot's delay, the turn timer, the pause before
the next deal), their pacing, the bots that play its seats, and a search bot's backoff.

Bots act and deals follow each other only while a person (a human seat or a spectator) is
connected, and ``watcher_grace`` seconds after the last one left: a table of bots is for
watching, not for filling the disk. A bot or the next-deal timer meeting a transient error
(storage) tries again later: a transient database error never breaks a table. A search bot
(pimc) thinks in the thinker's worker process, with the table's lock released.

The clock decides when; the table (``LiveTable.schedule``) decides what comes next, and gives
the clock what to run then. Every time and timer comes from the ``Scheduler`` it is given, so
a test runs a table on a clock of its own.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from ..bots import Bot, make_bot
from .scheduler import Pending, Scheduler
from .worker_pool import WorkersFailing

log = logging.getLogger("stammtisch.server")

#: The bot that plays for a seat whose turn timer ran out, until the person returns.
STAND_IN_BOT = "heuristic"

#: A search bot's decisions that fail in a row before the table shows the seat's trouble, and
#: the longest pause before it is asked again (seconds).
BOT_TROUBLE_AFTER = 3
BOT_RETRY_MAX = 60.0


class Pacing(Protocol):
    """How fast a table's bots and deals follow each other (the registry's settings)."""

    bot_delay: float  # seconds before a bot acts
    deal_pause: float  # seconds between deals at a table of bots
    retry_later: float  # seconds before a bot or the next deal tries again


class TurnClock:
    """The timers of one live table (see the module's docstring): at most one pending at a
    time, with what the clients are shown of it (``next_deal_at``, ``turn_deadline``,
    ``waiting``), and the bots of its seats."""

    __slots__ = ("_family", "_pacing", "bot_failures", "bot_trouble", "bots", "clock",
                 "next_deal_at", "pending", "stand_ins", "thinking_for", "turn_deadline",
                 "waiting")

    def __init__(self, clock: Scheduler, pacing: Pacing, family: str,
                 bot_seats: dict[int, str]) -> None:
        self.clock = clock
        self._pacing = pacing
        self._family = family
        self.bots = {seat: make_bot(name, family) for seat, name in bot_seats.items()}
        self.stand_ins: dict[int, Bot] = {}
        self.pending: Pending | None = None
        self.next_deal_at: float | None = None
        self.turn_deadline: float | None = None  # when the timer of the seat on turn runs out
        self.waiting = False  # bots wait for a person to connect
        self.thinking_for: int | None = None  # the event a search bot is thinking about
        # a search bot's decisions that failed in a row, and the seat whose bot keeps failing
        self.bot_failures = 0
        self.bot_trouble: int | None = None

    @property
    def retry_later(self) -> float:
        return self._pacing.retry_later

    def deal_pause(self, pace: str | float | None) -> float:
        """The pause between deals: the table's ``pace`` in seconds, else the server's (a
        table that waits for its players, ``pace`` "wait", asks for no pause)."""
        return self._pacing.deal_pause if pace is None else float(pace)

    def cancel(self) -> None:
        """The pending timer (or the work it started) is dropped."""
        if self.pending is not None:
            self.pending.cancel()
            self.pending = None

    def stop(self) -> None:
        """Nothing pending, no deadline shown: before the table decides what comes next."""
        self.cancel()
        self.next_deal_at = None
        self.turn_deadline = None

    def bot_after(self, delay: float | None, due: Callable[[], None]) -> None:
        """A bot acts after the bot delay (``delay``: after that instead): ``due()``."""
        self.pending = self.clock.later(self._pacing.bot_delay if delay is None else delay, due)

    def turn_timer(self, seconds: float, due: Callable[[], None]) -> None:
        """The seat on turn has ``seconds``; then ``due()`` (a stand-in takes over)."""
        self.turn_deadline = self.clock.time() + seconds
        self.pending = self.clock.later(seconds, due)

    def deal_after(self, pause: float, due: Callable[[], None]) -> None:
        """The next deal in ``pause`` seconds: ``due()``."""
        self.next_deal_at = self.clock.time() + pause
        self.pending = self.clock.later(pause, due)

    def run(self, work: Coroutine[Any, Any, None]) -> None:
        """What a timer started (a bot's turn, a deal waiting for the lock), as the pending
        work: dropped with the timers."""
        self.pending = self.clock.task(work)

    def run_soon(self, work: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        """``run(work(*args))``: what a timer that ran out starts (a bot's turn, in a task of
        its own: a search bot thinks with the table's lock released)."""
        self.run(work(*args))

    def bot_for(self, seat: int) -> Bot:
        """The bot that plays ``seat`` now: its own, else its stand-in (made once)."""
        bot = self.bots.get(seat)
        if bot is None:
            bot = self.stand_ins.get(seat)
            if bot is None:
                bot = self.stand_ins[seat] = make_bot(STAND_IN_BOT, self._family)
        return bot

    def bot_name(self, seat: int, own: str | None) -> str:
        """The name of the bot that plays ``seat`` now: its ``own``, or the stand-in's."""
        return own if own and seat in self.bots else STAND_IN_BOT

    def search_failed(self, table_id: str, seat: int, name: str, error: BaseException
                      ) -> tuple[float, bool]:
        """A search bot's decision failed: the seconds until it is asked again, ever longer
        while it keeps failing (up to ``BOT_RETRY_MAX``), and whether the table shows the
        seat's trouble from now on (from the ``BOT_TROUBLE_AFTER``-th failure in a row, until
        one of its decisions comes). The first failure of a run is logged with its traceback;
        the worker pool logs its own deaths and refusals once."""
        self.bot_failures += 1
        if isinstance(error, WorkersFailing):
            log.warning("table %s: the %s bot at seat %d waits: %s", table_id, name, seat, error)
        elif self.bot_failures == 1:
            log.error("table %s: the %s bot at seat %d failed", table_id, name, seat,
                      exc_info=error)
        shown = self.bot_failures >= BOT_TROUBLE_AFTER and self.bot_trouble != seat
        if shown:
            self.bot_trouble = seat
        backoff = self._pacing.retry_later * 2.0 ** min(self.bot_failures - 1, 10)
        wait = error.retry_after if isinstance(error, WorkersFailing) else 0.0
        return max(min(backoff, BOT_RETRY_MAX), wait), shown

    def search_worked(self) -> bool:
        """A search bot's decision came: the run of failures is over; True when the table
        showed a seat's trouble until now."""
        self.bot_failures = 0
        if self.bot_trouble is None:
            return False
        self.bot_trouble = None
        return True

"""The clock of the live tables: the time, their timers (a bot's delay, the turn timer, the next
deal, presence) and the work nobody awaits, on the running event loop.

A table asks for the time and for a timer here and keeps the handle to cancel it; it never
touches the loop or the system's clock itself, so what happens (the table) and when it runs
(this) stay apart, and a test runs a table's timers on a clock of its own (a subclass whose
``time``, ``monotonic`` and ``later`` it moves on by hand).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

log = logging.getLogger("stammtisch.server")

#: A timer or a task a table may cancel.
Pending = asyncio.TimerHandle | asyncio.Task[None]


class Scheduler:
    """Timers and tasks on the running loop; the tasks nobody awaits are kept until they end
    (the loop holds tasks only weakly)."""

    __slots__ = ("_background",)

    def __init__(self) -> None:
        self._background: set[asyncio.Task[None]] = set()

    @staticmethod
    def time() -> float:
        """The wall clock (seconds since the epoch): what clients are shown (deadlines)."""
        return time.time()

    @staticmethod
    def monotonic() -> float:
        """The monotonic clock: how long something lasted."""
        return time.monotonic()

    @staticmethod
    def later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        """``callback()`` after ``delay`` seconds (cancel the handle to drop it)."""
        return asyncio.get_running_loop().call_later(delay, callback)

    @staticmethod
    def task(work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """``work`` as a task the caller keeps (and may cancel); a fault of it is logged with
        its traceback."""
        task = asyncio.get_running_loop().create_task(work)
        task.add_done_callback(Scheduler._log_fault)
        return task

    def run_soon(self, work: Coroutine[Any, Any, None]) -> None:
        """``work`` as a task that nobody awaits, kept until it ends; a fault of it is logged
        with its traceback (nobody else would see it)."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        self._background.discard(task)
        self._log_fault(task)

    @staticmethod
    def _log_fault(task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())

"""The timers of the live tables (a bot's delay, the turn timer, the next deal, presence) and
the work nobody awaits, on the running event loop.

A table asks for a timer here and keeps the handle to cancel it; it never touches the loop
itself, so what happens (the table) and when it runs (this) stay apart.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

#: A timer or a task a table may cancel.
Pending = asyncio.TimerHandle | asyncio.Task[None]


class Scheduler:
    """Timers and tasks on the running loop; the tasks nobody awaits are kept until they end
    (the loop holds tasks only weakly)."""

    __slots__ = ("_background",)

    def __init__(self) -> None:
        self._background: set[asyncio.Task[None]] = set()

    @staticmethod
    def later(delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:
        """``callback()`` after ``delay`` seconds (cancel the handle to drop it)."""
        return asyncio.get_running_loop().call_later(delay, callback)

    @staticmethod
    def task(work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        """``work`` as a task the caller keeps (and may cancel)."""
        return asyncio.get_running_loop().create_task(work)

    def run_soon(self, work: Coroutine[Any, Any, None]) -> None:
        """``work`` as a task that nobody awaits, kept until it ends."""
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

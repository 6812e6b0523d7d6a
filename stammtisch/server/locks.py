"""A table's lock: ``asyncio.Lock`` that can also be taken without a coroutine.

The web table takes a client's action at once, from the socket's read, when the table's lock
is free (``routes.live.ws_endpoint``'s ``take_now``): no task wake-up, no coroutine chain suspended
over the group commit and resumed after it. That needs a lock taken synchronously and
released from a callback, and ``asyncio.Lock`` offers neither without its private attributes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any


class TableLock:
    """``asyncio.Lock`` (as of Python 3.11, step for step: who gets it and in which loop turn,
    cancelled waiters included) with ``available`` and ``try_acquire``, which take it as
    ``acquire`` would take it without waiting."""

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[asyncio.Future[bool]] = deque()

    def locked(self) -> bool:
        return self._locked

    def available(self) -> bool:
        """Whether ``acquire`` would take the lock without waiting: it is free, and nobody
        waits for it but cancelled waiters (a waiter woken by ``release`` that has not run
        yet still has it coming)."""
        if self._locked:
            return False
        return not self._waiters or all(w.cancelled() for w in self._waiters)

    def try_acquire(self) -> bool:
        """Take the lock now if it is ``available``; False if it is not."""
        if not self.available():
            return False
        self._locked = True
        return True

    async def acquire(self) -> bool:
        if self.available():
            self._locked = True
            return True
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        except asyncio.CancelledError:
            if not self._locked:
                self._wake_up_first()  # it may have been woken: the next waiter's turn
            raise
        self._locked = True
        return True

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("Lock is not acquired.")
        self._locked = False
        self._wake_up_first()

    def _wake_up_first(self) -> None:
        """Wake the first waiter, unless it is done already: a cancelled one wakes the next
        when its task runs (``acquire``), a woken one takes the lock."""
        if self._waiters:
            first = self._waiters[0]
            if not first.done():
                first.set_result(True)

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.release()

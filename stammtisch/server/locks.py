"""A table's lock: ``asyncio.Lock`` that can also be taken without a coroutine.

The web table takes a client's action at once, from the socket's read, when the table's lock
is free (``app.ws_endpoint``'s ``take_now``): no task wake-up, no coroutine chain suspended
over the group commit and resumed after it. That needs a lock taken synchronously and
released from a callback, and ``asyncio.Lock`` offers neither without its private attributes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any


class TableLock:
    """``asyncio.Lock``'s interface (``async with``, ``acquire``, ``release``, ``locked``) and
    ``try_acquire``. Waiters get the lock in the order they came: ``release`` hands it to the
    first one still waiting, and it stays locked in between (``asyncio.Lock`` wakes that
    waiter, which then takes it: the same order, but ``locked()`` is False for a moment, and
    a ``try_acquire`` then would jump the queue). A waiter cancelled after it was handed the
    lock passes it on."""

    __slots__ = ("_locked", "_waiters")

    def __init__(self) -> None:
        self._locked = False
        self._waiters: deque[asyncio.Future[None]] = deque()

    def locked(self) -> bool:
        return self._locked

    def try_acquire(self) -> bool:
        """Take the lock now if it is free (then nobody waits for it); False if it is not."""
        if self._locked:
            return False
        self._locked = True
        return True

    async def acquire(self) -> bool:
        if not self._locked:
            self._locked = True
            return True
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                self.release()  # it was handed the lock as it was cancelled: pass it on
            else:
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
            raise
        return True

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("Lock is not acquired.")
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():  # a cancelled waiter is skipped
                waiter.set_result(None)  # the lock is its own now, as it is
                return
        self._locked = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: Any) -> None:
        self.release()

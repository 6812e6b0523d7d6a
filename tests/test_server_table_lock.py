"""locks.TableLock, a table's lock: it must grant the lock as ``asyncio.Lock`` does, to the
same waiter in the same loop turn, for every sequence of acquires, releases and cancellations
(cancelled waiters included), and ``try_acquire`` takes it exactly when ``acquire`` would
without waiting."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stammtisch.server.locks import TableLock

OPS = st.lists(st.one_of(
    st.tuples(st.just("acquire"), st.just(0)),
    st.tuples(st.just("release"), st.just(0)),  # by the task holding it, if any
    st.tuples(st.just("cancel"), st.integers(0, 9)),  # the k-th acquirer started so far
    st.tuples(st.just("step"), st.integers(1, 3)),  # let the loop run a few turns
), max_size=40)


def run_ops(make: Any, ops: list[tuple[str, int]]) -> dict[str, Any]:
    """What a lock made by ``make()`` does under ``ops``: the order in which the acquirers got
    it, which were cancelled, and which still wait at the end."""

    async def main() -> dict[str, Any]:
        lock = make()
        order: list[int] = []
        holding: list[int] = []
        tasks: list[asyncio.Task[None]] = []

        async def acquirer(k: int) -> None:
            await lock.acquire()
            order.append(k)
            holding.append(k)

        for op, arg in ops:
            if op == "acquire":
                tasks.append(asyncio.ensure_future(acquirer(len(tasks))))
            elif op == "release" and holding:
                holding.pop()
                lock.release()
            elif op == "cancel" and arg < len(tasks):
                tasks[arg].cancel()
            elif op == "step":
                for _ in range(arg):
                    await asyncio.sleep(0)
        for _ in range(5):
            await asyncio.sleep(0)
        ends = []
        for task in tasks:
            if task.done():
                ends.append("cancelled" if task.cancelled() else "got it")
            else:
                task.cancel()
                ends.append("waiting")
        return {"order": order, "ends": ends, "held": holding}

    return asyncio.run(main())


@settings(max_examples=400, deadline=None)
@given(OPS)
# a waiter cancelled while it waits: the lock goes to the next one
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("step", 1), ("cancel", 1),
          ("release", 0), ("step", 3)])
# a waiter cancelled after the release woke it, before it ran: the lock goes on
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("step", 1), ("release", 0),
          ("cancel", 1), ("step", 3)])
# a waiter cancelled, then a release: the cancelled waiter's task passes the lock on, a
# turn later, and a waiter woken but cancelled before it ran passes it on again
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("step", 1), ("cancel", 1),
          ("release", 0), ("step", 1), ("release", 0), ("step", 3)])
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("acquire", 0), ("release", 0),
          ("step", 1), ("cancel", 2), ("release", 0), ("step", 1), ("cancel", 3)])
def test_table_lock_grants_as_asyncio_lock_does(ops: list[tuple[str, int]]) -> None:
    assert run_ops(TableLock, ops) == run_ops(asyncio.Lock, ops)


def test_try_acquire_takes_a_free_lock_only() -> None:
    async def main() -> None:
        lock = TableLock()
        assert lock.try_acquire() and lock.locked()
        assert not lock.try_acquire() and not lock.available()
        waiter = asyncio.ensure_future(lock.acquire())
        await asyncio.sleep(0)
        lock.release()  # the waiter is woken: it has the lock coming, nobody jumps the queue
        assert not lock.available() and not lock.try_acquire()
        await waiter
        assert lock.locked()
        lock.release()
        assert not lock.locked() and lock.try_acquire()
        lock.release()
        async with lock:
            assert not lock.try_acquire()
        assert lock.try_acquire()

    asyncio.run(main())


def test_release_of_a_free_lock_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        TableLock().release()

"""transport.Inbox, where a WebSocket's messages wait for the app: it must behave as the
``asyncio.Queue`` it replaces in uvicorn's protocol, for every operation that protocol uses,
cancelled getters included (no message lost, none delivered twice, the order kept)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stammtisch.server.transport import Inbox

OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.integers(0, 99)),
    st.tuples(st.just("get"), st.just(0)),
    st.tuples(st.just("cancel"), st.integers(0, 9)),  # the k-th getter started so far
    st.tuples(st.just("step"), st.integers(1, 3)),  # let the loop run a few turns
    st.tuples(st.just("get_nowait"), st.just(0)),
), max_size=40)


def run_ops(make: Any, ops: list[tuple[str, int]]) -> dict[str, Any]:
    """What a queue made by ``make(loop)`` does under ``ops``: what every getter got (or that
    it was cancelled), what ``get_nowait`` found, and what is left, with sizes along the way."""

    async def main() -> dict[str, Any]:
        queue = make(asyncio.get_running_loop())
        getters: list[asyncio.Task[Any]] = []
        seen: list[Any] = []
        for op, arg in ops:
            if op == "put":
                queue.put_nowait(arg)
            elif op == "get":
                getters.append(asyncio.ensure_future(queue.get()))
            elif op == "cancel" and arg < len(getters):
                getters[arg].cancel()
            elif op == "step":
                for _ in range(arg):
                    await asyncio.sleep(0)
            elif op == "get_nowait":
                try:
                    seen.append(queue.get_nowait())
                except asyncio.QueueEmpty:
                    seen.append("empty")
            seen.append((queue.qsize(), queue.empty()))
        for _ in range(5):
            await asyncio.sleep(0)
        got = []
        for task in getters:
            if task.done():
                got.append("cancelled" if task.cancelled() else task.result())
            else:
                task.cancel()
                got.append("waiting")
        left = []
        while not queue.empty():
            left.append(queue.get_nowait())
        return {"got": got, "seen": seen, "left": left}

    return asyncio.run(main())


@settings(max_examples=300, deadline=None)
@given(OPS)
# a getter cancelled while it waits: the next message goes to the next getter
@example([("get", 0), ("get", 0), ("step", 1), ("cancel", 0), ("put", 5), ("step", 3)])
# a getter cancelled after a message woke it, before it ran: the message goes on
@example([("get", 0), ("get", 0), ("step", 1), ("put", 5), ("cancel", 0), ("step", 3)])
def test_inbox_does_what_asyncio_queue_does(ops: list[tuple[str, int]]) -> None:
    assert run_ops(Inbox, ops) == run_ops(lambda loop: asyncio.Queue(), ops)


def test_a_getter_cancelled_after_its_wake_up_passes_the_message_on() -> None:
    async def main() -> list[Any]:
        inbox = Inbox(asyncio.get_running_loop())
        first = asyncio.ensure_future(inbox.get())
        second = asyncio.ensure_future(inbox.get())
        await asyncio.sleep(0)  # both wait
        inbox.put_nowait("a")  # wakes the first...
        first.cancel()  # ...which is cancelled before it runs
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return [first.cancelled(), await asyncio.wait_for(second, 1)]

    assert asyncio.run(main()) == [True, "a"]


def test_get_nowait_on_an_empty_inbox_raises_queue_empty() -> None:
    async def main() -> None:
        with pytest.raises(asyncio.QueueEmpty):
            Inbox(asyncio.get_running_loop()).get_nowait()

    asyncio.run(main())

"""A table's timers: what happens when the pause before the next deal runs out.

The next deal that comes due after the pause (``LiveTable._deal_due``): with the table's lock
free it is dealt without a task, and committed before any client sees it; a failed commit is
retried; a commit that fails for good, or an engine that cannot deal, leaves the table as it
was and the deal is tried again later; with the lock held, the deal waits for it."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stammtisch.server.event_store import EventStore
from stammtisch.server.fanout import Conn
from stammtisch.server.limits import ServerLimits
from stammtisch.server.live_table import LiveTable
from stammtisch.server.manager import TableManager
from stammtisch.server.scheduler import Scheduler
from stammtisch.server.storage import Storage
from stammtisch.table import Table

PAUSE = 0.01


class Wake:
    """What the tests wait for changes only when a socket is written to or a commit fails:
    each of those sets ``event`` (a new one for each test's loop), which ``_until`` waits on
    instead of watching a clock."""

    event = asyncio.Event()

    @classmethod
    def up(cls) -> None:
        cls.event.set()


class Socket:
    """A client's socket on the fast path: the messages written to it, and for each state
    message, how many deals the database held when it was written."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.table_id = ""
        self.states: list[tuple[dict[str, Any], int]] = []

    def __call__(self, message: Any) -> bool:
        m = json.loads(message)
        if m["type"] == "state":
            self.states.append((m, len(self.storage.load_table(self.table_id).deals)))
            Wake.up()
        return True


async def _nothing(*_: Any) -> None:
    return None


async def _table(tmp_path: Path, **limits: Any) -> tuple[TableManager, LiveTable, list[Socket]]:
    Wake.event = asyncio.Event()
    storage = Storage(f"sqlite:///{tmp_path / 'd.sqlite'}")
    manager = TableManager(storage, bot_delay=0, deal_pause=PAUSE,
                           limits=ServerLimits(**limits))
    manager.retry_later = 0.05
    made = await manager.create("tippen/grupp-1975", {"players": 3},
                                [("Anna", None), ("Ben", None), ("Cora", None)])
    live = made["table"]
    live.pace = PAUSE  # human seats wait for "Next deal" by default; these tests time the pause
    sockets = [Socket(storage) for _ in range(3)]
    for seat, socket in enumerate(sockets):
        socket.table_id = live.id
        await live.attach(Conn(seat, _nothing, _nothing, write_now=socket, outbox=manager.outbox))
    await live.start()
    return manager, live, sockets


async def _play_the_deal(live: LiveTable, rng: random.Random) -> int:
    """Random legal actions until the deal is over; the event number then."""
    while live.table.in_deal:
        state = live.table.state
        assert state is not None
        action = rng.choice(state.legal_actions())
        await live.act(state.current_player(), state.action_to_string(action))
    return live.events


async def _until(done: Any, seconds: float = 300.0) -> None:
    """Until ``done()``, looked at again whenever something happened (``Wake``); only a hang
    runs into ``seconds``."""
    async with asyncio.timeout(seconds):
        while not done():
            Wake.event.clear()
            await Wake.event.wait()


def _shown(sockets: list[Socket], event: int) -> list[tuple[dict[str, Any], int]]:
    return [next((s for s in socket.states if s[0]["event"] == event), None)  # type: ignore[misc]
            for socket in sockets]


def _count_next_deal(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = LiveTable.next_deal

    async def counted(self: LiveTable, early: bool = False) -> None:
        calls[0] += 1
        await real(self, early)

    monkeypatch.setattr(LiveTable, "next_deal", counted)
    return calls


def _failing_deal_commits(monkeypatch: pytest.MonkeyPatch) -> dict[str, float]:
    """Group commits that hold a deal's row fail while ``fail["left"]`` > 0 (each counts one)."""
    fail = {"left": 0.0, "failed": 0.0}
    real = EventStore._commit_rows

    async def flaky(store: EventStore, rows: Any, fence: Any = None) -> Any:
        if fail["left"] > 0 and any(row[0] == "deal" for row in rows):
            fail["left"] -= 1
            fail["failed"] += 1
            Wake.up()
            # the database's own error: what the event store retries (any other is a fault)
            raise sqlite3.OperationalError("database is locked (a test)")
        return await real(store, rows, fence)

    monkeypatch.setattr(EventStore, "_commit_rows", flaky)
    return fail


def _count_undone(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How often the table went back to its last committed event; each one wakes ``_until``,
    which then looks at the table before any later deal could be dealt."""
    undone = [0]
    real = LiveTable._undo

    def counted(self: LiveTable) -> None:
        real(self)
        undone[0] += 1
        Wake.up()

    monkeypatch.setattr(LiveTable, "_undo", counted)
    return undone


def test_the_next_deal_comes_due_and_is_committed_before_it_is_shown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_next_deal(monkeypatch)

    async def run() -> None:
        manager, live, sockets = await _table(tmp_path)
        rng = random.Random(1)
        for deal in range(2, 5):
            over = await _play_the_deal(live, rng)
            assert isinstance(live.turns.pending, asyncio.TimerHandle)  # no task waits for the pause
            await _until(lambda over=over: all(_shown(sockets, over + 1)))  # type: ignore[misc]
            for message, deals_stored in _shown(sockets, over + 1):
                assert message["table"]["deal_number"] == deal
                assert deals_stored == deal  # committed before it was shown
            assert live.table.in_deal and live.events == over + 1
        assert calls[0] == 0  # never the coroutine way
        manager.shutdown()

    asyncio.run(run())


def test_a_failed_commit_of_the_next_deal_is_retried(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    fail = _failing_deal_commits(monkeypatch)
    decks: list[list[int]] = []
    real = Table.secret_deck

    def drawn(self: Table) -> list[int]:
        decks.append(real(self))
        return decks[-1]

    async def run() -> None:
        manager, live, sockets = await _table(tmp_path)
        over = await _play_the_deal(live, random.Random(2))
        monkeypatch.setattr(Table, "secret_deck", drawn)
        fail["left"] = 1  # the next deal's first commit fails
        await _until(lambda: all(_shown(sockets, over + 1)))
        assert fail["failed"] == 1
        assert len(decks) == 1  # the same deal committed on a retry, not a new one dealt
        for message, deals_stored in _shown(sockets, over + 1):
            assert message["table"]["deal_number"] == 2 and deals_stored == 2
        stored = manager.storage.load_table(live.id).deals
        assert [len(actions) for _, actions in stored][1] == 0
        assert stored[1][0] == live.table.deals[-1].deck  # the deck that was dealt
        manager.shutdown()

    asyncio.run(run())


def test_a_deal_that_cannot_be_stored_is_undone_and_dealt_again_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fail = _failing_deal_commits(monkeypatch)
    undone = _count_undone(monkeypatch)

    async def run() -> None:
        manager, live, sockets = await _table(tmp_path, commit_deadline=0.1)
        over = await _play_the_deal(live, random.Random(3))
        balances = dict(live.table.ledger.balances)
        fail["left"] = 10**6
        # refused and undone, tried again later, refused and undone: looked at just then (a
        # count of failed commits alone may stop while a later try's deal is in memory)
        await _until(lambda: undone[0] >= 2)
        assert fail["failed"] >= 2
        assert not live.table.in_deal and live.events == over  # undone: as it was
        assert live.table.ledger.balances == balances and live.broken is None
        assert not any(_shown(sockets, over + 1))  # nothing was shown
        assert len(manager.storage.load_table(live.id).deals) == 1
        fail["left"] = 0
        await _until(lambda: all(_shown(sockets, over + 1)))
        await asyncio.sleep(0.05)
        assert live.events == over + 1 and live.table.in_deal  # dealt once
        assert len(manager.storage.load_table(live.id).deals) == 2
        assert not any(_shown(sockets, over + 2))
        manager.shutdown()

    asyncio.run(run())


def test_a_deal_the_engine_cannot_make_when_due_is_tried_again_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Table.start_deal
    failures = [0]

    def failing(self: Table, deck: list[int]) -> Any:
        if len(self.deals) == 1 and failures[0] < 2:
            failures[0] += 1
            raise OverflowError("int too large (a test)")
        return real(self, deck)

    async def run() -> None:
        manager, live, sockets = await _table(tmp_path)
        over = await _play_the_deal(live, random.Random(4))
        monkeypatch.setattr(Table, "start_deal", failing)
        await _until(lambda: all(_shown(sockets, over + 1)))
        assert failures[0] == 2 and live.events == over + 1 and live.broken is None
        assert len(manager.storage.load_table(live.id).deals) == 2
        manager.shutdown()

    asyncio.run(run())


def test_a_deal_due_while_the_lock_is_held_waits_for_it(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _count_next_deal(monkeypatch)

    async def run() -> None:
        manager, live, sockets = await _table(tmp_path)
        over = await _play_the_deal(live, random.Random(5))
        await live.lock.acquire()  # a client joining, say
        await asyncio.sleep(10 * PAUSE)
        assert live.events == over and not any(_shown(sockets, over + 1))
        live.lock.release()
        await _until(lambda: all(_shown(sockets, over + 1)))
        for message, deals_stored in _shown(sockets, over + 1):
            assert message["table"]["deal_number"] == 2 and deals_stored == 2
        assert calls[0] == 1 and live.events == over + 1
        manager.shutdown()

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# The turn timer, the pause before the next deal and a table nobody watches, on a clock of the
# test's own (``Scheduler`` with ``time``, ``monotonic`` and ``later`` moved on by hand): no
# test here sleeps for a timer to run out.


class FakeClock(Scheduler):
    """The tables' clock, moved on by ``advance`` only; the tasks still run on the loop."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000_000.0
        self.timers: list[tuple[float, int, Callable[[], None], asyncio.TimerHandle]] = []
        self._made = 0

    def time(self) -> float:  # type: ignore[override]
        return self.now

    def monotonic(self) -> float:  # type: ignore[override]
        return self.now

    def later(self, delay: float, callback: Callable[[], None]) -> asyncio.TimerHandle:  # type: ignore[override]
        handle = asyncio.TimerHandle(self.now + delay, callback, (), asyncio.get_running_loop())
        self._made += 1
        self.timers.append((self.now + delay, self._made, callback, handle))
        return handle

    async def advance(self, seconds: float, settled: Callable[[], bool]) -> None:
        """The clock ``seconds`` on, each timer due on the way run at its time, the table
        ``settled()`` after each (what a timer started may take a commit's while)."""
        end = self.now + seconds
        while True:
            due = sorted(t for t in self.timers if t[0] <= end and not t[3].cancelled())
            if not due:
                break
            when, _, callback, handle = due[0]
            self.timers.remove(due[0])
            self.now = max(self.now, when)
            callback()
            await _until_idle(settled)
        self.now = end


async def _until_idle(settled: Callable[[], bool]) -> None:
    """Until ``settled()`` and the table's lock is free (a commit runs on the database's
    thread); only a hang runs into the timeout."""
    async with asyncio.timeout(300):
        while not settled():
            await asyncio.sleep(0.001)


async def _clocked_table(tmp_path: Path, turn_seconds: int = 0, pace: float | str = "wait",
                         **limits: Any) -> tuple[FakeClock, LiveTable, list[Conn]]:
    clock = FakeClock()
    storage = Storage(f"sqlite:///{tmp_path / 'c.sqlite'}")
    manager = TableManager(storage, bot_delay=0, deal_pause=PAUSE,
                           limits=ServerLimits(**limits), scheduler=clock)
    made = await manager.create("tippen/grupp-1975", {"players": 3},
                                [("Anna", None), ("Ben", None), ("Cora", None)])
    live: LiveTable = made["table"]
    live.turn_seconds = turn_seconds
    live.pace = pace
    conns = [Conn(seat, _nothing, _nothing, write_now=lambda m: True, outbox=manager.outbox)
             for seat in range(3)]
    for conn in conns:
        await live.attach(conn)
    await live.start()
    return clock, live, conns


def _idle(live: LiveTable) -> Callable[[], bool]:
    """Whether the table is idle: no task of a timer's under way, its lock free."""
    def idle() -> bool:
        task = live.turns.pending if isinstance(live.turns.pending, asyncio.Task) else None
        return (task is None or task.done()) and live.lock.available() and not live.lock.locked()
    return idle


def test_a_seat_whose_turn_timer_runs_out_is_played_by_a_stand_in(tmp_path: Path) -> None:
    async def main() -> None:
        clock, live, _ = await _clocked_table(tmp_path, turn_seconds=30)
        state = live.table.state
        assert state is not None
        seat, event = state.current_player(), live.events
        assert live.turns.turn_deadline == clock.now + 30
        await clock.advance(29.9, _idle(live))
        assert live.events == event and live.away == set()
        await clock.advance(0.2, lambda: live.events > event and _idle(live)())
        assert live.events == event + 1 and live.away == {seat}
        # the stand-in goes on playing the away seat without waiting for the timer again
        assert live.table.deals[-1].actions[-1]["player"] == live.table.players[seat]

    asyncio.run(main())


def test_the_timer_does_not_play_for_a_table_nobody_watches(tmp_path: Path) -> None:
    async def main() -> None:
        clock, live, conns = await _clocked_table(tmp_path, turn_seconds=30, watcher_grace=5.0)
        event = live.events
        for conn in conns:
            live.detach(conn)
        await clock.advance(3, _idle(live))  # within the grace: the timer still runs
        assert live.events == event and not live.turns.waiting
        await clock.advance(600, _idle(live))  # past the grace and the timer: nobody plays
        assert live.events == event and live.turns.waiting and live.away == set()

    asyncio.run(main())


def test_the_next_deal_comes_after_its_pause_on_the_table_s_clock(tmp_path: Path) -> None:
    async def main() -> None:
        clock, live, _ = await _clocked_table(tmp_path, pace=20.0)
        await _play_the_deal(live, random.Random(4))
        deals = live.table.deal_count
        assert live.turns.next_deal_at == clock.now + 20
        await clock.advance(19.5, _idle(live))
        assert live.table.deal_count == deals
        await clock.advance(1, lambda: live.table.deal_count > deals and _idle(live)())
        assert live.table.deal_count == deals + 1 and live.table.in_deal

    asyncio.run(main())


# --- a rematch question: it ends unanswered at its deadline, and who leaves no longer holds it


def _free(live: LiveTable, done: Callable[[], bool]) -> Callable[[], bool]:
    return lambda: done() and _idle(live)()


def test_an_unanswered_rematch_question_ends_at_its_deadline_and_the_deals_go_on(
        tmp_path: Path) -> None:
    async def main() -> None:
        clock, live, _ = await _clocked_table(tmp_path, pace=20.0, rematch_seconds=60.0)
        await _play_the_deal(live, random.Random(4))
        deals = live.table.deal_count
        await live.social.rematch(0)
        info = live.info()
        assert info["rematch_votes"] == [0] and info["rematch_waiting"] == [1, 2]
        deadline = clock.now + 60
        assert info["rematch_deadline"] == deadline and info["next_deal_at"] is None
        await clock.advance(59.5, _idle(live))
        assert live.social.rematch_votes == {0} and live.table.deal_count == deals
        await clock.advance(1, _free(live, lambda: not live.social.rematch_votes))
        info = live.info()
        assert info["rematch_votes"] == [] and info["rematch_waiting"] == []
        assert info["rematch_deadline"] is None and not info["closed"]
        assert info["next_deal_at"] == deadline + 20  # as if declined: the table goes on
        await clock.advance(21, _free(live, lambda: live.table.deal_count > deals))
        assert live.table.deal_count == deals + 1 and live.social.rematch_id is None

    asyncio.run(main())


def test_who_leaves_an_open_rematch_question_no_longer_holds_it_up(tmp_path: Path) -> None:
    async def main() -> None:
        clock, live, conns = await _clocked_table(tmp_path)
        await _play_the_deal(live, random.Random(5))
        await live.social.rematch(0)
        await live.social.rematch(2)
        assert live.info()["rematch_waiting"] == [1]  # Ben has not answered
        live.detach(conns[1])  # Ben goes: everybody still seated agreed
        await _until_idle(_free(live, lambda: live.social.rematch_id is not None))
        assert live.closed and live.social.rematch_votes == set()
        assert live.social.rematch_deadline is None

    asyncio.run(main())


def test_the_next_deal_comes_when_the_only_one_who_asked_for_a_rematch_leaves(
        tmp_path: Path) -> None:
    """Anna and Cora pressed Next deal, Ben asked for a rematch and went: the question ends
    (nobody there asks for it) and the next deal comes."""
    async def main() -> None:
        clock, live, conns = await _clocked_table(tmp_path)
        await _play_the_deal(live, random.Random(6))
        deals = live.table.deal_count
        await live.next_deal(early=True, seat=0)
        await live.next_deal(early=True, seat=2)
        await live.social.rematch(1)
        assert live.info()["rematch_waiting"] == [0, 2]
        live.detach(conns[1])
        await _until_idle(_free(live, lambda: not live.social.rematch_votes))
        await clock.advance(1, _free(live, lambda: live.table.deal_count > deals))
        assert live.table.deal_count == deals + 1 and live.social.rematch_id is None
        assert not live.closed and live.info()["rematch_deadline"] is None

    asyncio.run(main())

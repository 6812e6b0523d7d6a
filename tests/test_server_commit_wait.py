"""How long a group commit waits for more events (``TableManager.commit_wait``): the whole
``commit_window`` on a busy server, where many events join each commit, and next to nothing
on a quiet one, where nobody would join and the lone event would only wait longer."""

from __future__ import annotations

import asyncio

import pytest
from test_server_write_now import HANG, new_storage

from stammtisch.server import tables as tables_module
from stammtisch.server.limits import ServerLimits
from stammtisch.server.storage import Storage
from stammtisch.server.tables import TableManager


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_follows_the_rate_of_event_rows(tmp_path, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(tables_module.time, "monotonic", clock)
    storage, _ = new_storage(tmp_path)
    limits = ServerLimits(commit_window=0.04, commit_busy_rows=500)
    manager = TableManager(storage, limits=limits)
    assert manager.commit_wait() == 0.0  # nothing yet: a first event commits at once
    for _ in range(50):  # 1,000 tables: ~3,000 rows a second, a group every 40 ms
        clock.now += 0.04
        manager._note_group(120)
    assert manager.row_rate == pytest.approx(3000, rel=0.1)
    assert manager.commit_wait() == 0.04
    clock.now += 5.0  # a pause: the server has been quiet for a while
    manager._note_group(1)
    assert manager.row_rate < 3
    assert manager.commit_wait() < 0.0003
    for _ in range(200):  # ~100 tables: ~250 rows a second, a share of the window
        clock.now += 0.02
        manager._note_group(5)
    assert manager.row_rate == pytest.approx(250, rel=0.1)
    assert manager.commit_wait() == pytest.approx(0.02, rel=0.1)


def test_a_lone_event_on_a_quiet_server_is_committed_without_waiting_the_window(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    # a window far beyond HANG: had the event waited for it, the wait below would run out
    manager = TableManager(storage, limits=ServerLimits(commit_window=10 * HANG))

    async def one() -> None:
        async with asyncio.timeout(HANG):
            await manager.write(Storage.deal_row(tid, 0, ["10h"]))

    asyncio.run(one())
    assert [d for d, _ in storage.load_table(tid).deals] == [["10h"]]


def test_a_busy_server_waits_the_window_and_commits_the_events_together(tmp_path):
    storage, ids = new_storage(tmp_path, tables=40)
    manager = TableManager(storage, limits=ServerLimits(commit_window=0.2, commit_busy_rows=50))
    manager.row_rate = 1000.0  # as after a busy spell
    groups = []
    write_batch = storage.write_batch

    def spy(rows, now=False):
        groups.append(len(rows))
        return write_batch(rows, now=now)

    storage.write_batch = spy

    async def many() -> None:
        async def later(i: int, tid: str) -> None:
            await asyncio.sleep(0.002 * i)  # arriving one after another within the window
            await manager.write(Storage.deal_row(tid, 0, ["10h"]))
        await asyncio.gather(*(later(i, t) for i, t in enumerate(ids)))

    asyncio.run(many())
    assert groups == [40]  # one commit for all of them

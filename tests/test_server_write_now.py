"""The group commit on the event loop's own connection (``Storage.write_batch(now=True)``,
``TableManager._may_write_now``): it never waits for a lock, fails whole, leaves the pool's
connections as they were, and the write-ahead log stays bounded although that connection never
checkpoints (``TableManager._checkpoint``). (That a locked database still holds up only its table, and that the writer
thread then commits the group or the spill file takes it, is tested in test_server_limits.)"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest

from stammtisch.server import tables as tables_module
from stammtisch.server.limits import ServerLimits
from stammtisch.server.storage import Storage, StoredSeat
from stammtisch.server.tables import TableManager

BUSY_MS = 3000
#: How long a test waits for what comes at once unless the code hangs (only a hang fails).
HANG = 60.0


def new_storage(tmp_path, tables=1, busy_ms=BUSY_MS):
    storage = Storage(f"sqlite:///{tmp_path / 'st.sqlite'}", busy_ms=busy_ms)
    ids = [f"t{i:04d}" for i in range(tables)]
    for tid in ids:
        storage.create_table(tid, "tippen/grupp-1975", {}, [StoredSeat(0, "A", None, None)],
                             "admin", "spectator")
    return storage, ids


def stored_actions(storage, tid):
    deals = storage.load_table(tid).deals
    return [a for _, actions in deals for _, a in actions]


def test_it_commits_on_the_calling_thread_and_the_rows_are_read_back(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([Storage.deal_row(tid, 0, ["10h", "Ah"]),
                         Storage.action_row(tid, 0, 0, 0, "pass"),
                         Storage.action_row(tid, 0, 1, 0, "play:Ah")], now=True)
    assert storage._writer is None  # the writer thread's connection was never opened
    assert stored_actions(storage, tid) == ["pass", "play:Ah"]
    assert storage.load_table(tid).deals[0][0] == ["10h", "Ah"]


def test_a_failing_group_leaves_nothing_behind_and_the_next_one_goes_through(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([Storage.deal_row(tid, 0, ["10h"]), Storage.action_row(tid, 0, 0, 0, "a")],
                        now=True)
    # the second row's key is taken: the whole group fails, its first row is not in either
    with pytest.raises(sqlite3.IntegrityError):
        storage.write_batch([Storage.action_row(tid, 0, 1, 0, "b"),
                             Storage.action_row(tid, 0, 0, 0, "again")], now=True)
    assert stored_actions(storage, tid) == ["a"]
    storage.write_batch([Storage.action_row(tid, 0, 1, 0, "b")], now=True)
    assert stored_actions(storage, tid) == ["a", "b"]


def test_a_failing_group_of_the_writer_thread_leaves_the_loops_connection_open(tmp_path):
    """The writer thread drops its own connection after a failure (the spill file's drain
    fails on purpose when rows are in already), never the event loop's, which the loop may be
    using on its own thread at that moment."""
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([Storage.deal_row(tid, 0, ["10h"])], now=True)
    loop_writer = storage._writer_now
    with pytest.raises(sqlite3.IntegrityError):  # the key is taken, by another deck
        storage.write_batch([Storage.deal_row(tid, 0, ["Ah"])])
    assert storage._writer_now is loop_writer
    loop_writer.cursor.execute("SELECT 1")  # not closed
    storage.write_batch([Storage.action_row(tid, 0, 0, 0, "a")], now=True)
    assert stored_actions(storage, tid) == ["a"]


def test_it_never_waits_for_a_lock_while_the_writer_thread_does(tmp_path):
    # busy_timeout far beyond HANG: a write that waited for the lock would not end while it is held
    storage, (tid,) = new_storage(tmp_path, busy_ms=int(10 * HANG * 1000))
    storage.write_batch([Storage.deal_row(tid, 0, ["10h"])], now=True)
    lock = sqlite3.connect(tmp_path / "st.sqlite", isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    pool = ThreadPoolExecutor(1)
    try:
        refused = pool.submit(storage.write_batch, [Storage.action_row(tid, 0, 0, 0, "a")], now=True)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            refused.result(timeout=HANG)  # at once, the lock still held
        # the writer thread's connection waits (busy_timeout) and commits once the lock is gone
        waiting = pool.submit(storage.write_batch, [Storage.action_row(tid, 0, 0, 0, "a")])
        with pytest.raises(FutureTimeout):
            waiting.result(timeout=0.3)  # not done while the lock is held
        lock.execute("ROLLBACK")
        waiting.result(timeout=HANG)
    finally:
        lock.close()  # (a write still waiting gets the database then, and the pool can end)
        pool.shutdown()
    storage.write_batch([Storage.action_row(tid, 0, 1, 0, "b")], now=True)
    assert stored_actions(storage, tid) == ["a", "b"]


def pragma(storage, name):
    with storage.engine.connect() as conn:
        return conn.exec_driver_sql(f"PRAGMA {name}").scalar()


def test_its_settings_never_reach_the_connections_of_the_pool(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([Storage.deal_row(tid, 0, ["10h"])], now=True)
    with pytest.raises(sqlite3.IntegrityError):  # a failure closes the loop's connection
        storage.write_batch([Storage.deal_row(tid, 0, ["10h"])], now=True)
    for _ in range(3):  # whichever connection the pool hands out
        assert pragma(storage, "busy_timeout") == BUSY_MS
        assert pragma(storage, "wal_autocheckpoint") == 1000
    storage.write_batch([Storage.action_row(tid, 0, 0, 0, "a")], now=True)  # a new one
    assert stored_actions(storage, tid) == ["a"]


def test_an_in_memory_database_is_never_written_from_the_loop():
    assert not Storage("sqlite://").writes_now
    assert not Storage("sqlite:///:memory:").writes_now


def test_the_write_ahead_log_stays_bounded_and_every_row_is_committed(tmp_path, monkeypatch):
    """The loop's connection never checkpoints: every ``ROWS_BETWEEN_CHECKPOINTS`` rows (here
    1,000) the writer thread does, while the loop commits nothing. Rows of 300 tables in groups of 30
    (as at a busy server) touch new pages in every group: without those checkpoints the log
    grows by about a page per row, which for the 12,000 rows here is about twice the bound
    asserted below."""
    monkeypatch.setattr(tables_module, "ROWS_BETWEEN_CHECKPOINTS", 1000)
    storage, ids = new_storage(tmp_path, tables=300)
    manager = TableManager(storage, limits=ServerLimits(commit_window=0.0))
    rng = random.Random(5)
    wal = tmp_path / "st.sqlite-wal"
    largest = 0
    next_idx = dict.fromkeys(ids, 0)
    checkpoints = []
    on_thread = []
    checkpoint, write_batch = storage.checkpoint, storage.write_batch

    def spy_checkpoint():
        checkpoints.append(threading.current_thread().name)
        checkpoint()

    def spy_write(rows, now=False):
        if not now:
            on_thread.append(len(rows))
        return write_batch(rows, now=now)

    storage.checkpoint, storage.write_batch = spy_checkpoint, spy_write

    async def play():
        nonlocal largest
        await asyncio.gather(*(manager.write(Storage.deal_row(t, 0, ["10h"])) for t in ids))
        for _ in range(400):
            rows = []
            for t in rng.sample(ids, 30):
                rows.append(Storage.action_row(t, 0, next_idx[t], 0, f"a{next_idx[t]}"))
                next_idx[t] += 1
            await asyncio.gather(*(manager.write(row) for row in rows))
            largest = max(largest, wal.stat().st_size)

    try:
        asyncio.run(play())
    finally:
        manager.shutdown()
    assert largest < 16 * 2**20, largest
    # one checkpoint in each ROWS_BETWEEN_CHECKPOINTS rows, on the writer thread; every group
    # committed by the loop itself
    every = tables_module.ROWS_BETWEEN_CHECKPOINTS
    assert 400 * 30 // (every + 30) <= len(checkpoints) <= 400 * 30 // every + 1
    assert all(name.startswith("stammtisch-db") for name in checkpoints)
    assert on_thread == []
    for t in rng.sample(ids, 20):
        assert stored_actions(storage, t) == [f"a{i}" for i in range(next_idx[t])]


def write_calls() -> int:
    """System calls that wrote, by this thread so far (Linux)."""
    io = Path("/proc/thread-self/io").read_text()
    return int(next(line.split()[1] for line in io.splitlines() if line.startswith("syscw:")))


@pytest.mark.parametrize("now", [True, False])
def test_a_large_group_writes_only_its_pages_to_the_log(tmp_path, now):
    """A group of 150 rows of different tables changes ~80 pages: each goes to the write-ahead
    log as one frame (two writes). Its statement journal stays in memory (ROW_WRITER_PRAGMAS):
    in a temporary file it cost a write more per page."""
    storage, ids = new_storage(tmp_path, tables=300)
    storage.write_batch([Storage.deal_row(t, 0, ["10h"]) for t in ids], now=now)
    for i in range(60):  # 18,000 rows: the index of the actions spans ~150 pages
        storage.write_batch([Storage.action_row(t, 0, i, 0, "a") for t in ids], now=now)
    with storage.engine.connect() as conn:  # an empty log: what the group writes is its growth
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = tmp_path / "st.sqlite-wal"
    assert wal.stat().st_size == 0
    rows = [Storage.action_row(t, 0, 60, 0, "a") for t in random.Random(2).sample(ids, 150)]
    calls = write_calls()
    storage.write_batch(rows, now=now)
    calls, frames = write_calls() - calls, wal.stat().st_size // (4096 + 24)
    assert frames >= 50
    assert calls <= 2 * frames + 4, (calls, frames)


def read_calls() -> int:
    io = Path("/proc/thread-self/io").read_text()
    return int(next(line.split()[1] for line in io.splitlines() if line.startswith("syscr:")))


def test_the_loop_reads_nothing_back_after_a_checkpoint(tmp_path):
    """The pages a group changes are those of each table's latest rows: the loop's connection
    keeps them (1,000 tables with 200 rows each: ~1,000 leaves of the actions' index, 4 MiB,
    more than SQLite's default cache of 2 MiB), and a checkpoint on another thread does not
    empty its cache. (A page or two of the file's header may be read again.)"""
    storage, ids = new_storage(tmp_path, tables=1000)
    storage.write_batch([Storage.deal_row(t, 0, ["10h"]) for t in ids], now=True)
    for i in range(0, 200, 2):  # 200,000 rows
        for chunk in range(0, len(ids), 250):
            storage.write_batch([Storage.action_row(t, 0, i + k, 0, "a")
                                 for t in ids[chunk:chunk + 250] for k in (0, 1)], now=True)
    worker = threading.Thread(target=storage.checkpoint)
    worker.start()
    worker.join()
    rows = [Storage.action_row(t, 0, 200, 0, "a") for t in random.Random(4).sample(ids, 300)]
    reads = read_calls()
    storage.write_batch(rows, now=True)
    assert read_calls() - reads <= 4

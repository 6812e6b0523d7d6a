"""What the database keeps of a table's events: each deal and action once, a group of events
(the commit that many tables share) whole or not at all, committed at once on a quiet server and
together on a busy one, never held up by a lock on the event loop, with a bounded write-ahead
log; a deal's actions are rows under the deal's key, also those of an older database or spill
file. The sections follow, each headed by what it checks; the first:

The group commit on the event loop's own connection (``Storage.write_batch(now=True)``,
``EventStore._may_write_now``): it never waits for a lock, fails whole, leaves the pool's
connections as they were, and the write-ahead log stays bounded although that connection never
checkpoints (``EventStore._checkpoint``). (That a locked database still holds up only its table, and that the writer
thread then commits the group or the spill file takes it, is tested in test_server_limits.)"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import pytest
from sqlalchemy import inspect, text

from stammtisch.server import event_store as event_store_module
from stammtisch.server.limits import ServerLimits
from stammtisch.server.manager import TableManager
from stammtisch.server.spill import Spill
from stammtisch.server.storage import Storage, StoredSeat

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


def key_of(tid):
    """The deal key of table ``tid``'s only deal (one per table)."""
    return int(tid[1:]) + 1


def deal(tid, deck):
    return Storage.deal_row(tid, 0, deck, key_of(tid))


def move(tid, idx, action):
    return Storage.move_row(key_of(tid), tid, 0, idx, 0, action)


def stored_actions(storage, tid):
    deals = storage.load_table(tid).deals
    return [a for _, actions in deals for _, a in actions]


def test_a_group_committed_from_the_event_loop_is_read_back(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([deal(tid, ["10h", "Ah"]),
                         move(tid, 0, "pass"),
                         move(tid, 1, "play:Ah")], now=True)
    assert storage._writer is None  # the writer thread's connection was never opened
    assert stored_actions(storage, tid) == ["pass", "play:Ah"]
    assert storage.load_table(tid).deals[0][0] == ["10h", "Ah"]


def test_a_failing_group_leaves_nothing_behind_and_the_next_one_goes_through(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([deal(tid, ["10h"]), move(tid, 0, "a")],
                        now=True)
    # the second row's key is taken: the whole group fails, its first row is not in either
    with pytest.raises(sqlite3.IntegrityError):
        storage.write_batch([move(tid, 1, "b"),
                             move(tid, 0, "again")], now=True)
    assert stored_actions(storage, tid) == ["a"]
    storage.write_batch([move(tid, 1, "b")], now=True)
    assert stored_actions(storage, tid) == ["a", "b"]


def test_a_failing_group_of_the_writer_thread_leaves_the_loops_connection_open(tmp_path):
    """The writer thread drops its own connection after a failure (the spill file's drain
    fails on purpose when rows are in already), never the event loop's, which the loop may be
    using on its own thread at that moment."""
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([deal(tid, ["10h"])], now=True)
    loop_writer = storage._writer_now
    with pytest.raises(sqlite3.IntegrityError):  # the key is taken, by another deck
        storage.write_batch([deal(tid, ["Ah"])])
    assert storage._writer_now is loop_writer
    loop_writer.cursor.execute("SELECT 1")  # not closed
    storage.write_batch([move(tid, 0, "a")], now=True)
    assert stored_actions(storage, tid) == ["a"]


def test_the_event_loop_never_waits_for_a_lock_while_the_writer_thread_does(tmp_path):
    # busy_timeout far beyond HANG: a write that waited for the lock would not end while it is held
    storage, (tid,) = new_storage(tmp_path, busy_ms=int(10 * HANG * 1000))
    storage.write_batch([deal(tid, ["10h"])], now=True)
    lock = sqlite3.connect(tmp_path / "st.sqlite", isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    pool = ThreadPoolExecutor(1)
    try:
        refused = pool.submit(storage.write_batch, [move(tid, 0, "a")], now=True)
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            refused.result(timeout=HANG)  # at once, the lock still held
        # the writer thread's connection waits (busy_timeout) and commits once the lock is gone
        waiting = pool.submit(storage.write_batch, [move(tid, 0, "a")])
        with pytest.raises(FutureTimeout):
            waiting.result(timeout=0.3)  # not done while the lock is held
        lock.execute("ROLLBACK")
        waiting.result(timeout=HANG)
    finally:
        lock.close()  # (a write still waiting gets the database then, and the pool can end)
        pool.shutdown()
    storage.write_batch([move(tid, 1, "b")], now=True)
    assert stored_actions(storage, tid) == ["a", "b"]


def pragma(storage, name):
    with storage.engine.connect() as conn:
        return conn.exec_driver_sql(f"PRAGMA {name}").scalar()


def test_the_event_loops_connection_keeps_its_settings_from_the_pool(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    storage.write_batch([deal(tid, ["10h"])], now=True)
    with pytest.raises(sqlite3.IntegrityError):  # a failure closes the loop's connection
        storage.write_batch([deal(tid, ["10h"])], now=True)
    for _ in range(3):  # whichever connection the pool hands out
        assert pragma(storage, "busy_timeout") == BUSY_MS
        assert pragma(storage, "wal_autocheckpoint") == 1000
    storage.write_batch([move(tid, 0, "a")], now=True)  # a new one
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
    monkeypatch.setattr(event_store_module, "ROWS_BETWEEN_CHECKPOINTS", 1000)
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
        await asyncio.gather(*(manager.store.write(deal(t, ["10h"])) for t in ids))
        for _ in range(400):
            rows = []
            for t in rng.sample(ids, 30):
                rows.append(move(t, next_idx[t], f"a{next_idx[t]}"))
                next_idx[t] += 1
            await asyncio.gather(*(manager.store.write(row) for row in rows))
            largest = max(largest, wal.stat().st_size)

    try:
        asyncio.run(play())
    finally:
        manager.shutdown()
    assert largest < 16 * 2**20, largest
    # one checkpoint in each ROWS_BETWEEN_CHECKPOINTS rows, on the writer thread; every group
    # committed by the loop itself
    every = event_store_module.ROWS_BETWEEN_CHECKPOINTS
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
    storage.write_batch([deal(t, ["10h"]) for t in ids], now=now)
    for i in range(60):  # 18,000 rows: the index of the actions spans ~150 pages
        storage.write_batch([move(t, i, "a") for t in ids], now=now)
    with storage.engine.connect() as conn:  # an empty log: what the group writes is its growth
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = tmp_path / "st.sqlite-wal"
    assert wal.stat().st_size == 0
    rows = [move(t, 60, "a") for t in random.Random(2).sample(ids, 150)]
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
    storage.write_batch([deal(t, ["10h"]) for t in ids], now=True)
    for i in range(0, 200, 2):  # 200,000 rows
        for chunk in range(0, len(ids), 250):
            storage.write_batch([move(t, i + k, "a")
                                 for t in ids[chunk:chunk + 250] for k in (0, 1)], now=True)
    worker = threading.Thread(target=storage.checkpoint)
    worker.start()
    worker.join()
    rows = [move(t, 200, "a") for t in random.Random(4).sample(ids, 300)]
    reads = read_calls()
    storage.write_batch(rows, now=True)
    assert read_calls() - reads <= 4


# ---------------------------------------------------------------------------------------------
# Deal keys: a deal's actions are rows of ``st_moves`` keyed by (deal key, idx); the deals of a
# database from before deal keys get keys and their actions become moves, and an old spill file's
# rows go in as moves of their deals.


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'st.sqlite'}"
    return request.getfixturevalue("postgres_url")


def new_table(storage: Storage, table_id: str) -> None:
    storage.create_table(table_id, "tippen/grupp-1975", {"players": 3},
                         [StoredSeat(i, f"p{i}", None, None) for i in range(3)], "a", "s")


def count(storage: Storage, sql: str) -> int:
    with storage.engine.connect() as conn:
        return int(conn.execute(text(sql)).scalar() or 0)


def test_a_live_table_writes_its_actions_as_moves_of_its_deal_and_reloads_them(tmp_path):
    """Played through ``LiveTable``: every action is a row of ``st_moves`` under the key of its
    deal (one key per deal, rising), and there is no other table of actions; the table loads
    with the same decks and actions, and a rebuilt table goes on with the latest deal's key."""
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"

    async def play() -> tuple[str, list, list[int]]:
        storage = Storage(url)
        manager = TableManager(storage, bot_delay=0, deal_pause=1000,
                               limits=ServerLimits(commit_window=0.0))
        made = await manager.create("tippen/grupp-1975", {"players": 3},
                                    [("a", None), ("b", None), ("c", None)])
        live = made["table"]
        await live.start()
        keys = [live.deal_key]
        for _ in range(40):  # through a few deals
            t = live.table
            if not t.in_deal:
                await live.next_deal()
                keys.append(live.deal_key)
                continue
            st = t.state
            await live.act(st.current_player(), st.action_to_string(st.legal_actions()[0]))
        live.turns.cancel()
        deals = [(deck, actions) for deck, actions in storage.load_table(live.id).deals]
        storage.close()
        return live.id, deals, keys

    table_id, deals, keys = asyncio.run(play())
    assert len(keys) >= 3 and keys == sorted(set(keys)) and None not in keys
    storage = Storage(url)
    assert "st_actions" not in inspect(storage.engine).get_table_names()
    assert count(storage, "SELECT COUNT(*) FROM st_moves") == sum(len(a) for _, a in deals) > 0
    with storage.engine.connect() as conn:
        stored_keys = [r[0] for r in conn.execute(text(
            "SELECT deal_key FROM st_deals WHERE table_id = :t ORDER BY number"), {"t": table_id})]
    assert stored_keys == keys
    st = storage.load_table(table_id)
    assert st is not None and st.deals == deals and st.last_deal_key == keys[-1]
    manager = TableManager(storage, bot_delay=0, deal_pause=1000)
    manager.load_all()
    assert manager.tables[table_id].deal_key == keys[-1]
    assert storage.new_deal_key() == keys[-1] + 1
    storage.close()


def test_a_database_from_before_deal_keys_gains_them_and_keeps_its_deals(database_url):
    """A database made before deal keys (no ``st_deals.deal_key``, no ``st_moves``, no version;
    the actions in ``st_actions``): the storage adds the key and ``st_moves``, the old deal
    gets a key and its actions load from its moves, ``st_actions`` is gone, the deal goes on
    (an action named by the deal's number lands under its key), and a new deal's moves load
    after it in order."""
    storage = Storage(database_url)
    new_table(storage, "t1")
    with storage.engine.begin() as conn:  # as the schema was
        conn.exec_driver_sql("DROP TABLE st_moves")
        conn.exec_driver_sql("ALTER TABLE st_deals DROP COLUMN deal_key")
        conn.exec_driver_sql("DROP TABLE st_schema")  # the servers before kept no version
        conn.exec_driver_sql(
            "CREATE TABLE st_actions (table_id VARCHAR(32) NOT NULL REFERENCES st_tables (id), "
            "deal INTEGER NOT NULL, idx INTEGER NOT NULL, seat INTEGER, "
            "action VARCHAR(200) NOT NULL, created FLOAT NOT NULL, PRIMARY KEY (table_id, deal, idx))")
        conn.execute(text("INSERT INTO st_deals (table_id, number, deck, created) "
                          "VALUES ('t1', 0, :deck, 1.0)"), {"deck": json.dumps(["x"])})
        conn.execute(text("INSERT INTO st_actions (table_id, deal, idx, seat, action, created) "
                          "VALUES ('t1', 0, 0, 1, 'tap', 2.0), ('t1', 0, 1, 2, 'pass', 3.0)"))
        conn.execute(text("UPDATE st_tables SET created = 0.0"))  # the latest event: the last action
    storage.close()

    storage = Storage(database_url)
    tables = inspect(storage.engine).get_table_names()
    assert "st_moves" in tables and "st_actions" not in tables
    assert "deal_key" in {c["name"] for c in inspect(storage.engine).get_columns("st_deals")}
    old = storage.load_table("t1")
    assert old is not None and old.deals == [(["x"], [(1, "tap"), (2, "pass")])]
    assert old.last_deal_key == 1 and old.last_event_at == 3.0
    assert count(storage, "SELECT COUNT(*) FROM st_moves WHERE deal_key = 1") == 2
    key = storage.new_deal_key()
    assert key == 2
    storage.write_batch([storage.action_row("t1", 0, 2, 0, "pass"),
                         storage.deal_row("t1", 1, ["y"], key),
                         storage.move_row(key, "t1", 1, 0, 1, "tap"),
                         storage.move_row(key, "t1", 1, 1, 2, "exchange:2")], now=storage.writes_now)
    st = storage.load_table("t1")
    assert st is not None and st.last_deal_key == key
    assert st.deals == [(["x"], [(1, "tap"), (2, "pass"), (0, "pass")]),
                        (["y"], [(1, "tap"), (2, "exchange:2")])]
    storage.close()


def test_moves_already_in_are_recognised_and_skipped_by_the_spill_drain(database_url):
    """On both databases: a move is "already written" only with the same seat and action, a
    second move with its key is refused, and the drain inserts only the moves missing."""
    storage = Storage(database_url)
    new_table(storage, "t1")
    key = storage.new_deal_key()
    first = [storage.deal_row("t1", 0, ["x"], key), storage.move_row(key, "t1", 0, 0, 1, "tap")]
    storage.write_batch(first)
    assert storage._already_written(*first[1])
    assert not storage._already_written("move", {**first[1][1], "action": "pass"})
    with pytest.raises(Exception, match="UNIQUE constraint|duplicate key"):
        storage.write_batch([storage.move_row(key, "t1", 0, 0, 2, "pass")])
    later = storage.move_row(key, "t1", 0, 1, 2, "pass")
    storage.write_missing([*first, later])
    storage.write_missing([*first, later])
    st = storage.load_table("t1")
    assert st is not None and st.deals == [(["x"], [(1, "tap"), (2, "pass")])]
    storage.close()


def test_deal_keys_start_above_every_key_the_database_holds(tmp_path):
    """Keys read at start-up are above the deals' and the moves' keys (a move's deal may be
    in a later group of the spill file), and each new deal gets a new one."""
    url = f"sqlite:///{tmp_path / 'st.sqlite'}"
    storage = Storage(url)
    new_table(storage, "t1")
    storage.write_batch([storage.deal_row("t1", 0, ["x"], 5),
                         storage.move_row(12, "t1", 0, 0, 1, "tap")])
    storage.close()
    storage = Storage(url)
    storage.read_deal_keys()
    assert [storage.new_deal_key() for _ in range(3)] == [13, 14, 15]
    storage.close()


def test_an_old_spill_file_s_deal_rows_are_read_without_a_key(tmp_path):
    """A spill file written before deal keys: its deal rows lack ``deal_key``; read, they have
    none; drained, the deal gets a key and its actions are moves under it."""
    spill = Spill(tmp_path / "old.spill")
    lines = [["deal", {"table_id": "t1", "number": 0, "deck": json.dumps(["x"]), "created": 1.0}],
             ["action", {"table_id": "t1", "deal": 0, "idx": 0, "seat": 1, "action": "tap",
                         "created": 1.0}]]
    spill.path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    rows = spill.read()
    assert rows[0] == ("deal", {**lines[0][1], "deal_key": None})
    storage = Storage(f"sqlite:///{tmp_path / 'st.sqlite'}")
    new_table(storage, "t1")
    storage.write_missing(rows)
    st = storage.load_table("t1")
    assert st is not None and st.deals == [(["x"], [(1, "tap")])] and st.last_deal_key == 1
    assert count(storage, "SELECT COUNT(*) FROM st_moves WHERE deal_key = 1") == 1
    storage.close()


# ---------------------------------------------------------------------------------------------
# How long a group commit waits for more events (``EventStore.commit_wait``): the whole
# ``commit_window`` on a busy server, where many events join each commit, and next to nothing
# on a quiet one, where nobody would join and the lone event would only wait longer.


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_follows_the_rate_of_event_rows(tmp_path, monkeypatch):
    clock = Clock()
    monkeypatch.setattr(event_store_module.time, "monotonic", clock)
    storage, _ = new_storage(tmp_path)
    limits = ServerLimits(commit_window=0.04, commit_busy_rows=500)
    manager = TableManager(storage, limits=limits)
    assert manager.store.commit_wait() == 0.0  # nothing yet: a first event commits at once
    for _ in range(50):  # 1,000 tables: ~3,000 rows a second, a group every 40 ms
        clock.now += 0.04
        manager.store._note_group(120)
    assert manager.store.row_rate == pytest.approx(3000, rel=0.1)
    assert manager.store.commit_wait() == 0.04
    clock.now += 5.0  # a pause: the server has been quiet for a while
    manager.store._note_group(1)
    assert manager.store.row_rate < 3
    assert manager.store.commit_wait() < 0.0003
    for _ in range(200):  # ~100 tables: ~250 rows a second, a share of the window
        clock.now += 0.02
        manager.store._note_group(5)
    assert manager.store.row_rate == pytest.approx(250, rel=0.1)
    assert manager.store.commit_wait() == pytest.approx(0.02, rel=0.1)


def test_a_lone_event_on_a_quiet_server_is_committed_without_waiting_the_window(tmp_path):
    storage, (tid,) = new_storage(tmp_path)
    # a window far beyond HANG: had the event waited for it, the wait below would run out
    manager = TableManager(storage, limits=ServerLimits(commit_window=10 * HANG))

    async def one() -> None:
        async with asyncio.timeout(HANG):
            await manager.store.write(deal(tid, ["10h"]))

    asyncio.run(one())
    assert [d for d, _ in storage.load_table(tid).deals] == [["10h"]]


def test_a_busy_server_waits_the_window_and_commits_the_events_together(tmp_path):
    storage, ids = new_storage(tmp_path, tables=40)
    manager = TableManager(storage, limits=ServerLimits(commit_window=0.2, commit_busy_rows=50))
    manager.store.row_rate = 1000.0  # as after a busy spell
    groups = []
    write_batch = storage.write_batch

    def spy(rows, now=False):
        groups.append(len(rows))
        return write_batch(rows, now=now)

    storage.write_batch = spy

    async def many() -> None:
        async def later(i: int, tid: str) -> None:
            await asyncio.sleep(0.002 * i)  # arriving one after another within the window
            await manager.store.write(deal(tid, ["10h"]))
        await asyncio.gather(*(later(i, t) for i, t in enumerate(ids)))

    asyncio.run(many())
    assert groups == [40]  # one commit for all of them

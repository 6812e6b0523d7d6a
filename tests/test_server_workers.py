"""The server's worker processes (search bots, Analysis): a dead worker is replaced within a
bound, the work is shared fairly between the clients, the Analysis takes a bounded number of
requests, and every worker process ends with the server, also when it is killed."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from server_helpers import bearer, ws_connect

from stammtisch.rules import ruleset
from stammtisch.server import analysis as analysis_module
from stammtisch.server import thinker as thinker_module
from stammtisch.server.analysis import Analyst
from stammtisch.server.thinker import DealSoFar, Thinker
from stammtisch.table import Table

ROOT = Path(__file__).resolve().parents[1]
RECORD = ROOT / "tests" / "records" / "rules-2.4-example-3-grupp-1975.json"
#: How long a test waits for what comes within seconds unless the code hangs (only a hang fails).
HANG = 60.0


class Clock:
    """A monotonic clock the test moves on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def a_deal(seed: int = 1) -> tuple[DealSoFar, int, set[str]]:
    """A Tippen deal at its start: the deal, the seat to act and its legal actions as strings."""
    rid, options = "tippen/grupp-1975", {"players": 3}
    table = Table(ruleset(rid, options), ["a", "b", "c"], 0)
    state = table.start_deal(table.shuffled_deck(random.Random(seed)))
    ts = table.table_state()
    deal = DealSoFar(rid, options, ts.dealer, ts.pot, ts.reserve, tuple(table.deals[-1].deck),
                     tuple(table.deals[-1].actions))
    seat = state.current_player()
    return deal, seat, {state.action_to_string(a) for a in state.legal_actions()}


def worker_pids(owner: Thinker | Analyst) -> list[int]:
    """The pids of the current pool's workers (the executor's own table of its processes)."""
    pool = owner._pool
    assert pool is not None
    return list(pool._processes or {})  # type: ignore[attr-defined]


def kill_and_wait(pids: list[int]) -> None:
    """SIGKILL each process and wait until it has ended (its pidfd turns readable)."""
    assert pids
    for pid in pids:
        ended = os.pidfd_open(pid)
        try:
            os.kill(pid, signal.SIGKILL)
            assert select.select([ended], [], [], HANG)[0], f"process {pid} did not end"
        finally:
            os.close(ended)


# --- stand-ins the workers run (module level: the worker imports them by name) ----------------


def stand_in_decide(deal: DealSoFar, bot_name: str, seat: int, seed: int) -> str:
    """A quick decision: a little thinking, then the name it was given (the test passes the
    table's id as the bot's name)."""
    time.sleep(0.02)
    return bot_name


def stand_in_analysis(record: dict, deal: int) -> dict:
    """A quick analysis; with a ``gate`` (a FIFO) in the record it waits until the test opens it."""
    if "gate" in record:
        with open(record["gate"]) as gate:
            gate.read()
    return {"deal": deal, "table": record["table"], "worker": os.getpid()}


# --- a dead worker is replaced, within a bound --------------------------------------------------


def test_a_killed_search_bot_worker_is_replaced_and_past_the_bound_refused_for_a_while(caplog):
    clock = Clock()
    thinker = Thinker(max_restarts=2, restart_window=30.0, clock=clock)
    deal, seat, legal = a_deal()

    async def main() -> None:
        assert await thinker.decide(deal, "pimc", seat, 1, "10.0.0.1", "t1") in legal
        for _ in range(2):  # within the bound: the next decision still comes
            kill_and_wait(worker_pids(thinker))
            assert await thinker.decide(deal, "pimc", seat, 1, "10.0.0.1", "t1") in legal
        kill_and_wait(worker_pids(thinker))  # the third death within the window
        for _ in range(3):
            with pytest.raises(thinker_module.WorkersFailing) as refused:
                await thinker.decide(deal, "pimc", seat, 1, "10.0.0.1", "t1")
            assert refused.value.rule == "workers failing" and refused.value.retry_after > 0
            assert "died 3 times" in str(refused.value)
        assert thinker._pool is None  # refusing forks nothing
        clock.now += 31  # the window is over: a new worker
        assert await thinker.decide(deal, "pimc", seat, 1, "10.0.0.1", "t1") in legal

    try:
        with caplog.at_level(logging.WARNING, logger="stammtisch.server"):
            asyncio.run(main())
    finally:
        thinker.shutdown()
    lines = [r for r in caplog.records if r.name == "stammtisch.server"]
    # one line a death and one for the refusal, however often it refused; no tracebacks
    assert [r.levelname for r in lines] == ["WARNING", "WARNING", "ERROR"], [r.getMessage() for r in lines]
    assert all(r.exc_info is None for r in lines)
    assert "exit code -9" in lines[0].getMessage() and "no new work for 30 s" in lines[2].getMessage()


def test_a_killed_analysis_worker_is_replaced_and_past_the_bound_refused_for_a_while():
    clock = Clock()
    analyst = Analyst(max_restarts=1, restart_window=30.0, clock=clock)
    record = json.loads(RECORD.read_text())

    async def main() -> None:
        first = await analyst.analyse("t1", 1, record, "10.0.0.1")
        assert first.deal == 1 and first.analysis is None  # everybody passed
        kill_and_wait(worker_pids(analyst))
        assert (await analyst.analyse("t1", 2, record, "10.0.0.1")).deal == 2
        kill_and_wait(worker_pids(analyst))
        with pytest.raises(analysis_module.WorkersFailing) as refused:
            await analyst.analyse("t1", 3, record, "10.0.0.1")
        assert refused.value.rule == "workers failing"
        assert analyst.queued == 0  # a refused request holds no slot
        assert await analyst.analyse("t1", 1, record, "10.0.0.1") is first  # kept answers still come
        clock.now += 31
        assert (await analyst.analyse("t1", 3, record, "10.0.0.1")).deal == 3

    try:
        asyncio.run(main())
    finally:
        analyst.shutdown()


def test_a_worker_that_dies_on_a_job_gets_it_once_more_then_the_job_fails(monkeypatch, tmp_path):
    """The job a worker took with it is tried once in the new worker; if that one dies on it
    too, the job fails (it may be what kills them) and the next job gets a new worker."""
    monkeypatch.setattr(thinker_module, "decide", die_on_poison)
    thinker = Thinker(max_restarts=5)
    deal, _, _ = a_deal()

    async def main() -> None:
        with pytest.raises(thinker_module.WorkersFailing) as failed:
            await thinker.decide(deal, "poison", 0, 0, "10.0.0.1", "t1")
        assert failed.value.retry_after == 0 and "twice" in str(failed.value)
        assert await thinker.decide(deal, "t2", 0, 0, "10.0.0.1", "t2") == "t2"

    try:
        asyncio.run(main())
    finally:
        thinker.shutdown()


def die_on_poison(deal: DealSoFar, bot_name: str, seat: int, seed: int) -> str:
    if bot_name == "poison":
        os.kill(os.getpid(), signal.SIGKILL)
    return bot_name


# --- fairness -------------------------------------------------------------------------------------


def test_the_search_bot_worker_takes_the_owners_in_turn(monkeypatch):
    # (before it, the worker took them first come, first served: B's decision came eleventh)
    monkeypatch.setattr(thinker_module, "decide", stand_in_decide)
    thinker = Thinker()
    deal, _, _ = a_deal()
    order: list[str] = []

    async def one(owner: str, table: str) -> None:
        order.append(await thinker.decide(deal, table, 0, 0, owner, table))

    async def main() -> None:
        # owner A queues decisions for ten tables (the worker has A's first at once), then owner
        # B one, then owner C one
        tasks = [asyncio.ensure_future(one("A", f"A{i}")) for i in range(10)]
        tasks += [asyncio.ensure_future(one("B", "B0")), asyncio.ensure_future(one("C", "C0"))]
        await asyncio.gather(*tasks)

    try:
        asyncio.run(main())
    finally:
        thinker.shutdown()
    assert order[:4] == ["A0", "B0", "C0", "A1"], order  # not eleventh and twelfth
    assert order[4:] == [f"A{i}" for i in range(2, 10)]


def test_a_table_has_one_decision_waiting_at_most(monkeypatch):
    monkeypatch.setattr(thinker_module, "decide", stand_in_decide)
    thinker = Thinker()
    deal, _, _ = a_deal()

    async def main() -> None:
        running = asyncio.ensure_future(thinker.decide(deal, "t0", 0, 0, "A", "t0"))  # the worker has it
        waiting = asyncio.ensure_future(thinker.decide(deal, "t1", 0, 0, "A", "t1"))
        await asyncio.sleep(0)
        with pytest.raises(ValueError):
            await thinker.decide(deal, "t1", 0, 0, "A", "t1")
        # a caller that stops waiting frees its table's place
        waiting.cancel()
        await asyncio.sleep(0)
        assert thinker.worker_pool.waiting == 0
        again = asyncio.ensure_future(thinker.decide(deal, "t1", 0, 0, "A", "t1"))
        assert await running == "t0" and await again == "t1"
        # the callers of today, without owner and table: first come, first served
        assert await asyncio.gather(*(thinker.decide(deal, f"x{i}", 0, 0) for i in range(3))) == ["x0", "x1", "x2"]

    try:
        asyncio.run(main())
    finally:
        thinker.shutdown()


def test_the_fair_queue_serves_the_owner_served_least_recently_and_its_keys_in_turn():
    from stammtisch.server.worker_pool import FairQueue

    queue: FairQueue[str] = FairQueue()
    for t in ("a1", "a2", "a3"):
        queue.put("A", t, t)
    queue.put("B", "b1", "b1")
    assert queue.pop() == ("A", "a1")
    queue.put("C", "c1", "c1")  # came after A's turn, before A's next
    assert [queue.pop()[1] for _ in range(3)] == ["b1", "c1", "a2"]
    queue.done("A")
    queue.put("A", "a1", "a1")  # a key that had its turn waits behind the owner's others
    assert [queue.pop()[1] for _ in range(2)] == ["a3", "a1"] and len(queue) == 0
    with pytest.raises(IndexError):
        queue.pop()
    queue.put("A", "a1", "x")
    with pytest.raises(ValueError):
        queue.put("A", "a1", "y")


def test_the_fair_queue_counts_what_each_owners_items_cost():
    """An owner whose items cost ten times more gets a turn for ten of the other's."""
    from stammtisch.server.worker_pool import FairQueue

    queue: FairQueue[str] = FairQueue()
    for i in range(1, 31):
        queue.put("A", f"a{i}", f"a{i}")  # cost 1
    for i in range(1, 4):
        queue.put("B", f"b{i}", f"b{i}", cost=10)
    order = [queue.pop()[1] for _ in range(33)]
    a = [f"a{i}" for i in range(1, 31)]
    assert order == [*a[:9], "b1", *a[9:19], "b2", *a[19:29], "b3", "a30"]
    with pytest.raises(ValueError):
        queue.put("A", "x", "x", cost=-1)


def test_the_fair_queue_gives_no_credit_for_the_time_an_owner_was_away():
    """An owner that begins to wait starts from where the count stands: after A had the
    worker to itself for five items, B does not get five turns in a row."""
    from stammtisch.server.worker_pool import FairQueue

    queue: FairQueue[str] = FairQueue()
    for i in range(1, 11):
        queue.put("A", f"a{i}", f"a{i}")
    assert [queue.pop()[1] for _ in range(5)] == ["a1", "a2", "a3", "a4", "a5"]
    for i in range(1, 4):
        queue.put("B", f"b{i}", f"b{i}")
    assert [queue.pop()[1] for _ in range(6)] == ["b1", "a6", "b2", "a7", "b3", "a8"]


def test_an_addresss_first_analysis_comes_before_a_flooding_addresss_next(monkeypatch, tmp_path):
    """The worker is busy with F's Tapp deal; F and G flood it with Tapp deals (cost 100 each)
    and F with a Tippen deal (cost 1): F's share (250) takes no third Tapp deal. L asks for
    its first Tapp deal and M for a Tippen deal: M's comes first (it costs least), L's before
    F's and G's next ones. Joining a deal under way costs nothing."""
    from stammtisch.server.analysis import AnalysisShareFull

    monkeypatch.setattr(analysis_module, "analyse_deal", stand_in_analysis)
    analyst = Analyst(max_queued=16, max_per_owner=4, max_cost_per_owner=250)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    order: list[str] = []

    async def one(owner: str, table: str, cost: float, record: dict | None = None) -> None:
        found = await analyst.analyse(table, 1, record or {"table": table}, owner, cost=cost)
        order.append(found["table"])

    async def main() -> None:
        tasks = [asyncio.ensure_future(one("F", "F0", 100, {"table": "F0", "gate": str(gate)}))]
        await asyncio.sleep(0)  # under way: it waits for the gate
        tasks.append(asyncio.ensure_future(one("F", "F1", 100)))
        await asyncio.sleep(0)
        with pytest.raises(AnalysisShareFull) as refused:
            await analyst.analyse("F2", 1, {"table": "F2"}, "F", cost=100)
        assert refused.value.rule == "analysis share"
        tasks.append(asyncio.ensure_future(one("F", "F3", 1)))  # a Tippen deal still fits
        tasks += [asyncio.ensure_future(one("G", f"G{i}", 100)) for i in range(2)]
        tasks += [asyncio.ensure_future(one("L", "L0", 100)), asyncio.ensure_future(one("M", "M0", 1))]
        await asyncio.sleep(0)
        joined = asyncio.ensure_future(analyst.analyse("G0", 1, {"table": "G0"}, "F", cost=100))
        await asyncio.sleep(0)
        assert analyst.queued == 7
        await asyncio.to_thread(open_gate, gate)
        await asyncio.gather(*tasks)
        assert (await joined)["table"] == "G0"
        assert analyst.queued == 0

    try:
        asyncio.run(main())
    finally:
        analyst.shutdown()
    assert order == ["F0", "M0", "G0", "L0", "F1", "F3", "G1"]


def test_an_address_has_a_bounded_number_of_analyses_waiting(monkeypatch, tmp_path):
    """However cheap, an address's analyses waiting or under way are bounded (max_per_owner):
    a flood of Tippen deals cannot fill the server's queue for everybody else."""
    from stammtisch.server.analysis import AnalysisShareFull

    monkeypatch.setattr(analysis_module, "analyse_deal", stand_in_analysis)
    analyst = Analyst(max_queued=6, max_per_owner=3)
    gate = tmp_path / "gate"
    os.mkfifo(gate)

    async def main() -> None:
        tasks = [asyncio.ensure_future(analyst.analyse("X0", 1, {"table": "X0", "gate": str(gate)}, "X"))]
        await asyncio.sleep(0)
        tasks += [asyncio.ensure_future(analyst.analyse(f"X{i}", 1, {"table": f"X{i}"}, "X")) for i in (1, 2)]
        await asyncio.sleep(0)
        with pytest.raises(AnalysisShareFull):
            await analyst.analyse("X3", 1, {"table": "X3"}, "X", cost=0.1)
        tasks.append(asyncio.ensure_future(analyst.analyse("Y0", 1, {"table": "Y0"}, "Y")))
        await asyncio.sleep(0)
        assert analyst.queued == 4
        await asyncio.to_thread(open_gate, gate)
        assert [r["table"] for r in await asyncio.gather(*tasks)] == ["X0", "X1", "X2", "Y0"]
        assert (await analyst.analyse("X3", 1, {"table": "X3"}, "X"))["table"] == "X3"  # room again

    try:
        asyncio.run(main())
    finally:
        analyst.shutdown()


def test_a_tapp_deals_analysis_costs_far_more_than_a_tippen_deals():
    """``deal_cost``: what the queue counts per analysis."""
    from stammtisch.record import replay
    from stammtisch.server.analysis import COST_TAPP, COST_TIPPEN, COST_UNPLAYED, deal_cost

    tippen = replay(RECORD).table  # deal 1: everybody passed; deal 4: played
    tapp = replay(ROOT / "tests" / "records" / "rules-3-wt-solo-80.json").table
    assert deal_cost(tippen, 1) == COST_UNPLAYED and deal_cost(tippen, 4) == COST_TIPPEN
    assert deal_cost(tapp, 3) == COST_TAPP and COST_TAPP >= 50 * COST_TIPPEN > 0 < COST_UNPLAYED < COST_TIPPEN


# --- the Analysis takes a bounded number of requests ---------------------------------------------


def open_gate(path: Path) -> None:
    """Let the stand-in analysis waiting on the FIFO ``path`` go on (blocks until it waits)."""
    os.close(os.open(path, os.O_WRONLY))


def test_an_analysis_holds_its_tables_slot_and_the_queue_is_bounded(monkeypatch, tmp_path):
    monkeypatch.setattr(analysis_module, "analyse_deal", stand_in_analysis)
    analyst = Analyst(max_queued=3)
    gates = {t: tmp_path / t for t in "TUV"}
    for gate in gates.values():
        os.mkfifo(gate)
    records = {t: {"table": t, "gate": str(gates[t])} for t in "TUV"}

    async def main() -> None:
        first = asyncio.ensure_future(analyst.analyse("T", 1, records["T"], "A"))
        await asyncio.sleep(0)  # T's analysis is under way (it waits for its gate)
        with pytest.raises(analysis_module.AnalysisBusy) as busy:
            await analyst.analyse("T", 2, records["T"], "A")
        assert busy.value.rule == "analysis busy" and "deal 1" in str(busy.value)
        joined = asyncio.ensure_future(analyst.analyse("T", 1, records["T"], "B"))  # the same deal joins
        others = [asyncio.ensure_future(analyst.analyse(t, 1, records[t], "A")) for t in "UV"]
        await asyncio.sleep(0)
        assert analyst.queued == 3
        with pytest.raises(analysis_module.AnalysisQueueFull) as full:
            await analyst.analyse("W", 1, {"table": "W"}, "C")
        assert full.value.rule == "analysis queue full" and "3 analyses" in str(full.value)
        assert isinstance(full.value, analysis_module.WorkerError)
        for t in "TUV":  # one worker: T's, U's, then V's analysis
            await asyncio.to_thread(open_gate, gates[t])
        result = await first
        assert await joined is result and result["deal"] == 1
        await asyncio.gather(*others)
        assert analyst.queued == 0
        assert (await analyst.analyse("T", 2, {"table": "T"}, "A"))["deal"] == 2  # the slot is free
        assert (await analyst.analyse("W", 1, {"table": "W"}, "C"))["table"] == "W"
        assert analyst.cached("T", 1) is result

    try:
        asyncio.run(main())
    finally:
        analyst.shutdown()


def test_the_analysis_takes_the_requesters_in_turn(monkeypatch):
    monkeypatch.setattr(analysis_module, "analyse_deal", stand_in_analysis)
    analyst = Analyst(max_queued=10, max_per_owner=10)
    order: list[str] = []

    async def one(owner: str, table: str) -> None:
        order.append((await analyst.analyse(table, 1, {"table": table}, owner))["table"])

    async def main() -> None:
        tasks = [asyncio.ensure_future(one("A", f"A{i}")) for i in range(5)]
        tasks.append(asyncio.ensure_future(one("B", "B0")))
        await asyncio.gather(*tasks)

    try:
        asyncio.run(main())
    finally:
        analyst.shutdown()
    assert order == ["A0", "B0", "A1", "A2", "A3", "A4"]


# --- the workers end with the server ---------------------------------------------------------------

#: A server's worker processes in miniature: a Thinker and an Analyst that have worked once (so
#: the fork server, the resource tracker and both workers exist), then waiting to be killed.
SERVER = """
import asyncio, json, os, sys
sys.path.insert(0, {tests!r})
from test_server_workers import RECORD, a_deal
from stammtisch.server.analysis import Analyst
from stammtisch.server.thinker import Thinker

async def main():
    thinker, analyst = Thinker(), Analyst()
    deal, seat, legal = a_deal()
    assert await thinker.decide(deal, "pimc", seat, 1, "10.0.0.1", "t1") in legal
    assert (await analyst.analyse("t1", 1, json.loads(RECORD.read_text()), "10.0.0.1")).deal == 1
    os.write(int(os.environ["READY_FD"]), b"1")
    await asyncio.Event().wait()

asyncio.run(main())
"""


def session_processes(session: int) -> list[int]:
    """The live processes of a session (Linux /proc; zombies do not count)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(stat.parent.name))
    return pids


def test_the_workers_fork_server_and_resource_tracker_end_when_the_server_is_killed():
    read_end, write_end = os.pipe()
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(tests=str(ROOT / "tests"))],
                            cwd=ROOT, env={**os.environ, "READY_FD": str(write_end)}, pass_fds=(write_end,),
                            start_new_session=True)  # its processes: those of its session
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], 300)
        assert ready and os.read(read_end, 1) == b"1", "the server did not start"
        left_behind = [pid for pid in session_processes(proc.pid) if pid != proc.pid]
        # the fork server, the resource tracker, the Thinker's and the Analyst's worker
        assert len(left_behind) >= 4, left_behind
        ended = {pid: os.pidfd_open(pid) for pid in left_behind}
        try:
            proc.kill()  # kill -9: no shutdown of the pools
            proc.wait()
            for pid, fd in ended.items():
                assert select.select([fd], [], [], HANG)[0], f"process {pid} outlived the server"
        finally:
            for fd in ended.values():
                os.close(fd)
        assert session_processes(proc.pid) == []
    finally:
        os.close(read_end)
        for pid in session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.wait()


def test_the_batch_workers_end_when_the_driver_is_killed(tmp_path):
    from test_batch import _simulate_until_three_chunks

    proc = _simulate_until_three_chunks(tmp_path / "records")
    try:
        workers = [pid for pid in session_processes(proc.pid) if pid != proc.pid]
        assert len(workers) >= 3, workers  # the fork server, the tracker, two workers
        ended = {pid: os.pidfd_open(pid) for pid in workers}
        try:
            proc.kill()
            proc.wait()  # (not its output: orphaned workers would hold its pipes open)
            for pid, fd in ended.items():
                assert select.select([fd], [], [], HANG)[0], f"process {pid} outlived the driver"
        finally:
            for fd in ended.values():
                os.close(fd)
    finally:
        for pid in session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        proc.communicate(timeout=HANG)


# --- what the tables and the routes make of it ---------------------------------------------


def test_a_table_whose_search_bot_keeps_failing_is_marked_and_asked_ever_less_often(tmp_path, monkeypatch):
    """A failing decision is retried after a pause that doubles (up to a minute), the seat is
    shown as the one whose bot keeps failing from the third failure on, and the mark goes once
    a decision comes."""
    from fastapi.testclient import TestClient
    from server_helpers import WsClient, create_table

    from stammtisch.server.app import create_app
    from stammtisch.server.live_table import LiveTable

    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000)
    failing = [True]
    calls: list[tuple[str, str | None]] = []

    async def decide(deal, bot_name, seat, seed, owner="", table=None):
        calls.append((owner, table))
        if failing[0]:
            raise RuntimeError("the worker broke")
        return thinker_module.decide(deal, bot_name, seat, seed)

    with TestClient(app) as http:
        monkeypatch.setattr(app.state.manager.thinker, "decide", decide)
        # every seat a search bot: whoever is on turn first, a decision is asked for
        t = create_table(http, ruleset="tapp/modern", seats=[
            {"name": "P0", "bot": "pimc"}, {"name": "P1", "bot": "pimc"}, {"name": "P2", "bot": "pimc"}])
        live = app.state.manager.get(t["id"])
        delays: list[float] = []
        real_schedule = LiveTable.schedule

        def schedule(self, delay=None):
            if self is live and delay is not None:
                delays.append(delay)
                delay = 0.0  # no real pauses in the test
            real_schedule(self, delay=delay)

        monkeypatch.setattr(LiveTable, "schedule", schedule)
        assert http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]}).status_code == 200
        with ws_connect(http, t["id"], t["spectator"]["token"]) as ws:
            watcher = WsClient(ws)
            # the third failure in a row shows the seat (a state message with the mark)
            marked = watcher.until(lambda m: m["type"] == "state" and "table" in m
                                   and m["table"]["bot_trouble"] is not None)
            assert marked["table"]["bot_trouble"] in (0, 1, 2) and live.turns.bot_failures >= 3
            assert delays[:3] == [1.0, 2.0, 4.0]
            assert all(owner == "testclient" and table == t["id"] for owner, table in calls)
            failing[0] = False  # the next decision comes: the bot acts, the mark goes
            watcher.until(lambda m: m["type"] == "state" and "table" in m
                          and m["table"]["bot_trouble"] is None)
            assert live.turns.bot_trouble is None and live.turns.bot_failures == 0


def test_the_analysis_route_answers_its_refusals_by_kind(tmp_path, monkeypatch):
    """Too many analyses from one token: 429 "analysis rate"; another deal of a table whose
    analysis runs: 429 "analysis busy"; an address with its share waiting: 429 "analysis
    share"; workers that keep dying: 503 with Retry-After. The analysis is asked for with
    its cost: a Tippen deal's."""
    from fastapi.testclient import TestClient
    from server_helpers import WsClient, create_table, play_until_terminal, sync

    from stammtisch.server.analysis import COST_TIPPEN, COST_UNPLAYED, AnalysisBusy, AnalysisShareFull
    from stammtisch.server.app import create_app
    from stammtisch.server.limits import ServerLimits
    from stammtisch.server.worker_pool import WorkersFailing

    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=0,
                     limits=ServerLimits(analyses_per_minute=0.001, analysis_burst=3))
    answers = [AnalysisBusy("busy"), AnalysisShareFull("share"), WorkersFailing("dying", retry_after=42.0)]
    costs = []

    def begin(table_id, deal, record, owner="", cost=1.0, staged=False):
        costs.append(cost)
        raise answers.pop(0)

    with TestClient(app) as http:
        monkeypatch.setattr(app.state.manager, "deal_pause", 1000)
        monkeypatch.setattr(app.state.analyst, "begin", begin)
        t = create_table(http, seats=[{"name": "A"}, {"name": "B", "bot": "random"}, {"name": "C", "bot": "random"}])
        http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
        with ws_connect(http, t["id"], t["seats"][0]["token"]) as ws:
            c = WsClient(ws)
            sync(http, t["id"], [c], bot_seats=(1, 2))
            play_until_terminal(http, t["id"], {0: c}, bot_seats=(1, 2))
        url = f"/api/tables/{t['id']}/analysis/1"
        token = bearer(t["seats"][0]["token"])
        r = http.get(url, headers=token)
        assert r.status_code == 429 and r.json()["rule"] == "analysis busy"
        r = http.get(url, headers=token)
        assert r.status_code == 429 and r.json()["rule"] == "analysis share" and r.headers["retry-after"]
        r = http.get(url, headers=token)
        assert r.status_code == 503 and r.json()["rule"] == "workers failing" and r.headers["retry-after"] == "42"
        r = http.get(url, headers=token)  # the token's burst of three is spent
        assert r.status_code == 429 and r.json()["rule"] == "analysis rate"
        assert costs[0] in (COST_TIPPEN, COST_UNPLAYED) and len(set(costs)) == 1


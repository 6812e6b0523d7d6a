"""Several server processes over one database (peers.py): the fence (a holder that stalls,
SIGSTOP, as a long GC pause, a swapped-out VM or a hung disk would, while another process
takes its table commits nothing it reads when it runs again, and a WebSocket that reached it
meanwhile is closed with "come again" and reaches the new holder), and the limits per client
address, which hold for the whole service."""

from __future__ import annotations

import json
import random
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from server_helpers import free_port, hello, serving
from sqlalchemy import text
from test_server_peers import (  # noqa: F401  (``peers`` is the fixture)
    Client,
    assert_record_holds,
    deals_done,
    final_record,
    http,
    new_table,
    peers,
    play_until,
    stop,
)
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from stammtisch.server.peers import LEASE_SECONDS
from stammtisch.server.protocol import CloseCode
from stammtisch.server.refusals import STORAGE_ERRORS
from stammtisch.server.storage import STALLED_TRANSACTION_MS, Storage

#: How long the holder is stopped (seconds): well past its lease.
STALL = 2 * LEASE_SECONDS


def stored_events(storage: Storage, table_id: str) -> int:
    """The events of a table the database holds: its deals and their actions."""
    st = storage.load_table(table_id)
    assert st is not None
    return sum(1 + len(actions) for _, actions in st.deals)


def page_opened_during_the_stall(port: int, table_id: str, token: str) -> tuple[int | None, ClientConnection]:
    """A page that connects to the stalled process (its handshake and hello wait there): the
    code its connection is closed with (None when it was not closed within 30 s of the
    answer: it is served, and left open), and the connection."""
    # entered as a context manager (websockets warns otherwise); left by close()
    ws = connect(f"ws://127.0.0.1:{port}/ws/{table_id}", open_timeout=STALL + 30).__enter__()
    ws.send(hello(token))
    deadline = time.monotonic() + 30
    try:
        while time.monotonic() < deadline:
            try:
                ws.recv(timeout=1)
            except TimeoutError:
                continue
    except ConnectionClosed as closed:
        return (closed.rcvd.code if closed.rcvd is not None else None), ws
    return None, ws


def sees_event_after(ws: ClientConnection, event: int) -> bool:
    """Whether the connection is sent a state past ``event`` within 20 s."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            message = json.loads(ws.recv(timeout=1))
        except TimeoutError:
            continue
        except ConnectionClosed:
            return False
        if message.get("type") == "state" and message["event"] > event:
            return True
    return False


def test_a_stalled_holder_commits_nothing_it_reads_when_it_runs_again(peers):  # noqa: F811
    ports, procs = peers["ports"], peers["procs"]
    storage = Storage(peers["db"])
    t = new_table(ports[0])  # process 0 makes the table, and runs it
    anna = Client(ports, ports[0], t["id"], t["seats"][0]["token"])  # at the holder itself
    bernd = Client(ports, ports[1], t["id"], t["seats"][1]["token"])
    anna.send({"type": "start"})
    seats = {0: anna, 1: bernd}
    rng = random.Random(8)

    def anna_chooses() -> bool:  # Anna on turn with a choice, and both clients up to date
        anna.pump()
        bernd.pump()
        return (anna.settled and bernd.settled and anna.state is not None and anna.view is not None
                and not anna.view["terminal"] and anna.view["current_player"] == 0
                and len(anna.view["legal_actions"]) > 1
                and bernd.state is not None and bernd.state["event"] == anna.state["event"])

    play_until(seats, [], rng, anna_chooses)
    event, legal = anna.state["event"], anna.view["legal_actions"]
    before = stored_events(storage, t["id"])
    pool = ThreadPoolExecutor(1)
    procs[0].send_signal(signal.SIGSTOP)
    try:
        stalled_at = time.monotonic()
        # Anna's action waits in the stalled holder's socket: it reads it when it runs again
        anna.ws.send(json.dumps({"type": "action", "action": legal[0], "event": event}))
        late = pool.submit(page_opened_during_the_stall, ports[0], t["id"], t["spectator"]["token"])
        time.sleep(LEASE_SECONDS + 1)
        bernd.state = None
        bernd.reconnect()  # process 1 takes the table: the lease expired
        assert bernd.until_state()["event"] == event
        time.sleep(max(0.0, STALL - (time.monotonic() - stalled_at)))
    finally:
        procs[0].send_signal(signal.SIGCONT)
    # the page that reached the stalled holder is told to come again (when the holder read its
    # hello before it saw its lease gone), or is relayed to the new holder at once (after:
    # checked below, it sees what the new holder commits)
    code, late_ws = late.result(timeout=STALL + 70)
    assert code in (CloseCode.RESTARTING, None), code
    pool.shutdown()
    again = Client(ports, ports[0], t["id"], t["spectator"]["token"])
    assert again.until_state()["event"] == event
    # Anna's connection to the old holder is closed too; her page connects again
    deadline = time.monotonic() + 30
    while anna.reconnects == 0:
        assert time.monotonic() < deadline, "the old holder kept Anna's connection"
        anna.pump(0.5)
    time.sleep(6)  # past the old holder's retries of her action (commit_deadline), had it any
    assert stored_events(storage, t["id"]) == before, "the stalled holder committed her action"
    anna.pump(1.0)
    assert anna.state["event"] == event
    # the new holder serves her seat as ever: another choice of hers is taken at once
    anna.errors.clear()
    anna.send({"type": "action", "action": legal[-1], "event": event})
    deadline = time.monotonic() + 20
    while anna.state["event"] == event:
        assert time.monotonic() < deadline, f"her action was not taken: {anna.errors}"
        anna.pump(0.2)
    assert not anna.errors
    if code is None:
        assert sees_event_after(late_ws, event), "the page that reached the old holder is served by neither"
    late_ws.close()
    play_until(seats, [], rng, lambda: deals_done(anna) >= 1)
    record = final_record(ports[2], t)
    assert_record_holds(record, [anna, bernd])
    assert procs[0].poll() is None  # the old holder lives on, without the table
    again.close()
    storage.close()


def start_with(db: str, port: int, **limits: object):
    """A server process of the service with these limits."""
    code = ("from stammtisch.server.app import run; "
            "from stammtisch.server.limits import ServerLimits; "
            f"run(port={port}, database_url={db!r}, bot_delay=0.02, deal_pause=1000, "
            f"log_level='warning', limits=ServerLimits(**{limits!r}))")
    return serving(code)


def test_a_holder_stalled_mid_commit_keeps_no_lease_row_locked(postgres_url):
    """A holder stopped between two statements of a group commit leaves its transaction open,
    with the lease rows its fence locked: PostgreSQL ends that transaction, so another process
    can take the table while the holder still stalls, and nothing of the old transaction
    commits when its process runs again."""
    holder, taker = Storage(postgres_url), Storage(postgres_url)
    with holder.engine.begin() as conn:
        conn.execute(text("INSERT INTO st_leases (table_id, owner, expires, epoch) "
                          "VALUES ('t', 'holder', 0, 1)"))
    with holder.engine.connect() as stalled:
        stalled.execute(text("SELECT epoch FROM st_leases WHERE table_id = 't' FOR SHARE"))
        # the holder stalls here; the taker waits for the row at most twice as long as
        # PostgreSQL lets the stalled transaction stay open
        started = time.monotonic()
        with taker.engine.begin() as conn:
            conn.execute(text(f"SET LOCAL lock_timeout = '{2 * STALLED_TRANSACTION_MS}ms'"))
            taken = conn.execute(text("UPDATE st_leases SET owner = 'taker', epoch = epoch + 1 "
                                      "WHERE table_id = 't' RETURNING epoch")).scalar_one()
        assert taken == 2 and time.monotonic() - started >= STALLED_TRANSACTION_MS / 1000 - 0.1
        with pytest.raises(STORAGE_ERRORS):  # a failed commit to the event store: undone
            stalled.execute(text("UPDATE st_leases SET owner = 'holder' WHERE table_id = 't'"))
            stalled.commit()
    with taker.engine.connect() as conn:
        assert conn.execute(text("SELECT owner, epoch FROM st_leases")).all() == [("taker", 2)]
    holder.engine.dispose()
    taker.engine.dispose()


def test_one_address_cannot_spread_its_tables_over_two_processes_past_its_limits(postgres_url):
    """The quota, the creation rate and the search-bot seats of one address hold for the
    service: tables made at either of two processes count against the same figures."""
    ports = [free_port(), free_port()]
    limits = {"tables_per_address": 3, "creations_per_minute": 0.001, "creation_burst": 5,
              "search_bots_per_address": 1}
    with ThreadPoolExecutor(2) as pool:
        procs = list(pool.map(lambda p: start_with(postgres_url, p, **limits), ports))
    try:
        def make(port: int, bot: str = "heuristic") -> tuple[int, dict]:
            return http(port, "POST", "/api/tables", {
                "ruleset": "tippen/grupp-1975",
                "seats": [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": bot}]})

        # the search bots: one pimc seat at process 0 is all this address may have
        assert make(ports[0], "pimc")[0] == 201
        status, refused = make(ports[1], "pimc")
        assert (status, refused["rule"]) == (429, "search bots"), refused
        # the quota: two more tables, one at each process, then no more anywhere
        assert make(ports[1])[0] == 201
        assert make(ports[0])[0] == 201
        for port in ports:
            status, refused = make(port)
            assert (status, refused["rule"]) == (429, "quota"), refused
        # the rate: 5 creations at once in all (3 made, 2 refused by the quota), none refilled
        status, refused = make(ports[1])
        assert (status, refused["rule"]) == (429, "rate"), refused
    finally:
        for proc in procs:
            stop(proc, signal.SIGKILL)

"""Several server processes over one PostgreSQL database, as one service (peers.py): the
seats of one table on three processes play whole deals with a bot and a turn timer; the
process that runs the table is killed mid-deal and play goes on elsewhere; a rolling restart;
two writers of the same event; the lobby of every process; no client ever holds another
seat's cards, and the record holds every event the clients were shown."""

from __future__ import annotations

import json
import random
import signal
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from conftest import cards_named as conftest_cards_named
from server_helpers import bearer, free_port, hello, serving
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from stammtisch.record import replay
from stammtisch.server.peers import LEASE_SECONDS

#: The limits of the test servers: a turn timer of a second is allowed.
LIMITS = {"turn_seconds_min": 1}


def start(db: str, port: int) -> Any:
    """``stammtisch serve --database-url DB --port PORT`` (the PostgreSQL service), up."""
    code = ("from stammtisch.server.app import run; "
            "from stammtisch.server.limits import ServerLimits; "
            f"run(port={port}, database_url={db!r}, bot_delay=0.02, deal_pause=1000, "
            f"log_level='warning', limits=ServerLimits(**{LIMITS!r}))")
    return serving(code)


def stop(proc: Any, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        proc.send_signal(sig)
        proc.wait(30)


@pytest.fixture
def peers(postgres_url):
    """Three server processes on one database: ``ports``, ``procs`` (restartable)."""
    ports = [free_port() for _ in range(3)]
    with ThreadPoolExecutor(3) as pool:  # at once: one migrates the new database, two wait
        procs = list(pool.map(lambda p: start(postgres_url, p), ports))
    state = {"db": postgres_url, "ports": ports, "procs": procs}
    try:
        yield state
    finally:
        for proc in state["procs"]:
            stop(proc, signal.SIGKILL)


def http(port: int, method: str, path: str, body: dict | None = None,
         token: str | None = None) -> tuple[int, Any]:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"content-type": "application/json",
                                          **(bearer(token) if token else {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def new_table(port: int, turn_seconds: int = 0, **more: Any) -> dict:
    status, t = http(port, "POST", "/api/tables", {
        "ruleset": "tippen/grupp-1975", "turn_seconds": turn_seconds,
        "seats": [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Robo", "bot": "heuristic"}],
        **more})
    assert status == 201, t
    return t


class Client:
    """A WebSocket client of one seat (or the spectator) that reconnects, to its own process
    or the next live one, whenever its connection closes: as the page does."""

    def __init__(self, ports: list[int], port: int, table_id: str, token: str):
        self.ports, self.port, self.table_id, self.token = ports, port, table_id, token
        self.state: dict | None = None
        self.events: list[int] = []  # every state's event number, in order
        self.errors: list[dict] = []
        self.said: list[dict] = []  # the other messages: chat, rematch
        self.reconnects = 0
        self.acted_at = -1  # the event its last action answered: until a later state, in flight
        self.next_at = -1  # the event at which it last asked for the next deal
        self.ws: Any = None
        self._connect()

    def _connect(self) -> None:
        deadline = time.monotonic() + 60
        while True:
            for port in [self.port] + [p for p in self.ports if p != self.port]:
                try:
                    # entered as a context manager (websockets warns otherwise); left in close()
                    self.ws = connect(f"ws://127.0.0.1:{port}/ws/{self.table_id}",
                                      open_timeout=5).__enter__()
                    self.ws.send(hello(self.token))
                    self.port = port
                    # a new connection shows the state afresh: as on a page, its buttons work again
                    self.acted_at = self.next_at = -1
                    return
                except Exception:  # refused, closed, no answer in time: the next process
                    continue
            assert time.monotonic() < deadline, "no process took the client"
            time.sleep(0.3)

    def pump(self, wait: float = 0.02) -> None:
        """Read what has come (waiting ``wait`` seconds for the first message)."""
        while True:
            try:
                text = self.ws.recv(timeout=wait)
            except TimeoutError:
                return
            except ConnectionClosed:
                self.reconnects += 1
                self._connect()
                continue
            wait = 0
            m = json.loads(text)
            if m["type"] == "state":
                if "table" not in m and self.state is not None:
                    m["table"] = self.state["table"]
                self.state = m
                self.events.append(m["event"])
            elif m["type"] == "error":
                self.errors.append(m)
                self.acted_at = self.next_at = -1  # a refused message is not in flight
            else:
                self.said.append(m)

    def until_state(self, limit: float = 30.0) -> dict:
        deadline = time.monotonic() + limit
        while self.state is None:
            assert time.monotonic() < deadline, "no state came"
            self.pump(0.2)
        return self.state

    def send(self, message: dict) -> None:
        if message.get("type") == "action":
            self.acted_at = max(self.acted_at, int(message["event"]))
        try:
            self.ws.send(json.dumps(message))
        except ConnectionClosed:
            self.reconnects += 1
            self._connect()

    @property
    def settled(self) -> bool:
        """No action of this client's is in flight: its latest state is past its last one."""
        return self.state is not None and self.state["event"] > self.acted_at

    @property
    def view(self) -> dict:
        assert self.state is not None
        return self.state["view"]

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass

    def reconnect(self) -> None:
        """Connect anew (as the page does when its connection stops answering)."""
        self.close()
        self.reconnects += 1
        self._connect()


def two_players(ports: list[int], turn_seconds: int = 0) -> tuple[dict, Client, Client, dict[int, Client]]:
    """A table made (and so run) by process 0, Anna's client on process 1 and Bernd's on
    process 2 (both relayed), the table started: (table, anna, bernd, seats). A spectator on
    process 0 keeps the table there while they connect (a table nobody is connected to
    moves to the process its first client reaches: relay.py)."""
    t = new_table(ports[0], turn_seconds=turn_seconds)
    keeper = Client(ports, ports[0], t["id"], t["spectator"]["token"])
    keeper.until_state()
    anna = Client(ports, ports[1], t["id"], t["seats"][0]["token"])
    bernd = Client(ports, ports[2], t["id"], t["seats"][1]["token"])
    anna.until_state()
    bernd.until_state()
    keeper.close()
    anna.send({"type": "start"})
    return t, anna, bernd, {0: anna, 1: bernd}


def cards_named(state: dict) -> set[str]:
    """Every card a message names anywhere, legal actions and log included."""
    return conftest_cards_named(state, skip=(), skip_actions=())


def step(seats: dict[int, Client], watchers: list[Client], rng: random.Random,
         acting: set[int], shown: list[int], next_deal: bool = True) -> None:
    """Every client reads; a seat that acts and is on turn plays a random legal action; after a
    deal every seat asks for the next one. Checks on the way that no client holds another
    seat's cards."""
    for c in [*seats.values(), *watchers]:
        c.pump()
    views = {s: c.view for s, c in seats.items() if c.state is not None and c.view is not None}
    for s, c in seats.items():
        if s not in views:
            continue
        others = set().union(*(set(v["hand"]) for t, v in views.items()
                               if t != s and seats[t].state["event"] == c.state["event"]))
        assert not (cards_named(c.state) & others), (s, c.state["event"])
    for w in watchers:
        if w.state is not None and w.view is not None:
            assert w.view["hand"] == [] and not (cards_named(w.state) & set().union(
                *(set(v["hand"]) for t, v in views.items() if seats[t].state["event"] == w.state["event"])))
    for s, c in seats.items():
        if c.state is None or c.view is None:
            continue
        v = c.view
        # as a page does: one message per state shown (again after a refusal or a reconnect)
        if v["terminal"]:
            if next_deal and c.next_at != c.state["event"]:
                c.next_at = c.state["event"]
                c.send({"type": "next"})
        elif v["current_player"] == s and s in acting and v["legal_actions"] and c.settled:
            c.send({"type": "action", "action": rng.choice(v["legal_actions"]),
                    "event": c.state["event"]})
        shown.append(c.state["event"])


def play_until(seats, watchers, rng, until, acting=None, limit=120.0, next_deal=True) -> None:
    acting = set(seats) if acting is None else acting
    shown: list[int] = []
    deadline = time.monotonic() + limit
    while not until():
        assert time.monotonic() < deadline, "the table did not get there"
        step(seats, watchers, rng, acting, shown, next_deal)


def mid_trick(c: Client) -> bool:
    """A card of a trick is on the table (and the trick not complete)."""
    return c.state is not None and c.view is not None and not c.view["terminal"] and bool(c.view["trick"])


def deals_done(c: Client) -> int:
    return len(c.state["table"]["score"]) + c.state["table"]["score_earlier"] if c.state else 0


def final_record(port: int, t: dict) -> dict:
    status, _ = http(port, "POST", f"/api/tables/{t['id']}/close", {"token": t["admin_token"]})
    assert status == 200
    status, record = http(port, "GET", f"/api/tables/{t['id']}/record", token=t["admin_token"])
    assert status == 200, record
    return record


def assert_record_holds(record: dict, clients: list[Client]) -> None:
    """The record replays (every action through the engine), and holds every event the clients
    were shown: its finished deals' events, and after them the unfinished deal's (not in a
    record); no client ever saw an event number go back (a lost event would)."""
    replay(record)
    finished = sum(1 + len(d["actions"]) for d in record["deals"])
    shown = max(max(c.events) for c in clients)
    assert 0 <= shown - finished < 80, (shown, finished)
    for c in clients:
        assert c.events == sorted(c.events), "a client saw an event go back"


# ----------------------------------------------------------------------------------------------


def test_the_seats_of_one_table_on_three_processes_play_with_a_bot_and_a_turn_timer(peers):
    ports = peers["ports"]
    t, anna, bernd, seats = two_players(ports, turn_seconds=1)
    spectator = Client(ports, ports[0], t["id"], t["spectator"]["token"])
    rng = random.Random(1)
    play_until(seats, [spectator], rng, lambda: deals_done(anna) >= 2)
    # Bernd stops playing: his turn timer runs out and the stand-in plays for him
    play_until(seats, [spectator], rng, lambda: 1 in (anna.state["table"].get("seats") and [
        i for i, s in enumerate(anna.state["table"]["seats"]) if s["away"]] or []), acting={0})
    play_until(seats, [spectator], rng, lambda: deals_done(anna) >= 3, acting={0})
    # every client saw every event, in order, whichever process it was on (the table plays on
    # by its turn timers meanwhile: each client's events run without a gap)
    for c in (anna, bernd, spectator):
        c.pump(0.5)
        seen = sorted(set(c.events))
        assert seen == list(range(seen[0], seen[-1] + 1)) and c.events == sorted(c.events)
    # the only refusals: an action or a Next that this driver sent again before the new state came
    assert {e["rule"] for c in (anna, bernd) for e in c.errors} <= {"stale", "deal in progress"}
    record = final_record(ports[2], t)
    assert len(record["deals"]) >= 3
    assert_record_holds(record, [anna, bernd, spectator])


def test_the_process_that_runs_a_table_is_killed_mid_trick_and_play_goes_on(peers):
    ports, procs = peers["ports"], peers["procs"]
    t, anna, bernd, seats = two_players(ports)  # process 0 makes the table, and runs it
    rng = random.Random(2)
    play_until(seats, [], rng, lambda: mid_trick(anna))
    acknowledged = max(anna.state["event"], bernd.state["event"])
    deals_then = max(deals_done(anna), deals_done(bernd))  # the record holds finished deals only
    killed_at = time.monotonic()
    stop(procs[0], signal.SIGKILL)
    play_until(seats, [], rng, lambda: anna.state["event"] > acknowledged + 2)
    took = time.monotonic() - killed_at
    assert took < 15, f"the table came back after {took:.1f} s"
    assert anna.reconnects >= 1 and bernd.reconnects >= 1
    play_until(seats, [], rng, lambda: deals_done(anna) > deals_then)
    record = final_record(ports[1], t)
    assert_record_holds(record, [anna, bernd])
    # nothing acknowledged was lost: the deal shown before the kill is in the record, whole
    assert sum(1 + len(d["actions"]) for d in record["deals"]) >= acknowledged


def test_a_rolling_restart_keeps_the_table_playing(peers):
    ports, procs = peers["ports"], peers["procs"]
    t, anna, bernd, seats = two_players(ports)  # process 0 makes the table, and runs it
    rng = random.Random(3)
    for i in range(3):  # every process in turn: stopped, and started again
        before = anna.state["event"] if anna.state else 0
        play_until(seats, [], rng, lambda b=before: anna.state is not None and anna.state["event"] > b + 3)
        stop(procs[i])
        procs[i] = start(peers["db"], ports[i])
    before = anna.state["event"]
    play_until(seats, [], rng, lambda: anna.state["event"] > before + 3)
    record = final_record(ports[2], t)
    assert_record_holds(record, [anna, bernd])


def test_two_processes_never_both_write_one_event(postgres_url):
    """The database's keys, not a hope: two processes' storages write the same deal and the same
    action; the second of each is refused, and their deal keys never meet."""
    from psycopg.errors import UniqueViolation

    from stammtisch.server.storage import Storage, StoredSeat

    a, b = Storage(postgres_url), Storage(postgres_url)
    try:
        a.create_table("t1", "tippen/grupp-1975", {}, [StoredSeat(0, "A", None, "x")], "a", "s")
        keys_a = {a.new_deal_key() for _ in range(1500)}
        keys_b = {b.new_deal_key() for _ in range(1500)}
        assert not keys_a & keys_b and len(keys_a) == len(keys_b) == 1500
        key = min(keys_a)
        a.write_batch([Storage.deal_row("t1", 0, ["HA"], key)])
        with pytest.raises(UniqueViolation):
            b._insert_batch([Storage.deal_row("t1", 0, ["HK"], min(keys_b))])
        a.write_batch([Storage.move_row(key, "t1", 0, 0, 0, "tap")])
        with pytest.raises(UniqueViolation):
            b._insert_batch([Storage.move_row(key, "t1", 0, 0, 1, "pass")])
        st = b.load_table("t1")
        assert st is not None and st.deals == [(["HA"], [(0, "tap")])]
    finally:
        a.close()
        b.close()


def test_two_clients_on_two_processes_race_for_one_event(peers):
    ports = peers["ports"]
    t = new_table(ports[0])
    token = t["seats"][0]["token"]
    other = Client(ports, ports[0], t["id"], t["seats"][1]["token"])  # keeps it on process 0
    other.until_state()
    first = Client(ports, ports[1], t["id"], token)
    second = Client(ports, ports[2], t["id"], token)  # the same seat, in a second tab
    first.send({"type": "start"})
    seats = {0: first, 1: other}
    rng = random.Random(4)

    def both_on_turn() -> bool:
        second.pump()
        return (first.state is not None and first.view is not None and not first.view["terminal"]
                and first.view["current_player"] == 0 and second.state is not None
                and first.state["event"] == second.state["event"])

    for _ in range(5):  # five times: both tabs send an action for the same event at once
        play_until(seats, [], rng, both_on_turn, acting={1})
        event = first.state["event"]
        legal = first.view["legal_actions"]
        first.errors.clear()
        second.errors.clear()
        first.send({"type": "action", "action": legal[0], "event": event})
        second.send({"type": "action", "action": legal[-1], "event": event})
        deadline = time.monotonic() + 20
        while first.state["event"] == event or second.state["event"] == event:
            assert time.monotonic() < deadline
            first.pump()
            second.pump()
        # one of the two was taken, the other refused as an answer to an earlier event
        def refused() -> list[dict]:  # (a Next of this driver's may be refused too: not counted)
            return [e for e in first.errors + second.errors if e["rule"] != "deal in progress"]

        while not refused():
            assert time.monotonic() < deadline, "neither was refused"
            first.pump()
            second.pump()
        assert [e["rule"] for e in refused()] == ["stale"]
        first.errors.clear()
        second.errors.clear()
    record = final_record(ports[0], t)
    assert_record_holds(record, [first, second, other])


def test_the_lobby_of_every_process_lists_every_open_table_and_any_takes_a_seat(peers):
    ports = peers["ports"]
    status, t = http(ports[0], "POST", "/api/tables", {
        "ruleset": "tippen/grupp-1975", "listed": True, "turn_seconds": 60,
        "seats": [{"name": "Wirt"}, {"name": "Gast", "open": True}, {"name": "Robo", "bot": "random"}]})
    assert status == 201
    for port in ports:
        status, lobby = http(port, "GET", "/api/tables")
        assert status == 200 and [x["id"] for x in lobby["tables"]] == [t["id"]]
    status, taken = http(ports[2], "POST", f"/api/tables/{t['id']}/take", {"name": "Fremder"})
    assert status == 200, taken
    for port in ports:
        assert http(port, "GET", "/api/tables")[1]["tables"] == []
    # the stranger's link works on any process
    guest = Client(ports, ports[1], t["id"], taken["token"])
    assert guest.until_state()["table"]["seats"][1]["name"] == "Fremder"
    guest.close()


def test_a_stopped_process_gives_its_leases_up_at_once(peers):
    """SIGTERM gives the leases up at once; the next client's process takes the table
    without waiting for an expiry."""
    ports, procs = peers["ports"], peers["procs"]
    t = new_table(ports[0])
    stop(procs[0])  # gives its leases up
    began = time.monotonic()
    status, info = http(ports[1], "GET", f"/api/tables/{t['id']}")
    assert status == 200 and info["id"] == t["id"]
    assert time.monotonic() - began < 3


def test_a_stalled_holder_commits_nothing_and_its_table_moves_on(peers):
    """The holder stops (SIGSTOP) long enough for its lease to expire: another process takes
    the table; when the old holder runs again it commits nothing (it could not renew its
    leases) and lets the table go."""
    ports, procs = peers["ports"], peers["procs"]
    t, anna, bernd, seats = two_players(ports)  # process 0 makes the table, and runs it
    rng = random.Random(5)
    play_until(seats, [], rng, lambda: anna.state is not None and anna.state["event"] > 3)
    procs[0].send_signal(signal.SIGSTOP)
    try:
        time.sleep(LEASE_SECONDS + 1)
        # their relays to the stalled process hang: the clients connect anew, as a page does
        # when its connection stops answering
        before = anna.state["event"]
        anna.reconnect()
        bernd.reconnect()
        play_until(seats, [], rng, lambda: anna.state["event"] > before + 3)
    finally:
        procs[0].send_signal(signal.SIGCONT)
    time.sleep(2 * LEASE_SECONDS)  # the old holder has run again, found its lease gone
    for c in (anna, bernd):
        c.pump(0.5)
    # it dropped its stale copy: asked there, the table is as the new holder has it
    assert http(ports[0], "GET", f"/api/tables/{t['id']}")[1]["events"] == anna.state["event"]
    play_until(seats, [], rng, lambda: deals_done(anna) >= 1)
    record = final_record(ports[2], t)
    assert_record_holds(record, [anna, bernd])
    assert procs[0].poll() is None  # the old holder lives on, without the table


def test_postgresql_restarting_the_processes_wait_and_go_on(postgres_restartable):
    pg = postgres_restartable
    db = pg.new_database()
    ports = [free_port(), free_port()]
    procs = [start(db, p) for p in ports]
    try:
        t = new_table(ports[0])
        anna = Client(ports, ports[0], t["id"], t["seats"][0]["token"])
        bernd = Client(ports, ports[1], t["id"], t["seats"][1]["token"])
        anna.send({"type": "start"})
        seats = {0: anna, 1: bernd}
        rng = random.Random(6)
        play_until(seats, [], rng, lambda: anna.state is not None and anna.state["event"] > 4)
        pg.stop()
        time.sleep(2)
        for c in (anna, bernd):
            c.pump(0.5)
        acknowledged = max(anna.state["event"], bernd.state["event"])
        # the record holds finished deals only: the deal of the last acknowledged event is
        # played to its end (a deal that ended early, everybody passing, ends before it)
        deals_then = max(deals_done(anna), deals_done(bernd))
        pg.start()
        play_until(seats, [], rng, lambda: anna.state["event"] > acknowledged + 3)
        play_until(seats, [], rng, lambda: deals_done(anna) > deals_then)
        record = final_record(ports[1], t)
        assert_record_holds(record, [anna, bernd])
        assert sum(1 + len(d["actions"]) for d in record["deals"]) >= acknowledged
        # while it was away, what the clients sent was refused ("try again") or waited: never shown
        assert {e["rule"] for c in (anna, bernd) for e in c.errors} <= {"stale", "deal in progress", "storage"}
    finally:
        for proc in procs:
            stop(proc, signal.SIGKILL)


def test_chat_and_a_rematch_across_processes(peers):
    ports = peers["ports"]
    t, anna, bernd, seats = two_players(ports)
    anna.send({"type": "chat", "text": "Servus"})

    def said(c: Client, kind: str) -> list[dict]:
        c.pump()
        return [m for m in c.said if m["type"] == kind]

    deadline = time.monotonic() + 30
    while not any(line["text"] == "Servus" and line["seat"] == 0
                  for m in said(bernd, "chat") for line in m["messages"]):
        assert time.monotonic() < deadline, "the chat line did not reach the other process"
    play_until(seats, [], random.Random(7), lambda: anna.state is not None and anna.view is not None
               and anna.view["terminal"], next_deal=False)
    anna.send({"type": "rematch", "agree": True})
    bernd.send({"type": "rematch", "agree": True})
    while not (said(anna, "rematch") and said(bernd, "rematch")):
        assert time.monotonic() < deadline + 60, "no rematch came"
    links = [said(c, "rematch")[0] for c in (anna, bernd)]
    assert links[0]["table"] == links[1]["table"] != t["id"]
    new = links[0]["table"]
    # each player at the new table through yet another process
    again = [Client(ports, ports[(i + 2) % 3], new, link["link"].split("#")[1])
             for i, link in enumerate(links)]
    for i, c in enumerate(again):
        state = c.until_state()
        assert state["table"]["id"] == new and state["view"] is not None and state["view"]["seat"] == i


def test_a_record_files_analyses_count_against_the_address_for_the_whole_service(peers):
    """``POST /api/replay/analysis`` takes from the address's allowance of analyses in the
    database's shared bucket: spread over the processes, the burst is the service's (one
    process's buckets would let each process's burst through)."""
    from pathlib import Path

    from stammtisch.server.limits import ServerLimits

    record = json.loads((Path(__file__).parent / "records" / "rules-2.4-example-6-max-bete-dreiblatt-1859.json")
                        .read_text(encoding="utf-8"))
    limits, ports = ServerLimits(), peers["ports"]
    started, answered, refused = time.monotonic(), 0, None
    for deal in range(1, len(record["deals"]) + 1):  # each a new analysis: none is kept yet
        status, answer = http(ports[deal % len(ports)], "POST", "/api/replay/analysis",
                              {"record": record, "deal": deal})
        if status == 429:
            refused = answer
            break
        assert status == 200, answer
        assert answer["deal"] == deal and answer["players"] == record["players"]
        answered += 1
    refilled = (time.monotonic() - started) * limits.analyses_per_minute_per_address / 60
    assert refused is not None and refused["rule"] == "analysis rate", answered
    assert limits.analysis_burst_per_address <= answered <= limits.analysis_burst_per_address + refilled + 1


def test_a_spectator_chats_and_a_seat_switches_it_off_across_processes(peers):
    """A spectator relayed from another process chats as the seats do; a seat on a third
    process switches the spectators' chat off, and the spectator is refused; the summary of
    "My tables" answers on every process."""
    ports = peers["ports"]
    t, anna, bernd, _ = two_players(ports)
    watcher = Client(ports, ports[1], t["id"], t["spectator"]["token"])
    watcher.until_state()

    def said(c: Client, kind: str) -> list[dict]:
        c.pump()
        return [m for m in c.said if m["type"] == kind]

    watcher.send({"type": "chat", "text": "Servus", "name": "Zoë"})
    deadline = time.monotonic() + 30
    while not any(line["name"] == "Zoë" and line["spectator"] and line["seat"] is None
                  for m in said(bernd, "chat") for line in m["messages"]):
        assert time.monotonic() < deadline, "the spectator's line did not reach the other process"
    bernd.send({"type": "spectator chat", "on": False})
    while watcher.state is None or watcher.state["table"]["spectator_chat"] is not False:
        assert time.monotonic() < deadline, "the switch did not reach the spectator"
        watcher.pump()
    watcher.send({"type": "chat", "text": "noch da?"})
    while not any(e["rule"] == "spectator chat" for e in watcher.errors):
        assert time.monotonic() < deadline, "the spectator's line was not refused"
        watcher.pump()
    for port in ports:
        status, summary = http(port, "GET", f"/api/tables/{t['id']}/summary", token=t["seats"][1]["token"])
        assert status == 200 and (summary["seat"], summary["status"]) == (1, "playing"), summary
    for c in (watcher, anna, bernd):
        c.close()

"""The relay between the processes of a service (relay.py): more relayed clients than the
holder's cap per address, all served, and the holder still open to its own clients; a
request with ``Expect: 100-continue`` and a ``HEAD`` relayed as the holder answers them; a
table handed to the process its first client reaches, and kept where a client is."""

from __future__ import annotations

import json
import signal
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from server_helpers import free_port, hello, serving
from sqlalchemy import create_engine, text
from test_server_peers import Client, http, new_table, stop
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from stammtisch.server.relay import LINK_PATH

#: Caps far below what the relayed clients number: a relayed client must count where it is.
CAPS = {"turn_seconds_min": 1, "conns_per_address": 20, "ws_per_address": 20,
        "conns_per_table": 200}


def start(db: str, port: int, limits: dict[str, Any]) -> Any:
    code = ("from stammtisch.server.app import run; "
            "from stammtisch.server.limits import ServerLimits; "
            f"run(port={port}, database_url={db!r}, bot_delay=0.02, deal_pause=1000, "
            f"log_level='warning', limits=ServerLimits(**{limits!r}))")
    return serving(code)


@pytest.fixture
def capped(postgres_url):
    """Three server processes on one database with small caps per address: ``ports``."""
    ports = [free_port() for _ in range(3)]
    with ThreadPoolExecutor(3) as pool:
        procs = list(pool.map(lambda p: start(postgres_url, p, CAPS), ports))
    try:
        yield {"db": postgres_url, "ports": ports}
    finally:
        for proc in procs:
            stop(proc, signal.SIGKILL)


def holder(db: str, table_id: str) -> str | None:
    """The URL of the process that holds a table's lease."""
    engine = create_engine(db.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as conn:
            row = conn.execute(text(
                "SELECT p.url FROM st_leases l JOIN st_processes p ON p.id = l.owner "
                "WHERE l.table_id = :t"), {"t": table_id}).first()
        return None if row is None else str(row[0])
    finally:
        engine.dispose()


def listed_table(port: int) -> dict:
    status, t = http(port, "POST", "/api/tables", {
        "ruleset": "tippen/grupp-1975", "listed": True, "turn_seconds": 60,
        "seats": [{"name": "Wirt"}, {"name": "Gast", "open": True},
                  {"name": "Robo", "bot": "random"}]})
    assert status == 201, t
    return t


def watcher(port: int, table_id: str, token: str, source: str) -> tuple[Any, dict]:
    """A spectator's socket from the address ``source`` (any 127.x.y.z reaches the server),
    and the first state it was shown."""
    ws = connect(f"ws://127.0.0.1:{port}/ws/{table_id}", open_timeout=30,
                 source_address=(source, 0)).__enter__()
    ws.send(hello(token))
    deadline = time.monotonic() + 60
    while True:
        assert time.monotonic() < deadline, "no state came"
        m = json.loads(ws.recv(timeout=60))
        assert m["type"] in ("hello", "state", "presence", "chat", "table"), m
        if m["type"] == "state":
            return ws, m


def raw(port: int, request: bytes, then: bytes = b"", wait_for: bytes = b"") -> bytes:
    """One HTTP/1.1 exchange over a socket of its own: ``request``, then (once the answer so
    far holds ``wait_for``) ``then``; everything the server sent until it closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        got = b""
        if wait_for:
            while wait_for not in got:
                chunk = sock.recv(65536)
                assert chunk, got
                got += chunk
        sock.sendall(then)
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return got
            got += chunk


def test_more_relayed_clients_than_the_cap_per_address_and_the_holder_still_serves(capped):
    """Sixty spectators of a table held by process 0 come through processes 1 and 2 from four
    addresses (15 each, within every cap where they connect): all are served, and process 0
    still takes its own clients, answers requests and lists its tables in every lobby."""
    ports = capped["ports"]
    t = listed_table(ports[0])
    keeper, _ = watcher(ports[0], t["id"], t["spectator"]["token"], "127.0.0.1")
    sources = {"127.0.0.2": ports[1], "127.0.0.3": ports[1],
               "127.0.0.4": ports[2], "127.0.0.5": ports[2]}
    jobs = [(port, source) for source, port in sources.items() for _ in range(15)]
    with ThreadPoolExecutor(20) as pool:
        relayed = list(pool.map(lambda job: watcher(job[0], t["id"], t["spectator"]["token"],
                                                    job[1]), jobs))
    try:
        assert len(relayed) == 60 and all(m["table"]["id"] == t["id"] for _, m in relayed)
        assert holder(capped["db"], t["id"]) == f"http://127.0.0.1:{ports[0]}"
        # the holder still takes a client of its own address, and answers it
        more, state = watcher(ports[0], t["id"], t["spectator"]["token"], "127.0.0.1")
        more.close()
        assert http(ports[0], "GET", f"/api/tables/{t['id']}")[0] == 200
        for port in ports:  # its table in every lobby
            assert [x["id"] for x in http(port, "GET", "/api/tables")[1]["tables"]] == [t["id"]]
        # a relayed socket is a client of the holder's table like any other: it hears the table
        status, _ = http(ports[1], "POST", f"/api/tables/{t['id']}/start",
                         {"token": t["admin_token"]})
        assert status == 200
        for ws, first in relayed[::7]:
            while json.loads(ws.recv(timeout=30)).get("event", 0) <= first["event"]:
                pass
    finally:
        for ws, _ in relayed:
            ws.close()
        keeper.close()


def test_a_link_needs_the_services_secret(capped):
    """A client that names itself a process of the service, without its secret, is not one."""
    port = capped["ports"][0]
    with pytest.raises(InvalidStatus):
        connect(f"ws://127.0.0.1:{port}{LINK_PATH}",
                additional_headers={"x-stammtisch-peer": "guessed"}, open_timeout=10)


def test_expect_100_continue_is_answered_once_and_the_body_relayed(capped):
    ports = capped["ports"]
    t = new_table(ports[0])
    keeper, _ = watcher(ports[0], t["id"], t["spectator"]["token"], "127.0.0.1")
    try:
        body = json.dumps({"token": t["admin_token"]}).encode()
        answer = raw(ports[1], b"POST /api/tables/%s/start HTTP/1.1\r\nhost: x\r\n"
                     b"content-type: application/json\r\nexpect: 100-continue\r\n"
                     b"content-length: %d\r\nconnection: close\r\n\r\n" % (t["id"].encode(), len(body)),
                     then=body, wait_for=b"\r\n\r\n")
        assert answer.count(b"HTTP/1.1 100") == 1, answer
        final = answer.split(b"\r\n\r\n", 1)[1]  # after the one 100 Continue
        assert final.startswith(b"HTTP/1.1 200"), answer
        json.loads(final.split(b"\r\n\r\n", 1)[1])  # the holder's JSON, nothing around it
    finally:
        keeper.close()


def test_head_is_relayed_as_the_holder_answers_it(capped):
    ports = capped["ports"]
    t = new_table(ports[0])
    keeper, _ = watcher(ports[0], t["id"], t["spectator"]["token"], "127.0.0.1")
    try:
        head = b"HEAD /api/tables/%s HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n" % t["id"].encode()
        direct = raw(ports[0], head)
        began = time.monotonic()
        relayed = raw(ports[1], head)
        assert time.monotonic() - began < 10
        assert relayed.split(b"\r\n", 1)[0] == direct.split(b"\r\n", 1)[0] != b""
        assert relayed.split(b"\r\n", 1)[0].split(b" ")[1] != b"503"
        assert relayed.endswith(b"\r\n\r\n")  # no body
        # and the relay still knows where the table is
        assert http(ports[1], "GET", f"/api/tables/{t['id']}")[0] == 200
    finally:
        keeper.close()


def test_a_table_goes_to_the_process_its_first_client_reaches(capped):
    """Made on process 0 with nobody at it, the table moves to process 1 when its first
    client comes there; a client on process 2 then is relayed (process 1 has a client of
    it), and the table plays for both."""
    ports, db = capped["ports"], capped["db"]
    t = new_table(ports[0])
    assert holder(db, t["id"]) == f"http://127.0.0.1:{ports[0]}"
    anna = Client(ports, ports[1], t["id"], t["seats"][0]["token"])
    anna.until_state()
    assert holder(db, t["id"]) == f"http://127.0.0.1:{ports[1]}"
    bernd = Client(ports, ports[2], t["id"], t["seats"][1]["token"])
    bernd.until_state()
    assert holder(db, t["id"]) == f"http://127.0.0.1:{ports[1]}"
    anna.send({"type": "start"})

    def waiting_for_a_person() -> bool:
        """Both clients up to date, and the table still until Anna or Bernd acts (the bot has
        played what it had to: else the next event may come before the question below)."""
        return (anna.state["event"] > 0 and bernd.state["event"] == anna.state["event"]
                and (anna.view["terminal"] or anna.view["current_player"] in (0, 1)))

    deadline = time.monotonic() + 30
    while not waiting_for_a_person():
        assert time.monotonic() < deadline, "the table did not play for both"
        anna.pump()
        bernd.pump()
    assert anna.reconnects == bernd.reconnects == 0
    # the process it left answers about it as the holder does
    assert http(ports[0], "GET", f"/api/tables/{t['id']}")[1]["events"] == anna.state["event"]
    anna.close()
    bernd.close()

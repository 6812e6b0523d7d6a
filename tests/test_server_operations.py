"""What an operator and their tools see of a server: whether it should get traffic
(``/healthz``, ``/readyz``, unauthenticated and saying nothing secret), its metrics for
Prometheus on a port of their own, and how it stops: on SIGTERM it drains (no new tables or
connections, not ready, the commits under way finished, every client told to come again) and
exits with 0."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from server_helpers import HANG, WsClient, connect, create_table, free_port, hello, started_table, sync
from starlette.websockets import WebSocketDisconnect
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect_to

import stammtisch.server.health as health
from stammtisch.server.app import create_app
from stammtisch.server.metrics import metrics_text
from stammtisch.server.migrations import LATEST

pytestmark = pytest.mark.timeout(600)


def make(tmp_path: Path, **kw: Any) -> Any:
    return create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000, **kw)


@pytest.fixture()
def http(tmp_path):
    with TestClient(make(tmp_path)) as client:
        yield client


def test_healthz_and_readyz_answer_anybody_and_say_nothing_secret(http):
    r = http.get("/healthz")
    assert r.status_code == 200 and r.json() == {"alive": True}
    r = http.get("/readyz")
    assert r.status_code == 200
    assert r.json() == {"ready": True, "checks": {"database": True, "schema": True,
                                                   "leases": True, "accepting": True}}


def test_readyz_says_not_ready_for_each_check_that_fails(http, monkeypatch):
    monkeypatch.setattr(health, "PROBE_KEPT", 0.0)  # every probe asks the database
    readiness = http.app.state.readiness

    def failed() -> dict:
        r = http.get("/readyz")
        assert r.status_code == 503 and r.json()["ready"] is False
        return {k for k, ok in r.json()["checks"].items() if not ok}

    storage = http.app.state.storage
    with storage.engine.begin() as conn:  # a newer server migrated the database
        conn.exec_driver_sql(f"UPDATE st_schema SET version = {LATEST + 1}")
    assert failed() == {"schema"}
    with storage.engine.begin() as conn:
        conn.exec_driver_sql(f"UPDATE st_schema SET version = {LATEST}")

    def unreachable() -> Any:
        raise OSError("connection refused")

    monkeypatch.setattr(storage.engine, "connect", unreachable)
    assert failed() == {"database", "schema"}
    monkeypatch.undo()
    monkeypatch.setattr(health, "PROBE_KEPT", 0.0)
    monkeypatch.setattr(readiness, "peers", SimpleNamespace(fresh=lambda: False))
    assert failed() == {"leases"}  # its leases were not renewed in time: others take over
    monkeypatch.undo()
    assert http.get("/readyz").status_code == 200


def test_a_draining_server_is_not_ready_takes_no_tables_or_sockets_and_sends_its_clients_away(http):
    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0:
        c0 = WsClient(w0)
        sync(http, t["id"], [c0], bot_seats=(2,))
        drained = http.portal.start_task_soon(http.app.state.drain)
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                c0.recv()
        assert closed.value.code == 1012  # come again: another process, or this one restarted
    drained.result(HANG)  # once its last client has gone
    ready = http.get("/readyz")
    assert ready.status_code == 503 and ready.json()["checks"]["accepting"] is False
    assert http.get("/healthz").status_code == 200
    r = http.post("/api/tables", json={"ruleset": "tippen/grupp-1975", "seats": [
        {"name": "A"}, {"name": "B"}, {"name": "C"}]})
    assert r.status_code == 503 and r.json()["rule"] == "restarting" and r.headers["retry-after"] == "1"
    assert http.get(f"/api/tables/{t['id']}").json()["rule"] == "restarting"
    with connect(http, t, t["seats"][1]["token"]) as w1:
        assert w1.receive_json()["rule"] == "restarting"
        with pytest.raises(WebSocketDisconnect) as closed:
            w1.receive_json()
        assert closed.value.code == 1012
    assert http.get("/").status_code == 200  # the page itself is still served


def metric(text: str, name: str) -> float:
    """The value of one sample (``name`` with its labels, as the text format writes it)."""
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {name} in the metrics")


def test_the_metrics_count_tables_clients_actions_commits_refusals_and_queues(http):
    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        by_seat = {0: c0, 1: c1}
        sync(http, t["id"], [c0, c1], bot_seats=(2,))
        acted = 0
        for _ in range(3):
            info = sync(http, t["id"], [c0, c1], bot_seats=(2,))
            me = by_seat[c0.view["current_player"]]
            me.send_action(me.view["legal_actions"][0])
            me.until_event(info["events"] + 1)
            acted += 1
        me.send_action("pass", event=0)  # stale: refused before the rules look at it
        me.next_error()
        text = metrics_text(http.app.state.metrics)
        assert metric(text, "stammtisch_live_tables") == 1
        assert metric(text, "stammtisch_connected_clients") == 2
        assert metric(text, "stammtisch_actions_total") >= acted  # and the bot's
        assert metric(text, "stammtisch_commit_seconds_count") >= 1
        assert metric(text, "stammtisch_commit_group_rows_sum") >= acted + 1
        assert metric(text, 'stammtisch_refusals_total{rule="stale"}') == 1
        assert metric(text, "stammtisch_spill_rows_waiting") == 0
        assert metric(text, 'stammtisch_worker_queue_jobs{pool="analysis"}') == 0
        assert metric(text, "stammtisch_draining") == 0
        assert "process_cpu_seconds_total" in text
        assert "stammtisch_relayed_requests" not in text  # one process: no relay figures


def test_the_metrics_of_several_processes_are_read_from_its_peers_when_they_keep_them(http):
    metrics = http.app.state.metrics
    metrics.collector.peers = SimpleNamespace(relayed_requests=7, relayed_sockets=2,
                                              lease_takeovers=1)
    text = metrics_text(metrics)
    assert metric(text, "stammtisch_relayed_requests_total") == 7
    assert metric(text, "stammtisch_relayed_sockets") == 2
    assert metric(text, "stammtisch_lease_takeovers_total") == 1


def get(url: str, headers: dict | None = None) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}),
                                    timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_metrics_are_on_a_port_of_their_own_not_the_tables(tmp_path):
    app = make(tmp_path, metrics_address=("127.0.0.1", 0))
    with TestClient(app) as http:
        create_table(http)
        port = app.state.metrics_server.port
        status, text = get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and metric(text, "stammtisch_live_tables") == 1
        status, _ = get(f"http://127.0.0.1:{port}/metrics", {"accept": "application/openmetrics-text"})
        assert status == 200
        assert get(f"http://127.0.0.1:{port}/")[0] == 404
        assert http.get("/metrics").status_code == 404  # a player cannot read them


def start_serve(tmp_path: Path, port: int, *extra: str) -> tuple[subprocess.Popen, bytes]:
    """``stammtisch serve`` in a process of its own, once it serves; what it printed so far."""
    command = [sys.executable, "-m", "stammtisch", "serve", "--port", str(port),
               "--database-url", f"sqlite:///{tmp_path / 'serve.sqlite'}", *extra]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    seen = b""
    try:
        while b"Uvicorn running on" not in seen:  # woken by each piece of output
            ready, _, _ = select.select([server.stdout], [], [], HANG)
            assert ready, f"the server did not start in {HANG:.0f} s: {seen!r}"
            piece = os.read(server.stdout.fileno(), 65536)
            assert piece, f"the server ended: {seen!r}"
            seen += piece
    except BaseException:
        server.kill()
        server.communicate()
        raise
    return server, seen


def post(port: int, path: str, body: dict) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def test_sigterm_drains_the_server_and_it_exits_with_0(tmp_path):
    """``stammtisch serve`` as a service manager stops it: its clients are closed with "come
    again" (1012), every action they saw acknowledged is in the database, and it exits with
    0 well within --drain-seconds."""
    port, metrics_port = free_port(), free_port()
    server, seen = start_serve(tmp_path, port, "--drain-seconds", "20",
                               "--metrics-port", str(metrics_port))
    socks: list[Any] = []
    try:
        assert get(f"http://127.0.0.1:{port}/readyz")[0] == 200
        status, text = get(f"http://127.0.0.1:{metrics_port}/metrics")
        assert status == 200 and metric(text, "stammtisch_draining") == 0
        t = post(port, "/api/tables", {"ruleset": "tippen/grupp-1975", "seats": [
            {"name": "A"}, {"name": "B"}, {"name": "C"}]})
        for s in t["seats"]:
            sock = ws_connect_to(f"ws://127.0.0.1:{port}/ws/{t['id']}", open_timeout=10).__enter__()
            sock.send(hello(s["token"]))
            socks.append(sock)
        post(port, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
        states: list[dict] = [{} for _ in socks]

        def until_event(i: int, event: int) -> None:
            while states[i].get("event", -1) < event:
                m = json.loads(socks[i].recv(timeout=HANG))
                if m["type"] == "state":
                    states[i] = m

        for i in range(3):
            until_event(i, 1)
        acknowledged = 0
        for _ in range(5):
            event = max(state["event"] for state in states)
            for i in range(3):
                until_event(i, event)
            seat = states[0]["view"]["current_player"]
            view = states[seat]["view"]
            if view["terminal"]:
                break
            socks[seat].send(json.dumps({"type": "action", "action": view["legal_actions"][0],
                                         "event": event}))
            until_event(seat, event + 1)  # acknowledged: committed before it was shown
            acknowledged += 1
        server.send_signal(signal.SIGTERM)
        for sock in socks:
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    sock.recv(timeout=HANG)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
        out = (seen + server.communicate(timeout=HANG)[0]).decode()
    finally:
        for sock in socks:
            sock.close()
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, out
    assert "Traceback" not in out and "timeout graceful shutdown exceeded" not in out, out
    with sqlite3.connect(tmp_path / "serve.sqlite") as db:
        stored = db.execute("SELECT COUNT(*) FROM st_moves WHERE table_id = ?", (t["id"],)).fetchone()[0]
    assert acknowledged >= 1 and stored >= acknowledged


def test_serve_refuses_a_metrics_port_it_cannot_use_in_one_line(tmp_path):
    port = free_port()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        for metrics_port, says in ((port, "--metrics-port must differ from --port"),
                                   (busy, f"port {busy} on 127.0.0.1 is in use; choose another with --metrics-port")):
            done = subprocess.run([sys.executable, "-m", "stammtisch", "serve", "--port", str(port),
                                   "--database-url", f"sqlite:///{tmp_path / 'st.sqlite'}",
                                   "--metrics-port", str(metrics_port)],
                                  capture_output=True, text=True, timeout=HANG)
            assert done.returncode == 2 and says in done.stderr, done.stderr
            assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1

"""Restart: every table is rebuilt from the database with the identical state for every seat."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import urllib.request

import pytest
from fastapi.testclient import TestClient
from server_helpers import WsClient, create_table, greeted, sync, ws_connect
from server_helpers import free_port as _free_port
from server_helpers import serve as _serve

from stammtisch.server.app import create_app


def views_of(http, t, seats_tokens):
    out = {}
    for seat, token in seats_tokens.items():
        with ws_connect(http, t["id"], token) as ws:
            c = WsClient(ws)
            c.until(lambda m: m["type"] == "state")
            out[seat] = c.state["view"], {k: v for k, v in c.state["table"].items()
                                          if k not in ("seats", "next_deal_at")}, c.state["event"]
    return out


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    """The same storage code on SQLite (the default) and on PostgreSQL (by URL)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'st.sqlite'}"
    return request.getfixturevalue("postgres_url")


@pytest.mark.parametrize("ruleset, seats", [
    ("tippen/grupp-1975", None),
    ("tapp/modern", [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla", "bot": "random"}]),
])
def test_restart_mid_deal_restores_every_view(database_url, ruleset, seats):
    url = database_url
    app = create_app(url, bot_delay=0, deal_pause=1000)
    rng = random.Random(7)
    with TestClient(app) as http:
        t = create_table(http, ruleset=ruleset, seats=seats)
        http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
        tokens = {s["seat"]: s["token"] for s in t["seats"] if s.get("token")}
        tokens[None] = t["spectator"]["token"]
        with ws_connect(http, t["id"], tokens[0]) as w0, \
                ws_connect(http, t["id"], tokens[1]) as w1:
            by_seat = {0: WsClient(w0), 1: WsClient(w1)}
            for _ in range(6):
                sync(http, t["id"], list(by_seat.values()), bot_seats=(2,))
                v = by_seat[0].view
                if v["terminal"]:
                    break
                me = by_seat[v["current_player"]]
                before = me.state["event"]
                me.send_action(rng.choice(me.view["legal_actions"]))
                me.until_event(before + 1)
            sync(http, t["id"], list(by_seat.values()), bot_seats=(2,))
        before = views_of(http, t, tokens)
        assert before[0][0]["log"], "some actions were played"
    del app

    app2 = create_app(url, bot_delay=0, deal_pause=1000)
    with TestClient(app2) as http2:
        after = views_of(http2, t, tokens)
    assert after == before


def _post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"}, method="POST")
    return json.loads(urllib.request.urlopen(req, timeout=5).read())


def _view(port, tid, token):
    from websockets.sync.client import connect

    with connect(f"ws://127.0.0.1:{port}/ws/{tid}", open_timeout=5) as ws:
        greeted(ws, token)
        while True:
            m = json.loads(ws.recv(timeout=5))
            if m["type"] == "state":
                return m["event"], m["view"]


def test_sigkill_mid_deal_and_restart(tmp_path):
    """A real server process killed with SIGKILL mid-deal comes back with identical views."""
    from websockets.sync.client import connect

    db = f"sqlite:///{tmp_path / 'kill.sqlite'}"
    port = _free_port()
    proc = _serve(db, port)
    try:
        t = _post(port, "/api/tables", {"ruleset": "tippen/meyers-1905", "seats": [
            {"name": "A"}, {"name": "B"}, {"name": "C"}]})
        _post(port, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
        tokens = {s["seat"]: s["token"] for s in t["seats"]}
        rng = random.Random(1)
        stack = contextlib.ExitStack()
        socks = {s: greeted(stack.enter_context(
                     connect(f"ws://127.0.0.1:{port}/ws/{t['id']}", open_timeout=5)), tok)
                 for s, tok in tokens.items()}
        latest = {}

        def pump(sock, seat, want):
            while latest.get(seat, (-1,))[0] < want:
                m = json.loads(sock.recv(timeout=5))
                if m["type"] == "state":
                    latest[seat] = (m["event"], m["view"])

        pump(socks[0], 0, 1)
        played = 0
        while played < 4 and not latest[0][1]["terminal"]:
            seat = latest[0][1]["current_player"]
            pump(socks[seat], seat, latest[0][0])
            ev, view = latest[seat]
            socks[seat].send(json.dumps({"type": "action", "event": ev,
                                         "action": rng.choice(view["legal_actions"])}))
            pump(socks[seat], seat, ev + 1)
            pump(socks[0], 0, ev + 1)
            played += 1
        before = {s: _view(port, t["id"], tok) for s, tok in tokens.items()}
        stack.close()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc = _serve(db, port)
    try:
        after = {s: _view(port, t["id"], tok) for s, tok in tokens.items()}
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert after == before
    assert before[0][1]["log"]


def test_the_spill_drain_inserts_only_what_the_database_lacks(database_url):
    """``Storage.write_missing`` (the spill file's drain, spill.py) on both databases: rows a
    late commit already wrote are skipped, the others inserted, and running it twice is
    harmless; a deal row without a key and actions named by their deal's number (a spill file
    written before deal keys) go in as that deal's moves."""
    from sqlalchemy import text

    app = create_app(database_url, bot_delay=1000, deal_pause=1000)
    with TestClient(app) as http:
        t = create_table(http)
        assert http.post(f"/api/tables/{t['id']}/start",
                         json={"token": t["admin_token"]}).status_code == 200
        storage = app.state.storage
        (deck, _), = storage.load_table(t["id"]).deals
        already = ("deal", {"table_id": t["id"], "number": 0, "deck": json.dumps(deck),
                            "created": 0.0, "deal_key": None})
        key = storage.new_deal_key()
        new = [storage.deal_row(t["id"], 9, deck, key), storage.move_row(key, t["id"], 9, 0, 1, "tap"),
               storage.action_row(t["id"], 9, 1, 2, "pass"),
               ("deal", {"table_id": t["id"], "number": 10, "deck": json.dumps(deck),
                         "created": 0.0, "deal_key": None}),
               storage.action_row(t["id"], 10, 0, 1, "pass")]
        storage.write_missing([already, *new[:2]])  # the first attempt got as far as this
        storage.write_missing([already, *new])
        assert all(storage._already_written(kind, params) for kind, params in [already, *new])
        with storage.engine.connect() as conn:
            count = "SELECT COUNT(*) FROM {} WHERE table_id = :t"
            assert conn.execute(text(count.format("st_deals")), {"t": t["id"]}).scalar() == 3
            moves = conn.execute(text(
                "SELECT d.number, m.idx, m.seat, m.action FROM st_moves m JOIN st_deals d "
                "ON d.deal_key = m.deal_key WHERE d.table_id = :t ORDER BY d.number, m.idx"),
                {"t": t["id"]}).all()
        assert [tuple(m) for m in moves] == [(9, 0, 1, "tap"), (9, 1, 2, "pass"), (10, 0, 1, "pass")]


def test_a_group_commit_larger_than_one_insert_stores_every_row_in_order(database_url):
    """``Storage.write_batch`` puts up to ``ROWS_PER_INSERT`` rows in one INSERT on SQLite: a
    group of several such INSERTs and of both kinds stores each row once, with its values, and
    a group with a row that is in already is refused whole."""
    from sqlalchemy import text

    from stammtisch.server.row_writer import ROWS_PER_INSERT

    app = create_app(database_url, bot_delay=1000, deal_pause=1000)
    with TestClient(app) as http:
        t = create_table(http)
        storage = app.state.storage
        n = 2 * ROWS_PER_INSERT + 7
        key = storage.new_deal_key()
        rows = [storage.deal_row(t["id"], 5, ["x", "y"], key)]
        rows += [storage.move_row(key, t["id"], 5, i, i % 3, f"a{i}") for i in range(n)]
        rows += [storage.deal_row(t["id"], 6, ["z"], storage.new_deal_key())]
        storage.write_batch(rows)
        with storage.engine.connect() as conn:
            got = conn.execute(text("SELECT idx, seat, action FROM st_moves WHERE table_id = :t "
                                    "ORDER BY idx"), {"t": t["id"]}).all()
            decks = conn.execute(text("SELECT number, deck FROM st_deals WHERE table_id = :t "
                                      "ORDER BY number"), {"t": t["id"]}).all()
        assert [tuple(r) for r in got] == [(i, i % 3, f"a{i}") for i in range(n)]
        assert [(r[0], json.loads(r[1])) for r in decks] == [(5, ["x", "y"]), (6, ["z"])]
        # all or nothing: the new row is not stored either (the driver's own error)
        with pytest.raises(Exception, match="UNIQUE constraint|duplicate key"):
            storage.write_batch([storage.move_row(key, t["id"], 5, n, 0, "new"), rows[3]])
        assert not storage._already_written("move", storage.move_row(key, t["id"], 5, n, 0, "new")[1])

"""A state message carries the table's info only when it changed since the client last got
it, but for its event number (``TableFanout.send_state`` and ``broadcast_state``); the client keeps the last info and
sets that number, as the web client and ``server_helpers.WsClient`` do. What a client then
holds after every state message must be exactly the info the server had when it sent it,
and the view in it must be the seat's view."""

from __future__ import annotations

import json
import random

from fastapi.testclient import TestClient
from server_helpers import WsClient, create_table, play_until_terminal, sync, ws_connect

from stammtisch.server.app import create_app
from stammtisch.server.fanout import Conn


def test_every_client_holds_the_tables_info_after_every_state_message(tmp_path, monkeypatch):
    sent: dict[object, list[dict]] = {}  # per connection: the info at each state message
    send = Conn.send
    table_id: list[str] = []

    wrong_views: list[tuple[int | None, int]] = []

    def spy(self, text):
        if isinstance(text, bytes) and text.startswith(b'{"type":"state"'):
            live = app.state.manager.get(table_id[0])
            sent.setdefault(self, []).append(json.loads(live.fanout.info_bytes().decode()))
            # the view as the server put it together (views_parts, spliced) is the seat's view
            engine_view = json.loads(json.dumps(live.view(self.seat)))
            if json.loads(text)["view"] != engine_view:
                wrong_views.append((self.seat, live.events))
        return send(self, text)

    monkeypatch.setattr(Conn, "send", spy)
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0.0, deal_pause=1000.0)
    got: list[tuple[int | None, list[dict], int]] = []  # per client: seat, tables held, states
    rng = random.Random(3)
    with TestClient(app) as http:
        t = create_table(http)  # Anna, Bernd, and a bot at seat 2
        table_id.append(t["id"])
        http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})

        def connect(token):
            return ws_connect(http, t["id"], token)

        def held(c, seat):
            tables = [m["table"] for m in c.messages if m["type"] == "state"]
            got.append((seat, tables, c.tables_sent))

        with connect(t["seats"][0]["token"]) as w0, connect(t["spectator"]["token"]) as ws:
            c0, cs = WsClient(w0), WsClient(ws)
            c0.messages, cs.messages = [], []
            for c in (c0, cs):
                c.recv = recording(c)
            for _ in range(3):  # Bernd comes for a deal and goes: his seat's flags change
                with connect(t["seats"][1]["token"]) as w1:
                    c1 = WsClient(w1)
                    c1.messages = []
                    c1.recv = recording(c1)
                    play_until_terminal(http, t["id"], {0: c0, 1: c1}, bot_seats=(2,), rng=rng)
                    sync(http, t["id"], [c0, c1, cs])
                    held(c1, 1)
                sync(http, t["id"], [c0, cs])
                c0.ws.send_json({"type": "next"})
                sync(http, t["id"], [c0, cs])
            sync(http, t["id"], [c0, cs])
            held(c0, 0)
            held(cs, None)
    assert not wrong_views
    conns = {seat: [c for c in sent if c.seat == seat] for seat in (0, 1, None)}
    assert [len(conns[s]) for s in (0, 1, None)] == [1, 3, 1]
    bernd = iter(conns[1])
    for seat, tables, _ in got:
        conn = conns[seat][0] if seat != 1 else next(bernd)
        assert tables == sent[conn][:len(tables)]
    # most state messages are without it: within a deal only the event number moves
    states = sum(len(tables) for _, tables, _ in got)
    with_table = sum(n for _, _, n in got)
    assert states >= 40 and with_table < states / 2, (with_table, states)
    # the deals ended, Bernd came and went: the info really moved (balances, seats, deals)
    infos = got[-1][1]
    assert len({json.dumps(i["balances"]) for i in infos}) > 1
    assert len({json.dumps(i["seats"]) for i in infos}) > 1
    assert len({i["deal_number"] for i in infos}) == 4


def recording(c: WsClient):
    recv = c.recv

    def recv_and_keep():
        m = recv()
        c.messages.append(m)
        return m

    return recv_and_keep

"""The table's messages under a real uvicorn server: with its websockets-sansio protocol the
frames are written straight to the socket (``app.direct_writer``), with any other server they
take the queued path, and either way every client sees every event, in order, once."""

from __future__ import annotations

import json
import random

import pytest
from server_helpers import post_json, uvicorn_thread
from websockets.sync.client import connect

from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits


@pytest.mark.parametrize("ws,deflate,direct", [("websockets-sansio", False, True),
                                               ("websockets-sansio", True, True),
                                               ("websockets", False, False)])
def test_every_client_sees_every_event_in_order(tmp_path, ws, deflate, direct):
    app = create_app(f"sqlite:///{tmp_path / 't.sqlite'}", bot_delay=0, deal_pause=0.05,
                     limits=ServerLimits(pace_min=0))
    with uvicorn_thread(app, ws=ws, deflate=deflate) as port:
        t = post_json(port, "/api/tables", {"ruleset": "tippen/grupp-1975", "options": {"players": 3},
                                            "seats": [{"name": n} for n in ("A", "B", "C")], "pace": 0.05})
        socks = [connect(f"ws://127.0.0.1:{port}/ws/{t['id']}?token={s['token']}",
                         open_timeout=5) for s in t["seats"]]
        seen: list[list[int]] = [[] for _ in socks]
        latest: list[dict] = [{} for _ in socks]

        def pump(i: int, event: int) -> None:
            while not seen[i] or seen[i][-1] < event:
                m = json.loads(socks[i].recv(timeout=10))
                assert m["type"] != "error", m
                if m["type"] == "state":
                    seen[i].append(m["event"])
                    latest[i] = m

        for i in range(3):
            pump(i, 0)
        post_json(port, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
        rng = random.Random(3)
        event = 0
        while event < 60:  # some deals, with the next deals dealt by the server
            view = latest[0]["view"]
            if view is not None and not view["terminal"]:
                actor = view["current_player"]
                pump(actor, event)
                legal = latest[actor]["view"]["legal_actions"]
                socks[actor].send(json.dumps({"type": "action", "event": event,
                                              "action": rng.choice(legal)}))
            for i in range(3):
                pump(i, event + 1)
            event = latest[0]["event"]
        live = app.state.manager.get(t["id"])
        assert len(live.conns) == 3
        assert all((c._write_now is not None) is direct for c in live.conns)
        for s in socks:
            s.close()
        for i in range(3):  # every event, in order, once: no gap, no repeat
            assert seen[i] == list(range(seen[i][0], seen[i][-1] + 1)), seen[i]
            assert seen[i][-1] >= 60

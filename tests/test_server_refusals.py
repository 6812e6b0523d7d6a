"""What the server refuses, and that a refusal changes nothing: a request for a table that is
malformed or names what does not exist gets a clear 4xx answer in JSON; an illegal action or
one out of turn is refused by rule and the table stays as it was; an action whose commit fails
is refused and nobody is shown it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from server_helpers import WsClient, connect, new_app_client, started_table, sync, ws_connect
from starlette.websockets import WebSocketDisconnect

from stammtisch.cards import PACKS
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.protocol import FINAL_CLOSE_CODES


@pytest.fixture()
def http(tmp_path):
    yield from new_app_client(tmp_path)


@pytest.mark.parametrize("body, needle", [
    ({"ruleset": "tippen/nope", "seats": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
     "unknown rule set"),
    ({"ruleset": "tippen/grupp-1975", "options": {"stake": "lots"},
      "seats": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, "stake"),
    ({"ruleset": "tippen/grupp-1975", "options": {"colour": "red"},
      "seats": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}, "unknown option"),
    ({"ruleset": "tippen/grupp-1975", "seats": [{"name": "a"}, {"name": "a"}, {"name": "c"}]},
     "different"),
    ({"ruleset": "tippen/grupp-1975", "seats": [{"name": "a"}, {"name": "b"},
                                                 {"name": "c", "bot": "genius"}]}, "unknown bot"),
    ({"ruleset": "tapp/modern", "seats": [{"name": "a"}, {"name": "b"}]}, "for 3 or 4"),
    ({"ruleset": "tippen/grupp-1975", "seats": [{"name": ""}, {"name": "b"}, {"name": "c"}]},
     "seats.0.name"),
    ({"ruleset": "tippen/grupp-1975"}, "seats"),
    ({"ruleset": "tippen/grupp-1975", "seats": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
      "extra": 1}, "extra"),
])
def test_bad_table_requests_get_clear_4xx_json(http, body, needle):
    r = http.post("/api/tables", json=body)
    assert 400 <= r.status_code < 500
    err = r.json()["error"]
    assert needle.lower() in err.lower(), err
    assert "Traceback" not in r.text


def test_malformed_json_and_unknown_table(http):
    r = http.post("/api/tables", content=b"{nope", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "error" in r.json()
    assert http.get("/api/tables/doesnotexist").status_code == 404
    assert http.get("/api/tables/doesnotexist").json() == {"error": "no table 'doesnotexist'",
                                                           "rule": "unknown table"}


def test_illegal_and_out_of_turn_actions_change_nothing(http):
    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0, \
            connect(http, t, t["seats"][1]["token"]) as w1, \
            connect(http, t, t["spectator"]["token"]) as ws:
        c0, c1, cs = WsClient(w0), WsClient(w1), WsClient(ws)
        info = sync(http, t["id"], [c0, c1, cs], bot_seats=(2,))
        seat = c0.view["current_player"]
        assert seat in (0, 1)
        me, other = (c0, c1) if seat == 0 else (c1, c0)
        events = info["events"]
        snapshot = (me.view, other.view)

        other.send_action(me.view["legal_actions"][0], seq=5)
        err = other.next_error()
        assert err["rule"] == "not your turn" and err["seq"] == 5

        me.send_action("play:XX")
        assert me.next_error()["rule"] == "notation"
        me.send_action("bid:everything")
        assert me.next_error()["type"] == "error"
        held = set(me.view["hand"])
        not_mine = next(c for c in PACKS["piquet32"].cards if c not in held)
        me.send_action(f"play:{not_mine}")
        assert me.next_error()["type"] == "error"
        cs.ws.send_json({"type": "action", "action": "pass"})
        assert cs.next_error()["rule"] == "spectator"
        me.ws.send_text("not json")
        assert me.next_error()["rule"] == "protocol"
        me.ws.send_json({"type": "teleport"})
        assert me.next_error()["rule"] == "protocol"

        info2 = http.get(f"/api/tables/{t['id']}").json()
        assert info2["events"] == events
        # reconnecting shows the very same view: nothing changed
        with connect(http, t, t["seats"][seat]["token"]) as again:
            c = WsClient(again)
            c.until_event(events)
            assert c.view == snapshot[0]
        assert me.view == snapshot[0] and other.view == snapshot[1]


def test_a_failed_commit_is_refused_and_nothing_is_broadcast(http, monkeypatch):
    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0, \
            connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        info = sync(http, t["id"], [c0, c1], bot_seats=(2,))
        me = {0: c0, 1: c1}[c0.view["current_player"]]
        snapshot = me.view
        storage = http.app.state.storage

        def broken(*a, **k):
            raise OSError("disk full")

        monkeypatch.setattr(storage, "write_batch", broken)  # the group commit of events
        # and the spill file, where events go while the database fails (spill.py)
        monkeypatch.setattr(http.app.state.manager.store.spill, "append", broken)
        me.send_action(me.view["legal_actions"][0])
        assert me.next_error()["rule"] == "storage"
        monkeypatch.undo()
        assert http.get(f"/api/tables/{t['id']}").json()["events"] == info["events"]
        with connect(http, t, t["seats"][me.hello["seat"]]["token"]) as again:
            c = WsClient(again)
            c.until_event(info["events"])
            assert c.view == snapshot
        me.send_action(me.view["legal_actions"][0])
        me.until_event(info["events"] + 1)


def closed_with(ws) -> tuple[str | None, int]:
    """The rule of the last error a socket got before it was closed, and its close code."""
    rule = None
    with pytest.raises(WebSocketDisconnect) as closed:
        while True:
            m = ws.receive_json()
            if m["type"] == "error":
                rule = m["rule"]
    return rule, closed.value.code


def test_a_websocket_refusal_says_in_its_close_code_whether_to_come_again(tmp_path):
    """The page stops at a final close (this link will never work here: the page that kept
    reconnecting to a dead link made thousands of connections) and comes again after any
    other (too many connections now, the table moved to another process, a restart)."""
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=replace(ServerLimits(), conns_per_table=2))
    with TestClient(app) as http:
        t, ended = started_table(http), started_table(http)
        seen: dict[str, tuple[str | None, int]] = {}
        with ws_connect(http, t["id"], "nonsense") as ws:
            seen["bad token"] = closed_with(ws)
        with ws_connect(http, "nosuchtable", t["admin_token"]) as ws:
            seen["unknown table"] = closed_with(ws)
        manager = app.state.manager
        http.post(f"/api/tables/{ended['id']}/close", json={"token": ended["admin_token"]})
        assert http.portal.call(manager.sweep) == 1  # closed and empty: archived
        with ws_connect(http, ended["id"], ended["seats"][0]["token"]) as ws:
            seen["archived"] = closed_with(ws)  # shown read-only, no refusal: then closed for good
        with connect(http, t, t["seats"][0]["token"]) as w0, \
                connect(http, t, t["seats"][1]["token"]) as w1:
            WsClient(w0).until(lambda m: m["type"] == "state")
            WsClient(w1).until(lambda m: m["type"] == "state")
            with connect(http, t, t["spectator"]["token"]) as ws:
                seen["full"] = closed_with(ws)
            r = http.post(f"/api/tables/{t['id']}/reissue", json={"token": t["admin_token"], "seat": 0})
            assert r.status_code == 200
            seen["revoked"] = closed_with(w0)
            http.portal.call(lambda: _drop(manager, t["id"]))  # another process runs it now
            seen["moved"] = closed_with(w1)
    assert seen == {"bad token": ("token", 4401), "unknown table": ("unknown table", 4404),
                    "archived": (None, 4410), "full": ("full", 4429),
                    "revoked": ("revoked", 4403), "moved": (None, 1012)}
    final = {k for k, (_, code) in seen.items() if code in FINAL_CLOSE_CODES}
    assert final == {"bad token", "unknown table", "archived", "revoked"}


async def _drop(manager, table_id: str) -> None:
    manager.drop(manager.get(table_id))

"""The web table's REST API and WebSocket protocol (FastAPI TestClient)."""

from __future__ import annotations

import json
import random

import pytest
from fastapi.testclient import TestClient
from server_helpers import WsClient, create_table, play_until_terminal, stored_record, sync
from starlette.websockets import WebSocketDisconnect

from stammtisch.cards import PACKS
from stammtisch.record import replay
from stammtisch.server.app import MAX_MESSAGE, create_app


@pytest.fixture()
def http(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000)
    with TestClient(app) as client:
        yield client


def started_table(http, **kw):
    t = create_table(http, **kw)
    r = http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
    assert r.status_code == 200, r.text
    return t


def connect(http, t, token):
    return http.websocket_connect(f"/ws/{t['id']}?token={token}")


# --- REST ----------------------------------------------------------------------------


def test_rulesets_lists_every_preset_with_options(http):
    data = http.get("/api/rulesets").json()
    ids = {r["id"] for r in data}
    assert "tippen/grupp-1975" in ids and "tapp/modern" in ids
    grupp = next(r for r in data if r["id"] == "tippen/grupp-1975")
    exchange = next(o for o in grupp["options"] if o["name"] == "exchange")
    assert exchange["default"] is True and exchange["kind"] == "bool" and exchange["help"]


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


def test_create_returns_links_for_humans_only(http):
    t = create_table(http)
    humans = [s for s in t["seats"] if s["bot"] is None]
    assert len(humans) == 2 and all(len(s["token"]) >= 32 for s in humans)
    assert all(s["link"] == f"/t/{t['id']}#{s['token']}" for s in humans)
    assert "token" not in t["seats"][2]
    assert t["spectator"]["link"].startswith(f"/t/{t['id']}#")
    info = http.get(f"/api/tables/{t['id']}").json()
    assert info["players"] == ["Anna", "Bernd", "Carla"] and not info["started"]
    assert "token" not in json.dumps(info)


def test_start_needs_a_seat_or_admin_token(http):
    t = create_table(http)
    url = f"/api/tables/{t['id']}/start"
    assert http.post(url, json={"token": "wrong"}).status_code == 403
    assert http.post(url, json={"token": t["spectator"]["token"]}).status_code == 403
    assert http.post(url, json={"token": t["seats"][0]["token"]}).status_code == 200
    r = http.post(url, json={"token": t["admin_token"]})
    assert r.status_code == 409 and "already" in r.json()["error"]


# --- WebSocket -----------------------------------------------------------------------


def test_wrong_or_unknown_token_is_refused(http):
    t = started_table(http)
    for url in (f"/ws/{t['id']}?token=nonsense", f"/ws/{t['id']}", "/ws/nosuchtable?token=x"):
        with http.websocket_connect(url) as ws:
            m = ws.receive_json()
            assert m["type"] == "error" and m["rule"] in ("token", "unknown table")
            with pytest.raises(WebSocketDisconnect):
                ws.receive_json()


def test_seat_view_and_spectator_view_hide_cards(http, conformance):
    def cards_of(message):  # every card named anywhere, legal actions included
        return conformance.cards_named(message, skip=())

    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0, \
            connect(http, t, t["seats"][1]["token"]) as w1, \
            connect(http, t, t["spectator"]["token"]) as ws:
        c0, c1, cs = WsClient(w0), WsClient(w1), WsClient(ws)
        by_seat = {0: c0, 1: c1}
        rng = random.Random(3)
        for _ in range(40):
            sync(http, t["id"], [c0, c1, cs], bot_seats=(2,))
            assert c0.hello["seat"] == 0 and cs.hello["role"] == "spectator"
            v0, v1, vs = c0.view, c1.view, cs.view
            assert vs["hand"] == [] and vs["legal_actions"] == []
            assert set(v0["hand"]).isdisjoint(v1["hand"])
            # no card of another hand anywhere in a seat's or the spectator's message
            assert not (cards_of(c0.state) & set(v1["hand"]))
            assert not (cards_of(c1.state) & set(v0["hand"]))
            assert not (cards_of(cs.state) & (set(v0["hand"]) | set(v1["hand"])))
            if v0["terminal"]:
                break
            seat = v0["current_player"]
            me = by_seat[seat]
            before = me.state["event"]
            me.send_action(rng.choice(me.view["legal_actions"]))
            me.until_event(before + 1)


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


def test_reconnect_restores_the_full_view_and_presence_is_broadcast(http):
    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0:
        c0 = WsClient(w0)
        with connect(http, t, t["seats"][1]["token"]) as w1:
            c1 = WsClient(w1)
            sync(http, t["id"], [c0, c1], bot_seats=(2,))
            p = c0.until(lambda m: m["type"] == "presence" and m["seats"][1]["connected"])
            assert p["seats"][2]["connected"]  # bots are always there
            seen = c1.view
        p = c0.until(lambda m: m["type"] == "presence" and not m["seats"][1]["connected"])
        assert p["seats"][0]["connected"]
        with connect(http, t, t["seats"][1]["token"]) as w1b:
            c1b = WsClient(w1b)
            c1b.recv()  # hello
            c1b.recv()  # the state at once
            assert c1b.view == seen
            assert c1b.state["table"]["seats"][1]["connected"]


def test_message_size_and_rate_limits(http):
    t = started_table(http)
    with connect(http, t, t["seats"][0]["token"]) as w0:
        c0 = WsClient(w0)
        c0.recv()
        for _ in range(30):
            w0.send_json({"type": "ping"})
        kinds = [c0.until(lambda m: m["type"] in ("pong", "error"))["type"] for _ in range(30)]
        assert kinds.count("pong") >= 20 and "error" in kinds
        assert any(e["rule"] == "rate" for e in c0.errors)
    with connect(http, t, t["seats"][0]["token"]) as w0:
        c0 = WsClient(w0)
        w0.send_text("x" * (MAX_MESSAGE + 1))
        assert c0.next_error()["rule"] == "size"
        with pytest.raises(WebSocketDisconnect):
            for _ in range(10):
                c0.recv()


def test_record_holds_only_finished_deals(http):
    t = started_table(http)
    tid = t["id"]
    with connect(http, t, t["seats"][0]["token"]) as w0, \
            connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        sync(http, tid, [c0, c1], bot_seats=(2,))
        # while the table plays, the admin's download is what the table showed (redacted)
        rec = http.get(f"/api/tables/{tid}/record", params={"token": t["admin_token"]}).json()
        assert rec["format"] == "stammtisch-redacted/1" and rec["deals"] == []
        view = play_until_terminal(http, tid, {0: c0, 1: c1}, bot_seats=(2,))
        assert view["terminal"]
        rec = http.get(f"/api/tables/{tid}/record", params={"token": t["admin_token"]}).json()
        assert rec["format"] == "stammtisch-redacted/1" and len(rec["deals"]) == 1
        # the next deal waits until every seated player pressed Next: the result stays
        w0.send_json({"type": "next"})
        ready = c1.until(lambda m: m["type"] == "state" and m.get("table", {}).get("next_ready") == [0])
        assert ready["table"]["deal_number"] == 1 and ready["table"]["pace"] == "wait"
        assert ready["table"]["next_deal_at"] is None and ready["view"]["terminal"]
        w1.send_json({"type": "next"})
        sync(http, tid, [c0, c1], bot_seats=(2,))
        assert c0.state["table"]["deal_number"] == 2 and c0.state["table"]["next_ready"] == []
        assert http.post(f"/api/tables/{tid}/close", json={"token": t["admin_token"]}).status_code == 200
        # ended: the full record, of the finished deals only (deal 2 and its deck are not there)
        rec2 = http.get(f"/api/tables/{tid}/record", params={"token": t["admin_token"]}).json()
        assert rec2["format"] == "stammtisch-record/1" and len(rec2["deals"]) == 1
        r = replay(rec2)
        info = http.get(f"/api/tables/{tid}").json()
        assert info["score"][0]["net"] == [r.table.balances()[n] for n in info["players"]]
        assert len(info["score"]) == 1 and "pot" in info["score"][0]
        # the finished deal explained from the engine's summary, as catalogue messages that
        # each page renders in its reader's language
        from stammtisch.explain import explain, explain_messages
        from stammtisch.i18n import render

        summary = r.table.deals[0].result.summary
        assert info["explanation"] == explain_messages(summary, info["players"])
        shown = {lang: [render(m, lang) for m in info["explanation"]] for lang in ("en", "de")}
        assert shown == {lang: explain(summary, info["players"], lang) for lang in ("en", "de")}
        assert shown["en"] and shown["de"] != shown["en"]
        w0.send_json({"type": "next"})
        assert c0.next_error()["rule"] == "closed"


@pytest.mark.parametrize("family", ["tippen", "tapp"])
def test_every_bot_the_web_table_offers_is_made(family):
    """The menu lists the levels first, then every bot that exists but those kept away from
    the web table, and a bot that cannot be made fails here rather than vanish from the menu."""
    from stammtisch.bots import BOT_NAMES, LEVEL_NAMES, make_bot
    from stammtisch.server.app import NOT_AT_THE_WEB_TABLE, available_bots

    offered = available_bots(family)
    assert offered == [*LEVEL_NAMES, *(b for b in BOT_NAMES if b not in NOT_AT_THE_WEB_TABLE)]
    assert list(LEVEL_NAMES) == ["beginner", "club", "expert"]
    assert {"random", "heuristic", "pimc", "ismcts"} <= set(offered)
    for name in offered:
        assert callable(make_bot(name, family, random.Random(0)).act)
    with pytest.raises(ValueError, match="family"):
        available_bots("skat")


@pytest.mark.parametrize("ruleset, bot", [("tippen/grupp-1975", "random"),
                                           ("tippen/dreiblatt-1859", "heuristic"),
                                           ("tapp/modern", "random"),
                                           ("tapp/classic-1879", "heuristic")])
def test_bots_play_a_whole_table_of_bots(tmp_path, ruleset, bot):
    from stammtisch.server.app import available_bots

    assert bot in available_bots(ruleset.split("/")[0])
    app = create_app(f"sqlite:///{tmp_path / 'b.sqlite'}", bot_delay=0, deal_pause=0)
    with TestClient(app) as http:
        t = create_table(http, ruleset=ruleset, seats=[
            {"name": "a", "bot": bot}, {"name": "b", "bot": bot}, {"name": "c", "bot": bot}])
        assert http.post(f"/api/tables/{t['id']}/start",
                         json={"token": t["admin_token"]}).status_code == 200
        # a spectator is told of every event: its blocking receive waits for the fourth deal
        with connect(http, t, t["spectator"]["token"]) as ws:
            WsClient(ws).until(lambda m: m["type"] == "state" and m["table"]["deal_number"] >= 4,
                               limit=20_000)
        info = http.get(f"/api/tables/{t['id']}").json()
        assert sum(info["balances"]) + info["pot"] + info["reserve"] == 0
        assert len(info["score"]) >= 3


def test_search_bots_are_seated_and_think_in_the_worker_process(tmp_path):
    from stammtisch.server.app import available_bots

    assert {"pimc", "ismcts"} <= set(available_bots("tippen")) and "pimc" in available_bots("tapp")
    app = create_app(f"sqlite:///{tmp_path / 'p.sqlite'}", bot_delay=0, deal_pause=0)
    with TestClient(app) as http:
        t = create_table(http, ruleset="tippen/grupp-1975", seats=[
            {"name": "a", "bot": "pimc"}, {"name": "b", "bot": "ismcts"}, {"name": "c", "bot": "heuristic"}])
        assert http.post(f"/api/tables/{t['id']}/start",
                         json={"token": t["admin_token"]}).status_code == 200
        with connect(http, t, t["spectator"]["token"]) as ws:  # until the third deal begins
            WsClient(ws).until(lambda m: m["type"] == "state" and m["table"]["deal_number"] >= 3,
                               limit=20_000)
        info = http.get(f"/api/tables/{t['id']}").json()
        assert sum(info["balances"]) + info["pot"] + info["reserve"] == 0 and not info.get("broken")
        assert app.state.manager.thinker._pool is not None  # they decided in the worker
        replay(stored_record(http, t["id"]))  # every bot action was legal where it was applied


def test_the_thinker_rebuilds_the_deal_the_table_is_in():
    from stammtisch.server.thinker import DealSoFar, decide
    from stammtisch.table import Table

    rng = random.Random(4)
    for rid in ("tippen/grupp-1975", "tapp/modern"):
        from stammtisch.rules import ruleset as build

        options = {"players": 3}
        table = Table(build(rid, options), ["a", "b", "c"], 0)
        table.start_deal(table.shuffled_deck(rng))
        for _ in range(6):
            state = table.current_state()
            if state.is_terminal():
                break
            ts = table.table_state()
            deal = DealSoFar(rid, options, ts.dealer, ts.pot, ts.reserve, tuple(table.deals[-1].deck),
                             tuple(table.deals[-1].actions))
            seat = state.current_player()
            text = decide(deal, "heuristic", seat, seed=1)
            assert text in [state.action_to_string(a) for a in state.legal_actions()]
            table.apply(text)


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
        monkeypatch.setattr(http.app.state.manager.spill, "append", broken)
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


def test_analysis_of_a_deal_only_once_it_is_over_and_only_with_a_token(http):
    t = started_table(http)
    tid = t["id"]
    seat_token = t["seats"][0]["token"]
    with connect(http, t, seat_token) as w0, connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        sync(http, tid, [c0, c1], bot_seats=(2,))
        early = http.get(f"/api/tables/{tid}/analysis/1", params={"token": seat_token})
        assert early.status_code == 409 and early.json()["rule"] == "deal in progress"
        play_until_terminal(http, tid, {0: c0, 1: c1}, bot_seats=(2,))
        assert http.get(f"/api/tables/{tid}/analysis/1").status_code == 403
        assert http.get(f"/api/tables/{tid}/analysis/1", params={"token": "x" * 40}).status_code == 403
        assert http.get(f"/api/tables/{tid}/analysis/2", params={"token": seat_token}).status_code == 409
        r = http.get(f"/api/tables/{tid}/analysis/1", params={"token": seat_token})
        assert r.status_code == 200, r.text
        data = r.json()
        rec = stored_record(http, tid)
        from stammtisch.analysis.deals import analyze_record

        expected = analyze_record(rec, 1)
        assert data["players"] == rec["players"] and data["played"] == bool(expected)
        if expected:  # the server's answer is the command's analysis of the same deal
            assert {k: data[k] for k in ("deal", "measure", "start_value", "plays", "mistakes")} \
                == expected[0].to_json()
            played = [a["action"] for a in rec["deals"][0]["actions"] if a["action"].startswith("play:")]
            assert [p["action"] for p in data["plays"]] == played  # only cards that were shown
        # any token of the table; answered from the cache, without reading the database
        storage = http.app.state.manager.storage
        real_load = storage.load_table

        def no_reads(*a, **k):
            raise AssertionError("a cached analysis read the database")

        storage.load_table = no_reads
        try:
            spectator = http.get(f"/api/tables/{tid}/analysis/1",
                                 params={"token": t["spectator"]["token"]})
        finally:
            storage.load_table = real_load
        assert spectator.status_code == 200 and spectator.json() == data

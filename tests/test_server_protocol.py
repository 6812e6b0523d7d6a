"""The web table's REST API and WebSocket protocol (FastAPI TestClient)."""

from __future__ import annotations

import json
import random

import pytest
from fastapi.testclient import TestClient
from server_helpers import (
    WsClient,
    connect,
    create_table,
    new_app_client,
    started_table,
    stored_record,
    sync,
)
from starlette.websockets import WebSocketDisconnect

from stammtisch.record import replay
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits


@pytest.fixture()
def http(tmp_path):
    yield from new_app_client(tmp_path)


# --- REST ----------------------------------------------------------------------------


def test_rulesets_lists_every_preset_with_options(http):
    data = http.get("/api/rulesets").json()
    ids = {r["id"] for r in data}
    assert "tippen/grupp-1975" in ids and "tapp/modern" in ids
    grupp = next(r for r in data if r["id"] == "tippen/grupp-1975")
    exchange = next(o for o in grupp["options"] if o["name"] == "exchange")
    assert exchange["default"] is True and exchange["kind"] == "bool" and exchange["help"]


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


# --- WebSocket -----------------------------------------------------------------------


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
        w0.send_text("x" * (ServerLimits().max_message + 1))
        assert c0.next_error()["rule"] == "size"
        with pytest.raises(WebSocketDisconnect):
            for _ in range(10):
                c0.recv()


@pytest.mark.parametrize("family", ["tippen", "tapp"])
def test_every_bot_the_web_table_offers_is_made(family):
    """The menu lists the levels first, then every bot that exists but those kept away from
    the web table, and a bot that cannot be made fails here rather than vanish from the menu."""
    from stammtisch.bots import BOT_NAMES, LEVEL_NAMES, make_bot
    from stammtisch.server.routes.tables import NOT_AT_THE_WEB_TABLE, available_bots

    offered = available_bots(family)
    assert offered == [*LEVEL_NAMES, *(b for b in BOT_NAMES if b not in NOT_AT_THE_WEB_TABLE)]
    assert list(LEVEL_NAMES) == ["beginner", "club", "expert", "master"]
    assert {"random", "heuristic", "pimc"} <= set(offered) and "ismcts" not in offered
    for name in offered:
        assert callable(make_bot(name, family, random.Random(0)).act)
    with pytest.raises(ValueError, match="family"):
        available_bots("skat")


@pytest.mark.parametrize("ruleset, bot", [("tippen/grupp-1975", "random"),
                                           ("tippen/dreiblatt-1859", "heuristic"),
                                           ("tapp/modern", "random"),
                                           ("tapp/classic-1879", "heuristic")])
def test_bots_play_a_whole_table_of_bots(tmp_path, ruleset, bot):
    from stammtisch.server.routes.tables import available_bots

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
    from stammtisch.server.routes.tables import available_bots

    assert "pimc" in available_bots("tippen") and "pimc" in available_bots("tapp")
    app = create_app(f"sqlite:///{tmp_path / 'p.sqlite'}", bot_delay=0, deal_pause=0)
    with TestClient(app) as http:
        t = create_table(http, ruleset="tippen/grupp-1975", seats=[
            {"name": "a", "bot": "pimc"}, {"name": "b", "bot": "expert"}, {"name": "c", "bot": "heuristic"}])
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

"""What a client may know: a seat sees its own cards and no other's, a spectator none; a table
is started and its seats' sockets opened only with a token that is good for it; the record
holds only finished deals, and a deal's Analysis only once it is over, for a token's holder;
no answer of the HTTP API names a card its token was not shown while the table plays."""

from __future__ import annotations

import json
import random
from dataclasses import replace

import pytest
from fastapi.testclient import TestClient
from server_helpers import (
    WsClient,
    bearer,
    connect,
    create_table,
    hello,
    new_app_client,
    play_until_terminal,
    started_table,
    stored_record,
    sync,
    ws_connect,
)
from starlette.websockets import WebSocketDisconnect

from stammtisch.record import replay
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits


@pytest.fixture()
def http(tmp_path):
    yield from new_app_client(tmp_path)


def test_start_needs_a_seat_or_admin_token(http):
    t = create_table(http)
    url = f"/api/tables/{t['id']}/start"
    assert http.post(url, json={"token": "wrong"}).status_code == 403
    assert http.post(url, json={"token": t["spectator"]["token"]}).status_code == 403
    assert http.post(url, json={"token": t["seats"][0]["token"]}).status_code == 200
    r = http.post(url, json={"token": t["admin_token"]})
    assert r.status_code == 409 and "already" in r.json()["error"]


def refusal(ws) -> tuple[str, int]:
    """The rule of a socket's refusal and the code it is then closed with."""
    m = ws.receive_json()
    assert m["type"] == "error", m
    with pytest.raises(WebSocketDisconnect) as closed:
        ws.receive_json()
    return m["rule"], closed.value.code


def test_wrong_or_unknown_token_is_refused_for_good(http):
    t = started_table(http)
    for table, token, expected in ((t["id"], "nonsense", ("token", 4401)),
                                   (t["id"], "", ("token", 4401)),
                                   ("nosuchtable", "x", ("unknown table", 4404))):
        with ws_connect(http, table, token) as ws:
            assert refusal(ws) == expected


def test_a_token_in_a_url_is_refused_even_a_good_one(http):
    """A URL ends up in the logs of every proxy on the way: a token there is refused with a
    message that says where it goes, on the WebSocket and in every HTTP request, even when it
    is a good token (a client that leaks it must not work)."""
    t = started_table(http)
    good = t["seats"][0]["token"]
    with http.websocket_connect(f"/ws/{t['id']}?token={good}") as ws:
        m = ws.receive_json()
        assert m["rule"] == "token in url" and "hello" in m["message"]
        with pytest.raises(WebSocketDisconnect) as closed:
            ws.receive_json()
        assert closed.value.code == 4400
    for path in ("record", "deals/1", "analysis/1"):
        r = http.get(f"/api/tables/{t['id']}/{path}?token={good}")
        assert r.status_code == 400, (path, r.text)
        assert r.json()["rule"] == "token in url" and "Authorization: Bearer" in r.json()["error"]
    assert http.get(f"/api/tables/{t['id']}/record", headers=bearer(good)).status_code == 200


def test_the_first_message_is_the_hello_with_the_token_and_comes_in_time(tmp_path):
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=replace(ServerLimits(), header_timeout=0.5))
    with TestClient(app) as http:
        t = started_table(http)
        for first in ({"type": "ping"}, {"type": "hello", "token": 7}, {"token": "x"}, "hello"):
            with http.websocket_connect(f"/ws/{t['id']}") as ws:
                ws.send_text(json.dumps(first))
                assert refusal(ws) == ("hello", 4400)
        with http.websocket_connect(f"/ws/{t['id']}") as ws:  # says nothing
            assert refusal(ws) == ("hello late", 4408)
        with ws_connect(http, t["id"], t["seats"][0]["token"]) as ws:
            c = WsClient(ws)
            assert c.recv()["type"] == "hello" and c.hello["seat"] == 0
            c.until(lambda m: m["type"] == "state")
            ws.send_text(hello(t["seats"][0]["token"]))  # once is enough
            assert c.next_error()["rule"] == "protocol"
            ws.send_json({"type": "ping", "seq": 1})
            assert c.until(lambda m: m["type"] == "pong")["seq"] == 1  # still connected


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
        for step in range(40):
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
            if step < 3:  # a spectator's chat line (a few: the chat's rate) names no card
                ws.send_json({"type": "chat", "text": "na?", "name": "Zoë"})
                for c in (c0, c1, cs):
                    line = c.until(lambda m: m["type"] == "chat")
                    assert not cards_of(line) and line["messages"][0]["spectator"]
            seat = v0["current_player"]
            me = by_seat[seat]
            before = me.state["event"]
            me.send_action(rng.choice(me.view["legal_actions"]))
            me.until_event(before + 1)


def test_record_holds_only_finished_deals(http):
    t = started_table(http)
    tid = t["id"]
    with connect(http, t, t["seats"][0]["token"]) as w0, \
            connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        sync(http, tid, [c0, c1], bot_seats=(2,))
        # while the table plays, the admin's download is what the table showed (redacted)
        rec = http.get(f"/api/tables/{tid}/record", headers=bearer(t["admin_token"])).json()
        assert rec["format"] == "stammtisch-redacted/1" and rec["deals"] == []
        view = play_until_terminal(http, tid, {0: c0, 1: c1}, bot_seats=(2,))
        assert view["terminal"]
        rec = http.get(f"/api/tables/{tid}/record", headers=bearer(t["admin_token"])).json()
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
        rec2 = http.get(f"/api/tables/{tid}/record", headers=bearer(t["admin_token"])).json()
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


def test_analysis_of_a_deal_only_once_it_is_over_and_only_with_a_token(http):
    t = started_table(http)
    tid = t["id"]
    seat_token = t["seats"][0]["token"]
    with connect(http, t, seat_token) as w0, connect(http, t, t["seats"][1]["token"]) as w1:
        c0, c1 = WsClient(w0), WsClient(w1)
        sync(http, tid, [c0, c1], bot_seats=(2,))
        early = http.get(f"/api/tables/{tid}/analysis/1", headers=bearer(seat_token))
        assert early.status_code == 409 and early.json()["rule"] == "deal in progress"
        play_until_terminal(http, tid, {0: c0, 1: c1}, bot_seats=(2,))
        assert http.get(f"/api/tables/{tid}/analysis/1").status_code == 403
        assert http.get(f"/api/tables/{tid}/analysis/1", headers=bearer("x" * 40)).status_code == 403
        assert http.get(f"/api/tables/{tid}/analysis/2", headers=bearer(seat_token)).status_code == 409
        r = http.get(f"/api/tables/{tid}/analysis/1", headers=bearer(seat_token))
        assert r.status_code == 200, r.text
        data = r.json()
        rec = stored_record(http, tid)
        from stammtisch.server.analysis import analyse_deal

        # the server's answer is the worker's analysis of the same deal, as seat 0 may read it
        findings = analyse_deal(rec, 1)
        assert data == {"players": rec["players"], **findings.read_by(0)}
        played = [a["action"] for a in rec["deals"][0]["actions"] if a["action"].startswith("play:")]
        assert [p["action"] for p in data["plays"]] == played
        # any token of the table; answered from the cache, without reading the database
        storage = http.app.state.manager.storage
        real_load = storage.load_table

        def no_reads(*a, **k):
            raise AssertionError("a cached analysis read the database")

        storage.load_table = no_reads
        try:
            spectator = http.get(f"/api/tables/{tid}/analysis/1",
                                 headers=bearer(t["spectator"]["token"]))
        finally:
            storage.load_table = real_load
        assert spectator.status_code == 200
        assert spectator.json() == {"players": rec["players"], **findings.read_by(None)}


# --- every HTTP answer a token gets while the table plays ------------------------------------

HUMANS = [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla"}]


@pytest.fixture()
def roomy(tmp_path):
    """A server whose per-token and per-address limits let one test ask everything, often."""
    from fastapi.testclient import TestClient

    from stammtisch.server.app import create_app
    from stammtisch.server.limits import ServerLimits

    limits = ServerLimits(records_per_minute=1000, record_burst=1000, deals_per_minute=1000,
                          deal_burst=1000, analyses_per_minute=1000, analysis_burst=1000,
                          analyses_per_minute_per_address=1000, analysis_burst_per_address=1000,
                          stored_reads_per_minute_per_address=1000, stored_read_burst_per_address=1000)
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000, limits=limits)
    with TestClient(app) as client:
        yield client


def answers_of(http, tid: str, token: str, finished: int) -> dict:
    """Every answer of the HTTP API this token gets now: per finished deal its analysis and the
    deal as it saw it, the record, the table's info, the lobby, and the refusals of a deal not
    over and of a wrong token."""
    def get(path: str, token: str | None = None) -> dict:
        r = http.get(path, headers=bearer(token) if token else {})
        assert r.status_code in (200, 403, 404, 409), r.text
        return r.json()

    return {
        "analysis": {n: get(f"/api/tables/{tid}/analysis/{n}", token=token) for n in range(1, finished + 1)},
        "deal": {n: get(f"/api/tables/{tid}/deals/{n}", token=token) for n in range(1, finished + 1)},
        "replay": {n: get(f"/api/tables/{tid}/replay/{n}", token=token) for n in range(1, finished + 1)},
        "record": get(f"/api/tables/{tid}/record", token=token),
        "info": get(f"/api/tables/{tid}"),
        "lobby": get("/api/tables"),
        "summary": get(f"/api/tables/{tid}/summary", token=token),
        "refused": [get(f"/api/tables/{tid}/analysis/{finished + 1}", token=token),
                    get(f"/api/tables/{tid}/deals/{finished + 1}", token=token),
                    get(f"/api/tables/{tid}/replay/{finished + 1}", token=token),
                    get(f"/api/tables/{tid}/record", token=token[::-1]),
                    get(f"/api/tables/{tid}/analysis/{finished}", token="x" * 30)],
    }


@pytest.mark.parametrize("ruleset,deals", [("tippen/grupp-1975", 4), ("tapp/modern", 2)])
def test_no_answer_of_the_http_api_names_a_card_its_token_was_not_shown(roomy, ruleset, deals):
    """Deal after deal of random play, every token (each seat, the spectator, the admin) asks
    for everything; each answer of a finished deal names only cards its token was shown in
    that deal (the admin's: what a spectator was shown), the others none. Once the admin has
    closed the table, a seat and the admin read each analysis and replay whole, the spectator
    still not."""
    from seen_helpers import cards_in, shown_per_deal

    from stammtisch.server.analysis import analyse_deal

    http = roomy
    t = started_table(http, ruleset=ruleset, seats=HUMANS)
    tid = t["id"]
    readers = {t["seats"][i]["token"]: i for i in range(3)}
    readers[t["spectator"]["token"]] = None
    readers[t["admin_token"]] = None
    with connect(http, t, t["seats"][0]["token"]) as w0, connect(http, t, t["seats"][1]["token"]) as w1, \
            connect(http, t, t["seats"][2]["token"]) as w2:
        clients = {0: WsClient(w0), 1: WsClient(w1), 2: WsClient(w2)}
        for finished in range(1, deals + 1):
            play_until_terminal(http, tid, clients, rng=random.Random(finished))
            shown = shown_per_deal(stored_record(http, tid))
            assert len(shown) == finished
            for token, reader in readers.items():
                got = answers_of(http, tid, token, finished)
                for n in range(1, finished + 1):
                    for kind in ("analysis", "deal", "replay"):
                        named = cards_in(got[kind][n])
                        assert named <= shown[n - 1][reader], (kind, n, reader, sorted(named - shown[n - 1][reader]))
                assert got["record"]["format"] == "stammtisch-redacted/1"
                for n, entry in enumerate(got["record"]["deals"], 1):
                    assert cards_in(entry) <= shown[n - 1][reader], (n, reader)
                assert not cards_in({k: v for k, v in got["record"].items() if k != "deals"})
                assert not cards_in([got["info"], got["lobby"], got["summary"], got["refused"]])
            if finished < deals:
                for c in clients.values():
                    c.ws.send_json({"type": "next"})
                sync(http, tid, list(clients.values()))
    assert http.post(f"/api/tables/{tid}/close", json={"token": t["admin_token"]}).status_code == 200
    record = stored_record(http, tid)
    shown = shown_per_deal(record)
    for n in range(1, deals + 1):
        whole = {"players": record["players"], **analyse_deal(record, n).read_by(None, whole=True)}
        for token in readers:
            answer = http.get(f"/api/tables/{tid}/analysis/{n}", headers=bearer(token)).json()
            if token == t["spectator"]["token"]:
                assert cards_in(answer) <= shown[n - 1][None]
            else:
                assert answer == whole
            replay = http.get(f"/api/tables/{tid}/replay/{n}", headers=bearer(token)).json()
            if token == t["spectator"]["token"]:
                assert not replay["whole"] and cards_in(replay) <= shown[n - 1][None]
            else:  # every hand once the table has ended
                assert replay["whole"] and all(replay["steps"][0]["hands"])
                assert cards_in(replay) <= set(record["deals"][n - 1]["deck"])

"""Storage faults typed at the event store's boundary: the database's own errors are retried
and, at the deadline, answered "try again" (503 over HTTP); any other error is a fault of the
server's, not retried, undone, and answered as a fault with its traceback logged."""

from __future__ import annotations

import logging
from dataclasses import replace

from fastapi.testclient import TestClient
from server_helpers import WsClient, connect, started_table, sync

from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits


def app_client(tmp_path, **limits):
    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=replace(ServerLimits(), **limits))
    return TestClient(app)


def test_a_type_error_in_the_row_writer_is_answered_as_a_fault_not_try_again(tmp_path, monkeypatch, caplog):
    with app_client(tmp_path) as http:
        t = started_table(http)
        with connect(http, t, t["seats"][0]["token"]) as w0, \
                connect(http, t, t["seats"][1]["token"]) as w1:
            c0, c1 = WsClient(w0), WsClient(w1)
            info = sync(http, t["id"], [c0, c1], bot_seats=(2,))
            me = {0: c0, 1: c1}[c0.view["current_player"]]
            snapshot = me.view
            storage = http.app.state.storage
            calls = []

            def broken(*a, **k):
                calls.append(a)
                raise TypeError("a bug in the row writer")

            monkeypatch.setattr(storage, "write_batch", broken)
            with caplog.at_level(logging.ERROR, logger="stammtisch.server"):
                me.send_action(me.view["legal_actions"][0], seq=7)
                err = me.next_error()
            assert err["rule"] == "server" and err["seq"] == 7
            assert len(calls) == 1, "a fault was retried"
            assert any(r.exc_info and r.exc_info[0] is TypeError for r in caplog.records), \
                "the fault was not logged with its traceback"
            monkeypatch.undo()
            # undone: the table is as it was, and plays on
            assert http.get(f"/api/tables/{t['id']}").json()["events"] == info["events"]
            me.send_action(snapshot["legal_actions"][0])
            me.until_event(info["events"] + 1)


def test_an_outage_is_retried_and_then_answered_503(tmp_path, monkeypatch):
    with app_client(tmp_path, commit_deadline=0.5) as http:
        storage = http.app.state.storage
        calls = []

        def away(*a, **k):
            calls.append(a)
            raise OSError("the database is away")

        monkeypatch.setattr(storage, "create_table", away)
        r = http.post("/api/tables", json={
            "ruleset": "tippen/grupp-1975",
            "seats": [{"name": "a"}, {"name": "b"}, {"name": "c", "bot": "heuristic"}]})
        assert r.status_code == 503 and r.json()["rule"] == "storage", r.text
        assert r.headers["retry-after"] == "1"
        assert len(calls) > 1, "an outage was not retried"

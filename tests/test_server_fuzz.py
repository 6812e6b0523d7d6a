"""Property-based fuzzing of the web table.

HTTP: Schemathesis generates requests from the app's own OpenAPI schema (valid and invalid
bodies, paths, query strings); the server never answers 500 and every error is JSON with a
message. The examples per operation are a share in the suite and ten times as many in the deep
run (``tests/depth.py``).

WebSocket: Hypothesis sends random JSON (any shape, size and depth), random action strings and
random event numbers to a seat's socket; every message gets an answer (a state, a pong or an
error with a rule), the connection stays open, and a refused message changes nothing. Once
through Starlette's test client (the receive loop takes every message) and once through a
real uvicorn server, where actions are taken at once from the socket's read.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
import schemathesis
from depth import cases
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from server_helpers import WsClient, create_table, greeted, post_json, uvicorn_thread, ws_connect

from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits

EXAMPLES = cases(30, 300)  # per operation

LIMITS = replace(ServerLimits(), creation_burst=10**6, creations_per_minute=10**6,
                 max_live_tables=10**6, seat_rate=10**6, seat_burst=10**6)


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory):
    db = tmp_path_factory.mktemp("fuzz") / "fuzz.sqlite"
    return create_app(f"sqlite:///{db}", bot_delay=0, deal_pause=1000, limits=LIMITS,
                      api_docs=True)


@pytest.fixture(scope="module")
def api_schema(fuzz_app):
    return schemathesis.openapi.from_asgi("/api/openapi.json", fuzz_app)


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                 HealthCheck.function_scoped_fixture])
def test_http_api_never_fails_with_500(case):
    response = case.call()
    case.validate_response(response, checks=[not_a_server_error])
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body.get("error"), str) and body["error"], response.text


# --- WebSocket -------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)
action_strings = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["pass", "tap", "play:", "play:HA", "play:XX", "exchange:", "exchange:HA,HK",
                     "bid:9", "contract:rufer:D", "call:DJ", "give:?", "weg", "play"]),
    st.builds(lambda a, b: f"{a}:{b}", st.sampled_from(["play", "exchange", "bid", "call"]),
              st.text(max_size=12)),
)
messages = st.one_of(
    json_values.map(json.dumps),
    st.builds(lambda a, e, seq: json.dumps({"type": "action", "action": a, "event": e, "seq": seq}),
              action_strings, st.integers(-3, 10**20) | st.none() | st.text(max_size=4),
              st.integers() | st.text(max_size=80) | st.none()),
    st.sampled_from(["next", "start", "ping", "teleport"]).map(lambda k: json.dumps({"type": k})),
    st.integers(1, 3000).map(lambda d: "[" * d + "]" * d),
    st.integers(1, 200).map(lambda d: '{"type":"ping","x":' + '{"a":' * d + "1" + "}" * d + "}"),
    st.text(max_size=300),
    st.integers(4000, 5000).map(lambda n: json.dumps({"type": "ping", "pad": "x" * n})),
)


@pytest.fixture(scope="module")
def test_client_socket(tmp_path_factory):
    db = tmp_path_factory.mktemp("fuzz-ws") / "ws.sqlite"
    app = create_app(f"sqlite:///{db}", bot_delay=0, deal_pause=1000, limits=LIMITS)
    with TestClient(app) as http:
        t = create_table(http)
        http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
        with ws_connect(http, t["id"], t["seats"][0]["token"]) as ws:
            c = WsClient(ws)
            c.until(lambda m: m["type"] == "state")
            yield app, t, c


class _Http:
    """``create_table``'s client, over real HTTP."""

    def __init__(self, port: int):
        self.port = port

    def post(self, path: str, json: dict) -> Any:
        body = post_json(self.port, path, json)

        class Answer:
            status_code = 201

            def json(self) -> Any:
                return body

        return Answer()


class _Socket:
    """A websockets client socket as ``WsClient`` reads it (Starlette's test socket's names)."""

    def __init__(self, sock: Any):
        self.sock = sock

    def send_text(self, text: str) -> None:
        self.sock.send(text)

    def receive_json(self) -> Any:
        return json.loads(self.sock.recv(timeout=10))


@pytest.fixture(scope="module")
def uvicorn_socket(tmp_path_factory):
    from websockets.sync.client import connect

    db = tmp_path_factory.mktemp("fuzz-ws-uvicorn") / "ws.sqlite"
    app = create_app(f"sqlite:///{db}", bot_delay=0, deal_pause=1000, limits=LIMITS)
    with uvicorn_thread(app, LIMITS) as port:
        http = _Http(port)
        t = create_table(http)
        http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
        with connect(f"ws://127.0.0.1:{port}/ws/{t['id']}", open_timeout=5, max_size=None) as sock:
            greeted(sock, t["seats"][0]["token"])
            c = WsClient(_Socket(sock))
            c.until(lambda m: m["type"] == "state")
            yield app, t, c


@pytest.fixture(params=["test_client_socket", "uvicorn_socket"])
def live_socket(request):
    return request.getfixturevalue(request.param)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=messages)
def test_websocket_messages_are_answered_and_refusals_change_nothing(live_socket, text):
    fuzz_app, t, c = live_socket
    live = fuzz_app.state.manager.get(t["id"])
    before = (live.events, [list(a) for _, a in live.committed])
    if len(text) > LIMITS.max_message:  # the one refusal that closes: tested in the protocol tests
        text = text[:LIMITS.max_message]
    c.ws.send_text(text)
    c.ws.send_text('{"type":"ping","seq":"fence"}')  # everything before the pong was answered
    answers = []
    c.until(lambda m: answers.append(m) or (m["type"] == "pong" and m.get("seq") == "fence"))
    replies = [m for m in answers[:-1] if m["type"] in ("error", "state", "pong")]
    assert replies, f"no answer to {text[:80]!r}"
    for m in replies:
        if m["type"] == "error":
            assert isinstance(m["rule"], str) and m["rule"] and m["message"]
            assert m["rule"] != "server", m
    if all(m["type"] == "error" for m in replies):
        assert (live.events, [list(a) for _, a in live.committed]) == before

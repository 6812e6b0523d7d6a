"""Helpers shared by the server tests (not a test module)."""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from preloaded import fork_server

from stammtisch.server.threaded import free_port  # noqa: F401  (the tests import it from here)

#: How long a helper waits for what comes within seconds unless the server hangs (only a
#: hang fails).
HANG = 300.0


def roomy_limits(**overrides: Any) -> Any:
    """Limits for a server that many tests share (a module's browser server, say): the
    per-address quotas that every test's tables add up against (creations, live tables,
    search-bot seats, seat takes, downloads, analyses) lifted out of reach, so that whether
    a test trips them does not depend on how many tests ran before it or how fast. Tests of
    a limit set it themselves (test_server_limits.py)."""
    from dataclasses import replace

    from stammtisch.server.limits import ServerLimits

    roomy = dict(creations_per_minute=10_000.0, creation_burst=10_000, tables_per_address=10_000,
                 search_bots_per_address=10_000, seat_takes_per_minute=10_000.0,
                 records_per_minute=10_000.0, record_burst=10_000, deals_per_minute=10_000.0,
                 deal_burst=10_000, analyses_per_minute=10_000.0, analysis_burst=10_000,
                 analyses_per_minute_per_address=10_000.0, analysis_burst_per_address=10_000)
    return replace(ServerLimits(), **{**roomy, **overrides})


@contextmanager
def uvicorn_thread(app: Any, limits: Any = None, ws: str = "websockets-sansio",
                   deflate: bool = False, listener: Any = None) -> Iterator[int]:
    """``app`` served by a real uvicorn server (the settings ``stammtisch serve`` uses) on a
    thread of this process, so that a test can reach into the app's tables; yields its port
    (``listener``: served on that Unix socket instead, ``stammtisch serve --uds``)."""
    import uvicorn

    from stammtisch.server.app import uvicorn_settings
    from stammtisch.server.limits import ServerLimits

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, **uvicorn_settings(
        "127.0.0.1", port, "warning", ws, deflate, limits or ServerLimits(), listener)))
    started_up = threading.Event()
    startup = server.startup

    async def startup_and_tell(sockets: Any = None) -> None:
        try:
            await startup(sockets=sockets)
        finally:  # (a failed start-up too: then ``started`` stays false)
            started_up.set()

    server.startup = startup_and_tell  # type: ignore[method-assign]
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert started_up.wait(HANG) and server.started, "the server did not start"
        yield port
    finally:
        server.should_exit = True
        thread.join(20)


def post_json(port: int, path: str, body: dict) -> Any:
    """``POST`` of a JSON body to a server on this machine; its JSON answer."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=10) as answer:
        return json.loads(answer.read())


def create_table(client, ruleset="tippen/grupp-1975", seats=None, options=None):
    seats = seats or [{"name": "Anna"}, {"name": "Bernd"}, {"name": "Carla", "bot": "random"}]
    r = client.post("/api/tables", json={"ruleset": ruleset, "options": options or {},
                                         "seats": seats})
    assert r.status_code == 201, r.text
    return r.json()


class WsClient:
    """A TestClient WebSocket with the latest state, errors and presence remembered."""

    def __init__(self, ws):
        self.ws = ws
        self.hello = None
        self.state = None
        self.table: dict = {}  # the table's info as of the latest state message
        self.tables_sent = 0  # state messages that carried it
        self.errors: list[dict] = []
        self.states = 0
        self.events_seen: list[int] = []

    def recv(self) -> dict:
        m = self.ws.receive_json()
        kind = m["type"]
        if kind == "hello":
            self.hello = m
        elif kind == "state":
            # as the web client does: the table's info comes only when it changed, but for its
            # event number (tests/test_server_table_info.py checks that this is the table's info)
            if "table" in m:
                self.table = dict(m["table"])
                self.tables_sent += 1
            else:
                self.table["events"] = m["event"]
                m["table"] = dict(self.table)
            self.state = m
            self.states += 1
            self.events_seen.append(m["event"])
        elif kind == "error":
            self.errors.append(m)
        return m

    def until(self, pred, limit=2000) -> dict:
        for _ in range(limit):
            m = self.recv()
            if pred(m):
                return m
        raise AssertionError("message never came")

    def until_event(self, n: int) -> None:
        while self.state is None or self.state["event"] < n:
            self.recv()

    def next_error(self) -> dict:
        return self.until(lambda m: m["type"] == "error")

    @property
    def view(self):
        return self.state["view"]

    def send_action(self, action: str, seq=None, event=None) -> None:
        """An action answering ``event`` (default: the latest state this client saw)."""
        msg = {"type": "action", "action": action,
               "event": self.state["event"] if event is None else event}
        if seq is not None:
            msg["seq"] = seq
        self.ws.send_json(msg)


def sync(http, table_id: str, clients: list[WsClient], bot_seats=()) -> dict:
    """Bring every client up to the server's latest event; while a bot is on turn, wait for
    its action to arrive (a blocking receive: a bot that never acts is a hang, which the
    pytest timeout ends)."""
    while True:
        info = http.get(f"/api/tables/{table_id}").json()
        for c in clients:
            c.until_event(info["events"])
        view = clients[0].view
        if view is None or view["terminal"] or view["current_player"] not in bot_seats:
            return info
        clients[0].until_event(info["events"] + 1)


def play_until_terminal(http, table_id: str, by_seat: dict[int, WsClient], bot_seats=(),
                        rng=None, max_actions=500) -> dict:
    """Play random legal actions for the human seats until the deal is over."""
    rng = rng or random.Random(0)
    clients = list(by_seat.values())
    for _ in range(max_actions):
        sync(http, table_id, clients, bot_seats)
        view = clients[0].view
        if view["terminal"]:
            return view
        seat = view["current_player"]
        me = by_seat[seat]
        legal = me.view["legal_actions"]
        assert legal, me.view
        before = me.state["event"]
        me.send_action(rng.choice(legal))
        me.until_event(before + 1)
    raise AssertionError("the deal did not end")


def serve(db: str, port: int, bot_delay: float = 0, limits: dict | None = None) -> subprocess.Popen:
    """The real server in its own process (``stammtisch serve``'s ``run``), up and answering.
    ``limits``: ``ServerLimits`` fields to change."""
    code = ("import sys; from stammtisch.server.app import run; "
            "from stammtisch.server.limits import ServerLimits; "
            f"run(port={port}, database_url={db!r}, bot_delay={bot_delay}, deal_pause=1000, "
            f"log_level='warning', limits=ServerLimits(**{limits or {}!r}))")
    proc = serving(code)
    urllib.request.urlopen(f"http://127.0.0.1:{port}/api/rulesets", timeout=HANG)
    return proc


#: What the code of ``serving`` runs first: uvicorn writes a byte to the file descriptor
#: ``READY_FD`` once it has started up and listens.
TELL_WHEN_SERVING = """
import os, uvicorn
_startup = uvicorn.Server.startup
async def _startup_and_tell(self, sockets=None):
    await _startup(self, sockets=sockets)
    if self.started:
        os.write(int(os.environ["READY_FD"]), b"1")
uvicorn.Server.startup = _startup_and_tell
"""


def serving(code: str, **popen: Any) -> subprocess.Popen:
    """``code`` (which runs a uvicorn server) in a process of its own, once it serves. Woken
    by the server itself; only a hang (``HANG``) or a server that ends first fails."""
    read_end, write_end = os.pipe()
    extra_env = popen.pop("env", None)
    env = {**os.environ, **(extra_env or {}), "READY_FD": str(write_end)}
    proc: Any
    if popen or extra_env:  # imports may read the environment: a process started afresh
        proc = subprocess.Popen([sys.executable, "-c", TELL_WHEN_SERVING + code], cwd=os.getcwd(),
                                env=env, pass_fds=(write_end,), **popen)
    else:  # forked from a process that has imported the server already (preloaded.py)
        proc = fork_server(TELL_WHEN_SERVING + code, env, write_end)
    os.close(write_end)
    try:
        ready, _, _ = select.select([read_end], [], [], HANG)
        said = os.read(read_end, 1) if ready else b""
    finally:
        os.close(read_end)
    if said != b"1":  # ended (the pipe closed empty) or hung
        proc.kill()
        proc.wait()
        raise AssertionError("the server did not start" + ("" if ready else f" in {HANG:.0f} s"))
    return proc


def stored_record(http: Any, table_id: str) -> dict[str, Any]:
    """The full record of a table's finished deals as its database holds it (while the table
    plays, no token downloads it: the tests read it here)."""
    from stammtisch.server.records import public_record, replayed

    st = http.app.state.storage.load_table(table_id)
    assert st is not None, table_id
    return public_record(replayed(st))


def new_app_client(tmp_path) -> Iterator[Any]:
    """A TestClient of a new app on an SQLite file: bots act at once, a next deal waits long
    (a test module's ``http`` fixture yields from it)."""
    from fastapi.testclient import TestClient

    from stammtisch.server.app import create_app

    app = create_app(f"sqlite:///{tmp_path / 'st.sqlite'}", bot_delay=0, deal_pause=1000)
    with TestClient(app) as client:
        yield client


def started_table(http, **kw):
    """A table made by ``create_table`` and started by its admin."""
    t = create_table(http, **kw)
    r = http.post(f"/api/tables/{t['id']}/start", json={"token": t["admin_token"]})
    assert r.status_code == 200, r.text
    return t


def bearer(token: str) -> dict[str, str]:
    """The header that carries a table's token in an HTTP request (never the URL: the server
    refuses a token there)."""
    return {"authorization": f"Bearer {token}"}


def hello(token: str) -> str:
    """A WebSocket's first message: the table's token (never the URL)."""
    return json.dumps({"type": "hello", "token": token})


def greeted(sock: Any, token: str) -> Any:
    """A client connection of the ``websockets`` library, its first message (``hello``) sent."""
    sock.send(hello(token))
    return sock


@contextmanager
def ws_connect(http, table_id: str, token: str) -> Iterator[Any]:
    """A TestClient WebSocket to a table, its first message (``hello``) sent."""
    with http.websocket_connect(f"/ws/{table_id}") as ws:
        ws.send_text(hello(token))
        yield ws


def connect(http, t, token):
    """A TestClient WebSocket to table ``t`` with ``token``."""
    return ws_connect(http, t["id"], token)

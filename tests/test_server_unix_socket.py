"""``stammtisch serve --uds PATH``: the web table on a Unix socket, for a reverse proxy on the
same machine. Only the socket's owner and group may connect; the X-Forwarded-For header that
comes through it names the client (the limits per address apply to the real clients); the
TCP caps per address do not lump every connection together (they all come from the proxy);
a live socket is never taken over, a leftover one is; the socket is gone when the server
stops. Play over it is play as over TCP."""

from __future__ import annotations

import errno
import http.client
import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest
from server_helpers import uvicorn_thread
from websockets.sync.client import ClientConnection, unix_connect

from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.transport import UNIX_SOCKET_MODE, check_unix_socket, unix_listener


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str):
        super().__init__("localhost", timeout=10)
        self.unix_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.unix_path)


def request(path: str, method: str, url: str, body: dict | None = None,
            client: str | None = None) -> tuple[int, Any]:
    """One HTTP request over the Unix socket ``path``; ``client``: the X-Forwarded-For a proxy
    would set."""
    conn = UnixHTTPConnection(path)
    headers = {"content-type": "application/json"}
    if client is not None:
        headers["x-forwarded-for"] = client
    try:
        conn.request(method, url, body=None if body is None else json.dumps(body), headers=headers)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        conn.close()


def short_socket_path(tmp_path: Path) -> str:
    """A socket path under the 107-byte limit of ``sun_path`` (pytest's folders can be long)."""
    path = tmp_path / "s.sock"
    if len(str(path)) < 100:
        return str(path)
    folder = Path("/tmp") / f"st-uds-{os.getpid()}-{time.monotonic_ns()}"
    folder.mkdir()
    return str(folder / "s.sock")


@contextmanager
def served(tmp_path: Path, limits: ServerLimits) -> Iterator[str]:
    """The app on a real uvicorn server listening on a Unix socket (``unix_listener``, as
    ``run(uds=…)`` does); yields the socket's path."""
    path = short_socket_path(tmp_path)
    app = create_app(f"sqlite:///{tmp_path / 't.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=limits)
    listener = unix_listener(path)
    try:
        with uvicorn_thread(app, limits, listener=listener):
            yield path
    finally:
        listener.close()


def new_table(path: str, client: str | None = None) -> tuple[int, Any]:
    return request(path, "POST", "/api/tables",
                   {"ruleset": "tippen/grupp-1975", "options": {"players": 3},
                    "seats": [{"name": n} for n in ("Anna", "Bernd", "Carla")]}, client)


def test_the_socket_is_for_its_owner_and_group_and_names_the_clients_behind_the_proxy(tmp_path):
    limits = ServerLimits(creation_burst=1, creations_per_minute=0.001)
    with served(tmp_path, limits) as path:
        assert stat.S_ISSOCK(os.stat(path).st_mode)
        assert stat.S_IMODE(os.stat(path).st_mode) == UNIX_SOCKET_MODE == 0o660
        # the creation limit is per client, as the proxy names it: one table each
        assert new_table(path, "203.0.113.7")[0] == 201
        status, body = new_table(path, "203.0.113.7")
        assert status == 429 and body["rule"] == "rate"
        assert new_table(path, "198.51.100.2")[0] == 201


def test_connections_through_the_proxy_are_not_capped_as_one_address(tmp_path):
    limits = ServerLimits(conns_per_address=2, max_connections=5)
    with served(tmp_path, limits) as path:
        held = []
        try:
            for _ in range(5):  # more than conns_per_address, all from the proxy
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.settimeout(10)
                s.connect(path)
                s.sendall(b"GET /api/rulesets HTTP/1.1\r\nHost: localhost\r\n\r\n")
                assert s.recv(12) == b"HTTP/1.1 200"
                held.append(s)
            # the cap on all connections still holds: the refusal comes at once, unasked
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(10)
                s.connect(path)
                answer = b""
                while chunk := s.recv(4096):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 503")
            assert json.loads(body)["rule"] == "connections"
        finally:
            for s in held:
                s.close()


def _state(sock: ClientConnection, event: int) -> dict:
    while True:
        m = json.loads(sock.recv(timeout=10))
        if m["type"] == "state" and m["event"] >= event:
            return m


def test_a_deal_is_played_over_the_unix_socket(tmp_path):
    with served(tmp_path, ServerLimits()) as path:
        _, t = new_table(path, "203.0.113.7")
        with ExitStack() as stack:
            socks = [stack.enter_context(unix_connect(
                path, f"ws://localhost/ws/{t['id']}?token={s['token']}", open_timeout=5))
                for s in t["seats"]]
            for sock in socks:
                _state(sock, 0)
            assert request(path, "POST", f"/api/tables/{t['id']}/start",
                           {"token": t["admin_token"]})[0] == 200
            views = [_state(sock, 1)["view"] for sock in socks]
            event = 1
            while not views[0]["terminal"]:
                turn = views[0]["current_player"]
                action = views[turn]["legal_actions"][0]
                socks[turn].send(json.dumps({"type": "action", "action": action, "event": event}))
                event += 1
                messages = [_state(sock, event) for sock in socks]
                assert {m["event"] for m in messages} == {event}
                views = [m["view"] for m in messages]
                assert views[0]["log"][-1][0] == turn
            assert event > 5  # a whole deal: bids, exchanges, three tricks


def test_a_live_socket_is_refused_and_a_leftover_replaced(tmp_path):
    path = short_socket_path(tmp_path)
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(path)  # a server that died: the file stays, nobody listens
    leftover.close()
    check_unix_socket(path)  # nothing to object to: it is replaced
    live = unix_listener(path)
    try:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o660
        with pytest.raises(OSError) as refused:
            unix_listener(path)
        assert refused.value.errno == errno.EADDRINUSE
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(path)  # the first server's socket is still there and listening
    finally:
        live.close()
    other = Path(path).with_name("not-a-socket")
    other.write_text("data")
    with pytest.raises(OSError) as refused:
        unix_listener(str(other))
    assert refused.value.errno == errno.EEXIST and other.read_text() == "data"
    with pytest.raises(OSError) as refused:
        check_unix_socket(str(tmp_path / "missing" / "s.sock"))
    assert refused.value.errno == errno.ENOENT
    with pytest.raises(OSError) as refused:
        check_unix_socket("/tmp/" + "x" * 110)
    assert refused.value.errno == errno.ENAMETOOLONG


def test_stammtisch_serve_uds(tmp_path):
    """The command itself: it listens on the socket, a second server on the same path is
    refused in one line, and the socket is removed when the server stops."""
    path = short_socket_path(tmp_path)
    command = [sys.executable, "-m", "stammtisch", "serve", "--uds", path,
               "--database-url", f"sqlite:///{tmp_path / 'serve.sqlite'}"]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = b""
    try:
        # uvicorn says so once it serves: woken by each piece of output, only a hang fails
        while b"Uvicorn running on" not in seen:
            ready, _, _ = select.select([server.stdout], [], [], 300)
            assert ready, f"the server did not start in 300 s: {seen!r}"
            piece = os.read(server.stdout.fileno(), 65536)
            assert piece, f"the server ended: {seen!r}"
            seen += piece
        status, rulesets = request(path, "GET", "/api/rulesets")
        assert status == 200 and "tippen/grupp-1975" in {r["id"] for r in rulesets}
        second = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert "already listening on" in second.stdout + second.stderr
        assert "Traceback" not in second.stdout + second.stderr
        assert request(path, "GET", "/api/rulesets")[0] == 200  # the first still serves
    finally:
        server.send_signal(signal.SIGINT)
        out = seen.decode() + server.communicate(timeout=30)[0]
    assert server.returncode == 0, out
    assert "Unix socket" in out and "Traceback" not in out
    assert not os.path.exists(path)

"""``stammtisch serve --uds PATH``: the web table on a Unix socket, for a reverse proxy on the
same machine. Only the socket's owner and group may connect; the X-Forwarded-For header that
comes through it names the client by its right-most entry, the one the proxy added (the limits
per address apply to the real clients, and a client cannot pick its address by sending the
header itself); without the header a request's address is "unix", logged once; the TCP caps
per address do not lump every connection together (they all come from the proxy); a live
socket is never taken over, a leftover one is; the socket is gone when the server stops, on
SIGINT and on SIGTERM. Play over it is play as over TCP."""

from __future__ import annotations

import errno
import http.client
import json
import logging
import os
import resource
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
from server_helpers import greeted, uvicorn_thread
from websockets.sync.client import ClientConnection, unix_connect

from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
from stammtisch.server.proxy import UNNAMED, forwarded_client
from stammtisch.server.transport import (
    OPEN_FILES_RESERVED,
    UNIX_SOCKET_MODE,
    check_unix_socket,
    unix_listener,
)


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


def test_the_client_is_the_right_most_entry_the_proxy_added(tmp_path):
    """nginx's ``$proxy_add_x_forwarded_for`` appends the address it saw to what the client sent:
    the entries to its left are the client's words, and do not change its address."""
    limits = ServerLimits(creation_burst=1, creations_per_minute=0.001, ws_per_address=1)
    with served(tmp_path, limits) as path:
        status, t = new_table(path, "1.2.3.4, 5.6.7.8")
        assert status == 201
        status, body = new_table(path, "9.9.9.9, 5.6.7.8")  # another claim, the same client
        assert status == 429 and body["rule"] == "rate"
        assert new_table(path, "5.6.7.8, 9.9.9.9")[0] == 201  # the proxy saw 9.9.9.9
        # the WebSocket a connection is upgraded to: one per address here
        url = f"ws://localhost/ws/{t['id']}"

        def connect(forwarded: str) -> ClientConnection:
            return greeted(unix_connect(path, url, open_timeout=5,
                                        additional_headers={"X-Forwarded-For": forwarded}),
                           t["seats"][0]["token"])

        with connect("1.1.1.1, 5.6.7.8") as first:
            assert _state(first, 0)["type"] == "state"
            with connect("2.2.2.2, 5.6.7.8") as second:
                refusal = json.loads(second.recv(timeout=10))
                assert refusal["type"] == "error" and refusal["rule"] == "address"
            with connect("5.6.7.8, 2.2.2.2") as third:
                assert _state(third, 0)["type"] == "state"


def test_a_request_without_the_header_is_the_client_unix_and_said_once(tmp_path, caplog):
    limits = ServerLimits(creation_burst=1, creations_per_minute=0.001)
    with caplog.at_level(logging.WARNING, logger="stammtisch.server"), served(tmp_path, limits) as path:
        assert new_table(path)[0] == 201
        status, body = new_table(path)  # every client without the header is one address
        assert status == 429 and body["rule"] == "rate"
        assert new_table(path, "203.0.113.7")[0] == 201
        assert request(path, "GET", "/api/rulesets")[0] == 200
    said = [r.getMessage() for r in caplog.records if "X-Forwarded-For" in r.getMessage()]
    assert len(said) == 1 and repr(UNNAMED) in said[0]
    assert "$proxy_add_x_forwarded_for" in said[0]


def test_the_forwarded_client_is_read_as_a_proxy_writes_it():
    def client(*values: str) -> str | None:
        return forwarded_client([(b"Host", b"x")] + [(b"X-Forwarded-For", v.encode()) for v in values])

    assert client("1.2.3.4, 5.6.7.8") == "5.6.7.8"
    assert client("1.2.3.4", "5.6.7.8,") == "5.6.7.8"  # several headers are one list
    assert client("1.2.3.4:5678") == "1.2.3.4"
    assert client("a, [2001:db8::1]:443") == "2001:db8::1"
    assert client("2001:db8::1") == "2001:db8::1"
    assert client(" ") is None and client() is None


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
            socks = [greeted(stack.enter_context(unix_connect(
                path, f"ws://localhost/ws/{t['id']}", open_timeout=5)), s["token"])
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


def start_serve(path: str, tmp_path: Path, *extra: str, **popen: Any) -> tuple[subprocess.Popen, bytes]:
    """``stammtisch serve --uds path`` in a process of its own, once it serves; with what it
    printed so far."""
    command = [sys.executable, "-m", "stammtisch", "serve", "--uds", path,
               "--database-url", f"sqlite:///{tmp_path / 'serve.sqlite'}", *extra]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **popen)
    seen = b""
    try:
        # uvicorn says so once it serves: woken by each piece of output, only a hang fails
        while b"Uvicorn running on" not in seen:
            ready, _, _ = select.select([server.stdout], [], [], 300)
            assert ready, f"the server did not start in 300 s: {seen!r}"
            piece = os.read(server.stdout.fileno(), 65536)
            assert piece, f"the server ended: {seen!r}"
            seen += piece
    except BaseException:
        server.kill()
        server.communicate()
        raise
    return server, seen


def test_stammtisch_serve_uds(tmp_path):
    """The command itself: it listens on the socket, a second server on the same path is
    refused in one line, and the socket is removed when the server stops (Ctrl-C)."""
    path = short_socket_path(tmp_path)
    server, seen = start_serve(path, tmp_path)
    try:
        status, rulesets = request(path, "GET", "/api/rulesets")
        assert status == 200 and "tippen/grupp-1975" in {r["id"] for r in rulesets}
        second = subprocess.run([sys.executable, "-m", "stammtisch", "serve", "--uds", path,
                                 "--database-url", f"sqlite:///{tmp_path / 'second.sqlite'}"],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2
        assert "already listening on" in second.stdout + second.stderr
        assert "Traceback" not in second.stdout + second.stderr
        assert request(path, "GET", "/api/rulesets")[0] == 200  # the first still serves
    finally:
        server.send_signal(signal.SIGINT)
        out = (seen + server.communicate(timeout=30)[0]).decode()
    assert server.returncode == 0, out
    assert "Unix socket" in out and "Traceback" not in out
    assert not os.path.exists(path)


def _few_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


def test_stammtisch_serve_uds_behind_an_appending_proxy_stopped_by_sigterm(tmp_path):
    """The command as a service runs it: started with few open files (it lowers
    max_connections, one line in the log), behind a proxy that appends to X-Forwarded-For
    (the right-most entry is the client), stopped by SIGTERM (systemd's stop): the socket is
    gone and the exit is clean."""
    path = short_socket_path(tmp_path)
    server, seen = start_serve(path, tmp_path, "--limit", "creation_burst=1",
                               "--limit", "creations_per_minute=0.001", preexec_fn=_few_open_files)
    try:
        assert new_table(path, "1.2.3.4, 5.6.7.8")[0] == 201
        assert new_table(path, "9.9.9.9, 5.6.7.8")[0] == 429
        assert new_table(path, "5.6.7.8, 9.9.9.9")[0] == 201
    finally:
        server.send_signal(signal.SIGTERM)
        out = (seen + server.communicate(timeout=30)[0]).decode()
    assert server.returncode == 0, out
    assert "Traceback" not in out and "Shutting down" in out
    assert not os.path.exists(path)
    lowered = [line for line in out.splitlines() if "max_connections lowered" in line]
    assert len(lowered) == 1, out
    assert f"from 2000 to {256 - OPEN_FILES_RESERVED}" in lowered[0]

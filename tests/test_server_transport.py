"""The server's limits against the real server process (uvicorn with the guarded protocol):
bodies are limited while they stream, and slow or piled-up connections cannot starve honest
clients."""

from __future__ import annotations

import signal
import socket
import urllib.request

import pytest
from server_helpers import free_port, serve


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A server with a 1 s header timeout and small connection caps."""
    port = free_port()
    proc = serve(f"sqlite:///{tmp_path_factory.mktemp('transport') / 't.sqlite'}", port,
                 limits={"header_timeout": 1.0, "conns_per_address": 20, "max_connections": 30})
    try:
        yield port
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def open_socket(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    return s


def read_all(s: socket.socket) -> bytes:
    """Everything until the server closes the connection (a timeout fails the test)."""
    out = b""
    while True:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk


@pytest.mark.parametrize("path", ["/api/tables", "/api/tables/x/start", "/api/tables/x/close",
                                  "/api/tables/x/reissue"])
def test_a_chunked_body_is_refused_while_it_streams(server, path):
    with open_socket(server) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"
        for _ in range(8):  # 128 KiB, twice the limit, and the body never ends
            s.sendall(chunk)
        answer = b""
        while not answer.endswith(b"}"):  # the JSON error body ends the answer
            chunk = s.recv(4096)
            assert chunk, answer
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"rule":"size"' in answer


def test_half_open_requests_are_timed_out_and_honest_requests_answered(server):
    slow = []
    for _ in range(25):  # more than the per-address cap
        s = open_socket(server)
        s.sendall(b"GET /api/rulesets HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        slow.append(s)
    try:
        answers = [read_all(s) for s in slow]  # each one ends: closed or refused, never left open
    finally:
        for s in slow:
            s.close()
    refused = [a for a in answers if a.startswith(b"HTTP/1.1 503")]
    assert len(refused) >= 5 and b'"rule":"connections"' in refused[0]
    assert all(a == b"" or a.startswith(b"HTTP/1.1 503") for a in answers)
    with urllib.request.urlopen(f"http://127.0.0.1:{server}/api/rulesets", timeout=5) as r:
        assert r.status == 200


def test_a_silent_connection_is_closed(server):
    with open_socket(server) as s:
        assert read_all(s) == b""


def test_endless_headers_are_refused(server):
    with open_socket(server) as s:
        s.sendall(b"GET /api/rulesets HTTP/1.1\r\nHost: x\r\n")
        answer = b""
        try:
            for i in range(200):  # 200 KiB of headers, far beyond the limit
                s.sendall(b"X-Pad-%d: %s\r\n" % (i, b"a" * 1000))
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = read_all(s)
    assert answer.startswith(b"HTTP/1.1 431"), answer[:100]

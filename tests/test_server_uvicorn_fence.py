"""The private parts of uvicorn (and of websockets beneath it) that the WebSocket fast path
uses (stammtisch/server/transport.py) exist on a real connection under the installed
versions: when an upgrade of uvicorn or websockets changes them, this fails, loudly, rather
than the server falling back to the slow path unnoticed or breaking under load."""

from __future__ import annotations

import json

from server_helpers import uvicorn_thread
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.sync.client import connect

from stammtisch.server.transport import KeepWebSocketSend, ServerSocket, missing_server_parts


async def probe(ws: WebSocket) -> None:
    await ws.accept()
    sock = ServerSocket(ws)
    await ws.send_text(json.dumps({
        "missing": missing_server_parts(ws),
        "protocol": type(getattr(ws.scope.get("stammtisch.server_send"), "__self__", None)).__name__,
        "write_now": sock.write_now is not None,
        "takes_now": sock.takes_now,
    }))
    await ws.close()


def test_every_private_part_of_uvicorn_the_fast_path_uses_is_there():
    app = KeepWebSocketSend(Starlette(routes=[WebSocketRoute("/probe", probe)]))
    with uvicorn_thread(app) as port, connect(f"ws://127.0.0.1:{port}/probe", open_timeout=5) as ws:
        found = json.loads(ws.recv(timeout=10))
    assert found["missing"] == [], f"uvicorn's or websockets' internals changed: {found['missing']}"
    assert found["protocol"] == "FramedWebSocketProtocol"
    assert found["write_now"] and found["takes_now"]


def test_a_message_written_directly_reaches_the_client_framed():
    async def echo(ws: WebSocket) -> None:
        await ws.accept()
        sock = ServerSocket(ws)
        assert sock.write_now is not None
        text = (await sock.receive())["text"]
        for size in (5, 200, 70_000):  # the three header lengths of RFC 6455 §5.2
            assert sock.write_now(text * size)
        await ws.close()

    app = KeepWebSocketSend(Starlette(routes=[WebSocketRoute("/echo", echo)]))
    with uvicorn_thread(app) as port, \
            connect(f"ws://127.0.0.1:{port}/echo", open_timeout=5, max_size=None) as ws:
        ws.send("ab")
        assert [ws.recv(timeout=10) for _ in range(3)] == ["ab" * 5, "ab" * 200, "ab" * 70_000]

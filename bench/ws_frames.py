"""The web table's WebSocket receive path against uvicorn's, in one process.

Feeds the same client action messages (one whole, masked text frame each, as browsers and
``bench/server_load.py``'s clients send them) to uvicorn's websockets-sansio protocol and to
the table's ``FramedWebSocketProtocol`` (``stammtisch.server.transport``), one frame per read,
and takes each message off the protocol's ASGI ``receive`` as the app does. The transport is
a stand-in that counts reading pauses instead of changing the event loop's epoll set, so the
figure leaves out the two system calls uvicorn's protocol makes per message for those.

Prints one JSON line: messages, CPU µs per message of each protocol (best of ``--repeat``
rounds, the two alternating), their ratio, and the pauses of reading per 1,000 messages.

    python bench/ws_frames.py [--messages 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState

from stammtisch.server.transport import framed_websocket_protocol

REQUEST = (b"GET /ws HTTP/1.1\r\nhost: localhost\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
           b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n")


class Transport(asyncio.Transport):
    """Takes what is written; counts how often reading is paused."""

    def __init__(self) -> None:
        super().__init__()
        self.pauses = 0

    def write(self, data: Any) -> None:
        pass

    def close(self) -> None:
        pass

    def is_closing(self) -> bool:
        return False

    def pause_reading(self) -> None:
        self.pauses += 1

    def resume_reading(self) -> None:
        pass

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(name,
                                                                                     default)


def client_frame(text: str) -> bytes:
    payload = text.encode()
    key = os.urandom(4)
    assert len(payload) < 126
    return (bytes([0x81, 0x80 | len(payload)]) + key
            + bytes(b ^ key[i % 4] for i, b in enumerate(payload)))


async def _app(scope: Any, receive: Any, send: Any) -> None:
    await receive()
    await send({"type": "websocket.accept"})
    await asyncio.Event().wait()


async def measure(protocol: type, frames: list[bytes], messages: int) -> tuple[float, int]:
    config = Config(app=_app, ws_max_size=65536, ws_ping_interval=None, log_level="critical")
    config.load()
    state = ServerState()
    proto = protocol(config=config, server_state=state, app_state={})
    transport = Transport()
    proto.connection_made(transport)
    proto.data_received(REQUEST)
    for _ in range(10):
        await asyncio.sleep(0)  # the app accepts
    assert proto.handshake_complete
    start = time.process_time()
    for i in range(messages):
        proto.data_received(frames[i % len(frames)])
        await proto.receive()
    spent = time.process_time() - start
    for task in state.tasks:
        task.cancel()
    return spent / messages * 1e6, transport.pauses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000, help="messages per round")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each protocol")
    args = parser.parse_args()
    frames = [client_frame(json.dumps({"type": "action", "action": f"play {i % 40}", "event": i},
                                      separators=(",", ":"))) for i in range(1000)]
    framed = framed_websocket_protocol()
    best: dict[str, float] = {}
    pauses: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, protocol in (("uvicorn", WebSocketsSansIOProtocol), ("stammtisch", framed)):
            us, paused = asyncio.run(measure(protocol, frames, args.messages))
            best[name] = min(best.get(name, us), us)
            pauses[name] = paused
    print(json.dumps({
        "messages": args.messages,
        "uvicorn_us_per_message": round(best["uvicorn"], 2),
        "stammtisch_us_per_message": round(best["stammtisch"], 2),
        "ratio": round(best["uvicorn"] / best["stammtisch"], 2),
        "uvicorn_pauses_per_1000": round(pauses["uvicorn"] / args.messages * 1000),
        "stammtisch_pauses_per_1000": round(pauses["stammtisch"] / args.messages * 1000),
    }))


if __name__ == "__main__":
    main()

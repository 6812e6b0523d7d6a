"""The web table's WebSocket protocol reads the usual client frame itself
(``transport.framed_websocket_protocol``): for any byte stream a client may send, split
anywhere, it must queue the same messages for the app, write the same answers (pongs, close
frames) and close when uvicorn's own websockets-sansio protocol does."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState

from stammtisch.server.transport import QUEUED_BEFORE_PAUSE, framed_websocket_protocol

Framed = framed_websocket_protocol()
MAX_SIZE = 65536

REQUEST = (b"GET /ws HTTP/1.1\r\nhost: localhost\r\nupgrade: websocket\r\nconnection: Upgrade\r\n"
           b"sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nsec-websocket-version: 13\r\n\r\n")


async def _app(scope: Any, receive: Any, send: Any) -> None:
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    await asyncio.Event().wait()  # the messages stay in the protocol's queue for the test


class FakeTransport(asyncio.Transport):
    def __init__(self) -> None:
        super().__init__()
        self.written: list[bytes] = []
        self.closed = False
        self.paused = False

    def write(self, data: Any) -> None:
        self.written.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        self.paused = True

    def resume_reading(self) -> None:
        self.paused = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}.get(name,
                                                                                     default)


def frame(opcode: int, payload: bytes, fin: bool = True, masked: bool = True,
          rsv: int = 0) -> bytes:
    """A client frame (RFC 6455 §5.2)."""
    head = bytes([(0x80 if fin else 0) | rsv << 4 | opcode])
    n = len(payload)
    mask_bit = 0x80 if masked else 0
    if n < 126:
        head += bytes([mask_bit | n])
    elif n < 65536:
        head += bytes([mask_bit | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([mask_bit | 127]) + n.to_bytes(8, "big")
    if not masked:
        return head + payload
    key = hashlib.blake2b(head + payload, digest_size=4).digest()  # varied, yet reproducible
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def run(protocol: type, chunks: list[bytes], early: bytes = b"") -> tuple[list[Any], bytes, bool,
                                                                          Any]:
    """Feed ``chunks`` after the handshake (``early``: bytes sent before the app accepted);
    return the app's queued events, the bytes written after the handshake, whether the
    connection closed, and the protocol."""

    async def go() -> tuple[list[Any], bytes, bool, Any]:
        config = Config(app=_app, ws_max_size=MAX_SIZE, ws_ping_interval=None, log_level="critical")
        config.load()
        state = ServerState()
        proto = protocol(config=config, server_state=state, app_state={})
        transport = FakeTransport()
        proto.connection_made(transport)
        proto.data_received(REQUEST)
        if early:
            proto.data_received(early)
        for _ in range(10):
            await asyncio.sleep(0)
        assert proto.handshake_complete
        handshake = len(transport.written)
        for chunk in chunks:
            if transport.closed:
                break  # a closed transport delivers nothing more
            proto.data_received(chunk)
        events = []
        while not proto.queue.empty():
            events.append(proto.queue.get_nowait())
        outcome = (events, b"".join(transport.written[handshake:]), transport.closed, proto)
        for task in state.tasks:
            task.cancel()
        await asyncio.sleep(0)
        return outcome

    return asyncio.run(go())


def _text(payload: bytes) -> bytes:
    return frame(1, payload)


def _one(frames: st.SearchStrategy[bytes]) -> st.SearchStrategy[list[bytes]]:
    return frames.map(lambda f: [f])


# each draws the frames of one message (or of one control frame, or of one offence)
messages = st.one_of(
    _one(st.text(max_size=80).map(lambda s: _text(s.encode()))),  # the usual message
    _one(st.text(min_size=40, max_size=200).map(lambda s: _text(s.encode()))),  # 16-bit length
    _one(st.binary(max_size=30).map(_text)),  # often invalid UTF-8
    _one(st.binary(max_size=30).map(lambda b: frame(2, b))),  # binary
    _one(st.binary(max_size=20).map(lambda b: frame(9, b))),  # ping: answered with a pong
    _one(st.binary(max_size=20).map(lambda b: frame(10, b))),  # pong
    _one(st.sampled_from([1000, 1001, 3000]).map(lambda c: frame(8, c.to_bytes(2, "big")))),
    _one(st.text(max_size=20).map(lambda s: frame(1, s.encode(), masked=False))),  # no mask
    _one(st.text(max_size=20).map(lambda s: frame(1, s.encode(), rsv=4))),  # reserved bit
    st.lists(st.text(max_size=20), min_size=2, max_size=4).map(  # a fragmented message
        lambda parts: [frame(1 if i == 0 else 0, p.encode(), fin=i == len(parts) - 1)
                       for i, p in enumerate(parts)]),
    st.just([frame(0, b"x")]),  # a continuation out of place (or the end of a fragment)
    st.just([frame(1, b"ab", fin=False)]),  # a message begun, continued by what follows
    st.just([frame(0, b"cd", fin=False)]),
    st.just([frame(15, b"")]),  # an unknown opcode
)


def _split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True) if b > a]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages, max_size=10), st.lists(st.integers(0, 10**6), max_size=8))
@example([[_text(b'{"type":"action","action":"pass","event":3}')]] * 3, [1, 7, 60, 61])
@example([[_text(b"x" * 70000)]], [3])  # too large: closed with 1009
@example([[_text(b"x" * 65536)], [_text(b"ok")]], [2, 50000])  # the largest message allowed
@example([[_text(b"x" * 65537)], [_text(b"ok")]], [])  # one byte more
@example([[frame(1, b"ab", fin=False)], [_text(b"cd")]], [])  # a new message in a fragmented one
@example([[_text("é".encode()[:1])]], [])  # invalid UTF-8: closed with 1007
@example([[_text(b"")], [frame(0, b"x")]], [])  # a message, then a protocol error
def test_same_events_answers_and_closes_as_uvicorns_protocol(stream: list[list[bytes]],
                                                             cuts: list[int]) -> None:
    """Split anywhere, as uvicorn's protocol given one whole frame at a time. (Given several
    frames at once, that one drops the messages before a faulty frame in the same read.)"""
    frames = [f for message in stream for f in message]
    expected = run(WebSocketsSansIOProtocol, frames)[:3]
    assert run(Framed, _split(b"".join(frames), cuts))[:3] == expected


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=30), min_size=1, max_size=3), st.lists(messages, max_size=4))
def test_frames_before_the_handshake_ends_are_left_to_the_parser(early: list[str],
                                                                 stream: list[list[bytes]]) -> None:
    """Text sent before the server's answer to the upgrade (a client may not do that; a faulty
    frame then fails uvicorn's own protocol, so these are well-formed): the parser saw those
    frames, so every later one is the parser's too."""
    first = b"".join(_text(t.encode()) for t in early)
    frames = [f for message in stream for f in message]
    expected = run(WebSocketsSansIOProtocol, frames, early=first)
    got = run(Framed, frames, early=first)
    assert got[:3] == expected[:3]
    assert [e["text"] for e in got[0][:len(early)]] == early
    assert got[3]._framed is False


def test_the_usual_frames_never_reach_the_websockets_parser() -> None:
    """The point of the class: whole text frames are read in place (the parser is not fed),
    in order, and reading pauses only once several messages wait for the app."""
    fed: list[bytes] = []

    class Counting(Framed):  # type: ignore[misc, valid-type]
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            receive = self.conn.receive_data
            self.conn.receive_data = lambda data: (fed.append(data), receive(data))

    texts = [f'{{"type":"action","action":"play {i}","event":{i}}}' for i in range(3)]
    stream = b"".join(_text(t.encode()) for t in texts)
    events, written, closed, proto = run(Counting, _split(stream, [5, 40, 41]))
    assert [e["text"] for e in events] == texts
    assert fed == [REQUEST] and written == b"" and not closed
    assert not proto.transport.paused  # fewer than QUEUED_BEFORE_PAUSE wait
    events, *_ , proto = run(Counting, [stream * QUEUED_BEFORE_PAUSE])
    assert len(events) == 3 * QUEUED_BEFORE_PAUSE and proto.transport.paused


def test_a_frame_that_trickles_in_byte_by_byte() -> None:
    """Collected in one buffer (not joined anew at every read, which would take quadratic
    time for a large frame sent one byte at a time): the messages come out whole."""
    big, small = "ü" * 20_000, "next"
    stream = _text(big.encode()) + _text(small.encode())
    events, written, closed, proto = run(Framed, [stream[i:i + 1] for i in range(len(stream))])
    assert [e["text"] for e in events] == [big, small]
    assert written == b"" and not closed and proto._partial is None

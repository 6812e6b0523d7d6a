"""What goes over the wire, read as the reference reads it: a client's WebSocket frames as
uvicorn's own protocol reads them, a socket's messages queued for the app as ``asyncio.Queue``
queues them, a message's JSON as ``json`` reads it; and against the real server process,
bodies limited while they stream and slow connections unable to starve honest clients. The
sections follow, each headed by what it checks; the first:

The web table's WebSocket protocol reads the usual client frame itself
(``transport.framed_websocket_protocol``): for any byte stream a client may send, split
anywhere, it must queue the same messages for the app, write the same answers (pongs, close
frames) and close when uvicorn's own websockets-sansio protocol does."""

from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import socket
import urllib.request
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from server_helpers import free_port, serve
from uvicorn.config import Config
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from uvicorn.server import ServerState

from stammtisch.server.protocol import json_depth_exceeds, parse_message
from stammtisch.server.refusals import MESSAGES
from stammtisch.server.transport import QUEUED_BEFORE_PAUSE, Inbox, framed_websocket_protocol

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


# ---------------------------------------------------------------------------------------------
# transport.Inbox, where a WebSocket's messages wait for the app: it must behave as the
# ``asyncio.Queue`` it replaces in uvicorn's protocol, for every operation that protocol uses,
# cancelled getters included (no message lost, none delivered twice, the order kept).


OPS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.integers(0, 99)),
    st.tuples(st.just("get"), st.just(0)),
    st.tuples(st.just("cancel"), st.integers(0, 9)),  # the k-th getter started so far
    st.tuples(st.just("step"), st.integers(1, 3)),  # let the loop run a few turns
    st.tuples(st.just("get_nowait"), st.just(0)),
), max_size=40)


def run_ops(make: Any, ops: list[tuple[str, int]]) -> dict[str, Any]:
    """What a queue made by ``make(loop)`` does under ``ops``: what every getter got (or that
    it was cancelled), what ``get_nowait`` found, and what is left, with sizes along the way."""

    async def main() -> dict[str, Any]:
        queue = make(asyncio.get_running_loop())
        getters: list[asyncio.Task[Any]] = []
        seen: list[Any] = []
        for op, arg in ops:
            if op == "put":
                queue.put_nowait(arg)
            elif op == "get":
                getters.append(asyncio.ensure_future(queue.get()))
            elif op == "cancel" and arg < len(getters):
                getters[arg].cancel()
            elif op == "step":
                for _ in range(arg):
                    await asyncio.sleep(0)
            elif op == "get_nowait":
                try:
                    seen.append(queue.get_nowait())
                except asyncio.QueueEmpty:
                    seen.append("empty")
            seen.append((queue.qsize(), queue.empty()))
        for _ in range(5):
            await asyncio.sleep(0)
        got = []
        for task in getters:
            if task.done():
                got.append("cancelled" if task.cancelled() else task.result())
            else:
                task.cancel()
                got.append("waiting")
        left = []
        while not queue.empty():
            left.append(queue.get_nowait())
        return {"got": got, "seen": seen, "left": left}

    return asyncio.run(main())


@settings(max_examples=300, deadline=None)
@given(OPS)
# a getter cancelled while it waits: the next message goes to the next getter
@example([("get", 0), ("get", 0), ("step", 1), ("cancel", 0), ("put", 5), ("step", 3)])
# a getter cancelled after a message woke it, before it ran: the message goes on
@example([("get", 0), ("get", 0), ("step", 1), ("put", 5), ("cancel", 0), ("step", 3)])
def test_inbox_does_what_asyncio_queue_does(ops: list[tuple[str, int]]) -> None:
    assert run_ops(Inbox, ops) == run_ops(lambda loop: asyncio.Queue(), ops)


def test_a_getter_cancelled_after_its_wake_up_passes_the_message_on() -> None:
    async def main() -> list[Any]:
        inbox = Inbox(asyncio.get_running_loop())
        first = asyncio.ensure_future(inbox.get())
        second = asyncio.ensure_future(inbox.get())
        await asyncio.sleep(0)  # both wait
        inbox.put_nowait("a")  # wakes the first...
        first.cancel()  # ...which is cancelled before it runs
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return [first.cancelled(), await asyncio.wait_for(second, 1)]

    assert asyncio.run(main()) == [True, "a"]


def test_get_nowait_on_an_empty_inbox_raises_queue_empty() -> None:
    async def main() -> None:
        with pytest.raises(asyncio.QueueEmpty):
            Inbox(asyncio.get_running_loop()).get_nowait()

    asyncio.run(main())


# ---------------------------------------------------------------------------------------------
# The WebSocket message reader: orjson reads the usual message, json the rest, and every
# message must come out read, or refused, exactly as json alone reads or refuses it.


DEPTH = 32


def parse_with_json_only(text: str, max_depth: int) -> tuple[Any, str, str]:
    """A reader on the standard json module alone: the reference the orjson reader must match."""
    try:
        msg = json.loads(text)
    except RecursionError:
        return None, "depth", MESSAGES["depth"].format(n=max_depth)
    except ValueError:
        return None, "protocol", MESSAGES["protocol"]
    if json_depth_exceeds(msg, max_depth):
        return None, "depth", MESSAGES["depth"].format(n=max_depth)
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        return None, "protocol", MESSAGES["protocol"]
    return msg, "", ""


def same(text: str) -> None:
    got, want = parse_message(text, DEPTH), parse_with_json_only(text, DEPTH)
    # repr: NaN is not equal to itself, and an int must not come back as a float
    assert repr(got) == repr(want), text[:200]


SCALARS = st.one_of(
    st.none(), st.booleans(), st.text(max_size=12),
    st.integers(-(2**80), 2**80),  # beyond 64 bits orjson reads a float, json an int
    st.floats(allow_nan=True, allow_infinity=True),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=4),
    max_leaves=20,
)
FIELDS = st.dictionaries(
    st.sampled_from(["type", "action", "event", "seq", "text", "x"]) | st.text(max_size=5),
    VALUES, max_size=5)


@settings(max_examples=400, deadline=None)
@given(FIELDS, st.booleans())
@example({"type": "action", "action": "play:AH", "event": 2**70}, True)
@example({"type": "ping", "seq": float("nan")}, True)
@example({"type": "chat", "text": "\ud800"}, False)  # a lone surrogate: json reads it
def test_a_message_is_read_as_json_reads_it(fields: dict[str, Any], ascii_only: bool) -> None:
    same(json.dumps(fields, ensure_ascii=ascii_only))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_any_text_is_read_or_refused_as_json_would(text: str) -> None:
    same(text)


@given(st.integers(1, 3000), st.sampled_from(["[", "{\"a\":"]))
@settings(max_examples=60, deadline=None)
def test_deep_nesting_is_refused_as_json_would(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    same(opener * depth + "1" + closer * depth)
    same('{"type":"x","deep":' + opener * depth + "1" + closer * depth + "}")


def test_the_protocol_page_is_made_from_the_message_types():
    """docs/protocol.md is what scripts/protocol_doc.py makes from stammtisch/server/protocol.py."""
    from pathlib import Path

    from stammtisch.server.protocol import render_protocol

    page = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
    assert page.read_text(encoding="utf-8") == render_protocol(), \
        "docs/protocol.md is out of date: run python scripts/protocol_doc.py"


def test_a_parsed_action_has_the_fields_of_the_action_type():
    from stammtisch.server.protocol import Action, ActionIn, parse_client

    assert set(ActionIn.__slots__) | {"type"} == set(Action.model_fields)
    parsed = parse_client('{"type":"action","action":"play:HA","event":3,"seq":"x"}', 32)
    assert isinstance(parsed, ActionIn)
    typed = Action(action=parsed.action, event=parsed.event, seq=parsed.seq)
    assert typed.model_dump() == {"type": "action", "action": "play:HA", "event": 3, "seq": "x"}


# ---------------------------------------------------------------------------------------------
# The server's limits against the real server process (uvicorn with the guarded protocol):
# bodies are limited while they stream, and slow or piled-up connections cannot starve honest
# clients.


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


@pytest.mark.parametrize("path", ["/api/replay", "/api/replay/analysis"])
def test_a_chunked_record_file_is_refused_while_it_streams_past_its_own_limit(server, path):
    """A record file may be larger than other bodies (``max_record_body``), not endless."""
    from stammtisch.server.limits import ServerLimits

    with open_socket(server) as s:
        s.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"4000\r\n" + b" " * 0x4000 + b"\r\n"
        answer = b""
        for _ in range(ServerLimits().max_record_body // 0x4000 + 2):  # past the limit; never ends
            try:
                s.sendall(chunk)
            except OSError:  # the server answered and closed while this was still sending
                break
        while not answer.endswith(b"}"):
            got = s.recv(4096)
            assert got, answer
            answer += got
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    refused = json.loads(answer.partition(b"\r\n\r\n")[2])
    assert refused["rule"] == "size" and refused["max_bytes"] == ServerLimits().max_record_body


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

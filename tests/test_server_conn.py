"""A connection's outgoing queue (``tables.Conn``): order, the close marker, a slow client."""

from __future__ import annotations

import asyncio

import pytest

from stammtisch.server.tables import QUEUE_LIMIT, Conn, Outbox


class Socket:
    def __init__(self, stalled: bool = False):
        self.sent: list[str] = []
        self.closed = 0
        self.stalled = asyncio.Event() if stalled else None

    async def send_text(self, text: str) -> None:
        if self.stalled is not None:
            await self.stalled.wait()  # a client that does not read
        self.sent.append(text)

    async def close(self) -> None:
        self.closed += 1


def test_messages_go_out_in_order_then_stop_closes_once() -> None:
    async def main() -> Socket:
        sock = Socket()
        conn = Conn(0, sock.send_text, sock.close)
        sender = asyncio.create_task(conn.sender())
        conn.send("a")
        await asyncio.sleep(0)
        for text in ("b", "c", "d"):  # queued while the sender is busy or idle
            conn.send(text)
        await asyncio.sleep(0)
        conn.send("e")
        conn.stop()
        conn.send("after stop")  # dropped: the connection is closed
        await asyncio.wait_for(sender, 5)
        return sock

    sock = asyncio.run(main())
    assert sock.sent == ["a", "b", "c", "d", "e"]
    assert sock.closed == 1


def test_a_client_that_does_not_read_is_dropped_when_its_queue_is_full() -> None:
    async def main() -> tuple[Socket, Conn, bool]:
        sock = Socket(stalled=True)
        conn = Conn(None, sock.send_text, sock.close)
        sender = asyncio.create_task(conn.sender())
        conn.send("first")
        await asyncio.sleep(0)  # the sender hangs in send_text("first")
        for i in range(QUEUE_LIMIT):
            conn.send(f"m{i}")
        closed_before_overflow = conn.closed
        conn.send("overflow")
        assert sock.stalled is not None
        sock.stalled.set()
        await asyncio.wait_for(sender, 5)
        return sock, conn, closed_before_overflow

    sock, conn, closed_before_overflow = asyncio.run(main())
    assert not closed_before_overflow
    assert conn.closed
    # the queued messages were dropped with the client: only the one under way went out
    assert sock.sent == ["first"]
    assert sock.closed == 1


def test_a_sender_whose_socket_fails_closes_the_connection() -> None:
    async def main() -> tuple[Conn, int]:
        closes = [0]

        async def broken(text: str) -> None:
            raise ConnectionError("gone")

        async def close() -> None:
            closes[0] += 1

        conn = Conn(1, broken, close)
        sender = asyncio.create_task(conn.sender())
        conn.send("x")
        await asyncio.wait_for(sender, 5)
        return conn, closes[0]

    conn, closes = asyncio.run(main())
    assert conn.closed and closes == 1


class DirectSocket(Socket):
    """A socket with a synchronous fast path that can refuse (writing paused) or fail."""

    def __init__(self) -> None:
        super().__init__()
        self.paused = False
        self.broken = False
        self.direct: list[str] = []

    def write_now(self, text: str) -> bool:
        if self.broken:
            raise ConnectionError("gone")
        if self.paused:
            return False
        self.direct.append(text)
        self.sent.append(text)
        return True


def test_the_fast_path_writes_at_once_and_keeps_the_order_behind_a_paused_socket() -> None:
    async def main() -> DirectSocket:
        sock = DirectSocket()
        conn = Conn(0, sock.send_text, sock.close, write_now=sock.write_now)
        sender = asyncio.create_task(conn.sender())
        conn.send("a")
        assert sock.sent == ["a"]  # written at once, no task step needed
        sock.paused = True
        conn.send("b")  # the socket declines: queued
        sock.paused = False
        conn.send("c")  # the socket would take it, but "b" waits before it: queued behind
        assert sock.direct == ["a"]
        await asyncio.sleep(0.01)
        conn.send("d")  # the queue is empty again: at once
        assert sock.direct == ["a", "d"]
        conn.stop()
        await asyncio.wait_for(sender, 5)
        return sock

    sock = asyncio.run(main())
    assert sock.sent == ["a", "b", "c", "d"]
    assert sock.closed == 1


def test_a_fast_path_that_fails_hands_the_message_to_the_sender() -> None:
    async def main() -> DirectSocket:
        sock = DirectSocket()
        conn = Conn(0, sock.send_text, sock.close, write_now=sock.write_now)
        sender = asyncio.create_task(conn.sender())
        sock.broken = True
        conn.send("x")  # the sender's own send decides (here it works)
        await asyncio.sleep(0.01)
        conn.stop()
        await asyncio.wait_for(sender, 5)
        return sock

    sock = asyncio.run(main())
    assert sock.sent == ["x"] and sock.direct == []


def test_the_outbox_writes_a_turns_messages_at_its_end_in_order() -> None:
    """With an outbox, fast-path messages wait for the end of the event loop's turn: none is
    written while the turn runs, all of them right after it, each socket's in order."""
    async def main() -> tuple[DirectSocket, DirectSocket, list[list[str]]]:
        outbox = Outbox()
        a, b = DirectSocket(), DirectSocket()
        ca = Conn(0, a.send_text, a.close, write_now=a.write_now, outbox=outbox)
        cb = Conn(1, b.send_text, b.close, write_now=b.write_now, outbox=outbox)
        senders = [asyncio.create_task(c.sender()) for c in (ca, cb)]
        ca.send("a1")
        cb.send(b"b1")
        ca.send("a2")
        during = [list(a.direct), list(b.direct)]  # nothing yet: the turn is not over
        await asyncio.sleep(0)  # the turn ends: the outbox writes
        assert a.direct == ["a1", "a2"] and b.direct == [b"b1"]
        ca.send("a3")  # a later turn: held again, then written
        await asyncio.sleep(0)
        for c in (ca, cb):
            c.stop()
        await asyncio.wait_for(asyncio.gather(*senders), 5)
        return a, b, during

    a, b, during = asyncio.run(main())
    assert during == [[], []]
    assert a.sent == ["a1", "a2", "a3"] and b.sent == [b"b1"]
    assert a.closed == 1 and b.closed == 1


def test_held_messages_behind_a_socket_that_pauses_go_through_the_sender_in_order() -> None:
    async def main() -> DirectSocket:
        outbox = Outbox()
        sock = DirectSocket()
        conn = Conn(0, sock.send_text, sock.close, write_now=sock.write_now, outbox=outbox)
        sender = asyncio.create_task(conn.sender())
        conn.send("a")
        conn.send("b")
        sock.paused = True  # the client stopped reading before the turn ended
        await asyncio.sleep(0)
        sock.paused = False
        conn.send("c")  # "a" and "b" wait in the queue: "c" goes behind them
        await asyncio.sleep(0.01)
        conn.stop()
        await asyncio.wait_for(sender, 5)
        return sock

    sock = asyncio.run(main())
    assert sock.sent == ["a", "b", "c"] and sock.direct == []


def test_stop_sends_the_held_messages_before_closing() -> None:
    """A message sent right before ``stop`` (the "revoked" error, say) is not lost in the
    outbox: it goes out, then the socket closes."""
    async def main() -> DirectSocket:
        outbox = Outbox()
        sock = DirectSocket()
        conn = Conn(0, sock.send_text, sock.close, write_now=sock.write_now, outbox=outbox)
        sender = asyncio.create_task(conn.sender())
        conn.send(b"last words")
        conn.stop()
        conn.send("after the stop")  # refused: the connection is closed
        await asyncio.wait_for(sender, 5)
        await asyncio.sleep(0)  # the outbox's turn end finds nothing left to write
        return sock

    sock = asyncio.run(main())
    assert sock.sent == ["last words"] and sock.closed == 1  # the sender decodes bytes


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_frame_header_and_payload_are_the_frame_websockets_writes(size: int) -> None:
    """``app.frame_header`` and the payload (the fast path's framing without extensions) are
    byte for byte what the websockets protocol writes for the same text, and a client parses
    it back."""
    from websockets.frames import Frame, Opcode
    from websockets.protocol import Protocol, Side, State
    from websockets.streams import StreamReader

    from stammtisch.server.app import frame_header

    text = ("Ä€x" * size)[:size]  # multi-byte UTF-8 too
    payload = text.encode()
    server = Protocol(Side.SERVER, state=State.OPEN)
    server.send_text(payload)
    assert frame_header(len(payload)) + payload == b"".join(server.data_to_send())
    reader = StreamReader()
    reader.feed_data(frame_header(len(payload)) + payload)
    reader.feed_eof()
    parser = Frame.parse(reader.read_exact, mask=False)
    try:
        next(parser)
    except StopIteration as done:
        frame = done.value
    assert frame.opcode is Opcode.TEXT and frame.fin and frame.data.decode() == text

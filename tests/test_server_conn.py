"""A connection's outgoing queue (``tables.Conn``): order, the close marker, a slow client."""

from __future__ import annotations

import asyncio

from stammtisch.server.tables import QUEUE_LIMIT, Conn


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

"""The order of a table's events as its clients see them: an event is committed before any client
sees it; every client sees every event once and in order, whichever way the server takes an
action and writes its frames; a connection's outgoing messages keep their order up to its
close; a table's lock is granted in the order ``asyncio.Lock`` grants it. The sections follow,
each headed by what it checks; the first:

Actions taken at once from the socket's read (``Connection.take_now``) under a real uvicorn
server: clients see exactly what the queued way (the receive loop's task,
``Connection.handle``) shows them, refusals included, in the order the
messages came; nothing is shown before it is committed; a failed commit is retried, then
refused with the state unchanged; the rate limit counts each message once."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from server_helpers import greeted, post_json, uvicorn_thread
from websockets.sync.client import ClientConnection, connect

from stammtisch.server import live_table as live_table_module
from stammtisch.server.app import create_app
from stammtisch.server.event_store import EventStore
from stammtisch.server.fanout import QUEUE_LIMIT, Conn, Outbox
from stammtisch.server.limits import ServerLimits
from stammtisch.server.locks import TableLock
from stammtisch.server.routes.live import Connection
from stammtisch.server.storage import Storage
from stammtisch.server.transport import framed_websocket_protocol
from stammtisch.table import Table


@contextmanager
def _server(tmp_path, limits: ServerLimits | None = None) -> Iterator[tuple[int, Any]]:
    db = tmp_path / "t.sqlite"
    limits = limits or ServerLimits()
    app = create_app(f"sqlite:///{db}", bot_delay=0, deal_pause=1000, limits=limits)
    with uvicorn_thread(app, limits) as port:
        yield port, db


class Counted:
    """How many actions went each way (``Connection.action``: taken at once from the
    socket's read, or from the receive loop's queue)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = self.queued = 0
        action = Connection.action

        def counted(connection: Any, msg: Any, from_read: bool) -> Any:
            if from_read:
                self.now += 1
            else:
                self.queued += 1
            return action(connection, msg, from_read)

        monkeypatch.setattr(Connection, "action", counted)


def _never_take_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server without the hook: every message goes the queued way."""
    monkeypatch.setattr(framed_websocket_protocol(), "take_now",
                        property(lambda self: None, lambda self, value: None), raising=False)


def _recv(sock: ClientConnection) -> dict:
    """The next message, but for presence (who is connected: it comes when it comes)."""
    while True:
        m = json.loads(sock.recv(timeout=10))
        if m["type"] != "presence":
            return m


def _until_state(sock: ClientConnection, event: int, log: list[dict]) -> dict:
    while True:
        m = _recv(sock)
        log.append(m)
        if m["type"] == "state" and m["event"] >= event:
            return m


def _table(port: int) -> tuple[dict, list[ClientConnection], list[list[dict]]]:
    t = post_json(port, "/api/tables", {"ruleset": "tippen/grupp-1975", "options": {"players": 3},
                                    "seats": [{"name": n} for n in ("A", "B", "C")]})
    socks = [greeted(connect(f"ws://127.0.0.1:{port}/ws/{t['id']}", open_timeout=5), s["token"])
             for s in t["seats"]]
    logs: list[list[dict]] = [[] for _ in socks]
    for i, sock in enumerate(socks):
        _until_state(sock, 0, logs[i])
    post_json(port, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
    for i, sock in enumerate(socks):
        _until_state(sock, 1, logs[i])
    return t, socks, logs


def _same_deals(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every server deals the same decks, and seat 0 deals first."""
    rng = random.Random(5)
    decks = [rng.sample(range(32), 32) for _ in range(8)]
    dealt = {"n": 0}

    def deck(table: Any) -> list[int]:
        dealt["n"] += 1
        return list(decks[(dealt["n"] - 1) % len(decks)])

    monkeypatch.setattr(Table, "secret_deck", deck)
    monkeypatch.setattr(live_table_module, "draw_first_dealer", lambda rules, rng: 0)


def _shape(m: dict) -> tuple:
    """What a message says, but for the table's ids and times."""
    if m["type"] == "state":
        return ("state", m["event"], json.dumps(m["view"], sort_keys=True))
    return (m["type"], m.get("rule"), m.get("seq"), m.get("message"))


def _script(port: int) -> list[list[tuple]]:
    """One deal played by the three clients, with every kind of refusal on the way: an
    illegal action, a stale event, a malformed message, an action out of turn, a spectator's
    action, and bursts of several messages in one write (the first taken at once, the rest
    queued behind it). Returns what each client received, in order, as ``_shape``s."""
    t, socks, logs = _table(port)
    seat_sock = dict(enumerate(socks))
    event = 1
    view = logs[0][-1]["view"]
    for step in range(40):
        if view["terminal"]:
            break
        turn = view["current_player"]
        me = seat_sock[turn]
        other = seat_sock[(turn + 1) % 3]
        legal = [m for m in logs[turn] if m["type"] == "state"][-1]["view"]["legal_actions"]
        kind = step % 5
        if kind == 1:  # an illegal action
            me.send(json.dumps({"type": "action", "action": "play:ZZ", "event": event, "seq": step}))
            logs[turn].append(_recv(me))
            assert logs[turn][-1]["rule"] == "notation"
        elif kind == 2:  # a stale answer: refused, and the state shown again
            me.send(json.dumps({"type": "action", "action": legal[0], "event": event - 1, "seq": step}))
            _until_state(me, event, logs[turn])
        elif kind == 3:  # out of turn, and a malformed event
            other.send(json.dumps({"type": "action", "action": legal[0], "event": event, "seq": step}))
            other.send(json.dumps({"type": "action", "action": legal[0], "event": "x", "seq": step}))
            for _ in range(2):
                logs[(turn + 1) % 3].append(_recv(other))
        # the action, then at once a second one for the same event and a ping: the first is
        # taken, the second refused as stale (it answers the event just played), then a pong
        me.send(json.dumps({"type": "action", "action": legal[0], "event": event, "seq": step}))
        if kind == 4:
            me.send(json.dumps({"type": "action", "action": legal[-1], "event": event, "seq": -step}))
            me.send(json.dumps({"type": "ping", "seq": step}))
        event += 1
        for i, sock in enumerate(socks):
            view = _until_state(sock, event, logs[i])["view"]
        if kind == 4:
            m = _recv(me)
            logs[turn].append(m)
            assert (m["type"], m.get("rule")) == ("error", "stale"), m
            _until_state(me, event, logs[turn])
            logs[turn].append(_recv(me))
            assert logs[turn][-1]["type"] == "pong"
    for sock in socks:
        sock.close()
    return [[_shape(m) for m in log] for log in logs]


def test_an_action_gets_the_same_answers_whichever_way_the_server_takes_it(tmp_path, monkeypatch) -> None:
    _same_deals(monkeypatch)
    counted = Counted(monkeypatch)
    (tmp_path / "now").mkdir()
    (tmp_path / "queued").mkdir()
    with _server(tmp_path / "now") as (port, _):
        at_once = _script(port)
    assert counted.now > 5 and counted.queued > 0  # the bursts' second actions wait
    taken = counted.now + counted.queued
    _never_take_now(monkeypatch)
    _same_deals(monkeypatch)
    counted.now = counted.queued = 0
    with _server(tmp_path / "queued") as (port, _):
        queued = _script(port)
    assert counted.now == 0 and counted.queued == taken
    assert at_once == queued


def test_an_event_is_committed_before_any_client_sees_it(tmp_path, monkeypatch) -> None:
    counted = Counted(monkeypatch)
    with _server(tmp_path) as (port, db):
        t, socks, logs = _table(port)
        event = 1
        for _ in range(6):
            view = [m for m in logs[0] if m["type"] == "state"][-1]["view"]
            if view["terminal"]:
                break
            turn = view["current_player"]
            legal = [m for m in logs[turn] if m["type"] == "state"][-1]["view"]["legal_actions"]
            socks[turn].send(json.dumps({"type": "action", "action": legal[0], "event": event}))
            event += 1
            for i, sock in enumerate(socks):
                _until_state(sock, event, logs[i])
                with sqlite3.connect(db) as con:  # what a restart would find
                    stored = con.execute("SELECT COUNT(*) FROM st_moves").fetchone()[0]
                assert stored >= event - 1, (stored, event)
        for sock in socks:
            sock.close()
    assert counted.now >= 5


def test_a_failed_commit_is_retried_then_refused_with_the_state_unchanged(tmp_path, monkeypatch) -> None:
    counted = Counted(monkeypatch)
    fail = {"left": 0}
    commit_rows = EventStore._commit_rows

    async def flaky(store: Any, rows: Any, fence: Any = None) -> Any:
        if fail["left"] > 0 and any(w[0] != "deal" for w in rows):
            fail["left"] -= 1
            # the database's own error: what the event store retries (any other is a fault)
            raise sqlite3.OperationalError("database is locked (a test)")
        return await commit_rows(store, rows, fence)

    monkeypatch.setattr(EventStore, "_commit_rows", flaky)
    with _server(tmp_path, ServerLimits(commit_deadline=0.5)) as (port, db):
        t, socks, logs = _table(port)
        view = logs[0][-1]["view"]
        turn = view["current_player"]
        legal = [m for m in logs[turn] if m["type"] == "state"][-1]["view"]["legal_actions"]
        # one failure: retried, committed, shown
        fail["left"] = 1
        socks[turn].send(json.dumps({"type": "action", "action": legal[0], "event": 1, "seq": 1}))
        for i, sock in enumerate(socks):
            _until_state(sock, 2, logs[i])
        assert fail["left"] == 0
        view = logs[0][-1]["view"]
        turn = view["current_player"]
        legal = [m for m in logs[turn] if m["type"] == "state"][-1]["view"]["legal_actions"]
        # failures past the deadline: refused, nothing shown, the table as it was
        fail["left"] = 10**6
        socks[turn].send(json.dumps({"type": "action", "action": legal[0], "event": 2, "seq": 2}))
        m = _recv(socks[turn])
        assert (m["type"], m["rule"], m["seq"]) == ("error", "storage", 2), m
        fail["left"] = 0
        socks[turn].send(json.dumps({"type": "action", "action": legal[0], "event": 2, "seq": 3}))
        for i, sock in enumerate(socks):
            m = _until_state(sock, 3, logs[i])
            assert m["event"] == 3  # event 3 is the retried action: none came between
        for sock in socks:
            sock.close()
    assert counted.now >= 3


def test_the_rate_limit_counts_each_message_once(tmp_path, monkeypatch) -> None:
    counted = Counted(monkeypatch)
    limits = ServerLimits(seat_rate=0.001, seat_burst=5)
    with _server(tmp_path, limits) as (port, _):
        t, socks, logs = _table(port)
        turn = logs[0][-1]["view"]["current_player"]
        legal = [m for m in logs[turn] if m["type"] == "state"][-1]["view"]["legal_actions"]
        burst = [json.dumps({"type": "action", "action": legal[0], "event": 1, "seq": k})
                 for k in range(8)]
        for text in burst:
            socks[turn].send(text)
        answers = []
        while len([a for a in answers if a["type"] == "error"]) < 7:
            answers.append(_recv(socks[turn]))
        errors = [(a["rule"], a.get("seq")) for a in answers if a["type"] == "error"]
        # 5 tokens: the action (taken at once), then 4 stale answers; 3 refused by the rate
        assert [e for e in errors if e[0] == "stale"] == [("stale", k) for k in range(1, 5)]
        assert [e[0] for e in errors if e[0] != "stale"] == ["rate"] * 3
        for sock in socks:
            sock.close()
    assert counted.now >= 1  # the stale answers that came after the commit are taken at once too


def _masked_text_frame(text: str) -> bytes:
    """A client's text frame (RFC 6455 §5.2) with a zero mask."""
    data = text.encode()
    head = bytes([0x81, 0x80 | len(data)]) if len(data) < 126 else \
        bytes([0x81, 0x80 | 126]) + len(data).to_bytes(2, "big")
    return head + b"\0\0\0\0" + data


@pytest.mark.parametrize("one_write", [True, False])
def test_an_action_behind_a_queued_message_waits_its_turn(tmp_path, monkeypatch, one_write) -> None:
    """A chat line, then an action: the chat goes the queued way (slow to store here), so the
    action must wait behind it, though the table's lock is free: when both come in one read
    (the chat still queued), and when the action comes while the chat is being handled."""
    counted = Counted(monkeypatch)
    add_chat = Storage.add_chat

    def slow_chat(storage: Any, *args: Any) -> Any:
        time.sleep(0.3)
        return add_chat(storage, *args)

    monkeypatch.setattr(Storage, "add_chat", slow_chat)
    with _server(tmp_path) as (port, _):
        t, socks, logs = _table(port)
        turn = logs[0][-1]["view"]["current_player"]
        legal = [m for m in logs[turn] if m["type"] == "state"][-1]["view"]["legal_actions"]
        chat = _masked_text_frame(json.dumps({"type": "chat", "text": "first"}))
        action = _masked_text_frame(json.dumps({"type": "action", "action": legal[0], "event": 1}))
        if one_write:
            socks[turn].socket.sendall(chat + action)
        else:
            socks[turn].socket.sendall(chat)
            time.sleep(0.1)
            socks[turn].socket.sendall(action)
        got = [_recv(socks[turn]) for _ in range(2)]
        assert [m["type"] for m in got] == ["chat", "state"], got
        assert got[1]["event"] == 2
        for sock in socks:
            sock.close()
    assert counted.now == 0 and counted.queued == 1


# ---------------------------------------------------------------------------------------------
# The table's messages under a real uvicorn server: with its websockets-sansio protocol the
# frames are written straight to the socket (``transport.direct_writer``), with any other server they
# take the queued path, and either way every client sees every event, in order, once.


@pytest.mark.parametrize("ws,deflate,direct", [("websockets-sansio", False, True),
                                               ("websockets-sansio", True, True),
                                               ("websockets", False, False)])
def test_every_client_sees_every_event_in_order(tmp_path, ws, deflate, direct):
    app = create_app(f"sqlite:///{tmp_path / 't.sqlite'}", bot_delay=0, deal_pause=0.05,
                     limits=ServerLimits(pace_min=0))
    with uvicorn_thread(app, ws=ws, deflate=deflate) as port:
        t = post_json(port, "/api/tables", {"ruleset": "tippen/grupp-1975", "options": {"players": 3},
                                            "seats": [{"name": n} for n in ("A", "B", "C")], "pace": 0.05})
        socks = [greeted(connect(f"ws://127.0.0.1:{port}/ws/{t['id']}", open_timeout=5), s["token"])
                 for s in t["seats"]]
        seen: list[list[int]] = [[] for _ in socks]
        latest: list[dict] = [{} for _ in socks]

        def pump(i: int, event: int) -> None:
            while not seen[i] or seen[i][-1] < event:
                m = json.loads(socks[i].recv(timeout=10))
                assert m["type"] != "error", m
                if m["type"] == "state":
                    seen[i].append(m["event"])
                    latest[i] = m

        for i in range(3):
            pump(i, 0)
        post_json(port, f"/api/tables/{t['id']}/start", {"token": t["admin_token"]})
        rng = random.Random(3)
        event = 0
        while event < 60:  # some deals, with the next deals dealt by the server
            view = latest[0]["view"]
            if view is not None and not view["terminal"]:
                actor = view["current_player"]
                pump(actor, event)
                legal = latest[actor]["view"]["legal_actions"]
                socks[actor].send(json.dumps({"type": "action", "event": event,
                                              "action": rng.choice(legal)}))
            for i in range(3):
                pump(i, event + 1)
            event = latest[0]["event"]
        live = app.state.manager.get(t["id"])
        assert len(live.fanout.conns) == 3
        assert all((c._write_now is not None) is direct for c in live.fanout.conns)
        for s in socks:
            s.close()
        for i in range(3):  # every event, in order, once: no gap, no repeat
            assert seen[i] == list(range(seen[i][0], seen[i][-1] + 1)), seen[i]
            assert seen[i][-1] >= 60


# ---------------------------------------------------------------------------------------------
# A connection's outgoing queue (``fanout.Conn``): order, the close marker, a slow client.


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


def test_a_message_written_at_once_keeps_its_order_behind_a_paused_socket() -> None:
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


def test_a_message_whose_direct_write_fails_goes_out_through_the_sender() -> None:
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
    """``transport.frame_header`` and the payload (the fast path's framing without extensions) are
    byte for byte what the websockets protocol writes for the same text, and a client parses
    it back."""
    from websockets.frames import Frame, Opcode
    from websockets.protocol import Protocol, Side, State
    from websockets.streams import StreamReader

    from stammtisch.server.transport import frame_header

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


# ---------------------------------------------------------------------------------------------
# locks.TableLock, a table's lock: it must grant the lock as ``asyncio.Lock`` does, to the
# same waiter in the same loop turn, for every sequence of acquires, releases and cancellations
# (cancelled waiters included), and ``try_acquire`` takes it exactly when ``acquire`` would
# without waiting.


OPS = st.lists(st.one_of(
    st.tuples(st.just("acquire"), st.just(0)),
    st.tuples(st.just("release"), st.just(0)),  # by the task holding it, if any
    st.tuples(st.just("cancel"), st.integers(0, 9)),  # the k-th acquirer started so far
    st.tuples(st.just("step"), st.integers(1, 3)),  # let the loop run a few turns
), max_size=40)


def run_ops(make: Any, ops: list[tuple[str, int]]) -> dict[str, Any]:
    """What a lock made by ``make()`` does under ``ops``: the order in which the acquirers got
    it, which were cancelled, and which still wait at the end."""

    async def main() -> dict[str, Any]:
        lock = make()
        order: list[int] = []
        holding: list[int] = []
        tasks: list[asyncio.Task[None]] = []

        async def acquirer(k: int) -> None:
            await lock.acquire()
            order.append(k)
            holding.append(k)

        for op, arg in ops:
            if op == "acquire":
                tasks.append(asyncio.ensure_future(acquirer(len(tasks))))
            elif op == "release" and holding:
                holding.pop()
                lock.release()
            elif op == "cancel" and arg < len(tasks):
                tasks[arg].cancel()
            elif op == "step":
                for _ in range(arg):
                    await asyncio.sleep(0)
        for _ in range(5):
            await asyncio.sleep(0)
        ends = []
        for task in tasks:
            if task.done():
                ends.append("cancelled" if task.cancelled() else "got it")
            else:
                task.cancel()
                ends.append("waiting")
        return {"order": order, "ends": ends, "held": holding}

    return asyncio.run(main())


@settings(max_examples=400, deadline=None)
@given(OPS)
# a waiter cancelled while it waits: the lock goes to the next one
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("step", 1), ("cancel", 1),
          ("release", 0), ("step", 3)])
# a waiter cancelled after the release woke it, before it ran: the lock goes on
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("step", 1), ("release", 0),
          ("cancel", 1), ("step", 3)])
# a waiter cancelled, then a release: the cancelled waiter's task passes the lock on, a
# turn later, and a waiter woken but cancelled before it ran passes it on again
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("step", 1), ("cancel", 1),
          ("release", 0), ("step", 1), ("release", 0), ("step", 3)])
@example([("acquire", 0), ("acquire", 0), ("acquire", 0), ("acquire", 0), ("release", 0),
          ("step", 1), ("cancel", 2), ("release", 0), ("step", 1), ("cancel", 3)])
def test_table_lock_grants_as_asyncio_lock_does(ops: list[tuple[str, int]]) -> None:
    assert run_ops(TableLock, ops) == run_ops(asyncio.Lock, ops)


def test_try_acquire_takes_a_free_lock_only() -> None:
    async def main() -> None:
        lock = TableLock()
        assert lock.try_acquire() and lock.locked()
        assert not lock.try_acquire() and not lock.available()
        waiter = asyncio.ensure_future(lock.acquire())
        await asyncio.sleep(0)
        lock.release()  # the waiter is woken: it has the lock coming, nobody jumps the queue
        assert not lock.available() and not lock.try_acquire()
        await waiter
        assert lock.locked()
        lock.release()
        assert not lock.locked() and lock.try_acquire()
        lock.release()
        async with lock:
            assert not lock.try_acquire()
        assert lock.try_acquire()

    asyncio.run(main())


def test_release_of_a_free_lock_is_an_error() -> None:
    with pytest.raises(RuntimeError):
        TableLock().release()

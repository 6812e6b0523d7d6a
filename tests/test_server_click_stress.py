"""Many clients clicking at once under a real uvicorn server: every click is answered, every
accepted click moves its table on by exactly one event, and no table stalls.

Each seat has several devices (sockets of the same seat link), and at every turn every device
of every seat clicks at the same moment: the seat on turn's devices each a legal action, the
others out of turn; at the end of a deal every device presses Next. One click per turn is
taken (at once from the socket's read, when the table's lock is free), the others wait for the
lock and are refused (stale, or not their turn); a chat line and a ping on the way keep the
queued path busy beside them. A click that neither moved the table on nor was refused is a
lost click."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from server_helpers import hello, post_json, roomy_limits, uvicorn_thread
from websockets.asyncio.client import ClientConnection, connect

from stammtisch.server.app import create_app
from stammtisch.server.routes.live import Connection

TABLES = 3
DEVICES = 3  # sockets per seat
EVENTS = 45  # events each table plays through (over a deal's end and the next deal)
WAIT = 30.0  # seconds: only a hang reaches it


class Device:
    """One socket of a seat, with what it was told."""

    def __init__(self, sock: ClientConnection, seat: int) -> None:
        self.sock = sock
        self.seat = seat
        self.state: dict[str, Any] = {}
        self.table: dict[str, Any] = {}
        self.errors: dict[Any, str] = {}  # seq → rule
        self.pongs: set[Any] = set()

    async def read_until(self, done: Any) -> None:
        async with asyncio.timeout(WAIT):
            while not done():
                m = json.loads(await self.sock.recv())
                if m["type"] == "state":
                    self.state = m
                    self.table = m.get("table", self.table)
                elif m["type"] == "error":
                    assert m.get("seq") is not None, m
                    self.errors[m["seq"]] = m["rule"]
                elif m["type"] == "pong":
                    self.pongs.add(m["seq"])

    async def at_event(self, event: int) -> None:
        await self.read_until(lambda: self.state.get("event", -1) >= event)

    async def answered(self, seq: Any) -> None:
        """Every message sent before the ping ``seq`` was handled (a socket's messages are
        handled in order), so each refusal of them is here."""
        await self.sock.send(json.dumps({"type": "ping", "seq": seq}))
        await self.read_until(lambda: seq in self.pongs)


async def play_table(port: int, table_no: int) -> dict[str, int]:
    t = post_json(port, "/api/tables", {"ruleset": "tippen/grupp-1975", "options": {"players": 3},
                                        "seats": [{"name": n} for n in ("A", "B", "C")]})
    devices = []
    for seat, s in enumerate(t["seats"]):
        for _ in range(DEVICES):
            sock = await connect(f"ws://127.0.0.1:{port}/ws/{t['id']}", open_timeout=WAIT)
            await sock.send(hello(s["token"]))
            devices.append(Device(sock, seat))
    await asyncio.gather(*(d.at_event(0) for d in devices))
    await asyncio.to_thread(post_json, port, f"/api/tables/{t['id']}/start",
                            {"token": t["admin_token"]})
    await asyncio.gather(*(d.at_event(1) for d in devices))
    seqs = itertools.count(table_no * 1_000_000)
    counts = {"clicks": 0, "accepted": 0, "refused": 0, "nexts": 0}
    event = 1
    while event < EVENTS:
        view = devices[0].state["view"]
        clicks: list[tuple[Device, Any]] = []
        sends = []
        for d in devices:
            seq = next(seqs)
            if view["terminal"]:
                text = {"type": "next", "seq": seq}
            else:
                legal = d.state["view"]["legal_actions"] or ["play:ZZ"]
                text = {"type": "action", "event": event, "seq": seq,
                        "action": legal[seq % len(legal)]}
                clicks.append((d, seq))
            sends.append(d.sock.send(json.dumps(text)))
            if seq % 4 == 0:  # the queued path beside the clicks
                sends.append(d.sock.send(json.dumps({"type": "chat", "text": f"line {seq}"})))
        await asyncio.gather(*sends)
        if view["terminal"]:
            counts["nexts"] += 1
        # every click moves the table on by one event at most: the first one taken
        await asyncio.gather(*(d.at_event(event + 1) for d in devices))
        await asyncio.gather(*(d.answered(next(seqs)) for d in devices))
        after = {d.state["event"] for d in devices}
        assert after == {event + 1}, (event, after)
        if clicks:
            refused = [(d, seq) for d, seq in clicks if seq in d.errors]
            accepted = [(d, seq) for d, seq in clicks if seq not in d.errors]
            assert len(accepted) == 1, (event, [(d.seat, s) for d, s in accepted])
            assert accepted[0][0].seat == view["current_player"]
            rules = {d.errors[seq] for d, seq in refused}
            assert rules <= {"stale", "not your turn"}, rules
            counts["clicks"] += len(clicks)
            counts["accepted"] += 1
            counts["refused"] += len(refused)
        event += 1
    for d in devices:
        await d.sock.close()
    return counts


def test_every_accepted_click_moves_the_table_on(tmp_path, monkeypatch) -> None:
    ways = {True: 0, False: 0}  # actions taken from the socket's read, from the queue
    action = Connection.action

    def counted(connection: Any, msg: Any, from_read: bool) -> Any:
        ways[from_read] += 1
        return action(connection, msg, from_read)

    monkeypatch.setattr(Connection, "action", counted)
    limits = roomy_limits(seat_rate=1000.0, seat_burst=1000.0, ws_per_address=1000,
                          conns_per_table=40, chat_rate=1000.0, chat_burst=1000.0)
    app = create_app(f"sqlite:///{tmp_path / 't.sqlite'}", bot_delay=0, deal_pause=1000,
                     limits=limits)

    async def main() -> list[dict[str, int]]:
        return await asyncio.gather(*(play_table(port, i) for i in range(TABLES)))

    with uvicorn_thread(app, limits) as port:
        results = asyncio.run(main())
        tables = list(app.state.manager.tables.values())
    for counts in results:
        assert counts["accepted"] >= EVENTS - 10 and counts["nexts"] >= 1, counts
        assert counts["clicks"] == counts["accepted"] + counts["refused"]
    assert ways[True] > TABLES * 10 and ways[False] > TABLES * 10, ways  # both ways, at once
    assert len(tables) == TABLES
    for live in tables:
        assert live.lock.available()  # nothing left holding a table

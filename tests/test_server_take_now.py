"""Actions taken at once from the socket's read (``ws_endpoint``'s ``take_now`` and
``LiveTable.act_now``) under a real uvicorn server: clients see exactly what the queued way
(the receive loop's task, ``LiveTable.act``) shows them, refusals included, in the order the
messages came; nothing is shown before it is committed; a failed commit is retried, then
refused with the state unchanged; the rate limit counts each message once."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from server_helpers import post_json, uvicorn_thread
from websockets.sync.client import ClientConnection, connect

from stammtisch.server import tables as tables_module
from stammtisch.server.app import create_app
from stammtisch.server.limits import ServerLimits
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
    """How many actions went each way (``act_now``: taken at once; ``act``: queued)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = self.queued = 0
        act_now, act = tables_module.LiveTable.act_now, tables_module.LiveTable.act

        def counted_now(table: Any, *args: Any) -> None:
            self.now += 1
            return act_now(table, *args)

        async def counted(table: Any, *args: Any) -> None:
            self.queued += 1
            return await act(table, *args)

        monkeypatch.setattr(tables_module.LiveTable, "act_now", counted_now)
        monkeypatch.setattr(tables_module.LiveTable, "act", counted)


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
    socks = [connect(f"ws://127.0.0.1:{port}/ws/{t['id']}?token={s['token']}", open_timeout=5)
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
    monkeypatch.setattr(tables_module, "draw_first_dealer", lambda rules, rng: 0)


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


def test_actions_taken_at_once_answer_as_the_queued_way(tmp_path, monkeypatch) -> None:
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
    commit_rows = tables_module.TableManager._commit_rows

    async def flaky(manager: Any, rows: Any) -> Any:
        if fail["left"] > 0 and any(w[0] != "deal" for w in rows):
            fail["left"] -= 1
            raise RuntimeError("the database is locked (a test)")
        return await commit_rows(manager, rows)

    monkeypatch.setattr(tables_module.TableManager, "_commit_rows", flaky)
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
    add_chat = tables_module.Storage.add_chat

    def slow_chat(storage: Any, *args: Any) -> Any:
        time.sleep(0.3)
        return add_chat(storage, *args)

    monkeypatch.setattr(tables_module.Storage, "add_chat", slow_chat)
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

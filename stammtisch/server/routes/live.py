"""``WS /ws/{id}?token=…``: a seat's, the spectator's or the admin's live connection to a
table (the messages: ``protocol.py``, docs/protocol.md)."""

from __future__ import annotations

import asyncio
import logging

from fastapi import APIRouter, WebSocket

from ...games.base import IllegalAction
from ..fanout import Conn, dumps
from ..limits import count_down
from ..live_table import LiveTable
from ..protocol import ActionIn, Back, BadMessage, Chat, Hint, Next, Ping, Rematch, parse_client
from ..records import auth_stored
from ..refusals import MESSAGES, STORAGE_ERRORS, Refusal
from ..table_social import SOCIAL_MESSAGES
from ..transport import ServerSocket
from .deps import TABLE_ID, Server, client_address, get_server

log = logging.getLogger("stammtisch.server")

router = APIRouter()


@router.websocket("/ws/{table_id}")
async def ws_endpoint(ws: WebSocket, table_id: str) -> None:
    server = get_server(ws)
    manager, limits = server.manager, server.limits
    await ws.accept()
    token = ws.query_params.get("token", "")
    address = client_address(ws)

    async def refuse(rule: str, message: str, code: int) -> None:
        manager.count_refusal(rule)
        await ws.send_text(dumps({"type": "error", "rule": rule, "message": message}))
        await ws.close(code)

    live = manager.get(table_id)
    if live is None:
        link = await rematch_link_of_archived(server, table_id, token)
        if link == "taken":
            await refuse("rematch taken", SOCIAL_MESSAGES["rematch taken"], 4410)
            return
        if link is not None:  # an archived table's seat link leads to its rematch seat
            await ws.send_text(dumps({"type": "rematch", "table": link[0], "link": link[1]}))
            await ws.close(1000)
            return
        await refuse("unknown table", f"no table {table_id[:40]!r}", 4404)
        return
    who = live.auth(token)
    if who is None:
        await refuse("token", "this link is not valid for this table", 4401)
        return
    if live.fanout.open_count() >= limits.conns_per_table:
        await refuse("full", MESSAGES["full"].format(n=limits.conns_per_table), 4429)
        return
    if manager.ws_per_address.get(address, 0) >= limits.ws_per_address:
        await refuse("address", MESSAGES["address"].format(n=limits.ws_per_address), 4429)
        return
    manager.ws_per_address[address] = manager.ws_per_address.get(address, 0) + 1
    role, seat = who
    close_code = [1000]
    sock = ServerSocket(ws)

    async def close() -> None:
        await ws.close(close_code[0])

    conn = Conn(seat if role == "seat" else None, sock.send_text, close,
                live.bucket_for(seat if role == "seat" else None), address,
                write_now=sock.write_now, outbox=manager.outbox)
    sender = asyncio.create_task(conn.sender())
    conn.send(dumps({"type": "hello", "role": role,
                     "seat": conn.seat, "table": table_id}))

    receive = sock.receive
    waiting = [False]  # the receive loop waits for the next message, nothing else

    def take_now(text: str) -> bool:
        """A client's message taken at once, from the socket's read, where the receive
        loop would take it only after a task wake-up: an action when the loop waits for
        messages (none queued, none being handled) and the table's lock is free
        (``LiveTable.act_now``). It passes every check the loop and ``handle`` make, in
        their order; anything else (False) goes the queued way, as if this were not
        here. Refusals are sent as ``handle`` sends them."""
        if not waiting[0] or conn.closed or conn.seat is None or not live.lock.available() or \
                len(text) > limits.max_message or not conn.bucket.ready():
            return False
        try:
            msg = parse_client(text, limits.max_json_depth)
        except BadMessage as e:
            if e.message_type != "action":
                return False
            conn.allow()  # a token is there (``ready``)
            refused(server, live, conn, e, e.seq)
            return True
        if not isinstance(msg, ActionIn):
            return False
        conn.allow()  # a token is there (``ready``)
        seq = msg.seq
        try:
            live.act_now(conn.seat, msg.action, msg.event, lambda e: refused(server, live, conn, e, seq))
        except Exception as e:
            refused(server, live, conn, e, seq)
            if isinstance(e, (IllegalAction, Refusal)) and e.rule == "stale":
                live.send_state(conn)  # the lock was free: no commit is under way
        return True

    async def receive_loop() -> None:
        """The client's messages until it leaves. It runs as a task of its own: every
        message and every awaited commit resumes the code waiting for it, and here that is
        a few frames deep instead of under the ~20 frames of the ASGI middleware stack."""
        sock.set_take_now(take_now)
        while not conn.closed:
            waiting[0] = True
            msg = await receive()
            waiting[0] = False
            if msg["type"] == "websocket.disconnect":
                break
            text = msg.get("text")
            if text is None:
                data = msg.get("bytes") or b""
                text = data.decode("utf-8", "replace")
            if len(text) > limits.max_message:
                conn.send(dumps({"type": "error", "rule": "size",
                                 "message": f"messages are limited to {limits.max_message} bytes"}))
                close_code[0] = 1009
                break
            if not conn.allow():
                if conn.strikes > 40:
                    conn.send(dumps({"type": "error", "rule": "rate",
                                     "message": "too many messages; disconnected"}))
                    close_code[0] = 1008
                    break
                conn.send(dumps({"type": "error", "rule": "rate",
                                 "message": "too many messages; slow down"}))
                continue
            await handle(server, live, conn, text)

    try:
        await live.attach(conn)
        await asyncio.get_running_loop().create_task(receive_loop())
    except Exception as e:  # a broken socket; nothing to tell the client
        if not isinstance(e, (RuntimeError, ConnectionError)):
            log.debug("websocket ended: %r", e)
    finally:
        waiting[0] = False
        sock.set_take_now(None)
        count_down(manager.ws_per_address, address)
        live.detach(conn)
        conn.stop()
        await sender


async def rematch_link_of_archived(server: Server, table_id: str,
                                   token: str) -> tuple[str, str] | str | None:
    """A seat of an archived table that had a rematch: a new link to the same seat of the
    rematch table, if that table is still live and no link of this seat has led on to it
    yet (an old link leads to the new table once, and never takes the seat from the
    player who sits there)."""
    if not TABLE_ID.fullmatch(table_id) or not token:
        return None
    manager, storage = server.manager, server.storage
    async with server.archived_claims:  # two uses of one old link at once: one goes on
        st = await manager.store.read(storage.load_table, table_id)
        if st is None or st.social.rematch_id is None:
            return None
        who = auth_stored(st, token)
        new = manager.get(st.social.rematch_id)
        if who is None or who[0] != "seat" or who[1] is None or new is None:
            return None
        seat = who[1]
        if seat in st.social.rematch_claimed:
            return "taken"
        if seat >= len(new.seats) or new.seats[seat].bot or seat in new.open_seats:
            return None
        try:
            await manager.store.commit(storage.set_rematch_claimed, table_id,
                                 sorted({*st.social.rematch_claimed, seat}))
            fresh = await manager.reissue(new, seat)
        except STORAGE_ERRORS:
            log.warning("table %s: no link to its rematch for seat %d", table_id, seat,
                        exc_info=True)
            return None
        return new.id, f"/t/{new.id}#{fresh}"


def refused(server: Server, live: LiveTable, conn: Conn, e: BaseException,
            seq: int | str | None) -> None:
    """Tell the client why its message was refused (a refusal or the engine's IllegalAction:
    the rule it meets; any other error: a fault of the server's, logged)."""
    if isinstance(e, (IllegalAction, Refusal)):
        server.manager.count_refusal(e.rule)
        conn.send(dumps({"type": "error", "rule": e.rule, "message": e.message, "seq": seq}))
        return
    log.error("table %s: error handling a message", live.id, exc_info=e)
    conn.send(dumps({"type": "error", "rule": "server",
                     "message": "internal server error", "seq": seq}))


async def handle(server: Server, live: LiveTable, conn: Conn, text: str) -> None:
    try:
        msg = parse_client(text, server.limits.max_json_depth, spectator=conn.seat is None)
    except BadMessage as e:
        if e.message_type is None:  # not a message at all: no seq to answer with
            log.info("table %s: refused a message from %s (%s)", live.id, conn.address, e.rule)
            conn.send(dumps({"type": "error", "rule": e.rule, "message": e.message}))
        else:
            refused(server, live, conn, e, e.seq)
        return
    seq = msg.seq
    try:
        if isinstance(msg, Ping):
            conn.send('{"type":"pong"}' if seq is None else dumps({"type": "pong", "seq": seq}))
            return
        if isinstance(msg, Chat):
            await live.say(conn.seat, msg.text)
            return
        seat = conn.seat
        assert seat is not None  # parse_client refused a spectator's
        if isinstance(msg, ActionIn):
            await live.act(seat, msg.action, msg.event)
        elif isinstance(msg, Next):
            await live.next_deal(early=True, seat=seat)
        elif isinstance(msg, Hint):
            answer = await live.hint(seat, conn.address)
            conn.send(dumps(answer if seq is None else {**answer, "seq": seq}))
        elif isinstance(msg, Back):
            await live.back(seat)
        elif isinstance(msg, Rematch):
            await live.rematch(seat, msg.agree, conn.address)
        else:
            await live.start()
    except Exception as e:
        refused(server, live, conn, e, seq)
        if isinstance(e, (IllegalAction, Refusal)) and e.rule == "stale":  # show the current state again
            async with live.lock:
                live.send_state(conn)

"""``WS /ws/{id}``: a seat's, the spectator's or the admin's live connection to a table, its
token in the first message (the messages and close codes: ``protocol.py``, docs/protocol.md)."""

from __future__ import annotations

import asyncio
import logging
from typing import NamedTuple

import orjson
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from ...games.base import IllegalAction
from ..fanout import Conn, dumpb
from ..limits import ServerLimits
from ..live_table import LiveTable
from ..protocol import (
    ActionIn,
    Back,
    BadMessage,
    Chat,
    ChatLines,
    CloseCode,
    Error,
    Hello,
    Hint,
    HintGiven,
    Next,
    Ping,
    Pong,
    Rematch,
    RematchSeat,
    SpectatorChat,
    State,
    parse_client,
    parse_hello,
)
from ..records import auth_tokens
from ..refusals import MESSAGES, Refusal, RefusalKind, StorageUnavailable
from ..storage import StoredTable
from ..table_core import SERVER_FAULT, TRY_AGAIN
from ..table_social import SOCIAL_MESSAGES
from ..transport import ServerSocket
from .deps import TABLE_ID, Server, client_address, get_server
from .records import REPLAY_ERRORS, may_read

log = logging.getLogger("stammtisch.server")

router = APIRouter()


async def refuse(server: Server, ws: WebSocket, rule: str, message: str, code: int) -> None:
    """A connection refused before it reaches a table: the refusal, then the close."""
    server.manager.count_refusal(rule)
    await ws.send_text(Error.encode(rule, message))
    await ws.close(code)


@router.websocket("/ws/{table_id}")
async def ws_endpoint(ws: WebSocket, table_id: str) -> None:
    """Admit a client (its hello, its token, the limits), then serve it (``Connection``)."""
    server = get_server(ws)
    manager, limits = server.manager, server.limits
    await ws.accept()
    address = client_address(ws)
    sock = ServerSocket(ws)
    if "token" in ws.query_params:
        await refuse(server, ws, "token in url", MESSAGES["token in url"], CloseCode.BAD_REQUEST)
        return
    if manager.draining:
        await refuse(server, ws, "restarting", MESSAGES["restarting"], CloseCode.RESTARTING)
        return
    try:
        token = await first_hello(sock, limits)
    except BadMessage as e:
        await refuse(server, ws, e.rule, e.message, CloseCode.BAD_REQUEST)
        return
    except TimeoutError:
        await refuse(server, ws, "hello late", MESSAGES["hello late"], CloseCode.HELLO_LATE)
        return
    if token is None:  # the client left before it said hello
        return
    if manager.draining:  # it began while the client said hello: its tables are stopped
        await refuse(server, ws, "restarting", MESSAGES["restarting"], CloseCode.RESTARTING)
        return
    live = manager.get(table_id)
    if live is None:
        answer = await old_link(server, table_id, token, address)
        if isinstance(answer, Refused):
            await refuse(server, ws, *answer)
            return
        if isinstance(answer, Ended):  # read-only: what the table was when it ended
            for text in answer.messages:
                await ws.send_text(text)
            await ws.close(CloseCode.GONE)
            return
        # an archived table's seat link leads to its rematch seat
        await ws.send_text(RematchSeat.encode(answer[0], answer[1]))
        await ws.close(CloseCode.NORMAL)
        return
    who = live.auth(token)
    if who is None:
        await refuse(server, ws, "token", "this link is not valid for this table", CloseCode.BAD_TOKEN)
        return
    if live.fanout.open_count() >= limits.conns_per_table:
        await refuse(server, ws, "full", MESSAGES["full"].format(n=limits.conns_per_table),
                     CloseCode.TOO_MANY)
        return
    if manager.ws_per_address.get(address, 0) >= limits.ws_per_address:
        await refuse(server, ws, "address", MESSAGES["address"].format(n=limits.ws_per_address),
                     CloseCode.TOO_MANY)
        return
    manager.socket_opened(address)
    await Connection(server, live, ws, sock, who, address).serve()


class Connection:
    """One admitted client of a live table: its messages, in the order they came, until it
    leaves. A message is taken where it is first seen: an action from the socket's read
    (``take_now``) when nothing is ahead of it, else from the receive loop's queue
    (``receive``, ``handle``); either way an action goes through ``action``, the one place
    that knows which of the two it came from."""

    __slots__ = ("conn", "limits", "live", "role", "server", "sock", "waiting", "ws")

    def __init__(self, server: Server, live: LiveTable, ws: WebSocket, sock: ServerSocket,
                 who: tuple[str, int | None], address: str) -> None:
        self.server = server
        self.live = live
        self.limits = server.limits
        self.ws = ws
        self.sock = sock
        self.role, seat = who
        seat = seat if self.role == "seat" else None
        self.conn = Conn(seat, sock.send_text, self._close, live.bucket_for(seat), address,
                         write_now=sock.write_now, outbox=server.manager.outbox)
        self.waiting = False  # the receive loop waits for the next message, nothing else

    async def _close(self) -> None:
        await self.ws.close(self.conn.close_code)

    async def serve(self) -> None:
        conn, live = self.conn, self.live
        sender = asyncio.create_task(conn.sender())
        conn.send(Hello.encode(self.role, conn.seat, live.id))
        try:
            if await live.attach(conn):  # else the table was dropped here meanwhile: come again
                # a task of its own: every message and every awaited commit resumes the code
                # waiting for it, and here that is a few frames deep instead of under the ~20
                # frames of the ASGI middleware stack
                await asyncio.get_running_loop().create_task(self.receive())
        except (RuntimeError, OSError, WebSocketDisconnect) as e:  # a broken socket: nobody to tell
            if not isinstance(e, (RuntimeError, ConnectionError)):
                log.debug("websocket ended: %r", e)
        finally:
            self.waiting = False
            self.sock.set_take_now(None)
            self.server.manager.socket_closed(conn.address)
            live.detach(conn)
            conn.stop()
            await sender

    async def receive(self) -> None:
        """The client's messages from the receive loop's queue until it leaves."""
        conn, limits, receive = self.conn, self.limits, self.sock.receive
        self.sock.set_take_now(self.take_now)
        while not conn.closed:
            self.waiting = True
            msg = await receive()
            self.waiting = False
            if msg["type"] == "websocket.disconnect":
                break
            text = msg.get("text")
            if text is None:
                data = msg.get("bytes") or b""
                text = data.decode("utf-8", "replace")
            if len(text) > limits.max_message:
                conn.send(Error.encode("size", f"messages are limited to {limits.max_message} bytes"))
                conn.close_code = CloseCode.TOO_BIG
                break
            if not conn.allow():
                if conn.strikes > 40:
                    conn.send(Error.encode("rate", "too many messages; disconnected"))
                    conn.close_code = CloseCode.POLICY
                    break
                conn.send(Error.encode("rate", "too many messages; slow down"))
                continue
            await self.handle(text)

    def take_now(self, text: str) -> bool:
        """The socket's read offers a message (nothing queued before it): an action is taken
        at once when the receive loop waits for messages (none being handled) and the
        table's lock is free; it passes every check ``receive`` and ``handle`` make, in their
        order. Anything else (False) goes the queued way, as if this were not here. Why:
        through the receive loop's task an action costs a wake-up, then a chain of coroutines
        suspended over the group commit and resumed (server CPU per action,
        bench/server_side_by_side.py)."""
        conn, live, limits = self.conn, self.live, self.limits
        if not self.waiting or conn.closed or conn.seat is None or not live.lock.available() or \
                len(text) > limits.max_message or not conn.bucket.ready():
            return False
        try:
            msg = parse_client(text, limits.max_json_depth)
        except BadMessage as e:
            if e.message_type != "action":
                return False
            conn.allow()  # a token is there (``ready``)
            self.refused(e, e.seq)
            return True
        if not isinstance(msg, ActionIn):
            return False
        conn.allow()  # a token is there (``ready``)
        live.lock.try_acquire()  # free (``available``), with nothing awaited since
        self.action(msg, from_read=True)
        return True

    async def handle(self, text: str) -> None:
        """A message from the receive loop's queue (its rate counted)."""
        conn, live = self.conn, self.live
        try:
            msg = parse_client(text, self.limits.max_json_depth, spectator=conn.seat is None)
        except BadMessage as e:
            if e.message_type is None:  # not a message at all: no seq to answer with
                log.info("table %s: refused a message from %s (%s)", live.id, conn.address, e.rule)
                conn.send(Error.encode(e.rule, e.message))
            else:
                self.refused(e, e.seq)
            return
        seq = msg.seq
        if isinstance(msg, ActionIn):
            await live.lock.acquire()
            outcome = self.action(msg, from_read=False)
            if outcome is not None:
                await outcome
            return
        try:
            if isinstance(msg, Ping):
                conn.send(Pong.encode(seq))
                return
            if isinstance(msg, Chat):
                await live.social.say(conn.seat, msg.text, msg.name, conn.address,
                                      admin=self.role == "admin")
                return
            if isinstance(msg, SpectatorChat):
                if conn.seat is None and self.role != "admin":
                    raise Refusal("spectator chat switch", SOCIAL_MESSAGES["spectator chat switch"],
                                  RefusalKind.FORBIDDEN)
                await live.social.switch_spectator_chat(msg.on)
                return
            seat = conn.seat
            assert seat is not None  # parse_client refused a spectator's
            if isinstance(msg, Next):
                await live.next_deal(early=True, seat=seat)
            elif isinstance(msg, Hint):
                event, advice = await live.social.hint(seat, conn.address)
                conn.send(HintGiven.encode(event, advice["action"], advice["why"], seq))
            elif isinstance(msg, Back):
                await live.back(seat)
            elif isinstance(msg, Rematch):
                await live.social.rematch(seat, msg.agree, conn.address)
            else:
                await live.start()
        except Exception as e:  # every error is answered: a refusal as such, a fault as one
            self.refused(e, seq)

    def action(self, msg: ActionIn, from_read: bool) -> asyncio.Future[None] | None:
        """A seat's action, the table's lock taken for it (released here, once the action is
        over): ``LiveTable.take``. Its refusal, before the commit or after it, is answered
        here; a stale one with the current state again (the lock still held: no commit is
        under way). ``from_read``: it came from the socket's read, and nobody waits for its
        outcome; else the future returned ends when the action is over (the receive loop
        takes the next message then)."""
        live, conn, seq = self.live, self.conn, msg.seq
        seat = conn.seat
        assert seat is not None  # parse_client refused a spectator's
        outcome: asyncio.Future[None] | None = None
        if not from_read:
            outcome = asyncio.get_running_loop().create_future()

        def then(error: BaseException | None) -> None:
            try:
                if error is not None:
                    self.refused(error, seq)
                    if isinstance(error, (IllegalAction, Refusal)) and error.rule == "stale":
                        live.fanout.send_state(conn)
            finally:
                live.lock.release()
                if outcome is not None and not outcome.done():
                    outcome.set_result(None)

        try:
            live.take(seat, msg.action, msg.event, then)
        except Exception as e:  # every error is answered: a refusal as such, a fault as one
            then(e)
        return outcome

    def refused(self, e: BaseException, seq: int | str | None) -> None:
        """Tell the client why its message was refused (a refusal or the engine's
        IllegalAction: the rule it meets; any other error: a fault of the server's, logged)."""
        if isinstance(e, (IllegalAction, Refusal)):
            self.server.manager.count_refusal(e.rule)
            self.conn.send(Error.answer(e.rule, e.message, seq))
            return
        log.error("table %s: error handling a message", self.live.id, exc_info=e)
        self.conn.send(Error.answer("server", SERVER_FAULT, seq))


async def first_hello(sock: ServerSocket, limits: ServerLimits) -> str | None:
    """The token of the connection's first message (``protocol.ClientHello``), which must come
    within ``header_timeout`` seconds (``TimeoutError``; ``BadMessage`` when it is not a
    hello); None when the client left first."""
    async with asyncio.timeout(limits.header_timeout):
        msg = await sock.receive()
    if msg["type"] == "websocket.disconnect":
        return None
    text = msg.get("text")
    if text is None:
        text = (msg.get("bytes") or b"").decode("utf-8", "replace")
    if len(text) > limits.max_message:
        raise BadMessage("hello", MESSAGES["hello"])
    return parse_hello(text, limits.max_json_depth)


class Refused(NamedTuple):
    """A connection refused: the rule, the message and the close code."""

    rule: str
    message: str
    code: int


class Ended(NamedTuple):
    """An archived table, read-only: the messages its link gets before the socket closes."""

    messages: list[str]


def ended_messages(server: Server, st: StoredTable, who: tuple[str, int | None]) -> list[str]:
    """What the link ``who`` of archived table ``st`` is shown: ``hello``, one ``state`` (the
    table as it ended: its info with the score sheet and ``archived``, the last deal's view as
    this link saw it if that deal was finished, else none: the cards of an unfinished deal stay
    hidden), and the chat. Built from the record as the live table is (off the event loop)."""
    table = LiveTable.from_stored(server.manager, st)
    table.closed = True
    seat = who[1] if who[0] == "seat" else None
    state = table.table.state
    view = table.view(seat) if state is not None and state.is_terminal() else None
    info = {**table.info(), "archived": st.archived_reason}
    out = [Hello.encode(who[0], seat, st.id),
           State.encode(table.events, dumpb(view), dumpb(info)).decode()]
    if table.social.chat:
        out.append(ChatLines.encode(table.social.chat, history=True))
    return out


async def old_link(server: Server, table_id: str, token: str,
                   address: str) -> tuple[str, str] | Refused | Ended:
    """What the link of a table that is not live leads to. A seat of an archived table that
    had a rematch: a new link to the same seat of the rematch table (its id and the link), if
    that table is still live and no link of this seat has led on to it yet (an old link leads
    to the new table once, and never takes the seat from the player who sits there). Any other
    link of an archived table opens it read-only (``Ended``; built once, then kept). Else the
    refusal: the table is unknown, or cannot be read now (not final)."""
    unknown = Refused("unknown table", f"no table {table_id[:40]!r}", CloseCode.UNKNOWN_TABLE)
    if not TABLE_ID.fullmatch(table_id):
        return unknown
    manager, storage = server.manager, server.storage
    unavailable = Refused("storage", TRY_AGAIN, CloseCode.RESTARTING)
    try:  # who the token is, from the digests alone (one small query)
        tokens = await manager.store.read(storage.table_tokens, table_id)
    except StorageUnavailable:
        log.warning("table %s: its tokens could not be read", table_id, exc_info=True)
        return unavailable
    who = auth_tokens(tokens, token) if tokens is not None else None
    if who is None:  # a stranger learns nothing of a table
        return unknown
    kept = server.records.get(("ended", table_id, who))
    if kept is not None:
        return Ended(orjson.loads(kept))
    try:
        may_read(server, address)
    except Refusal as e:
        return Refused(e.rule, e.message, CloseCode.TOO_MANY)
    async with server.archived_claims:  # two uses of one old link at once: one goes on
        try:
            st = await manager.store.read(storage.load_table, table_id)
        except StorageUnavailable:
            log.warning("table %s could not be read", table_id, exc_info=True)
            return unavailable
        if st is None:
            return unknown
        if st.archived_reason is None:  # live, but not here (now): not final
            return unavailable
        new = manager.get(st.social.rematch_id) if st.social.rematch_id is not None else None
        seat = who[1]
        if who[0] != "seat" or seat is None or new is None or seat in st.social.rematch_claimed \
                or seat >= len(new.seats) or new.seats[seat].bot or seat in new.open_seats:
            try:
                messages = await server.off_loop(ended_messages, server, st, who)
            except REPLAY_ERRORS:
                log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
                return unavailable
            server.records.put(("ended", table_id, who), orjson.dumps(messages))
            return Ended(messages)
        try:
            await manager.store.commit(storage.set_rematch_claimed, table_id,
                                 sorted({*st.social.rematch_claimed, seat}))
            fresh = await manager.reissue(new, seat)
        except StorageUnavailable:
            log.warning("table %s: no link to its rematch for seat %d", table_id, seat,
                        exc_info=True)
            return unavailable
        return new.id, f"/t/{new.id}#{fresh}"

"""The relay between the processes of a service (peers.py): a request or WebSocket about a
table that another process holds goes there, and its answers come back.

**One link per pair of processes.** A process that relays opens one WebSocket to the holder
(``LINK_PATH``, with the service's secret in ``PEER_HEADER``) and carries every relayed
request and socket over it as a stream of its own: frames ``"<stream> <kind><payload>"``
(``Kind``). So a holder sees one connection from each other process, however many clients
come through it: the caps per address of its transport (``conns_per_address``) count the
clients where they connect, and the relayed clients never use up the relaying process's
address there. At the holder each stream is served by the whole app, as a connection of its
own, with the client's address that the relaying process saw (a stream's scope is marked
``RELAYED``: no header can make one, and only a process that knows the secret can open a
link), so the limits per address of the app (``ws_per_address``, table creation, rates)
count the client.

A stream is an ASGI connection and nothing is parsed by hand: an HTTP request's body and
answer go as ASGI messages (``Expect: 100-continue`` is answered by the relaying process's
server, and a ``HEAD`` answer has its ``content-length`` and no body, as the app gives it).

**A table goes where its clients are.** With a proxy that routes by table (nginx's
consistent ``hash`` on the table id in the path: docs/deployment.md), every client of a
table reaches one process, but the table is made wherever its ``POST /api/tables`` went.
When a WebSocket reaches a process that does not hold its table, that process first asks
the holder to hand the table over (``HANDOFF``): a holder with no client of the table at all
moves the lease to the asking process in one statement, after the event it is committing,
and forgets the table; the asking process loads it. A holder with clients keeps the table and
the socket is relayed. So in steady state nothing is relayed, and with clients spread over
the processes (``least_conn``) a table is held where its first client came.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sqlalchemy import text
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket
from websockets.exceptions import WebSocketException

from .peers import LEASE_SECONDS, NOW, PEER_HEADER, TABLE_PATH, Peers
from .refusals import STORAGE_ERRORS
from .transport import direct_writer, lift_message_limit

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

log = logging.getLogger("stammtisch.server")

#: What a link to another process fails with: its socket, its time, its WebSocket protocol.
LINK_ERRORS: tuple[type[BaseException], ...] = (OSError, asyncio.TimeoutError, EOFError,
                                                 WebSocketException)

#: The path of a link between two processes (a WebSocket; only with the service's secret).
LINK_PATH = "/_stammtisch/link"
#: The scope key of a connection relayed over a link (set by the holder's link, never by a
#: client's header).
RELAYED = "stammtisch.relayed"
#: Request headers not passed on: per connection, or what the relaying server answers itself
#: (``expect``: uvicorn sends the client its ``100 Continue``).
HOP_HEADERS = {b"connection", b"keep-alive", b"transfer-encoding", b"upgrade", b"expect", b"te",
               b"sec-websocket-key", b"sec-websocket-version", b"sec-websocket-extensions",
               b"sec-websocket-accept"}
#: Answer headers not passed on (the relaying server sets its own).
ANSWER_HOP_HEADERS = {b"connection", b"keep-alive", b"transfer-encoding"}
#: WebSocket close code for "this process cannot reach the table now; connect again".
CLOSE_AGAIN = 1012
#: The largest piece of a request body in one frame (the holder takes 64 KiB frames).
BODY_PIECE = 32_768
#: Messages from the holder a relayed client may have waiting (it does not read) before the
#: relaying process closes it (it reconnects and gets the whole view).
BACKLOG_MAX = 1_000
#: Seconds a relayed request may take; a hand-off may take.
ANSWER_SECONDS = 60.0
HANDOFF_SECONDS = 5.0


class Kind:
    """What a link's frame carries (one character after the stream's number)."""
    OPEN = "o"  # front → holder: a new stream (JSON: the client's request)
    MESSAGE = "m"  # either way: a WebSocket message (text or binary frame)
    CLOSE = "c"  # either way: the WebSocket closed, with its code
    ACCEPT = "a"  # holder → front: the app accepted the WebSocket
    BODY = "b"  # front → holder: a piece of the request body, more to come
    BODY_END = "e"  # front → holder: the request body's last piece
    START = "s"  # holder → front: the answer's status and headers (JSON)
    ANSWER = "r"  # holder → front: a piece of the answer's body, more to come
    ANSWER_END = "R"  # holder → front: the answer's last piece
    HANDOFF = "h"  # front → holder: hand this table over to me (JSON: table, process id)
    HANDED = "H"  # holder → front: "moved" (the lease is the asker's now), "kept", "not here"
    LOST = "x"  # (never sent) the link went away


def frame(sid: int, kind: str, payload: str = "") -> str:
    return f"{sid} {kind}{payload}"


def frame_bytes(sid: int, kind: str, payload: bytes) -> bytes:
    return b"%d %s%s" % (sid, kind.encode(), payload)


def parse(data: str | bytes) -> tuple[int, str, str | bytes]:
    """A frame's stream, kind and payload."""
    if isinstance(data, str):
        space = data.index(" ")
        return int(data[:space]), data[space + 1], data[space + 2:]
    space = data.index(b" ")
    return int(data[:space]), chr(data[space + 1]), data[space + 2:]


def _latin(pairs: list[tuple[bytes, bytes]]) -> list[list[str]]:
    return [[k.decode("latin-1"), v.decode("latin-1")] for k, v in pairs]


def _unlatin(pairs: list[list[str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in pairs]


# --- the holder's side: streams served by the app ------------------------------------------

class HeldStream:
    """A relayed connection at the holder: its ASGI ``receive`` and ``send`` over the link.
    ``direct_write`` and ``take_now`` are the fast paths the app uses on uvicorn's own
    sockets (transport.py), here over the link."""

    def __init__(self, link: HolderLink, sid: int, kind: str):
        self.link = link
        self.sid = sid
        self.kind = kind
        self.inbox: deque[Message] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.gone = False  # the client (or the link) went away
        self.gone_code = 1006
        self.done = False  # the app closed the socket or sent its whole answer
        self.started = False
        self.take_now: Callable[[str], bool] | None = None
        if kind == "websocket":
            self.inbox.append({"type": "websocket.connect"})

    def put(self, message: Message) -> None:
        self.inbox.append(message)
        self.put_nothing()

    def lose(self, code: int = 1006) -> None:
        """The client (or the link) went away: once what came before is read, ``receive``
        says so, as often as it is asked."""
        self.gone = True
        self.gone_code = code
        self.put_nothing()

    def put_nothing(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def receive(self) -> Message:
        while not self.inbox:
            if self.gone:
                return ({"type": "websocket.disconnect", "code": self.gone_code}
                        if self.kind == "websocket" else {"type": "http.disconnect"})
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        return self.inbox.popleft()

    async def send(self, message: Message) -> None:
        if self.done or self.link.closed:
            return
        kind, link, sid = message["type"], self.link, self.sid
        if kind == "websocket.send":
            data = message.get("text")
            if data is not None:
                await link.send(frame(sid, Kind.MESSAGE, data))
            else:
                await link.send(frame_bytes(sid, Kind.MESSAGE, message.get("bytes") or b""))
        elif kind == "http.response.body":
            more = bool(message.get("more_body"))
            self.done = not more
            await link.send(frame_bytes(sid, Kind.ANSWER if more else Kind.ANSWER_END,
                                        message.get("body", b"")))
        elif kind == "websocket.accept":
            await link.send(frame(sid, Kind.ACCEPT))
        elif kind == "websocket.close":
            self.done = True
            await link.send(frame(sid, Kind.CLOSE, str(message.get("code", 1000))))
        elif kind == "http.response.start":
            self.started = True
            await link.send(frame(sid, Kind.START, json.dumps(
                {"status": message["status"], "headers": _latin(list(message.get("headers", [])))})))

    def direct_write(self, data: str | bytes) -> bool:
        """A WebSocket message written to the link at once (False: the link cannot take it
        now, or this stream is over; the app queues it then)."""
        if self.done or self.gone or self.link.write_now is None:
            return False
        if isinstance(data, str):
            return self.link.write_now(frame(self.sid, Kind.MESSAGE, data))
        return self.link.write_now(frame_bytes(self.sid, Kind.MESSAGE, data))

    async def finish(self) -> None:
        """The app returned: the front hears the end even if the app said nothing more."""
        if self.done:
            return
        if self.kind == "websocket":
            await self.send({"type": "websocket.close", "code": 1011})
        else:
            if not self.started:
                await self.send({"type": "http.response.start", "status": 500, "headers": []})
            await self.send({"type": "http.response.body", "body": b""})


class HolderLink:
    """The holder's end of a link: the relaying process's streams, each served by the app."""

    def __init__(self, relay: PeerRelay, scope: Scope, receive: Receive, send: Send):
        self.relay = relay
        self.scope = scope
        self.receive = receive
        self._send = send
        self.streams: dict[int, HeldStream] = {}
        self.closed = False
        self.write_now: Callable[[str | bytes], bool] | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def send(self, data: str | bytes) -> None:
        if isinstance(data, str):
            await self._send({"type": "websocket.send", "text": data})
        else:
            await self._send({"type": "websocket.send", "bytes": data})

    async def serve(self) -> None:
        if (await self.receive())["type"] != "websocket.connect":
            return
        await self._send({"type": "websocket.accept"})
        lift_message_limit(self._send)  # a link carries every stream's largest frames
        self.write_now = direct_writer(WebSocket(self.scope, self.receive, self._send))
        try:
            while True:
                message = await self.receive()
                if message["type"] != "websocket.receive":
                    return
                data = message.get("text")
                self.arrive(*parse(data if data is not None else message.get("bytes") or b""))
        finally:
            self.closed = True
            for stream in self.streams.values():
                stream.lose()

    def arrive(self, sid: int, kind: str, payload: str | bytes) -> None:
        if kind == Kind.OPEN:
            self.open(sid, json.loads(payload))
            return
        if kind == Kind.HANDOFF:
            self._spawn(self.hand_off(sid, json.loads(payload)))
            return
        stream = self.streams.get(sid)
        if stream is None:
            return
        if kind == Kind.MESSAGE:
            if isinstance(payload, str):
                take = stream.take_now
                if take is not None and not stream.inbox and take(payload):
                    return
                stream.put({"type": "websocket.receive", "text": payload})
            else:
                stream.put({"type": "websocket.receive", "bytes": payload})
        elif kind in (Kind.BODY, Kind.BODY_END):
            body = payload if isinstance(payload, bytes) else payload.encode()
            stream.put({"type": "http.request", "body": body, "more_body": kind == Kind.BODY})
        elif kind == Kind.CLOSE:
            stream.lose(int(payload or 1000))

    def open(self, sid: int, request: dict[str, Any]) -> None:
        kind = request["type"]
        outer = self.scope
        scope: dict[str, Any] = {
            "type": kind, "asgi": outer.get("asgi", {"version": "3.0"}), "http_version": "1.1",
            "scheme": request["scheme"], "server": outer.get("server"),
            "client": (request["client"], 0), "root_path": outer.get("root_path", ""),
            "path": request["path"], "raw_path": request["raw_path"].encode("latin-1"),
            "query_string": request["query"].encode("latin-1"),
            "headers": _unlatin(request["headers"]), "state": dict(outer.get("state", {})),
            RELAYED: True}
        if kind == "http":
            scope["method"] = request["method"]
        else:
            scope["subprotocols"] = request.get("subprotocols", [])
        stream = self.streams[sid] = HeldStream(self, sid, kind)
        app: ASGIApp = outer["app"]  # the whole app, its middleware too: as any connection

        async def serve() -> None:
            try:
                await app(scope, stream.receive, stream.send)
            except Exception:  # the whole app serves it, so any fault of the server's: logged
                log.exception("a relayed %s on %s failed", kind, request["path"])
            finally:
                self.streams.pop(sid, None)
                await stream.finish()

        self._spawn(serve())

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def hand_off(self, sid: int, ask: dict[str, Any]) -> None:
        answer = await self.relay.give_up(str(ask["table"]), str(ask["process"]))
        if not self.closed:
            await self.send(frame(sid, Kind.HANDED, answer))


# --- the relaying process's side ------------------------------------------------------------

class FrontStream:
    """A relayed connection at the process its client reached: what the holder sent, in
    order. A WebSocket message goes to the client at once when nothing waits before it
    (``write_now``, the client's socket's fast path)."""

    def __init__(self, link: PeerLink, sid: int):
        self.link = link
        self.sid = sid
        self.incoming: deque[tuple[str, str | bytes]] = deque()
        self.waiter: asyncio.Future[None] | None = None
        self.write_now: Callable[[str | bytes], bool] | None = None
        self.busy = False  # the pump is sending a message to the client

    def arrive(self, kind: str, payload: str | bytes) -> None:
        if kind == Kind.MESSAGE and self.write_now is not None and not self.incoming \
                and not self.busy:
            try:
                if self.write_now(payload):
                    return
            except Exception:  # the client is going away: the pump finds out
                pass
        self.incoming.append((kind, payload))
        if len(self.incoming) > BACKLOG_MAX:  # a client that does not read: it reconnects
            self.incoming.clear()
            self.incoming.append((Kind.CLOSE, str(CLOSE_AGAIN)))
            self.link.forget_stream(self.sid, tell=True)
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next(self) -> tuple[str, str | bytes]:
        while not self.incoming:
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter
        return self.incoming.popleft()


class PeerLink:
    """This process's link to another one (the client's end): streams numbered from 1."""

    def __init__(self, url: str):
        self.url = url
        self.ws: ClientConnection | None = None
        self.streams: dict[int, FrontStream] = {}
        self.next_sid = 1
        self.closed = False
        self._reader: asyncio.Task[None] | None = None

    async def open(self, secret: bytes) -> None:
        from websockets.asyncio.client import connect, unix_connect

        headers = [(PEER_HEADER.decode(), secret.decode("latin-1"))]
        options: dict[str, Any] = dict(additional_headers=headers, open_timeout=5,
                                       max_size=None, compression=None)
        if self.url.startswith("unix:"):
            self.ws = await unix_connect(self.url[len("unix:"):], "ws://localhost" + LINK_PATH,
                                         **options)
        else:
            parts = urlsplit(self.url)
            self.ws = await connect(f"ws://{parts.netloc}{LINK_PATH}", **options)
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for data in self.ws:
                sid, kind, payload = parse(data)
                stream = self.streams.get(sid)
                if stream is not None:
                    stream.arrive(kind, payload)
        except LINK_ERRORS + (ValueError,):  # ValueError: a frame that is not ours
            log.info("the link to %s broke", self.url, exc_info=True)
        finally:
            self.closed = True
            for stream in list(self.streams.values()):
                stream.arrive(Kind.LOST, "")
            self.streams.clear()

    def stream(self) -> FrontStream:
        sid = self.next_sid
        self.next_sid += 1
        stream = self.streams[sid] = FrontStream(self, sid)
        return stream

    def forget_stream(self, sid: int, tell: bool = False) -> None:
        if self.streams.pop(sid, None) is not None and tell and not self.closed:
            asyncio.ensure_future(self.send(frame(sid, Kind.CLOSE, str(CLOSE_AGAIN))))

    async def send(self, data: str | bytes) -> None:
        if self.closed or self.ws is None:
            raise ConnectionError(f"the link to {self.url} is closed")
        await self.ws.send(data)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)


def request_of(scope: Scope) -> dict[str, Any]:
    """What the holder needs of a client's request to serve it as its own."""
    client = scope.get("client")
    request = {"type": scope["type"], "scheme": scope.get("scheme", "http"),
               "path": scope["path"],
               "raw_path": (scope.get("raw_path") or scope["path"].encode()).decode("latin-1"),
               "query": scope.get("query_string", b"").decode("latin-1"),
               "headers": _latin([(k, v) for k, v in scope["headers"] if k not in HOP_HEADERS]),
               "client": client[0] if client else ""}
    if scope["type"] == "http":
        request["method"] = scope["method"]
    else:
        request["subprotocols"] = list(scope.get("subprotocols", []))
    return request


class RelayFigures:
    """What the relay counts for the metrics (metrics.py): requests relayed, sockets relayed
    now, and tables handed over to this process."""

    def __init__(self) -> None:
        self.relayed_requests = 0
        self.relayed_sockets = 0
        self.handoffs = 0


class PeerRelay:
    """ASGI middleware: a request or WebSocket about a table another process holds goes there
    over the link (and its answer comes back); a link from another process is served here;
    the lobby lists every process's tables. Any other request passes."""

    def __init__(self, app: ASGIApp, peers: Peers, max_body: int, max_listed: int,
                 figures: RelayFigures | None = None):
        self.app = app
        self.peers = peers
        self.max_body = max_body
        self.max_listed = max_listed
        self.figures = figures or RelayFigures()
        self._links: dict[str, PeerLink] = {}
        self._linking: dict[str, asyncio.Future[PeerLink]] = {}
        # tables being handed to another process now: their clients wait for the end of it
        self._handing: dict[str, asyncio.Event] = {}
        self._asking: dict[str, asyncio.Future[bool]] = {}  # hand-offs asked for now
        self._present: dict[str, int] = {}  # WebSockets of each table here now (``__call__``)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        if path == LINK_PATH and kind == "websocket" and self.peers.from_peer(scope):
            await HolderLink(self, scope, receive, send).serve()
            return
        match = TABLE_PATH.match(path)
        table_id = match[1] if match is not None else None
        if table_id is None or kind != "websocket":
            await self._route(table_id, scope, receive, send)
            return
        # a WebSocket keeps its table where it is from its first byte, relayed or served
        # here, hello or not: while a client of it comes here, this process hands the table
        # to no other (and a table it took for this client stays here)
        present = self._present
        present[table_id] = present.get(table_id, 0) + 1
        try:
            await self._route(table_id, scope, receive, send)
        finally:
            present[table_id] -= 1
            if not present[table_id]:
                del present[table_id]

    async def _route(self, table_id: str | None, scope: Scope, receive: Receive,
                     send: Send) -> None:
        kind, path = scope["type"], scope["path"]
        if table_id is not None and table_id in self._handing:
            await self._handing[table_id].wait()
        if scope.get(RELAYED):
            if table_id is not None and await self._elsewhere(table_id) is not None:
                # it moved on since the relaying process looked: the client tries again
                await refuse_again(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        if kind == "http" and path == "/api/tables" and scope["method"] == "GET":
            await self._lobby(scope, receive, send)
            return
        if table_id is None:
            await self.app(scope, receive, send)
            return
        where = await self._elsewhere(table_id)
        if where is not None and kind == "websocket":
            where = await self._bring(where, table_id)
        if where is None:
            await self.app(scope, receive, send)
        elif kind == "http":
            await self._relay_http(where, table_id, scope, receive, send)
        else:
            await self._relay_ws(where, table_id, scope, receive, send)

    async def _elsewhere(self, table_id: str) -> str | None:
        try:
            return await self.peers.locate(table_id)
        except STORAGE_ERRORS:  # the database is away: serve here, the app answers what it can
            log.warning("could not look up table %s", table_id, exc_info=True)
            return None

    # --- links ----------------------------------------------------------------------------

    async def _link(self, url: str) -> PeerLink:
        """The link to the process at ``url``, opened if there is none (one at a time)."""
        link = self._links.get(url)
        if link is not None and not link.closed:
            return link
        opening = self._linking.get(url)
        if opening is None:
            opening = self._linking[url] = asyncio.ensure_future(self._open_link(url))
            opening.add_done_callback(lambda _: self._linking.pop(url, None))
        return await asyncio.shield(opening)

    async def _open_link(self, url: str) -> PeerLink:
        link = PeerLink(url)
        await link.open(self.peers.secret)
        old = self._links.get(url)
        self._links[url] = link
        if old is not None:
            await old.close()
        return link

    async def close(self) -> None:
        for link in list(self._links.values()):
            await link.close()
        self._links.clear()

    # --- hand-off -------------------------------------------------------------------------

    async def _bring(self, url: str, table_id: str) -> str | None:
        """Where a WebSocket about a table held at ``url`` goes, once its holder was asked to
        hand it over: None (here) if it did, else where the table is now. Clients of one
        table that come at once share one question."""
        asking = self._asking.get(table_id)
        if asking is None:
            asking = self._asking[table_id] = asyncio.ensure_future(
                self._ask_handoff(url, table_id))
            asking.add_done_callback(lambda _: self._asking.pop(table_id, None))
        await asyncio.shield(asking)
        return await self._elsewhere(table_id)

    async def _ask_handoff(self, url: str, table_id: str) -> bool:
        """Ask the holder at ``url`` to hand ``table_id`` over to this process (a client of it
        came here); True when it did (the lease is this process's now). Whatever the answer,
        where the table is is looked up again after it."""
        try:
            link = await self._link(url)
            stream = link.stream()
            try:
                await link.send(frame(stream.sid, Kind.HANDOFF, json.dumps(
                    {"table": table_id, "process": self.peers.id})))
                kind, answer = await asyncio.wait_for(stream.next(), HANDOFF_SECONDS)
            finally:
                link.forget_stream(stream.sid)
        except LINK_ERRORS:
            log.info("table %s: its process at %s did not answer a hand-off", table_id, url,
                     exc_info=True)
            return False
        self.peers.forget(table_id)
        if kind != Kind.HANDED or answer != "moved":
            return False
        self.figures.handoffs += 1
        return True

    async def give_up(self, table_id: str, to: str) -> str:
        """Hand a table nobody is connected to here over to the process ``to`` (its lease
        moved there in one statement, after the event being committed): "moved"; "kept"
        when a client of it is here (or it is being handed elsewhere); "not here"."""
        manager = self.peers.manager
        assert manager is not None
        live = manager.tables.get(table_id)
        if live is None or live.closed:
            return "not here"
        if self._has_clients(table_id, live.fanout.conns) or table_id in self._handing:
            return "kept"
        self._handing[table_id] = asyncio.Event()
        try:
            await live.lock.acquire()
            try:
                if manager.tables.get(table_id) is not live or live.closed:
                    return "not here"
                if self._has_clients(table_id, live.fanout.conns):
                    return "kept"
                moved = await asyncio.get_running_loop().run_in_executor(
                    None, self._move_lease, table_id, to)
                if not moved:
                    return "not here"
                manager.drop(live)
                self.peers.forget(table_id)
                log.info("table %s: handed to process %s, where its clients are", table_id, to)
                return "moved"
            finally:
                live.lock.release()
        finally:
            self._handing.pop(table_id).set()

    def _has_clients(self, table_id: str, conns: list[Any]) -> bool:
        return bool(conns) or table_id in self._present

    def _move_lease(self, table_id: str, to: str) -> bool:
        with self.peers.engine.begin() as conn:
            row = conn.execute(text(
                f"UPDATE st_leases SET owner = :to, expires = {NOW} + :ttl, epoch = epoch + 1 "
                f"WHERE table_id = :t "
                f"AND owner = :me AND expires > {NOW} AND EXISTS (SELECT 1 FROM st_processes "
                f"WHERE id = :to AND heartbeat > {NOW} - :ttl) RETURNING table_id"),
                {"t": table_id, "to": to, "me": self.peers.id, "ttl": LEASE_SECONDS}).first()
        return row is not None

    # --- relaying -------------------------------------------------------------------------

    async def _lobby(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The lobby's list of open tables, of every process: this one's, and each other's
        as it answers over the link (within a second; one that does not is left out)."""
        parts: list[bytes] = []
        start: dict[str, Any] = {}

        async def keep(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            else:
                parts.append(message.get("body", b""))

        await self.app(scope, receive, keep)
        if start.get("status") != 200:
            await send(start)
            await send({"type": "http.response.body", "body": b"".join(parts)})
            return
        tables = json.loads(b"".join(parts))["tables"]
        try:
            others = await self.peers.other_processes()
        except STORAGE_ERRORS:  # the database is away: this process's tables at least
            log.warning("the lobby lists this process's tables only: no list of the others",
                        exc_info=True)
            others = []

        async def listed(url: str) -> list[Any]:
            status, body = await self._ask(url, scope)
            return list(json.loads(body)["tables"]) if status == 200 else []

        answers = await asyncio.gather(*(asyncio.wait_for(listed(url), 1.0) for url in others),
                                       return_exceptions=True)
        for answer in answers:
            if isinstance(answer, list):
                tables.extend(answer)
        body = json.dumps({"tables": tables[:self.max_listed]}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    async def _ask(self, url: str, scope: Scope) -> tuple[int, bytes]:
        """A bodiless request of ``scope``'s to the process at ``url``: its status and body."""
        link = await self._link(url)
        stream = link.stream()
        try:
            await link.send(frame(stream.sid, Kind.OPEN, json.dumps(request_of(scope))))
            await link.send(frame_bytes(stream.sid, Kind.BODY_END, b""))
            status, parts = 503, []
            while True:
                kind, payload = await stream.next()
                if kind == Kind.START:
                    status = int(json.loads(payload)["status"])
                elif kind in (Kind.ANSWER, Kind.ANSWER_END):
                    parts.append(payload if isinstance(payload, bytes) else payload.encode())
                    if kind == Kind.ANSWER_END:
                        return status, b"".join(parts)
                else:
                    return 503, b""
        finally:
            link.forget_stream(stream.sid)

    async def _relay_http(self, url: str, table_id: str, scope: Scope, receive: Receive,
                          send: Send) -> None:
        try:
            link = await self._link(url)
        except LINK_ERRORS:
            log.info("table %s: its process at %s did not answer", table_id, url, exc_info=True)
            self.peers.forget(table_id)
            await refuse_again(scope, receive, send)
            return
        self.figures.relayed_requests += 1
        stream = link.stream()
        started = False
        try:
            await link.send(frame(stream.sid, Kind.OPEN, json.dumps(request_of(scope))))
            while True:  # the body, as it comes (the Guard outside counts it against max_body)
                message = await receive()
                if message["type"] != "http.request":
                    await link.send(frame(stream.sid, Kind.CLOSE, "1001"))
                    return
                body = message.get("body", b"")
                more = bool(message.get("more_body"))
                for at in range(0, max(1, len(body)), BODY_PIECE):
                    piece = body[at:at + BODY_PIECE]
                    last = not more and at + BODY_PIECE >= len(body)
                    await link.send(frame_bytes(stream.sid, Kind.BODY_END if last else Kind.BODY,
                                                piece))
                if not more:
                    break
            while True:
                kind, payload = await asyncio.wait_for(stream.next(), ANSWER_SECONDS)
                if kind == Kind.START:
                    answer = json.loads(payload)
                    headers = [(k, v) for k, v in _unlatin(answer["headers"])
                               if k not in ANSWER_HOP_HEADERS]
                    await send({"type": "http.response.start", "status": answer["status"],
                                "headers": headers})
                    started = True
                elif kind in (Kind.ANSWER, Kind.ANSWER_END) and started:
                    await send({"type": "http.response.body", "more_body": kind == Kind.ANSWER,
                                "body": payload if isinstance(payload, bytes) else payload.encode()})
                    if kind == Kind.ANSWER_END:
                        return
                else:
                    raise ConnectionError("the link went away")
        except LINK_ERRORS:
            log.info("table %s: its process at %s did not answer", table_id, url, exc_info=True)
            self.peers.forget(table_id)
            if not started:
                await refuse_again(scope, receive, send)
            else:
                raise
        finally:
            link.forget_stream(stream.sid, tell=not started)

    async def _relay_ws(self, url: str, table_id: str, scope: Scope, receive: Receive,
                        send: Send) -> None:
        try:
            link = await self._link(url)
        except LINK_ERRORS:
            log.info("table %s: its process at %s did not answer", table_id, url, exc_info=True)
            self.peers.forget(table_id)
            await refuse_again(scope, receive, send)
            return
        first = await receive()
        if first["type"] != "websocket.connect":
            return
        stream = link.stream()
        self.figures.relayed_sockets += 1
        try:
            await self._carry_ws(link, stream, table_id, scope, receive, send)
        finally:
            self.figures.relayed_sockets -= 1
            link.forget_stream(stream.sid)

    async def _carry_ws(self, link: PeerLink, stream: FrontStream, table_id: str, scope: Scope,
                        receive: Receive, send: Send) -> None:
        sid = stream.sid
        try:
            await link.send(frame(sid, Kind.OPEN, json.dumps(request_of(scope))))
            kind, payload = await asyncio.wait_for(stream.next(), ANSWER_SECONDS)
        except LINK_ERRORS:
            kind, payload = Kind.LOST, ""
        # accepted in any case: a refused handshake is a 403 to the client, not the close
        # code that tells the page what to do
        await send({"type": "websocket.accept"})
        if kind != Kind.ACCEPT:
            if kind == Kind.LOST:
                self.peers.forget(table_id)
            await send({"type": "websocket.close",
                        "code": int(payload) if kind == Kind.CLOSE else CLOSE_AGAIN})
            return
        stream.write_now = direct_writer(WebSocket(scope, receive, send))

        async def down() -> None:  # the client's messages to the table's process
            while True:
                message: Message = await receive()
                if message["type"] != "websocket.receive":
                    if not link.closed:
                        await link.send(frame(sid, Kind.CLOSE, str(message.get("code", 1000))))
                    return
                data = message.get("text")
                if data is not None:
                    await link.send(frame(sid, Kind.MESSAGE, data))
                else:
                    await link.send(frame_bytes(sid, Kind.MESSAGE, message.get("bytes") or b""))

        async def up() -> int:  # the table's messages to the client; the close code
            while True:
                kind, payload = await stream.next()
                if kind == Kind.MESSAGE:
                    stream.busy = True
                    try:
                        if isinstance(payload, str):
                            await send({"type": "websocket.send", "text": payload})
                        else:
                            await send({"type": "websocket.send", "bytes": payload})
                    finally:
                        stream.busy = False
                elif kind == Kind.CLOSE:
                    return int(payload)
                elif kind == Kind.LOST:  # the table's process went away: connect again
                    self.peers.forget(table_id)
                    return CLOSE_AGAIN

        downward, upward = asyncio.ensure_future(down()), asyncio.ensure_future(up())
        code = CLOSE_AGAIN
        try:
            await asyncio.wait([downward, upward], return_when=asyncio.FIRST_COMPLETED)
            if upward.done() and not upward.cancelled() and upward.exception() is None:
                code = upward.result()
        finally:
            stream.write_now = None
            for task in (downward, upward):
                task.cancel()
            await asyncio.gather(downward, upward, return_exceptions=True)
            try:
                await send({"type": "websocket.close", "code": code})
            except Exception:  # the client is gone already, whatever its server says
                pass


async def refuse_again(scope: Scope, receive: Receive, send: Send) -> None:
    """"The table's process cannot be reached now; try again": a WebSocket is closed with
    ``CLOSE_AGAIN``, a request answered 503."""
    if scope["type"] == "websocket":
        # accepted first: closed before, the client would see a refused handshake (403),
        # not the code that tells the page to come again soon
        if (await receive())["type"] == "websocket.connect":
            await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": CLOSE_AGAIN})
        return
    body = b'{"error":"the table moved to another server process; try again","rule":"storage"}'
    await send({"type": "http.response.start", "status": 503,
                "headers": [(b"content-type", b"application/json"), (b"retry-after", b"1"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})

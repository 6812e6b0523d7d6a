"""Below the app: uvicorn's protocols, extended. Longer than ~600 lines on purpose: it is the
one module that relies on uvicorn's (and websockets') private parts, so that an upgrade is
checked here and in tests/test_server_uvicorn_fence.py alone.

Connection guards (uvicorn's httptools protocol, extended): slowloris and connection floods
never reach FastAPI.

- Header timeout: a request's headers must be complete within ``header_timeout`` seconds of
  its first byte (and a new connection must send them within that time); a client that sends
  a header line now and then is closed. uvicorn alone never times this out. Headers larger
  than ``max_header_bytes`` get ``431`` (httptools itself sets no limit).
- Caps: at most ``conns_per_address`` TCP connections from one address and
  ``max_connections`` in all (within the open-file limit: see below); beyond them a new
  connection gets ``503`` and is closed at once, so the server keeps file descriptors for
  honest clients.
- Idle keep-alive connections are closed by uvicorn's ``timeout_keep_alive``; WebSocket
  connections by its ping timeout.
- On a Unix socket (``unix_listener``: a reverse proxy on the same machine) every connection
  comes from the proxy: there is no address to cap, only ``max_connections``. Its requests
  name their client in X-Forwarded-For (proxy.py: the right-most entry, the proxy's own).
- Open files: ``fit_open_files`` raises the process's soft limit as far as the connections
  need (up to the hard limit) and lowers ``max_connections`` to what the limit leaves, so the
  server refuses a connection with ``503`` before ``accept`` could fail for want of a file.

A reverse proxy in front (nginx, Caddy) adds more of the same at the edge: see
docs/deployment.md.

WebSocket frames (uvicorn's websockets-sansio protocol, extended): the usual client frame is
read in place, everything else by the websockets parser (``framed_websocket_protocol``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import json
import logging
import os
import resource
import socket
import stat
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.utils import get_remote_addr

from .limits import ServerLimits, count_down
from .proxy import ProxiedClient

log = logging.getLogger("stammtisch.server")

_REASONS = {503: b"Service Unavailable", 431: b"Request Header Fields Too Large"}


def _refusal(message: str, status: int = 503) -> bytes:
    rule = "connections" if status == 503 else "size"
    body = json.dumps({"error": message, "rule": rule}, separators=(",", ":")).encode()
    return (b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\nconnection: close\r\n"
            b"content-length: %d\r\n\r\n%s" % (status, _REASONS[status], len(body), body))


#: The mode of the server's Unix socket: its owner and group may connect, nobody else. What
#: comes through it is trusted to name the client (X-Forwarded-For), as from a proxy.
UNIX_SOCKET_MODE = 0o660

#: The longest Unix socket path Linux takes (``sun_path`` holds 108 bytes with the final NUL).
MAX_SOCKET_PATH = 107


def check_unix_socket(path: str) -> None:
    """Refuse a Unix socket path the server cannot take, without touching it: OSError with
    ``ENAMETOOLONG``, ``ENOENT`` (no such folder), ``EEXIST`` (something other than a socket
    is there) or ``EADDRINUSE`` (a server answers on it). A socket nobody answers on is a
    leftover of a server that did not stop cleanly: ``unix_listener`` replaces it."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:  # sun_path's room; bind() would refuse it
        raise OSError(errno.ENAMETOOLONG, f"the path is longer than {MAX_SOCKET_PATH} bytes")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise OSError(errno.ENOENT, f"no folder {folder}")
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise OSError(errno.EEXIST, f"{path} exists and is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except OSError:  # refused: nobody listens
            return
    raise OSError(errno.EADDRINUSE, f"a server is listening on {path}")


def unix_listener(path: str, backlog: int = 2048) -> socket.socket:
    """A listening Unix socket at ``path`` with ``UNIX_SOCKET_MODE`` (uvicorn's own ``uds``
    makes it 666: any local user could connect and claim any client address).

    Why a reverse proxy on the same machine should reach the server this way: a message over a
    Unix socket costs the sender a fraction of what it costs over loopback TCP (the kernel
    skips TCP and IP), and under load that is a visible share of the server's system time per
    action (compare ``bench/server_load.py --uds`` with the same run over TCP)."""
    check_unix_socket(path)
    if os.path.exists(path):
        os.unlink(path)  # a leftover (check_unix_socket): nobody answers on it
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old = os.umask(0o777 & ~UNIX_SOCKET_MODE)  # never, even for a moment, wider
        try:
            sock.bind(path)
        finally:
            os.umask(old)
        os.chmod(path, UNIX_SOCKET_MODE)
        sock.listen(backlog)
    except BaseException:
        sock.close()
        raise
    return sock


class ConnectionCounts:
    """Open TCP connections per client address and in all (one per server)."""

    def __init__(self) -> None:
        self.total = 0
        self.per_address: dict[str, int] = {}
        self.refused = 0
        self.timed_out = 0

    def add(self, address: str) -> None:
        self.total += 1
        self.per_address[address] = self.per_address.get(address, 0) + 1

    def remove(self, address: str) -> None:
        self.total -= 1
        count_down(self.per_address, address)


#: Open files the server needs besides its connections, kept free of them: 19 at rest (the
#: standard streams, the event loop, the listener, SQLite's database, WAL and shared-memory
#: files), about 10 for each worker pool once used (search bots, Analysis: pipes to the worker
#: and the fork server), up to 14 more database connections (SQLAlchemy's pool holds up to 15;
#: 3 files each with SQLite, a socket with PostgreSQL), and room for what is open only a
#: moment: a static file or the spill file being written, a connection between its accept and
#: its refusal, a worker pool being replaced.
OPEN_FILES_RESERVED = 128


def fit_open_files(limits: ServerLimits) -> ServerLimits:
    """``limits`` with ``max_connections`` that the process's open-file limit can hold.

    Each connection takes a file. With more connections allowed than files (a stock Linux
    process may open 1,024; ``max_connections`` is 2,000 by default), held connections
    exhaust the files first: ``accept`` fails (EMFILE) and every new client is dropped until
    some close, where the cap would have refused the excess with ``503`` and kept serving.
    So the soft limit is raised as far as ``max_connections`` + ``OPEN_FILES_RESERVED`` need
    (never above the hard limit, which only root may raise), and if that is not enough,
    ``max_connections`` is lowered to the soft limit less ``OPEN_FILES_RESERVED``, with one
    warning in the log."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = limits.max_connections + OPEN_FILES_RESERVED
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        if target > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
                soft = target
            except (ValueError, OSError):  # not allowed here (a sandbox): keep what there is
                pass
    if soft == resource.RLIM_INFINITY or soft >= need:
        return limits
    fitted = max(1, soft - OPEN_FILES_RESERVED)
    log.warning("max_connections lowered from %d to %d: the open-file limit is %d (hard limit %s) "
                "and %d files stay for the database, the worker processes and the spill file; "
                "raise the hard limit (ulimit -Hn, systemd: LimitNOFILE=) to at least %d to allow %d",
                limits.max_connections, fitted, soft,
                "unlimited" if hard == resource.RLIM_INFINITY else hard,
                OPEN_FILES_RESERVED, need, limits.max_connections)
    return dataclasses.replace(limits, max_connections=fitted)


def guarded_protocol(limits: ServerLimits, counts: ConnectionCounts | None = None) -> type:
    """An ``HttpToolsProtocol`` subclass enforcing ``limits`` (pass it as uvicorn's ``http``).
    On a Unix socket it puts ``proxy.ProxiedClient`` in front of the app (the client a request
    comes from is the one the proxy names), for HTTP requests and for the WebSocket protocol
    a connection is upgraded to."""
    shared = counts or ConnectionCounts()

    class GuardedHttpToolsProtocol(HttpToolsProtocol):
        counts = shared
        proxied: ProxiedClient | None = None  # the app behind ProxiedClient (one per server)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            remote = get_remote_addr(transport)
            self._address = remote[0] if remote else ""
            self._counted = False
            self._header_timer: asyncio.TimerHandle | None = None
            self._header_bytes = 0
            if self.counts.total >= limits.max_connections:
                self._refuse(transport, "the server has too many connections; try again shortly")
                return
            if self._address and \
                    self.counts.per_address.get(self._address, 0) >= limits.conns_per_address:
                self._refuse(transport, "too many connections from your address")
                return
            self.counts.add(self._address)
            self._counted = True
            super().connection_made(transport)
            sock = transport.get_extra_info("socket")
            if sock is not None and sock.family == socket.AF_UNIX:
                cls = type(self)
                if cls.proxied is None or cls.proxied.app is not self.app:
                    cls.proxied = ProxiedClient(self.app)
                self.app = cls.proxied
            self._arm()

        def _refuse(self, transport: asyncio.Transport, message: str) -> None:
            self.counts.refused += 1
            self.transport = transport
            self.parser = None  # type: ignore[assignment]
            try:
                transport.write(_refusal(message))
            finally:
                transport.close()

        def _release(self) -> None:
            self._disarm()
            if self._counted:
                self._counted = False
                self.counts.remove(self._address)

        def connection_lost(self, exc: Exception | None) -> None:
            self._release()
            if getattr(self, "flow", None) is None:  # refused before uvicorn set itself up
                return
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self.parser is None:
                return
            in_headers = self._header_timer is not None
            super().data_received(data)
            if in_headers and self._header_timer is not None:  # the headers are still not complete
                self._header_bytes += len(data)
                if self._header_bytes > limits.max_header_bytes and not self.transport.is_closing():
                    self.counts.refused += 1
                    self.transport.write(_refusal("request headers too large", 431))
                    self.transport.close()

        # a request's headers must arrive within header_timeout of its first byte
        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_bytes = 0
                self._header_timer = self.loop.call_later(limits.header_timeout, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            self.counts.timed_out += 1
            if not self.transport.is_closing():
                self.transport.close()

        def on_message_begin(self) -> None:
            super().on_message_begin()
            self._arm()

        def on_headers_complete(self) -> None:
            self._disarm()
            super().on_headers_complete()

        def handle_websocket_upgrade(self) -> None:
            """The WebSocket protocol takes the transport over: count the connection until
            that protocol loses it."""
            self._disarm()
            super().handle_websocket_upgrade()
            protocol: Any = self.transport.get_protocol()
            if isinstance(self.app, ProxiedClient):  # its task calls the app later: in time
                protocol.app = self.app
            inner_lost = protocol.connection_lost

            def lost(exc: Exception | None) -> None:
                try:
                    inner_lost(exc)
                finally:
                    self._release()

            protocol.connection_lost = lost

    return GuardedHttpToolsProtocol


#: Messages a WebSocket may have waiting for the app before its reading pauses (see
#: ``FramedWebSocketProtocol``).
QUEUED_BEFORE_PAUSE = 4


class Inbox:
    """The part of ``asyncio.Queue`` that uvicorn's WebSocket protocol uses for the messages
    waiting for the app (``put_nowait``, ``get``, ``get_nowait``, ``empty``, ``qsize``),
    without what it does not use: ``asyncio.Queue`` keeps a task count and an event for
    ``join``, looks the running loop up for every wait (a ``getpid`` system call on Python
    3.11), and wakes its getters through a loop over a deque. Each client message passes
    here once."""

    __slots__ = ("_items", "_waiters", "_loop", "_drained")

    def __init__(self, loop: asyncio.AbstractEventLoop,
                 drained: Callable[[], None] | None = None):
        self._items: deque[Any] = deque()
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._loop = loop
        self._drained = drained  # called when ``get`` took the last waiting item

    def put_nowait(self, item: Any) -> None:
        self._items.append(item)
        self._wake_next()

    def _wake_next(self) -> None:
        waiters = self._waiters
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():  # a cancelled getter is skipped
                waiter.set_result(None)
                return

    async def get(self) -> Any:
        items = self._items
        while not items:
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:  # as asyncio.Queue.get: a wake-up it took goes on
                waiter.cancel()
                try:
                    self._waiters.remove(waiter)
                except ValueError:
                    pass
                if items and not waiter.cancelled():
                    self._wake_next()
                raise
        item = items.popleft()
        if not items and self._drained is not None:
            self._drained()
        return item

    def get_nowait(self) -> Any:
        if not self._items:
            raise asyncio.QueueEmpty
        return self._items.popleft()

    def empty(self) -> bool:
        return not self._items

    def qsize(self) -> int:
        return len(self._items)


def framed_websocket_protocol() -> type:
    """``FramedWebSocketProtocol``: uvicorn's websockets-sansio protocol, with the usual frame
    (a whole, masked, final text frame) read in place. Built on first use: uvicorn imports
    websockets only then."""
    global _FRAMED
    if _FRAMED is None:
        _FRAMED = _build_framed_protocol()
    return _FRAMED


_FRAMED: type | None = None


def _build_framed_protocol() -> type:
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
    try:
        from websockets.speedups import apply_mask
    except ImportError:  # websockets built without its C extension
        from websockets.utils import apply_mask
    from websockets.protocol import State

    opened = State.OPEN

    class FramedWebSocketProtocol(WebSocketsSansIOProtocol):
        """What a client sends in play is one small text message at a time, each one whole,
        masked, final text frame (RFC 6455 §5.2). Such a frame is read here: the header, the
        mask and the strict UTF-8 decoding, then the same ``websocket.receive`` event as
        uvicorn's. Every other frame (ping, pong, close, binary, fragments, a frame too
        large, one with reserved bits or no mask) goes whole, on its own, to the websockets
        parser underneath, which answers and fails exactly as it does for uvicorn.

        That parser therefore only ever sees whole frames, so it waits at a frame boundary
        between them and never needs the bytes read here. A connection whose first frames
        came before the handshake ended (a client may not do that) or that negotiated an
        extension leaves everything to the parser.

        Reading pauses once ``QUEUED_BEFORE_PAUSE`` messages wait for the app, where uvicorn
        pauses after each message (two epoll changes per message); a client still cannot
        have more than what one read brings queued on top of that. The messages wait in an
        ``Inbox``, not an ``asyncio.Queue``.

        The point is the CPU per message from the socket's read to the app's ``receive``, a
        part of every action's cost under load: bench/ws_frames.py measures it here and in
        uvicorn's own protocol."""

        _framed: bool | None = None  # None: the handshake is not over yet
        #: the app's hook for a message it may take at once (``routes.live.ws_endpoint``'s
        #: ``take_now``): True when it took it; called only while no message is queued
        take_now: Callable[[str], bool] | None = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.queue = Inbox(self.loop, self._drained)  # type: ignore[assignment]

        def receive(self) -> Awaitable[Any]:  # type: ignore[override]
            """The app's ASGI ``receive``: uvicorn's, without its coroutine around the
            queue's (the reading it resumes once the app took every waiting message is
            ``_drained``)."""
            return self.queue.get()

        def _drained(self) -> None:
            if self.read_paused:
                self.read_paused = False
                self.transport.resume_reading()
        _partial: bytearray | None = None  # the start of a frame that has not all arrived
        _partial_needs = 0  # the bytes that frame takes in all (0: its header is not all in)

        def data_received(self, data: bytes) -> None:
            if self._framed is None:
                if not self.handshake_initiated:  # the upgrade request itself
                    super().data_received(data)
                    return
                # frames before the handshake ended (or after a refusal): the parser's
                self._framed = (self.handshake_complete and not self.conn.extensions
                                and self.conn.state is opened)
            if not self._framed:
                super().data_received(data)
                return
            partial = self._partial
            if partial is not None:
                # collected, not joined anew at every read: a frame that trickles in byte by
                # byte costs linear time (as in the websockets parser)
                partial += data
                if len(partial) < self._partial_needs:
                    return
                data, self._partial = bytes(partial), None
            self._read_frames(data)

        def _read_frames(self, data: bytes) -> None:
            conn = self.conn
            end = len(data)
            at = 0
            self._partial_needs = 0
            while end - at >= 2:
                if conn.state is not opened or conn.parser_exc is not None:
                    # closing: a closed transport reads nothing more, else the parser
                    # discards the rest
                    self._leave_to_parser(b"" if self.transport.is_closing() else data[at:])
                    return
                first, second = data[at], data[at + 1]
                size = second & 0x7F
                head = 2
                if size == 126:
                    head = 4
                    if end - at < 4:
                        break
                    size = int.from_bytes(data[at + 2:at + 4], "big")
                elif size == 127:
                    head = 10
                    if end - at < 10:
                        break
                    size = int.from_bytes(data[at + 2:at + 10], "big")
                limit = conn.max_message_size
                if limit is not None and size > limit:  # the parser closes with 1009
                    self._leave_to_parser(data[at:])
                    return
                masked = second & 0x80
                if masked:
                    head += 4
                stop = at + head + size
                if stop > end:
                    self._partial_needs = stop - at
                    break
                if first == 0x81 and masked and conn.current_size is None:
                    try:
                        text = apply_mask(data[at + head:stop], data[at + head - 4:at + head]).decode()
                    except UnicodeDecodeError:
                        super().data_received(data[at:stop])  # the parser closes with 1007
                    else:
                        self._queue_text(text)
                else:
                    super().data_received(data[at:stop])
                at = stop
            if at < end:
                self._partial = bytearray(data[at:])

        def _leave_to_parser(self, data: bytes) -> None:
            self._framed = False
            if data:
                super().data_received(data)

        def _queue_text(self, text: str) -> None:
            if self.close_sent:  # the app is past its close: uvicorn drops the message too
                return
            take_now = self.take_now
            if take_now is not None and self.queue.empty() and take_now(text):
                return
            self.queue.put_nowait({"type": "websocket.receive", "text": text})
            if not self.read_paused and self.queue.qsize() >= QUEUED_BEFORE_PAUSE:
                self.read_paused = True
                self.transport.pause_reading()

    return FramedWebSocketProtocol


# --- the fence: everything the app uses of the ASGI server's WebSocket below Starlette -------

#: Where ``KeepWebSocketSend`` keeps the ASGI server's own ``send`` and ``receive`` of a
#: WebSocket.
SERVER_SEND = "stammtisch.server_send"
SERVER_RECEIVE = "stammtisch.server_receive"


class KeepWebSocketSend:
    """ASGI middleware: keeps the ASGI server's own ``send`` and ``receive`` of each WebSocket
    in its scope (``scope[SERVER_SEND]``, ``scope[SERVER_RECEIVE]``), so that the table's
    messages (several per action and seat) go straight to it, and the client's come straight
    from it. Starlette's ``WebSocket.send_text`` adds a state check and two exception-handler
    wrappers per message, which nothing here needs: a send on a closed socket raises all the
    same (the server's own error instead of WebSocketDisconnect), and ``Conn.sender`` ends on
    any error. Its ``receive`` adds a coroutine and a check of the message's type per
    message; the receive loop reads only ``websocket.receive`` and ``websocket.disconnect``,
    and stops at the latter."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            scope[SERVER_SEND] = send
            scope[SERVER_RECEIVE] = receive
        await self.app(scope, receive, send)


def server_send_text(ws: WebSocket) -> Callable[[str], Awaitable[None]]:
    """``ws.send_text`` without Starlette's layers (see ``KeepWebSocketSend``)."""
    send: Send | None = ws.scope.get(SERVER_SEND)
    if send is None:  # the app is mounted without its middleware
        return ws.send_text
    server_send = send

    async def send_text(text: str) -> None:
        await server_send({"type": "websocket.send", "text": text})

    return send_text


#: What ``direct_writer`` uses of uvicorn's WebSocket protocol (websockets-sansio).
_SANSIO_PARTS = ("conn", "transport", "writable", "close_sent", "disconnected")


def direct_writer(ws: WebSocket) -> Callable[[str | bytes], bool] | None:
    """A synchronous ``write_now`` for ``Conn`` when the server is uvicorn's websockets-sansio
    protocol: the text frame goes to the protocol's transport at once, as its ASGI ``send``
    would write it for a ``websocket.send``, without a coroutine and a task wake-up per
    message (under load that path is a sizeable share of the server's CPU per action:
    bench/server_load.py). It declines (False) whenever that ``send`` would wait or fail:
    writing paused (a client that does not read), closing, closed; then the message takes the
    queued path. None for any other server (the queued path only).

    Without extensions a server's text frame is two or four bytes of header and the payload
    as it is (RFC 6455 §5.2: FIN, opcode 1, no mask), and ``frame_header`` writes that itself;
    with per-message deflate the protocol's own connection frames (and compresses) it."""
    send = ws.scope.get(SERVER_SEND)
    proto: Any = getattr(send, "__self__", None)
    relayed: Callable[[str | bytes], bool] | None = getattr(proto, "direct_write", None)
    if relayed is not None:  # a connection relayed from another process (relay.HeldStream)
        return relayed
    if proto is None or not all(hasattr(proto, part) for part in _SANSIO_PARTS):
        return None
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    if not isinstance(proto, WebSocketsSansIOProtocol):  # framed_websocket_protocol's is one
        return None
    from websockets.protocol import State  # installed: the protocol above is built on it

    conn, transport, writable = proto.conn, proto.transport, proto.writable
    plain, opened = not conn.extensions, State.OPEN

    def write_now(text: str | bytes) -> bool:
        if proto.close_sent or proto.disconnected or not writable.is_set() or \
                transport.is_closing() or conn.state is not opened:
            return False
        data = text.encode() if isinstance(text, str) else text
        if plain:
            transport.writelines((frame_header(len(data)), data))
        else:
            conn.send_text(data)
            transport.write(b"".join(conn.data_to_send()))
        return True

    return write_now


def lift_message_limit(send: Send) -> None:
    """No ``ws_max_size`` for the WebSocket of this ASGI ``send`` (a link between the
    processes of a service, relay.py: it carries every relayed client's messages, each
    within the limits of the process the client reached). Nothing under another server."""
    conn = getattr(getattr(send, "__self__", None), "conn", None)
    if conn is not None and hasattr(conn, "max_message_size"):
        conn.max_message_size = None


def frame_header(n: int) -> bytes:
    """The header of a final, unmasked text frame (server to client, no extensions) of ``n``
    bytes of payload. The fast path writes it and the payload as two buffers of one system
    call (``writelines``): joined first, every message would be copied once more, and read
    cold, as the messages of a busy turn wait for its end (bench/server_side_by_side.py)."""
    if n < 126:
        return b"\x81%c" % n
    if n < 65536:
        return b"\x81\x7e" + n.to_bytes(2, "big")
    return b"\x81\x7f" + n.to_bytes(8, "big")


class ServerSocket:
    """The app's one way to a WebSocket below Starlette: ``send_text``, ``receive``, the
    synchronous ``write_now`` (None but under uvicorn's websockets-sansio protocol) and the
    hook for a message taken at once from the socket's read (``set_take_now``; only under
    ``FramedWebSocketProtocol``). Under any other ASGI server, or without the middleware
    ``KeepWebSocketSend``, it is Starlette's ``WebSocket`` and the queued path alone.
    tests/test_server_uvicorn_fence.py checks every private part of uvicorn used here on a real
    connection."""

    __slots__ = ("send_text", "receive", "write_now", "_proto")

    def __init__(self, ws: WebSocket) -> None:
        self.send_text = server_send_text(ws)
        self.receive: Receive = ws.scope.get(SERVER_RECEIVE) or ws.receive
        self.write_now = direct_writer(ws)
        proto = getattr(ws.scope.get(SERVER_SEND), "__self__", None)
        self._proto = proto if hasattr(proto, "take_now") else None

    @property
    def takes_now(self) -> bool:
        """Whether the server's protocol takes a ``take_now`` hook."""
        return self._proto is not None

    def set_take_now(self, hook: Callable[[str], bool] | None) -> None:
        if self._proto is not None:
            self._proto.take_now = hook


#: Every private part of uvicorn's protocol (and of the websockets connection beneath it) the
#: fast path reads or writes: ``direct_writer``, ``FramedWebSocketProtocol``, ``ServerSocket``.
PROTOCOL_PARTS = ("conn", "transport", "writable", "close_sent", "disconnected", "queue",
                  "read_paused", "handshake_initiated", "handshake_complete", "loop", "take_now")
CONNECTION_PARTS = ("extensions", "state", "send_text", "data_to_send", "parser_exc",
                    "current_size", "max_message_size")


def missing_server_parts(ws: WebSocket) -> list[str]:
    """The private parts of the server below ``ws`` that the fast path uses and that are not
    there (tests/test_server_uvicorn_fence.py: none may be missing under the uvicorn version
    pyproject.toml pins)."""
    proto = getattr(ws.scope.get(SERVER_SEND), "__self__", None)
    if proto is None:
        return ["the ASGI server's send is not a method of its protocol"]
    missing = [f"protocol.{p}" for p in PROTOCOL_PARTS if not hasattr(proto, p)]
    conn = getattr(proto, "conn", None)
    missing += [f"protocol.conn.{p}" for p in CONNECTION_PARTS if not hasattr(conn, p)]
    return missing


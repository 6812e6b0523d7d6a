"""The client behind the reverse proxy on the Unix socket (``serve --uds``).

Every connection on the server's Unix socket comes from the proxy (only the socket's owner and
group may connect: ``transport.UNIX_SOCKET_MODE``), so the proxy names the client in
``X-Forwarded-For``. The server takes the RIGHT-MOST entry of that list, the one the proxy
itself wrote: nginx's usual ``proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for``
appends the address it saw to whatever the client sent, so the entries to its left are the
client's own words (uvicorn's ``forwarded_allow_ips="*"`` takes the left-most one, letting a
client choose its address for every limit per address). With ``$remote_addr`` (the proxy
replaces the header) the list has that one entry.

A request on the socket without the header (a proxy that does not set it) gets the address
``UNNAMED`` ("unix"): all such clients are one address for the limits per address (table
creation, lobby seats, WebSockets per address), and the server says so once in its log.

``X-Forwarded-Proto`` (http, https, ws, wss) sets the request's scheme, as uvicorn did.
``transport.guarded_protocol`` puts ``ProxiedClient`` in front of the app on the Unix socket's
connections only; TCP connections keep uvicorn's own handling (``X-Forwarded-For`` trusted from
127.0.0.1 and ::1 only).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

log = logging.getLogger("stammtisch.server")

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]

#: The client address of a request on the Unix socket that has no X-Forwarded-For.
UNNAMED = "unix"

_SCHEMES = {"http": ("http", "ws"), "https": ("https", "wss"), "ws": ("http", "ws"), "wss": ("https", "wss")}


def forwarded_client(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The right-most entry of the ``X-Forwarded-For`` headers (several headers count as one list
    in their order), without a port (``1.2.3.4:5678``, ``[2001:db8::1]:443``); None without one."""
    last = b""
    for name, value in headers:
        if name.lower() == b"x-forwarded-for":
            for item in value.split(b","):
                item = item.strip()
                if item:
                    last = item
    if not last:
        return None
    host = last.decode("latin-1")
    if host.startswith("["):  # [IPv6]:port
        end = host.find("]")
        return host[1:end] if end > 1 else host
    if host.count(":") == 1:  # IPv4:port (a bare IPv6 address has several colons)
        return host.partition(":")[0]
    return host


class ProxiedClient:
    """ASGI middleware for the Unix socket's connections: the request's client is the one the
    proxy names (see the module's docstring). One per server."""

    def __init__(self, app: ASGIApp):
        self.app = app
        self.unnamed = 0  # requests without X-Forwarded-For

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind in ("http", "websocket"):
            headers = scope.get("headers", ())
            client = forwarded_client(headers)
            if client is None:
                client = UNNAMED
                self.unnamed += 1
                if self.unnamed == 1:
                    log.warning("a request on the Unix socket has no X-Forwarded-For header: such "
                                "requests share the client address %r for every limit per address; "
                                "let the proxy set it (nginx: proxy_set_header X-Forwarded-For "
                                "$proxy_add_x_forwarded_for;)", UNNAMED)
            scope["client"] = (client, 0)
            for name, value in headers:
                if name.lower() == b"x-forwarded-proto":
                    schemes = _SCHEMES.get(value.decode("latin-1").strip().lower())
                    if schemes is not None:
                        scope["scheme"] = schemes[kind == "websocket"]
        await self.app(scope, receive, send)

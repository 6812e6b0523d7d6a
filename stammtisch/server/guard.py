"""The outer layer of the web table: request bodies limited while they stream, and security
headers on every HTTP response (pure ASGI, so it sees a chunked body chunk by chunk).

A ``Content-Length`` above the limit is refused before a byte is read; a body without one
(``Transfer-Encoding: chunked``) is counted as it arrives and refused with 413 as soon as it
passes the limit, so a 200 MB chunked upload costs at most the limit in memory. A few paths
take a larger body (``larger``: a record file uploaded to be replayed or analysed).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Scripts and styles from this server only; no framing; no sniffing; no referrer (a seat's
# token rides in the URL fragment, which is never sent, but the table id is in the path).
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy",
     b"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
     b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def too_large(limit: int) -> dict[str, Any]:
    """The body of the 413 answer to a request body over ``limit`` bytes (the page says the
    limit of a record file in its own words)."""
    return {"error": f"request body too large ({limit // 1024} KiB at most)", "rule": "size",
            "max_bytes": limit}


class BodyTooLarge(HTTPException):
    """Raised inside the app when a streamed body passes the limit (an HTTPException, so
    FastAPI's body parsing lets it through and the app answers 413 with ``too_large``)."""

    def __init__(self, max_body: int):
        super().__init__(413, too_large(max_body)["error"])
        self.limit = max_body


class Guard:
    def __init__(self, app: ASGIApp, max_body: int = 65_536, larger: Mapping[str, int] | None = None):
        self.app = app
        self.max_body = max_body
        self.larger = dict(larger or {})  # path → its own limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message["headers"] = headers
            await send(message)

        limit = self.larger.get(scope.get("path", ""), self.max_body)
        length = None
        for key, value in scope.get("headers", []):
            if key == b"content-length":
                length = value
        if length is not None and (not length.isdigit() or int(length) > limit):
            await self._too_large(send_with_headers, limit)
            return

        seen = 0

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        try:
            await self.app(scope, counting_receive, send_with_headers)
        except BodyTooLarge:
            if not started:
                await self._too_large(send_with_headers, limit)

    async def _too_large(self, send: Send, limit: int) -> None:
        body = json.dumps(too_large(limit)).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

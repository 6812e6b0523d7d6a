"""What the routes share: the server's collaborators, and the dependencies (FastAPI
``Depends``) for the table, the token, the client's address and the rate limits."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Request
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import HTTPConnection

from ..analysis import Analyst
from ..buckets import AddressBuckets
from ..limits import ServerLimits
from ..live_table import LiveTable
from ..manager import TableManager
from ..records import BytesCache
from ..refusals import MESSAGES, Refusal, RefusalKind
from ..storage import Storage

T = TypeVar("T")

TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")  # what tables.new_table_id makes (12 characters)


@dataclass
class Server:
    """The collaborators every route may use, and the limits the routes keep themselves."""

    manager: TableManager
    storage: Storage
    analyst: Analyst
    limits: ServerLimits
    seat_takes: AddressBuckets = field(init=False)  # by address
    record_takes: AddressBuckets = field(init=False)  # by token
    deal_takes: AddressBuckets = field(init=False)  # by token
    analysis_takes: AddressBuckets = field(init=False)  # by token
    analysis_takes_by_address: AddressBuckets = field(init=False)
    stored_reads: AddressBuckets = field(init=False)  # by address: reads of a stored table
    records: BytesCache = field(init=False)
    deals_kept: BytesCache = field(init=False)
    archived_claims: asyncio.Lock = field(init=False, default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        limits = self.limits
        self.seat_takes = AddressBuckets(limits.seat_takes_per_minute, 5)
        self.record_takes = AddressBuckets(limits.records_per_minute, limits.record_burst)
        self.deal_takes = AddressBuckets(limits.deals_per_minute, limits.deal_burst)
        self.analysis_takes = AddressBuckets(limits.analyses_per_minute, limits.analysis_burst)
        self.analysis_takes_by_address = AddressBuckets(limits.analyses_per_minute_per_address,
                                                        limits.analysis_burst_per_address)
        self.stored_reads = AddressBuckets(limits.stored_reads_per_minute_per_address,
                                           limits.stored_read_burst_per_address)
        self.records = BytesCache(limits.record_cache_bytes)
        self.deals_kept = BytesCache(limits.record_cache_bytes // 4)

    def limit(self, allowed: bool, rule: str, message: str, retry_after: float) -> None:
        """Refuse (too many, counted under ``rule``) unless ``allowed``."""
        if not allowed:
            self.manager.count_refusal(rule)
            raise Refusal(rule, message, RefusalKind.TOO_MANY, retry_after)

    async def off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """Replaying a stored table takes ~0.1 ms a deal, too long for the event loop that
        every table shares: it runs on the reader thread (without ``read``'s retries: a
        record that does not replay now is answered "try again")."""
        return await asyncio.get_running_loop().run_in_executor(self.manager.store.reader, fn, *args)


def get_server(conn: HTTPConnection) -> Server:
    server: Server = conn.app.state.server
    return server


ServerDep = Annotated[Server, Depends(get_server)]


def live_table(table_id: str, server: ServerDep) -> LiveTable:
    """The live table of the path's ``table_id`` (404 when there is none)."""
    live = server.manager.get(table_id)
    if live is None:
        raise StarletteHTTPException(404, f"no table {table_id!r}")
    return live


LiveDep = Annotated[LiveTable, Depends(live_table)]


def known_id(table_id: str) -> str:
    """A table id the server could have made (404 otherwise: no database read for junk)."""
    if not TABLE_ID.fullmatch(table_id):
        raise Refusal("unknown table", f"no table {table_id!r}", RefusalKind.NOT_FOUND)
    return table_id


def refuse_token_in_url(conn: HTTPConnection) -> None:
    """Refuse a token in the URL's query: a URL is written to the logs of every proxy on the
    way (nginx's access log, its error log on an upstream error), so a bearer credential
    there ends up on disk. Refused even when it would be valid, so that no client leaks it
    by accident and keeps working."""
    if "token" in conn.query_params:
        raise Refusal("token in url", MESSAGES["token in url"], RefusalKind.INVALID)


def request_token(request: Request) -> str:
    """A table's token from ``Authorization: Bearer …`` (never from the URL:
    ``refuse_token_in_url``)."""
    refuse_token_in_url(request)
    return request.headers.get("authorization", "").removeprefix("Bearer ").strip()


TokenDep = Annotated[str, Depends(request_token)]


def client_address(conn: HTTPConnection) -> str:
    return conn.client.host if conn.client else ""


AddressDep = Annotated[str, Depends(client_address)]


def seat_rate(server: ServerDep, address: AddressDep) -> None:
    """Seats taken from the lobby, per address."""
    server.limit(server.seat_takes.allow(address), "seat rate", MESSAGES["seat rate"], 60)


def require_role(live: LiveTable, token: str, roles: tuple[str, ...], message: str) -> tuple[str, int | None]:
    """Who ``token`` is at the table, refused (403) unless its role is one of ``roles``
    ("admin", "seat", "spectator")."""
    who = live.auth(token)
    if who is None or who[0] not in roles:
        raise Refusal("token", message, RefusalKind.FORBIDDEN)
    return who

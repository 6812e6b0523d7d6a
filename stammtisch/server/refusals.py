"""Refusals of the server: why a request or a message is not done, by kind.

A ``Refusal`` names the rule it meets (``rule``: a stable machine code the web client and the
tests read), says why in English (``message``) and tells what it means for the client
(``kind``). The HTTP status of each kind is chosen here and nowhere else (``STATUS``); over
the WebSocket every kind is the same ``{"type": "error", "rule", "message", "seq"?}``.

The engine's ``IllegalAction`` (an action the rules of the game do not allow) is not a
refusal of the server's: it stays what it is, and the routes answer it as a conflict with
the table's state.
"""

from __future__ import annotations

import math
import sqlite3
from enum import StrEnum
from typing import Any

from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

#: The routes' refusal messages (rule code → English text), kept together for the translation
#: catalogue.
MESSAGES = {
    "full": "this table has as many connections as it may ({n})",
    "address": "too many connections from your address ({n})",
    "depth": "a message may be nested at most {n} levels deep",
    "protocol": "a message is a JSON object with a \"type\"",
    "event": "an action message needs the \"event\" number of the state it answers",
    "record token": "the record needs a token of this table (Authorization: Bearer …)",
    "archived": "the table {id!r} is archived ({reason})",
    "analysis token": "the analysis needs a token of this table (Authorization: Bearer …)",
    "analysis not over": "deal {deal} is not over ({finished} deals are): a deal is analysed once it is over",
    "analysis failed": "the analysis failed; try again later",
    "record behind": "the database is still writing this table's latest deals (it was busy); "
                     "try again in a few seconds",
    "turn timer": "the turn timer is 0 (off) or {lo}–{hi} seconds, not {n}",
    "open bot": "an open seat is for a person from the lobby, not a bot",
    "open unlisted": "open seats are for a table listed in the lobby (listed: true)",
    "seat rate": "too many seats taken from your address; try again in a minute",
    "record rate": "this link has asked for the record too often; try again in a few seconds",
    "read rate": "your address has asked for records, past deals or analyses too often; try again in a few "
                 "seconds",
    "deal token": "a past deal needs a token of this table (Authorization: Bearer …)",
    "deal not over": "deal {deal} is not over ({finished} deals are)",
    "analysis rate": "too many analyses asked for lately; try again in a few seconds",
    "analysis busy": "an analysis of another deal of this table is under way; try again when it is done",
    "analysis queue full": "the server is analysing as many deals as it may; try again in a moment",
    "analysis share": "your address has as many analyses waiting or under way as one client may; try again "
                      "when one is done",
    "workers failing": "the server's analysis worker keeps failing; try again later",
    "bot deals": "a table of bots plays at most {n} deals",
    "pace": "the pace between deals is \"wait\" (not at a table of bots) or {lo}–{hi} seconds",
    "search bots": "the tables made from your address seat as many search bots (Expert and pimc) "
                   "as they may ({n}); close a table or choose the heuristic bot",
    "lobby seat": "seat {seat} is for a player from the lobby: only he holds its link",
    "hello": "the first message of a connection is {\"type\": \"hello\", \"token\": …} "
             "with the table's token",
    "hello late": "no hello came in time: the first message of a connection is "
                  "{\"type\": \"hello\", \"token\": …}",
    "hello again": "a connection says hello once, in its first message",
    "restarting": "the server is restarting; connect again in a moment",
    "token in url": "a token goes in the Authorization header (Authorization: Bearer …) or, on "
                    "the WebSocket, in its first message ({\"type\": \"hello\", \"token\": …}), "
                    "never in the URL: URLs end up in logs",
}


class RefusalKind(StrEnum):
    """What a refusal means for the client."""

    INVALID = "invalid"  # the request itself is wrong: asking again the same way never works
    MALFORMED = "malformed"  # the request's body does not fit its model
    FORBIDDEN = "forbidden"  # this token (or none) may not do it
    NOT_FOUND = "not found"
    GONE = "gone"  # the table was archived
    CONFLICT = "conflict"  # not now: the table's state does not allow it
    TOO_LARGE = "too large"
    TOO_MANY = "too many"  # too many, or too fast: wait (``retry_after``)
    UNAVAILABLE = "unavailable"  # storage busy, workers failing: nothing changed, try again
    SERVER = "server"  # a fault of the server's (logged with its traceback)


#: The one mapping of a refusal's kind to its HTTP status.
STATUS: dict[RefusalKind, int] = {
    RefusalKind.INVALID: 400,
    RefusalKind.MALFORMED: 422,
    RefusalKind.FORBIDDEN: 403,
    RefusalKind.NOT_FOUND: 404,
    RefusalKind.GONE: 410,
    RefusalKind.CONFLICT: 409,
    RefusalKind.TOO_LARGE: 413,
    RefusalKind.TOO_MANY: 429,
    RefusalKind.UNAVAILABLE: 503,
    RefusalKind.SERVER: 500,
}


class Refusal(Exception):
    """A request or message the server does not do; nothing changed. ``retry_after``: seconds
    after which asking again may succeed (sent as ``Retry-After``)."""

    def __init__(self, rule: str, message: str, kind: RefusalKind = RefusalKind.CONFLICT,
                 retry_after: float | None = None) -> None:
        super().__init__(f"{message} ({rule})")
        self.rule = rule
        self.message = message
        self.kind = kind
        self.retry_after = retry_after

    @property
    def status(self) -> int:
        return STATUS[self.kind]


class NotHolding(RuntimeError):
    """A commit refused by the process itself: it is not sure it still holds the leases of its
    tables (peers.py), so another process may run them now; it may succeed later."""


class LeaseLost(Exception):
    """An event of a table refused because this process no longer holds the table's lease
    (peers.py): another process runs it now, and the event must never be committed here.
    Final for this copy of the table, which is dropped; its clients connect again and reach
    the new holder."""


def _storage_errors() -> tuple[type[Exception], ...]:
    """SQLAlchemy's errors of the database, the drivers' own (the event rows' writer talks to
    the driver directly: row_writer.py), the file system's, and ``NotHolding``."""
    errors: list[type[Exception]] = [DBAPIError, PoolTimeout, sqlite3.Error, OSError, NotHolding]
    try:
        import psycopg  # the ``postgres`` extra
    except ImportError:
        pass
    else:
        errors.append(psycopg.Error)
    return tuple(errors)


#: What a failing database or spill file raises: the event store retries these (and only
#: these) until its deadline, then raises ``StorageUnavailable``. Anything else is a fault.
STORAGE_ERRORS: tuple[type[Exception], ...] = _storage_errors()


class StorageUnavailable(Exception):
    """The database (or the spill file) did not do a call within the event store's deadline
    (``ServerLimits.commit_deadline``): nothing changed, the request may succeed later. The
    one storage error the code above the event store catches; the last error of the retries
    is its ``__cause__``."""


def error_body(message: str, rule: str | None) -> dict[str, Any]:
    """The JSON body of every refused HTTP request: ``{"error": message, "rule": rule}``."""
    body: dict[str, Any] = {"error": message}
    if rule is not None:
        body["rule"] = rule
    return body


def error_response(status: int, message: str, rule: str | None = None,
                   headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error_body(message, rule), status_code=status, headers=headers)


def refusal_response(r: Refusal) -> JSONResponse:
    """The HTTP answer to a refusal: its kind's status, the error body, and ``Retry-After``
    (whole seconds, at least 1) when it has one."""
    headers = None
    if r.retry_after is not None:
        headers = {"Retry-After": str(max(1, math.ceil(r.retry_after)))}
    return error_response(r.status, r.message, r.rule, headers)

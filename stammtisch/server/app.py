"""The web table: a FastAPI app (REST + one WebSocket per client) and its static web client.

Endpoints (all errors are JSON ``{"error": "…", "rule": "…"}`` with a 4xx status; never a
stack trace):

- ``GET  /api/rulesets`` – rule set ids, titles and options (kind, choices, default, maximum,
  help).
- ``POST /api/tables`` – ``{"ruleset", "options": {key: value}, "seats": [{"name", "bot"}],
  "max_deals"}`` → the table id, one invite link and token per human seat, a spectator link,
  and an admin token. Tokens are shown only here: the server keeps their SHA-256 digests.
  Limited per client address and by the number of live tables (429 when refused).
- ``GET  /api/tables`` – the lobby's list of open tables: tables their creator listed that
  have a free seat (rule set, seats taken and free).
- ``POST /api/tables/{id}/take`` – ``{"seat": n | null, "name": "…" | null}``: a stranger from
  the lobby takes a free seat of a listed table and gets its own link and token (as an
  invite); his name replaces the seat's before the table starts.
- ``POST /api/tables/{id}/start`` – ``{"token": admin or human seat token}``: deal 1.
- ``POST /api/tables/{id}/close`` – ``{"token": admin}``: no more deals; every seat may now
  download the full record.
- ``POST /api/tables/{id}/reissue`` – ``{"token": admin, "seat": n | null}``: a new link for
  a seat (null: the spectators); the old link stops working and its sockets are closed.
- ``GET  /api/tables/{id}`` – public info: players, seats (connected?), balances, pot, dealer,
  deal number and the score sheet (per finished deal: net per player and the pot after it; the
  last 20 deals, with ``score_earlier`` the number of deals before them: the record has all).
- ``GET  /api/tables/{id}/record?token=…`` – the finished deals. With the admin token (or any
  seat's token once the table is closed): the full, replayable ``stammtisch-record/1``. With a
  seat's or the spectator's token during the session: ``stammtisch-redacted/1``, each deal as
  that token saw it at its end (its terminal view: passers' folded cards, the talon and the
  tapp stay hidden). The deck of an unfinished deal never leaves the server.
- ``WS   /ws/{id}?token=…`` – see ``PROTOCOL`` below.
- ``GET  /`` and ``GET /t/{id}`` – the web client (invite links are ``/t/{id}#<token>``: the
  token rides in the URL fragment, which browsers never send to a server).
- ``GET  /api/docs`` and ``/api/openapi.json`` only when the app is made with ``api_docs=True``.

Limits (sizes, rates, caps, timeouts) are in ``limits.ServerLimits``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import json
import logging
import math
import os
import re
import socket
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

import orjson
from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send

from ..bots import BOT_NAMES, LEVEL_NAMES, PLAYER_NAMES, SEARCH_BOTS, algorithm_of
from ..explain import explain_messages
from ..games.base import IllegalAction
from ..record import table_to_record
from ..rules import PRESETS, RuleError, option_specs
from ..rules import ruleset as build_ruleset
from ..table import Table
from .analysis import AnalysisBusy, AnalysisQueueFull, Analyst
from .api_docs import api_docs_router
from .guard import Guard
from .guide_routes import router as guide_router
from .limits import (
    MAX_DEALS_LIMIT,
    OPTION_MAXIMA,
    ServerLimits,
    check_option_bounds,
    check_rules_bounds,
    count_down,
)
from .names import NameError_, clean_name, look_alike_pair
from .spill import Spill
from .storage import Storage, StoredSocial, StoredTable, default_database_url, spill_path_for, token_digest
from .tables import SOCIAL_MESSAGES, TRY_AGAIN, AddressBuckets, Conn, LiveTable, Message, TableManager, dumps
from .worker_pool import WorkersFailing

PROTOCOL = """
Client → server (JSON text frames, at most ServerLimits.max_message bytes and max_json_depth
levels deep, at most seat_rate per second per seat, all its sockets together):
  {"type": "action", "action": "play:HA", "event": 41, "seq": 7}
        event: the number of the state the action answers (required; a stale one is refused
        with rule "stale" and the current state is sent again); seq optional, echoed in errors
  {"type": "next"}    start the next deal now (a seated human, after a deal is over)
  {"type": "start"}   start the table (a seated human, before deal 1)
  {"type": "ping"}
  {"type": "chat", "text": "…"}  a chat line (a seat; at most chat_max_chars characters, at most
                      chat_rate lines per second per seat; stored with the table)
  {"type": "back"}    the player of a seat a stand-in bot plays for is back
  {"type": "rematch", "agree": true|false}  ask for (or agree to) a new table with the same
                      seats, rule set and options (a seat, when no deal is being played), or
                      decline it (agree: false); it is made, and this table closed, once every
                      seated player (a human seat whose player is connected) has agreed; the
                      table's "rematch_votes" lists the seats that have
  {"type": "hint"}    at a practice table ("hints" in the table's info), the seat on turn asks
                      what the search bot would do (at most hint_rate per second per seat)
Server → client:
  {"type": "hello", "role": "seat"|"spectator"|"admin", "seat": int|null, "table": id}
                      (the admin watches as a spectator does, and may close the table)
  {"type": "state", "event": n, "view": <view(seat)> | null, "table": {…}}  after every event;
                      "table" only when the table's info changed since this client last got
                      it, but for its "events", which is n: keep the last one and set its
                      "events" (the first state message of a connection always has it).
                      Its "explanation" (the last finished deal's, else null) is a list of
                      lines, each a catalogue message {"key", "params"} whose parameters are
                      values or messages themselves: the page renders them in its reader's
                      language from /api/texts/{lang} (stammtisch.i18n.render does the same)
  {"type": "presence", "seats": [{"name", "bot", "connected"}]}  when seats come or go
                                 (changes within ServerLimits.presence_delay are sent once)
  {"type": "error", "rule": "…", "message": "…", "seq": …}   the state is unchanged
  {"type": "pong", "seq": …}   seq only when the ping had one
  {"type": "chat", "messages": [{"seat", "name", "text", "at"}], "history": true}  the latest
                                 lines on connecting; then each new line (without "history")
  {"type": "rematch", "table": id, "link": "/t/…#token"}  this client's seat at the rematch
  {"type": "hint asked", "seat": n, "name": "…"}  to every client: a seat asked for a hint
  {"type": "hint", "event": n, "action": "play:HA", "why": {"key", "params"}}  to the asker
                                 alone: the bot's action and one line of why, for state n
A table with a turn timer (turn_seconds > 0): when the seat on turn has not acted in time, a
bot plays for it (its seat shows "away": true) until its player connects again, acts or sends
"back".
"""

STATIC = Path(__file__).parent / "static"
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")  # what tables.new_table_id makes (12 characters)
log = logging.getLogger("stammtisch.server")
MAX_MESSAGE = ServerLimits().max_message

# Refusal messages (rule code → English text) kept together for the coming translation catalogue.
MESSAGES = {
    "full": "this table has as many connections as it may ({n})",
    "address": "too many connections from your address ({n})",
    "depth": "a message may be nested at most {n} levels deep",
    "protocol": "a message is a JSON object with a \"type\"",
    "event": "an action message needs the \"event\" number of the state it answers",
    "record token": "the record needs a token of this table (?token=…)",
    "archived": "the table {id!r} is archived ({reason})",
    "analysis token": "the analysis needs a token of this table (?token=…)",
    "analysis not over": "deal {deal} is not over ({finished} deals are): a deal is analysed once it is over",
    "analysis failed": "the analysis failed; try again later",
    "record behind": "the database is still writing this table's latest deals (it was busy); "
                     "try again in a few seconds",
    "turn timer": "the turn timer is 0 (off) or {lo}–{hi} seconds, not {n}",
    "open bot": "an open seat is for a person from the lobby, not a bot",
    "open unlisted": "open seats are for a table listed in the lobby (listed: true)",
    "seat rate": "too many seats taken from your address; try again in a minute",
    "record rate": "this link has asked for the record too often; try again in a few seconds",
    "deal token": "a past deal needs a token of this table (?token=…)",
    "deal not over": "deal {deal} is not over ({finished} deals are)",
    "analysis rate": "too many analyses asked for lately; try again in a few seconds",
    "analysis busy": "an analysis of another deal of this table is under way; try again when it is done",
    "analysis queue full": "the server is analysing as many deals as it may; try again in a moment",
    "workers failing": "the server's analysis worker keeps failing; try again later",
    "bot deals": "a table of bots plays at most {n} deals",
    "pace": "the pace between deals is \"wait\" (not at a table of bots) or {lo}–{hi} seconds",
    "search bots": "the tables made from your address seat as many search bots (pimc, ismcts) "
                   "as they may ({n}); close a table or choose the heuristic bot",
    "lobby seat": "seat {seat} is for a player from the lobby: only he holds its link",
}


class SeatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    bot: str | None = None
    open: bool = False  # free for a stranger from the lobby (a listed table)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        try:
            return clean_name(v)
        except NameError_ as e:
            raise ValueError(str(e)) from None

    @field_validator("bot")
    @classmethod
    def _bot(cls, v: str | None) -> str | None:
        if v in (None, "", "human"):
            return None
        if v not in PLAYER_NAMES:
            raise ValueError(f"unknown bot {v!r}; bots are {', '.join(PLAYER_NAMES)}")
        return v


class TableIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ruleset: str = Field(max_length=64)
    options: dict[str, str | int | bool | None] = Field(default_factory=dict, max_length=40)
    seats: list[SeatIn] = Field(min_length=2, max_length=10)
    max_deals: int | None = Field(default=None, ge=1, le=MAX_DEALS_LIMIT)
    turn_seconds: int = 0  # the turn timer (0: off); bounds: ServerLimits.turn_seconds_min/max
    listed: bool = False  # shown in the lobby's list of open tables
    # between deals: "wait" (the next deal when every seated player pressed Next; the default
    # with a human seat) or seconds (ServerLimits.pace_min/max; a table of bots: the server's)
    pace: Literal["wait"] | float | None = None
    hints: bool = False  # a practice table: a seat on turn may ask the search bot for a hint


class TakeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seat: int | None = Field(default=None, ge=0, le=9)
    name: str | None = Field(default=None, min_length=1, max_length=200)  # before the start only

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        if v is None:
            return None
        try:
            return clean_name(v)
        except NameError_ as e:
            raise ValueError(str(e)) from None


class TokenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=200)


class ReissueIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=200)
    seat: int | None = Field(default=None, ge=0, le=9)


class _RedactTokens(logging.Filter):
    """Keep seat tokens out of the access log (``?token=…`` of WebSocket URLs)."""

    _re = re.compile(r"(token=)[^&\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(self._re.sub(r"\1…", a) if isinstance(a, str) else a
                                for a in record.args)
        return True


T = TypeVar("T")


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


def direct_writer(ws: WebSocket) -> Callable[[Message], bool] | None:
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
    if proto is None or not all(hasattr(proto, part) for part in _SANSIO_PARTS):
        return None
    from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

    if not isinstance(proto, WebSocketsSansIOProtocol):  # framed_websocket_protocol's is one
        return None
    from websockets.protocol import State  # installed: the protocol above is built on it

    conn, transport, writable = proto.conn, proto.transport, proto.writable
    plain, opened = not conn.extensions, State.OPEN

    def write_now(text: Message) -> bool:
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


def _error(status: int, message: str, rule: str | None = None,
           headers: dict[str, str] | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": message}
    if rule is not None:
        body["rule"] = rule
    return JSONResponse(body, status_code=status, headers=headers)


def _refuse_unless(live: LiveTable, token: str, roles: tuple[str, ...], message: str) -> JSONResponse | None:
    """The 403 answer unless ``token`` is one of the table's tokens with a role in ``roles``
    ("admin", "seat", "spectator"); None when it is."""
    who = live.auth(token)
    if who is None or who[0] not in roles:
        return _error(403, message, "token")
    return None


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        msg = e.get("msg", "invalid")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts) or "invalid request"


#: Bots the web table does not seat. pimc and ismcts think in the table manager's worker
#: process (server/thinker.py), never on the event loop; OpenSpiel's ISMCTS would think inside
#: it (up to ~0.8 s a move on tapp/modern) and hold up every other table.
NOT_AT_THE_WEB_TABLE = frozenset({"openspiel-ismcts"})


def available_bots(family: str) -> list[str]:
    """The bot names the web table seats for a game family: the levels first (Beginner, Club
    player, Expert), then the algorithms for researchers (``BOT_NAMES``: each plays both
    families, an optional one is listed only where it can play) but those
    ``NOT_AT_THE_WEB_TABLE``. Nothing is hidden here when a bot fails to be made: that is a
    bug, and it surfaces where the bot is seated."""
    if family not in ("tippen", "tapp"):
        raise ValueError(f"unknown game family {family!r}")
    return [*LEVEL_NAMES, *(name for name in BOT_NAMES if name not in NOT_AT_THE_WEB_TABLE)]


def rulesets_payload() -> list[dict[str, Any]]:
    out = []
    bots = {f: available_bots(f) for f in ("tippen", "tapp")}
    for rid, preset in PRESETS.items():
        rules = build_ruleset(rid)
        out.append({
            "id": rid,
            "family": rules.family,
            "title": rules.title,
            "players": rules.players,
            "min_players": preset.min_players,
            "max_players": preset.max_players_whist52 or preset.max_players,
            # with pack=piquet32 a Tippen rule set seats fewer than with its 52-card extension
            "max_players_piquet32": preset.max_players if rules.family == "tippen" else None,
            "bots": bots[rules.family],
            "options": [
                {"name": spec.name, "kind": spec.kind, "choices": list(spec.choices),
                 "default": preset.defaults.get(spec.name), "help": spec.help,
                 "minimum": spec.minimum, "maximum": OPTION_MAXIMA.get(spec.name)}
                for spec in option_specs(rid).values()
            ],
        })
    return out


def stored_table(st: StoredTable) -> Table:
    """A stored table's players and rules, before its first deal."""
    return Table(build_ruleset(st.ruleset, st.options), [s.name for s in st.seats],
                 st.first_dealer or 0)


def replay_deals(table: Table, st: StoredTable) -> Iterator[None]:
    """Replay the stored deals on ``table``, one step per deal (the table then holds that
    deal's last stored event)."""
    for deck, actions in st.deals:
        table.start_deal(table.game.deck_from_strings(deck))
        for s, text in actions:
            table.apply(text, s)
        yield


def replayed(st: StoredTable, deals: int | None = None) -> Table:
    """The table of a stored record with every stored event replayed (``deals``: those of
    its first deals only)."""
    table = stored_table(st)
    for _ in itertools.islice(replay_deals(table, st), deals):
        pass
    return table


def finished_deals(table: Table) -> int:
    return table.deal_count - (1 if table.in_deal else 0)


def public_record(table: Table) -> dict[str, Any]:
    """The full record of the finished deals: an unfinished last deal (its deck!) is dropped."""
    rec = table_to_record(table)
    if table.in_deal:
        rec["deals"] = rec["deals"][:-1]
    return rec


REDACTED_NOTE = ("Each deal as this token saw it when the deal ended (its terminal view): cards "
                 "the rules never show (a passer's folded cards, the talon, the tapp, other hands) "
                 "are hidden. The full, replayable record needs the admin token, or any seat's "
                 "token once the table is closed.")


def redacted_record(st: StoredTable, seat: int | None) -> dict[str, Any]:
    """The finished deals as ``seat`` (None: a spectator) saw them: terminal views only."""
    table = stored_table(st)
    deals = []
    for k, _ in enumerate(replay_deals(table, st)):
        state = table.state
        if state is None or not state.is_terminal():
            break
        deals.append({"deal": k + 1, "view": state.view(seat)})
    return {"format": "stammtisch-redacted/1", "note": REDACTED_NOTE, "ruleset": st.ruleset,
            "options": st.options, "players": [s.name for s in st.seats], "seat": seat,
            "deals": deals}


def deal_as_seen(st: StoredTable, deal: int, seat: int | None) -> dict[str, Any] | None:
    """Finished deal ``deal`` (1-based) of a stored table as ``seat`` (None: a spectator) saw
    it at its end, with the explanation of its result and its tricks card by card (every card
    played was shown to all); None when the database does not hold it finished."""
    table = stored_table(st)
    for k, _ in enumerate(itertools.islice(replay_deals(table, st), deal)):
        if k + 1 < deal:
            continue
        state = table.state
        result = table.deals[-1].result
        if state is None or result is None or not state.is_terminal():
            return None
        suits = str(getattr(table.rules, "suits", "french"))
        tricks = [{"leader": trick["cards"][0][0], "cards": trick["cards"], "winner": trick["winner"]}
                  for trick in result.summary.get("tricks_log") or [] if trick["cards"]]
        return {"deal": deal, "players": list(table.players), "view": state.view(seat),
                "explanation": explain_messages(result.summary, table.players, suits),
                "tricks": tricks}
    return None


def record_key(table_id: str, finished: int, who: tuple[str, int | None],
               closed: bool) -> tuple[Any, ...]:
    """What a record download depends on: the table, its finished deals, and whose it is (the
    full record once the table has ended, else the seat's view; the admin's is a
    spectator's)."""
    full = closed and who[0] in ("seat", "admin")
    return (table_id, finished, full, None if full or who[0] != "seat" else who[1])


class BytesCache:
    """Built answers kept by key, the least recently used dropped beyond ``limit`` bytes."""

    def __init__(self, limit: int):
        self.limit = limit
        self.size = 0
        self._kept: OrderedDict[Any, bytes] = OrderedDict()

    def get(self, key: Any) -> bytes | None:
        found = self._kept.get(key)
        if found is not None:
            self._kept.move_to_end(key)
        return found

    def put(self, key: Any, body: bytes) -> None:
        if len(body) > self.limit:
            return
        old = self._kept.pop(key, None)
        if old is not None:
            self.size -= len(old)
        self._kept[key] = body
        self.size += len(body)
        while self.size > self.limit:
            _, dropped = self._kept.popitem(last=False)
            self.size -= len(dropped)


def auth_stored(st: StoredTable, token: str) -> tuple[str, int | None] | None:
    """``LiveTable.auth`` for a table read from the database (an archived one)."""
    import hmac

    if not token or len(token) > 200:
        return None
    d = token_digest(token)
    found: tuple[str, int | None] | None = None
    for s in st.seats:
        if s.token_digest is not None and hmac.compare_digest(d, s.token_digest):
            found = ("seat", s.seat)
    if hmac.compare_digest(d, st.spectator_digest):
        found = ("spectator", None)
    if hmac.compare_digest(d, st.admin_digest):
        found = ("admin", None)
    return found


#: ``parse_message``: the fast reader did not read the message
_UNREAD = object()
#: ``parse_message``: a number the fast reader may read otherwise than json
_LONG_NUMBER = re.compile(r"[0-9]{19}")


def parse_message(text: str, max_depth: int) -> tuple[dict[str, Any] | None, str, str]:
    """A client's WebSocket message, or None with the refusal's rule and message."""
    # orjson reads the usual message in a fraction of the time. What it refuses (NaN, a lone
    # surrogate) json reads as before, and so a message with a number of 19 digits or more:
    # orjson reads an integer beyond 64 bits as a float, json as an int. Every message is
    # read, or refused, as json alone would.
    msg: Any = _UNREAD
    if not _LONG_NUMBER.search(text):
        try:
            msg = orjson.loads(text)
        except (ValueError, RecursionError):
            pass
    if msg is _UNREAD:
        try:
            msg = json.loads(text)
        except RecursionError:
            return None, "depth", MESSAGES["depth"].format(n=max_depth)
        except ValueError:
            return None, "protocol", MESSAGES["protocol"]
    # counting brackets first keeps the depth walk off the hot path of small messages
    if (text.count("[") + text.count("{") > max_depth
            and json_depth_exceeds(msg, max_depth)):
        return None, "depth", MESSAGES["depth"].format(n=max_depth)
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        return None, "protocol", MESSAGES["protocol"]
    return msg, "", ""


def message_seq(msg: dict[str, Any]) -> int | str | None:
    """A message's ``seq`` (the client's own number, sent back with the answer), when it is a
    short string or an integer a browser holds exactly; else None."""
    seq = msg.get("seq")
    if not isinstance(seq, (int, str)) or isinstance(seq, bool) or \
            (isinstance(seq, str) and len(seq) > 64) or (isinstance(seq, int) and abs(seq) > 2**53):
        return None
    return seq


def action_fields(msg: dict[str, Any]) -> tuple[str, int]:
    """An action message's action text and the event number it answers; IllegalAction when
    either is missing or malformed."""
    action = msg.get("action")
    if not isinstance(action, str) or not action or len(action) > 200:
        raise IllegalAction("protocol", "an action message needs an \"action\" string")
    event = msg.get("event")
    if not isinstance(event, int) or isinstance(event, bool):
        raise IllegalAction("event", MESSAGES["event"])
    return action, event


def json_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests deeper than ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            items = list(item.values())
        elif isinstance(item, list):
            items = list(item)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((x, depth + 1) for x in items)
    return False


def create_app(database_url: str | None = None, data_dir: Path | None = None,
               bot_delay: float = 0.6, deal_pause: float = 8.0,
               limits: ServerLimits | None = None, api_docs: bool = False) -> FastAPI:
    """The app. ``bot_delay``: seconds before a bot acts; ``deal_pause``: seconds between a
    finished deal and the next one (a human may send ``next`` to go on at once); ``limits``:
    sizes, rates and caps; ``api_docs``: serve ``/api/docs`` and ``/api/openapi.json``."""
    limits = limits or ServerLimits()
    url = database_url or default_database_url(data_dir)
    storage = Storage(url, busy_ms=limits.sqlite_busy_ms)
    spill_path = spill_path_for(url, data_dir)
    manager = TableManager(storage, bot_delay=bot_delay, deal_pause=deal_pause, limits=limits,
                           spill=Spill(spill_path) if spill_path is not None else None)
    manager.load_all()
    analyst = Analyst(max_queued=limits.analysis_queue)
    analysis_takes = AddressBuckets(limits.analyses_per_minute, limits.analysis_burst)  # by token
    analysis_takes_by_address = AddressBuckets(limits.analyses_per_minute_per_address,
                                               limits.analysis_burst_per_address)
    seat_takes = AddressBuckets(limits.seat_takes_per_minute, 5)
    archived_claims = asyncio.Lock()
    record_takes = AddressBuckets(limits.records_per_minute, limits.record_burst)  # by token
    records = BytesCache(limits.record_cache_bytes)
    deal_takes = AddressBuckets(limits.deals_per_minute, limits.deal_burst)  # by token
    deals_kept = BytesCache(limits.record_cache_bytes // 4)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager.resume()
        sweeper = asyncio.get_running_loop().create_task(manager.sweeper())
        try:
            yield
        finally:
            sweeper.cancel()
            analyst.shutdown()
            manager.shutdown()
            storage.close()

    app = FastAPI(title="stammtisch", lifespan=lifespan, docs_url=None, redoc_url=None,  # docs: api_docs.py
                  openapi_url="/api/openapi.json" if api_docs else None)
    app.state.manager = manager
    app.state.analyst = analyst
    app.state.storage = storage
    app.state.limits = limits
    app.add_middleware(Guard, max_body=limits.max_body)
    app.add_middleware(KeepWebSocketSend)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _describe_validation(exc), "invalid")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), "size" if exc.status_code == 413 else None)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error on %s", request.url.path)
        return _error(500, "internal server error", "server")

    def _table(table_id: str) -> LiveTable:
        live = manager.get(table_id)
        if live is None:
            raise StarletteHTTPException(404, f"no table {table_id!r}")
        return live

    # --- REST -------------------------------------------------------------------------

    @app.get("/api/rulesets")
    def get_rulesets() -> list[dict[str, Any]]:
        return rulesets_payload()

    @app.post("/api/tables", status_code=201)
    async def post_table(body: TableIn, request: Request) -> Any:
        address = request.client.host if request.client else ""
        if body.ruleset not in PRESETS:
            return _error(400, f"unknown rule set {body.ruleset!r}; rule sets are "
                               f"{', '.join(PRESETS)}", "ruleset")
        options = dict(body.options)
        options.setdefault("players", len(body.seats))
        bounds = check_option_bounds(options)
        if bounds:
            return _error(400, bounds, "option")
        try:
            rules = build_ruleset(body.ruleset, options)
        except (RuleError, ValueError) as e:
            return _error(400, str(e), "option")
        bounds = check_rules_bounds(rules)
        if bounds:
            return _error(400, bounds, "option")
        if rules.players != len(body.seats):
            return _error(400, f"the table has {len(body.seats)} seats but the rule set is "
                               f"set for {rules.players} players", "players")
        for s in body.seats:
            if s.bot and s.bot not in available_bots(rules.family):
                return _error(400, f"the {s.bot} bot is not available for {rules.family} yet", "bot")
        if body.turn_seconds and not (limits.turn_seconds_min <= body.turn_seconds
                                      <= limits.turn_seconds_max):
            return _error(400, MESSAGES["turn timer"].format(
                lo=limits.turn_seconds_min, hi=limits.turn_seconds_max, n=body.turn_seconds),
                "turn timer")
        bots_only = all(s.bot for s in body.seats)
        if body.pace == "wait" and bots_only or isinstance(body.pace, float) and not (
                limits.pace_min <= body.pace <= limits.pace_max):
            return _error(400, MESSAGES["pace"].format(lo=limits.pace_min, hi=limits.pace_max), "pace")
        open_seats = [i for i, s in enumerate(body.seats) if s.open]
        if any(body.seats[i].bot for i in open_seats):
            return _error(400, MESSAGES["open bot"], "open seat")
        if open_seats and not body.listed:
            return _error(400, MESSAGES["open unlisted"], "open seat")
        names = [s.name for s in body.seats]
        if len({n.casefold() for n in names}) != len(names):
            return _error(400, "seat names must be different", "names")
        alike = look_alike_pair(names)
        if alike:
            return _error(400, f"seat names must be different: {alike[0]!r} and {alike[1]!r} look "
                               "alike", "names")
        if body.max_deals is not None and all(s.bot for s in body.seats) \
                and body.max_deals > limits.bot_table_max_deals:
            return _error(400, MESSAGES["bot deals"].format(n=limits.bot_table_max_deals), "max_deals")
        searchers = sum(1 for s in body.seats if s.bot and algorithm_of(s.bot) in SEARCH_BOTS)
        if searchers and manager.search_bots_of(address) + searchers > limits.search_bots_per_address:
            manager.count_refusal("search bots")
            return _error(429, MESSAGES["search bots"].format(n=limits.search_bots_per_address),
                          "search bots", {"Retry-After": "60"})
        refusal = await manager.creation_refusal(address)
        if refusal is not None:
            return _error(429, refusal.message, refusal.rule, {"Retry-After": "60"})
        social = StoredSocial(turn_seconds=body.turn_seconds, listed=body.listed,
                              open_seats=open_seats, creator=address, lobby_seats=open_seats,
                              pace=None if body.pace is None else str(body.pace),
                              hints=body.hints)
        created = await manager.create(body.ruleset, options,
                                       [(s.name, s.bot) for s in body.seats], body.max_deals,
                                       social=social)
        tid = created["id"]
        seats = []
        for i, (s, tok) in enumerate(zip(body.seats, created["seat_tokens"], strict=True)):
            entry: dict[str, Any] = {"seat": i, "name": s.name, "bot": s.bot, "open": s.open}
            if tok:
                entry["token"] = tok
                entry["link"] = f"/t/{tid}#{tok}"
            seats.append(entry)
        return {
            "id": tid,
            "ruleset": body.ruleset,
            "seats": seats,
            "spectator": {"token": created["spectator_token"],
                          "link": f"/t/{tid}#{created['spectator_token']}"},
            "admin_token": created["admin_token"],
            "max_deals": created["table"].max_deals,
            "turn_seconds": body.turn_seconds,
            "listed": body.listed,
            "hints": body.hints,
        }

    @app.get("/api/tables")
    def list_tables() -> dict[str, Any]:
        """The lobby: listed tables with a free seat, newest first."""
        shown = []
        for live in sorted(manager.tables.values(), key=lambda x: -x.created):
            entry = live.listing()
            if entry is not None:
                shown.append(entry)
                if len(shown) >= limits.listed_max:
                    break
        return {"tables": shown}

    @app.post("/api/tables/{table_id}/take")
    async def take_seat(table_id: str, body: TakeIn, request: Request) -> Any:
        live = _table(table_id)
        address = request.client.host if request.client else ""
        if not seat_takes.allow(address):
            manager.count_refusal("seat rate")
            return _error(429, MESSAGES["seat rate"], "seat rate", {"Retry-After": "60"})
        try:
            seat, token = await live.take_seat(body.seat, body.name)
        except IllegalAction as e:
            return _error(503 if e.rule == "storage" else 400 if e.rule == "names" else 409,
                          e.message, e.rule)
        return {"id": table_id, "seat": seat, "name": live.seats[seat].name, "token": token,
                "link": f"/t/{table_id}#{token}"}

    @app.post("/api/tables/{table_id}/start")
    async def start_table(table_id: str, body: TokenIn) -> JSONResponse:
        live = _table(table_id)
        if refusal := _refuse_unless(live, body.token, ("admin", "seat"), "this token may not start the table"):
            return refusal
        try:
            await live.start()
        except IllegalAction as e:
            return _error(503 if e.rule == "storage" else 409, e.message, e.rule)
        return await live_info(live)

    @app.post("/api/tables/{table_id}/close")
    async def close_table(table_id: str, body: TokenIn) -> JSONResponse:
        live = _table(table_id)
        if refusal := _refuse_unless(live, body.token, ("admin",), "only the table's admin token may close the table"):
            return refusal
        try:
            await live.close()
        except Exception:
            return _error(503, TRY_AGAIN, "storage")
        return await live_info(live)

    @app.post("/api/tables/{table_id}/reissue")
    async def reissue_link(table_id: str, body: ReissueIn) -> Any:
        live = _table(table_id)
        if refusal := _refuse_unless(live, body.token, ("admin",), "only the table's admin token may re-issue links"):
            return refusal
        if body.seat is not None and (body.seat >= len(live.seats) or live.seats[body.seat].bot):
            return _error(400, f"seat {body.seat} is not a human seat of this table", "seat")
        if body.seat in live.lobby_seats:
            return _error(400, MESSAGES["lobby seat"].format(seat=body.seat), "lobby seat")
        try:
            token = await manager.reissue(live, body.seat)
        except Exception:
            return _error(503, TRY_AGAIN, "storage")
        return {"seat": body.seat, "token": token, "link": f"/t/{table_id}#{token}"}

    @app.get("/api/tables/{table_id}")
    async def get_table(table_id: str) -> JSONResponse:
        live = manager.get(table_id)
        if live is None:
            return await archived_or_404(table_id)
        return await live_info(live)

    async def archived_or_404(table_id: str) -> JSONResponse:
        # only an id the server could have made is looked up (no database read for junk ids)
        st = await manager.read(storage.load_table, table_id) if TABLE_ID.fullmatch(table_id) else None
        if st is None:
            return _error(404, f"no table {table_id!r}", "unknown table")
        return _error(410, MESSAGES["archived"].format(id=table_id, reason=st.archived_reason),
                      "archived")

    async def live_info(live: LiveTable) -> JSONResponse:
        async with live.lock:  # an event whose commit is under way is not shown
            text = live.info_json()
        return JSONResponse(json.loads(text))

    @app.get("/api/tables/{table_id}/record")
    async def get_record(table_id: str, request: Request, token: str = "") -> Response:
        """The finished deals. While the table plays, every token (the admin's too) gets them
        as its seat saw them (a spectator's view for the admin); once the table has ended
        (closed, or archived), a seat or the admin gets the full, replayable record. Built off
        the event loop, kept per number of finished deals, limited per token."""
        token = token or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not TABLE_ID.fullmatch(table_id):
            return _error(404, f"no table {table_id!r}", "unknown table")
        live = manager.get(table_id)
        finished = -1  # the deals the record must hold (-1: an archived table, all it has)
        who: tuple[str, int | None] | None = None
        closed = True
        if live is not None:  # the database has its record (the live table keeps no old deals)
            async with live.lock:
                who = live.auth(token)
                closed = live.closed
                finished = live.scored
            if who is None:
                return _error(403, MESSAGES["record token"], "token")
        if not record_takes.allow(token_digest(token)):
            manager.count_refusal("record rate")
            return _error(429, MESSAGES["record rate"], "record rate", {"Retry-After": "20"})
        headers = {"Content-Disposition": f'attachment; filename="stammtisch-{table_id}.json"'}
        if who is not None:
            key = record_key(table_id, finished, who, closed)
            kept = records.get(key)
            if kept is not None:
                return Response(kept, media_type="application/json", headers=headers)
        loaded = await stored_record(table_id)
        if isinstance(loaded, JSONResponse):
            return loaded
        st = loaded
        if live is None:
            who = auth_stored(st, token)
        if who is None:
            return _error(403, MESSAGES["record token"], "token")
        full = closed and who[0] in ("seat", "admin")
        seat = who[1]

        def build() -> tuple[bytes, int]:
            """The record as JSON and the finished deals it holds."""
            if full:
                table = replayed(st)
                return orjson.dumps(public_record(table)), finished_deals(table)
            record = redacted_record(st, seat)
            return orjson.dumps(record), len(record["deals"])

        try:
            body, held = await off_loop(build)
        except Exception:  # the stored events do not replay: some still wait in the spill file
            log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
            return record_behind()
        if held < finished:
            return record_behind()
        records.put(record_key(table_id, finished, who, closed), body)
        return Response(body, media_type="application/json", headers=headers)

    async def off_loop(fn: Callable[..., T], *args: Any) -> T:
        """Replaying a stored table takes ~0.1 ms a deal, too long for the event loop that
        every table shares: it runs on the reader thread (without ``read``'s retries: a
        record that does not replay now is answered "try again")."""
        return await asyncio.get_running_loop().run_in_executor(manager.reader, fn, *args)

    def record_behind() -> JSONResponse:
        return _error(503, MESSAGES["record behind"], "storage", {"Retry-After": "5"})

    async def stored_record(table_id: str) -> StoredTable | JSONResponse:
        """A table as its database holds it, or the answer when it cannot be read now."""
        try:
            st = await manager.read(storage.load_table, table_id)
        except Exception:
            log.warning("table %s: its record could not be read", table_id, exc_info=True)
            return _error(503, TRY_AGAIN, "storage", {"Retry-After": "5"})
        if st is None:
            return _error(404, f"no table {table_id!r}", "unknown table")
        return st

    @app.get("/api/tables/{table_id}/deals/{deal}")
    async def get_deal(table_id: str, deal: int, request: Request, token: str = "") -> Response:
        """A finished deal as this token saw it (the Deals panel): its last view (a seat's own,
        a spectator's for the spectator and the admin), the explanation of its result, and its
        tricks card by card. Built off the event loop and kept."""
        token = token or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not TABLE_ID.fullmatch(table_id):
            return _error(404, f"no table {table_id!r}", "unknown table")
        live = manager.get(table_id)
        who: tuple[str, int | None] | None = None
        finished = -1  # an archived table: every stored deal is over
        if live is not None:
            async with live.lock:
                who = live.auth(token)
                finished = live.scored
            if who is None:
                return _error(403, MESSAGES["deal token"], "token")
            if not 1 <= deal <= finished:
                return _error(409, MESSAGES["deal not over"].format(deal=deal, finished=finished),
                              "deal in progress")
        seat_key = who[1] if who is not None and who[0] == "seat" else None
        kept = deals_kept.get((table_id, deal, seat_key)) if who is not None else None
        if kept is not None:
            return Response(kept, media_type="application/json")
        if not deal_takes.allow(token_digest(token)):
            manager.count_refusal("deal rate")
            return _error(429, MESSAGES["record rate"], "deal rate", {"Retry-After": "10"})
        loaded = await stored_record(table_id)
        if isinstance(loaded, JSONResponse):
            return loaded
        st = loaded
        if who is None:
            who = auth_stored(st, token)
            if who is None:
                return _error(403, MESSAGES["deal token"], "token")
            seat_key = who[1] if who[0] == "seat" else None
        if deal < 1:
            return _error(409, MESSAGES["deal not over"].format(deal=deal, finished=0), "deal in progress")

        def build() -> bytes | None:
            answer = deal_as_seen(st, deal, seat_key)
            return None if answer is None else orjson.dumps(answer)

        try:
            body = await off_loop(build)
        except Exception:  # the stored events do not replay: some still wait in the spill file
            log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
            return record_behind()
        if body is None:
            if finished < 0:
                return _error(409, MESSAGES["deal not over"].format(deal=deal, finished=len(st.deals)),
                              "deal in progress")
            return record_behind()
        deals_kept.put((table_id, deal, seat_key), body)
        return Response(body, media_type="application/json")

    @app.get("/api/tables/{table_id}/analysis/{deal}")
    async def get_analysis(table_id: str, deal: int, request: Request, token: str = "") -> JSONResponse:
        """Where were points lost in finished deal ``deal`` (1-based): the open-hand value at
        the start of play and per card played the value before and after it (``stammtisch
        analyze``). Any seat or spectator token; only once the deal is over."""
        token = token or request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        live = _table(table_id)
        async with live.lock:
            who = live.auth(token)
            finished = live.scored
            players = list(live.table.players)
        if who is None:
            return _error(403, MESSAGES["analysis token"], "token")
        if not 1 <= deal <= finished:
            return _error(409, MESSAGES["analysis not over"].format(deal=deal, finished=finished),
                          "deal in progress")
        result = analyst.cached(table_id, deal)
        if result is None:  # the first request: the deal's record from the database
            address = request.client.host if request.client else ""
            if not analysis_takes.allow(token_digest(token)) or not analysis_takes_by_address.allow(address):
                manager.count_refusal("analysis rate")
                return _error(429, MESSAGES["analysis rate"], "analysis rate", {"Retry-After": "20"})
            loaded = await stored_record(table_id)  # the live table keeps no old deals
            if isinstance(loaded, JSONResponse):
                return loaded
            try:  # the deals up to this one are all the analysis replays
                table = await off_loop(replayed, loaded, deal)
            except Exception:  # the stored events do not replay: some wait in the spill file
                log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
                return record_behind()
            if finished_deals(table) < deal:
                return record_behind()
            try:
                result = await analyst.analyse(table_id, deal, public_record(table), owner=address)
            except (AnalysisBusy, AnalysisQueueFull) as e:
                manager.count_refusal(e.rule)
                return _error(429, MESSAGES[e.rule], e.rule, {"Retry-After": "5"})
            except WorkersFailing as e:
                return _error(503, MESSAGES["workers failing"], e.rule,
                              {"Retry-After": str(max(1, math.ceil(e.retry_after)))})
            except Exception:
                log.exception("table %s: the analysis of deal %d failed", table_id, deal)
                return _error(503, MESSAGES["analysis failed"], "server")
        return JSONResponse({"players": players, **result})

    # --- WebSocket --------------------------------------------------------------------

    @app.websocket("/ws/{table_id}")
    async def ws_endpoint(ws: WebSocket, table_id: str) -> None:
        await ws.accept()
        token = ws.query_params.get("token", "")
        address = ws.client.host if ws.client else ""

        async def refuse(rule: str, message: str, code: int) -> None:
            manager.count_refusal(rule)
            await ws.send_text(dumps({"type": "error", "rule": rule, "message": message}))
            await ws.close(code)

        live = manager.get(table_id)
        if live is None:
            link = await rematch_link_of_archived(table_id, token)
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
        if sum(not c.closed for c in live.conns) >= limits.conns_per_table:
            await refuse("full", MESSAGES["full"].format(n=limits.conns_per_table), 4429)
            return
        if manager.ws_per_address.get(address, 0) >= limits.ws_per_address:
            await refuse("address", MESSAGES["address"].format(n=limits.ws_per_address), 4429)
            return
        manager.ws_per_address[address] = manager.ws_per_address.get(address, 0) + 1
        role, seat = who
        close_code = [1000]

        async def close() -> None:
            await ws.close(close_code[0])

        conn = Conn(seat if role == "seat" else None, server_send_text(ws), close,
                    live.bucket_for(seat if role == "seat" else None), address,
                    write_now=direct_writer(ws), outbox=manager.outbox)
        sender = asyncio.create_task(conn.sender())
        conn.send(dumps({"type": "hello", "role": role,
                         "seat": conn.seat, "table": table_id}))

        receive: Receive = ws.scope.get(SERVER_RECEIVE) or ws.receive
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
            msg, _, _ = parse_message(text, limits.max_json_depth)
            if msg is None or msg["type"] != "action":
                return False
            conn.allow()  # a token is there (``ready``)
            seq = message_seq(msg)
            try:
                action, event = action_fields(msg)
                live.act_now(conn.seat, action, event, lambda e: refused(live, conn, e, seq))
            except Exception as e:
                refused(live, conn, e, seq)
                if isinstance(e, IllegalAction) and e.rule == "stale":
                    live.send_state(conn)  # the lock was free: no commit is under way
            return True

        proto = getattr(ws.scope.get(SERVER_SEND), "__self__", None)
        if not hasattr(proto, "take_now"):  # another ASGI server: the queued way only
            proto = None

        async def receive_loop() -> None:
            """The client's messages until it leaves. It runs as a task of its own: every
            message and every awaited commit resumes the code waiting for it, and here that is
            a few frames deep instead of under the ~20 frames of the ASGI middleware stack."""
            if proto is not None:
                proto.take_now = take_now
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
                await handle(live, conn, text)

        try:
            await live.attach(conn)
            await asyncio.get_running_loop().create_task(receive_loop())
        except Exception as e:  # a broken socket; nothing to tell the client
            if not isinstance(e, (RuntimeError, ConnectionError)):
                log.debug("websocket ended: %r", e)
        finally:
            waiting[0] = False
            if proto is not None:
                proto.take_now = None
            count_down(manager.ws_per_address, address)
            live.detach(conn)
            conn.stop()
            await sender

    async def rematch_link_of_archived(table_id: str, token: str) -> tuple[str, str] | str | None:
        """A seat of an archived table that had a rematch: a new link to the same seat of the
        rematch table, if that table is still live and no link of this seat has led on to it
        yet (an old link leads to the new table once, and never takes the seat from the
        player who sits there)."""
        if not TABLE_ID.fullmatch(table_id) or not token:
            return None
        async with archived_claims:  # two uses of one old link at once: one goes on
            st = await manager.read(storage.load_table, table_id)
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
                await manager.commit(storage.set_rematch_claimed, table_id,
                                     sorted({*st.social.rematch_claimed, seat}))
                fresh = await manager.reissue(new, seat)
            except Exception:
                log.warning("table %s: no link to its rematch for seat %d", table_id, seat,
                            exc_info=True)
                return None
            return new.id, f"/t/{new.id}#{fresh}"

    def refused(live: LiveTable, conn: Conn, e: BaseException, seq: int | str | None) -> None:
        """Tell the client why its message was refused (IllegalAction: the rule it breaks; any
        other error: a fault of the server's, logged)."""
        if isinstance(e, IllegalAction):
            manager.count_refusal(e.rule)
            conn.send(dumps({"type": "error", "rule": e.rule, "message": e.message, "seq": seq}))
            return
        log.error("table %s: error handling a message", live.id, exc_info=e)
        conn.send(dumps({"type": "error", "rule": "server",
                         "message": "internal server error", "seq": seq}))

    async def handle(live: LiveTable, conn: Conn, text: str) -> None:
        msg, rule, message = parse_message(text, limits.max_json_depth)
        if msg is None:
            log.info("table %s: refused a message from %s (%s)", live.id, conn.address, rule)
            conn.send(dumps({"type": "error", "rule": rule, "message": message}))
            return
        kind = msg["type"]
        seq = message_seq(msg)
        try:
            if kind == "ping":
                conn.send('{"type":"pong"}' if seq is None else dumps({"type": "pong", "seq": seq}))
                return
            if kind not in ("action", "next", "start", "chat", "back", "rematch", "hint"):
                raise IllegalAction("protocol", f"unknown message type {kind[:40]!r}")
            if kind == "chat":
                line = msg.get("text")
                if not isinstance(line, str):
                    raise IllegalAction("protocol", "a chat message needs a \"text\" string")
                await live.say(conn.seat, line)
                return
            if conn.seat is None:
                raise IllegalAction("spectator", "a spectator cannot act")
            if kind == "action":
                await live.act(conn.seat, *action_fields(msg))
            elif kind == "next":
                await live.next_deal(early=True, seat=conn.seat)
            elif kind == "hint":
                answer = await live.hint(conn.seat)
                conn.send(dumps(answer if seq is None else {**answer, "seq": seq}))
            elif kind == "back":
                await live.back(conn.seat)
            elif kind == "rematch":
                agree = msg.get("agree", True)
                if not isinstance(agree, bool):
                    raise IllegalAction("protocol", "a rematch message's \"agree\" is true or false")
                await live.rematch(conn.seat, agree, conn.address)
            else:
                await live.start()
        except Exception as e:
            refused(live, conn, e, seq)
            if isinstance(e, IllegalAction) and e.rule == "stale":  # show the current state again
                async with live.lock:
                    live.send_state(conn)

    # --- the web client ---------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/t/{table_id}", include_in_schema=False)
    def table_page(table_id: str) -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> FileResponse:  # browsers ask for it on every page; ours is an SVG
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml",
                            headers={"Cache-Control": "public, max-age=86400"})

    app.include_router(guide_router)  # the Rules panel: how to play the table's rule set
    if api_docs:  # Swagger UI from this server, under its Content-Security-Policy
        app.include_router(api_docs_router("/api/openapi.json"))
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


GC_THRESHOLD0 = 20_000


def tune_gc() -> None:
    """Garbage-collector settings for a long-running server (called once the tables are loaded).

    With CPython's defaults the collector runs many times a second under load, and its full
    passes over every live table's objects stall the event loop long enough to make the whole
    p99 tail (bench/server_load.py shows it in ``p99_ms``). So everything
    loaded at start (modules, rebuilt tables) is frozen out of the collector's view, and the
    youngest generation is collected every 20,000 allocations instead of 700 (the objects of
    one action mostly die by reference counting; cycles are rare: HTTP requests, closed
    connections), so collections are rare and short."""
    gc.collect()
    gc.freeze()
    _, t1, t2 = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD0, t1, t2)


def run(host: str = "127.0.0.1", port: int = 8000, database_url: str | None = None,
        data_dir: Path | None = None, bot_delay: float = 0.6, deal_pause: float = 8.0,
        log_level: str = "info", ws: str = "websockets-sansio",
        ws_per_message_deflate: bool = False, limits: ServerLimits | None = None,
        api_docs: bool = False, uds: str | None = None) -> None:
    """Serve the web table with uvicorn (blocks).

    Per-message deflate is off by default: a state message is ~2 KB of JSON, and compressing
    each one costs more CPU than everything else in sending it (bench/server_load.py).
    Connections are guarded by ``transport.GuardedHttpToolsProtocol``: a header timeout
    (slowloris), caps per address and in all, ``max_connections`` fitted to the open-file
    limit first (``transport.fit_open_files``). ``uds``: listen on this Unix socket instead of
    ``host``:``port``, for a reverse proxy on the same machine (``transport.unix_listener``;
    removed again when the server stops).

    SIGTERM stops the server as Ctrl-C (SIGINT) does, and the process then exits with 0: uvicorn
    catches both, shuts down, and raises the signal again into the handler it found, which
    for SIGTERM would end the process at once (before the socket file is removed); the
    handler set here turns it into ``SystemExit`` instead, so every ``finally`` runs."""
    import signal
    import threading

    import uvicorn

    from .transport import fit_open_files, unix_listener

    limits = fit_open_files(limits or ServerLimits())
    app = create_app(database_url=database_url, data_dir=data_dir, bot_delay=bot_delay,
                     deal_pause=deal_pause, limits=limits, api_docs=api_docs)
    tune_gc()
    for name in ("uvicorn.access", "uvicorn.error"):  # "WebSocket /ws/…?token=…" [accepted]
        logging.getLogger(name).addFilter(_RedactTokens())

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)

    main_thread = threading.current_thread() is threading.main_thread()  # signals: there only
    previous = signal.signal(signal.SIGTERM, stop) if main_thread else None
    try:
        listener = unix_listener(uds) if uds is not None else None
        try:
            uvicorn.run(app, **uvicorn_settings(host, port, log_level, ws, ws_per_message_deflate,
                                                limits, listener))
        finally:
            if listener is not None:
                listener.close()
            if uds is not None:
                with contextlib.suppress(OSError):
                    os.unlink(uds)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def uvicorn_settings(host: str, port: int, log_level: str, ws: str, ws_per_message_deflate: bool,
                     limits: ServerLimits, listener: socket.socket | None = None) -> dict[str, Any]:
    """The keyword arguments ``run`` gives ``uvicorn.run`` (or ``uvicorn.Config``).
    ``listener``: a Unix socket (``transport.unix_listener``) to serve on instead of
    ``host``:``port``, for a reverse proxy on the same machine: its X-Forwarded-For names the
    client, as only the socket's owner and group can connect (its right-most entry, taken by
    the guarded protocol: proxy.py; uvicorn's own handling, which takes the left-most one,
    is off there)."""
    from .transport import framed_websocket_protocol, guarded_protocol

    protocol: Any = framed_websocket_protocol() if ws == "websockets-sansio" else ws
    where: dict[str, Any] = dict(host=host, port=port) if listener is None else dict(
        fd=listener.fileno(), proxy_headers=False)
    return dict(**where, log_level=log_level, ws=protocol, ws_max_size=65536,
                ws_ping_interval=20.0, ws_ping_timeout=20.0,
                ws_per_message_deflate=ws_per_message_deflate,
                http=guarded_protocol(limits), timeout_keep_alive=int(limits.keep_alive_timeout),
                h11_max_incomplete_event_size=16_384)


if __name__ == "__main__":  # python -m stammtisch.server.app [port]
    import sys

    run(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)

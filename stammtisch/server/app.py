"""The web table: a FastAPI app (REST + one WebSocket per client) and its static web client.

Endpoints (all errors are JSON ``{"error": "…"}`` with a 4xx status; never a stack trace):

- ``GET  /api/rulesets`` – rule set ids, titles and options (kind, choices, default, help).
- ``POST /api/tables`` – ``{"ruleset", "options": {key: value}, "seats": [{"name", "bot"}]}``
  → the table id, one invite link and token per human seat, a spectator link, and an admin
  token (for ``start``). Tokens are shown only here: the server keeps their SHA-256 digests.
- ``POST /api/tables/{id}/start`` – ``{"token": admin or human seat token}``: deal 1.
- ``GET  /api/tables/{id}`` – public info: players, seats (connected?), balances, pot, dealer,
  deal number and the score sheet (per finished deal: net per player and the pot after it).
- ``GET  /api/tables/{id}/record`` – the game record (``stammtisch-record/1``) of the finished
  deals only; the deck of an unfinished deal never leaves the server.
- ``WS   /ws/{id}?token=…`` – see ``PROTOCOL`` below.
- ``GET  /`` and ``GET /t/{id}`` – the web client (invite links are ``/t/{id}#<token>``: the
  token rides in the URL fragment, which browsers never send to a server).
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import re
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from ..bots import BOT_NAMES, make_bot
from ..games.base import IllegalAction
from ..record import table_to_record
from ..rules import PRESETS, RuleError, option_specs
from ..rules import ruleset as build_ruleset
from .storage import Storage, default_database_url
from .tables import Conn, LiveTable, TableManager, dumps

PROTOCOL = """
Client → server (JSON text frames, at most MAX_MESSAGE bytes, at most 20 per second):
  {"type": "action", "action": "play:HA", "seq": 7}   seq optional, echoed in an error
  {"type": "next"}    start the next deal now (a seated human, after a deal is over)
  {"type": "start"}   start the table (a seated human, before deal 1)
  {"type": "ping"}
Server → client:
  {"type": "hello", "role": "seat"|"spectator", "seat": int|null, "table": id}
  {"type": "state", "event": n, "view": <view(seat)> | null, "table": {…}}  after every event
  {"type": "presence", "seats": [{"name", "bot", "connected"}]}  when a client comes or goes
  {"type": "error", "rule": "…", "message": "…", "seq": …}   the state is unchanged
  {"type": "pong"}
"""

MAX_MESSAGE = 4096
STATIC = Path(__file__).parent / "static"
log = logging.getLogger("stammtisch.server")


class SeatIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=24)
    bot: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("a seat needs a name")
        if any(ord(ch) < 32 for ch in v):
            raise ValueError("a name may not hold control characters")
        return v

    @field_validator("bot")
    @classmethod
    def _bot(cls, v: str | None) -> str | None:
        if v in (None, "", "human"):
            return None
        if v not in BOT_NAMES:
            raise ValueError(f"unknown bot {v!r}; bots are {', '.join(BOT_NAMES)}")
        return v


class TableIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    ruleset: str = Field(max_length=64)
    options: dict[str, str | int | bool | None] = Field(default_factory=dict, max_length=40)
    seats: list[SeatIn] = Field(min_length=2, max_length=10)


class TokenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: str = Field(min_length=1, max_length=200)


class _RedactTokens(logging.Filter):
    """Keep seat tokens out of the access log (``?token=…`` of WebSocket URLs)."""

    _re = re.compile(r"(token=)[^&\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args:
            record.args = tuple(self._re.sub(r"\1…", a) if isinstance(a, str) else a
                                for a in record.args)
        return True


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for e in exc.errors():
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        msg = e.get("msg", "invalid")
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts) or "invalid request"


def available_bots(family: str) -> list[str]:
    """The bot names that can be built for a game family (a bot module may be missing)."""
    out = []
    for name in BOT_NAMES:
        try:
            make_bot(name, family)
        except Exception:
            continue
        out.append(name)
    return out


def rulesets_payload() -> list[dict]:
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
            "bots": bots[rules.family],
            "options": [
                {"name": spec.name, "kind": spec.kind, "choices": list(spec.choices),
                 "default": preset.defaults.get(spec.name), "help": spec.help,
                 "minimum": spec.minimum, "maximum": spec.maximum}
                for spec in option_specs(rid).values()
            ],
        })
    return out


def public_record(live: LiveTable) -> dict:
    """The record of the finished deals: an unfinished last deal (its deck!) is dropped."""
    rec = table_to_record(live.table)
    if live.table.in_deal:
        rec["deals"] = rec["deals"][:-1]
    return rec


def create_app(database_url: str | None = None, data_dir: Path | None = None,
               bot_delay: float = 0.6, deal_pause: float = 8.0) -> FastAPI:
    """The app. ``bot_delay``: seconds before a bot acts; ``deal_pause``: seconds between a
    finished deal and the next one (a human may send ``next`` to go on at once)."""
    url = database_url or default_database_url(data_dir)
    storage = Storage(url)
    manager = TableManager(storage, bot_delay=bot_delay, deal_pause=deal_pause)
    manager.load_all()

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        manager.resume()
        try:
            yield
        finally:
            manager.shutdown()
            storage.close()

    app = FastAPI(title="stammtisch", lifespan=lifespan, docs_url="/api/docs",
                  redoc_url=None, openapi_url="/api/openapi.json")
    app.state.manager = manager
    app.state.storage = storage

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        return _error(422, _describe_validation(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.exception("internal error on %s", request.url.path)
        return _error(500, "internal server error")

    @app.middleware("http")
    async def _limit_body(request: Request, call_next):
        size = request.headers.get("content-length")
        if size is not None and (not size.isdigit() or int(size) > 65536):
            return _error(413, "request body too large (64 KiB at most)")
        return await call_next(request)

    def _table(table_id: str) -> LiveTable:
        live = manager.get(table_id)
        if live is None:
            raise StarletteHTTPException(404, f"no table {table_id!r}")
        return live

    # --- REST -------------------------------------------------------------------------

    @app.get("/api/rulesets")
    def get_rulesets() -> list[dict]:
        return rulesets_payload()

    @app.post("/api/tables", status_code=201)
    def post_table(body: TableIn, request: Request):
        if body.ruleset not in PRESETS:
            return _error(400, f"unknown rule set {body.ruleset!r}; rule sets are "
                               f"{', '.join(PRESETS)}")
        options = dict(body.options)
        options.setdefault("players", len(body.seats))
        try:
            rules = build_ruleset(body.ruleset, options)
        except (RuleError, ValueError) as e:
            return _error(400, str(e))
        if rules.players != len(body.seats):
            return _error(400, f"the table has {len(body.seats)} seats but the rule set is "
                               f"set for {rules.players} players")
        for s in body.seats:
            if s.bot and s.bot not in available_bots(rules.family):
                return _error(400, f"the {s.bot} bot is not available for {rules.family} yet")
        names = [s.name for s in body.seats]
        if len({n.casefold() for n in names}) != len(names):
            return _error(400, "seat names must be different")
        created = manager.create(body.ruleset, options, [(s.name, s.bot) for s in body.seats])
        tid = created["id"]
        seats = []
        for i, (s, tok) in enumerate(zip(body.seats, created["seat_tokens"])):
            entry: dict[str, Any] = {"seat": i, "name": s.name, "bot": s.bot}
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
        }

    @app.post("/api/tables/{table_id}/start")
    async def start_table(table_id: str, body: TokenIn):
        live = _table(table_id)
        who = live.auth(body.token)
        if who is None or who[0] == "spectator":
            return _error(403, "this token may not start the table")
        try:
            await live.start()
        except IllegalAction as e:
            return _error(409, e.message)
        return live.info()

    @app.get("/api/tables/{table_id}")
    def get_table(table_id: str):
        return live_info(_table(table_id))

    def live_info(live: LiveTable) -> JSONResponse:
        return JSONResponse(json.loads(live.info_json()))

    @app.get("/api/tables/{table_id}/record")
    def get_record(table_id: str):
        live = _table(table_id)
        return JSONResponse(public_record(live), headers={
            "Content-Disposition": f'attachment; filename="stammtisch-{table_id}.json"'})

    # --- WebSocket --------------------------------------------------------------------

    @app.websocket("/ws/{table_id}")
    async def ws_endpoint(ws: WebSocket, table_id: str):
        await ws.accept()
        token = ws.query_params.get("token", "")
        live = manager.get(table_id)
        if live is None:
            await ws.send_text(dumps({"type": "error", "rule": "unknown table",
                                      "message": f"no table {table_id!r}"}))
            await ws.close(4404)
            return
        who = live.auth(token)
        if who is None:
            await ws.send_text(dumps({"type": "error", "rule": "token",
                                      "message": "this link is not valid for this table"}))
            await ws.close(4401)
            return
        role, seat = who
        close_code = [1000]

        async def close():
            await ws.close(close_code[0])

        conn = Conn(seat, ws.send_text, close)
        sender = asyncio.create_task(conn.sender())
        conn.send(dumps({"type": "hello", "role": "seat" if seat is not None else "spectator",
                         "seat": seat, "table": table_id}))
        live.attach(conn)
        try:
            while not conn.closed:
                msg = await ws.receive()
                if msg["type"] == "websocket.disconnect":
                    break
                text = msg.get("text")
                if text is None:
                    data = msg.get("bytes") or b""
                    text = data.decode("utf-8", "replace")
                if len(text) > MAX_MESSAGE:
                    conn.send(dumps({"type": "error", "rule": "size",
                                     "message": f"messages are limited to {MAX_MESSAGE} bytes"}))
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
        except Exception as e:  # a broken socket; nothing to tell the client
            if not isinstance(e, (RuntimeError, ConnectionError)):
                log.debug("websocket ended: %r", e)
        finally:
            live.detach(conn)
            await sender

    async def handle(live: LiveTable, conn: Conn, text: str) -> None:
        try:
            msg = json.loads(text)
        except ValueError:
            msg = None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            conn.send(dumps({"type": "error", "rule": "protocol",
                             "message": "a message is a JSON object with a \"type\""}))
            return
        kind = msg["type"]
        seq = msg.get("seq")
        if not isinstance(seq, (int, str)) or isinstance(seq, bool):
            seq = None
        try:
            if kind == "ping":
                conn.send('{"type":"pong"}')
                return
            if kind not in ("action", "next", "start"):
                raise IllegalAction("protocol", f"unknown message type {kind[:40]!r}")
            if conn.seat is None:
                raise IllegalAction("spectator", "a spectator cannot act")
            if kind == "action":
                action = msg.get("action")
                if not isinstance(action, str) or not action or len(action) > 200:
                    raise IllegalAction("protocol", "an action message needs an \"action\" string")
                await live.act(conn.seat, action)
            elif kind == "next":
                await live.next_deal(early=True)
            else:
                await live.start()
        except IllegalAction as e:
            conn.send(dumps({"type": "error", "rule": e.rule, "message": e.message, "seq": seq}))
        except Exception:
            log.exception("table %s: error handling a message", live.id)
            conn.send(dumps({"type": "error", "rule": "server",
                             "message": "internal server error", "seq": seq}))

    # --- the web client ---------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/t/{table_id}", include_in_schema=False)
    def table_page(table_id: str):
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


GC_THRESHOLD0 = 20_000


def tune_gc() -> None:
    """Garbage-collector settings for a long-running server (called once the tables are loaded).

    Measured with bench/server_load.py (200 tables, 600 clients): with CPython's defaults the
    collector ran ~15 times a second, and its full passes over every live table's objects
    stalled the event loop for up to ~200 ms, which was the whole p99 tail. Now everything
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
        ws_per_message_deflate: bool = False) -> None:
    """Serve the web table with uvicorn (blocks).

    Per-message deflate is off by default: a state message is ~2 KB of JSON, and compressing
    each one cost more CPU than everything else in sending it (bench/server_load.py)."""
    import uvicorn

    app = create_app(database_url=database_url, data_dir=data_dir, bot_delay=bot_delay,
                     deal_pause=deal_pause)
    tune_gc()
    for name in ("uvicorn.access", "uvicorn.error"):  # "WebSocket /ws/…?token=…" [accepted]
        logging.getLogger(name).addFilter(_RedactTokens())
    uvicorn.run(app, host=host, port=port, log_level=log_level, ws=ws, ws_max_size=65536,
                ws_ping_interval=20.0, ws_ping_timeout=20.0,
                ws_per_message_deflate=ws_per_message_deflate)


if __name__ == "__main__":  # python -m stammtisch.server.app [port]
    import sys

    run(port=int(sys.argv[1]) if len(sys.argv) > 1 else 8000)

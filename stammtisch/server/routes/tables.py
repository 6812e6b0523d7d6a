"""The tables: the rule sets, a table's creation, the lobby, a seat taken, start, close, new
links and a table's info.

- ``GET  /api/rulesets`` – rule set ids, titles and options (kind, choices, default, maximum,
  help).
- ``POST /api/tables`` – ``{"ruleset", "options": {key: value}, "seats": [{"name", "bot"}],
  "max_deals"}`` → the table id, one invite link and token per human seat, a spectator link,
  and an admin token. Tokens are shown only here: the server keeps their SHA-256 digests.
  Limited per client address and by the number of live tables (429 when refused).
- ``GET  /api/tables`` – the lobby's list of open tables: tables their creator listed that
  have a free seat (rule set, seats taken and free, the turn timer, whether it gives hints).
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
"""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ...bots import BOT_NAMES, LEVEL_NAMES, PLAYER_NAMES, SEARCH_BOTS, algorithm_of
from ...rules import PRESETS, RuleError, Rules, option_specs
from ...rules import ruleset as build_ruleset
from ..limits import MAX_DEALS_LIMIT, OPTION_MAXIMA, check_option_bounds, check_rules_bounds
from ..live_table import LiveTable
from ..names import NameError_, clean_name, look_alike_pair
from ..refusals import MESSAGES, Refusal, RefusalKind, StorageUnavailable
from ..storage import StoredSocial
from ..table_core import TRY_AGAIN
from .deps import TABLE_ID, AddressDep, LiveDep, ServerDep, require_role, seat_rate

router = APIRouter()

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



#: Bots the web table does not seat. pimc thinks in the table manager's worker
#: process (server/thinker.py), never on the event loop; OpenSpiel's ISMCTS would think inside
#: it (up to ~0.8 s a move on tapp/modern) and hold up every other table.
NOT_AT_THE_WEB_TABLE = frozenset({"openspiel-ismcts"})


def available_bots(family: str) -> list[str]:
    """The bot names the web table seats for a game family: the levels first (Beginner, Club
    player, Expert, Master), then the algorithms for researchers (``BOT_NAMES``: each plays both
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


@router.get("/api/rulesets")
def get_rulesets() -> list[dict[str, Any]]:
    return rulesets_payload()


def check_table(body: TableIn, server: ServerDep, address: str) -> tuple[dict[str, Any], Rules]:
    """The new table's options (with its player count) and its validated rules, or the refusal of what is wrong with
    the request (in the order a person fixes it: rule set, options, seats, limits)."""
    limits = server.limits
    if body.ruleset not in PRESETS:
        raise Refusal("ruleset", f"unknown rule set {body.ruleset!r}; rule sets are "
                                 f"{', '.join(PRESETS)}", RefusalKind.INVALID)
    options = dict(body.options)
    options.setdefault("players", len(body.seats))
    bounds = check_option_bounds(options)
    if bounds:
        raise Refusal("option", bounds, RefusalKind.INVALID)
    try:
        rules = build_ruleset(body.ruleset, options)
    except (RuleError, ValueError) as e:
        raise Refusal("option", str(e), RefusalKind.INVALID) from None
    bounds = check_rules_bounds(rules)
    if bounds:
        raise Refusal("option", bounds, RefusalKind.INVALID)
    if rules.players != len(body.seats):
        raise Refusal("players", f"the table has {len(body.seats)} seats but the rule set is "
                                 f"set for {rules.players} players", RefusalKind.INVALID)
    for s in body.seats:
        if s.bot and s.bot not in available_bots(rules.family):
            raise Refusal("bot", f"the {s.bot} bot is not available for {rules.family} yet",
                          RefusalKind.INVALID)
    if body.turn_seconds and not (limits.turn_seconds_min <= body.turn_seconds
                                  <= limits.turn_seconds_max):
        raise Refusal("turn timer", MESSAGES["turn timer"].format(
            lo=limits.turn_seconds_min, hi=limits.turn_seconds_max, n=body.turn_seconds),
            RefusalKind.INVALID)
    bots_only = all(s.bot for s in body.seats)
    if body.pace == "wait" and bots_only or isinstance(body.pace, float) and not (
            limits.pace_min <= body.pace <= limits.pace_max):
        raise Refusal("pace", MESSAGES["pace"].format(lo=limits.pace_min, hi=limits.pace_max),
                      RefusalKind.INVALID)
    open_seats = [i for i, s in enumerate(body.seats) if s.open]
    if any(body.seats[i].bot for i in open_seats):
        raise Refusal("open seat", MESSAGES["open bot"], RefusalKind.INVALID)
    if open_seats and not body.listed:
        raise Refusal("open seat", MESSAGES["open unlisted"], RefusalKind.INVALID)
    names = [s.name for s in body.seats]
    if len({n.casefold() for n in names}) != len(names):
        raise Refusal("names", "seat names must be different", RefusalKind.INVALID)
    alike = look_alike_pair(names)
    if alike:
        raise Refusal("names", f"seat names must be different: {alike[0]!r} and {alike[1]!r} "
                               "look alike", RefusalKind.INVALID)
    if body.max_deals is not None and bots_only and body.max_deals > limits.bot_table_max_deals:
        raise Refusal("max_deals", MESSAGES["bot deals"].format(n=limits.bot_table_max_deals),
                      RefusalKind.INVALID)
    return options, rules


@router.post("/api/tables", status_code=201)
async def post_table(body: TableIn, server: ServerDep, address: AddressDep) -> Any:
    options, rules = check_table(body, server, address)
    limits, manager = server.limits, server.manager
    searchers = sum(1 for s in body.seats if s.bot and algorithm_of(s.bot) in SEARCH_BOTS)
    server.limit(not searchers or await manager.search_bots_of(address) + searchers
                 <= limits.search_bots_per_address,
                 "search bots", MESSAGES["search bots"].format(n=limits.search_bots_per_address), 60)
    refusal = await manager.creation_refusal(address)
    if refusal is not None:
        raise refusal
    open_seats = [i for i, s in enumerate(body.seats) if s.open]
    social = StoredSocial(turn_seconds=body.turn_seconds, listed=body.listed,
                          open_seats=open_seats, creator=address, lobby_seats=open_seats,
                          pace=None if body.pace is None else str(body.pace),
                          hints=body.hints)
    created = await manager.create(body.ruleset, options,
                                   [(s.name, s.bot) for s in body.seats], body.max_deals,
                                   social=social, rules=rules)
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


@router.get("/api/tables")
def list_tables(server: ServerDep) -> dict[str, Any]:
    """The lobby: listed tables with a free seat, newest first."""
    shown = []
    for live in sorted(server.manager.tables.values(), key=lambda x: -x.created):
        entry = live.shown().listing()
        if entry is not None:
            shown.append(entry)
            if len(shown) >= server.limits.listed_max:
                break
    return {"tables": shown}


@router.post("/api/tables/{table_id}/take", dependencies=[Depends(seat_rate)])
async def take_seat(table_id: str, body: TakeIn, live: LiveDep) -> Any:
    seat, token = await live.take_seat(body.seat, body.name)
    return {"id": table_id, "seat": seat, "name": live.seats[seat].name, "token": token,
            "link": f"/t/{table_id}#{token}"}


@router.post("/api/tables/{table_id}/start")
async def start_table(body: TokenIn, live: LiveDep) -> JSONResponse:
    require_role(live, body.token, ("admin", "seat"), "this token may not start the table")
    await live.start()
    return await live_info(live)


@router.post("/api/tables/{table_id}/close")
async def close_table(body: TokenIn, live: LiveDep) -> JSONResponse:
    require_role(live, body.token, ("admin",), "only the table's admin token may close the table")
    try:
        await live.close()
    except StorageUnavailable:
        raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
    return await live_info(live)


@router.post("/api/tables/{table_id}/reissue")
async def reissue_link(table_id: str, body: ReissueIn, live: LiveDep, server: ServerDep) -> Any:
    require_role(live, body.token, ("admin",), "only the table's admin token may re-issue links")
    if body.seat is not None and (body.seat >= len(live.seats) or live.seats[body.seat].bot):
        raise Refusal("seat", f"seat {body.seat} is not a human seat of this table", RefusalKind.INVALID)
    if body.seat in live.lobby_seats:
        raise Refusal("lobby seat", MESSAGES["lobby seat"].format(seat=body.seat), RefusalKind.INVALID)
    try:
        token = await server.manager.reissue(live, body.seat)
    except StorageUnavailable:
        raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE) from None
    return {"seat": body.seat, "token": token, "link": f"/t/{table_id}#{token}"}


@router.get("/api/tables/{table_id}")
async def get_table(table_id: str, server: ServerDep) -> JSONResponse:
    live = server.manager.get(table_id)
    if live is None:
        # only an id the server could have made is looked up (no database read for junk ids)
        st = (await server.manager.store.read(server.storage.load_table, table_id)
              if TABLE_ID.fullmatch(table_id) else None)
        if st is None:
            raise Refusal("unknown table", f"no table {table_id!r}", RefusalKind.NOT_FOUND)
        raise Refusal("archived", MESSAGES["archived"].format(id=table_id, reason=st.archived_reason),
                      RefusalKind.GONE)
    return await live_info(live)


async def live_info(live: LiveTable) -> JSONResponse:
    async with live.lock:  # an event whose commit is under way is not shown
        text = live.fanout.info_bytes().decode()
    return JSONResponse(json.loads(text))

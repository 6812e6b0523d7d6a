"""A finished deal step by step, for the web page's replay on the felt.

- ``GET  /api/tables/{id}/replay/{n}`` – finished deal ``n`` as this token may see it, view by
  view (``records.deal_replay``): while the table plays, each view is the one the table showed
  this token then (the admin's a spectator's); once it has ended (closed, or archived), a seat
  or the admin gets every hand. Token in ``Authorization: Bearer …``, as the record's.
- ``POST /api/replay`` – ``{"record": <a stammtisch-record/1>, "deal": n}``: a record file's
  deal, whole (the file holds every card). Nothing is stored; limited per client address.
- ``POST /api/replay/analysis`` – the same body: where points were lost in that deal, whole, as
  ``GET /api/tables/{id}/analysis/{n}`` answers it; under the same limits per address as a
  table's analyses. Kept under the digest of the record's deals up to that one, so an answer
  only ever concerns the record sent.

A record file may be larger than other requests (``ServerLimits.max_record_body``).

The replay's state (which step is shown) stays in the page: the server only answers views.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

import orjson
from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ...record import RecordError, load
from ...record import replay as replay_record
from .. import records
from ..analysis import deal_cost
from ..limits import check_option_bounds
from ..refusals import MESSAGES, Refusal, RefusalKind
from ..storage import StoredTable
from .deps import AddressDep, Server, ServerDep, TokenDep
from .records import REPLAY_ERRORS, KnownId, awaited, begun, finished_deal_answer, may_analyse, may_read

router = APIRouter()

T = TypeVar("T")

#: The paths that take a record file (a larger body: ``ServerLimits.max_record_body``).
RECORD_PATHS = ("/api/replay", "/api/replay/analysis")


@router.get("/api/tables/{table_id}/replay/{deal}")
async def get_replay(table_id: KnownId, deal: int, token: TokenDep, server: ServerDep,
                     address: AddressDep) -> Response:
    """Finished deal ``deal`` (1-based) view by view, as this token may see it. Built off the
    event loop and kept."""
    def answer(st: StoredTable, seat: int | None, whole: bool) -> dict[str, Any] | None:
        table = records.replayed(st, deal)
        if records.finished_deals(table) < deal:
            return None
        return records.deal_replay(records.public_record(table), deal, seat, whole)

    return await finished_deal_answer(server, table_id, deal, token, address, "replay", answer,
                                      (*REPLAY_ERRORS, RecordError))


class RecordReplay(BaseModel):
    """A record file's deal to replay."""

    model_config = ConfigDict(extra="forbid")

    record: dict[str, Any]
    deal: int = Field(1, ge=1, le=100_000)


def not_replayed(e: RecordError) -> Refusal:
    """A record file that does not replay: its reason (rule "record"; "redacted record" for a
    download made during play)."""
    return Refusal(e.rule or "record", str(e), RefusalKind.INVALID)


def no_such_deal(body: RecordReplay) -> Refusal:
    deals = body.record.get("deals")
    return Refusal("no such deal", f"the record has no finished deal {body.deal} "
                   f"({len(deals) if isinstance(deals, list) else 0} deals)", RefusalKind.INVALID)


def checked_record(body: RecordReplay) -> dict[str, Any]:
    """The record up to the deal asked for, its shape and its options checked (cheap: nothing
    is replayed), or refused with what is wrong."""
    try:
        record = load(body.record)
    except RecordError as e:
        raise not_replayed(e) from None
    bounds = check_option_bounds(record.get("options", {}))
    if bounds is not None:
        raise Refusal("record", bounds, RefusalKind.INVALID)
    if body.deal > len(record["deals"]):
        raise no_such_deal(body)
    return {**record, "deals": record["deals"][:body.deal]}


async def replayed_deal(server: Server, body: RecordReplay, build: Callable[[], T | None]) -> T:
    """``build()`` off the event loop, on the record's deal asked for: refused when the record
    does not replay (``not_replayed``) or ``build`` finds no such finished deal (None)."""
    try:
        out = await server.off_loop(build)
    except RecordError as e:
        raise not_replayed(e) from None
    if out is None:
        raise no_such_deal(body)
    return out


@router.post("/api/replay")
async def post_replay(body: RecordReplay, server: ServerDep, address: AddressDep) -> Response:
    """A deal of a record file, view by view, whole. A record that does not replay is refused
    with its reason (``not_replayed``)."""
    may_read(server, address)
    record = checked_record(body)

    def build() -> dict[str, Any] | None:
        return records.deal_replay(record, body.deal, None, True)

    return Response(orjson.dumps(await replayed_deal(server, body, build)), media_type="application/json")


def record_key(record: dict[str, Any]) -> str:
    """The Analyst's key of a record file (in place of a table's id): the digest of the record
    as sent, its keys sorted, so that only the same record finds a kept analysis."""
    text = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "record " + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


async def record_analysis(server: Server, body: RecordReplay, address: str) -> dict[str, Any]:
    record = checked_record(body)
    key = await server.off_loop(record_key, record)
    result = server.analyst.cached(key, body.deal)
    if result is None:
        server.limit(await may_analyse(server, address), "analysis rate", MESSAGES["analysis rate"], 20)

        def replayed() -> float | None:
            """The deal's cost to the Analyst's worker; None: the record has no such finished
            deal. Raises ``RecordError`` for a record that does not replay."""
            table = replay_record(record, allow_incomplete=True).table
            return deal_cost(table, body.deal) if records.finished_deals(table) >= body.deal else None

        cost = await replayed_deal(server, body, replayed)
        result = await awaited(key, body.deal, begun(server, key, body.deal, record, address, cost)[1])
    return {"players": result.names, **result.read_by(None, True)}


@router.post("/api/replay/analysis")
async def post_replay_analysis(body: RecordReplay, server: ServerDep, address: AddressDep) -> JSONResponse:
    """Where points were lost in a deal of a record file, whole (whoever holds the file holds
    every card): as a table's analysis answers it once the table has ended. Limited per
    address as a table's analyses are; a kept answer is not counted. A record that does not
    replay is refused with its reason (``not_replayed``)."""
    return JSONResponse(await record_analysis(server, body, address))

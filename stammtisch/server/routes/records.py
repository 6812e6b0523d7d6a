"""The finished deals of a table: its record, one past deal, a deal's analysis.

Each takes the table's token in ``Authorization: Bearer …`` (never in the URL: refused there).

- ``GET  /api/tables/{id}/record`` – the finished deals. With the admin token (or any
  seat's token once the table is closed): the full, replayable ``stammtisch-record/1``. With a
  seat's or the spectator's token during the session: ``stammtisch-redacted/1``, each deal as
  that token saw it at its end (its terminal view: passers' folded cards, the talon and the
  tapp stay hidden). The deck of an unfinished deal never leaves the server.
- ``GET  /api/tables/{id}/deals/{n}`` – a finished deal as this token saw it.
- ``GET  /api/tables/{id}/analysis/{n}`` – where points were lost in a finished deal.

The live table keeps no old deals: these are built from the database's record, off the event
loop, and kept (``BytesCache``).
"""

from __future__ import annotations

import logging
from typing import Annotated

import orjson
from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response

from .. import records
from ..analysis import AnalysisBusy, AnalysisQueueFull
from ..refusals import MESSAGES, STORAGE_ERRORS, Refusal, RefusalKind
from ..storage import StoredTable, token_digest
from ..table_core import TRY_AGAIN
from ..worker_pool import WorkersFailing
from .deps import AddressDep, LiveDep, Server, ServerDep, TokenDep, known_id

log = logging.getLogger("stammtisch.server")

router = APIRouter()

KnownId = Annotated[str, Depends(known_id)]


def record_behind() -> Refusal:
    return Refusal("storage", MESSAGES["record behind"], RefusalKind.UNAVAILABLE, 5)


#: What replaying a stored table raises when its stored events do not replay now (some still
#: wait in the spill file); anything else is a fault of the server's.
REPLAY_ERRORS = (ValueError, LookupError)


async def stored_record(server: Server, table_id: str) -> StoredTable:
    """A table as its database holds it (refused when it cannot be read now, or is not
    there)."""
    try:
        st = await server.manager.store.read(server.storage.load_table, table_id)
    except STORAGE_ERRORS:
        log.warning("table %s: its record could not be read", table_id, exc_info=True)
        raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE, 5) from None
    if st is None:
        raise Refusal("unknown table", f"no table {table_id!r}", RefusalKind.NOT_FOUND)
    return st


@router.get("/api/tables/{table_id}/record")
async def get_record(table_id: KnownId, token: TokenDep, server: ServerDep) -> Response:
    """The finished deals. While the table plays, every token (the admin's too) gets them
    as its seat saw them (a spectator's view for the admin); once the table has ended
    (closed, or archived), a seat or the admin gets the full, replayable record. Built off
    the event loop, kept per number of finished deals, limited per token."""
    live = server.manager.get(table_id)
    finished = -1  # the deals the record must hold (-1: an archived table, all it has)
    who: tuple[str, int | None] | None = None
    closed = True
    if live is not None:  # the database has its record (the live table keeps no old deals)
        async with live.lock:
            who = live.auth(token)
            closed = live.closed
            finished = live.scored
        if who is None:
            raise Refusal("token", MESSAGES["record token"], RefusalKind.FORBIDDEN)
    server.limit(server.record_takes.allow(token_digest(token)), "record rate",
                 MESSAGES["record rate"], 20)
    headers = {"Content-Disposition": f'attachment; filename="stammtisch-{table_id}.json"'}
    if who is not None:
        kept = server.records.get(records.record_key(table_id, finished, who, closed))
        if kept is not None:
            return Response(kept, media_type="application/json", headers=headers)
    st = await stored_record(server, table_id)
    if live is None:
        who = records.auth_stored(st, token)
    if who is None:
        raise Refusal("token", MESSAGES["record token"], RefusalKind.FORBIDDEN)
    full = closed and who[0] in ("seat", "admin")
    seat = who[1]

    def build() -> tuple[bytes, int]:
        """The record as JSON and the finished deals it holds."""
        if full:
            table = records.replayed(st)
            return orjson.dumps(records.public_record(table)), records.finished_deals(table)
        record = records.redacted_record(st, seat)
        return orjson.dumps(record), len(record["deals"])

    try:
        body, held = await server.off_loop(build)
    except REPLAY_ERRORS:
        log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
        raise record_behind() from None
    if held < finished:
        raise record_behind()
    server.records.put(records.record_key(table_id, finished, who, closed), body)
    return Response(body, media_type="application/json", headers=headers)


@router.get("/api/tables/{table_id}/deals/{deal}")
async def get_deal(table_id: KnownId, deal: int, token: TokenDep, server: ServerDep) -> Response:
    """A finished deal as this token saw it (the Deals panel): its last view (a seat's own,
    a spectator's for the spectator and the admin), the explanation of its result, and its
    tricks card by card. Built off the event loop and kept."""
    live = server.manager.get(table_id)
    who: tuple[str, int | None] | None = None
    finished = -1  # an archived table: every stored deal is over
    if live is not None:
        async with live.lock:
            who = live.auth(token)
            finished = live.scored
        if who is None:
            raise Refusal("token", MESSAGES["deal token"], RefusalKind.FORBIDDEN)
        if not 1 <= deal <= finished:
            raise Refusal("deal in progress", MESSAGES["deal not over"].format(
                deal=deal, finished=finished))
    seat_key = who[1] if who is not None and who[0] == "seat" else None
    kept = server.deals_kept.get((table_id, deal, seat_key)) if who is not None else None
    if kept is not None:
        return Response(kept, media_type="application/json")
    server.limit(server.deal_takes.allow(token_digest(token)), "deal rate",
                 MESSAGES["record rate"], 10)
    st = await stored_record(server, table_id)
    if who is None:
        who = records.auth_stored(st, token)
        if who is None:
            raise Refusal("token", MESSAGES["deal token"], RefusalKind.FORBIDDEN)
        seat_key = who[1] if who[0] == "seat" else None
    if deal < 1:
        raise Refusal("deal in progress", MESSAGES["deal not over"].format(deal=deal, finished=0))

    def build() -> bytes | None:
        answer = records.deal_as_seen(st, deal, seat_key)
        return None if answer is None else orjson.dumps(answer)

    try:
        body = await server.off_loop(build)
    except REPLAY_ERRORS:
        log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
        raise record_behind() from None
    if body is None:
        if finished < 0:
            raise Refusal("deal in progress", MESSAGES["deal not over"].format(
                deal=deal, finished=len(st.deals)))
        raise record_behind()
    server.deals_kept.put((table_id, deal, seat_key), body)
    return Response(body, media_type="application/json")


@router.get("/api/tables/{table_id}/analysis/{deal}")
async def get_analysis(table_id: str, deal: int, token: TokenDep, live: LiveDep,
                       server: ServerDep, address: AddressDep) -> JSONResponse:
    """Where were points lost in finished deal ``deal`` (1-based): the open-hand value at
    the start of play and per card played the value before and after it (``stammtisch
    analyze``). Any seat or spectator token; only once the deal is over."""
    async with live.lock:
        who = live.auth(token)
        finished = live.scored
        players = list(live.table.players)
    if who is None:
        raise Refusal("token", MESSAGES["analysis token"], RefusalKind.FORBIDDEN)
    if not 1 <= deal <= finished:
        raise Refusal("deal in progress", MESSAGES["analysis not over"].format(
            deal=deal, finished=finished))
    result = server.analyst.cached(table_id, deal)
    if result is None:  # the first request: the deal's record from the database
        server.limit(server.analysis_takes.allow(token_digest(token))
                     and server.analysis_takes_by_address.allow(address),
                     "analysis rate", MESSAGES["analysis rate"], 20)
        loaded = await stored_record(server, table_id)  # the live table keeps no old deals
        try:  # the deals up to this one are all the analysis replays
            table = await server.off_loop(records.replayed, loaded, deal)
        except REPLAY_ERRORS:
            log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
            raise record_behind() from None
        if records.finished_deals(table) < deal:
            raise record_behind()
        try:
            result = await server.analyst.analyse(table_id, deal, records.public_record(table),
                                                  owner=address)
        except (AnalysisBusy, AnalysisQueueFull) as e:
            server.manager.count_refusal(e.rule)
            raise Refusal(e.rule, MESSAGES[e.rule], RefusalKind.TOO_MANY, 5) from None
        except WorkersFailing as e:
            raise Refusal(e.rule, MESSAGES["workers failing"], RefusalKind.UNAVAILABLE,
                          e.retry_after) from None
        except Exception:  # a worker's fault: logged with its traceback, the client may retry
            log.exception("table %s: the analysis of deal %d failed", table_id, deal)
            raise Refusal("server", MESSAGES["analysis failed"], RefusalKind.UNAVAILABLE) from None
    return JSONResponse({"players": players, **result})

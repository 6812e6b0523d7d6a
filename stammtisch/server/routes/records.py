"""The finished deals of a table: its record, one past deal, a deal's analysis.

Each takes the table's token in ``Authorization: Bearer …`` (never in the URL: refused there).

- ``GET  /api/tables/{id}/record`` – the finished deals. With the admin token (or any
  seat's token once the table is closed): the full, replayable ``stammtisch-record/1``. With a
  seat's or the spectator's token during the session: ``stammtisch-redacted/1``, each deal as
  that token saw it at its end (its terminal view: passers' folded cards, the talon and the
  tapp stay hidden). The deck of an unfinished deal never leaves the server.
- ``GET  /api/tables/{id}/deals/{n}`` – a finished deal as this token saw it.
- ``GET  /api/tables/{id}/summary`` – what "My tables" shows of the table for this token:
  when it was made, its finished deals, the token's seat and balance, playing or ended.
- ``GET  /api/tables/{id}/analysis/{n}`` – where points were lost in a finished deal, as this
  token saw the deal while the table plays, whole once it has ended (as the record). With
  ``Accept: application/x-ndjson`` it comes in parts, one JSON object a line: first the cards
  played with the verdict on them (``"part": "play"``, quick), then the whole analysis
  (``"part": "all"``), or ``"part": "error"`` when the rest failed; a kept analysis comes whole
  at once. One request, one analysis against the rate limits either way.

The live table keeps no old deals: these are built from the database's record, off the event
loop, and kept (``BytesCache``). A live table knows its tokens; an archived one is asked for
its tokens' digests with one small query before anything is read. Every read of the database
takes from the client address's allowance first (``stored_reads``), so a flood of wrong tokens
or of uncached requests costs a refusal, not a table read each.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Header
from fastapi.responses import JSONResponse, Response, StreamingResponse

from .. import records
from ..analysis import AnalysisBusy, AnalysisQueueFull, AnalysisShareFull, deal_cost
from ..refusals import MESSAGES, Refusal, RefusalKind, StorageUnavailable
from ..storage import StoredTable, token_digest
from ..table_core import TRY_AGAIN
from ..worker_pool import JobFailed, WorkersFailing
from .deps import AddressDep, Server, ServerDep, TokenDep, known_id

log = logging.getLogger("stammtisch.server")

router = APIRouter()

KnownId = Annotated[str, Depends(known_id)]


def record_behind() -> Refusal:
    return Refusal("storage", MESSAGES["record behind"], RefusalKind.UNAVAILABLE, 5)


#: What replaying a stored table raises when its stored events do not replay now (some still
#: wait in the spill file); anything else is a fault of the server's.
REPLAY_ERRORS = (ValueError, LookupError)


def may_read(server: Server, address: str) -> None:
    """Refused (429) when ``address`` has read the database too often lately: taken before
    every read of a stored table, the token's lookup of an archived one too."""
    server.limit(server.stored_reads.allow(address), "read rate", MESSAGES["read rate"], 10)


async def stored_record(server: Server, table_id: str, address: str) -> StoredTable:
    """A table as its database holds it (refused when ``address`` reads too often, when it
    cannot be read now, or is not there)."""
    may_read(server, address)
    try:
        st = await server.manager.store.read(server.storage.load_table, table_id)
    except StorageUnavailable:
        log.warning("table %s: its record could not be read", table_id, exc_info=True)
        raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE, 5) from None
    if st is None:
        raise Refusal("unknown table", f"no table {table_id!r}", RefusalKind.NOT_FOUND)
    return st


@dataclass(frozen=True)
class Asker:
    """Who asks for a table's past deals, and how far the table is."""

    who: tuple[str, int | None]  # ("seat", i), ("spectator", None) or ("admin", None)
    ended: bool  # closed, or archived: a seat and the admin read everything
    finished: int  # the finished deals; -1: an archived table, every deal it holds

    @property
    def whole(self) -> bool:
        return records.reads_whole(self.who, self.ended)

    @property
    def seat(self) -> int | None:
        return records.reader_seat(self.who)

    def over(self, deal: int) -> bool:
        """Whether deal ``deal`` (1-based) may be over (an archived table's: if it has it)."""
        return deal >= 1 and (self.finished < 0 or deal <= self.finished)


async def asker(server: Server, table_id: str, token: str, address: str, refused: str) -> Asker:
    """Who ``token`` is at the table (refused 403 with ``MESSAGES[refused]`` when nobody; 404
    when there is no such table). A live table answers from memory; an archived one from its
    tokens' digests (one small query, after the address's allowance of reads)."""
    live = server.manager.get(table_id)
    if live is not None:
        async with live.lock:
            who = live.auth(token)
            ended, finished = live.closed, live.scored
    else:
        may_read(server, address)
        try:
            tokens = await server.manager.store.read(server.storage.table_tokens, table_id)
        except StorageUnavailable:
            log.warning("table %s: its tokens could not be read", table_id, exc_info=True)
            raise Refusal("storage", TRY_AGAIN, RefusalKind.UNAVAILABLE, 5) from None
        if tokens is None:
            raise Refusal("unknown table", f"no table {table_id!r}", RefusalKind.NOT_FOUND)
        who = records.auth_tokens(tokens, token)
        ended, finished = True, -1
    if who is None:
        raise Refusal("token", MESSAGES[refused], RefusalKind.FORBIDDEN)
    return Asker(who, ended, finished)


@router.get("/api/tables/{table_id}/record")
async def get_record(table_id: KnownId, token: TokenDep, server: ServerDep, address: AddressDep) -> Response:
    """The finished deals. While the table plays, every token (the admin's too) gets them
    as its seat saw them (a spectator's view for the admin); once the table has ended
    (closed, or archived), a seat or the admin gets the full, replayable record. Built off
    the event loop, kept per number of finished deals, limited per token."""
    a = await asker(server, table_id, token, address, "record token")
    server.limit(server.record_takes.allow(token_digest(token)), "record rate",
                 MESSAGES["record rate"], 20)
    headers = {"Content-Disposition": f'attachment; filename="stammtisch-{table_id}.json"'}
    key = records.record_key(table_id, a.finished, a.who, a.ended)
    kept = server.records.get(key)
    if kept is not None:
        return Response(kept, media_type="application/json", headers=headers)
    st = await stored_record(server, table_id, address)
    full, seat = a.whole, a.seat

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
    if held < a.finished:
        raise record_behind()
    server.records.put(key, body)
    return Response(body, media_type="application/json", headers=headers)


@router.get("/api/tables/{table_id}/summary")
async def get_summary(table_id: KnownId, token: TokenDep, server: ServerDep,
                      address: AddressDep) -> Response:
    """What "My tables" shows of a table for this token (``records.summary``): a live table
    answers from memory; an archived one is replayed from the database once per token's
    role and kept."""
    live = server.manager.get(table_id)
    if live is not None:
        async with live.lock:
            who = live.auth(token)
            if who is None:
                raise Refusal("token", MESSAGES["record token"], RefusalKind.FORBIDDEN)
            shown = records.summary(live.id, live.ruleset_id, live.created, live.table, who,
                                    live.closed, live.scored)
        return Response(orjson.dumps(shown), media_type="application/json")
    a = await asker(server, table_id, token, address, "record token")
    key = ("summary", table_id, a.who)
    kept = server.records.get(key)
    if kept is not None:
        return Response(kept, media_type="application/json")
    st = await stored_record(server, table_id, address)

    def build() -> bytes:
        table = records.replayed(st)
        return orjson.dumps(records.summary(st.id, st.ruleset, st.created, table, a.who, True,
                                            records.finished_deals(table)))

    try:
        body = await server.off_loop(build)
    except REPLAY_ERRORS:
        log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
        raise record_behind() from None
    server.records.put(key, body)
    return Response(body, media_type="application/json")


async def finished_deal_answer(server: Server, table_id: str, deal: int, token: str,
                               address: str, kind: str,
                               answer: Callable[[StoredTable, int | None, bool], Any],
                               errors: tuple[type[BaseException], ...] = REPLAY_ERRORS
                               ) -> Response:
    """A finished deal's answer for this token (``answer(stored, seat, whole)``, built off the
    event loop from the stored record and kept per ``kind``): refused while the deal is not
    over, rate-limited per token before the database is read."""
    a = await asker(server, table_id, token, address, "deal token")
    if not a.over(deal):
        raise Refusal("deal in progress", MESSAGES["deal not over"].format(
            deal=deal, finished=max(a.finished, 0)))
    seat, whole = a.seat, a.whole
    key = (kind, table_id, deal, seat, whole)
    kept = server.deals_kept.get(key)
    if kept is not None:
        return Response(kept, media_type="application/json")
    server.limit(server.deal_takes.allow(token_digest(token)), "deal rate",
                 MESSAGES["record rate"], 10)
    st = await stored_record(server, table_id, address)

    def build() -> bytes | None:
        built = answer(st, seat, whole)
        return None if built is None else orjson.dumps(built)

    try:
        body = await server.off_loop(build)
    except errors:
        log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
        raise record_behind() from None
    if body is None:
        if a.finished < 0:
            raise Refusal("deal in progress", MESSAGES["deal not over"].format(
                deal=deal, finished=len(st.deals)))
        raise record_behind()
    server.deals_kept.put(key, body)
    return Response(body, media_type="application/json")


@router.get("/api/tables/{table_id}/deals/{deal}")
async def get_deal(table_id: KnownId, deal: int, token: TokenDep, server: ServerDep,
                   address: AddressDep) -> Response:
    """A finished deal as this token saw it (the Deals panel): its last view (a seat's own,
    a spectator's for the spectator and the admin), the explanation of its result, and its
    tricks card by card. Built off the event loop and kept."""
    return await finished_deal_answer(
        server, table_id, deal, token, address, "deal",
        lambda st, seat, _whole: records.deal_as_seen(st, deal, seat))


async def may_analyse(server: Server, address: str) -> bool:
    """Whether ``address`` may have one more deal analysed now (taken from its allowance: in
    this process, or with several processes from the service's shared bucket)."""
    peers, limits = server.manager.peers, server.limits
    if peers is None:
        return server.analysis_takes_by_address.allow(address)
    return await peers.allow("analysis", address, limits.analyses_per_minute_per_address,
                             limits.analysis_burst_per_address)


def begun(server: Server, key: str, deal: int, record: dict[str, Any], address: str, cost: float,
          staged: bool = False) -> tuple[asyncio.Future[Any], asyncio.Future[Any]]:
    """The analysis of deal ``deal`` of the full ``record`` begun (``Analyst.begin``), kept
    under ``key`` (a table's id, or a record file's digest); its refusals as the client's."""
    try:
        return server.analyst.begin(key, deal, record, owner=address, cost=cost, staged=staged)
    except (AnalysisBusy, AnalysisShareFull, AnalysisQueueFull) as e:
        server.manager.count_refusal(e.rule)
        raise Refusal(e.rule, MESSAGES[e.rule], RefusalKind.TOO_MANY, 5) from None
    except WorkersFailing as e:
        raise Refusal(e.rule, MESSAGES["workers failing"], RefusalKind.UNAVAILABLE, e.retry_after) from None


async def awaited(key: str, deal: int, running: asyncio.Future[Any]) -> Any:
    """The analysis under way, its worker's failures as refusals; shielded: a requester that
    goes away neither cancels the others' wait nor the work."""
    try:
        return await asyncio.shield(running)
    except WorkersFailing as e:
        raise Refusal(e.rule, MESSAGES["workers failing"], RefusalKind.UNAVAILABLE,
                      e.retry_after) from None
    except JobFailed:  # a worker's fault: logged with its traceback, the client may retry
        log.exception("%s: the analysis of deal %d failed", key, deal)
        raise Refusal("server", MESSAGES["analysis failed"], RefusalKind.UNAVAILABLE) from None


NDJSON = "application/x-ndjson"


@router.get("/api/tables/{table_id}/analysis/{deal}")
async def get_analysis(table_id: KnownId, deal: int, token: TokenDep, server: ServerDep,
                       address: AddressDep, accept: Annotated[str, Header()] = "") -> Response:
    """Where were points lost in finished deal ``deal`` (1-based): the open-hand value at
    the start of play and per card played the value before and after it (``stammtisch
    analyze``). Any token of the table; only once the deal is over. While the table plays,
    each token reads it as the table showed it the deal (the admin's as a spectator's); once
    it has ended (closed, or archived), a seat or the admin reads it whole (analysis/seen.py).
    Asked for as ``application/x-ndjson``: in parts as they are computed (the module's
    docstring)."""
    a = await asker(server, table_id, token, address, "analysis token")
    if not a.over(deal):
        raise Refusal("deal in progress", MESSAGES["analysis not over"].format(
            deal=deal, finished=max(a.finished, 0)))
    staged = NDJSON in accept
    kept = server.analyst.cached(table_id, deal)
    if kept is not None:
        first = whole = asyncio.get_running_loop().create_future()
        whole.set_result(kept)
    else:
        first, whole = await _begin_analysis(server, table_id, deal, token, address, a, staged)

    def answer(found: Any) -> dict[str, Any]:
        return {"players": found.names, **found.read_by(a.seat, a.whole)}

    if not staged:
        return JSONResponse(answer(await awaited(table_id, deal, whole)))

    async def parts() -> AsyncIterator[bytes]:
        try:
            if first is not whole and not whole.done():  # (joined to a whole one: no first part)
                yield orjson.dumps({"part": "play", **answer(await awaited(table_id, deal, first))}) + b"\n"
            yield orjson.dumps({"part": "all", **answer(await awaited(table_id, deal, whole))}) + b"\n"
        except Refusal as refused:  # the answer has begun: the refusal is its last line
            yield orjson.dumps({"part": "error", "error": refused.message, "rule": refused.rule}) + b"\n"

    # each part as it comes: a proxy in front (nginx) must not hold it back
    return StreamingResponse(parts(), media_type=NDJSON, headers={"X-Accel-Buffering": "no"})


async def _begin_analysis(server: Server, table_id: str, deal: int, token: str, address: str, a: Asker,
                          staged: bool) -> tuple[asyncio.Future[Any], asyncio.Future[Any]]:
    """The first request for a deal's analysis: the rate limits, the deal's record from the
    database, the analysis begun (``Analyst.begin``)."""
    server.limit(server.analysis_takes.allow(token_digest(token)) and await may_analyse(server, address),
                 "analysis rate", MESSAGES["analysis rate"], 20)
    loaded = await stored_record(server, table_id, address)  # the live table keeps no old deals
    try:  # the deals up to this one are all the analysis replays
        table = await server.off_loop(records.replayed, loaded, deal)
    except REPLAY_ERRORS:
        log.warning("table %s: its stored record does not replay", table_id, exc_info=True)
        raise record_behind() from None
    if records.finished_deals(table) < deal:
        if a.finished < 0:  # an archived table has no such deal
            raise Refusal("deal in progress", MESSAGES["analysis not over"].format(
                deal=deal, finished=records.finished_deals(table)))
        raise record_behind()
    return begun(server, table_id, deal, records.public_record(table), address, deal_cost(table, deal), staged)

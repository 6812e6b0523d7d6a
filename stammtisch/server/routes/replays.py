"""A finished deal step by step, for the web page's replay on the felt.

- ``GET  /api/tables/{id}/replay/{n}`` – finished deal ``n`` as this token may see it, view by
  view (``records.deal_replay``): while the table plays, each view is the one the table showed
  this token then (the admin's a spectator's); once it has ended (closed, or archived), a seat
  or the admin gets every hand. Token in ``Authorization: Bearer …``, as the record's.
- ``POST /api/replay`` – ``{"record": <a stammtisch-record/1>, "deal": n}``: a record file's
  deal, whole (the file holds every card). Nothing is stored; limited per client address.

The replay's state (which step is shown) stays in the page: the server only answers views.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import APIRouter
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ...record import RecordError
from .. import records
from ..refusals import Refusal, RefusalKind
from ..storage import StoredTable
from .deps import AddressDep, ServerDep, TokenDep
from .records import REPLAY_ERRORS, KnownId, finished_deal_answer, may_read

router = APIRouter()


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


@router.post("/api/replay")
async def post_replay(body: RecordReplay, server: ServerDep, address: AddressDep) -> Response:
    """A deal of a record file, view by view, whole. A record that does not replay is refused
    with its reason (rule "record"; "redacted record" for a download made during play)."""
    may_read(server, address)

    def build() -> dict[str, Any] | None:
        return records.deal_replay(body.record, body.deal, None, True)

    try:
        answer = await server.off_loop(build)
    except RecordError as e:
        raise Refusal(e.rule or "record", str(e), RefusalKind.INVALID) from None
    if answer is None:
        deals = body.record.get("deals")
        raise Refusal("no such deal", f"the record has no finished deal {body.deal} "
                      f"({len(deals) if isinstance(deals, list) else 0} deals)", RefusalKind.INVALID)
    return Response(orjson.dumps(answer), media_type="application/json")

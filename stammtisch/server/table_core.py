"""What the parts of a live table share: a seat, the table just before a deal (the undo
source), the registry a table needs of its manager (``Registry``), and the refusals and limits
of what a state message shows.

A live table keeps only its latest deal in memory; its database holds the record (the record
and analysis routes read it from there), so a table that plays all evening does not grow.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..games.base import Account
from ..i18n import Message as CatalogueMessage
from .event_store import EventStore
from .limits import ServerLimits
from .refusals import Refusal
from .scheduler import Scheduler
from .storage import StoredSocial
from .thinker import Thinker

if TYPE_CHECKING:
    from ..table import Table
    from .live_table import LiveTable

log = logging.getLogger("stammtisch.server")

# Refusals a table gives (rule code → English message); a translation catalogue comes later.
TRY_AGAIN = "the server could not store this just now; nothing changed, please try again"
SERVER_FAULT = "the server could not apply this; the table is unchanged"

#: Rows of the score sheet a state message carries (the last deals; the record has them all).
SCORE_ROWS_SHOWN = 20

History = list[tuple[list[str], list[tuple[int | None, str]]]]


@dataclass
class Seat:
    name: str
    bot: str | None
    digest: str | None  # SHA-256 of the seat token (None for bot seats)


@dataclass(frozen=True)
class DealStart:
    """A live table just before one of its deals: with that deal's committed deck and actions,
    all ``_undo`` needs. A live table keeps no earlier deal in memory (its database has the
    record), so memory does not grow deal by deal however long a table plays."""

    dealer: int
    balances: dict[Account, int]
    deals_before: int
    events: int
    score: list[dict[str, Any]]  # the score sheet's rows shown (the last SCORE_ROWS_SHOWN)
    scored: int  # the finished deals so far
    explanation: list[CatalogueMessage] | None

    @classmethod
    def before(cls, table: Table, events: int, score: list[dict[str, Any]], scored: int,
               explanation: list[CatalogueMessage] | None) -> DealStart:
        """``table`` as it is now, before its next deal."""
        return cls(table.dealer, dict(table.ledger.balances), table.deal_count, events,
                   list(score), scored, explanation)


class Registry(Protocol):
    """What a live table needs of the registry of tables (``TableManager``)."""

    limits: ServerLimits
    store: EventStore
    scheduler: Scheduler
    thinker: Thinker  # the search bots' worker process
    bot_delay: float  # seconds before a bot acts
    deal_pause: float  # seconds between deals at a table of bots
    retry_later: float  # seconds before a bot or the next deal tries again

    def get(self, table_id: str) -> LiveTable | None: ...

    async def create(self, ruleset_id: str, options: dict[str, Any],
                     seats: list[tuple[str, str | None]], max_deals: int | None = None,
                     social: StoredSocial | None = None) -> dict[str, Any]: ...

    async def creation_refusal(self, address: str) -> Refusal | None: ...

    async def reissue(self, live: LiveTable, seat: int | None) -> str: ...

    def drop(self, live: LiveTable) -> None: ...

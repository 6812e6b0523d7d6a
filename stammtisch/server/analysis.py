"""The analysis of a finished deal at the web table, off the event loop.

The open-hand solver takes from milliseconds (Tippen) to seconds (a whole Tapp deal), so it
never runs on the event loop: one worker process (started on the first request, forkserver,
so that nothing of the server is copied into it) solves one deal at a time, and its findings
are kept per (table, deal), so a deal is analysed once however many seats ask. The findings
hold every card; each reader is answered as the table showed him the deal
(``DealFindings.read_by``, analysis/seen.py), never with a card he was not shown.

The worker is a shared, slow resource, so requests are bounded: a table has one analysis
queued or under way at a time (another deal of it is refused with ``AnalysisBusy``; the same
deal joins the one under way), a requester (an address) has at most ``max_per_owner``
analyses waiting or under way and of at most ``max_cost_per_owner`` (beyond:
``AnalysisShareFull``; its first is taken whatever it costs), so that a flood cannot fill the
queue, and at most ``max_queued`` analyses wait or run in all (beyond: ``AnalysisQueueFull``).
Each analysis counts what it is expected to cost the worker (``deal_cost``: a Tapp deal far
more than a Tippen deal; a kept one nothing, it is not queued), and waiting analyses are taken
by requester in turn by that count (server/worker_pool.py): an address's first analysis comes
before a flooding address's next. A worker that dies is replaced within a bound (beyond:
``WorkersFailing`` for a while), and the worker ends with the server.

An analysis asked for in two parts (``begin(staged=True)``, the streamed answer of the route)
is two jobs: the cards played (quick: what the first line says) and the decisions before the
play with the par (the Tippen exchanges averaged over their talons, the Tapp par: most of the
work), joined when both are done. It is one analysis all the same: one slot, one cost, one
request against the rate limits, kept whole like any other.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from ..analysis.seen import DealFindings
from ..table import Table
from .worker_pool import DEFAULT_MAX_RESTARTS, DEFAULT_RESTART_WINDOW, WorkerError, WorkerPool, WorkersFailing

__all__ = ["Analyst", "AnalysisBusy", "AnalysisQueueFull", "AnalysisShareFull", "DealFindings", "WorkerError",
           "WorkersFailing", "analyse_deal", "deal_cost"]

CACHE_SIZE = 256  # analysed deals kept (a deal's findings are a few kilobytes)
#: analyses waiting or under way at most: one takes 0.1 s (Tippen) to seconds (Tapp), so the
#: last of a full queue waits seconds, not minutes
DEFAULT_MAX_QUEUED = 16
#: What an analysis is expected to cost the worker, in Tippen deals: a Tapp deal (every card
#: and the par, its discards solved) takes about a hundred times as long as a Tippen deal; a
#: deal that never reached the play is only replayed
COST_TIPPEN = 1.0
COST_TAPP = 100.0
COST_UNPLAYED = 0.1
#: per requester, its analyses waiting or under way at most, and their cost: two Tapp deals
DEFAULT_MAX_PER_OWNER = 4
DEFAULT_MAX_COST_PER_OWNER = 2 * COST_TAPP


class AnalysisBusy(WorkerError):
    """Another deal of the table is being analysed (or waits for it)."""

    rule = "analysis busy"


class AnalysisQueueFull(WorkerError):
    """As many analyses wait or run as the server takes."""

    rule = "analysis queue full"


class AnalysisShareFull(WorkerError):
    """The requester has as many analyses waiting or under way as one may."""

    rule = "analysis share"


def deal_cost(table: Table, deal: int) -> float:
    """What analysing deal ``deal`` (1-based) of ``table`` is expected to cost the worker
    (``COST_*``)."""
    actions = table.deals[deal - 1].actions
    if not any((a if isinstance(a, str) else a.get("action", "")).startswith("play:") for a in actions):
        return COST_UNPLAYED
    return COST_TAPP if table.rules.family == "tapp" else COST_TIPPEN


def analyse_deal(record: dict[str, Any], deal: int, part: str = "all") -> DealFindings:
    """The analysis of deal ``deal`` (1-based) of a full record, with what each reader knew
    (worker side). The routes answer each reader with ``DealFindings.read_by``: a seat, the
    spectators and the admin read it as the table showed them the deal while it plays on.
    ``part``: all of it, or one part (``analysis.deals.PARTS``, joined by ``joined``)."""
    from ..analysis.deals import analyze_record
    from ..analysis.seen import known_cards
    from ..rules import ruleset

    names = [str(p) for p in record["players"]]
    options = dict(record.get("options", {}))
    options.setdefault("players", len(names))
    suits = str(getattr(ruleset(record["ruleset"], options), "suits", "french"))
    found = analyze_record(record, deal, part=part)  # none: the deal never reached the play phase
    known = known_cards(record, deal) if part != "before" else {}
    return DealFindings(deal, found[0] if found else None, known, names, suits)


def joined(play: DealFindings, before: DealFindings) -> DealFindings:
    """A deal's findings from its two parts (``analyse_deal``'s "play" and "before")."""
    from ..analysis.deals import with_decisions

    if play.analysis is None or before.analysis is None:
        return play
    return replace(play, analysis=with_decisions(play.analysis, before.analysis))


async def _both(first: asyncio.Future[DealFindings], before: asyncio.Future[DealFindings]) -> DealFindings:
    return joined(await first, await before)


@dataclass(frozen=True)
class _Slot:
    """A table's analysis queued or under way: its deal, its result to come (``first``: the
    cards played, the same as ``running`` unless it was asked for in two parts), who asked
    first and what it costs him."""

    deal: int
    running: asyncio.Future[DealFindings]
    owner: str
    cost: float
    first: asyncio.Future[DealFindings]


class Analyst:
    """Deal analyses for the whole server: one worker process, answers cached, requests for the
    same deal joined.

    ``max_queued``: analyses waiting or under way at most; ``max_per_owner`` and
    ``max_cost_per_owner``: their number and cost (``deal_cost``) per requester at most;
    ``workers``, ``max_restarts``, ``restart_window`` and ``clock`` as for the Thinker
    (server/thinker.py).
    """

    def __init__(self, max_queued: int = DEFAULT_MAX_QUEUED, workers: int = 1,
                 max_restarts: int = DEFAULT_MAX_RESTARTS, restart_window: float = DEFAULT_RESTART_WINDOW,
                 clock: Callable[[], float] = time.monotonic, max_per_owner: int = DEFAULT_MAX_PER_OWNER,
                 max_cost_per_owner: float = DEFAULT_MAX_COST_PER_OWNER) -> None:
        if max_queued < 1 or max_per_owner < 1 or max_cost_per_owner <= 0:
            raise ValueError("max_queued and max_per_owner must be >= 1, max_cost_per_owner > 0")
        self.max_queued = max_queued
        self.max_per_owner = max_per_owner
        self.max_cost_per_owner = max_cost_per_owner
        self.worker_pool = WorkerPool("the Analysis' worker process", workers, max_restarts, restart_window, clock)
        self._done: OrderedDict[tuple[str, int], DealFindings] = OrderedDict()
        # per table: the analysis queued or under way
        self._slots: dict[str, _Slot] = {}

    def cached(self, table_id: str, deal: int) -> DealFindings | None:
        """The analysis of the deal if it is kept from an earlier request: then its record
        need not be read."""
        key = (table_id, deal)
        found = self._done.get(key)
        if found is not None:
            self._done.move_to_end(key)
        return found

    async def analyse(self, table_id: str, deal: int, record: dict[str, Any], owner: str = "",
                      cost: float = COST_TIPPEN) -> DealFindings:
        """The analysis of deal ``deal`` of table ``table_id`` (``record``: its full record);
        ``owner`` (the requester's address) takes its turn in the queue, ``cost`` (``deal_cost``)
        counts against its share. Refused with ``AnalysisBusy``, ``AnalysisShareFull``,
        ``AnalysisQueueFull`` or ``WorkersFailing`` (all ``WorkerError``). Joining the same
        deal's analysis under way costs nothing."""
        _, running = self.begin(table_id, deal, record, owner, cost)
        # shielded: a requester that goes away neither cancels the others' wait nor the work
        result: DealFindings = await asyncio.shield(running)
        return result

    def begin(self, table_id: str, deal: int, record: dict[str, Any], owner: str = "",
              cost: float = COST_TIPPEN, staged: bool = False
              ) -> tuple[asyncio.Future[DealFindings], asyncio.Future[DealFindings]]:
        """``analyse`` without the wait: the futures of the cards played and of the whole
        analysis (done at once when it is kept); ``staged``: the cards played come first, as a
        job of their own (the module's docstring). Refused as ``analyse``."""
        found = self.cached(table_id, deal)
        if found is not None:
            done: asyncio.Future[DealFindings] = asyncio.get_running_loop().create_future()
            done.set_result(found)
            return done, done
        slot = self._slots.get(table_id)
        if slot is not None:
            if slot.deal != deal:
                raise AnalysisBusy(f"deal {slot.deal} of this table is being analysed; "
                                   "ask again when its analysis is done")
        else:
            owned = [s.cost for s in self._slots.values() if s.owner == owner]
            if owned and (len(owned) >= self.max_per_owner or sum(owned) + cost > self.max_cost_per_owner):
                raise AnalysisShareFull("your analyses waiting or under way are as many as one client may have; "
                                        "ask again when one is done")
            if len(self._slots) >= self.max_queued:
                raise AnalysisQueueFull(f"{len(self._slots)} analyses are waiting or under way, as many "
                                        "as the server takes; ask again in a few seconds")
            if staged:
                first = self.worker_pool.submit(owner, (table_id, "play"), analyse_deal, record, deal, "play",
                                                cost=cost / 2)
                before = self.worker_pool.submit(owner, (table_id, "before"), analyse_deal, record, deal,
                                                 "before", cost=cost / 2)
                running: asyncio.Future[DealFindings] = asyncio.ensure_future(_both(first, before))
            else:
                first = running = self.worker_pool.submit(owner, table_id, analyse_deal, record, deal, cost=cost)
            slot = self._slots[table_id] = _Slot(deal, running, owner, cost, first)
            running.add_done_callback(partial(self._finished, table_id, deal))
        return slot.first, slot.running

    def _finished(self, table_id: str, deal: int, running: asyncio.Future[DealFindings]) -> None:
        """An analysis ended (also failed or cancelled): the table's slot is free, a result kept."""
        slot = self._slots.get(table_id)
        if slot is not None and slot.running is running:
            del self._slots[table_id]
        if running.cancelled() or running.exception() is not None:
            return
        self._done[(table_id, deal)] = running.result()
        while len(self._done) > CACHE_SIZE:
            self._done.popitem(last=False)

    @property
    def queued(self) -> int:
        """Analyses waiting or under way."""
        return len(self._slots)

    @property
    def _pool(self) -> ProcessPoolExecutor | None:
        """The current process pool (None before the first analysis)."""
        return self.worker_pool.executor

    def worker_pids(self) -> list[int]:
        return self.worker_pool.worker_pids()

    def shutdown(self) -> None:
        self.worker_pool.shutdown()

"""The analysis of a finished deal at the web table, off the event loop.

The open-hand solver takes from milliseconds (Tippen) to seconds (a whole Tapp deal), so it
never runs on the event loop: one worker process (started on the first request, forkserver,
so that nothing of the server is copied into it) solves one deal at a time, and its findings
are kept per (table, deal), so a deal is analysed once however many seats ask. The findings
hold every card; each reader is answered as the table showed him the deal
(``DealFindings.read_by``, analysis/seen.py), never with a card he was not shown.

The worker is a shared, slow resource, so requests are bounded: a table has one analysis
queued or under way at a time (another deal of it is refused with ``AnalysisBusy``; the same
deal joins the one under way), and at most ``max_queued`` analyses wait or run in all (beyond:
``AnalysisQueueFull``). Waiting analyses are taken by requester in turn (server/worker_pool.py),
a worker that dies is replaced within a bound (beyond: ``WorkersFailing`` for a while), and the
worker ends with the server.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any

from ..analysis.seen import DealFindings
from .worker_pool import DEFAULT_MAX_RESTARTS, DEFAULT_RESTART_WINDOW, WorkerError, WorkerPool, WorkersFailing

__all__ = ["Analyst", "AnalysisBusy", "AnalysisQueueFull", "DealFindings", "WorkerError", "WorkersFailing",
           "analyse_deal"]

CACHE_SIZE = 256  # analysed deals kept (a deal's findings are a few kilobytes)
#: analyses waiting or under way at most: one takes 0.1 s (Tippen) to seconds (Tapp), so the
#: last of a full queue waits seconds, not minutes
DEFAULT_MAX_QUEUED = 16


class AnalysisBusy(WorkerError):
    """Another deal of the table is being analysed (or waits for it)."""

    rule = "analysis busy"


class AnalysisQueueFull(WorkerError):
    """As many analyses wait or run as the server takes."""

    rule = "analysis queue full"


def analyse_deal(record: dict[str, Any], deal: int) -> DealFindings:
    """The analysis of deal ``deal`` (1-based) of a full record, with what each reader knew
    (worker side). The routes answer each reader with ``DealFindings.read_by``: a seat, the
    spectators and the admin read it as the table showed them the deal while it plays on."""
    from ..analysis.deals import analyze_record
    from ..analysis.seen import known_cards
    from ..rules import ruleset

    names = [str(p) for p in record["players"]]
    options = dict(record.get("options", {}))
    options.setdefault("players", len(names))
    suits = str(getattr(ruleset(record["ruleset"], options), "suits", "french"))
    found = analyze_record(record, deal)  # none: the deal never reached the play phase
    return DealFindings(deal, found[0] if found else None, known_cards(record, deal), names, suits)


class Analyst:
    """Deal analyses for the whole server: one worker process, answers cached, requests for the
    same deal joined.

    ``max_queued``: analyses waiting or under way at most; ``workers``, ``max_restarts``,
    ``restart_window`` and ``clock`` as for the Thinker (server/thinker.py).
    """

    def __init__(self, max_queued: int = DEFAULT_MAX_QUEUED, workers: int = 1,
                 max_restarts: int = DEFAULT_MAX_RESTARTS, restart_window: float = DEFAULT_RESTART_WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if max_queued < 1:
            raise ValueError("max_queued must be >= 1")
        self.max_queued = max_queued
        self.worker_pool = WorkerPool("the Analysis' worker process", workers, max_restarts, restart_window, clock)
        self._done: OrderedDict[tuple[str, int], DealFindings] = OrderedDict()
        # per table: the deal queued or under way and its result to come
        self._slots: dict[str, tuple[int, asyncio.Future[DealFindings]]] = {}

    def cached(self, table_id: str, deal: int) -> DealFindings | None:
        """The analysis of the deal if it is kept from an earlier request: then its record
        need not be read."""
        key = (table_id, deal)
        found = self._done.get(key)
        if found is not None:
            self._done.move_to_end(key)
        return found

    async def analyse(self, table_id: str, deal: int, record: dict[str, Any], owner: str = "") -> DealFindings:
        """The analysis of deal ``deal`` of table ``table_id`` (``record``: its full record);
        ``owner`` (the requester's address) takes its turn in the queue. Refused with
        ``AnalysisBusy``, ``AnalysisQueueFull`` or ``WorkersFailing`` (all ``WorkerError``)."""
        found = self.cached(table_id, deal)
        if found is not None:
            return found
        slot = self._slots.get(table_id)
        if slot is not None:
            other, running = slot
            if other != deal:
                raise AnalysisBusy(f"deal {other} of this table is being analysed; "
                                   "ask again when its analysis is done")
        else:
            if len(self._slots) >= self.max_queued:
                raise AnalysisQueueFull(f"{len(self._slots)} analyses are waiting or under way, as many "
                                        "as the server takes; ask again in a few seconds")
            running = self.worker_pool.submit(owner, table_id, analyse_deal, record, deal)
            self._slots[table_id] = (deal, running)
            running.add_done_callback(partial(self._finished, table_id, deal))
        # shielded: a requester that goes away neither cancels the others' wait nor the work
        result: DealFindings = await asyncio.shield(running)
        return result

    def _finished(self, table_id: str, deal: int, running: asyncio.Future[DealFindings]) -> None:
        """An analysis ended (also failed or cancelled): the table's slot is free, a result kept."""
        if self._slots.get(table_id, (0, None))[1] is running:
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

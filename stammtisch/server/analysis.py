"""The analysis of a finished deal at the web table, off the event loop.

The open-hand solver takes from milliseconds (Tippen) to seconds (a whole Tapp deal), so it
never runs on the event loop: one worker process (started on the first request, forkserver,
so that nothing of the server is copied into it) solves one deal at a time, and answers are
kept per (table, deal), so a deal is analysed once however many seats ask. The answer holds
values and the cards that were played, never a card that was not shown at the table.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from typing import Any

CACHE_SIZE = 256  # analysed deals kept (a deal's analysis is a few kilobytes)


def analyse_deal(record: dict[str, Any], deal: int) -> dict[str, Any]:
    """The analysis of deal ``deal`` (1-based) of a full record, as JSON data (worker side)."""
    from ..solve.analysis import analyze_record

    found = analyze_record(record, deal)
    if not found:  # the deal never reached the play phase (everyone passed, …)
        return {"deal": deal, "played": False, "plays": [], "mistakes": []}
    return {"played": True, **found[0].to_json()}


class Analyst:
    """Deal analyses for the whole server: one worker process, answers cached, requests for the
    same deal joined."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self._done: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()
        self._running: dict[tuple[str, int], asyncio.Future[dict[str, Any]]] = {}

    def cached(self, table_id: str, deal: int) -> dict[str, Any] | None:
        """The analysis of the deal if it is kept from an earlier request: then its record
        need not be read."""
        key = (table_id, deal)
        found = self._done.get(key)
        if found is not None:
            self._done.move_to_end(key)
        return found

    async def analyse(self, table_id: str, deal: int, record: dict[str, Any]) -> dict[str, Any]:
        key = (table_id, deal)
        found = self.cached(table_id, deal)
        if found is not None:
            return found
        running = self._running.get(key)
        if running is None:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"))
            loop = asyncio.get_running_loop()
            running = asyncio.ensure_future(loop.run_in_executor(self._pool, analyse_deal, record, deal))
            self._running[key] = running
            try:
                result: dict[str, Any] = await asyncio.shield(running)
            finally:
                self._running.pop(key, None)
            self._done[key] = result
            while len(self._done) > CACHE_SIZE:
                self._done.popitem(last=False)
            return result
        joined: dict[str, Any] = await asyncio.shield(running)
        return joined

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

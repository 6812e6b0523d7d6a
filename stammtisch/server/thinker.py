"""Search bots at the web table think in a worker process, never on the event loop.

``pimc`` takes ~0.1 s in the median and more than a second at the tail for one
decision (bench/strength.py); on the event loop that would hold up every table of the server.
So the table hands the decision to one worker process (forkserver: nothing of the server is
copied into it): the deal is sent as the worker needs to rebuild it (rule set, options, the
table state at the deal's start, the deck and the actions so far, all as text), the bot decides
there on its own view, and the action comes back as its string. The table applies it only if
nothing happened meanwhile (the event number is unchanged), as with any action.

The worker is shared fairly (server/worker_pool.py): decisions wait here and the worker gets one
at a time, the tables' owners in turn and an owner's tables in turn, so one client's many bot
tables slow down its own decisions rather than everybody's. A worker that dies is replaced
(within a bound; beyond it ``decide`` raises ``WorkersFailing`` for a while), and the worker ends
with the server.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from .worker_pool import DEFAULT_MAX_RESTARTS, DEFAULT_RESTART_WINDOW, WorkerPool, WorkersFailing

__all__ = ["DealSoFar", "Thinker", "WorkersFailing", "advise", "decide"]


@dataclass(frozen=True)
class DealSoFar:
    """What the worker needs to rebuild a deal in progress (picklable, all text and numbers)."""

    ruleset_id: str
    options: dict[str, Any]
    dealer: int
    pot: int
    reserve: int
    deck: tuple[str, ...]
    actions: tuple[str, ...]


def rebuild(deal: DealSoFar) -> Any:
    """The deal's state as it stands (in the worker)."""
    from .replay import replay_deal, table_at

    table = table_at(deal.ruleset_id, deal.options, deal.dealer, deal.pot, deal.reserve)
    replay_deal(table, deal.deck, ((None, text) for text in deal.actions))
    return table.state


def decide(deal: DealSoFar, bot_name: str, seat: int, seed: int) -> str:
    """Rebuild the deal and let the bot choose for ``seat`` (runs in the worker)."""
    from ..bots import make_bot

    state = rebuild(deal)
    bot = make_bot(bot_name, state.game.rules.family, random.Random(seed))
    text: str = state.action_to_string(bot.act(state, seat))
    return text


def advise(deal: DealSoFar, seat: int, seed: int) -> dict[str, Any]:
    """Rebuild the deal and ask the search bot for a hint for ``seat`` (runs in the worker):
    ``{"action": str, "why": Message}`` (``stammtisch.bots.pimc.Advice``)."""
    from ..bots.pimc import advise as pimc_advise

    advice = pimc_advise(rebuild(deal), seat, seed)
    return {"action": advice.action, "why": advice.why()}


class Thinker:
    """The worker process(es) of the search bots of the whole server, started on first use.

    ``workers``: processes (one: the search itself is single-threaded and the server needs the
    other core); ``max_restarts`` new workers within ``restart_window`` seconds, beyond that no
    decisions for ``restart_window`` seconds (``WorkersFailing``); ``clock`` is for tests.
    """

    def __init__(self, workers: int = 1, max_restarts: int = DEFAULT_MAX_RESTARTS,
                 restart_window: float = DEFAULT_RESTART_WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.worker_pool = WorkerPool("the search bots' worker process", workers, max_restarts, restart_window, clock)

    async def decide(self, deal: DealSoFar, bot_name: str, seat: int, seed: int, owner: str = "",
                     table: str | None = None) -> str:
        """The bot's action for ``seat``, as its string. ``owner`` (the address that created the
        table) and ``table`` (its id) place the decision in the fair queue; a table has at most
        one decision waiting (``ValueError`` otherwise; no ``table``: a queue slot of its own).
        ``WorkersFailing`` while the worker keeps dying."""
        key: Hashable = table if table is not None else object()
        text: str = await self.worker_pool.submit(owner, key, decide, deal, bot_name, seat, seed)
        return text

    async def advise(self, deal: DealSoFar, seat: int, seed: int, owner: str = "",
                     table: str | None = None) -> dict[str, Any]:
        """A hint for ``seat``: ``{"action": str, "why": Message}`` (the search bot's choice and
        one line of why, a catalogue message to render in the reader's language). In the same
        worker and fair queue as ``decide``; a table has at most one hint waiting (``ValueError``
        otherwise), beside its bot decision, if any. ``WorkersFailing`` likewise. ``seed``: the
        same seed and the same view of the seat give the same hint."""
        key: Hashable = (table, "hint") if table is not None else object()
        answer: dict[str, Any] = await self.worker_pool.submit(owner, key, advise, deal, seat, seed)
        return answer

    @property
    def _pool(self) -> ProcessPoolExecutor | None:
        """The current process pool (None before the first decision)."""
        return self.worker_pool.executor

    def worker_pids(self) -> list[int]:
        return self.worker_pool.worker_pids()

    def shutdown(self) -> None:
        self.worker_pool.shutdown()

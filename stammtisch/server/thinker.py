"""Search bots at the web table think in a worker process, never on the event loop.

``pimc`` and ``ismcts`` take ~0.1 s in the median and more than a second at the tail for one
decision (bench/strength.py); on the event loop that would hold up every table of the server.
So the table hands the decision to one worker process (forkserver: nothing of the server is
copied into it): the deal is sent as the worker needs to rebuild it (rule set, options, the
table state at the deal's start, the deck and the actions so far, all as text), the bot decides
there on its own view, and the action comes back as its string. The table applies it only if
nothing happened meanwhile (the event number is unchanged), as with any action.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import random
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any


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


def decide(deal: DealSoFar, bot_name: str, seat: int, seed: int) -> str:
    """Rebuild the deal and let the bot choose for ``seat`` (runs in the worker)."""
    from ..bots import make_bot
    from ..games import TableState, new_game
    from ..rules import ruleset

    rules = ruleset(deal.ruleset_id, deal.options)
    game = new_game(rules)
    state = game.new_deal(TableState(deal.dealer, deal.pot, deal.reserve), game.deck_from_strings(list(deal.deck)))
    for text in deal.actions:
        state.apply(state.string_to_action(text))
    bot = make_bot(bot_name, rules.family, random.Random(seed))
    return state.action_to_string(bot.act(state, seat))


class Thinker:
    """One worker process for the search bots of the whole server, started on first use."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    async def decide(self, deal: DealSoFar, bot_name: str, seat: int, seed: int) -> str:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"))
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, decide, deal, bot_name, seat, seed)

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

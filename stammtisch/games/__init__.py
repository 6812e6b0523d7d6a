"""Game engines: all game logic lives in this package (layer 3 of docs/engine-conventions.md).

``new_game(rules)`` finds the engine of a rule set's family in ``ENGINES``, the one registry
of engines (a new family is one entry here); ``shared_game(rules)`` is the one engine that
every table of equal rules shares.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from .base import POT, RESERVE, DealResult, IllegalAction, TableState, Transfer
from .engine import EngineGame, EngineState
from .tapp import TappGame
from .tippen import TippenGame

if TYPE_CHECKING:
    from ..rules import Rules

ENGINES: dict[str, type[TippenGame] | type[TappGame]] = {"tippen": TippenGame, "tapp": TappGame}


def new_game(rules: Rules) -> TippenGame | TappGame:
    """The engine for a rule set (a ``TippenRules`` or ``TappRules``)."""
    return ENGINES[rules.family](rules)  # type: ignore[arg-type]


@lru_cache(maxsize=64)
def shared_game(rules: Rules) -> TippenGame | TappGame:
    """``new_game(rules)``, one for all equal rule sets (the last 64 asked for): an engine is
    immutable (its memo of log texts holds the same texts for every deal of its rules), so the
    tables of a server share it. Why: each engine holds ~22 KB of tables (card names, action
    texts, who beats whom), and a table's own copy would be cold in the processor's caches at
    its every event; shared, one copy serves every table of those rules (bench/server_load.py).
    A table keeps its engine whether or not it stays in the cache."""
    return new_game(rules)


__all__ = [
    "ENGINES", "POT", "RESERVE", "DealResult", "EngineGame", "EngineState", "IllegalAction",
    "TableState", "Transfer", "new_game", "shared_game",
]

"""Game engines: all game logic lives in this package (DESIGN.md layer 3).

``new_game(rules)`` finds the engine of a rule set's family in ``ENGINES``, the one registry
of engines (a new family is one entry here).
"""

from __future__ import annotations

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


__all__ = [
    "ENGINES", "POT", "RESERVE", "DealResult", "EngineGame", "EngineState", "IllegalAction",
    "TableState", "Transfer", "new_game",
]

"""Game engines: all game logic lives in this package (DESIGN.md layer 3)."""

from .base import (
    POT,
    RESERVE,
    DealResult,
    IllegalAction,
    TableState,
    Transfer,
    apply_string,
    new_game,
)

__all__ = [
    "POT", "RESERVE", "DealResult", "IllegalAction", "TableState", "Transfer",
    "apply_string", "new_game",
]

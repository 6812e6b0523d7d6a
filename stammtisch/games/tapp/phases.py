"""The phases of a Tapp deal, apart from the state so that the state's sampler can read them
without importing the state. The plain numbers (``PLAY`` …) are what the state stores and its
hot paths compare; ``Phase`` names them."""

from __future__ import annotations

from enum import IntEnum
from typing import Final

AUCTION: Final = 0  # historic: bid, hold or pass
TRUMP: Final = 1  # Classic suit Solo: name the trump suit
DISCARD: Final = 2  # Frage: discard as many as picked up
TOUT: Final = 3  # historic: announce Tout or not
DECLARE: Final = 4  # Modern round 1: play or weg
CONTRACT: Final = 5  # Modern round 2: name a contract or pass
CALL: Final = 6  # Rufer: call a card
GIVE: Final = 7  # Rufer: give a card back
PLAY: Final = 8
OVER: Final = 9


class Phase(IntEnum):
    AUCTION = AUCTION
    TRUMP = TRUMP
    DISCARD = DISCARD
    TOUT = TOUT
    DECLARE = DECLARE
    CONTRACT = CONTRACT
    CALL = CALL
    GIVE = GIVE
    PLAY = PLAY
    OVER = OVER


PHASE_NAMES: Final = ("auction", "trump", "discard", "tout", "declare", "contract", "call", "give",
                      "play", "over")

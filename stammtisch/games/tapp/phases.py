"""The phases of a Tapp deal, apart from the state so that the state's sampler can read them
without importing the state."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    AUCTION = 0  # historic: bid, hold or pass
    TRUMP = 1  # Classic suit Solo: name the trump suit
    DISCARD = 2  # Frage: discard as many as picked up
    TOUT = 3  # historic: announce Tout or not
    DECLARE = 4  # Modern round 1: play or weg
    CONTRACT = 5  # Modern round 2: name a contract or pass
    CALL = 6  # Rufer: call a card
    GIVE = 7  # Rufer: give a card back
    PLAY = 8
    OVER = 9


PHASE_NAMES = ("auction", "trump", "discard", "tout", "declare", "contract", "call", "give",
               "play", "over")

"""The numbers every Tippen module shares: phases, seat states, the upcard's state, what the
dealer took, the word actions and the phase hints of refusals."""

from __future__ import annotations

from enum import IntEnum
from typing import Final

# The phases as the state stores them and its hot paths compare them (``Phase`` names them).
SHOVE: Final = 0  # Schieben: the dealer shoves or deals
CHOICE: Final = 1  # the dealer sniffs, knocks, looks or turns
DISCARD: Final = 2  # a sniffer or knocker discards one card
DROP: Final = 3  # the 1859 sniffer drops or stays
DECLARE: Final = 4  # tap or pass
EXCHANGE: Final = 5
ROB: Final = 6
PLAY: Final = 7
OVER: Final = 8


class Phase(IntEnum):
    SHOVE = SHOVE
    CHOICE = CHOICE
    DISCARD = DISCARD
    DROP = DROP
    DECLARE = DECLARE
    EXCHANGE = EXCHANGE
    ROB = ROB
    PLAY = PLAY
    OVER = OVER


PHASE_NAMES: Final = ("schieben", "choice", "discard", "drop", "declare", "exchange", "rob", "play", "over")

# Seat status.
UNDECIDED: Final = 0
ACTIVE: Final = 1
PASSED: Final = 2
DROPPED: Final = 3

# Upcard state (trump_card = turn / katira).
UP_NONE: Final = 0
UP_HIDDEN: Final = 1
UP_FACE: Final = 2
UP_TAKEN: Final = 3

# What the dealer did at his choice.
TAKE_NONE: Final = 0
TAKE_SNIFF1859: Final = 1
TAKE_SNIFF_MODERN: Final = 2
TAKE_KNOCK: Final = 3

# "look" is this project's addition (rules reference §0): with both knocking and sniffing
# agreed the dealer first decides blind whether to knock, and only if he does not, looks at
# his hand and may sniff (rules reference §6 T7/T8: a knocker has not seen his hand, a
# sniffer has).
WORDS: Final = ("tap", "pass", "shove", "deal", "sniff", "knock", "turn", "drop", "stay", "rob", "no-rob",
                "look")
W_TAP: Final = 0
W_PASS: Final = 1
W_SHOVE: Final = 2
W_DEAL: Final = 3
W_SNIFF: Final = 4
W_KNOCK: Final = 5
W_TURN: Final = 6
W_DROP: Final = 7
W_STAY: Final = 8
W_ROB: Final = 9
W_NOROB: Final = 10
W_LOOK: Final = 11
EXCHANGE_OFFSET: Final = 16

PHASE_HINT = {
    SHOVE: "the dealer must shove or deal",
    CHOICE: "the dealer must choose before the trump is turned",
    DISCARD: "the dealer must discard one card",
    DROP: "the sniffer must drop or stay",
    DECLARE: "the players are declaring (tap or pass)",
    EXCHANGE: "the active players are exchanging",
    ROB: "the active players are asked in turn; the holder of the trump 7 may rob the upcard",
    PLAY: "the cards are being played",
    OVER: "the deal is over",
}

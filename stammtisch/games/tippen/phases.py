"""The numbers every Tippen module shares: phases, seat states, the upcard's state, what the
dealer took, the word actions and the phase hints of refusals."""

from __future__ import annotations

from enum import IntEnum


class Phase(IntEnum):
    SHOVE = 0  # Schieben: the dealer shoves or deals
    CHOICE = 1  # the dealer sniffs, knocks, looks or turns
    DISCARD = 2  # a sniffer or knocker discards one card
    DROP = 3  # the 1859 sniffer drops or stays
    DECLARE = 4  # tap or pass
    EXCHANGE = 5
    ROB = 6
    PLAY = 7
    OVER = 8


# plain ints for the hot paths
SHOVE, CHOICE, DISCARD, DROP, DECLARE, EXCHANGE, ROB, PLAY, OVER = (int(p) for p in Phase)
PHASE_NAMES = ("schieben", "choice", "discard", "drop", "declare", "exchange", "rob", "play", "over")

# Seat status.
UNDECIDED, ACTIVE, PASSED, DROPPED = range(4)

# Upcard state (trump_card = turn / katira).
UP_NONE, UP_HIDDEN, UP_FACE, UP_TAKEN = range(4)

# What the dealer did at his choice.
TAKE_NONE, TAKE_SNIFF1859, TAKE_SNIFF_MODERN, TAKE_KNOCK = range(4)

# "look" is this project's addition (rules reference §0): with both knocking and sniffing
# agreed the dealer first decides blind whether to knock, and only if he does not, looks at
# his hand and may sniff (rules reference §6 T7/T8: a knocker has not seen his hand, a
# sniffer has).
WORDS = ("tap", "pass", "shove", "deal", "sniff", "knock", "turn", "drop", "stay", "rob", "no-rob",
         "look")
(W_TAP, W_PASS, W_SHOVE, W_DEAL, W_SNIFF, W_KNOCK, W_TURN, W_DROP, W_STAY, W_ROB,
 W_NOROB, W_LOOK) = range(len(WORDS))
EXCHANGE_OFFSET = 16

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

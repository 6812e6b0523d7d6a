"""The one place where the environments read engine facts beyond the public State API.

Everything the adapters need that ``legal_actions()``, ``apply()``, ``view()`` and
``returns()`` do not give is read here, so an engine refactoring touches one small module.
None of it is hidden information: the constants describe the action-id layout and the pack.
"""

from __future__ import annotations

from typing import Any

#: Phase names of each family as the views spell them, in the order of the observation's
#: one-hot. The terminal phase is ``"over"``; Tippen's older spelling ``"done"`` is an alias.
PHASES: dict[str, tuple[str, ...]] = {
    "tippen": ("schieben", "choice", "discard", "drop", "declare", "exchange", "rob", "play", "over"),
    "tapp": ("auction", "trump", "discard", "tout", "declare", "contract", "call", "give", "play", "over"),
}
PHASE_ALIASES = {"done": "over"}


def tippen_layout(game: Any) -> tuple[int, int, int]:
    """(pack size S, number of words, first exchange id) of a Tippen engine."""
    from ..games.tippen import EXCHANGE_OFFSET, WORDS

    size = int(game.pack.size)
    return size, len(WORDS), 2 * size + EXCHANGE_OFFSET


def tapp_layout(game: Any) -> tuple[int, int, int, int]:
    """(pack size N, number of fixed actions, first discard id, cards discarded) of a Tapp engine."""
    from ..games.tapp import O_DISCARD

    size = int(game.pack.size)
    return size, O_DISCARD, 3 * size + O_DISCARD, int(game.tapp_size)


def tapp_hand_size(game: Any) -> int:
    """Cards in the declarer's hand when he discards: his hand plus the tapp he picked up."""
    return int(game.hand_size) + int(game.tapp_size)


def tapp_contracts(game: Any) -> tuple[str, ...]:
    """The contract names a Tapp view may show (without ``+tout`` and a Classic solo's suit)."""
    from ..games.tapp import HISTORIC_BIDS, MODERN_CONTRACTS

    if game.rules.modern:
        return (*(c[0] for c in MODERN_CONTRACTS), "ramsch")
    return tuple(HISTORIC_BIDS)


def action_string(state: Any, action: int) -> str:
    return str(state.action_to_string(action))


def deck_positions_read(game: Any) -> int:
    """How many deck positions, from the top, a deal of this rule set can ever look at.

    The OpenSpiel game deals these as chance outcomes and lays the rest of the pack under them in
    pack order: cards nobody can ever see or use need no chance node (this keeps small Tippen
    games small enough for CFR). Tippen reads the hands, the turned card, the talon only for
    exchanges, and the bottom card only for Hupf und Sprung; Tapp deals the whole pack.
    """
    rules = game.rules
    size = int(game.pack.size)
    if rules.family != "tippen" or rules.exchange or rules.hupf_und_sprung != "none":
        return size
    upcard = 0 if rules.trump_card == "dealer-last" else 1
    return min(size, int(rules.players * rules.tricks) + upcard)


def resample(state: Any, seat: int, rng: Any) -> Any | None:
    """A full engine state consistent with what ``seat`` knows, if the engine offers it (else None)."""
    method = getattr(state, "resample", None)
    return None if method is None else method(seat, rng)

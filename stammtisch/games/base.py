"""The Game / State API shared by every engine (OpenSpiel-like, DESIGN.md layer 3).

A ``Game`` is built from a validated rule set and is immutable. A ``State`` is one deal in
progress. Randomness enters only as an explicit deck order, so a deal is a pure function of
(rules, carried-over table state, deck, actions).

Accounts: a player is his seat number (0…n-1, in the direction of play); the pot is
``"pot"`` and the Tippen maximum-bête reserve is ``"reserve"``. Every movement of value in a
deal is a ``Transfer``; the table applies them to its ledger when the deal is over.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

Account = int | str
POT = "pot"
RESERVE = "reserve"


class IllegalAction(ValueError):
    """An action that is not legal now. ``rule`` names the rule it breaks.

    Raised by ``State.apply`` and ``State.string_to_action``; the state is unchanged.
    """

    def __init__(self, rule: str, message: str):
        super().__init__(f"{message} ({rule})")
        self.rule = rule
        self.message = message


@dataclass(frozen=True)
class Transfer:
    """``amount`` counters move from ``source`` to ``target`` (accounts as above)."""

    source: Account
    target: Account
    amount: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"from": self.source, "to": self.target, "amount": self.amount, "reason": self.reason}


@dataclass(frozen=True)
class TableState:
    """What a deal inherits from the deals before it at the same table.

    ``dealer``: the seat due to deal (before any shove or jump of this deal).
    ``pot`` and ``reserve``: the balances of those accounts now.
    """

    dealer: int = 0
    pot: int = 0
    reserve: int = 0


@dataclass
class DealResult:
    """What a finished deal did. ``next_dealer`` is who deals the next deal.

    ``summary`` holds what a reader of the deal wants beyond money: for Tippen ``tricks``
    (seat → tricks, active players only); for Tapp also ``declarer``, ``contract`` and
    ``card_points``.
    """

    transfers: list[Transfer]
    next_dealer: int
    dealer: int  # the dealer of record of this deal (after shoves)
    summary: dict[str, Any] = field(default_factory=dict)

    def net(self, num_players: int) -> dict[int, int]:
        return dict(enumerate(net_change(self.transfers, num_players)))


def net_change(transfers: Iterable[Transfer], num_players: int) -> list[int]:
    """The change of each seat's balance that a list of transfers makes."""
    out = [0] * num_players
    for t in transfers:
        if type(t.source) is int:
            out[t.source] -= t.amount
        if type(t.target) is int:
            out[t.target] += t.amount
    return out


class State(Protocol):
    """One deal in progress. Every engine's state class has these members."""

    game: Game

    def current_player(self) -> int:
        """The seat to act; ``-1`` when the deal is over."""

    def legal_actions(self) -> list[int]:
        """The legal actions of the current player, ascending; empty when terminal."""

    def apply(self, action: int) -> None:
        """Apply a legal action; raise ``IllegalAction`` (state unchanged) otherwise."""

    def is_terminal(self) -> bool: ...

    def action_to_string(self, action: int) -> str: ...

    def string_to_action(self, text: str) -> int:
        """Parse an action in the notation of docs/rules-reference.md §0; raise ``IllegalAction``
        if malformed."""

    def view(self, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know, as JSON-able data (``None``: a spectator)."""

    def clone(self) -> State: ...

    def result(self) -> DealResult:
        """The transfers of the deal; only valid when terminal."""

    def returns(self) -> list[int]:
        """Net change of each seat's balance in this deal (terminal only)."""


class Game(Protocol):
    rules: Any
    num_players: int

    def new_deal(self, table: TableState, deck: Sequence[int]) -> State: ...

    def deck_from_strings(self, cards: Sequence[str]) -> list[int]: ...

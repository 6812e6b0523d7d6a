"""The types every engine shares (OpenSpiel-like; layer 3 of docs/engine-conventions.md).

A game (``engine.EngineGame``) is built from a validated rule set and is immutable. A state
(``engine.EngineState``) is one deal in progress. Randomness enters only as an explicit deck
order, so a deal is a pure function of (rules, carried-over table state, deck, actions).

Accounts: a player is his seat number (0…n-1, in the direction of play); the pot is
``"pot"`` and the Tippen maximum-bête reserve is ``"reserve"``. Every movement of value in a
deal is a ``Transfer``; the table applies them to its ledger when the deal is over.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

Account = int | str
POT: Final = "pot"
RESERVE: Final = "reserve"


class IllegalAction(ValueError):
    """An action that is not legal now. ``rule`` names the rule it breaks.

    Raised by ``EngineState.apply`` and ``EngineState.string_to_action``; the state is unchanged.
    """

    def __init__(self, rule: str, message: str):
        super().__init__(f"{message} ({rule})")
        self.rule = rule
        self.message = message


class Payment(StrEnum):
    """What a transfer pays for: set by the engine where it makes the payment, and read by
    whoever explains a deal (the deal summary's ``payments``, ``stammtisch.explain``). The
    values are the codes records and views carry."""

    ANTE = "ante"
    ANTE_SCHIEBEN = "ante-schieben"  # Tippen: the next dealer antes after a shove
    ANTE_JUMP = "ante-jump"  # Tippen: the seat a double Hupf und Sprung skips
    RESERVE_OUT = "reserve-out"  # Tippen: above the maximum bête, pot to the reserve
    RESERVE_IN = "reserve-in"  # Tippen: bête from the reserve into play
    LONE_TAPPER = "lone-tapper"
    DROP = "drop"  # Tippen: the 1859 sniffer drops out
    TRICK = "trick"  # Tippen: the pot's share for a trick (``Transfer.trick`` says which)
    BETE = "bete"
    DOUBLE_BETE_SNIFF = "double-bete-sniff"  # the 1859 sniffer took no trick
    DOUBLE_BETE = "double-bete"  # a modern sniffer or a knocker took no trick
    BETE_ONE_TRICK = "bete-one-trick"  # a modern sniffer or a knocker took one trick
    CONTRACT_WON = "contract-won"  # Tapp: a defender pays the declarer
    CONTRACT_LOST = "contract-lost"  # Tapp: the declarer pays a defender
    POT = "pot"  # Tapp: the declarer pays into the pot or takes from it
    RAMSCH = "ramsch"
    RAMSCH_JUNGFER = "ramsch-jungfer"  # the payee took no trick
    OTHER = "other"


@dataclass(frozen=True)
class Transfer:
    """``amount`` counters move from ``source`` to ``target`` (accounts as above).

    ``reason`` is the English text records show; ``code`` what the payment is for, and
    ``trick`` the trick a ``Payment.TRICK`` pays (0 otherwise)."""

    source: Account
    target: Account
    amount: int
    reason: str
    code: Payment = Payment.OTHER
    trick: int = 0

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


class DealResult:
    """What a finished deal did. ``next_dealer`` is who deals the next deal.

    ``summary`` holds what a reader of the deal wants beyond money: for Tippen ``tricks``
    (seat → tricks, active players only); for Tapp also ``declarer``, ``contract`` and
    ``card_points``. An engine may pass ``explain`` instead, the function that makes it: it is
    then made when first read (a simulation or a bench that reads only the money never pays
    for the texts of every trick).
    """

    __slots__ = ("transfers", "next_dealer", "dealer", "_summary", "_explain")

    def __init__(self, transfers: list[Transfer], next_dealer: int, dealer: int,
                 summary: dict[str, Any] | None = None,
                 explain: Callable[[], dict[str, Any]] | None = None) -> None:
        self.transfers = transfers
        self.next_dealer = next_dealer
        self.dealer = dealer  # the dealer of record of this deal (after shoves)
        self._summary = summary if summary is not None or explain is not None else {}
        self._explain = explain

    @property
    def summary(self) -> dict[str, Any]:
        if self._summary is None:
            assert self._explain is not None
            self._summary = self._explain()
            self._explain = None
        return self._summary

    def net(self, num_players: int) -> dict[int, int]:
        return dict(enumerate(net_change(self.transfers, num_players)))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DealResult) and self.transfers == other.transfers
                and self.next_dealer == other.next_dealer and self.dealer == other.dealer
                and self.summary == other.summary)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"DealResult(transfers={self.transfers!r}, next_dealer={self.next_dealer!r}, "
                f"dealer={self.dealer!r}, summary={self.summary!r})")


def net_change(transfers: Iterable[Transfer], num_players: int) -> list[int]:
    """The change of each seat's balance that a list of transfers makes."""
    out = [0] * num_players
    for t in transfers:
        if type(t.source) is int:
            out[t.source] -= t.amount
        if type(t.target) is int:
            out[t.target] += t.amount
    return out

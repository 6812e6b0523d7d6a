"""The Tapp contracts as a small typed table (docs/rules-reference.md §3.2–§3.4).

A contract says what the declarer must do (``Kind``), which suit is trumps, whether he takes
the tapp, whether he calls a card (Rufer), whether his hand lies open (Bettel ouvert) and
what it is worth. The historic games have levels (Frage < Solo < Herzsolo) whose trump and
value come from the rule set; Modern Tapp has the fifteen contracts of rules reference §3.4.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

#: what decides a contract, as the state stores it (``Kind`` names them)
K_POINTS: Final = 0
K_BETTEL: Final = 1
K_ALL: Final = 2
K_RAMSCH: Final = 3


class Kind(IntEnum):
    """What decides a contract: card points (61), no trick (Bettel), every trick, or Ramsch."""

    POINTS = K_POINTS
    BETTEL = K_BETTEL
    ALL = K_ALL
    RAMSCH = K_RAMSCH


@dataclass(frozen=True)
class Contract:
    name: str  # the notation after ``contract:`` (``frage``, ``solo:C``, …)
    rank: int  # 1 (Frage) … 9 (Herzdurch); a bid must outrank the standing one
    kind: Kind
    trump: str | None  # suit letter, or None for no trumps
    value: int  # cents per defender (the Frage's comes from the option frage_value)
    takes_tapp: bool = False  # Frage: picks up the tapp and discards as many
    calls_card: bool = False  # Rufer: calls a card, gets it for one of his own
    open_hand: bool = False  # Bettel ouvert: the declarer's hand lies face up


#: Modern contracts in rank order (rules reference §3.4); the index is the contract's number.
MODERN_CONTRACTS: tuple[Contract, ...] = (
    Contract("frage", 1, Kind.POINTS, "H", 5, takes_tapp=True),
    Contract("solo:C", 2, Kind.POINTS, "C", 5),
    Contract("solo:S", 2, Kind.POINTS, "S", 5),
    Contract("solo:D", 2, Kind.POINTS, "D", 5),
    Contract("herzsolo", 3, Kind.POINTS, "H", 10),
    Contract("bettel", 4, Kind.BETTEL, None, 15),
    Contract("rufer:C", 5, Kind.ALL, "C", 15, calls_card=True),
    Contract("rufer:S", 5, Kind.ALL, "S", 15, calls_card=True),
    Contract("rufer:D", 5, Kind.ALL, "D", 15, calls_card=True),
    Contract("herzrufer", 6, Kind.ALL, "H", 30, calls_card=True),
    Contract("bettel-ouvert", 7, Kind.BETTEL, None, 30, open_hand=True),
    Contract("durch:C", 8, Kind.ALL, "C", 30),
    Contract("durch:S", 8, Kind.ALL, "S", 30),
    Contract("durch:D", 8, Kind.ALL, "D", 30),
    Contract("herzdurch", 9, Kind.ALL, "H", 60),
)
MODERN_INDEX = {c.name: i for i, c in enumerate(MODERN_CONTRACTS)}
N_MODERN = len(MODERN_CONTRACTS)


class Level(IntEnum):
    """The historic auction's levels (rules reference §3.2, §3.3); 0: no bid yet."""

    NONE = 0
    FRAGE = 1
    SOLO = 2
    HERZSOLO = 3


HISTORIC_BIDS = ("frage", "solo", "herzsolo")  # the bid names, by level - 1
#: Per historic level: the divisor d of Anton's ceil(x / d) (Classic Tapp) and the factor m
#: of Beck's x · m (Württemberg Tarock).
ANTON_DIVISOR = {Level.FRAGE: 4, Level.SOLO: 2, Level.HERZSOLO: 1}
BECK_FACTOR = {Level.FRAGE: 1, Level.SOLO: 2}


def modern_value(contract: str, frage_value: int = 5) -> int:
    """Cents per defender of a Modern contract (rules reference §3.4)."""
    if contract == "frage":
        return frage_value
    return MODERN_CONTRACTS[MODERN_INDEX[contract]].value

"""The ledger: every movement of value is a transfer, and the books always balance.

Accounts are player seats (ints) plus ``"pot"`` and ``"reserve"``. All start at 0, so
``sum(player balances) + pot + reserve == 0`` after every transfer (docs/rules-reference.md §1).
"""

from __future__ import annotations

from collections.abc import Iterable

from .games.base import POT, RESERVE, Account, Transfer


class LedgerError(ValueError):
    pass


class Ledger:
    def __init__(self, num_players: int):
        self.num_players = num_players
        self.balances: dict[Account, int] = {p: 0 for p in range(num_players)}
        self.balances[POT] = 0
        self.balances[RESERVE] = 0

    def apply(self, transfer: Transfer) -> None:
        for acct in (transfer.source, transfer.target):
            if acct not in self.balances:
                raise LedgerError(f"unknown account {acct!r}")
        if transfer.amount < 0:
            raise LedgerError(f"negative transfer {transfer}")
        self.balances[transfer.source] -= transfer.amount
        self.balances[transfer.target] += transfer.amount
        if sum(self.balances.values()) != 0:  # cannot happen by construction; checked anyway
            raise LedgerError(f"ledger out of balance after {transfer}")

    def apply_all(self, transfers: Iterable[Transfer]) -> None:
        for t in transfers:
            self.apply(t)

    @property
    def pot(self) -> int:
        return self.balances[POT]

    @property
    def reserve(self) -> int:
        return self.balances[RESERVE]

    def player_balances(self) -> list[int]:
        return [self.balances[p] for p in range(self.num_players)]

    def is_balanced(self) -> bool:
        return sum(self.balances.values()) == 0

"""A table: a sequence of deals with the same players (layer 4 of docs/engine-conventions.md).

The table rotates the deal, carries the pot (and the Tippen reserve) from deal to deal, applies
each finished deal's transfers to its ledger, and keeps what a game record needs: per deal the
deck and the actions as played.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass, field
from typing import Any

from .cards import Pack, pack_named
from .games import DealResult, IllegalAction, TableState, shared_game
from .games.base import Account
from .games.engine import EngineState
from .games.sampling import shuffle
from .ledger import Ledger
from .rules import Rules
from .rules.base import RuleSet


@dataclass
class DealLog:
    """One deal as a record holds it: the deck, the actions, and (when over) the result."""

    deck: list[str]
    actions: list[str | dict[str, str]] = field(default_factory=list)  # str or {"player": name, "action": str}
    result: DealResult | None = None


class Table:
    def __init__(self, rules: Rules, players: list[str], first_dealer: int = 0):
        if len(players) != rules.players:
            raise ValueError(
                f"{rules.id} is set for {rules.players} players but {len(players)} names were given"
            )
        if len(set(players)) != len(players):
            raise ValueError("player names must be different")
        if not 0 <= first_dealer < len(players):
            raise ValueError(f"first dealer seat {first_dealer} is not a seat at this table")
        self.rules = rules
        self.game = shared_game(rules)
        self.players = list(players)
        self.first_dealer = first_dealer
        self.dealer = first_dealer
        self.ledger = Ledger(len(players))
        self.deals: list[DealLog] = []
        self.deals_forgotten = 0  # finished deals dropped from ``deals`` (``forget_finished``)
        self.state: EngineState[Any] | None = None

    @property
    def pack(self) -> Pack:
        return self.game.pack

    @property
    def num_players(self) -> int:
        return len(self.players)

    def table_state(self) -> TableState:
        return TableState(
            dealer=self.dealer,
            pot=self.ledger.pot,
            reserve=self.ledger.reserve,
        )

    @property
    def deal_count(self) -> int:
        """The deals started at this table so far, forgotten ones included."""
        return self.deals_forgotten + len(self.deals)

    def forget_finished(self) -> None:
        """Keep only the latest deal in ``deals``, for a holder that keeps the record elsewhere:
        the web table has it in its database, and a table that plays all evening must not
        grow in memory deal by deal. ``deal_count`` still counts every deal."""
        drop = len(self.deals) - 1
        if drop > 0:
            del self.deals[:drop]
            self.deals_forgotten += drop

    def resume(self, dealer: int, balances: dict[Account, int], deals_before: int) -> None:
        """Continue between deals as a table that has played ``deals_before`` deals (all
        forgotten), with this dealer next and these balances (players, pot and reserve)."""
        if self.deals or self.state is not None:
            raise RuntimeError("only a table that has not dealt yet can resume")
        self.dealer = dealer
        self.ledger.balances = dict(balances)
        self.deals_forgotten = deals_before

    @property
    def in_deal(self) -> bool:
        return self.state is not None and not self.state.is_terminal()

    def shuffled_deck(self, rng: random.Random) -> list[int]:
        deck = list(range(self.pack.size))
        shuffle(deck, rng)  # rng.shuffle(deck), compiled
        return deck

    def secret_deck(self) -> list[int]:
        """A shuffled deck nobody can predict, for real play (the web table), from one read
        of the operating system's randomness (``os.urandom``).

        Why this is as safe as shuffling with ``random.SystemRandom`` (which read
        ``os.urandom`` once per card, a system call each): the read is 128 bits longer than
        the number of orders of the pack (n!), so ``r`` below is uniform over the n! orders
        up to a statistical distance below 2^-128, and its mixed-radix digits (radix n, n-1,
        …, 2) are the independent uniform draws of a Fisher–Yates shuffle. No pseudo-random
        generator is involved: each deck comes from fresh system randomness, and seeing one
        deck says nothing about another."""
        n = self.pack.size
        orders = math.factorial(n)
        r = int.from_bytes(os.urandom((orders.bit_length() + 128 + 7) // 8), "big") % orders
        return order_from_number(r, n)

    def start_deal(self, deck: list[int]) -> EngineState[Any]:
        """Start the next deal from an explicit deck order (top card first)."""
        if self.in_deal:
            raise RuntimeError("the current deal is not finished")
        state = self.game.new_deal(self.table_state(), deck)
        cards = self.pack.cards
        self.deals.append(DealLog(deck=[cards[c] for c in deck]))
        self.state = state
        self._finish_if_over()
        return state

    def apply(self, text: str, seat: int | None = None) -> str:
        """Apply an action string to the current deal; ``seat``, if given, must be on turn.
        Returns the action's canonical text (as the record keeps it).

        Raises IllegalAction with the state unchanged. Records the action, and settles the
        deal when it is over.
        """
        state = self.state
        if state is None or state.is_terminal():
            raise IllegalAction("deal over", "no deal is in progress")
        if seat is not None and state.current_player() != seat:
            turn = state.current_player()
            raise IllegalAction(
                "not your turn", f"it is {self.players[turn]}'s turn, not {self.players[seat]}'s"
            )
        action = state.string_to_action(text)
        canonical = state.action_to_string(action)
        state.apply(action)
        self.deals[-1].actions.append(
            canonical if seat is None else {"player": self.players[seat], "action": canonical}
        )
        self._finish_if_over()
        return canonical

    def apply_id(self, action: int) -> None:
        """Apply an action id (bots and simulations); recorded as its string."""
        state = self.state
        if state is None:  # current_state(), inline: this runs once per action of a simulation
            raise IllegalAction("deal over", "no deal is in progress")
        text = state.action_to_string(action)
        state.apply(action)
        self.deals[-1].actions.append(text)
        if state.is_terminal():
            self._finish_if_over()

    def current_state(self) -> EngineState[Any]:
        """The deal in progress, or the last one when it is over (``IllegalAction`` before the first)."""
        if self.state is None:
            raise IllegalAction("deal over", "no deal is in progress")
        return self.state

    def _finish_if_over(self) -> None:
        state = self.current_state()
        if state.is_terminal() and self.deals[-1].result is None:
            result = state.result()
            self.ledger.apply_all(result.transfers)
            self.deals[-1].result = result
            self.dealer = result.next_dealer

    def balances(self) -> dict[str, int]:
        return {name: self.ledger.balances[i] for i, name in enumerate(self.players)}


def summarise_deal(result: DealResult, num_players: int) -> dict[str, Any]:
    """What a reader of a finished deal wants, by seat: the one place this is built (records,
    the web table's score sheet and simulations read it). Keys: ``dealer``, ``outcome``,
    ``net`` (list per seat), ``tricks`` (seat → tricks), and for Tapp ``declarer``,
    ``contract``, ``card_points``."""
    s = result.summary
    net = result.net(num_players)
    entry: dict[str, Any] = {
        "dealer": result.dealer,
        "outcome": s.get("outcome"),
        "net": [net[p] for p in range(num_players)],
        "tricks": {int(k): v for k, v in s.get("tricks", {}).items()},
    }
    if "contract" in s:
        entry["declarer"] = s.get("declarer")
        entry["contract"] = s.get("contract")
        entry["card_points"] = dict(s.get("card_points", {}))
    return entry


def first_dealer_by_ace(deck: list[str], num_players: int) -> int:
    """docs/rules-reference.md §2.1: cards dealt face up one at a time round the table; the first Ace deals.

    ``deck`` is in notation, top first; the first card goes to seat 0.
    """
    for i, card in enumerate(deck):
        if card[1] == "A":
            return i % num_players
    raise ValueError("the deck holds no Ace")


def order_from_number(r: int, n: int) -> list[int]:
    """The order of ``n`` cards numbered ``r`` (0 ≤ r < n!): a bijection, so a uniform ``r``
    gives a uniform order. ``r``'s mixed-radix digits are the draws of a Fisher–Yates shuffle."""
    deck = list(range(n))
    for i in range(n - 1, 0, -1):
        r, j = divmod(r, i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def draw_first_dealer(rules: RuleSet, rng: random.Random) -> int:
    """The first dealer of a session, as the rule set finds him (``Preset.first_dealer``):
    by the first Ace dealt face up round the table (Tippen, rules reference §2.1), or by lot (Tapp,
    rules reference §3.4; the historic sources are silent, and the lot is the usual way)."""
    if rules.preset.first_dealer == "ace":
        cards = list(pack_named(rules.pack).cards)
        rng.shuffle(cards)
        return first_dealer_by_ace(cards, rules.players)
    return rng.randrange(rules.players)

"""Run deals between bots at one table and summarise them."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from ..bots import make_bot
from ..table import Table, draw_first_dealer


@dataclass
class SimulationSummary:
    players: list[str]
    deals: int = 0
    balances: dict[str, int] = field(default_factory=dict)
    pot: int = 0
    outcomes: Counter = field(default_factory=Counter)
    taps: int = 0  # Tippen: tap declarations ("ich spiele")
    betes: int = 0  # Tippen: active players who took no trick
    contracts: Counter = field(default_factory=Counter)  # Tapp: contract → count
    declarer_wins: int = 0  # Tapp: contracts whose declarer gained

    def to_json(self, family: str) -> dict:
        out = {
            "players": self.players,
            "deals": self.deals,
            "balances": self.balances,
            "pot": self.pot,
            "outcomes": dict(self.outcomes),
        }
        if family == "tippen":
            out.update(taps=self.taps, betes=self.betes)
        else:
            out.update(contracts=dict(self.contracts), declarer_wins=self.declarer_wins)
        return out


def bots_per_seat(kinds: list[str], num_players: int) -> list[str]:
    """One bot name per seat: the names in order, the last one filling the remaining seats."""
    return (list(kinds) + [kinds[-1]] * num_players)[:num_players]


def play_deal(table: Table, bots: list, rng: random.Random) -> None:
    """Play one deal at ``table`` to its end with one bot per seat."""
    state = table.start_deal(table.shuffled_deck(rng))
    while not state.is_terminal():
        seat = state.current_player()
        table.apply_id(bots[seat].act(state, seat))


def simulate(rules, deals: int, seed: int | None = None, bots: list[str] | None = None,
             players: list[str] | None = None, first_dealer: int | None = None,
             progress: Callable[[int], None] | None = None) -> tuple[SimulationSummary, Table]:
    """Play ``deals`` deals at one table; returns the summary and the table (for its record).

    The first dealer is drawn by the first Ace dealt (RULES.md 2.1) unless a seat is given.
    """
    rng = random.Random(seed)
    n = rules.players
    names = players or [f"P{i + 1}" for i in range(n)]
    kinds = bots_per_seat(bots or ["heuristic"], n)
    seat_bots = [make_bot(k, rules.family, random.Random(rng.random())) for k in kinds]
    if first_dealer is None:
        first_dealer = draw_first_dealer(rules, rng)
    table = Table(rules, names, first_dealer)
    summary = SimulationSummary(players=names)
    for i in range(deals):
        play_deal(table, seat_bots, rng)
        result = table.deals[-1].result
        s = result.summary
        summary.outcomes[s.get("outcome", "played")] += 1
        tricks = s.get("tricks", {})
        if rules.family == "tippen":
            summary.taps += table.deals[-1].actions.count("tap")
            if s.get("outcome") == "played":
                summary.betes += sum(1 for v in tricks.values() if v == 0)
        elif s.get("contract"):
            summary.contracts[s["contract"]] += 1
            d = s.get("declarer")
            if d is not None and result.net(n)[d] > 0:
                summary.declarer_wins += 1
        if progress:
            progress(i + 1)
    summary.deals = deals
    summary.balances = table.balances()
    summary.pot = table.ledger.pot + table.ledger.reserve
    return summary, table

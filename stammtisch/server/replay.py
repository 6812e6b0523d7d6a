"""A deal rebuilt from its deck and actions in notation, as the database and the worker
processes hold it: the one way the server replays a deal (a live table after a restart or an
undo, a record or an analysis of a stored table, a search bot's worker)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..games.base import POT, RESERVE
from ..rules import ruleset as build_ruleset
from ..table import Table


def replay_deal(table: Table, deck: Sequence[str], actions: Iterable[tuple[int | None, str]]) -> None:
    """Deal ``deck`` on ``table`` and apply ``actions`` (seat or None, action text) in order;
    the engine validates each (``IllegalAction`` as for a live action)."""
    table.start_deal(table.game.deck_from_strings(list(deck)))
    for seat, text in actions:
        table.apply(text, seat)


def table_at(ruleset_id: str, options: dict[str, object], dealer: int, pot: int,
             reserve: int) -> Table:
    """A table of ``ruleset_id`` between deals: ``dealer`` deals next, the pot and the reserve
    hold what they hold (the players' balances are not known and do not matter to a deal)."""
    rules = build_ruleset(ruleset_id, dict(options))
    table = Table(rules, [f"seat {i}" for i in range(rules.players)], dealer)
    table.ledger.balances[POT] = pot
    table.ledger.balances[RESERVE] = reserve
    return table

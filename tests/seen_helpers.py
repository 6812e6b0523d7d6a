"""Helpers of the tests of what a reader may see (not a test module): the cards each reader
was shown during a deal, read from the views he got (the oracle, independent of the engine's
``known_mask`` that the server uses), and the cards an answer names, in its JSON and in its
catalogue messages."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from conftest import CARD_RE, cards_shown

from stammtisch.record import replay
from stammtisch.table import Table

SYMBOL_SUITS = {"♥": "H", "♦": "D", "♣": "C", "♠": "S"}


def readers(players: int) -> list[int | None]:
    """Every reader of a table: the spectator (None) and each seat."""
    return [None, *range(players)]


def shown_per_deal(record: dict[str, Any]) -> list[dict[int | None, set[str]]]:
    """Per finished deal of a full record, per reader: every card any of his views of the deal
    named, from its first state to its last (his hand, the cards played, the log, an upcard,
    a trump card, a call; not the legal actions)."""
    out: list[dict[int | None, set[str]]] = []
    current: dict[int | None, set[str]] = {}

    def look(table: Table) -> None:
        for reader in readers(table.num_players):
            current.setdefault(reader, set()).update(cards_shown(table.current_state().view(reader)))

    def on_action(table: Table, text: str) -> None:
        look(table)

    def on_deal(table: Table) -> None:
        look(table)  # the deal's last state
        out.append(dict(current))
        current.clear()

    replay(record, on_deal=on_deal, on_action=on_action)
    return out


def _suit_and_rank(m: dict[str, Any]) -> str | None:
    params = m.get("params", {})
    if m["key"] == "card.short":
        symbol = params.get("symbol", "")
        # a German-suited Bell, Acorn or Leaf is marked by a message (suit_symbol.german.B)
        suit = symbol["key"][-1] if isinstance(symbol, dict) else SYMBOL_SUITS.get(symbol)
    else:
        suit_message = params.get("suit")
        suit = suit_message["key"][-1] if isinstance(suit_message, dict) else None
    rank = params.get("rank")
    if isinstance(rank, dict):
        rank = rank["key"][-1]  # rank_short.A, rank_short.german.A, rank.7
    return f"{suit}{rank}" if suit and isinstance(rank, str) else None


def cards_in(answer: Any) -> set[str]:
    """Every card an answer names: in any string of its JSON (``play:HA``, ``exchange:HQ,ST``)
    and as a card of a catalogue message (``card.short``, ``card.name``) of its lines."""
    out: set[str] = set()

    def walk(x: Any) -> None:
        if isinstance(x, str):
            out.update(CARD_RE.findall(x))
        elif isinstance(x, dict):
            if x.get("key") in ("card.short", "card.name"):
                card = _suit_and_rank(x)
                assert card is not None, x
                out.add(card)
            for y in x.values():
                walk(y)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)

    walk(answer)
    return out


def random_deal(table: Table, rng: random.Random,
                choose: Callable[[Any, list[int]], int] | None = None) -> None:
    """Play the table's next deal to its end with random legal actions (``choose(state,
    legal)`` picks instead where given)."""
    state = table.start_deal(table.shuffled_deck(rng))
    while not state.is_terminal():
        legal = list(state.legal_actions())
        action = choose(state, legal) if choose is not None else rng.choice(legal)
        table.apply(state.action_to_string(action))
        state = table.current_state()

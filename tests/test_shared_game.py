"""Tables of equal rules share one engine (``shared_game``): a table plays, shows and settles
exactly as it would with an engine of its own, however the tables' deals interleave."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stammtisch.games import new_game, shared_game
from stammtisch.rules import PRESETS, ruleset
from stammtisch.table import Table


def test_equal_rules_share_one_engine_and_other_rules_do_not() -> None:
    a = Table(ruleset("tippen/grupp-1975", {"players": 3}), ["a", "b", "c"])
    b = Table(ruleset("tippen/grupp-1975", {"players": 3}), ["d", "e", "f"])
    other = Table(ruleset("tippen/grupp-1975", {"players": 3, "stake": 6}), ["a", "b", "c"])
    assert a.game is b.game is shared_game(ruleset("tippen/grupp-1975", {"players": 3}))
    assert other.game is not a.game
    assert other.game.rules.stake == 6 and a.game.rules.stake == 3


def _seats(table: Table) -> list[int | None]:
    return [*range(table.num_players), None]


@pytest.mark.parametrize("ruleset_id", sorted(PRESETS))
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_tables_sharing_an_engine_play_as_tables_with_their_own(ruleset_id: str, seed: int) -> None:
    """Three tables of one rule set share an engine and play interleaved, action by action;
    beside each, a twin with an engine of its own plays the same decks and actions. Every
    view of every seat, every result and the balances are the same."""
    rules = ruleset(ruleset_id, {})
    names = [f"p{i}" for i in range(rules.players)]
    rng = random.Random(seed)
    shared = [Table(rules, names, k % rules.players) for k in range(3)]
    twins = [Table(rules, names, k % rules.players) for k in range(3)]
    for twin in twins:
        twin.game = new_game(rules)  # before its first deal: every deal of it uses this one
    assert len({id(t.game) for t in shared}) == 1
    assert not {id(t.game) for t in twins} & {id(shared[0].game)}
    for _ in range(150):
        k = rng.randrange(3)
        table, twin = shared[k], twins[k]
        if not table.in_deal:
            deck = table.shuffled_deck(rng)
            table.start_deal(deck)
            twin.start_deal(list(deck))
        state, twin_state = table.current_state(), twin.current_state()
        assert state.views(_seats(table)) == twin_state.views(_seats(twin))
        if not state.is_terminal():
            action = rng.choice(state.legal_actions())
            assert twin_state.legal_actions() == state.legal_actions()
            table.apply_id(action)
            twin.apply_id(action)
    for table, twin in zip(shared, twins, strict=True):
        assert table.balances() == twin.balances()
        assert [d.result.summary if d.result else None for d in table.deals] == \
            [d.result.summary if d.result else None for d in twin.deals]

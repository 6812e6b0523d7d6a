"""A table that forgets its finished deals (the web table keeps them in its database) plays
on exactly as one that keeps them, and one resumed from its counters plays on the same."""

from __future__ import annotations

import random

import pytest

from stammtisch.record import table_to_record
from stammtisch.rules import PRESETS
from stammtisch.rules import ruleset as build_ruleset
from stammtisch.table import Table


def play_deal(table: Table, rng: random.Random) -> None:
    table.start_deal(table.shuffled_deck(rng))
    while table.in_deal:
        state = table.current_state()
        table.apply_id(rng.choice(state.legal_actions()))


@pytest.mark.parametrize("rid", sorted(PRESETS))
def test_a_forgetting_or_resumed_table_plays_on_as_one_that_keeps_every_deal(rid):
    rules = build_ruleset(rid, {})
    names = [f"P{i}" for i in range(rules.players)]
    keeping, forgetting = Table(rules, names, 1), Table(rules, names, 1)
    rng_a, rng_b = random.Random(rid), random.Random(rid)
    for _ in range(4):
        play_deal(keeping, rng_a)
        play_deal(forgetting, rng_b)
        forgetting.forget_finished()
    assert len(forgetting.deals) == 1 and forgetting.deal_count == keeping.deal_count == 4
    resumed = Table(rules, names, 0)
    resumed.resume(forgetting.dealer, forgetting.ledger.balances, forgetting.deal_count)
    assert resumed.deal_count == 4 and resumed.deals == []
    deck = keeping.shuffled_deck(random.Random(7))
    for table in (keeping, forgetting, resumed):
        table.start_deal(list(deck))
    seats = [*range(rules.players), None]
    for table in (forgetting, resumed):
        assert table.table_state() == keeping.table_state()
        assert table.balances() == keeping.balances()
        assert [table.current_state().view(s) for s in seats] == \
            [keeping.current_state().view(s) for s in seats]


def test_only_a_table_that_has_not_dealt_can_resume_and_a_forgetful_one_has_no_record():
    rules = build_ruleset("tippen/grupp-1975", {"players": 3})
    table = Table(rules, ["A", "B", "C"], 0)
    play_deal(table, random.Random(1))
    with pytest.raises(RuntimeError):
        table.resume(0, dict(table.ledger.balances), 1)
    play_deal(table, random.Random(2))
    table.forget_finished()
    with pytest.raises(ValueError, match="no longer holds its first 1 deals"):
        table_to_record(table)

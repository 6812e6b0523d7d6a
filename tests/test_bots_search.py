"""The search bot (``pimc``): legal in every rule set, blind to hidden cards, repeatable."""

from __future__ import annotations

import random
import zlib
from typing import Any

import pytest

from stammtisch.bots import BOT_NAMES, make_bot
from stammtisch.rules import PRESETS, ruleset
from stammtisch.table import Table, draw_first_dealer

SEARCH = ("pimc",)
#: small budgets: the tests check behaviour, not strength
BUDGET = {"pimc": 2}


def small(name: str, family: str, seed: int) -> Any:
    return make_bot(name, family, random.Random(seed), samples=BUDGET[name])


def deal_states(rules: Any, seed: int, deals: int = 1, pilot: str = "heuristic") -> list[tuple[Any, int]]:
    """Every (state, seat) with a real choice (two or more legal actions) along ``deals`` deals
    played by the ``pilot`` bot at every seat (states are clones: they stay as they were)."""
    rng = random.Random(seed)
    n = rules.players
    table = Table(rules, [f"P{i}" for i in range(n)], draw_first_dealer(rules, rng))
    bots = [make_bot(pilot, rules.family, random.Random(seed * 10 + s)) for s in range(n)]
    out = []
    for _ in range(deals):
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            if len(state.legal_actions()) > 1:
                out.append((state.clone(), seat))
            table.apply_id(bots[seat].act(state, seat))
    return out


def test_the_search_bots_are_offered_by_name():
    assert "pimc" in BOT_NAMES
    with pytest.raises(ValueError):
        make_bot("pimc", "tapp", samples=0)
    with pytest.raises(ValueError):
        make_bot("pimc", "tippen", time_per_move=-1.0)
    # ismcts lost to the heuristic and is no longer offered
    assert "ismcts" not in BOT_NAMES
    with pytest.raises(ValueError, match="unknown bot"):
        make_bot("ismcts", "tippen")


@pytest.mark.parametrize("rid", sorted(PRESETS))
@pytest.mark.parametrize("name", SEARCH)
def test_every_decision_is_legal_in_every_rule_set(rid, name, conformance):
    """Whole deals with the search bot in every seat, on random option values of the preset:
    the table refuses an illegal action, so every deal reaching its end proves legality."""
    rng = random.Random(zlib.crc32(f"{rid}/{name}".encode()))
    decisions = 0
    for deal in range(3):
        rules = conformance.random_rules(rid, rng)
        n = rules.players
        table = Table(rules, [f"P{i}" for i in range(n)], draw_first_dealer(rules, rng))
        bots = [small(name, rules.family, deal * 10 + s) for s in range(n)]
        state = table.start_deal(table.shuffled_deck(rng))
        while not state.is_terminal():
            seat = state.current_player()
            legal = state.legal_actions()
            action = bots[seat].act(state, seat)
            assert action in legal, (rid, state.view(None)["phase"], action, legal)
            decisions += len(legal) > 1
            table.apply_id(action)
        assert state.is_terminal()
    assert decisions > 0


@pytest.mark.parametrize("rid", ["tapp/modern", "tapp/classic-1879", "tippen/grupp-1975", "tippen/katira-1983"])
@pytest.mark.parametrize("name", SEARCH)
def test_a_decision_does_not_depend_on_the_hidden_cards(rid, name):
    """The same seed decides the same on a state whose hidden cards were moved (a world
    consistent with the seat's knowledge), in every phase met; a bot that peeked would differ
    somewhere (checked below: the moved worlds really differ)."""
    rules = ruleset(rid, {})
    states = deal_states(rules, seed=3, deals=2)
    moved_somewhere = False
    for i, (state, seat) in enumerate(states[::2]):
        other = state.resample(seat, random.Random(1000 + i))
        assert other.view(seat) == state.view(seat)
        moved_somewhere |= other.view(None) != state.view(None) or _hidden(other) != _hidden(state)
        first = small(name, rules.family, 77 + i).act(state, seat)
        second = small(name, rules.family, 77 + i).act(other, seat)
        assert first == second, (rid, state.view(seat)["phase"], state.action_to_string(first),
                                 state.action_to_string(second))
    assert moved_somewhere


def _hidden(state: Any) -> list[Any]:
    """Where the cards lie (for the check that a resampled world moved something)."""
    return [state.view(s).get("hand") for s in range(len(state.view(None)["hand_sizes"]))]


@pytest.mark.parametrize("rid", ["tapp/modern", "tippen/grupp-1975"])
@pytest.mark.parametrize("name", SEARCH)
def test_a_seed_repeats_its_decisions(rid, name):
    rules = ruleset(rid, {})
    states = deal_states(rules, seed=5)
    first_bot, second_bot = small(name, rules.family, 9), small(name, rules.family, 9)
    first = [first_bot.act(s, seat) for s, seat in states]
    second = [second_bot.act(s, seat) for s, seat in states]
    assert first == second


@pytest.mark.parametrize("name", SEARCH)
def test_a_time_budget_ends_the_search(name):
    """With a sample budget no machine could finish, ``time_per_move`` still ends the search
    with a legal action (a play decision late in a deal and one before play)."""
    rules = ruleset("tapp/modern", {})
    states = deal_states(rules, seed=2)
    picks = [states[0], states[-1]]
    for state, seat in picks:
        bot = make_bot(name, rules.family, random.Random(1), samples=10**9, time_per_move=0.02)
        assert bot.act(state, seat) in state.legal_actions()

"""Dense action ids (stammtisch.envs.actions): a bijection on every legal action of random states.

Each rule set below is walked through STATES random states (random deals, random play, except
that a seat often chooses the words in ``EAGER``, so that the Tapp declarer picks up the tapp and
discards often, and Tippen players tap and exchange). At
every state the dense ids of the legal actions are distinct, inside the range, and map back to
exactly the legal engine actions; every other dense id is refused with a ValueError.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stammtisch.envs.actions import DenseActions, colex_rank, colex_unrank
from stammtisch.games import IllegalAction, TableState, new_game
from stammtisch.rules import ruleset, ruleset_ids

STATES = 10_000  # per preset; 1–4 s each on a shared 2-core machine
VARIANT_STATES = 3_000  # per variant with options

PRESETS = [(rid, {}) for rid in ruleset_ids()]
VARIANTS = PRESETS + [
    ("tippen/grupp-1975", {"knocking": True, "sniffing": "modern", "robbing": True, "schieben": True}),
    ("tippen/meyers-1905", {"sniffing": "1859", "hupf_und_sprung": "double", "players": 6}),
    ("tippen/vierblatt-1859", {"exchange": True, "players": 3}),
    ("tippen/dreiblatt-1859", {"players": 10}),
    ("tapp/modern", {"players": 4, "pack": "skat32"}),
    ("tapp/modern", {"pack": "skat32", "rufer_in_tapp": "swap"}),
    ("tapp/wuerttemberg-tarock", {"pot": True}),
]


#: words chosen 70% of the time when legal: they lead to the Tapp discard and the Tippen exchange
EAGER = {"bid:frage", "hold", "play", "contract:frage", "tap", "no-tout"}


def _walk(rid: str, options: dict, states: int, seed: int = 0):
    """``states`` random (state, legal) pairs of one rule set."""
    game = new_game(ruleset(rid, options))
    rng = random.Random(seed)
    seen = 0
    eager_ids = set()
    for word in EAGER:
        try:
            eager_ids.add(game.new_deal(TableState(), list(range(game.pack.size))).string_to_action(word))
        except IllegalAction:
            pass
    while seen < states:
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(), deck)
        while not state.is_terminal() and seen < states:
            legal = state.legal_actions()
            yield state, legal
            seen += 1
            eager = [a for a in legal if a in eager_ids] if rng.random() < 0.7 else []
            state.apply(eager[0] if eager else rng.choice(legal))


@pytest.mark.parametrize(("rid", "options"), VARIANTS, ids=[f"{r}{o or ''}" for r, o in VARIANTS])
def test_dense_ids_are_a_bijection_on_legal_actions(rid: str, options: dict) -> None:
    game = new_game(ruleset(rid, options))
    dense = DenseActions(game)
    rng = random.Random(1)
    set_states = 0
    for state, legal in _walk(rid, options, STATES if not options else VARIANT_STATES):
        ids = dense.dense_legal(legal)
        assert len(ids) == len(set(ids)) == len(legal)
        assert all(0 <= d < dense.num_actions for d in ids)
        assert sorted(dense.to_engine(legal, d) for d in ids) == legal
        for a in legal:
            assert dense.to_engine(legal, dense.to_dense(legal, a)) == a
        if legal[-1] >= dense.set_base:
            set_states += 1
            d = rng.choice(ids)
            assert dense.describe(d, legal) == state.action_to_string(dense.to_engine(legal, d))
        other = rng.randrange(dense.num_actions)
        if other not in ids:
            with pytest.raises(ValueError, match=f"action {other} "):
                dense.to_engine(legal, other)
    uses_sets = game.rules.family == "tapp" or game.rules.exchange
    assert (set_states >= 3) if uses_sets else set_states == 0, set_states


def test_the_set_actions_number_positions_in_the_sorted_hand() -> None:
    game = new_game(ruleset("tippen/grupp-1975"))
    dense = DenseActions(game)
    hand = ["H7", "DA", "C9"]  # sorted by card index: H7 < C9 < DA? pack order is H D C S
    cards = sorted(game.pack.card(c) for c in hand)
    mask = sum(1 << c for c in cards)
    legal = sorted(dense.set_base + sub for sub in range(mask + 1) if sub & ~mask == 0)
    # positions 0 and 2 of the sorted hand: the lowest and the highest card index
    d = dense.fixed_end + 0b101
    assert dense.to_engine(legal, d) == dense.set_base + (1 << cards[0]) + (1 << cards[2])
    assert dense.to_engine(legal, dense.fixed_end) == dense.set_base  # exchange:-


def test_out_of_range_and_negative_ids_are_refused_by_name() -> None:
    dense = DenseActions(new_game(ruleset("tapp/modern")))
    with pytest.raises(ValueError, match="outside the action range"):
        dense.to_engine([0, 1], dense.num_actions)
    with pytest.raises(ValueError, match="outside the action range"):
        dense.to_engine([0, 1], -1)


@given(st.integers(1, 16).flatmap(lambda h: st.tuples(st.just(h), st.integers(1, h))).flatmap(
    lambda hk: st.tuples(st.just(hk[1]), st.lists(st.integers(0, hk[0] - 1), min_size=hk[1], max_size=hk[1],
                                                   unique=True))))
def test_colex_rank_and_unrank_are_inverse(kp: tuple[int, list[int]]) -> None:
    k, positions = kp
    positions = sorted(positions)
    assert colex_unrank(colex_rank(positions), k) == positions


def test_colex_ranks_fill_the_range_exactly() -> None:
    from itertools import combinations
    from math import comb

    ranks = sorted(colex_rank(c) for c in combinations(range(14), 3))
    assert ranks == list(range(comb(14, 3)))

"""World sampling (issue 9 item 1): ``state.resample(seat, rng)``.

Properties over every preset with random valid options: the sampled state shows ``seat`` the
same view and the same known cards, conserves the cards, is the state its own deck and log
replay to (so every past action was legal in the sampled world), and plays to the end; the
hidden cards really vary; and on tiny positions the sampled worlds are uniform over the
consistent worlds enumerated by brute force.
"""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stammtisch.cards import cards_in
from stammtisch.games import TableState, new_game
from stammtisch.games import tippen as T
from stammtisch.games.sampling import count_deals, deal_uniform, trick_forbidden
from stammtisch.games.tapp import Phase as TP
from stammtisch.games.tapp import TappState
from stammtisch.games.tippen import TippenState
from stammtisch.games.tricks import legal_follows
from stammtisch.rules import ruleset
from stammtisch.rules.tapp import TAPP_PRESETS

from test_tippen_properties import tippen_rules

TAPP_CONFIGS = [(rid, {}) for rid in sorted(TAPP_PRESETS)] + [
    ("tapp/modern", {"players": 4}),
    ("tapp/modern", {"pack": "skat32"}),
    ("tapp/modern", {"rufer_in_tapp": "swap"}),
    ("tapp/modern", {"pack": "skat32", "players": 4, "rufer_in_tapp": "swap"}),
    ("tapp/classic-1879", {"pot": True}),
]


# ------------------------------------------------------------------ consistency by replay
def _plays(log, num_cards, seat, after=-1):
    m = 0
    for i, (s, a) in enumerate(log):
        if s == seat and a < num_cards and i > after:
            m |= 1 << a
    return m


def tapp_deck(s: TappState) -> list[int]:
    """A deck from which the deal of ``s`` was dealt (the test's own account of the deal)."""
    g = s.game
    n, N, d = s.n, g.N, s.declarer
    have = [s.hands[x] | _plays(s.log, N, x) for x in range(n)]
    tapp = s.tapp
    if s.picked:
        have[d] = (have[d] | (s.tapp if s.phase != TP.DISCARD else 0)) & ~s.picked
        tapp = s.picked
    if s.called >= 0 and not (s.called_in_tapp and g.rules.rufer_in_tapp == "none"):
        c = 1 << s.called
        gift = 1 << s.given if s.given >= 0 else 0
        have[d] = (have[d] | gift) & ~c  # the called card may be the one given back
        if s.called_in_tapp:
            tapp = (tapp & ~gift) | c
        else:
            have[s.holder] = (have[s.holder] & ~gift) | c
    parts = [cards_in(have[(s.fh + r) % n]) for r in range(n)] + [cards_in(tapp)]
    deck = []
    for receiver in g.deal_plan:
        deck.append(parts[receiver].pop())
    return deck


def replayed(s, deck):
    g = s.game
    r = g.new_deal(s.table, deck)
    for seat, a in s.log:
        assert r.current_player() == seat
        r.apply(a)
    return r


def fields(s):
    cls = TippenState if isinstance(s, TippenState) else TappState
    skip = {"game", "table", "_result", "_legal", "_net"}
    return {k: getattr(s, k) for k in cls.__slots__ if k not in skip}


def check_world(state, world, seat):
    """``world`` is a consistent state that ``seat`` cannot tell from ``state``."""
    assert type(world) is type(state)
    assert world.view(seat) == state.view(seat)
    assert world.known_mask(seat) == state.known_mask(seat)
    known = state.known_mask(seat)
    if isinstance(state, TippenState):
        sets = world.card_sets()
        assert sum(m.bit_count() for m in sets.values()) == world.game.size
        assert world.deck and sorted(world.deck) == list(range(world.game.size))
        for name, m in state.card_sets().items():  # the known cards lie where they lay
            assert sets[name] & known == m & known, name
        for x in range(state.game.num_players):
            assert world.hands[x] & known == state.hands[x] & known
        deck = list(world.deck)
    else:
        parts = [*world.hands, world.tapp, _plays(world.log, world.game.N, -1) or sum(
            1 << a for _, a in world.log if a < world.game.N)]
        assert sum(p.bit_count() for p in parts) == world.game.N
        for x in range(state.n):
            assert world.hands[x] & known == state.hands[x] & known
        assert world.tapp & known == state.tapp & known
        deck = tapp_deck(world)
    # the world is what its deal and the public log replay to: every past action was legal
    assert fields(replayed(world, deck)) == fields(world)


def play_out(world, rng):
    w = world.clone()
    while not w.is_terminal():
        w.apply(rng.choice(w.legal_actions()))
    assert w.result() is not None
    assert len(w.returns()) == w.game.num_players


def random_states(game, rng, deals=1):
    """Every state of ``deals`` random deals with random play."""
    for _ in range(deals):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        s = game.new_deal(TableState(dealer=rng.randrange(game.num_players),
                                     pot=rng.choice([0, 0, 3 * game.num_players])), deck)
        yield s.clone()
        while not s.is_terminal():
            s.apply(rng.choice(s.legal_actions()))
            yield s.clone()


# ------------------------------------------------------------------ properties
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tippen_rules(), st.randoms(use_true_random=False))
def test_tippen_resample_is_consistent_for_every_seat(rules, rnd):
    game = new_game(rules)
    rng = random.Random(rnd.random())
    for s in random_states(game, rng):
        for seat in [None, *range(game.num_players)]:
            w = s.resample(seat, rng)
            check_world(s, w, seat)
            play_out(w, rng)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TAPP_CONFIGS), st.randoms(use_true_random=False))
def test_tapp_resample_is_consistent_for_every_seat(config, rnd):
    game = new_game(ruleset(*config))
    rng = random.Random(rnd.random())
    for s in random_states(game, rng):
        for seat in [None, *range(game.num_players)]:
            w = s.resample(seat, rng)
            check_world(s, w, seat)
            play_out(w, rng)

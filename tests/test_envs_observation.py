"""The observation encoding (stammtisch.envs.observation): built from a seat's view only.

* The encoding of a seat's observation (``encode_state``, from ``state.observation(seat)``)
  gives exactly the vector that the view-based ``encode(state.view(seat), …)`` gives, for
  every seat of many random states of every rule set and some variants.
* Cards the seat may not see do not change its observation: two deals that differ only in
  other seats' hidden cards give the same observation.
* The blocks hold what the table says (own hand, trick, legal actions, …).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from stammtisch.envs.actions import DenseActions
from stammtisch.envs.observation import ObservationEncoder
from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset, ruleset_ids

VARIANTS = [(r, {}) for r in ruleset_ids()] + [
    ("tapp/modern", {"players": 4, "pack": "skat32"}),
    ("tapp/modern", {"pack": "skat32", "rufer_in_tapp": "swap"}),
    ("tapp/wuerttemberg-tarock", {"pot": True}),
    ("tapp/classic-1879", {"pot": True, "tout_multiplier": 3}),
    ("tippen/dreiblatt-1859", {"players": 5, "knocking": True, "robbing": True}),
    ("tippen/grupp-1975", {"sniffing": "modern", "exchange": True, "max_bete": 9}),
]
EAGER = {"bid:frage", "bid:solo", "hold", "play", "contract:frage", "contract:rufer:C", "contract:bettel-ouvert",
         "tout", "tap", "sniff", "knock", "rob"}


def _states(rid: str, options: dict, deals: int, seed: int = 0):
    """Every state of ``deals`` random deals (words in EAGER preferred, so contracts happen)."""
    game = new_game(ruleset(rid, options))
    rng = random.Random(seed)
    table = TableState()
    for _ in range(deals):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(table, deck)
        while True:
            yield game, state
            if state.is_terminal():
                break
            legal = state.legal_actions()
            eager = [a for a in legal if state.action_to_string(a) in EAGER]
            state.apply(rng.choice(eager) if eager and rng.random() < 0.6 else rng.choice(legal))
        pot = table.pot + sum(t.amount if t.target == "pot" else -t.amount
                              for t in state.result().transfers if "pot" in (t.source, t.target))
        table = TableState(dealer=state.result().next_dealer, pot=pot)


@pytest.mark.parametrize(("rid", "options"), VARIANTS, ids=[f"{r}{o or ''}" for r, o in VARIANTS])
def test_the_encoding_of_the_observation_equals_the_view_based_one(rid: str, options: dict) -> None:
    encoders: dict[int, tuple[ObservationEncoder, DenseActions]] = {}
    compared = 0
    for game, state in _states(rid, options, deals=60):
        if id(game) not in encoders:
            dense = DenseActions(game)
            encoders[id(game)] = (ObservationEncoder(game, dense), dense)
        encoder, dense = encoders[id(game)]
        legal = dense.dense_legal(state.legal_actions())
        for seat in range(game.num_players):
            mine = legal if seat == state.current_player() else ()
            fast = encoder.encode_state(state, seat, mine)
            slow = encoder.encode(state.view(seat), mine)
            np.testing.assert_array_equal(fast, slow, err_msg=f"seat {seat}: {state.view(seat)}")
            compared += 1
    assert compared > 500


@pytest.mark.parametrize("rid", ruleset_ids())
def test_other_seats_hidden_cards_do_not_change_an_observation(rid: str) -> None:
    """Seat 0 (the dealer) sees the same when seats 1 and 2 swap hands: at the start of the deal
    and after every word (not a card) that both deals allow."""
    game = new_game(ruleset(rid))
    dense = DenseActions(game)
    encoder = ObservationEncoder(game, dense)
    rng = random.Random(rid)
    checked = 0
    first_word = (2 if game.rules.family == "tippen" else 3) * game.pack.size

    def is_word(action: int) -> bool:
        return first_word <= action < dense.fixed_end

    for _ in range(20):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        a = game.new_deal(TableState(dealer=0), deck)
        hands = [set(a.view(s)["hand"]) for s in range(game.num_players)]
        # the same deck with seats 1 and 2 holding each other's hands (positions swapped)
        names = [game.pack.cards[c] for c in deck]
        where = {c: s for s in (1, 2) for c in hands[s]}
        ones, twos = [i for i, c in enumerate(names) if where.get(c) == 1], [i for i, c in enumerate(names)
                                                                             if where.get(c) == 2]
        if len(ones) != len(twos):
            continue
        other = list(deck)
        for i, j in zip(ones, twos, strict=True):
            other[i], other[j] = deck[j], deck[i]
        b = game.new_deal(TableState(dealer=0), other)
        if b.view(1)["hand"] == a.view(1)["hand"]:
            continue
        # at the start, and after each word both deals allow (tap, pass, bids), seat 0 sees the same
        while True:
            mine_a = dense.dense_legal(a.legal_actions()) if a.current_player() == 0 else []
            mine_b = dense.dense_legal(b.legal_actions()) if b.current_player() == 0 else []
            np.testing.assert_array_equal(encoder.encode_state(a, 0, mine_a), encoder.encode_state(b, 0, mine_b))
            checked += 1
            if a.is_terminal() or a.legal_actions() != b.legal_actions() or not is_word(a.legal_actions()[0]):
                break
            action = a.legal_actions()[0]
            a.apply(action)
            b.apply(action)
    assert checked >= 20


def test_the_blocks_hold_the_hand_the_trick_and_the_legal_actions() -> None:
    game = new_game(ruleset("tippen/meyers-1905"))
    dense = DenseActions(game)
    encoder = ObservationEncoder(game, dense)
    rng = random.Random(5)
    deck = list(range(32))
    rng.shuffle(deck)
    state = game.new_deal(TableState(), deck)
    while state.view(None)["phase"] != "play" or not state.view(None)["trick"]:
        state.apply(state.legal_actions()[0])
    seat = state.current_player()
    view = state.view(seat)
    legal = dense.dense_legal(state.legal_actions())
    obs = encoder.encode(view, legal)
    block = {name: obs[off:off + size] for name, off, size in encoder.describe()}
    assert sorted(game.pack.cards[i] for i in np.flatnonzero(block["hand"])) == sorted(view["hand"])
    trick = block["trick"].reshape(game.num_players, 32)
    for who, card in view["trick"]:
        assert trick[(who - seat) % game.num_players, game.pack.card(card)] == 1
    assert trick.sum() == len(view["trick"])
    assert list(np.flatnonzero(block["legal"])) == legal
    assert block["to_act"][0] == 1 and block["to_act"].sum() == 1
    assert block["money"][0] == view["pot"] / 3
    assert set(np.flatnonzero(block["played"])) == {game.pack.card(c) for _, c in view["trick"]}

"""Shared trick logic: winners and legal follows (docs/rules-reference.md §2.2 head the trick,
§3.1 Tapp)."""

import random

import pytest

from stammtisch.cards import PIQUET32 as P
from stammtisch.cards import SUITS, cards_in
from stammtisch.cards import TAPP36 as T
from stammtisch.games import TableState, new_game
from stammtisch.games.tricks import legal_follows, trick_winner_index
from stammtisch.rules import ruleset


def mask(pack, *cards):
    return pack.mask_of(pack.card(c) for c in cards)


def names(pack, m):
    return sorted(pack.name_of(c) for c in range(pack.size) if m >> c & 1)


def follows(pack, hand, led, winning, trump, must="always", head=False):
    w = pack.card(winning)
    return names(pack, legal_follows(
        mask(pack, *hand), pack.suit_masks[pack.suit_of(pack.card(led))],
        pack.suit_masks["HDCS".index(trump)] if trump else 0,
        w, pack.suit_masks[pack.suit_of(w)], must, head))


def test_winner_highest_trump_else_highest_of_led_suit():
    cards = [P.card(c) for c in ("SK", "SA", "H7", "HQ", "DA")]
    assert trick_winner_index(cards, P.ranks_per_suit, P.suit_masks[0]) == 3
    assert trick_winner_index(cards, P.ranks_per_suit, 0) == 1
    cards = [T.card(c) for c in ("SK", "ST", "SA")]
    assert trick_winner_index(cards, T.ranks_per_suit, 0) == 2  # Tapp: A > 10 > K
    cards = [T.card(c) for c in ("SK", "ST")]
    assert trick_winner_index(cards, T.ranks_per_suit, 0) == 1


@pytest.mark.parametrize("hand,led,winning,trump,must,head,expected", [
    # follow suit, any card of it (no head)
    (["S7", "SK", "H9"], "SQ", "SQ", "H", "always", False, ["S7", "SK"]),
    # head the trick: must beat the winning card of the led suit when able
    (["S7", "SK", "H9"], "SQ", "SQ", "H", "always", True, ["SK"]),
    (["S7", "S8", "H9"], "SQ", "SQ", "H", "always", True, ["S7", "S8"]),
    # trick already trumped, player follows suit: any card of the suit
    (["S7", "SK"], "SQ", "H8", "H", "always", True, ["S7", "SK"]),
    # void: must trump
    (["H7", "D9"], "SQ", "SQ", "H", "always", False, ["H7"]),
    # void, head: must overtrump when able
    (["H7", "HK", "D9"], "SQ", "H9", "H", "always", True, ["HK"]),
    # void with only lower trumps: still must trump (T16)
    (["H7", "D9"], "SQ", "H9", "H", "always", True, ["H7"]),
    # void, no trump: anything
    (["D7", "C9"], "SQ", "SQ", "H", "always", True, ["C9", "D7"]),
    # 1859 untrumped: must trump while untrumped, free once trumped
    (["H7", "D9"], "SQ", "SK", "H", "untrumped", False, ["H7"]),
    (["H7", "D9"], "SQ", "H9", "H", "untrumped", False, ["D9", "H7"]),
    # never: free discard when void
    (["H7", "D9"], "SQ", "SK", "H", "never", False, ["D9", "H7"]),
    # trump led: follow with trumps; head means a higher trump
    (["H7", "HA", "D9"], "H9", "H9", "H", "always", True, ["HA"]),
    # no trumps (Bettel, Ramsch): void means anything
    (["H7", "D9"], "SQ", "SQ", None, "always", False, ["D9", "H7"]),
])
def test_legal_follows(hand, led, winning, trump, must, head, expected):
    assert follows(P, hand, led, winning, trump, must, head) == sorted(expected)


# --- the engines' hot paths against the reference --------------------------------------------
# The Tapp play phase lists legal cards by a suit-table lookup and both engines find the trick
# winner through a table built from ``beats``: here every play-phase state of random deals is
# checked, through the public API, against ``legal_follows`` and ``trick_winner_index``.



def _expected_legal(game, view, tippen):
    pack = game.pack
    hand = pack.mask_of(pack.card(c) for c in view["hand"])
    trick = [pack.card(c) for _, c in view["trick"]]
    if not trick:
        return None  # leads: free, or the 1859 forced leads (tested in test_tippen_edges)
    trump = view["trump"]
    trump_mask = pack.suit_masks[SUITS.index(trump)] if trump else 0
    led = pack.suit_masks[pack.suit_of(trick[0])]
    win = trick[trick_winner_index(trick, pack.ranks_per_suit, trump_mask)]
    if tippen:
        r = game.rules
        return legal_follows(hand, led, trump_mask, win, pack.suit_masks[pack.suit_of(win)],
                             r.void_must_trump, r.head_trick)
    return legal_follows(hand, led, trump_mask, win, pack.suit_masks[pack.suit_of(win)], "always", False)


@pytest.mark.parametrize("rid, options", [
    ("tapp/modern", {}), ("tapp/modern", {"players": 4, "pack": "skat32"}),
    ("tapp/classic-1879", {}), ("tapp/wuerttemberg-tarock", {}),
    ("tippen/grupp-1975", {}), ("tippen/dreiblatt-1859", {"players": 5}),
    ("tippen/meyers-1905", {"void_must_trump": "never"}), ("tippen/katira-1983", {"head_trick": False}),
])
def test_engine_play_phase_equals_the_reference(rid, options):
    rng = random.Random(rid)
    game = new_game(ruleset(rid, options))
    tippen = rid.startswith("tippen/")
    checked = 0
    for _ in range(150):
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=rng.randrange(game.num_players), pot=3), deck)
        while not state.is_terminal():
            seat = state.current_player()
            view = state.view(seat)
            if view["phase"] == "play":
                expected = _expected_legal(game, view, tippen)
                if expected is not None:
                    got = {game.pack.card(a[5:]) for a in view["legal_actions"]}
                    assert got == set(cards_in(expected)), (view["hand"], view["trick"], view["trump"])
                    checked += 1
                before = state.view(None)["trick"]
                state.apply(rng.choice(state.legal_actions()))
                after = state.view(None)
                last = after["last_trick"]
                if last and not after["trick"] and before and len(before) + 1 == len(last["cards"]):
                    pack = game.pack
                    cards = [pack.card(c) for _, c in last["cards"]]
                    trump = view["trump"]
                    tm = pack.suit_masks[SUITS.index(trump)] if trump else 0
                    assert last["cards"][trick_winner_index(cards, pack.ranks_per_suit, tm)][0] == last["winner"]
            else:
                state.apply(rng.choice(state.legal_actions()))
    assert checked > 100

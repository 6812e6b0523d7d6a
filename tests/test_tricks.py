"""Shared trick logic: winners and legal follows (RULES.md 2.2 head the trick, 3.1 Tapp)."""

import pytest

from stammtisch.cards import PIQUET32 as P
from stammtisch.cards import TAPP36 as T
from stammtisch.games.tricks import legal_follows, trick_winner_index


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

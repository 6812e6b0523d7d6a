"""Trick-taking logic shared by Tippen and Tapp, on int bit masks.

Cards are pack indices laid out suit by suit, weakest first inside a suit (see
``stammtisch.cards``), so comparisons inside one suit are integer comparisons.
"""

from __future__ import annotations

from functools import cache


def beats(card: int, best: int, suit_masks: tuple[int, ...], ranks_per_suit: int, trump_mask: int) -> bool:
    """True if ``card`` beats the card ``best`` currently winning the trick."""
    card_bit = 1 << card
    if card_bit & trump_mask:
        return not (1 << best) & trump_mask or card > best
    if (1 << best) & trump_mask:
        return False
    return card // ranks_per_suit == best // ranks_per_suit and card > best


@cache
def beaters_table(suit_masks: tuple[int, ...], ranks_per_suit: int,
                  trump_masks: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """``beats`` as a table: per trump mask, per card ``b`` winning the trick so far, the mask
    of the cards that beat ``b``. Built once per pack (it takes milliseconds, and every table
    of the web server builds a game); shared, so never changed by its users."""
    size = len(suit_masks) * ranks_per_suit
    return {
        tm: tuple(sum(1 << c for c in range(size) if beats(c, b, suit_masks, ranks_per_suit, tm))
                  for b in range(size))
        for tm in trump_masks
    }


def mask_cards(mask: int) -> list[int]:
    """The cards of a mask, lowest first (``cards.cards_in``, here for the compiled engines)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def popcount(mask: int) -> int:
    """The cards in a mask (``int.bit_count``, which the compiled engines would call as a Python
    method: a hand's few bits are counted faster in a loop)."""
    n = 0
    while mask:
        mask &= mask - 1
        n += 1
    return n


def trick_winner_index(cards: list[int], ranks_per_suit: int, trump_mask: int) -> int:
    """Index in ``cards`` (in play order) of the card that wins the trick."""
    best = 0
    for i in range(1, len(cards)):
        c, b = cards[i], cards[best]
        if (1 << c) & trump_mask:
            if not (1 << b) & trump_mask or c > b:
                best = i
        elif not (1 << b) & trump_mask and c // ranks_per_suit == b // ranks_per_suit and c > b:
            best = i
    return best


def higher_in_suit(card: int, suit_mask: int) -> int:
    """The mask of the cards of ``card``'s suit that are stronger than it."""
    return suit_mask & ~((2 << card) - 1)


def legal_follows(
    hand: int,
    led_suit_mask: int,
    trump_mask: int,
    winning_card: int,
    winning_suit_mask: int,
    must_trump: str = "always",
    head: bool = False,
) -> int:
    """The mask of cards a follower may play.

    ``must_trump``: ``always`` (void → trump if able), ``untrumped`` (only while nobody has
    trumped the trick; once trumped any card), ``never``. ``head``: the modern duty to beat
    the winning card when able (a higher card of the led suit while untrumped; an overtrump
    when void); a void player with only lower trumps must still trump (docs/rules-reference.md §2.2).
    """
    trumped = bool((1 << winning_card) & trump_mask) and not led_suit_mask & trump_mask
    follow = hand & led_suit_mask
    if follow:
        if head and not trumped:
            higher = follow & higher_in_suit(winning_card, winning_suit_mask)
            if higher:
                return higher
        return follow
    trumps = hand & trump_mask
    if trumps and (must_trump == "always" or (must_trump == "untrumped" and not trumped)):
        if head and trumped:
            over = trumps & higher_in_suit(winning_card, winning_suit_mask)
            if over:
                return over
        return trumps
    return hand

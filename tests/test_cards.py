import pytest

from stammtisch.cards import PACKS, PIQUET32, TAPP36, CardError, cards_in


def test_pack_sizes_and_orders():
    assert {n: p.size for n, p in PACKS.items()} == {
        "piquet32": 32, "whist52": 52, "tapp36": 36, "skat32": 32}
    # Tippen order: natural, Ace high; Tapp order: A T K Q J 9 8 7 6.
    hearts = [c for c in PIQUET32.cards if c[0] == "H"]
    assert hearts == ["H7", "H8", "H9", "HT", "HJ", "HQ", "HK", "HA"]
    hearts = [c for c in TAPP36.cards if c[0] == "H"]
    assert hearts == ["H6", "H7", "H8", "H9", "HJ", "HQ", "HK", "HT", "HA"]


def test_highest_card_of_a_suit_is_a_bit_operation():
    mask = PIQUET32.mask_of([PIQUET32.card(c) for c in ("HT", "H7", "SA", "HQ")])
    assert PIQUET32.name_of((mask & PIQUET32.suit_masks[0]).bit_length() - 1) == "HQ"
    mask = TAPP36.mask_of([TAPP36.card(c) for c in ("HK", "HT", "H6")])
    assert TAPP36.name_of((mask & TAPP36.suit_masks[0]).bit_length() - 1) == "HT"


def test_tapp_points_total_120():
    for name in ("tapp36", "skat32"):
        assert sum(PACKS[name].points) == 120


def test_parse_and_format():
    cards = PIQUET32.parse_cards("c7, d8")
    assert PIQUET32.format_cards(cards) == "C7,D8"
    assert PIQUET32.parse_cards("-") == []
    assert cards_in(PIQUET32.mask_of(cards)) == sorted(cards)
    with pytest.raises(CardError, match="not a card of the piquet32 pack"):
        PIQUET32.card("H6")

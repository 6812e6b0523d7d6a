"""Cards, packs and card sets (docs/rules-reference.md §0).

A card is an ``int`` index into its pack; a set of cards is an ``int`` bit mask over those
indices (as python-chess does with bitboards). Each pack lays its cards out suit by suit,
and inside a suit from the weakest to the strongest card in that pack's trick order, so
"highest card of a suit in a set" is ``(mask & suit_mask).bit_length() - 1``.

Notation: two characters, suit then rank, e.g. ``HA`` (heart Ace), ``ST`` (spade ten). Names
for people (``♥10``, ``Herz-Daus``) come from the catalogue, ``stammtisch.i18n.words``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

SUITS = "HDCS"

#: Tapp card points (rules reference §0): 120 in a full suit set of four suits.
TAPP_POINTS = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2}


class CardError(ValueError):
    """A card string that is not in the notation or not in the pack."""


@dataclass(frozen=True)
class Pack:
    """A pack: its name, and its ranks from strongest to weakest in trick order."""

    name: str
    ranks: str  # strongest first, e.g. "AKQJT987"
    cards: tuple[str, ...] = field(init=False)
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    suit_masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    full_mask: int = field(init=False, repr=False, compare=False)
    points: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.ranks)
        # Bit layout: suit-major, weakest rank at the low bit of each suit.
        cards = tuple(s + r for s in SUITS for r in reversed(self.ranks))
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "index", {c: i for i, c in enumerate(cards)})
        suit_masks = tuple(((1 << n) - 1) << (k * n) for k in range(len(SUITS)))
        object.__setattr__(self, "suit_masks", suit_masks)
        object.__setattr__(self, "full_mask", (1 << len(cards)) - 1)
        object.__setattr__(self, "points", tuple(TAPP_POINTS.get(c[1], 0) for c in cards))

    @property
    def size(self) -> int:
        return len(self.cards)

    @property
    def ranks_per_suit(self) -> int:
        return len(self.ranks)

    def card(self, text: str) -> int:
        """The index of a card given in notation; raises CardError if not in this pack."""
        try:
            return self.index[text.strip().upper()]
        except KeyError:
            raise CardError(f"{text!r} is not a card of the {self.name} pack") from None

    def name_of(self, card: int) -> str:
        return self.cards[card]

    def suit_of(self, card: int) -> int:
        return card // len(self.ranks)

    def suit_letter(self, card: int) -> str:
        return SUITS[card // len(self.ranks)]

    def mask_of(self, cards: Iterable[int]) -> int:
        m = 0
        for c in cards:
            m |= 1 << c
        return m

    def parse_cards(self, text: str) -> list[int]:
        """Parse ``"C7,D8"`` (commas or spaces); ``"-"`` or ``""`` is no card."""
        text = text.strip()
        if text in ("", "-"):
            return []
        return [self.card(t) for t in text.replace(",", " ").split()]

    def format_cards(self, cards: Iterable[int]) -> str:
        return ",".join(self.cards[c] for c in cards) or "-"


PIQUET32 = Pack("piquet32", "AKQJT987")
WHIST52 = Pack("whist52", "AKQJT98765432")
TAPP36 = Pack("tapp36", "ATKQJ9876")
SKAT32 = Pack("skat32", "ATKQJ987")

PACKS = {p.name: p for p in (PIQUET32, WHIST52, TAPP36, SKAT32)}


def pack_named(name: str) -> Pack:
    try:
        return PACKS[name]
    except KeyError:
        raise CardError(f"unknown pack {name!r}; packs are {', '.join(PACKS)}") from None


def cards_in(mask: int) -> list[int]:
    """The card indices in a mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out

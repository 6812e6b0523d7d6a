"""Cards, packs and card sets (RULES.md section 0).

A card is an ``int`` index into its pack; a set of cards is an ``int`` bit mask over those
indices (as python-chess does with bitboards). Each pack lays its cards out suit by suit,
and inside a suit from the weakest to the strongest card in that pack's trick order, so
"highest card of a suit in a set" is ``(mask & suit_mask).bit_length() - 1``.

Notation: two characters, suit then rank, e.g. ``HA`` (heart Ace), ``ST`` (spade ten).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SUITS = "HDCS"
SUIT_NAMES = {"H": "hearts", "D": "diamonds", "C": "clubs", "S": "spades"}
#: German-suited display names (display only; the notation never changes).
GERMAN_SUIT_NAMES = {"H": "Herz", "D": "Schellen", "C": "Eichel", "S": "Laub"}
FRENCH_GERMAN_NAMES = {"H": "Herz", "D": "Karo", "C": "Kreuz", "S": "Pik"}
RANK_NAMES = {
    "A": "Ace", "K": "King", "Q": "Queen", "J": "Jack", "T": "ten",
    "9": "nine", "8": "eight", "7": "seven", "6": "six", "5": "five",
    "4": "four", "3": "three", "2": "two",
}
GERMAN_RANK_NAMES = {"A": "Daus", "K": "König", "Q": "Ober", "J": "Unter", "T": "Zehn"}
SUIT_SYMBOLS = {"H": "♥", "D": "♦", "C": "♣", "S": "♠"}

#: Tapp card points (RULES.md section 0): 120 in a full suit set of four suits.
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

    def rank_letter(self, card: int) -> str:
        return self.cards[card][1]

    def strength(self, card: int) -> int:
        """Rank strength inside the suit: 0 is the weakest card."""
        return card % len(self.ranks)

    def mask_of(self, cards) -> int:
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

    def format_cards(self, cards) -> str:
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


def popcount(mask: int) -> int:
    return mask.bit_count()


def highest(mask: int) -> int:
    """The highest card index in a non-empty mask (-1 when empty)."""
    return mask.bit_length() - 1


def display(card: str, german: bool = False, symbols: bool = True) -> str:
    """A human label for a card, e.g. ``♥A`` or ``Herz Daus``."""
    suit, rank = card[0], card[1]
    if german:
        return f"{GERMAN_SUIT_NAMES[suit]} {GERMAN_RANK_NAMES.get(rank, rank)}"
    r = "10" if rank == "T" else rank
    return f"{SUIT_SYMBOLS[suit]}{r}" if symbols else card


def suit_label(suit: str, german: bool = False) -> str:
    """A suit letter for people: ``♥ hearts`` or ``Herz``."""
    return GERMAN_SUIT_NAMES[suit] if german else f"{SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]}"

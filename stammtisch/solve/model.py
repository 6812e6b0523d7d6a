"""The solver's position: a play-phase deal with every card open, as plain ints and bit masks.

Encoding
--------
A card is its pack index and a set of cards an int bit mask, exactly as in
``stammtisch.cards`` (suit by suit, weakest card at the low bit of its suit). A
:class:`Position` holds

* ``hands``: one mask per seat (a Tippen passer's mask is 0 and he is not in ``seats``);
* ``seats``: the seats that play, in the order of play (ascending seat numbers, cyclic);
* ``trick`` and ``leader``: the cards of the trick in progress in play order, led by ``leader``
  (with an empty trick ``leader`` is the seat to lead);
* ``trump``: the trump suit's mask, 0 without trumps (Bettel, Ramsch);
* ``card_points``: Tapp card points per card index (all 0 in Tippen);
* ``points`` / ``tricks``: card points and tricks taken so far per seat;
* ``declarer``, ``side`` (a seat mask: the declarer's side as the winning condition counts it),
  ``partner`` (Rufer: the holder of the called card, known to the solver; -1 otherwise);
* ``kind``: what is being played for (:class:`Kind`); ``tapp_points``: the points of the tapp
  (they count for the declarer in a point contract and for the last trick's winner in Ramsch);
* the follow rules: ``must_trump`` (``always``/``untrumped``/``never``), ``head`` (head the
  trick), ``forced_leads`` (Tippen 1859: trump lead on trick 1, trump Ace lead on trick 2).

``play(card)`` returns the next position; the legal cards come from ``legal_mask()``, which
calls ``games.tricks.legal_follows`` (the engines' own rule) so that the solver can never play
by other rules than the engines.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ..games.tricks import legal_follows, trick_winner_index


class Kind(IntEnum):
    """What the deal is played for (the objective the solver's queries start from)."""

    POINTS = 0  # Tapp Frage/Solo/Herzsolo: card points of the declarer's side (61 wins)
    NO_TRICK = 1  # Tapp Bettel, Bettel ouvert: the declarer must take no trick
    ALL_TRICKS = 2  # Tapp Rufer, Durch (Tout): the declarer's side must take every trick
    RAMSCH = 3  # Tapp Ramsch: everyone for himself, fewest points
    TRICKS = 4  # Tippen: every active player for himself, tricks count


MUST_TRUMP = ("always", "untrumped", "never")


@dataclass(frozen=True)
class Position:
    """A play-phase position with all hands open (see the module docstring for the fields)."""

    game: str  # "tapp" or "tippen"
    seats: tuple[int, ...]
    hands: tuple[int, ...]
    trick: tuple[int, ...]
    leader: int
    trump: int
    suit_masks: tuple[int, ...]
    ranks_per_suit: int
    card_points: tuple[int, ...]
    points: tuple[int, ...]
    tricks: tuple[int, ...]
    tricks_played: int
    kind: Kind
    declarer: int = -1
    side: int = 0
    partner: int = -1
    tapp_points: int = 0
    must_trump: str = "always"
    head: bool = False
    forced_leads: bool = False

    # ------------------------------------------------------------------ derived facts
    @property
    def num_seats(self) -> int:
        return len(self.hands)

    @property
    def turn(self) -> int:
        """The seat to play."""
        i = self.seats.index(self.leader)
        return self.seats[(i + len(self.trick)) % len(self.seats)]

    @property
    def tricks_left(self) -> int:
        """Tricks not yet completed (the trick in progress included)."""
        # the leader has played to the trick in progress already
        return self.hands[self.leader].bit_count() + (1 if self.trick else 0)

    @property
    def remaining(self) -> int:
        """The mask of the cards still in the hands."""
        out = 0
        for h in self.hands:
            out |= h
        return out

    def suit_mask_of(self, card: int) -> int:
        return self.suit_masks[card // self.ranks_per_suit]

    def winner_so_far(self) -> tuple[int, int]:
        """(card, seat) winning the trick in progress; the trick must not be empty."""
        i = trick_winner_index(list(self.trick), self.ranks_per_suit, self.trump)
        start = self.seats.index(self.leader)
        return self.trick[i], self.seats[(start + i) % len(self.seats)]

    def legal_mask(self) -> int:
        """The cards the seat on turn may play, by the engines' rule (``tricks.legal_follows``)."""
        hand = self.hands[self.turn]
        if not self.trick:
            if self.forced_leads and self.trump:
                if self.tricks_played == 0 and len(self.seats) >= 3 and hand & self.trump:
                    return hand & self.trump
                if self.tricks_played == 1:
                    ace = self.trump.bit_length() - 1
                    if hand >> ace & 1:
                        return 1 << ace
            return hand
        win_card, _ = self.winner_so_far()
        return legal_follows(hand, self.suit_mask_of(self.trick[0]), self.trump, win_card,
                             self.suit_mask_of(win_card), self.must_trump, self.head)

    def legal_cards(self) -> list[int]:
        m = self.legal_mask()
        return [c for c in range(m.bit_length()) if m >> c & 1]

    def is_over(self) -> bool:
        return not self.trick and self.remaining == 0

    # ------------------------------------------------------------------ moves
    def play(self, card: int) -> Position:
        """The position after the seat on turn plays ``card`` (checked against ``legal_mask``)."""
        if not self.legal_mask() >> card & 1:
            raise ValueError(f"card {card} is not a legal play for seat {self.turn}")
        return self.play_legal(card)

    def play_legal(self, card: int) -> Position:
        """``play`` of a card known to be legal (one of ``legal_cards()``): the searches' step."""
        seat = self.turn
        hands = list(self.hands)
        hands[seat] &= ~(1 << card)
        trick = self.trick + (card,)
        if len(trick) < len(self.seats):
            return self._with(hands=tuple(hands), trick=trick)
        i = trick_winner_index(list(trick), self.ranks_per_suit, self.trump)
        winner = self.seats[(self.seats.index(self.leader) + i) % len(self.seats)]
        gained = sum(self.card_points[c] for c in trick)
        last = not any(hands)
        if last and self.kind == Kind.RAMSCH:
            gained += self.tapp_points
        points = list(self.points)
        points[winner] += gained
        tricks = list(self.tricks)
        tricks[winner] += 1
        return self._with(hands=tuple(hands), trick=(), leader=winner, points=tuple(points),
                          tricks=tuple(tricks), tricks_played=self.tricks_played + 1)

    def _with(self, **changes: object) -> Position:
        """``dataclasses.replace`` without its checks and ``__init__``: a third of a search's
        time went to it. The fields are plain values (no ``__post_init__``), so a copy of the
        instance's dict with the changes is the same position."""
        out = object.__new__(Position)
        fields = out.__dict__
        fields.update(self.__dict__)
        fields.update(changes)
        return out

    # ------------------------------------------------------------------ scores
    def side_points(self) -> int:
        """Card points of the declarer's side so far, the tapp included (point contracts)."""
        own = sum(p for s, p in enumerate(self.points) if self.side >> s & 1)
        return own + self.tapp_points

    def seat_mask(self) -> int:
        m = 0
        for s in self.seats:
            m |= 1 << s
        return m


@dataclass(frozen=True)
class Goal:
    """A two-team view of a query: ``maximizers`` (seat mask) play to make the takings of the
    ``counted`` seats (card points, or tricks when ``by_points`` is False) as large as possible,
    everyone else to make them small. Every query of the solvers is one such goal."""

    maximizers: int
    counted: int
    by_points: bool

    def taken(self, pos: Position) -> int:
        """What the counted seats have taken so far (the tapp is not included)."""
        per_seat = pos.points if self.by_points else pos.tricks
        return sum(v for s, v in enumerate(per_seat) if self.counted >> s & 1)

    def upper(self, pos: Position) -> int:
        """The most the counted seats can still take (a bound from the remaining cards)."""
        if not self.by_points:
            return pos.tricks_left
        out = sum(pos.card_points[c] for c in pos.trick)
        m = pos.remaining
        out += sum(pos.card_points[c] for c in range(m.bit_length()) if m >> c & 1)
        if pos.kind == Kind.RAMSCH:
            out += pos.tapp_points
        return out

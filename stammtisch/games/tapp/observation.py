"""What one seat knows of a Tapp deal, as ints and card masks: ``TappState.observation(seat)``.

The bots and the RL observations read this, not the JSON view: it holds the same facts as
``view(seat)`` (the tests build one from the other for every seat of many random states, so it
holds nothing the seat may not know), without the log texts, the card names and the dicts the
web client needs. Cards are pack indices, sets of cards bit masks (``stammtisch.cards``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ...rules.tapp import TappRules
    from .game import TappGame

#: ``TappObservation.rufer_holder`` when the called card lay in the tapp
RUFER_IN_TAPP: Final = -2


class TappObservation:
    """One seat's knowledge of a Tapp deal (``seat`` -1: a spectator's).

    Beside the view's facts: ``played``, every card played so far (the view's log of plays);
    ``words``, per seat the offset (from ``3N``, the first fixed action) of the last word it
    said (a bid, hold, pass, play/weg, a contract; -1 none), read from the log.
    -1 stands for "none" in every seat or card field.
    """

    __slots__ = (
        "game", "rules", "seat", "players", "phase", "dealer", "turn", "hand", "hand_sizes",
        "trump", "trick", "last_trick", "last_winner", "played", "tricks_won", "pot", "declarer",
        "kind", "contract", "tout", "called", "open_hand", "standing_seat", "standing", "tapp",
        "discards", "rufer_holder", "given", "words",
    )

    def __init__(self, game: TappGame, seat: int, phase: int, dealer: int, turn: int, hand: int,
                 hand_sizes: tuple[int, ...], trump: int, trick: tuple[tuple[int, int], ...],
                 last_trick: tuple[tuple[int, int], ...], last_winner: int, played: int,
                 tricks_won: tuple[int, ...], pot: int, declarer: int, kind: int, contract: str | None,
                 tout: bool, called: int, open_hand: int, standing_seat: int, standing: int, tapp: int,
                 discards: int, rufer_holder: int, given: int, words: tuple[int, ...]) -> None:
        self.game = game  # the engine: its tables and notation (public)
        self.rules: TappRules = game.rules
        self.seat = seat
        self.players: int = game.num_players
        self.phase = phase  # ``Phase``
        self.dealer = dealer
        self.turn = turn  # the seat to act, -1 when the deal is over
        self.hand = hand  # the seat's own hand (0 for a spectator)
        self.hand_sizes = hand_sizes  # as the seat may know them (the view's ``hand_sizes``)
        self.trump = trump  # the trump suit's index in ``cards.SUITS``, -1 none
        self.trick = trick  # (seat, card) in the order played
        self.last_trick = last_trick
        self.last_winner = last_winner
        self.played = played
        self.tricks_won = tricks_won
        self.pot = pot
        self.declarer = declarer
        self.kind = kind  # ``Kind`` of the contract (POINTS before one is settled)
        self.contract = contract  # its notation, as the view shows it (None before)
        self.tout = tout
        self.called = called  # the called Rufer card
        self.open_hand = open_hand  # Bettel ouvert: the declarer's hand, once it lies open
        self.standing_seat = standing_seat  # the bid to beat while the bidding runs: who
        self.standing = standing  # ... and its action id
        self.tapp = tapp  # the declarer's own: the tapp he picked up
        self.discards = discards  # ... and what he discarded
        self.rufer_holder = rufer_holder  # declarer and holder: the holder, or RUFER_IN_TAPP
        self.given = given  # declarer and holder: the card given back
        self.words = words

    def key(self) -> tuple[object, ...]:
        """Every field, in order (the engine by identity): for comparing observations."""
        return (id(self.game), self.seat, self.phase, self.dealer, self.turn, self.hand,
                self.hand_sizes, self.trump, self.trick, self.last_trick, self.last_winner,
                self.played, self.tricks_won, self.pot, self.declarer, self.kind, self.contract,
                self.tout, self.called, self.open_hand, self.standing_seat, self.standing, self.tapp,
                self.discards, self.rufer_holder, self.given, self.words)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TappObservation) and self.key() == other.key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<TappObservation seat={self.seat} phase={self.phase} turn={self.turn} "
                f"hand={self.hand:#x}>")

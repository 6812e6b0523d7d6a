"""What one seat knows of a Tippen deal, as ints and card masks: ``TippenState.observation(seat)``.

The bots and the RL observations read this, not the JSON view: it holds the same facts as
``view(seat)`` (the tests build one from the other for every seat of many random states, so it
holds nothing the seat may not know), without the log texts, the card names and the dicts the
web client needs. Cards are pack indices, sets of cards bit masks (``stammtisch.cards``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...rules.tippen import TippenRules
    from .game import TippenGame


class TippenObservation:
    """One seat's knowledge of a Tippen deal (``seat`` -1: a spectator's).

    Beside the view's facts: ``played``, every card played so far (the view's log of plays);
    ``words``, per seat the index in ``phases.WORDS`` of the last word it said (-1 none), and
    ``exchanged``, per seat how many cards it exchanged (-1: none yet), both read from the log.
    -1 stands for "none" in every seat or card field.
    """

    __slots__ = (
        "game", "rules", "seat", "players", "phase", "dealer", "turn", "hand", "folded",
        "hand_sizes", "trump", "upcard", "trump_card", "trick", "last_trick", "last_winner",
        "played", "tricks_won", "pot", "reserve", "pot_in_play", "trick_value", "bete",
        "compulsory", "active", "declared", "talon_size", "anted", "taken", "robbed", "outcome",
        "jump_cards", "next_dealer", "words", "exchanged",
    )

    def __init__(self, game: TippenGame, seat: int, phase: int, dealer: int, turn: int, hand: int,
                 folded: int, hand_sizes: tuple[int, ...], trump: int, upcard: int, trump_card: int,
                 trick: tuple[tuple[int, int], ...], last_trick: tuple[tuple[int, int], ...],
                 last_winner: int, played: int, tricks_won: tuple[int, ...], pot: int, reserve: int,
                 pot_in_play: int | None, trick_value: int | None, bete: int | None,
                 compulsory: bool | None, active: tuple[int, ...], declared: tuple[str | None, ...],
                 talon_size: int, anted: tuple[int, ...], taken: str | None, robbed: bool,
                 outcome: str | None, jump_cards: tuple[int, ...], next_dealer: int,
                 words: tuple[int, ...], exchanged: tuple[int, ...]) -> None:
        self.game = game  # the engine: its tables and notation (public)
        self.rules: TippenRules = game.rules
        self.seat = seat
        self.players: int = game.num_players
        self.phase = phase  # ``phases.Phase``
        self.dealer = dealer
        self.turn = turn  # the seat to act, -1 when the deal is over
        self.hand = hand  # the seat's own hand (0 for a spectator and a dealer deciding blind)
        self.folded = folded  # the seat's own cards laid face down when it passed
        self.hand_sizes = hand_sizes
        self.trump = trump  # the trump suit's index in ``cards.SUITS`` once known, else -1
        self.upcard = upcard  # the upcard while it lies face up
        self.trump_card = trump_card  # the card that fixed trumps, where the seat may see it
        self.trick = trick  # (seat, card) in the order played
        self.last_trick = last_trick
        self.last_winner = last_winner
        self.played = played
        self.tricks_won = tricks_won
        self.pot = pot
        self.reserve = reserve
        self.pot_in_play = pot_in_play
        self.trick_value = trick_value
        self.bete = bete
        self.compulsory = compulsory
        self.active = active
        self.declared = declared  # per seat: tap, pass, drop, stay or None
        self.talon_size = talon_size
        self.anted = anted
        self.taken = taken  # what the dealer took the trump card for: sniff, knock or None
        self.robbed = robbed
        self.outcome = outcome
        self.jump_cards = jump_cards
        self.next_dealer = next_dealer  # once the deal is over
        self.words = words
        self.exchanged = exchanged

    def key(self) -> tuple[object, ...]:
        """Every field, in order (the engine by identity): for comparing observations."""
        return (id(self.game), self.seat, self.phase, self.dealer, self.turn, self.hand, self.folded,
                self.hand_sizes, self.trump, self.upcard, self.trump_card, self.trick, self.last_trick,
                self.last_winner, self.played, self.tricks_won, self.pot, self.reserve,
                self.pot_in_play, self.trick_value, self.bete, self.compulsory, self.active,
                self.declared, self.talon_size, self.anted, self.taken, self.robbed, self.outcome,
                self.jump_cards, self.next_dealer, self.words, self.exchanged)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TippenObservation) and self.key() == other.key()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (f"<TippenObservation seat={self.seat} phase={self.phase} turn={self.turn} "
                f"hand={self.hand:#x}>")

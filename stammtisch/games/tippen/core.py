"""What every part of a Tippen deal uses: the state's fields, money, turns, the trump."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..base import POT, RESERVE, Account, Payment
from ..engine import EngineState
from .phases import ACTIVE, OVER, PLAY, UP_FACE

if TYPE_CHECKING:
    from .game import TippenGame  # noqa: F401 (the base class below names it)


class TippenCore(EngineState["TippenGame"]):
    """The fields of a Tippen deal and the helpers its parts share (``words``, ``scoring`` and
    ``state`` extend it in turn; one set of slots, here)."""

    __slots__ = (
        "game", "table", "deck", "dealer", "phase", "cur", "hands", "status", "declared",
        "talon", "talon_pos", "upcard", "up_state", "trump_index", "trump_mask", "trump_card",
        "taken", "discards", "dead", "played", "trick", "led_suit", "win_card", "win_seat",
        "last_trick", "tricks_won", "tricks_done", "transfers", "pot", "reserve",
        "pot_in_play", "trick_value", "bete", "compulsory", "declaring", "anted", "log",
        "outcome", "next_dealer", "jump_cards", "order_pos", "n_active", "robbed", "looked",
        "folded", "_legal",
    )

    deck: tuple[int, ...]
    hands: list[int]  # per seat, a card mask
    status: list[int]  # per seat: UNDECIDED, ACTIVE, PASSED, DROPPED
    declared: list[str | None]  # per seat: tap, pass, drop, stay
    talon: tuple[int, ...]
    talon_pos: int
    upcard: int
    up_state: int
    trump_index: int  # suit index, -1 before trumps are fixed
    trump_mask: int
    trump_card: int
    taken: int  # TAKE_*: what the dealer did at his choice
    discards: int
    dead: int
    played: int
    trick: list[tuple[int, int]]  # (seat, card) in play order
    led_suit: int
    win_card: int
    win_seat: int
    last_trick: tuple[tuple[tuple[int, int], ...], int] | None
    tricks_won: list[int]
    tricks_done: int
    pot: int
    reserve: int
    pot_in_play: int | None  # fixed once the cards are dealt
    trick_value: int | None
    bete: int | None
    compulsory: bool | None
    declaring: bool
    anted: list[bool]
    outcome: str | None
    next_dealer: int
    jump_cards: list[int] | None
    order_pos: int
    n_active: int
    robbed: bool
    looked: bool
    folded: list[int]
    _legal: int  # play phase: the legal mask of the seat on turn, -1 unknown

    # -- money --------------------------------------------------------------------------------
    def _move(self, source: Account, target: Account, amount: int, reason: str, code: Payment,
              trick: int = 0) -> None:
        if amount <= 0:
            return
        self.transfers.append(self.game.transfer(source, target, amount, reason, code, trick))
        if source == POT:
            self.pot -= amount
        elif source == RESERVE:
            self.reserve -= amount
        if target == POT:
            self.pot += amount
        elif target == RESERVE:
            self.reserve += amount

    def _ante(self, seat: int, reason: str, code: Payment) -> None:
        self.anted[seat] = True
        self._move(seat, POT, self.game.stake, reason, code)

    def _set_trump(self, suit: int) -> None:
        self.trump_index = suit
        self.trump_mask = self.game.suit_masks[suit]

    def _turn(self) -> None:
        self.up_state = UP_FACE
        self.trump_card = self.upcard
        self._set_trump(self.game.suit_of[self.upcard])

    def _seek_turn(self, status: int) -> bool:
        """Give the turn to the next seat (from forehand, counting ``order_pos``) whose
        status is ``status``; False when the round is over."""
        n = self.game.num_players
        while self.order_pos < n:
            s = (self.dealer + 1 + self.order_pos) % n
            if self.status[s] == status:
                self.cur = s
                return True
            self.order_pos += 1
        return False

    def _fold(self, seat: int) -> None:
        """A passer (or a dropping sniffer) lays his cards face down: out of play, and
        seen by nobody but himself."""
        self.folded[seat] = self.hands[seat]
        self.dead |= self.hands[seat]
        self.hands[seat] = 0

    def _start_play(self) -> None:
        self.phase = PLAY
        self.cur = self._next_active(self.dealer)

    def _next_active(self, seat: int) -> int:
        n = self.game.num_players
        s = (seat + 1) % n
        while self.status[s] != ACTIVE:
            s = (s + 1) % n
        return s

    def _finish(self) -> None:
        self.phase = OVER
        self.cur = -1

    def _bete_account(self) -> Account:
        """Where bêtes and penalties go: the pot; under a maximum bête the reserve, which
        holds the accumulated bêtes (rules reference §2.3; §5.2 E3: the reserve becomes
        27). The next deal moves min(carried, max_bete) of it back into play."""
        return POT if self.game.max_bete is None else RESERVE

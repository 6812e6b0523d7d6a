"""The Tippen engine (docs/rules-reference.md §2): every rule set and option of ``TippenRules``.

A deal runs through these phases (each skipped when the rule set does not use it):

``schieben`` (shove/deal) → Hupf und Sprung check (automatic; a jump ends the deal) → deal →
``choice`` (dealer: sniff/knock/turn) → ``discard`` → ``drop`` (1859 sniffer) → ``declare``
(tap/pass, forehand first, dealer last) → ``exchange`` (active players from forehand) →
``rob`` (every active player from forehand says rob/no-rob; only the holder of the trump 7
may rob, and asking everyone keeps where the 7 lies hidden) → ``play`` → ``over``.

Action ids (``S`` = pack size; see ``TippenGame``):

* ``0 … S-1``: ``play:XX`` (the card index);
* ``S … 2S-1``: ``discard:XX`` (``S`` + card index);
* ``2S + k``: the word actions ``tap pass shove deal sniff knock turn drop stay rob no-rob``
  (k = 0 … 10, in that order);
* ``2S + 16 + mask``: ``exchange:…`` with the bit mask of the exchanged cards (``mask`` 0 is
  ``exchange:-``).

Money (rules reference §1): every movement is a ``Transfer`` kept in ``state.transfers``; the
pot and reserve the state shows are the table's balances plus those transfers.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any, ClassVar

from ..cards import SUITS, CardError, cards_in
from ..rules.tippen import TippenRules
from .base import POT, RESERVE, Account, DealResult, IllegalAction, TableState, Transfer
from .engine import EngineGame, EngineState, Secret
from .tricks import beaters_table, legal_follows


class Phase(IntEnum):
    SHOVE = 0  # Schieben: the dealer shoves or deals
    CHOICE = 1  # the dealer sniffs, knocks, looks or turns
    DISCARD = 2  # a sniffer or knocker discards one card
    DROP = 3  # the 1859 sniffer drops or stays
    DECLARE = 4  # tap or pass
    EXCHANGE = 5
    ROB = 6
    PLAY = 7
    OVER = 8


# plain ints for the hot paths
SHOVE, CHOICE, DISCARD, DROP, DECLARE, EXCHANGE, ROB, PLAY, OVER = (int(p) for p in Phase)
PHASE_NAMES = ("schieben", "choice", "discard", "drop", "declare", "exchange", "rob", "play", "over")

# Seat status.
UNDECIDED, ACTIVE, PASSED, DROPPED = range(4)

# Upcard state (trump_card = turn / katira).
UP_NONE, UP_HIDDEN, UP_FACE, UP_TAKEN = range(4)

# What the dealer did at his choice.
TAKE_NONE, TAKE_SNIFF1859, TAKE_SNIFF_MODERN, TAKE_KNOCK = range(4)

# "look" is this project's addition (rules reference §0): with both knocking and sniffing
# agreed the dealer first decides blind whether to knock, and only if he does not, looks at
# his hand and may sniff (rules reference §6 T7/T8: a knocker has not seen his hand, a
# sniffer has).
WORDS = ("tap", "pass", "shove", "deal", "sniff", "knock", "turn", "drop", "stay", "rob", "no-rob",
         "look")
(W_TAP, W_PASS, W_SHOVE, W_DEAL, W_SNIFF, W_KNOCK, W_TURN, W_DROP, W_STAY, W_ROB,
 W_NOROB, W_LOOK) = range(len(WORDS))
EXCHANGE_OFFSET = 16
#: exchange texts a game keeps (``TippenGame.exchange_texts``): every exchange of up to three
#: cards of a 32-card pack is 5,488 of them; bounded for larger hands and packs
EXCHANGE_TEXTS_KEPT = 1 << 14

PHASE_HINT = {
    SHOVE: "the dealer must shove or deal",
    CHOICE: "the dealer must choose before the trump is turned",
    DISCARD: "the dealer must discard one card",
    DROP: "the sniffer must drop or stay",
    DECLARE: "the players are declaring (tap or pass)",
    EXCHANGE: "the active players are exchanging",
    ROB: "the active players are asked in turn; the holder of the trump 7 may rob the upcard",
    PLAY: "the cards are being played",
    OVER: "the deal is over",
}


class TippenGame(EngineGame):
    """A Tippen engine for one validated ``TippenRules``. Immutable."""

    family = "tippen"
    rules: TippenRules

    def __init__(self, rules: TippenRules):
        super().__init__(rules)
        p = self.pack
        S = p.size
        R = p.ranks_per_suit
        self.size = S
        self.ranks = R
        self.card_names = p.cards
        self.suit_masks = p.suit_masks
        self.suit_of = tuple(c // R for c in range(S))
        self.DISCARD_BASE = S
        self.WORD_BASE = 2 * S
        self.EXCHANGE_BASE = 2 * S + EXCHANGE_OFFSET
        self.word_ids = {w: 2 * S + i for i, w in enumerate(WORDS)}
        #: the text of every action id below the exchanges: the server writes the legal
        #: actions of the seat on turn into its view after every action
        self.simple_texts = (tuple("play:" + c for c in p.cards)
                             + tuple("discard:" + c for c in p.cards) + tuple(WORDS))
        #: the texts of exchange ids made so far (up to ``EXCHANGE_TEXTS_KEPT``): in the
        #: exchange the seat on turn has a legal action per subset of its hand, written into
        #: its view at every event, so the texts are made once, not at every view (the web
        #: table builds every seat's view at every event)
        self.exchange_texts: dict[int, str] = {}
        # Secrets of the log: the card a sniffer or knocker discards is seen by him alone;
        # of an exchange the others learn only how many cards were changed.
        self.secrets = (
            Secret(S, 2 * S, "actor", lambda a: "discard:?"),
            Secret(self.EXCHANGE_BASE, self.EXCHANGE_BASE + (1 << S), "actor",
                   lambda a: f"exchange:{(a - self.EXCHANGE_BASE).bit_count()}"),
        )
        self.ace_of = tuple(k * R + R - 1 for k in range(len(SUITS)))
        self.seven_of = tuple(k * R + R - 1 - p.ranks.index("7") for k in range(len(SUITS)))
        self.ace_or_seven = p.mask_of(c for c in range(S) if p.cards[c][1] in "A7")
        #: per trump mask, per card ``b`` winning the trick so far: the mask of the cards
        #: that beat it (``tricks.beats`` as a table)
        self.beaters = beaters_table(p.suit_masks, R, p.suit_masks)
        self.has_choice = rules.trump_card != "dealer-last" and (
            rules.sniffing != "none" or rules.knocking)

    @property
    def num_distinct_actions(self) -> int:
        """One past the largest action id (exchange ids are sparse: ``EXCHANGE_BASE + mask``)."""
        return self.EXCHANGE_BASE + self.pack.full_mask + 1

    # -- construction -------------------------------------------------------------------------
    def new_deal(self, table: TableState, deck: Sequence[int]) -> TippenState:
        self.check_deck(deck)
        self.check_table(table)
        return TippenState(self, table, list(deck))

    def deal_hands(self, deck: Sequence[int], dealer: int) -> tuple[list[int], int, int]:
        """Deal one card at a time from forehand, clockwise (rules reference §2.2 trump card).

        Returns the hands as masks, the deck position of the trump card (the turned upcard,
        or under ``dealer-last`` the dealer's own last card) and where the talon starts."""
        r = self.rules
        n = self.num_players
        hands = [0] * n
        pos = 0

        def one_round() -> None:
            nonlocal pos
            for k in range(1, n + 1):
                hands[(dealer + k) % n] |= 1 << deck[pos]
                pos += 1

        for _ in range(r.tricks - 1 if r.trump_card == "katira" else r.tricks):
            one_round()
        if r.trump_card == "dealer-last":
            return hands, pos - 1, pos
        up = pos
        pos += 1
        if r.trump_card == "katira":
            one_round()
        return hands, up, pos

    def action_to_string(self, action: int) -> str:
        if 0 <= action < len(self.simple_texts):
            return self.simple_texts[action]
        text = self.exchange_texts.get(action)
        if text is not None:
            return text
        if action >= self.EXCHANGE_BASE:
            mask = action - self.EXCHANGE_BASE
            if mask >> self.size == 0:
                if not mask:
                    return "exchange:-"
                names = []
                while mask:  # the cards in pack order, lowest bit first
                    low = mask & -mask
                    names.append(self.card_names[low.bit_length() - 1])
                    mask ^= low
                text = "exchange:" + ",".join(names)
                if len(self.exchange_texts) < EXCHANGE_TEXTS_KEPT:
                    self.exchange_texts[action] = text
                return text
        raise IllegalAction("notation", f"{action!r} is not a Tippen action id")

    def string_to_action(self, text: str) -> int:
        if not isinstance(text, str):
            raise IllegalAction("notation", f"{text!r} is not an action string")
        t = text.strip()
        low = t.lower()
        if low in self.word_ids:
            return self.word_ids[low]
        kind, sep, arg = t.partition(":")
        kind = kind.strip().lower()
        arg = arg.strip()
        try:
            if sep and kind == "play":
                return self.pack.card(arg) if arg and "," not in arg else self._bad(text)
            if sep and kind == "discard":
                return self.size + self.pack.card(arg) if arg and "," not in arg else self._bad(text)
            if sep and kind == "exchange":
                if not arg:
                    self._bad(text)
                cards = self.pack.parse_cards(arg)
                mask = 0
                for c in cards:
                    if mask >> c & 1:
                        raise IllegalAction("notation", f"{text!r} names {self.card_names[c]} twice")
                    mask |= 1 << c
                return self.EXCHANGE_BASE + mask
        except CardError as e:
            raise IllegalAction("notation", f"{text!r}: {e}") from None
        return self._bad(text)

    @staticmethod
    def _bad(text: str) -> int:
        raise IllegalAction(
            "notation",
            f"{text!r} is not a Tippen action (play:HA, tap, pass, exchange:C7,D8, exchange:-, "
            f"shove, deal, sniff, knock, look, turn, discard:C7, drop, stay, rob, no-rob)")


class TippenState(EngineState):
    """One Tippen deal in progress (see the module docstring)."""

    game: TippenGame
    OVER = OVER
    PHASE_NAMES = PHASE_NAMES
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

    __slots__ = (
        "game", "table", "deck", "dealer", "phase", "cur", "hands", "status", "declared",
        "talon", "talon_pos", "upcard", "up_state", "trump_index", "trump_mask", "trump_card",
        "taken", "discards", "dead", "played", "trick", "led_suit", "win_card", "win_seat",
        "last_trick", "tricks_won", "tricks_done", "transfers", "pot", "reserve",
        "pot_in_play", "trick_value", "bete", "compulsory", "declaring", "anted", "log",
        "outcome", "next_dealer", "jump_cards", "order_pos", "n_active", "robbed", "looked",
        "folded",
    )

    def __init__(self, game: TippenGame, table: TableState, deck: list[int]):
        r = game.rules
        n = game.num_players
        self.game = game
        self.table = table
        self.deck = tuple(deck)
        self.dealer = table.dealer
        self.phase = SHOVE
        self.cur = table.dealer
        self.hands = [0] * n
        self.status = [UNDECIDED] * n
        self.declared = [None] * n
        self.talon = ()
        self.talon_pos = 0
        self.upcard = -1
        self.up_state = UP_NONE
        self.trump_index = -1
        self.trump_mask = 0
        self.trump_card = -1
        self.taken = TAKE_NONE
        self.discards = 0
        self.dead = 0
        self.played = 0
        self.trick = []
        self.led_suit = -1
        self.win_card = -1
        self.win_seat = -1
        self.last_trick = None
        self.tricks_won = [0] * n
        self.tricks_done = 0
        self.transfers = []
        self.pot = table.pot
        self.reserve = table.reserve
        self.pot_in_play = None
        self.trick_value = None
        self.bete = None
        self.compulsory = None
        self.declaring = False
        self.anted = [False] * n
        self.log = []
        self.outcome = None
        self.next_dealer = -1
        self.jump_cards = None
        self.order_pos = 0
        self.n_active = 0
        self.robbed = False
        self.looked = False  # the dealer has looked at his hand in the choice phase
        self.folded = [0] * n  # the cards each passer laid face down
        # Ante, then the maximum-bête rebalancing (rules reference §2.3): pot in play =
        # min(carried, max_bete) + this deal's stakes; the rest waits in the reserve.
        self._ante(self.dealer, "ante")
        carried = table.pot + table.reserve
        in_play = carried if r.max_bete is None else min(carried, r.max_bete)
        want_reserve = carried - in_play
        if want_reserve > self.reserve:
            self._move(POT, RESERVE, want_reserve - self.reserve, "max bête: rest to the reserve")
        elif want_reserve < self.reserve:
            self._move(RESERVE, POT, self.reserve - want_reserve, "bête from the reserve into play")
        if not r.schieben:
            self._after_shoving()

    # -- money --------------------------------------------------------------------------------
    def _move(self, source: Account, target: Account, amount: int, reason: str) -> None:
        if amount <= 0:
            return
        self.transfers.append(Transfer(source, target, amount, reason))
        if source == POT:
            self.pot -= amount
        elif source == RESERVE:
            self.reserve -= amount
        if target == POT:
            self.pot += amount
        elif target == RESERVE:
            self.reserve += amount

    def _ante(self, seat: int, reason: str) -> None:
        self.anted[seat] = True
        self._move(seat, POT, self.game.rules.stake, reason)

    # -- phase transitions --------------------------------------------------------------------
    def _after_shoving(self) -> None:
        g = self.game
        r = g.rules
        n = g.num_players
        d = self.dealer
        deck = self.deck
        if r.hupf_und_sprung != "none" and g.ace_or_seven >> deck[-1] & 1:
            self.jump_cards = [deck[-1]]
            step = 1
            if r.hupf_und_sprung == "double" and g.ace_or_seven >> deck[0] & 1:
                self.jump_cards.append(deck[0])
                step = 2
                self._ante((d + 1) % n, "ante (Hupf und Sprung: skipped seat)")
            self.next_dealer = (d + step) % n
            self.outcome = "jump"
            self._finish()
            return
        self.hands, up, talon_start = g.deal_hands(deck, d)
        if r.trump_card == "dealer-last":
            self.trump_card = deck[up]
            self._set_trump(g.suit_of[deck[up]])
        else:
            self.upcard = deck[up]
            self.up_state = UP_HIDDEN
        self.talon = deck[talon_start:]
        # What this hand is worth, fixed once all antes of the deal are in.
        self.pot_in_play = self.pot
        self.trick_value = self.pot // r.tricks
        bete_stands = self.table.pot + self.table.reserve > 0
        self.declaring = (r.hupf_und_sprung != "none" or not r.tipp_zwang or bete_stands)
        self.compulsory = not self.declaring
        if r.bete == "stake" or (r.bete == "stake-or-pot" and self.compulsory):
            self.bete = r.stake
        else:
            self.bete = self.pot_in_play
        if g.has_choice:
            self.phase = CHOICE
            self.cur = d
        else:
            if self.up_state == UP_HIDDEN:
                self._turn()
            self._start_declare()

    def _set_trump(self, suit: int) -> None:
        self.trump_index = suit
        self.trump_mask = self.game.suit_masks[suit]

    def _turn(self) -> None:
        self.up_state = UP_FACE
        self.trump_card = self.upcard
        self._set_trump(self.game.suit_of[self.upcard])

    def _start_declare(self) -> None:
        n = self.game.num_players
        if self.declaring:
            self.phase = DECLARE
            self.order_pos = 0
            self._next_declarer()
        else:
            for s in range(n):
                if self.status[s] == UNDECIDED:
                    self.status[s] = ACTIVE
            self._end_declare()

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

    def _next_declarer(self) -> None:
        if not self._seek_turn(UNDECIDED):
            self._end_declare()

    def _end_declare(self) -> None:
        g = self.game
        r = g.rules
        n = g.num_players
        active = [s for s in range(n) if self.status[s] == ACTIVE]
        d = self.dealer
        if len(active) == 1 and r.lone_tapper == "dealer-defends" and active[0] != d \
                and self.status[d] == PASSED:
            # As in Loo: the dealer must defend the pot against a lone tapper. His cards were
            # set aside face down on passing; he takes them back.
            self.status[d] = ACTIVE
            self.hands[d], self.folded[d] = self.folded[d], 0
            self.dead &= ~self.hands[d]
            active.append(d)
        self.n_active = len(active)
        if not active:
            self.outcome = "all-pass"
            self.next_dealer = (d + 1) % n
            self._finish()
            return
        if len(active) == 1:
            self.outcome = "lone-tapper"
            self._move(POT, active[0], self.pot_in_play or 0, "lone tapper takes the pot")
            self.next_dealer = (d + 1) % n
            self._finish()
            return
        if r.exchange:
            self.phase = EXCHANGE
            self.order_pos = 0
            self._next_exchanger()
        else:
            self._start_rob()

    def _fold(self, seat: int) -> None:
        """A passer (or a dropping sniffer) lays his cards face down: out of play, and
        seen by nobody but himself."""
        self.folded[seat] = self.hands[seat]
        self.dead |= self.hands[seat]
        self.hands[seat] = 0

    def _next_exchanger(self) -> None:
        if not self._seek_turn(ACTIVE):
            self._start_rob()

    def _rob_possible(self) -> bool:
        """Robbing can happen this deal (only public facts: agreed, the upcard lies face up
        and is not itself the trump 7)."""
        g = self.game
        return (g.rules.robbing and self.up_state == UP_FACE and not self.robbed
                and self.upcard != g.seven_of[self.trump_index])

    def _start_rob(self) -> None:
        # Every active player is asked in turn from forehand, whether or not he holds the
        # trump 7: asking only the holder would show every seat where the 7 lies.
        if self._rob_possible():
            self.phase = ROB
            self.order_pos = 0
            self._next_robber()
        else:
            self._start_play()

    def _next_robber(self) -> None:
        if not self._seek_turn(ACTIVE):
            self.robbed = True  # the chance is spent
            self._start_play()

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
        return POT if self.game.rules.max_bete is None else RESERVE

    def _settle(self) -> None:
        """Bêtes and sniff/knock penalties after the last trick (rules reference §2.1, §2.3)."""
        d = self.dealer
        to = self._bete_account()
        bete = self.bete or 0  # fixed when the cards were dealt
        for s in range(self.game.num_players):
            if self.status[s] != ACTIVE:
                continue
            won = self.tricks_won[s]
            if s == d and self.taken == TAKE_SNIFF1859:
                if won == 0:
                    self._move(s, to, 2 * bete, "double bête (sniffed and took no trick)")
            elif s == d and self.taken in (TAKE_SNIFF_MODERN, TAKE_KNOCK):
                word = "sniffed" if self.taken == TAKE_SNIFF_MODERN else "knocked"
                if won == 0:
                    self._move(s, to, 2 * bete, f"double bête ({word}, no trick)")
                elif won == 1:
                    self._move(s, to, bete, f"bête ({word}, only one trick)")
            elif won == 0:
                self._move(s, to, bete, "bête")
        self.outcome = "played"
        self.next_dealer = (d + 1) % self.game.num_players
        self._finish()

    # -- legal actions, one method per phase (PLAY first: the hot path) --------------------
    def _play_mask(self) -> int:
        """The cards the current player may play (phase PLAY)."""
        g = self.game
        r = g.rules
        hand = self.hands[self.cur]
        if not self.trick:
            if r.forced_leads:
                if self.tricks_done == 0 and self.n_active >= 3 and hand & self.trump_mask:
                    return hand & self.trump_mask
                if self.tricks_done == 1:
                    ace = g.ace_of[self.trump_index]
                    if hand >> ace & 1:
                        return 1 << ace
            return hand
        return legal_follows(hand, g.suit_masks[self.led_suit], self.trump_mask, self.win_card,
                             g.suit_masks[g.suit_of[self.win_card]], r.void_must_trump,
                             r.head_trick)

    def legal_actions(self) -> list[int]:
        ph = self.phase
        if ph == PLAY:
            return cards_in(self._play_mask())
        if ph == OVER:
            return []
        return self.LEGAL[ph](self)

    def _legal_declare(self) -> list[int]:
        W = self.game.WORD_BASE
        return [W + W_TAP, W + W_PASS]

    def _legal_exchange(self) -> list[int]:
        g = self.game
        hand = self.hands[self.cur]
        subs = []
        sub = hand
        while True:
            subs.append(g.EXCHANGE_BASE + sub)
            if not sub:
                break
            sub = (sub - 1) & hand
        subs.reverse()
        return subs

    def _legal_shove(self) -> list[int]:
        g = self.game
        W = g.WORD_BASE
        nxt = (self.cur + 1) % g.num_players
        return [W + W_SHOVE, W + W_DEAL] if not self.anted[nxt] else [W + W_DEAL]

    def _legal_choice(self) -> list[int]:
        g = self.game
        W = g.WORD_BASE
        r = g.rules
        if r.knocking and r.sniffing != "none" and not self.looked:
            return [W + W_KNOCK, W + W_LOOK]
        out = []
        if r.sniffing != "none":
            out.append(W + W_SNIFF)
        if r.knocking and not self.looked:
            out.append(W + W_KNOCK)
        out.append(W + W_TURN)
        return out

    def _legal_discard(self) -> list[int]:
        g = self.game
        return [g.DISCARD_BASE + c for c in cards_in(self.hands[self.cur])]

    def _legal_drop(self) -> list[int]:
        W = self.game.WORD_BASE
        return [W + W_DROP, W + W_STAY]

    def _legal_rob(self) -> list[int]:
        g = self.game
        W = g.WORD_BASE
        if self.hands[self.cur] >> g.seven_of[self.trump_index] & 1:
            return [W + W_ROB, W + W_NOROB]
        return [W + W_NOROB]

    def _is_legal(self, action: int) -> bool:
        g = self.game
        ph = self.phase
        if ph == PLAY:
            return 0 <= action < g.size and bool(self._play_mask() >> action & 1)
        if ph == EXCHANGE:
            mask = action - g.EXCHANGE_BASE
            return mask >= 0 and mask & ~self.hands[self.cur] == 0 \
                and mask.bit_count() <= g.rules.tricks
        if ph == DISCARD:
            c = action - g.DISCARD_BASE
            return 0 <= c < g.size and bool(self.hands[self.cur] >> c & 1)
        return action in self.legal_actions()

    # -- apply, one method per phase ----------------------------------------------------------
    def _apply(self, action: int) -> None:
        if self.phase == PLAY:  # the hot path: no dispatch
            if action < self.game.size and self._play_mask() >> action & 1:
                self.log.append((self.cur, action))
                self._play(action)
                return
        elif self._is_legal(action):
            self.log.append((self.cur, action))
            self.APPLY[self.phase](self, action)
            return
        rule, message = self._refusal(action)
        raise IllegalAction(rule, message)

    def _play(self, card: int) -> None:
        g = self.game
        seat = self.cur
        bit = 1 << card
        self.hands[seat] ^= bit
        self.played |= bit
        trick = self.trick
        trick.append((seat, card))
        if len(trick) == 1:
            self.led_suit = g.suit_of[card]
            self.win_card = card
            self.win_seat = seat
        elif g.beaters[self.trump_mask][self.win_card] >> card & 1:  # tricks.beats, as a table
            self.win_card = card
            self.win_seat = seat
        if len(trick) < self.n_active:
            self.cur = self._next_active(seat)
            return
        winner = self.win_seat
        self.tricks_won[winner] += 1
        self.tricks_done += 1
        self.last_trick = (tuple(trick), winner)
        self.trick = []
        self.led_suit = -1
        self.win_card = -1
        self.win_seat = -1
        self._move(POT, winner, self.trick_value or 0, f"trick {self.tricks_done}")
        if self.tricks_done == g.rules.tricks:
            self._settle()
        else:
            self.cur = winner

    def _exchange(self, action: int) -> None:
        mask = action - self.game.EXCHANGE_BASE
        seat = self.cur
        k = mask.bit_count()
        self.hands[seat] &= ~mask
        self.discards |= mask
        for _ in range(k):
            self.hands[seat] |= 1 << self.talon[self.talon_pos]
            self.talon_pos += 1
        self.order_pos += 1
        self._next_exchanger()

    def _discard(self, action: int) -> None:
        card = action - self.game.DISCARD_BASE
        seat = self.cur
        self.hands[seat] &= ~(1 << card)
        self.discards |= 1 << card
        if self.taken == TAKE_SNIFF1859:
            self.phase = DROP
        else:
            self.status[seat] = ACTIVE  # a modern sniffer or a knocker is bound to play
            self._start_declare()

    def _shove_or_deal(self, action: int) -> None:
        if action - self.game.WORD_BASE == W_DEAL:
            self._after_shoving()
            return
        nxt = (self.cur + 1) % self.game.num_players
        self.dealer = nxt
        self.cur = nxt
        self._ante(nxt, "ante (Schieben)")

    def _choose(self, action: int) -> None:
        g = self.game
        w = action - g.WORD_BASE
        if w == W_TURN:
            self._turn()
            self._start_declare()
            return
        if w == W_LOOK:
            self.looked = True
            return
        if w == W_KNOCK:
            self.taken = TAKE_KNOCK
        else:
            self.taken = TAKE_SNIFF1859 if g.rules.sniffing == "1859" else TAKE_SNIFF_MODERN
        self.up_state = UP_TAKEN
        self.trump_card = self.upcard
        self._set_trump(g.suit_of[self.upcard])
        self.hands[self.cur] |= 1 << self.upcard
        self.phase = DISCARD

    def _drop_or_stay(self, action: int) -> None:
        seat = self.cur
        if action - self.game.WORD_BASE == W_DROP:
            self.status[seat] = DROPPED
            self.declared[seat] = "drop"
            self._fold(seat)
            self._move(seat, self._bete_account(), self.game.rules.stake, "drop (sniffed and dropped out)")
        else:
            self.status[seat] = ACTIVE
            self.declared[seat] = "stay"
        self._start_declare()

    def _declare(self, action: int) -> None:
        seat = self.cur
        if action - self.game.WORD_BASE == W_TAP:
            self.status[seat] = ACTIVE
            self.declared[seat] = "tap"
        else:
            self.status[seat] = PASSED
            self.declared[seat] = "pass"
            self._fold(seat)
        self.order_pos += 1
        self._next_declarer()

    def _rob(self, action: int) -> None:
        g = self.game
        seat = self.cur
        if action - g.WORD_BASE == W_ROB:
            seven = g.seven_of[self.trump_index]
            self.hands[seat] = (self.hands[seat] & ~(1 << seven)) | (1 << self.upcard)
            self.upcard = seven
            self.robbed = True
            self._start_play()
        else:
            self.order_pos += 1
            self._next_robber()

    LEGAL: ClassVar[dict[int, Callable[[TippenState], list[int]]]] = {
        SHOVE: _legal_shove, CHOICE: _legal_choice, DISCARD: _legal_discard, DROP: _legal_drop,
        DECLARE: _legal_declare, EXCHANGE: _legal_exchange, ROB: _legal_rob,
    }
    APPLY: ClassVar[dict[int, Callable[[TippenState, int], None]]] = {
        SHOVE: _shove_or_deal, CHOICE: _choose, DISCARD: _discard, DROP: _drop_or_stay,
        DECLARE: _declare, EXCHANGE: _exchange, ROB: _rob, PLAY: _play,
    }

    # -- refusals -----------------------------------------------------------------------------
    def _refusal(self, action: int) -> tuple[str, str]:
        g = self.game
        r = g.rules
        S = g.size
        ph = self.phase
        who = f"seat {self.cur}"
        try:
            text = g.action_to_string(action)
        except IllegalAction:
            return "notation", f"{action} is not a Tippen action id"
        is_word = g.WORD_BASE <= action < g.WORD_BASE + len(WORDS)
        word = WORDS[action - g.WORD_BASE] if is_word else None
        if word in ("tap", "pass") and self.compulsory and ph != DECLARE:
            return ("compulsory hand: passing not allowed",
                    "no bête stands: everyone must play this hand (Tipp-Zwang); there is no "
                    "tap or pass")
        if ph == PLAY and 0 <= action < S:
            return self._play_refusal(action)
        if ph == EXCHANGE and action >= g.EXCHANGE_BASE:
            mask = action - g.EXCHANGE_BASE
            if mask & ~self.hands[self.cur]:
                return "card not in hand", f"{who} does not hold every card of {text}"
            return "exchange", f"at most {r.tricks} cards may be exchanged"
        if ph == DISCARD and S <= action < 2 * S:
            return "card not in hand", f"the dealer does not hold {text[8:]}"
        if ph == SHOVE and word == "shove":
            return ("Schieben: at most one circuit",
                    f"seat {(self.cur + 1) % g.num_players} has already anted this deal; "
                    f"{who} must deal")
        if ph == ROB and word == "rob":
            return ("robbing: only the holder of the trump 7",
                    f"{who} does not hold the trump 7 and cannot rob the upcard")
        if ph == CHOICE and word == "sniff" and g.rules.sniffing != "none":
            return ("sniffing: look at your hand first",
                    "with knocking agreed the dealer first knocks (blind) or looks at his "
                    "hand; only then may he sniff")
        if ph == CHOICE and word == "knock" and g.rules.knocking:
            return ("knocking: only before looking at the hand",
                    "the dealer has looked at his hand and can no longer knock")
        if ph == CHOICE and word in ("sniff", "knock"):
            return (f"{'sniffing' if word == 'sniff' else 'knocking'} not agreed",
                    f"this rule set does not allow the dealer to {word}")
        return ("order of the deal",
                f"{text!r} is not possible now: {PHASE_HINT[ph]}"
                + (f" (seat {self.cur} to act)" if ph != OVER else ""))

    def _play_refusal(self, card: int) -> tuple[str, str]:
        g = self.game
        hand = self.hands[self.cur]
        name = g.card_names[card]
        if not hand >> card & 1:
            return "card not in hand", f"seat {self.cur} does not hold {name}"
        if not self.trick:
            if self.tricks_done == 0:
                return ("forced trump lead (1859)",
                        f"with {self.n_active} active players the first lead must be a trump")
            return ("forced trump lead (1859)",
                    "the winner of trick 1 holding the trump Ace (Daus) must lead it")
        led = g.suit_masks[self.led_suit]
        tm = self.trump_mask
        if hand & led:
            if not (1 << card) & led:
                return "follow suit (Farbzwang)", f"{name} does not follow the led suit"
            return "head the trick", f"{name} does not beat the winning card; a higher card must be played"
        if hand & tm and not (1 << card) & tm:
            return "must trump", f"void in the led suit: a trump must be played, not {name}"
        return "head the trick", f"{name} does not overtrump; a higher trump must be played"

    # -- results ------------------------------------------------------------------------------
    def result(self) -> DealResult:
        if self.phase != OVER:
            raise ValueError("the deal is not over yet")
        n = self.game.num_players
        active = [s for s in range(n) if self.status[s] == ACTIVE]
        summary: dict[str, Any] = {
            "tricks": {s: self.tricks_won[s] for s in active},
            "active": active,
            "outcome": self.outcome,
        }
        # What a reader needs to explain the deal (stammtisch.explain): each payment with a
        # stable code, the pot's figures, every trick and why each bête was paid.
        codes = {"ante": "ante", "ante (Schieben)": "ante-schieben",
                 "ante (Hupf und Sprung: skipped seat)": "ante-jump",
                 "max bête: rest to the reserve": "reserve-out",
                 "bête from the reserve into play": "reserve-in",
                 "lone tapper takes the pot": "lone-tapper",
                 "drop (sniffed and dropped out)": "drop", "bête": "bete",
                 "double bête (sniffed and took no trick)": "double-bete-sniff",
                 "double bête (sniffed, no trick)": "double-bete",
                 "double bête (knocked, no trick)": "double-bete",
                 "bête (sniffed, only one trick)": "bete-one-trick",
                 "bête (knocked, only one trick)": "bete-one-trick"}
        payments: list[dict[str, Any]] = []
        betes: list[dict[str, Any]] = []
        for tr in self.transfers:
            entry: dict[str, Any] = tr.to_json()
            if tr.reason.startswith("trick "):
                entry["code"] = "trick"
                entry["trick"] = int(tr.reason[6:])
            else:
                entry["code"] = codes.get(tr.reason, "other")
            payments.append(entry)
            if entry["code"] in ("bete", "double-bete-sniff", "double-bete", "bete-one-trick") \
                    and type(tr.source) is int:
                why = "no-trick" if self.tricks_won[tr.source] == 0 else "one-trick"
                taken = {TAKE_SNIFF1859: "sniffed", TAKE_SNIFF_MODERN: "sniffed",
                         TAKE_KNOCK: "knocked"}.get(self.taken)
                betes.append({"seat": tr.source, "amount": tr.amount, "why": why,
                              "taken": taken if entry["code"] != "bete" else None,
                              "code": entry["code"]})
        names = self.game.card_names
        k = self.n_active
        plays = self.log[len(self.log) - self.tricks_done * k:] if self.tricks_done else []
        # each trick's winner leads the next one; the last winner is kept in last_trick
        winners = [plays[i][0] for i in range(k, len(plays), k)] if plays else []
        if plays and self.last_trick:
            winners.append(self.last_trick[1])
        tricks_log = [{"cards": [[s, names[c]] for s, c in plays[i * k:i * k + k]], "winner": w}
                      for i, w in enumerate(winners)]
        summary.update({
            "payments": payments,
            "pot_before": self.table.pot + self.table.reserve,
            "pot_in_play": self.pot_in_play,
            "trick_value": self.trick_value,
            "bete": self.bete,
            "pot_after": self.pot + self.reserve,
            "reserve_after": self.reserve,
            "betes": betes,
            "tricks_log": tricks_log,
        })
        return DealResult(list(self.transfers), self.next_dealer, self.dealer, summary)

    def clone(self) -> TippenState:
        c = TippenState.__new__(TippenState)
        for name in TippenState.__slots__:
            setattr(c, name, getattr(self, name))
        c.hands = self.hands[:]
        c.status = self.status[:]
        c.declared = self.declared[:]
        c.trick = self.trick[:]
        c.tricks_won = self.tricks_won[:]
        c.transfers = self.transfers[:]
        c.anted = self.anted[:]
        c.log = self.log[:]
        c.folded = self.folded[:]
        return c

    def resample(self, seat: int | None, rng: random.Random) -> TippenState:
        """A full state consistent with what ``seat`` knows, random in the rest (``sampling``)."""
        from .sampling import resample_tippen

        return resample_tippen(self, self._viewer(seat), rng)

    # -- what a seat may know -----------------------------------------------------------------
    def card_sets(self) -> dict[str, int]:
        """Where every card is (masks; for tests and tools, not for bots)."""
        up = 1 << self.upcard if self.up_state in (UP_HIDDEN, UP_FACE) else 0
        talon = 0
        for c in self.talon[self.talon_pos:]:
            talon |= 1 << c
        undealt = 0
        if self.phase == SHOVE or (self.outcome == "jump"):
            for c in self.deck:
                undealt |= 1 << c
        hands = 0
        for h in self.hands:
            hands |= h
        return {"hands": hands, "talon": talon, "upcard": up, "played": self.played,
                "discards": self.discards, "dead": self.dead, "undealt": undealt}

    def _blind(self, seat: int | None) -> bool:
        """A dealer who may knock decides before looking at his hand (rules reference §6 T7)."""
        return (seat == self.dealer and self.phase == CHOICE and self.game.rules.knocking
                and not self.looked)

    def _trump_card_public(self) -> bool:
        """The card that fixed trumps lies face up (turned, 1821's dealer's last card, or
        sniffed in 1859); a modern sniffer or a knocker takes it unseen."""
        return self.taken in (TAKE_NONE, TAKE_SNIFF1859) and self.up_state != UP_HIDDEN

    def known_mask(self, seat: int | None) -> int:
        """The cards whose place ``seat`` may know (rules reference §2): everyone the cards played,
        the face-up upcard, a public trump card until the dealer who holds it may have laid
        it away face down (a 1859 sniffer's discard, a ``dealer-last`` dealer's exchange: its
        identity stays public, its place does not), the Hupf und Sprung cards; a seat also its
        own hand (not while deciding blind whether to knock), the cards it folded, discarded
        or exchanged away; the dealer the trump card he took. Passers' cards, the talon and
        others' discards stay hidden, even after the deal."""
        g = self.game
        known = self.played
        if self.up_state == UP_FACE:
            known |= 1 << self.upcard
        d = self.dealer
        # the trump card went into the dealer's hand (sniffed in 1859, or his own last card);
        # an exchange of no card lays nothing away
        in_dealers_hand = self.taken == TAKE_SNIFF1859 or g.rules.trump_card == "dealer-last"
        laid_away = in_dealers_hand and any(
            s == d and (g.DISCARD_BASE <= a < g.WORD_BASE or a > g.EXCHANGE_BASE) for s, a in self.log)
        if self.trump_card >= 0 and ((self._trump_card_public() and not laid_away)
                                     or (seat is not None and seat == d)):
            known |= 1 << self.trump_card
        for c in self.jump_cards or ():
            known |= 1 << c
        if seat is None:
            return known
        if not self._blind(seat):
            known |= self.hands[seat]
        known |= self.folded[seat]
        for s, a in self.log:
            if s == seat:
                if g.DISCARD_BASE <= a < g.WORD_BASE:
                    known |= 1 << (a - g.DISCARD_BASE)
                elif a >= g.EXCHANGE_BASE:
                    known |= a - g.EXCHANGE_BASE
        return known

    def _own_view(self, seat: int | None) -> tuple[list[str], list[str], str | None]:
        """The view's keys that depend on the seat: its hand (none while it decides blind),
        the cards it folded when it passed (he knows them, nobody else does), and the trump
        card when it is public or the seat is the dealer. ``_add_view`` and
        ``_redo_seat_view`` both take them from here."""
        names = self.game.card_names
        hand = ([] if seat is None or self._blind(seat)
                else [names[c] for c in cards_in(self.hands[seat])])
        folded = ([names[c] for c in cards_in(self.folded[seat])]
                  if seat is not None and self.folded[seat] else [])
        trump_card = None
        if self.trump_card >= 0 and (self._trump_card_public() or seat == self.dealer):
            trump_card = names[self.trump_card]
        return hand, folded, trump_card

    def _redo_seat_view(self, view: dict[str, Any], seat: int | None) -> None:
        view["hand"], view["folded"], view["trump_card"] = self._own_view(seat)

    def _add_view(self, view: dict[str, Any], seat: int | None) -> None:
        g = self.game
        names = g.card_names
        n = g.num_players
        trump_known = self.trump_index >= 0 and (self.taken != TAKE_NONE or self.up_state != UP_HIDDEN)
        # key by key, not view.update({...}): no second dict of 25 keys made and merged at
        # every view (the web table builds every seat's view at every event)
        view["hand"], view["folded"], trump_card = self._own_view(seat)
        view["hand_sizes"] = [h.bit_count() for h in self.hands]
        view["trump"] = SUITS[self.trump_index] if trump_known else None
        view["upcard"] = names[self.upcard] if self.up_state == UP_FACE else None
        view["trump_card"] = trump_card
        view["trick"] = [[s, names[c]] for s, c in self.trick]
        view["last_trick"] = ({"cards": [[s, names[c]] for s, c in self.last_trick[0]],
                               "winner": self.last_trick[1]} if self.last_trick else None)
        view["tricks_won"] = list(self.tricks_won)
        view["pot"] = self.pot
        view["reserve"] = self.reserve
        view["active"] = [s for s in range(n) if self.status[s] == ACTIVE]
        view["declared"] = list(self.declared)
        view["compulsory"] = self.compulsory
        view["pot_in_play"] = self.pot_in_play
        view["trick_value"] = self.trick_value
        view["bete"] = self.bete
        view["talon_size"] = len(self.talon) - self.talon_pos
        view["anted"] = [s for s in range(n) if self.anted[s]]
        view["taken_by_dealer"] = (None, "sniff", "sniff", "knock")[self.taken]
        # only a table that plays with robbing can have a rob in its log
        view["robbed"] = g.rules.robbing and any(a == g.WORD_BASE + W_ROB for _, a in self.log)
        view["outcome"] = self.outcome
        view["jump_cards"] = [names[c] for c in self.jump_cards] if self.jump_cards else None
        if self.phase == OVER:
            view["next_dealer"] = self.next_dealer

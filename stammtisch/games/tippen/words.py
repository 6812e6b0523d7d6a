"""The phases before the play (rules reference §2.2): shove or deal, the Hupf und Sprung
check and the deal, the dealer's choice (sniff, knock, look, turn), discard, drop or stay,
tap or pass, exchange, rob."""

from __future__ import annotations

from ...cards import cards_in
from ..base import POT, Payment
from .core import TippenCore
from .phases import (
    ACTIVE,
    CHOICE,
    DECLARE,
    DISCARD,
    DROP,
    DROPPED,
    EXCHANGE,
    PASSED,
    ROB,
    TAKE_KNOCK,
    TAKE_SNIFF1859,
    TAKE_SNIFF_MODERN,
    UNDECIDED,
    UP_FACE,
    UP_HIDDEN,
    UP_TAKEN,
    W_DEAL,
    W_DROP,
    W_KNOCK,
    W_LOOK,
    W_NOROB,
    W_PASS,
    W_ROB,
    W_SHOVE,
    W_SNIFF,
    W_STAY,
    W_TAP,
    W_TURN,
)


class WordPhases(TippenCore):
    """The word phases of ``TippenState``: their transitions, legal actions and moves."""

    __slots__ = ()

    def _after_shoving(self) -> None:
        g = self.game
        r = g
        n = g.num_players
        d = self.dealer
        deck = self.deck
        if r.hupf_und_sprung != "none" and g.ace_or_seven >> deck[-1] & 1:
            self.jump_cards = [deck[-1]]
            step = 1
            if r.hupf_und_sprung == "double" and g.ace_or_seven >> deck[0] & 1:
                self.jump_cards.append(deck[0])
                step = 2
                self._ante((d + 1) % n, "ante (Hupf und Sprung: skipped seat)", Payment.ANTE_JUMP)
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

    def _next_declarer(self) -> None:
        if not self._seek_turn(UNDECIDED):
            self._end_declare()

    def _end_declare(self) -> None:
        g = self.game
        r = g
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
            self._move(POT, active[0], self.pot_in_play or 0, "lone tapper takes the pot",
                       Payment.LONE_TAPPER)
            self.next_dealer = (d + 1) % n
            self._finish()
            return
        if r.exchange:
            self.phase = EXCHANGE
            self.order_pos = 0
            self._next_exchanger()
        else:
            self._start_rob()

    def _next_exchanger(self) -> None:
        if not self._seek_turn(ACTIVE):
            self._start_rob()

    def _rob_possible(self) -> bool:
        """Robbing can happen this deal (only public facts: agreed, the upcard lies face up
        and is not itself the trump 7)."""
        g = self.game
        return (g.robbing and self.up_state == UP_FACE and not self.robbed
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

    # -- legal actions of the word phases --------------------------------------------------

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
        r = g
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

    # -- applying them --------------------------------------------------------------------

    def _exchange(self, action: int) -> None:
        mask = action - self.game.EXCHANGE_BASE
        seat = self.cur
        k = mask.bit_count()
        self.hands[seat] = self.hands[seat] & ~mask
        self.discards |= mask
        for _ in range(k):
            self.hands[seat] = self.hands[seat] | (1 << self.talon[self.talon_pos])
            self.talon_pos += 1
        self.order_pos += 1
        self._next_exchanger()

    def _discard(self, action: int) -> None:
        card = action - self.game.DISCARD_BASE
        seat = self.cur
        self.hands[seat] = self.hands[seat] & (~(1 << card))
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
        self._ante(nxt, "ante (Schieben)", Payment.ANTE_SCHIEBEN)

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
            self.taken = TAKE_SNIFF1859 if g.sniffing == "1859" else TAKE_SNIFF_MODERN
        self.up_state = UP_TAKEN
        self.trump_card = self.upcard
        self._set_trump(g.suit_of[self.upcard])
        self.hands[self.cur] = self.hands[self.cur] | (1 << self.upcard)
        self.phase = DISCARD

    def _drop_or_stay(self, action: int) -> None:
        seat = self.cur
        if action - self.game.WORD_BASE == W_DROP:
            self.status[seat] = DROPPED
            self.declared[seat] = "drop"
            self._fold(seat)
            self._move(seat, self._bete_account(), self.game.stake, "drop (sniffed and dropped out)",
                       Payment.DROP)
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

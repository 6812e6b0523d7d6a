"""The historic Tapp flow (Württemberg Tarock, Classic Tapp; docs/rules-reference.md §3.2,
§3.3): an auction with hold, then the trump of a suit Solo, the Frage discard and the Tout
announcement.

Auction: from forehand each player passes or bids higher than the standing bid; an earlier
player still in the auction, overcalled, may ``hold`` (take the same level: the earlier
seat wins ties) or pass; the overcaller may then bid higher or pass. All pass: the hand is
thrown in.
"""

from __future__ import annotations

from ...cards import SUITS
from ..base import IllegalAction
from .contracts import HISTORIC_BIDS, Level
from .phases import AUCTION, DISCARD, OVER, TRUMP
from .state import TappState


class AuctionState(TappState):
    __slots__ = ()

    # ------------------------------------------------------------------ the phases
    def _legal_phase(self) -> list[int]:
        phase = self.phase
        if phase == AUCTION:
            return self._legal_auction()
        if phase == TRUMP:
            return self._legal_trump()
        if phase == DISCARD:
            return self._legal_discard()
        return self._legal_tout()

    def _apply_phase(self, action: int) -> None:
        phase = self.phase
        if phase == AUCTION:
            self._apply_auction(action)
        elif phase == TRUMP:
            self._apply_trump(action)
        elif phase == DISCARD:
            self._apply_discard(action)
        else:
            self._apply_tout(action)

    # ------------------------------------------------------------------ legal actions
    def _legal_auction(self) -> list[int]:
        g = self.game
        if self.a_pending:
            return [g.A_PASS, g.A_HOLD]
        return [g.A_PASS] + [g.A_BID + lv - 1 for lv in range(self.a_level + 1, g.max_level + 1)]

    def _legal_trump(self) -> list[int]:
        a = self.game.A_TRUMP
        return [a + SUITS.index(s) for s in SUITS if s != "H"]

    def _legal_tout(self) -> list[int]:
        return [self.game.A_TOUT, self.game.A_NOTOUT]

    # ------------------------------------------------------------------ apply
    def _apply_auction(self, a: int) -> None:
        g = self.game
        s = self.cur
        order = [(self.fh + i) % self.n for i in range(self.n)]
        if self.a_pending:
            # the earlier, overcalled bidder: hold or pass
            if a == g.A_HOLD:
                self.a_pending = False
                self.log.append((s, a))
                self.cur = order[self.a_pos]  # the overcaller must go higher or pass
                return
            if a == g.A_PASS:
                self.a_pending = False
                self.a_holder = order[self.a_pos]
                self.log.append((s, a))
                self._auction_next(order)
                return
            if g.A_BID <= a < g.A_BID + 3:
                raise IllegalAction("hold or pass",
                                    "an overcalled earlier bidder may only hold or pass")
            raise self._illegal_phase(a)
        if a == g.A_PASS:
            self.log.append((s, a))
            self._auction_next(order)
            return
        if a == g.A_HOLD:
            raise IllegalAction("hold only when overcalled",
                                "only an earlier bidder who has been overcalled may hold")
        if g.A_BID <= a < g.A_BID + 3:
            level = a - g.A_BID + 1
            if level > g.max_level:
                raise IllegalAction("bid not in this rule set",
                                    f"{g.rules.id} has no bid {HISTORIC_BIDS[level - 1]}")
            if level <= self.a_level:
                raise IllegalAction("bid too low",
                                    f"bid:{HISTORIC_BIDS[level - 1]} is not higher than the "
                                    f"standing {HISTORIC_BIDS[self.a_level - 1]}")
            self.a_level = level
            self.log.append((s, a))
            if self.a_holder < 0:
                self.a_holder = s
                self._auction_next(order)
            else:
                self.a_pending = True
                self.cur = self.a_holder
            return
        raise self._illegal_phase(a)

    def _auction_next(self, order: list[int]) -> None:
        self.a_pos += 1
        if self.a_pos < self.n:
            self.cur = order[self.a_pos]
            return
        if self.a_holder < 0:  # all pass: thrown in
            self.phase = OVER
            self.cur = -1
            return
        rules = self.game.rules
        d = self.declarer = self.a_holder
        self.level = self.a_level
        self.cur = d
        if rules.solo_names_trump and self.level == Level.SOLO:
            self.trump_mask = 0
            self.trump_suit = None
            self.phase = TRUMP
            return
        # Frage and Herzsolo play hearts as trumps (always trumps in Württemberg Tarock)
        self.trump_suit = "H"
        self.trump_mask = self.game.hearts
        if self.level == Level.FRAGE:
            self._take_tapp()
        else:
            self._before_play()

    def _apply_trump(self, a: int) -> None:
        g = self.game
        if g.A_TRUMP <= a < g.A_TRUMP + 4:
            suit = SUITS[a - g.A_TRUMP]
            if suit == "H":
                raise IllegalAction("solo trump cannot be hearts",
                                    "a suit Solo names clubs, spades or diamonds; "
                                    "hearts is Herzsolo")
            self.trump_suit = suit
            self.trump_mask = g.trump_mask_of_suit[suit]
            self.log.append((self.cur, a))
            self._before_play()
            return
        raise self._illegal_phase(a)

    def contract_string(self) -> str | None:
        if self.level == 0:
            return None
        name = HISTORIC_BIDS[self.level - 1]
        if self.level == Level.SOLO and self.game.rules.solo_names_trump and self.trump_suit:
            name = f"solo:{self.trump_suit}"
        return name + ("+tout" if self.tout else "")

"""The Modern Tapp flow (docs/rules-reference.md §3.4): two rounds of declarations, then the
Rufer call.

Round 1 from forehand: each says ``play`` or ``weg``. Round 2: those who said play, in seat
order, each names a contract higher than the standing one or passes; the highest wins, ties
to the earlier seat; the last who said play must name one when nobody before him has.
Nobody plays: Ramsch. A Rufer declarer calls a card he does not hold; its holder hands it
over and gets back any card of the declarer's choice (the called card included: rules
reference §3.4; the Norwegian Tapp rules text: "et kort etter eget valg"). A called card in
the tapp: nothing is exchanged, or (``rufer_in_tapp=swap``) the declarer swaps it with the
tapp.
"""

from __future__ import annotations

from ..base import IllegalAction
from .contracts import K_RAMSCH, MODERN_CONTRACTS, N_MODERN
from .phases import CALL, CONTRACT, DECLARE, DISCARD, GIVE
from .state import TappState


class RoundsState(TappState):
    __slots__ = ()

    # ------------------------------------------------------------------ the phases
    def _legal_phase(self) -> list[int]:
        phase = self.phase
        if phase == DECLARE:
            return self._legal_declare()
        if phase == CONTRACT:
            return self._legal_contract()
        if phase == DISCARD:
            return self._legal_discard()
        if phase == CALL:
            return self._legal_call()
        return self._legal_give()

    def _apply_phase(self, action: int) -> None:
        phase = self.phase
        if phase == DECLARE:
            self._apply_declare(action)
        elif phase == CONTRACT:
            self._apply_contract(action)
        elif phase == DISCARD:
            self._apply_discard(action)
        elif phase == CALL:
            self._apply_call(action)
        else:
            self._apply_give(action)

    # ------------------------------------------------------------------ legal actions
    def _legal_declare(self) -> list[int]:
        return list(self.game.r1_actions)

    def _legal_contract(self) -> list[int]:
        rank = MODERN_CONTRACTS[self.r2_best].rank if self.r2_best >= 0 else 0
        with_pass, without = self.game.contracts_above[rank]
        if self.r2_best < 0 and self.r2_pos == len(self.r1) - 1:
            return without[:]
        return with_pass[:]

    def _legal_call(self) -> list[int]:
        g = self.game
        return [g.N + c for c in g.mask_list(g.full & ~self.hands[self.declarer])]

    def _legal_give(self) -> list[int]:
        g = self.game
        return [2 * g.N + c for c in g.mask_list(self.hands[self.declarer])]

    # ------------------------------------------------------------------ apply
    def _apply_declare(self, action: int) -> None:
        g = self.game
        if action != g.A_PLAY and action != g.A_WEG:
            raise self._illegal_phase(action)
        s = self.cur
        if action == g.A_PLAY:
            self.r1.append(s)
        self.log.append((s, action))
        s += 1
        if s == self.n:
            s = 0
        self.cur = s
        if s == self.fh:
            if not self.r1:
                self._start_ramsch()
            else:
                self.phase = CONTRACT
                self.r2_pos = 0
                self.cur = self.r1[0]

    def _apply_contract(self, action: int) -> None:
        g = self.game
        s = self.cur
        best = self.r2_best
        ci = action - g.A_CONTRACT
        if 0 <= ci < N_MODERN:
            if best >= 0 and MODERN_CONTRACTS[ci].rank <= MODERN_CONTRACTS[best].rank:
                raise IllegalAction("bid too low",
                                    f"{MODERN_CONTRACTS[ci].name} does not outrank the standing "
                                    f"{MODERN_CONTRACTS[best].name}")
            self.r2_best = ci
            self.r2_seat = s
        elif action == g.A_PASS:
            if best < 0 and self.r2_pos == len(self.r1) - 1:
                raise IllegalAction("must name a contract",
                                    f"seat {s} said play and nobody has named a contract; "
                                    "he must name one")
        else:
            raise self._illegal_phase(action)
        self.log.append((s, action))
        pos = self.r2_pos = self.r2_pos + 1
        if pos == len(self.r1):
            self._start_contract(self.r2_seat, self.r2_best)
        else:
            self.cur = self.r1[pos]

    def _start_contract(self, seat: int, ci: int) -> None:
        g = self.game
        c = MODERN_CONTRACTS[ci]
        self.declarer = seat
        self.contract = ci
        self.kind = int(c.kind)
        self.trump_suit = c.trump
        self.trump_mask = g.trump_mask_of_suit[c.trump] if c.trump else 0
        self.cur = seat
        if c.takes_tapp:
            self._take_tapp()
        elif c.calls_card:
            self.phase = CALL
        else:
            self._start_play()

    def _apply_call(self, a: int) -> None:
        g = self.game
        N = g.N
        s = self.cur
        if not N <= a < 2 * N:
            raise self._illegal_phase(a)
        card = a - N
        if (self.hands[s] >> card) & 1:
            raise IllegalAction("cannot call a card you hold",
                                f"the declarer holds {g.pack.cards[card]} himself")
        self.called = card
        self.log.append((s, a))
        bit = 1 << card
        if self.tapp & bit:
            self.called_in_tapp = True
            if g.rules.rufer_in_tapp == "swap":
                self.tapp &= ~bit
                self.hands[s] = self.hands[s] | bit
                self.phase = GIVE
            else:
                self._start_play()
            return
        for h in range(self.n):
            if self.hands[h] & bit:
                self.holder = h
                self.hands[h] = self.hands[h] & ~bit
                self.hands[s] = self.hands[s] | bit
                break
        self.phase = GIVE

    def _apply_give(self, a: int) -> None:
        g = self.game
        N = g.N
        s = self.cur
        if not 2 * N <= a < 3 * N:
            raise self._illegal_phase(a)
        card = a - 2 * N
        if not (self.hands[s] >> card) & 1:
            raise IllegalAction("give a card you hold",
                                f"the declarer does not hold {g.pack.cards[card]}")
        bit = 1 << card
        self.hands[s] = self.hands[s] & ~bit
        if self.called_in_tapp:
            self.tapp |= bit
        else:
            self.hands[self.holder] = self.hands[self.holder] | bit
        self.given = card
        self.log.append((s, a))
        self._start_play()

    def contract_string(self) -> str | None:
        if self.kind == K_RAMSCH:
            return "ramsch"
        return MODERN_CONTRACTS[self.contract].name if self.contract >= 0 else None

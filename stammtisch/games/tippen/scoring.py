"""The settlement of a Tippen deal (rules reference §2.1, §2.3): bêtes and the sniff or
knock penalties after the last trick, and the result a reader of the deal needs."""

from __future__ import annotations

from typing import Any

from ..base import DealResult, Payment
from .phases import ACTIVE, OVER, TAKE_KNOCK, TAKE_SNIFF1859, TAKE_SNIFF_MODERN
from .words import WordPhases

#: the payments a player makes for too few tricks
BETES = frozenset({Payment.BETE, Payment.DOUBLE_BETE_SNIFF, Payment.DOUBLE_BETE, Payment.BETE_ONE_TRICK})


class Settlement(WordPhases):
    """The settlement and result of ``TippenState``."""

    __slots__ = ()

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
                    self._move(s, to, 2 * bete, "double bête (sniffed and took no trick)",
                               Payment.DOUBLE_BETE_SNIFF)
            elif s == d and self.taken in (TAKE_SNIFF_MODERN, TAKE_KNOCK):
                word = "sniffed" if self.taken == TAKE_SNIFF_MODERN else "knocked"
                if won == 0:
                    self._move(s, to, 2 * bete, f"double bête ({word}, no trick)", Payment.DOUBLE_BETE)
                elif won == 1:
                    self._move(s, to, bete, f"bête ({word}, only one trick)", Payment.BETE_ONE_TRICK)
            elif won == 0:
                self._move(s, to, bete, "bête", Payment.BETE)
        self.outcome = "played"
        self.next_dealer = (d + 1) % self.game.num_players
        self._finish()

    def result(self) -> DealResult:
        if self.phase != OVER:
            raise ValueError("the deal is not over yet")
        return DealResult(list(self.transfers), self.next_dealer, self.dealer, explain=self._summary)

    def _summary(self) -> dict[str, Any]:
        """``result().summary``, made when first read."""
        n = self.game.num_players
        active = [s for s in range(n) if self.status[s] == ACTIVE]
        summary: dict[str, Any] = {
            "tricks": {s: self.tricks_won[s] for s in active},
            "active": active,
            "outcome": self.outcome,
        }
        # What a reader needs to explain the deal (stammtisch.explain): each payment with its
        # code, the pot's figures, every trick and why each bête was paid.
        payments: list[dict[str, Any]] = []
        betes: list[dict[str, Any]] = []
        for tr in self.transfers:
            entry: dict[str, Any] = tr.to_json()
            entry["code"] = tr.code.value
            if tr.code is Payment.TRICK:
                entry["trick"] = tr.trick
            payments.append(entry)
            if tr.code in BETES and type(tr.source) is int:
                why = "no-trick" if self.tricks_won[tr.source] == 0 else "one-trick"
                taken = {TAKE_SNIFF1859: "sniffed", TAKE_SNIFF_MODERN: "sniffed",
                         TAKE_KNOCK: "knocked"}.get(self.taken)
                betes.append({"seat": tr.source, "amount": tr.amount, "why": why,
                              "taken": taken if tr.code is not Payment.BETE else None,
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
        return summary

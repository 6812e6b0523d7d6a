"""One Tapp deal in progress: what every Tapp flow shares.

The deal runs through phases (``Phase``). How a contract is chosen differs between the
historic auction and the Modern rounds; each is a small subclass (``auction.AuctionState``,
``rounds.RoundsState``) that adds its phases. Everything after the contract is here: the
Frage discard, the play (the hot path: int masks and per-game tables only), the early end,
the settlement (pure functions in ``scoring``), the result, the view and what a seat knows.

Somewhat over ~600 lines on purpose: these methods read and write the one set of slots of the
state on the play's hot path; what differs between the flows is in the subclasses already, and
the sampler in ``sampling``. Splitting the view off as a mixin would only move lines.
"""

from __future__ import annotations

import random
from itertools import combinations, repeat
from typing import TYPE_CHECKING, Any

from ...cards import SUITS
from ..base import POT, DealResult, IllegalAction, Payment, TableState, Transfer, net_change
from ..engine import EngineState
from ..tricks import legal_follows, mask_cards
from .contracts import K_ALL, K_BETTEL, K_POINTS, K_RAMSCH, MODERN_CONTRACTS, Kind
from .observation import RUFER_IN_TAPP, TappObservation
from .phases import AUCTION, CONTRACT, DISCARD, GIVE, OVER, PHASE_NAMES, PLAY, TOUT, Phase
from .sampling import resample_tapp
from .scoring import historic_settlement, ramsch_settlement

if TYPE_CHECKING:
    from .game import TappGame

__all__ = ["PHASE_NAMES", "Phase", "TappState"]



class TappState(EngineState["TappGame"]):
    """One Tapp deal in progress (see ``game`` for the action encoding)."""

    __slots__ = (
        "game", "table", "n", "dealer", "fh", "hands", "tapp", "tapp0", "picked", "phase",
        "cur", "declarer", "level", "contract", "kind", "trump_mask", "trump_suit", "tout",
        "leader", "trick", "points", "ntricks", "played", "last_trick", "log", "transfers",
        "a_level", "a_holder", "a_pos", "a_pending", "r1", "r2_pos", "r2_best", "r2_seat",
        "called", "holder", "called_in_tapp", "given", "_result", "ended_early", "_legal", "_net",
    )

    OVER = OVER
    PHASE_NAMES = PHASE_NAMES

    def __init__(self, game: TappGame, table: TableState, acc: list[int] | None = None):
        """A new deal; ``acc``: the hands per receiver from forehand, the tapp last
        (``TappGame.new_deal``). Without it, an empty shell for ``clone`` to fill."""
        self.game = game
        self.table = table
        if acc is None:
            return
        n = game.num_players
        self.n = n
        dealer = self.dealer = table.dealer % n
        fh = dealer + 1
        if fh == n:
            fh = 0
        self.fh = self.leader = self.cur = fh
        # acc is per receiver from forehand, the tapp last: seat s gets acc[(s - fh) % n]
        self.hands = acc[n - fh:n] + acc[:n - fh]
        self.tapp = self.tapp0 = acc[n]
        self.picked = 0
        self.declarer = -1
        self.level = 0
        self.contract = -1
        self.kind = K_POINTS
        self.trump_mask = game.init_trump
        self.trump_suit = game.init_trump_suit
        self.tout = False
        self.trick: list[int] = []
        self.points = [0] * n
        self.ntricks = [0] * n
        self.played = 0
        self.last_trick: tuple[int, tuple[int, ...], int] | None = None
        self.log: list[tuple[int, int]] = []
        self.transfers: list[Transfer] = (
            [Transfer(dealer, POT, game.rules.pot_ante, "ante", Payment.ANTE)] if game.ante else [])
        self.called = -1
        self.holder = -1  # the seat that held the called card (-1: none, or it lay in the tapp)
        self.called_in_tapp = False
        self.given = -1
        self._result: DealResult | None = None
        self.ended_early = False
        self._legal = -1  # play phase: the legal mask of the current player, -1 unknown
        self._net: tuple[int, ...] | None = None  # when over, returns() if known at settlement
        self.a_level = 0
        self.a_holder = -1
        self.a_pos = 0
        self.a_pending = False
        self.r1: list[int] = []
        self.r2_pos = 0
        self.r2_best = -1
        self.r2_seat = -1
        self.phase = game.first_phase

    # ------------------------------------------------------------------ basics
    def fingerprint(self) -> tuple[object, ...]:
        """Every field of the deal that a rule reads or the deal shows (not the log's texts nor
        the transfers, only how many), as ints: equal fingerprints, the same state (and the same
        ``hash`` in every process). For checking two builds of the engine action for action."""
        return (self.phase, self.cur, self.dealer, tuple(self.hands), self.tapp, self.picked,
                self.declarer, self.level, self.contract, self.kind, self.trump_mask, self.tout,
                self.leader, tuple(self.trick), tuple(self.points), tuple(self.ntricks), self.played,
                self.a_level, self.a_holder, self.a_pos, self.a_pending, tuple(self.r1), self.r2_pos,
                self.r2_best, self.r2_seat, self.called, self.holder, self.called_in_tapp, self.given,
                self.ended_early, len(self.log), len(self.transfers))

    def clone(self) -> TappState:
        """A copy sharing no list with this state, slot by slot. The copies are written out
        from ``__slots__`` by scripts/slot_copies.py (tests/test_tapp_properties.py checks them):
        a loop over the slots copies six times slower compiled, twice as slow in Python."""
        c = type(self)(self.game, self.table)
        # the slots, one by one: written by scripts/slot_copies.py from __slots__
        c.n = self.n
        c.dealer = self.dealer
        c.fh = self.fh
        c.hands = self.hands[:]
        c.tapp = self.tapp
        c.tapp0 = self.tapp0
        c.picked = self.picked
        c.phase = self.phase
        c.cur = self.cur
        c.declarer = self.declarer
        c.level = self.level
        c.contract = self.contract
        c.kind = self.kind
        c.trump_mask = self.trump_mask
        c.trump_suit = self.trump_suit
        c.tout = self.tout
        c.leader = self.leader
        c.trick = self.trick[:]
        c.points = self.points[:]
        c.ntricks = self.ntricks[:]
        c.played = self.played
        c.last_trick = self.last_trick
        c.log = self.log[:]
        c.transfers = self.transfers[:]
        c.a_level = self.a_level
        c.a_holder = self.a_holder
        c.a_pos = self.a_pos
        c.a_pending = self.a_pending
        c.r1 = self.r1[:]
        c.r2_pos = self.r2_pos
        c.r2_best = self.r2_best
        c.r2_seat = self.r2_seat
        c.called = self.called
        c.holder = self.holder
        c.called_in_tapp = self.called_in_tapp
        c.given = self.given
        c._result = self._result
        c.ended_early = self.ended_early
        c._legal = self._legal
        c._net = self._net
        # (end of the lines written by scripts/slot_copies.py)
        return c

    def resample(self, seat: int | None, rng: random.Random) -> TappState:
        """A full state consistent with what ``seat`` knows, random in the rest (``sampling``)."""
        return resample_tapp(self, self._viewer(seat), rng)

    def _pot_now(self) -> int:
        pot = self.table.pot
        for t in self.transfers:
            if t.target == POT:
                pot += t.amount
            if t.source == POT:
                pot -= t.amount
        return pot

    def _illegal_phase(self, action: int) -> IllegalAction:
        return IllegalAction("wrong phase",
                             f"{self.action_to_string(action)} is not an action of the "
                             f"{PHASE_NAMES[self.phase]} phase")

    # ------------------------------------------------------------------ legal actions
    def _play_mask(self) -> int:
        hand = self.hands[self.cur]
        trick = self.trick
        if not trick:
            return hand
        lead = trick[0]
        # Farbzwang + Trumpfzwang, no Stichzwang (docs/rules-reference.md §3.1). With must_trump="always"
        # and head=False the winning card does not matter; the lead is passed in its place.
        return legal_follows(hand, self.game.suitmask_of[lead], self.trump_mask, lead, 0, "always", False)

    def legal_actions(self) -> list[int]:
        if self.phase == PLAY:
            g = self.game
            hand = self.hands[self.cur]
            trick = self.trick
            if trick:
                # legal_follows(hand, led suit, trump, lead, 0, "always", False) by table:
                # Farbzwang, else Trumpfzwang, else any card; one suit's list by lookup
                sm, sh, T = g.suit_info[trick[0]]
                f = hand & sm
                if f:
                    self._legal = f
                    return T[f >> sh][:]
                trump = self.trump_mask
                f = hand & trump
                if f:
                    self._legal = f
                    sm, sh, T = g.trump_info[trump]
                    return T[f >> sh][:]
            self._legal = hand
            return mask_cards(hand)
        if self.phase == OVER:
            return []
        return self._legal_phase()

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def _legal_phase(self) -> list[int]:
        """The legal actions in a phase before the play (each flow lists its own)."""
        raise NotImplementedError

    def _apply_phase(self, action: int) -> None:
        """Apply ``action`` in a phase before the play, or refuse it with its rule (each flow
        dispatches its own)."""
        raise NotImplementedError

    def _legal_discard(self) -> list[int]:
        g = self.game
        base = g.A_DISCARD
        bits = [1 << c for c in g.mask_list(self.hands[self.declarer])]
        k = g.tapp_size
        out: list[int] = []
        # Every set of k cards, ascending: by its highest card, then the next (a mask's order).
        if k == 2:
            for j in range(1, len(bits)):
                top = base + bits[j]
                for i in range(j):
                    out.append(top + bits[i])
        elif k == 3:
            for j in range(2, len(bits)):
                top = base + bits[j]
                for i in range(1, j):
                    two = top + bits[i]
                    for h in range(i):
                        out.append(two + bits[h])
        else:  # combinations of the strongest cards first come in descending order of mask
            out = list(map(sum, combinations(bits[::-1], k), repeat(base)))
            out.reverse()
        return out

    # ------------------------------------------------------------------ apply
    def apply(self, action: object, seat: int | None = None) -> None:
        # The hot path: a legal card of the seat on turn in the play phase goes straight in;
        # everything else (every refusal included) takes the shared preamble and the dispatch.
        if (seat is None or seat == self.cur) and self.phase == PLAY and type(action) is int and action >= 0:
            legal = self._legal
            if legal < 0:
                legal = self._play_mask()
            if (legal >> action) & 1:
                s = self.cur
                self._legal = -1
                self.hands[s] = self.hands[s] ^ (1 << action)
                trick = self.trick
                trick.append(action)
                self.log.append((s, action))
                if len(trick) == self.n:
                    self._finish_trick()
                else:
                    s += 1
                    self.cur = s if s < self.n else 0
                return
        EngineState.apply(self, action, seat)

    def _apply(self, action: int) -> None:
        if self.phase == PLAY:  # a legal card was taken by ``apply``: here only refusals
            if action < self.game.N:
                self._refuse_play(action, self.hands[self.cur])
            raise self._illegal_phase(action)
        self._apply_phase(action)

    def _refuse_play(self, card: int, hand: int) -> None:
        g = self.game
        name = g.pack.cards[card]
        if not (hand >> card) & 1:
            raise IllegalAction("card not in hand", f"{name} is not in seat {self.cur}'s hand")
        lead = self.trick[0]
        if hand & g.suitmask_of[lead]:
            raise IllegalAction("follow suit (Farbzwang)",
                                f"{name} does not follow the led suit "
                                f"({g.pack.suit_letter(lead)}) although seat {self.cur} can")
        raise IllegalAction("must trump (Trumpfzwang)",
                            f"{name} is not a trump; seat {self.cur} is void in the led suit "
                            f"and holds a trump")

    def _finish_trick(self) -> None:
        g = self.game
        trick = self.trick
        n = self.n
        beaters = g.beaters_by_trump[self.trump_mask.bit_length() // g.rps]  # tricks.beats as a table
        P = g.points
        best = trick[0]
        c = trick[1]
        pts = P[best] + P[c]
        wi = 0
        if (beaters[best] >> c) & 1:
            best = c
            wi = 1
        c = trick[2]
        pts += P[c]
        if (beaters[best] >> c) & 1:
            best = c
            wi = 2
        if n == 4:
            c = trick[3]
            pts += P[c]
            if (beaters[best] >> c) & 1:
                wi = 3
        w = self.leader + wi
        if w >= n:
            w -= n
        self.points[w] = self.points[w] + pts
        self.ntricks[w] = self.ntricks[w] + 1
        self.last_trick = (self.leader, tuple(trick), w)
        self.trick = []
        self.played += 1
        self.leader = self.cur = w
        # a decided hand ends at once where the rule set says so (Modern Tapp; rules reference §3.4)
        kind = self.kind
        if kind == K_BETTEL:
            if w == self.declarer:
                self.ended_early = self.played < g.hand_size
                self._end()
                return
        elif kind == K_ALL and w != self.declarer and g.ends_early:
            self.ended_early = self.played < g.hand_size
            self._end()
            return
        if self.played == g.hand_size:
            self._end()

    def _apply_discard(self, a: int) -> None:
        g = self.game
        s = self.cur
        D = g.A_DISCARD
        if a < D:
            raise self._illegal_phase(a)
        mask = a - D
        if mask > g.full:
            raise IllegalAction("notation", f"{a} is not an action id")
        hand = self.hands[s]
        if mask & ~hand:
            raise IllegalAction("discard only cards you hold",
                                "a discarded card is not in the declarer's hand")
        if mask.bit_count() != self.picked.bit_count():
            raise IllegalAction("discard as many as picked up",
                                f"discard exactly {self.picked.bit_count()} cards, "
                                f"not {mask.bit_count()}")
        self.hands[s] = hand & ~mask
        self.tapp = mask
        self.log.append((s, a))
        self._before_play()

    def _take_tapp(self) -> None:
        """Frage: the declarer picks up the tapp; he discards as many next."""
        d = self.declarer
        self.picked = self.tapp
        self.hands[d] = self.hands[d] | self.tapp
        self.tapp = 0
        self.phase = DISCARD

    def _before_play(self) -> None:
        """The contract is settled: a Tout may be announced where the rule set has it."""
        if self.game.announce_tout:
            self.phase = TOUT
        else:
            self._start_play()

    def _apply_tout(self, a: int) -> None:
        g = self.game
        if a == g.A_TOUT:
            self.tout = True
        elif a != g.A_NOTOUT:
            raise self._illegal_phase(a)
        self.log.append((self.cur, a))
        self._start_play()

    def _start_ramsch(self) -> None:
        self.kind = K_RAMSCH
        self.trump_mask = 0
        self.trump_suit = None
        self._start_play()

    def _start_play(self) -> None:
        self.phase = PLAY
        self.leader = self.cur = self.fh

    def _end(self) -> None:
        self.phase = OVER
        self.cur = -1
        if self.kind == K_RAMSCH and self.played == self.game.hand_size:
            self.points[self.leader] = self.points[self.leader] + self.game.mask_points(self.tapp)
        self._settle()

    # ------------------------------------------------------------------ settlement
    def declarer_points(self) -> int:
        d = self.declarer
        return self.points[d] + self.game.mask_points(self.tapp)

    def contract_string(self) -> str | None:
        """The contract in notation (``ramsch`` for a Ramsch; None before one is settled)."""
        raise NotImplementedError

    def _fixed_value_won(self) -> bool:
        kind = self.kind
        d = self.declarer
        if kind == K_POINTS:
            return self.declarer_points() >= self.game.rules.min_to_win
        if kind == K_BETTEL:
            return self.ntricks[d] == 0
        return self.ntricks[d] == self.game.hand_size

    def _settle(self) -> None:
        g = self.game
        rules = g.rules
        n = self.n
        tr = self.transfers
        d = self.declarer
        transfer = g.transfer
        if self.kind == K_RAMSCH:
            for payer, payee, amt in ramsch_settlement(self.points, self.ntricks):
                jungfer = self.ntricks[payee] == 0  # the payee took no trick
                tr.append(transfer(payer, payee, amt, "ramsch",
                                   Payment.RAMSCH_JUNGFER if jungfer else Payment.RAMSCH))
            return
        if d < 0:
            return
        if g.fixed_values:  # a fixed value per contract, won or lost
            ci = self.contract
            won = self._fixed_value_won()
            key = (d, ci, won)
            done = g.fixed_settlements.get(key)
            if done is None:
                name = MODERN_CONTRACTS[ci].name
                value = g.contract_values[ci]
                out = []
                for s in range(n):
                    if s != d:
                        if won:
                            out.append(transfer(s, d, value, name, Payment.CONTRACT_WON))
                        else:
                            out.append(transfer(d, s, value, name, Payment.CONTRACT_LOST))
                done = g.fixed_settlements[key] = (tuple(out), tuple(net_change(out, n)))
            tr.extend(done[0])
            self._net = done[1]  # no other transfers in this settlement
            return
        took_all = self.ntricks[d] == g.hand_size
        per, to_pot = historic_settlement(
            rules.settlement, self.level, self.declarer_points(), self.tout, took_all,
            self._pot_now(), rules.pot, rules.tout_multiplier)
        reason = self.contract_string() or ""
        for s in range(n):
            if s != d and per:
                if per > 0:
                    tr.append(Transfer(s, d, per, reason, Payment.CONTRACT_WON))
                else:
                    tr.append(Transfer(d, s, -per, reason, Payment.CONTRACT_LOST))
        if to_pot > 0:
            tr.append(Transfer(d, POT, to_pot, reason + " (pot)", Payment.POT))
        elif to_pot < 0:
            tr.append(Transfer(POT, d, -to_pot, reason + " (pot)", Payment.POT))

    def won(self) -> bool | None:
        """Did the declarer win (None: no declarer, a draw, or not over)."""
        if self.phase != OVER or self.declarer < 0:
            return None
        rules = self.game.rules
        if rules.settlement == "modern":
            return self._fixed_value_won()
        per, _ = historic_settlement(rules.settlement, self.level, self.declarer_points(),
                                     self.tout, self.ntricks[self.declarer] == self.game.hand_size)
        return None if per == 0 else per > 0

    def result(self) -> DealResult:
        if self.phase != OVER:
            raise ValueError("the deal is not over yet")
        if self._result is None:
            self._result = DealResult(list(self.transfers), (self.dealer + 1) % self.n, self.dealer,
                                      explain=self._summary)
        return self._result

    def _summary(self) -> dict[str, Any]:
        """``result().summary``, made when first read."""
        n = self.n
        summary: dict[str, Any] = {
            "declarer": self.declarer if self.declarer >= 0 else None,
            "contract": self.contract_string(),
            "tricks": {str(s): self.ntricks[s] for s in range(n)},
            "outcome": "played" if (self.kind == K_RAMSCH or self.declarer >= 0) else "all-pass",
        }
        if self.kind == K_RAMSCH:
            summary["card_points"] = {str(s): self.points[s] for s in range(n)}
        elif self.declarer >= 0:
            dp = self.declarer_points()
            summary["card_points"] = {
                "declarer": dp,
                "defenders": sum(self.points) - self.points[self.declarer],
            }
            summary["won"] = self.won()
            summary["ended_early"] = self.ended_early
        else:
            summary["card_points"] = {}
        summary.update(self._explained())
        return summary

    def _explained(self) -> dict[str, Any]:
        """The summary's part for a reader (stammtisch.explain): each payment with a stable
        code, the card points against what was needed, every trick, why the hand ended early."""
        g = self.game
        n = self.n
        d = self.declarer
        payments: list[dict[str, Any]] = []
        for tr in self.transfers:
            entry: dict[str, Any] = tr.to_json()
            entry["code"] = tr.code.value
            payments.append(entry)
        names = g.pack.cards
        plays = self.log[len(self.log) - self.played * n:] if self.played else []
        # each trick's winner leads the next one; the last winner is kept in last_trick
        winners = [plays[i][0] for i in range(n, len(plays), n)]
        if self.last_trick:
            winners.append(self.last_trick[2])
        tricks_log = [{"cards": [[s, names[c]] for s, c in plays[i * n:i * n + n]], "winner": w}
                      for i, w in enumerate(winners)]
        out: dict[str, Any] = {"payments": payments, "tricks_log": tricks_log,
                               "tout": self.tout, "kind": Kind(self.kind).name.lower()}
        if self.kind == K_RAMSCH:
            top = max(self.points)
            out["losers"] = [s for s in range(n) if self.points[s] == top]
            out["jungfer"] = [s for s in range(n) if self.ntricks[s] == 0]
        elif d >= 0:
            dp = self.declarer_points()
            out["declarer_points"] = dp
            out["defender_points"] = sum(self.points) - self.points[d]
            if self.kind == K_POINTS:
                out["needed"] = g.rules.min_to_win
            out["ended_early_reason"] = None
            if self.ended_early and tricks_log:
                last = tricks_log[-1]
                rule = "bettel-declarer-trick" if self.kind == K_BETTEL else "defender-trick"
                out["ended_early_reason"] = {"trick": len(tricks_log), "winner": last["winner"],
                                             "rule": rule}
        return out

    def returns(self) -> list[int]:
        if self.phase != OVER:
            raise ValueError("the deal is not over yet")
        if self._net is not None:
            return list(self._net)
        return net_change(self.transfers, self.n)

    # ------------------------------------------------------------------ secrets and views
    def _partner_of_actor(self, viewer: int | None) -> bool:
        return viewer is not None and viewer == self.holder

    def _open_hand_shown(self) -> bool:
        """Bettel ouvert: the declarer's hand lies face up from the first lead."""
        return (self.contract >= 0 and MODERN_CONTRACTS[self.contract].open_hand
                and (self.phase == PLAY or self.phase == OVER))

    def known_mask(self, seat: int | None) -> int:
        """The cards whose place ``seat`` may know (rules reference §3; §6 P5).

        Everyone: the cards played to tricks; a Bettel ouvert declarer's hand once it lies
        open; a called Rufer card from the call until the give (it is in the declarer's
        hand), and always when it lay in the tapp under ``rufer_in_tapp=none`` (nothing is
        exchanged). After a give only the declarer and the holder know where the called card
        is: the declarer may give back any card, the called one included (rules reference §3.4).
        The declarer also: the tapp he picked up and what he discarded; the Rufer holder: the
        card given back to him, and so where the called card is. A seat always knows its own
        hand. A Solo's tapp is never seen, not even after the deal."""
        g = self.game
        known = g.full & ~self.tapp & ~self._unplayed()
        if self._open_hand_shown():
            known |= self.hands[self.declarer]
        called = 1 << self.called if self.called >= 0 else 0
        stays_in_tapp = self.called_in_tapp and g.rules.rufer_in_tapp == "none"
        if called and (self.given < 0 or stays_in_tapp):
            known |= called
        if seat is None:
            return known
        known |= self.hands[seat]
        if seat == self.declarer:
            known |= self.picked | (self.tapp if self.picked else 0) | called
            if self.given >= 0:
                known |= 1 << self.given
        elif self.given >= 0 and seat == self.holder:
            known |= (1 << self.given) | called
        return known

    def observation(self, seat: int | None) -> TappObservation:
        """What ``seat`` knows now (``None``: a spectator) as ints and card masks: the facts
        of ``view(seat)``, which the bots and the RL observations read (``TappObservation``)."""
        me = self._viewer(seat)
        g = self.game
        n = self.n
        hands = self.hands
        leader = self.leader
        trick = tuple([((leader + i) % n, c) for i, c in enumerate(self.trick)])
        last = self.last_trick
        last_trick: tuple[tuple[int, int], ...] = ()
        last_winner = -1
        if last is not None:
            last_trick = tuple([((last[0] + i) % n, c) for i, c in enumerate(last[1])])
            last_winner = last[2]
        unplayed = self.tapp
        for h in hands:
            unplayed |= h
        standing_seat, standing = self._standing_bid()
        d = self.declarer
        picked = discards = given = 0
        rufer_holder = given = -1
        if me is not None and me == d:
            if self.picked:
                picked = self.picked
                if self.phase != DISCARD:
                    discards = self.tapp
            if self.called >= 0:
                rufer_holder = RUFER_IN_TAPP if self.called_in_tapp else self.holder
            given = self.given
        elif me is not None and self.called >= 0 and me == self.holder:
            rufer_holder = me
            given = self.given
        words = [-1] * n
        first_word = 3 * g.N
        last_word = g.A_DISCARD
        for s, a in self.log:
            if first_word <= a < last_word:
                words[s] = a - first_word
        suit = self.trump_suit
        return TappObservation(
            g, -1 if me is None else me, int(self.phase), self.dealer, self.cur,
            hands[me] if me is not None else 0, tuple(self._hand_sizes(me)),
            -1 if suit is None else SUITS.index(suit), trick, last_trick, last_winner,
            g.full & ~unplayed, tuple(self.ntricks), self._pot_now(), d, int(self.kind),
            self.contract_string(), self.tout, self.called,
            hands[d] if self._open_hand_shown() else 0, standing_seat, standing, picked, discards,
            rufer_holder, given, tuple(words))

    def _unplayed(self) -> int:
        out = 0
        for h in self.hands:
            out |= h
        return out

    def _hand_sizes(self, me: int | None) -> list[int]:
        """Cards per hand as ``me`` may know them. Between a Rufer call and the give the
        declarer holds one card more and the holder one fewer: only they may see that (the
        card goes over face down; the holder is known to the declarer only, rules reference §6 P5),
        so anyone else sees the sizes the exchange will leave."""
        sizes = [h.bit_count() for h in self.hands]
        if self.phase == GIVE and me != self.declarer and me != self.holder:
            sizes[self.declarer] = sizes[self.declarer] - 1
            if self.holder >= 0:
                sizes[self.holder] = sizes[self.holder] + 1
        return sizes

    def _add_view(self, v: dict[str, Any], me: int | None) -> None:
        g = self.game
        cards = g.pack.cards
        n = self.n
        names = g.card_names
        v["hand"] = names(self.hands[me]) if me is not None else []
        v["hand_sizes"] = self._hand_sizes(me)
        v["trump"] = self.trump_suit
        v["upcard"] = None
        v["trick"] = [[(self.leader + i) % n, cards[c]] for i, c in enumerate(self.trick)]
        last = self.last_trick
        v["last_trick"] = (None if last is None else {
            "cards": [[(last[0] + i) % n, cards[c]] for i, c in enumerate(last[1])],
            "winner": last[2]})
        v["tricks_won"] = list(self.ntricks)
        v["pot"] = self._pot_now()
        v["reserve"] = 0
        v["declarer"] = self.declarer if self.declarer >= 0 else None
        v["contract"] = self.contract_string()
        v["tout"] = self.tout
        v["called"] = cards[self.called] if self.called >= 0 else None
        v["open_hand"] = names(self.hands[self.declarer]) if self._open_hand_shown() else None
        v["standing"] = self._standing()
        self._add_own_secrets(v, me)

    def _standing(self) -> dict[str, Any] | None:
        """The bid to beat while the auction runs: who made (or holds) it and its action text;
        None before the first bid and once the auction is over. Every seat saw it said."""
        seat, bid = self._standing_bid()
        return None if bid < 0 else {"seat": seat, "bid": self.action_to_string(bid)}

    def _standing_bid(self) -> tuple[int, int]:
        """``_standing`` as (seat, action id); (-1, -1) when there is none."""
        g = self.game
        if self.phase == AUCTION and self.a_level > 0:
            n = self.n
            seat = (self.fh + self.a_pos) % n if self.a_pending else self.a_holder
            return seat, g.A_BID + self.a_level - 1
        if self.phase == CONTRACT and self.r2_best >= 0:
            return self.r2_seat, g.A_CONTRACT + self.r2_best
        return -1, -1

    #: the keys ``_add_own_secrets`` may add (only the declarer and the Rufer holder get any)
    OWN_SECRET_KEYS = ("tapp", "discards", "rufer_holder", "given")

    def _redo_seat_view(self, v: dict[str, Any], me: int | None) -> None:
        net = v.pop("net", None)  # the last key of a finished deal's view: it stays last
        for key in self.OWN_SECRET_KEYS:
            v.pop(key, None)
        v["hand"] = self.game.card_names(self.hands[me]) if me is not None else []
        v["hand_sizes"] = self._hand_sizes(me)
        self._add_own_secrets(v, me)
        if net is not None:
            v["net"] = net

    def _add_own_secrets(self, v: dict[str, Any], me: int | None) -> None:
        """What only the declarer (the tapp he picked up, his discards, where the called card
        is, the card he gave) or the Rufer holder (that he holds it, the card given to him)
        may see."""
        cards = self.game.pack.cards
        names = self.game.card_names
        d = self.declarer
        if me is not None and me == d:
            if self.picked:
                v["tapp"] = names(self.picked)
                if self.phase != DISCARD:
                    v["discards"] = names(self.tapp)
            if self.called >= 0:
                v["rufer_holder"] = "tapp" if self.called_in_tapp else self.holder
            if self.given >= 0:
                v["given"] = cards[self.given]
        elif me is not None and self.called >= 0 and me == self.holder:
            v["rufer_holder"] = me
            if self.given >= 0:
                v["given"] = cards[self.given]

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.game.rules.id} phase={PHASE_NAMES[self.phase]} "
                f"cur={self.cur} log={len(self.log)}>")


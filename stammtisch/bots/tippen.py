"""A heuristic Tippen player that reads only its seat's observation (``state.observation(seat)``)
and the legal actions.

Policy (deterministic given the observation; ties broken by an optional ``random.Random``):

* Schieben: always deals (a shove costs a stake and buys nothing measurable).
* Dealer's choice: turns the trump; sniffs only with three Aces in hand; never knocks (a blind
  knock risks two bêtes).
* Declaring: estimates its tricks from trumps and Aces against the number of opponents still in
  the hand, and taps when the estimate outweighs the bête it risks; if everyone else has
  passed it always taps (a lone tapper takes the pot unplayed).
* Exchange: throws away its non-trumps below King (and Kings when many play).
* Robbing: always robs (the upcard is worth more than the trump 7).
* Play: as a follower wins as cheaply as it can (the lowest winning card), else throws its
  lowest card; as a leader cashes a sure winner (the best trump left, an Ace), else leads low.

Cards are pack indices and hands bit masks (``stammtisch.cards``).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Final

from ..cards import Pack
from ..games.tippen import (
    CHOICE,
    DECLARE,
    DISCARD,
    DROP,
    EXCHANGE,
    PLAY,
    ROB,
    SHOVE,
    W_DEAL,
    W_DROP,
    W_LOOK,
    W_ROB,
    W_SNIFF,
    W_STAY,
    W_TAP,
    W_TURN,
)

if TYPE_CHECKING:
    from ..games.tippen.observation import TippenObservation
    from . import Seen

RANKS: Final = "AKQJT98765432"  # Tippen natural order, strongest first
STRENGTH: Final = {r: len(RANKS) - i for i, r in enumerate(RANKS)}  # higher = stronger
#: the trick value of a trump by its place from the top (``_estimate``), and of other ranks
TRUMP_VALUE: Final = {"A": 1.0, "K": 0.85, "Q": 0.7, "J": 0.55}


class CardTables:
    """Per pack, per card: its suit, strength and the stronger cards of its suit."""

    def __init__(self, pack: Pack) -> None:
        size = pack.size
        rps = pack.ranks_per_suit
        names = pack.cards
        self.suit_masks: tuple[int, ...] = pack.suit_masks
        self.suit = tuple([c // rps for c in range(size)])
        self.strength = tuple([STRENGTH[names[c][1]] for c in range(size)])
        self.trump_value = tuple([TRUMP_VALUE.get(names[c][1], 0.4) for c in range(size)])
        self.higher = tuple([pack.suit_masks[c // rps] & ~((2 << c) - 1) for c in range(size)])
        self.aces = sum(1 << c for c in range(size) if names[c][1] == "A")
        self.kings = sum(1 << c for c in range(size) if names[c][1] == "K")


_TABLES: dict[str, CardTables] = {}


def card_tables(pack: Pack) -> CardTables:
    tables = _TABLES.get(pack.name)
    if tables is None:
        tables = _TABLES[pack.name] = CardTables(pack)
    return tables


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class TippenHeuristic:
    RISK = 1.0    # weight of the bête risk against the expected trick money
    NEED = 0.5    # least estimated tricks to tap against other players (bench/bots.py sweep)
    SURE = 1.6    # tap regardless of the money with this many estimated tricks

    def __init__(self, rng: random.Random | None = None):
        self.rng = rng

    def act(self, state: Seen, seat: int) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self.decide(state.observation(seat), legal)

    # -- helpers ----------------------------------------------------------------------------------
    def _pick(self, options: list[int]) -> int:
        if len(options) > 1 and self.rng is not None:
            return options[self.rng.randrange(len(options))]
        return options[0]

    @staticmethod
    def _estimate(hand: int, trump: int, opponents: int, t: CardTables) -> float:
        """Expected tricks of a hand, roughly."""
        est = 0.0
        opp = max(1, opponents)
        tmask = t.suit_masks[trump] if trump >= 0 else 0
        for i, c in enumerate(reversed(_cards(hand & tmask))):  # the strongest trump first
            est += t.trump_value[c] * (0.9 ** i if i else 1.0)
        for c in _cards(hand & ~tmask):
            if (t.aces >> c) & 1:
                est += max(0.35, 0.8 - 0.1 * (opp - 1))
            elif (t.kings >> c) & 1:
                est += max(0.1, 0.35 - 0.08 * (opp - 1))
        return est

    @staticmethod
    def _beats(card: int, best: int, trump: int, t: CardTables) -> bool:
        """Does ``card`` beat ``best``, the card winning the trick so far?"""
        suit = t.suit
        if suit[card] == trump:
            return suit[best] != trump or t.strength[card] > t.strength[best]
        if suit[best] == trump:
            return False
        return suit[card] == suit[best] and t.strength[card] > t.strength[best]

    # -- the decision ------------------------------------------------------------------------------
    def decide(self, obs: TippenObservation, legal: list[int]) -> int:
        """The action for the seat of ``obs`` among ``legal`` (the engine's ids, ascending)."""
        if len(legal) == 1:
            return legal[0]
        g = obs.game
        t = card_tables(g.pack)
        phase = obs.phase
        hand = obs.hand
        trump = obs.trump
        W = g.WORD_BASE
        if phase == SHOVE:
            return W + W_DEAL if W + W_DEAL in legal else legal[0]
        if phase == CHOICE:
            if W + W_SNIFF in legal and (hand & t.aces).bit_count() >= 3:
                return W + W_SNIFF
            for choice in (W + W_TURN, W + W_LOOK):
                if choice in legal:
                    return choice
            return legal[0]
        if phase == DISCARD:
            cards = [a - g.DISCARD_BASE for a in legal]
            plain = [c for c in cards if t.suit[c] != trump]
            pool = plain or cards
            low = min(t.strength[c] for c in pool)
            return self._pick([g.DISCARD_BASE + c for c in pool if t.strength[c] == low])
        if phase == DROP:
            return W + W_STAY if self._estimate(hand, trump, obs.players - 1, t) >= 1.0 else W + W_DROP
        if phase == DECLARE:
            return W + W_TAP if self._tap(obs, t) else W + W_TAP + 1
        if phase == EXCHANGE:
            return self._exchange(obs, t, legal)
        if phase == ROB:
            return W + W_ROB if W + W_ROB in legal else legal[0]
        if phase == PLAY:
            return self._play(obs, t, legal)
        return self._pick(sorted(legal, key=g.action_to_string))

    def _tap(self, obs: TippenObservation, t: CardTables) -> bool:
        seat = obs.seat
        tappers = undecided = 0
        for s, word in enumerate(obs.declared):
            if s != seat:
                if word == "tap" or word == "stay":
                    tappers += 1
                elif word is None:
                    undecided += 1
        opponents = tappers + undecided
        est = self._estimate(obs.hand, obs.trump, max(1, opponents), t)
        if tappers == 0 and undecided == 0:
            # everyone else passed: a lone tapper takes the pot unplayed (the presets'
            # lone_tapper=takes-pot; the observation does not say when a rule set differs)
            return True
        pot = obs.pot_in_play or obs.pot or 0
        bete = obs.bete or pot
        value = obs.trick_value or 0
        # tap when the expected gain beats the expected bête of a trickless hand
        p_zero = max(0.0, 1.0 - est) ** 1.5
        gain = est * value - self.RISK * p_zero * bete
        need = self.NEED + 0.1 * max(0, opponents - 2)
        return est >= need and gain >= 0 or est >= self.SURE

    def _exchange(self, obs: TippenObservation, t: CardTables, legal: list[int]) -> int:
        g = obs.game
        trump = obs.trump
        keep = t.aces if len(obs.active) >= 4 else t.aces | t.kings
        throw = obs.hand & ~(t.suit_masks[trump] if trump >= 0 else 0) & ~keep
        base = g.EXCHANGE_BASE
        if base + throw in legal:
            return base + throw
        # not every set may be exchanged: the largest part of what it would throw
        options = [((a - base).bit_count(), g.action_to_string(a), a) for a in legal
                   if a >= base and not (a - base) & ~throw]
        if options:
            return max(options)[2]
        return base if base in legal else legal[0]

    def _play(self, obs: TippenObservation, t: CardTables, legal: list[int]) -> int:
        trump = obs.trump
        trick = obs.trick
        suit, strength = t.suit, t.strength
        if not trick:
            return self._lead(obs, t, legal)
        best = trick[0][1]
        for _, c in trick[1:]:
            if self._beats(c, best, trump, t):
                best = c
        winners = [c for c in legal if self._beats(c, best, trump, t)]
        # the cheapest winner: a plain card before a trump, then the lowest rank
        return min(winners or legal, key=lambda c: (suit[c] == trump, strength[c]))

    def _lead(self, obs: TippenObservation, t: CardTables, cards: list[int]) -> int:
        trump = obs.trump
        suit, strength = t.suit, t.strength
        if trump >= 0:
            trumps = [c for c in cards if suit[c] == trump]
            if trumps:
                top = max(trumps, key=lambda c: strength[c])
                seen = obs.played | (1 << obs.upcard if obs.upcard >= 0 else 0)
                if not t.higher[top] & ~seen:
                    return top                              # the best trump left: cash it
        aces = [c for c in cards if (t.aces >> c) & 1 and suit[c] != trump]
        if aces:
            return aces[0]
        plain = [c for c in cards if suit[c] != trump]
        return min(plain or cards, key=lambda c: strength[c])

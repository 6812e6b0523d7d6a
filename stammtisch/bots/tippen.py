"""A heuristic Tippen player that decides from ``view(seat)`` and the legal action strings only.

Policy (deterministic given the view; ties broken by an optional ``random.Random``):

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
"""

from __future__ import annotations

import random
from typing import Any

from . import View

RANKS = "AKQJT98765432"  # Tippen natural order, strongest first
STRENGTH = {r: len(RANKS) - i for i, r in enumerate(RANKS)}  # higher = stronger


def _strength(card: str) -> int:
    return STRENGTH[card[1]]


class TippenHeuristic:
    RISK = 1.0    # weight of the bête risk against the expected trick money
    NEED = 0.5    # least estimated tricks to tap against other players (bench/bots.py sweep)
    SURE = 1.6    # tap regardless of the money with this many estimated tricks

    def __init__(self, rng: random.Random | None = None):
        self.rng = rng

    # -- helpers ----------------------------------------------------------------------------------
    def _pick(self, options: list[str]) -> str:
        if len(options) > 1 and self.rng is not None:
            return options[self.rng.randrange(len(options))]
        return options[0]

    @staticmethod
    def _estimate(hand: list[str], trump: str | None, opponents: int) -> float:
        """Expected tricks of a hand, roughly."""
        est = 0.0
        opp = max(1, opponents)
        trumps = sorted((c for c in hand if c[0] == trump), key=_strength, reverse=True)
        for i, c in enumerate(trumps):
            base = {"A": 1.0, "K": 0.85, "Q": 0.7, "J": 0.55}.get(c[1], 0.4)
            est += base * (0.9 ** i if i else 1.0)
        for c in hand:
            if c[0] == trump:
                continue
            if c[1] == "A":
                est += max(0.35, 0.8 - 0.1 * (opp - 1))
            elif c[1] == "K":
                est += max(0.1, 0.35 - 0.08 * (opp - 1))
        return est

    @staticmethod
    def _beats(card: str, best: str, trump: str | None) -> bool:
        """Does ``card`` beat ``best``, the card winning the trick so far?"""
        if card[0] == trump:
            return best[0] != trump or _strength(card) > _strength(best)
        if best[0] == trump:
            return False
        return card[0] == best[0] and _strength(card) > _strength(best)

    # -- the decision ------------------------------------------------------------------------------
    def choose(self, view: View, legal: list[str]) -> str:
        if len(legal) == 1:
            return legal[0]
        phase = view.get("phase")
        hand: list[str] = view.get("hand", [])
        trump: str | None = view.get("trump")
        players: int = view.get("players", 4)
        if phase == "schieben":
            return "deal" if "deal" in legal else legal[0]
        if phase == "choice":
            aces = sum(1 for c in hand if c[1] == "A")
            if "sniff" in legal and aces >= 3:
                return "sniff"
            for choice in ("turn", "look"):
                if choice in legal:
                    return choice
            return legal[0]
        if phase == "discard":
            return self._discard(trump, legal)
        if phase == "drop":
            return "stay" if self._estimate(hand, trump, players - 1) >= 1.0 else "drop"
        if phase == "declare":
            return self._declare(view, hand, trump)
        if phase == "exchange":
            return self._exchange(view, hand, trump, legal)
        if phase == "rob":
            return "rob" if "rob" in legal else legal[0]
        if phase == "play":
            return self._play(view, trump, legal)
        return self._pick(sorted(legal))

    def _discard(self, trump: str | None, legal: list[str]) -> str:
        cards = [a.split(":", 1)[1] for a in legal]
        plain = [c for c in cards if c[0] != trump]
        pool = plain or cards
        low = min(_strength(c) for c in pool)
        return self._pick(["discard:" + c for c in pool if _strength(c) == low])

    def _declare(self, view: View, hand: list[str], trump: str | None) -> str:
        seat = view.get("seat")
        declared = view.get("declared", [])
        tappers = sum(1 for s, d in enumerate(declared) if d in ("tap", "stay") and s != seat)
        undecided = sum(1 for s, d in enumerate(declared) if d is None and s != seat)
        opponents = tappers + undecided
        est = self._estimate(hand, trump, max(1, opponents))
        if tappers == 0 and undecided == 0:
            # everyone else passed: a lone tapper takes the pot unplayed (the presets'
            # lone_tapper=takes-pot; the view does not say when a rule set differs)
            return "tap"
        pot = view.get("pot_in_play") or view.get("pot") or 0
        bete = view.get("bete") or pot
        value = view.get("trick_value") or 0
        # tap when the expected gain beats the expected bête of a trickless hand
        p_zero = max(0.0, 1.0 - est) ** 1.5
        gain = est * value - self.RISK * p_zero * bete
        need = self.NEED + 0.1 * max(0, opponents - 2)
        return "tap" if est >= need and gain >= 0 or est >= self.SURE else "pass"

    def _exchange(self, view: View, hand: list[str], trump: str | None, legal: list[str]) -> str:
        many = len(view.get("active", [])) >= 4
        throw = {c for c in hand if c[0] != trump and
                 (c[1] not in "AK" or (c[1] == "K" and many))}
        options: list[tuple[int, str]] = []
        for a in legal:
            body = a.split(":", 1)[1]
            cards = set() if body == "-" else set(body.split(","))
            if cards == throw:
                return a
            if cards <= throw:
                options.append((len(cards), a))
        if options:
            options.sort(reverse=True)
            return options[0][1]
        return "exchange:-" if "exchange:-" in legal else legal[0]

    def _play(self, view: View, trump: str | None, legal: list[str]) -> str:
        cards = [a.split(":", 1)[1] for a in legal]
        trick: list[list[Any]] = view.get("trick", [])
        if not trick:
            return "play:" + self._lead(view, cards, trump)
        best = trick[0][1]
        for _, c in trick[1:]:
            if self._beats(c, best, trump):
                best = c
        winners = [c for c in cards if self._beats(c, best, trump)]
        if winners:
            # the cheapest winner: a plain card before a trump, then the lowest rank
            return "play:" + min(winners, key=lambda c: (c[0] == trump, _strength(c)))
        return "play:" + min(cards, key=lambda c: (c[0] == trump, _strength(c)))

    def _lead(self, view: View, cards: list[str], trump: str | None) -> str:
        seen: set[str] = set()
        for _, c in view.get("trick", []):
            seen.add(c)
        last = view.get("last_trick")
        for entry in view.get("log", []):
            action = entry[1]
            if action.startswith("play:"):
                seen.add(action[5:])
        if last:
            for _, c in last["cards"]:
                seen.add(c)
        trumps = sorted((c for c in cards if c[0] == trump), key=_strength, reverse=True)
        if trumps and trump is not None:
            top = trumps[0]
            higher = [r for r in RANKS[: RANKS.index(top[1])] if trump + r not in seen
                      and trump + r != view.get("upcard")]
            if not higher:
                return top                              # the best trump left: cash it
        aces = [c for c in cards if c[1] == "A" and c[0] != trump]
        if aces:
            return aces[0]
        plain = [c for c in cards if c[0] != trump]
        pool = plain or cards
        return min(pool, key=_strength)

"""A heuristic Tapp player that sees only ``view(seat)`` and the legal action strings.

It bids from a point model (``features`` · ``MODEL``: trumps, top trumps, side Aces and Tens,
voids, singletons) and declares only the contract of best expected value that it wins with at
least ``MIN_WIN`` chance; Bettel with a hand that ducks every suit, Durch only with a sure Tout.
In play it remembers the cards played: the declarer draws trumps and cashes top cards;
defenders smear points onto a partner's trick that holds; followers win with cards that stay
on top, take a trick last with the card worth most, and spend no trump on a pointless trick;
it plays low in Bettel and Ramsch. Fast and deterministic up to its ``rng`` tie-breaks.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Any

from ..rules import TappRules, ruleset
from . import View

ORDER = "6789JQKTA"  # Tapp order, weakest first
STRENGTH = {r: i for i, r in enumerate(ORDER)}
POINTS = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2}
SUITS = "HDCS"

#: Point model: expected declarer card points = weights · features(hand, trump), and the
#: residual spread, per contract kind and table size. Fitted by least squares on 5000 deals
#: each in which one seat was forced into the contract and all seats played this bot's card
#: play (Modern Tapp rules; a suit solo plays like any solo). Win chance = Φ((pred − 60.5)/sd).
MODEL = {
    ("frage", 3): ((17.68, 1.45, 5.63, 5.17, 0.80, 0.49, 5.96, 0.85, 1.71, -0.15, 12.07, 3.73,
                    0.42, -0.94), 11.9),
    ("solo", 3): ((5.79, 3.53, 11.63, 8.21, 1.89, 0.11, 10.69, 9.83, 7.16, 1.62, 14.55, 2.76,
                   0.06, -0.32), 10.9),
    ("frage", 4): ((28.38, 3.65, 8.55, 7.76, 2.53, 0.51, 7.36, 2.87, 3.55, -0.00, 4.09, 1.68,
                    0.13, 0.10), 15.8),
    ("solo", 4): ((23.11, -4.84, 12.50, 8.10, 2.90, 1.18, 10.99, 5.80, 3.45, 0.67, 22.24, 4.70,
                   0.04, -1.62), 13.4),
}
#: Declare only with at least this win chance (an even chance is worth nothing in expectation
#: and costs the defence's edge; real players declare when they expect to win).
MIN_WIN = 0.6


def _rules_of(view: View) -> TappRules:
    """The rule set a view is played under (public: its id and options are in every view)."""
    return _rules_cached(view["ruleset"], tuple(sorted(view.get("options", {}).items())))


@lru_cache(maxsize=64)
def _rules_cached(ruleset_id: str, options: tuple[tuple[str, Any], ...]) -> TappRules:
    rules = ruleset(ruleset_id, dict(options))
    assert isinstance(rules, TappRules)
    return rules


def _s(card: str) -> int:
    return STRENGTH[card[1]]


def _p(card: str) -> int:
    return POINTS.get(card[1], 0)


def features(hand: list[str], trump: str | None) -> list[float]:
    """Hand features for the point model (``trump`` is the suit that would be trumps)."""
    nt = ta = tt = tk = side_a = t_guard = t_bare = side_k = voids = single = pts = 0
    by_suit: dict[str, list[str]] = {s: [] for s in SUITS}
    for c in hand:
        by_suit[c[0]].append(c[1])
        pts += POINTS.get(c[1], 0)
    for s, ranks in by_suit.items():
        if s == trump:
            nt = len(ranks)
            ta, tt, tk = ("A" in ranks), ("T" in ranks), ("K" in ranks)
            continue
        if not ranks:
            voids += 1
        elif len(ranks) == 1:
            single += 1
        if "A" in ranks:
            side_a += 1
            if "T" in ranks:
                t_guard += 1
        elif "T" in ranks:
            t_bare += 1
        if "K" in ranks:
            side_k += 1
    return [1.0, nt, ta, tt, tk, nt * nt, side_a, t_guard, t_bare, side_k, voids, single, pts,
            nt * voids]


def predict(hand: list[str], trump: str, kind: str, players: int) -> tuple[float, float]:
    """(expected declarer card points, win chance) of ``kind`` ("frage"/"solo") with ``trump``."""
    weights, sd = MODEL[(kind, 4 if players >= 4 else 3)]
    pred = sum(w * f for w, f in zip(weights, features(hand, trump), strict=True))
    return pred, 0.5 * (1.0 + math.erf((pred - 60.5) / (sd * math.sqrt(2.0))))


def bettel_ok(hand: list[str]) -> bool:
    """Every suit held is low enough that the hand can duck every trick (rough)."""
    for suit in SUITS:
        cards = sorted(_s(c) for c in hand if c[0] == suit)
        # the k-th lowest card of a suit should be among the k+1 lowest of the suit
        for k, st in enumerate(cards):
            if st > k + 1:
                return False
    return True


def beats(card: str, best: str, trump: str | None) -> bool:
    if card[0] == best[0]:
        return _s(card) > _s(best)
    return card[0] == trump


def winning(trick: list[list[Any]], trump: str | None) -> tuple[int, str]:
    """(seat, card) winning a non-empty trick so far; ``trick`` is the view's [[seat, card], …]."""
    best_seat, best = trick[0]
    for seat, c in trick[1:]:
        if beats(c, best, trump):
            best_seat, best = seat, c
    return best_seat, best


class TappHeuristic:
    """``choose(view, legal) -> action string``; uses nothing but the view."""

    name = "tapp-heuristic"

    def __init__(self, rng: random.Random | int | None = None):
        self.rng = rng if isinstance(rng, random.Random) else random.Random(rng)

    # ------------------------------------------------------------------ entry point
    def choose(self, view: View, legal: list[str]) -> str:
        if len(legal) == 1:
            return legal[0]
        phase = view.get("phase")
        hand = view.get("hand", [])
        if phase == "auction":
            return self._auction(view, hand, legal)
        if phase == "trump":
            return self._trump(view, hand, legal)
        if phase == "discard":
            return self._discard(view, hand, legal)
        if phase == "tout":
            return "tout" if self._tout_sure(hand, view.get("trump")) and "tout" in legal else "no-tout"
        if phase == "declare":
            return "play" if self._options(view, hand) else "weg"
        if phase == "contract":
            return self._contract(view, hand, legal)
        if phase == "call":
            return self._call(view, hand, legal)
        if phase == "give":
            return self._give(view, hand, legal)
        if phase == "play":
            return self._play(view, hand, legal)
        return self.rng.choice(legal)

    # ------------------------------------------------------------------ bidding
    def _options(self, view: View, hand: list[str]) -> list[tuple[float, int, str, float]]:
        """Contracts worth declaring: (expected value, rank, name, win chance), best first.

        Historic rule sets pay in proportion to the points over 60 (Frage ×1, Solo ×2 in
        Württemberg Tarock; ÷4, ÷2, ÷1 in Classic Tapp), Modern Tapp a fixed value per
        contract, so the expected value is factor × (points − 60) or value × (2p − 1).
        Only contracts won with at least ``MIN_WIN`` chance are offered.
        """
        rules = _rules_of(view)
        n = view.get("players", 3)
        out: list[tuple[float, int, str, float]] = []

        def add(ev: float, rank: int, name: str, p: float) -> None:
            if p >= MIN_WIN:
                out.append((ev, rank, name, p))

        f_pred, f_p = predict(hand, "H", "frage", n)
        h_pred, h_p = predict(hand, "H", "solo", n)
        suit = max("CSD", key=lambda t: predict(hand, t, "solo", n)[0])
        s_pred, s_p = predict(hand, suit, "solo", n)
        if rules.settlement == "modern":  # a fixed value per contract
            frage_value = rules.frage_value
            add(frage_value * (2 * f_p - 1), 1, "frage", f_p)
            add(5 * (2 * s_p - 1), 2, f"solo:{suit}", s_p)
            add(10 * (2 * h_p - 1), 3, "herzsolo", h_p)
            if bettel_ok(hand):
                add(15 * 0.5, 4, "bettel", 0.75)
            if self._tout_sure(hand, suit):
                add(30, 8, f"durch:{suit}", 0.95)
            if self._tout_sure(hand, "H"):
                add(60, 9, "herzdurch", 0.95)
        elif rules.settlement == "anton":  # ceil(x / d), d = 4, 2, 1
            add((f_pred - 60) / 4, 1, "frage", f_p)
            add((s_pred - 60) / 2, 2, f"solo:{suit}", s_p)
            add(h_pred - 60, 3, "herzsolo", h_p)
        else:
            add(f_pred - 60, 1, "frage", f_p)
            add(2 * (h_pred - 60), 2, "solo", h_p)
        out.sort(key=lambda o: (-o[0], -o[1]))
        return out

    def _auction(self, view: View, hand: list[str], legal: list[str]) -> str:
        opts = self._options(view, hand)
        level = {"frage": 1, "solo": 2, "herzsolo": 3}
        ok = {level[name.split(":")[0]] for _, _, name, _ in opts}
        if "hold" in legal:
            standing = 0
            for _, a in view.get("log", []):
                if a.startswith("bid:"):
                    standing = max(standing, level[a[4:]])
            return "hold" if standing in ok else "pass"
        if not opts:
            return "pass"
        best = "bid:" + opts[0][2].split(":")[0]
        if best in legal:
            return best
        bids = sorted((level[a[4:]], a) for a in legal if a.startswith("bid:") and level[a[4:]] in ok)
        return bids[0][1] if bids else "pass"

    def _trump(self, view: View, hand: list[str], legal: list[str]) -> str:
        n = view.get("players", 3)
        return max(legal, key=lambda a: (predict(hand, a.split(":")[1], "solo", n)[0], a))

    def _contract(self, view: View, hand: list[str], legal: list[str]) -> str:
        for _, _, name, _ in self._options(view, hand):
            if f"contract:{name}" in legal:
                return f"contract:{name}"
        if "pass" in legal:
            return "pass"
        # forced to name one: the one most likely to win
        n = view.get("players", 3)

        def chance(a: str) -> float:
            name = a.split(":", 1)[1]
            if name == "frage":
                return predict(hand, "H", "frage", n)[1]
            if name == "herzsolo":
                return predict(hand, "H", "solo", n)[1]
            if name.startswith("solo:"):
                return predict(hand, name[5:], "solo", n)[1]
            return -1.0
        return max(legal, key=lambda a: (chance(a), a))

    def _tout_sure(self, hand: list[str], trump: str | None) -> bool:
        if not trump:
            return False
        trumps = sorted((_s(c) for c in hand if c[0] == trump), reverse=True)
        top = [s == ORDER.index(r) for s, r in zip(trumps, "ATKQJ", strict=False)]
        side_ok = all(c[0] == trump or c[1] == "A" for c in hand)
        return len(trumps) >= 7 and all(top[:3]) and side_ok

    def _discard(self, view: View, hand: list[str], legal: list[str]) -> str:
        trump = view.get("trump")

        def cost(action: str) -> float:
            cards = action.split(":", 1)[1].split(",")
            total = 0.0
            for c in cards:
                if c[0] == trump:
                    total += 100 + _s(c)
                elif c[1] == "A":
                    total += 50
                else:
                    # discarded points count for the declarer: bank unguarded Tens and Kings
                    total -= _p(c) + 0.1 * _s(c)
            left = [c for c in hand if c not in cards]
            voids = sum(1 for s in SUITS if s != trump and not any(c[0] == s for c in left))
            return total - 4 * voids

        return min(legal, key=lambda a: (cost(a), a))

    # ------------------------------------------------------------------ Rufer
    def _call(self, view: View, hand: list[str], legal: list[str]) -> str:
        trump = view.get("trump")
        for rank in "ATKQ":
            a = f"call:{trump}{rank}"
            if a in legal:
                return a
        aces = [a for a in legal if a.endswith("A")]
        return aces[0] if aces else legal[0]

    def _give(self, view: View, hand: list[str], legal: list[str]) -> str:
        trump = view.get("trump")
        return min(legal, key=lambda a: (a[5] == trump, _s(a[5:]), _p(a[5:]), a))

    # ------------------------------------------------------------------ card play
    def _play(self, view: View, hand: list[str], legal: list[str]) -> str:
        cards = [a[5:] for a in legal]
        trump = view.get("trump")
        contract = view.get("contract") or ""
        trick = view.get("trick", [])
        me = view.get("seat")
        declarer = view.get("declarer")
        low_game = contract.startswith("bettel") or contract == "ramsch"
        if low_game:
            return "play:" + self._play_low(cards, trick, trump)
        played = {a[5:] for _, a in view.get("log", []) if a.startswith("play:")}
        if not trick:
            return "play:" + self._lead(cards, hand, trump, me == declarer, played)
        best_seat, best = winning(trick, trump)
        n = view.get("players", 3)
        last = len(trick) == n - 1
        on_table = sum(_p(c) for _, c in trick)
        partner_wins = me != declarer and best_seat != declarer
        if partner_wins:
            declarer_behind = not last and declarer is not None and declarer not in [s for s, _ in trick]
            safe = not declarer_behind or self._top(best, trump, played | set(hand))
            if safe:
                # schmieren: points onto the partner's trick, keeping trumps if possible
                return "play:" + max(cards, key=lambda c: (_p(c) - (30 if c[0] == trump else 0), -_s(c)))
            return "play:" + min(cards, key=lambda c: (_p(c), c[0] == trump, _s(c)))
        winners = [c for c in cards if beats(c, best, trump)]
        if winners:
            plain = [c for c in winners if c[0] != trump]
            if last or me == declarer and len(trick) == n - 1:
                if plain:   # safe: take the trick with the card worth most
                    return "play:" + max(plain, key=lambda c: (_p(c), -_s(c)))
                if on_table > 0 or me == declarer:
                    return "play:" + min(winners, key=_s)
                # a pointless trick is not worth a trump: keep it
            else:
                # someone still plays after me: win only with a card that stays on top
                # (a ruff of a side-suit lead counts as holding: over-ruffs are rare)
                sure = [c for c in winners if self._top(c, trump, played | set(hand) - {c})
                        or c[0] == trump and best[0] != trump]
                if plain:
                    sure_plain = [c for c in plain if c in sure]
                    if sure_plain:
                        return "play:" + max(sure_plain, key=lambda c: (_p(c), -_s(c)))
                    if on_table >= 10 or me == declarer:
                        return "play:" + min(winners, key=lambda c: (c[0] == trump, _s(c)))
                elif on_table > 0 or me == declarer:
                    return "play:" + min(winners, key=_s)
        return "play:" + min(cards, key=lambda c: (_p(c), c[0] == trump, _s(c)))

    @staticmethod
    def _top(card: str, trump: str | None, gone: set[str]) -> bool:
        """Is ``card`` the best card left of its suit (every higher one played or mine)?"""
        for r in ORDER[STRENGTH[card[1]] + 1:]:
            if card[0] + r not in gone:
                return False
        return True

    def _lead(self, cards: list[str], hand: list[str], trump: str | None, declarer: bool,
              played: set[str]) -> str:
        gone = played | set(hand)
        trumps = sorted((c for c in cards if c[0] == trump), key=_s, reverse=True)
        side = [c for c in cards if c[0] != trump]
        out_trumps = 0
        if trump:
            out_trumps = sum(1 for r in ORDER if trump + r not in gone)
        tops = [c for c in side if self._top(c, trump, gone - {c})]
        if declarer:
            if trumps and out_trumps:
                if self._top(trumps[0], trump, gone - {trumps[0]}):
                    return trumps[0]                       # draw trumps with the best one
                if len(trumps) >= out_trumps or len(trumps) >= 4:
                    return trumps[-1]                      # draw with a low one, keep the top
            if tops:
                return max(tops, key=lambda c: (_p(c), c))  # cash Aces and established Tens
            if trumps and not side:
                return trumps[0]
        else:
            if tops:
                return max(tops, key=lambda c: (_p(c), c))
        if side:
            # lead low from the longest side suit, never a bare Ten or King
            length = {s: sum(1 for c in side if c[0] == s) for s in SUITS}
            return min(side, key=lambda c: (_p(c) >= 4, -length[c[0]] if declarer else length[c[0]],
                                            _p(c), _s(c)))
        return trumps[-1] if trumps else min(cards, key=lambda c: (_p(c), _s(c)))

    def _play_low(self, cards: list[str], trick: list[list[Any]], trump: str | None) -> str:
        if trick:
            _, best = winning(trick, trump)
            losers = [c for c in cards if not beats(c, best, trump)]
            if losers:
                # duck with the highest card that still loses (gets rid of danger cards)
                return max(losers, key=lambda c: (_s(c), _p(c)))
            return min(cards, key=lambda c: (_p(c), _s(c)))
        return min(cards, key=lambda c: (_s(c), _p(c)))

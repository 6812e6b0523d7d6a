"""A heuristic Tapp player that sees only ``view(seat)`` and the legal action strings.

It bids from hand strength (trumps, Aces, Tens), keeps trumps and Aces when it discards, puts
points (Aces, Tens) on a partner's winning trick in defence, wins tricks cheaply when it can,
and plays low in Bettel and Ramsch. Fast and deterministic up to its ``rng`` tie-breaks.
"""

from __future__ import annotations

import random

ORDER = "6789JQKTA"  # Tapp order, weakest first
STRENGTH = {r: i for i, r in enumerate(ORDER)}
POINTS = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2}
SUITS = "HDCS"

# hand-strength thresholds (tuned loosely by self-play; see tests/test_tapp_bot.py)
FRAGE_AT = 9.0
SOLO_AT = 12.0
HERZSOLO_AT = 14.5
DURCH_AT = 24.0


def _s(card: str) -> int:
    return STRENGTH[card[1]]


def _p(card: str) -> int:
    return POINTS.get(card[1], 0)


def strength(hand: list[str], trump: str | None) -> float:
    """A rough count of the tricks and points a hand brings with ``trump`` as trumps."""
    score = 0.0
    for c in hand:
        suit, rank = c[0], c[1]
        if suit == trump:
            score += 2.0 + STRENGTH[rank] / 4.0
        elif rank == "A":
            score += 2.5
        elif rank == "T":
            same = [x for x in hand if x[0] == suit]
            score += 1.5 if any(x[1] == "A" for x in same) else 0.5
    return score


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


class TappHeuristic:
    """``choose(view, legal) -> action string``; uses nothing but the view."""

    name = "tapp-heuristic"

    def __init__(self, rng: random.Random | int | None = None):
        self.rng = rng if isinstance(rng, random.Random) else random.Random(rng)

    # ------------------------------------------------------------------ entry point
    def choose(self, view: dict, legal: list[str]) -> str:
        if len(legal) == 1:
            return legal[0]
        phase = view.get("phase")
        hand = view.get("hand", [])
        if phase == "auction":
            return self._auction(view, hand, legal)
        if phase == "trump":
            best = max((a for a in legal), key=lambda a: strength(hand, a.split(":")[1]))
            return best
        if phase == "discard":
            return self._discard(view, hand, legal)
        if phase == "tout":
            return "tout" if self._tout_sure(hand, view.get("trump")) and "tout" in legal else "no-tout"
        if phase == "declare":
            return "play" if self._best_contract(hand, view, legal=None) else "weg"
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
    def _want_level(self, view: dict, hand: list[str]) -> int:
        classic = view.get("ruleset") == "tapp/classic-1879"
        hearts = strength(hand, "H")
        if classic:
            if hearts >= HERZSOLO_AT:
                return 3
            if max(strength(hand, s) for s in "CSD") >= SOLO_AT:
                return 2
        elif hearts >= SOLO_AT:
            return 2
        return 1 if hearts >= FRAGE_AT else 0

    def _auction(self, view: dict, hand: list[str], legal: list[str]) -> str:
        want = self._want_level(view, hand)
        levels = {"bid:frage": 1, "bid:solo": 2, "bid:herzsolo": 3}
        if "hold" in legal:
            standing = 0
            for _, a in view.get("log", []):
                if a in levels:
                    standing = levels[a]
            return "hold" if standing <= want else "pass"
        bids = sorted((levels[a], a) for a in legal if a in levels)
        for level, a in bids:
            if level <= want:
                return a
        return "pass"

    def _tout_sure(self, hand: list[str], trump: str | None) -> bool:
        if not trump:
            return False
        trumps = sorted((_s(c) for c in hand if c[0] == trump), reverse=True)
        top = [s == ORDER.index(r) for s, r in zip(trumps, "ATKQJ")]
        side_ok = all(c[0] == trump or c[1] == "A" for c in hand)
        return len(trumps) >= 7 and all(top[:3]) and side_ok

    def _discard(self, view: dict, hand: list[str], legal: list[str]) -> str:
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

    def _contract_options(self, hand: list[str], view: dict) -> list[str]:
        """Contracts this hand should win, lowest rank first."""
        out = []
        hearts = strength(hand, "H")
        if hearts >= FRAGE_AT:
            out.append("frage")
        best_suit = max("CSD", key=lambda s: strength(hand, s))
        if strength(hand, best_suit) >= SOLO_AT:
            out.append(f"solo:{best_suit}")
        if hearts >= HERZSOLO_AT:
            out.append("herzsolo")
        if bettel_ok(hand):
            out.append("bettel")
        if self._tout_sure(hand, best_suit) or strength(hand, best_suit) >= DURCH_AT:
            out.append(f"durch:{best_suit}")
        if self._tout_sure(hand, "H") or hearts >= DURCH_AT:
            out.append("herzdurch")
        return out

    def _best_contract(self, hand: list[str], view: dict, legal) -> str | None:
        opts = self._contract_options(hand, view)
        if legal is not None:
            opts = [o for o in opts if f"contract:{o}" in legal]
        return opts[-1] if opts else None

    def _contract(self, view: dict, hand: list[str], legal: list[str]) -> str:
        best = self._best_contract(hand, view, legal)
        if best:
            return f"contract:{best}"
        if "pass" in legal:
            return "pass"
        # forced to name one: the cheapest, with the best suit
        for a in ("contract:frage", "contract:solo:C"):
            if a in legal:
                return a
        return legal[0]

    # ------------------------------------------------------------------ Rufer
    def _call(self, view: dict, hand: list[str], legal: list[str]) -> str:
        trump = view.get("trump")
        for rank in "ATKQ":
            a = f"call:{trump}{rank}"
            if a in legal:
                return a
        aces = [a for a in legal if a.endswith("A")]
        return aces[0] if aces else legal[0]

    def _give(self, view: dict, hand: list[str], legal: list[str]) -> str:
        trump = view.get("trump")
        return min(legal, key=lambda a: (a[5] == trump, _s(a[5:]), _p(a[5:]), a))

    # ------------------------------------------------------------------ card play
    def _play(self, view: dict, hand: list[str], legal: list[str]) -> str:
        cards = [a[5:] for a in legal]
        trump = view.get("trump")
        contract = view.get("contract") or ""
        trick = view.get("trick", [])
        me = view.get("seat")
        declarer = view.get("declarer")
        low_game = contract.startswith("bettel") or contract == "ramsch"
        if low_game:
            return "play:" + self._play_low(cards, trick, trump)
        if not trick:
            return "play:" + self._lead(cards, trump, me == declarer)
        best_seat, best = trick[0]
        for seat, c in trick[1:]:
            if beats(c, best, trump):
                best_seat, best = seat, c
        n = view.get("players", 3)
        last = len(trick) == n - 1
        partner_wins = me != declarer and best_seat != declarer
        if partner_wins:
            declarer_behind = not last and declarer is not None and declarer not in [s for s, _ in trick]
            safe = not declarer_behind or (best[0] == trump and best[1] in "AT") or (
                best[0] != trump and best[1] == "A" and not any(c[0] == trump for c in cards))
            if safe:
                # schmieren: points onto the partner's trick, keeping trumps if possible
                return "play:" + max(cards, key=lambda c: (_p(c) - (30 if c[0] == trump else 0), -_s(c)))
            return "play:" + min(cards, key=lambda c: (_p(c), c[0] == trump, _s(c)))
        winners = [c for c in cards if beats(c, best, trump)]
        if winners:
            # win as cheaply as possible; prefer a non-trump of the led suit
            return "play:" + min(winners, key=lambda c: (c[0] == trump, _s(c)))
        return "play:" + min(cards, key=lambda c: (_p(c), c[0] == trump, _s(c)))

    def _lead(self, cards: list[str], trump: str | None, declarer: bool) -> str:
        aces = [c for c in cards if c[1] == "A" and c[0] != trump]
        trumps = [c for c in cards if c[0] == trump]
        if declarer and trumps:
            return max(trumps, key=_s)
        if aces:
            return aces[0]
        side = [c for c in cards if c[0] != trump] or cards
        return min(side, key=lambda c: (_p(c), _s(c)))

    def _play_low(self, cards: list[str], trick: list, trump: str | None) -> str:
        if trick:
            best = trick[0][1]
            for _, c in trick[1:]:
                if beats(c, best, trump):
                    best = c
            losers = [c for c in cards if not beats(c, best, trump)]
            if losers:
                # duck with the highest card that still loses (gets rid of danger cards)
                return max(losers, key=lambda c: (_s(c), _p(c)))
            return min(cards, key=lambda c: (_p(c), _s(c)))
        return min(cards, key=lambda c: (_s(c), _p(c)))

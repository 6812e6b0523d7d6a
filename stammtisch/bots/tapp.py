"""A heuristic Tapp player that reads only its seat's observation (``state.observation(seat)``)
and the legal actions.

It bids from a point model (``features`` · ``MODEL``: trumps, top trumps, side Aces and Tens,
voids, singletons) and declares only the contract of best expected value that it wins with at
least ``MIN_WIN`` chance; Bettel with a hand that ducks every suit, Durch only with a sure Tout.
In play it remembers the cards played and plays for its side (the declarer alone, or the
defenders, the Rufer holder among them): the declarer draws trumps and cashes top cards;
defenders smear points onto a partner's trick that holds; followers win with cards that stay
on top of the opponents still to play, take a trick no opponent can overtake with the card
worth most, and spend no trump on a pointless trick, except defenders against every trick
(Rufer, Durch, Tout), where any trick beats the contract; it plays low in Bettel and Ramsch.
Fast and deterministic up to its ``rng`` tie-breaks.

Cards are pack indices and hands bit masks (``stammtisch.cards``); ties between cards are broken
by their names where a person would read them in a list (``CardTables.name_order``).
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Final

from ..cards import SUITS, TAPP_POINTS, Pack
from ..games.tapp import MODERN_CONTRACTS, Kind, Phase
from ..games.tapp.contracts import MODERN_INDEX

if TYPE_CHECKING:
    from ..games.tapp.observation import TappObservation
    from . import Seen

ORDER: Final = "6789JQKTA"  # Tapp order, weakest first
STRENGTH: Final = {r: i for i, r in enumerate(ORDER)}

#: Point model: expected declarer card points = weights · features(hand, trump), and the
#: residual spread, per contract kind and table size. Fitted by least squares on 5000 deals
#: each in which one seat was forced into the contract and all seats played this bot's card
#: play (Modern Tapp rules; a suit solo plays like any solo). Win chance = Φ((pred − 60.5)/sd).
MODEL: Final = {
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
MIN_WIN: Final = 0.6
#: the historic bids by name
LEVEL: Final = {"frage": 1, "solo": 2, "herzsolo": 3}
HEARTS: Final = 0  # SUITS.index("H")


class CardTables:
    """Per pack, per card: its suit, strength (``ORDER``), card points, the stronger cards of
    its suit, and the place of its name in alphabetical order (ties broken by name)."""

    def __init__(self, pack: Pack) -> None:
        size = pack.size
        rps = pack.ranks_per_suit
        names = pack.cards
        self.pack = pack.name
        self.size = size
        self.names = names
        self.suit_masks: tuple[int, ...] = pack.suit_masks
        self.suit = tuple([c // rps for c in range(size)])
        self.strength = tuple([STRENGTH[names[c][1]] for c in range(size)])
        self.points = tuple([TAPP_POINTS.get(names[c][1], 0) for c in range(size)])
        order = sorted(range(size), key=lambda c: names[c])
        self.name_order = tuple([order.index(c) for c in range(size)])
        #: per card, the cards of its suit that beat it (higher in the pack's in-suit order)
        self.higher = tuple([pack.suit_masks[c // rps] & ~((2 << c) - 1) for c in range(size)])

        def of_rank(rank: str) -> int:
            return sum(1 << c for c in range(size) if names[c][1] == rank)

        self.aces = of_rank("A")
        self.tens = of_rank("T")
        self.kings = of_rank("K")
        self.index = pack.index


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


def features(hand: int, trump: int, t: CardTables) -> list[float]:
    """Hand features for the point model (``trump``: the index of the suit that would be trumps)."""
    nt = voids = single = side_a = t_guard = t_bare = side_k = 0
    ta = tt = tk = False
    pts = 0
    for c in _cards(hand):
        pts += t.points[c]
    for s in range(4):
        m = hand & t.suit_masks[s]
        if s == trump:
            nt = m.bit_count()
            ta, tt, tk = bool(m & t.aces), bool(m & t.tens), bool(m & t.kings)
            continue
        k = m.bit_count()
        if not k:
            voids += 1
        elif k == 1:
            single += 1
        if m & t.aces:
            side_a += 1
            if m & t.tens:
                t_guard += 1
        elif m & t.tens:
            t_bare += 1
        if m & t.kings:
            side_k += 1
    return [1.0, nt, ta, tt, tk, nt * nt, side_a, t_guard, t_bare, side_k, voids, single, pts,
            nt * voids]


_PREDICTED: dict[tuple[int, int, str, int, str], tuple[float, float]] = {}


def predict(hand: int, trump: int, kind: str, players: int, t: CardTables) -> tuple[float, float]:
    """(expected declarer card points, win chance) of ``kind`` ("frage"/"solo") with the suit of
    index ``trump`` as trumps. A pure function of its arguments, remembered (bounded)."""
    key = (hand, trump, kind, players, t.pack)
    got = _PREDICTED.get(key)
    if got is None:
        weights, sd = MODEL[(kind, 4 if players >= 4 else 3)]
        pred = sum(w * f for w, f in zip(weights, features(hand, trump, t), strict=True))
        got = (pred, 0.5 * (1.0 + math.erf((pred - 60.5) / (sd * math.sqrt(2.0)))))
        if len(_PREDICTED) >= 1 << 16:
            _PREDICTED.clear()
        _PREDICTED[key] = got
    return got


def bettel_ok(hand: int, t: CardTables) -> bool:
    """Every suit held is low enough that the hand can duck every trick (rough): the k-th
    lowest card held of a suit is among its k+1 lowest ranks."""
    for s in range(4):
        for k, c in enumerate(_cards(hand & t.suit_masks[s])):
            if t.strength[c] > k + 1:
                return False
    return True


def beats(card: int, best: int, trump: int, t: CardTables) -> bool:
    if t.suit[card] == t.suit[best]:
        return t.strength[card] > t.strength[best]
    return t.suit[card] == trump


def winning(trick: tuple[tuple[int, int], ...], trump: int, t: CardTables) -> tuple[int, int]:
    """(seat, card) winning a non-empty trick so far."""
    best_seat, best = trick[0]
    for seat, c in trick[1:]:
        if beats(c, best, trump, t):
            best_seat, best = seat, c
    return best_seat, best


class TappHeuristic:
    """``act(state, seat) -> action id``; reads nothing but the seat's observation."""

    name = "tapp-heuristic"

    def __init__(self, rng: random.Random | int | None = None):
        self.rng = rng if isinstance(rng, random.Random) else random.Random(rng)

    def act(self, state: Seen, seat: int) -> int:
        legal = state.legal_actions()
        if len(legal) == 1:
            return legal[0]
        return self.decide(state.observation(seat), legal)

    # ------------------------------------------------------------------ entry point
    def decide(self, obs: TappObservation, legal: list[int]) -> int:
        """The action for the seat of ``obs`` among ``legal`` (the engine's ids, ascending)."""
        if len(legal) == 1:
            return legal[0]
        g = obs.game
        t = card_tables(g.pack)
        phase = obs.phase
        hand = obs.hand
        if phase == Phase.AUCTION:
            return self._auction(obs, t, legal)
        if phase == Phase.TRUMP:
            return max(legal, key=lambda a: (predict(hand, a - g.A_TRUMP, "solo", obs.players, t)[0],
                                             SUITS[a - g.A_TRUMP]))
        if phase == Phase.DISCARD:
            return self._discard(obs, t, legal)
        if phase == Phase.TOUT:
            return g.A_TOUT if self._tout_sure(hand, obs.trump, t) and g.A_TOUT in legal else g.A_NOTOUT
        if phase == Phase.DECLARE:
            return g.A_PLAY if self._options(obs, t) else g.A_WEG
        if phase == Phase.CONTRACT:
            return self._contract(obs, t, legal)
        if phase == Phase.CALL:
            return self._call(obs, t, legal)
        if phase == Phase.GIVE:
            trump = obs.trump
            return min(legal, key=lambda a: (t.suit[a - 2 * g.N] == trump, t.strength[a - 2 * g.N],
                                             t.points[a - 2 * g.N], t.name_order[a - 2 * g.N]))
        if phase == Phase.PLAY:
            return self._play(obs, t, legal)
        return self.rng.choice(legal)

    # ------------------------------------------------------------------ bidding
    def _options(self, obs: TappObservation, t: CardTables) -> list[tuple[float, int, str, float]]:
        """Contracts worth declaring: (expected value, rank, name, win chance), best first.

        Historic rule sets pay in proportion to the points over 60 (Frage ×1, Solo ×2 in
        Württemberg Tarock; ÷4, ÷2, ÷1 in Classic Tapp), Modern Tapp a fixed value per
        contract, so the expected value is factor × (points − 60) or value × (2p − 1).
        Only contracts won with at least ``MIN_WIN`` chance are offered.
        """
        rules = obs.rules
        n = obs.players
        hand = obs.hand
        out: list[tuple[float, int, str, float]] = []

        def add(ev: float, rank: int, name: str, p: float) -> None:
            if p >= MIN_WIN:
                out.append((ev, rank, name, p))

        f_pred, f_p = predict(hand, HEARTS, "frage", n, t)
        h_pred, h_p = predict(hand, HEARTS, "solo", n, t)
        suit = max((2, 3, 1), key=lambda s: predict(hand, s, "solo", n, t)[0])  # C, S, D
        s_pred, s_p = predict(hand, suit, "solo", n, t)
        letter = SUITS[suit]
        if rules.settlement == "modern":  # a fixed value per contract
            frage_value = rules.frage_value
            add(frage_value * (2 * f_p - 1), 1, "frage", f_p)
            add(5 * (2 * s_p - 1), 2, f"solo:{letter}", s_p)
            add(10 * (2 * h_p - 1), 3, "herzsolo", h_p)
            if bettel_ok(hand, t):
                add(15 * 0.5, 4, "bettel", 0.75)
            if self._tout_sure(hand, suit, t):
                add(30, 8, f"durch:{letter}", 0.95)
            if self._tout_sure(hand, HEARTS, t):
                add(60, 9, "herzdurch", 0.95)
        elif rules.settlement == "anton":  # ceil(x / d), d = 4, 2, 1
            add((f_pred - 60) / 4, 1, "frage", f_p)
            add((s_pred - 60) / 2, 2, f"solo:{letter}", s_p)
            add(h_pred - 60, 3, "herzsolo", h_p)
        else:
            add(f_pred - 60, 1, "frage", f_p)
            add(2 * (h_pred - 60), 2, "solo", h_p)
        out.sort(key=lambda o: (-o[0], -o[1]))
        return out

    def _auction(self, obs: TappObservation, t: CardTables, legal: list[int]) -> int:
        g = obs.game
        opts = self._options(obs, t)
        ok = {LEVEL[name.split(":")[0]] for _, _, name, _ in opts}
        if g.A_HOLD in legal:
            standing = obs.standing - g.A_BID + 1 if obs.standing >= 0 else 0
            return g.A_HOLD if standing in ok else g.A_PASS
        if not opts:
            return g.A_PASS
        best = g.A_BID + LEVEL[opts[0][2].split(":")[0]] - 1
        if best in legal:
            return best
        bids = [a for a in legal if g.A_BID <= a < g.A_BID + 3 and a - g.A_BID + 1 in ok]
        return bids[0] if bids else g.A_PASS

    def _contract(self, obs: TappObservation, t: CardTables, legal: list[int]) -> int:
        g = obs.game
        for _, _, name, _ in self._options(obs, t):
            a = g.A_CONTRACT + MODERN_INDEX[name]
            if a in legal:
                return a
        if g.A_PASS in legal:
            return g.A_PASS
        # forced to name one: the one most likely to win
        n = obs.players
        hand = obs.hand

        def chance(a: int) -> float:
            name = MODERN_CONTRACTS[a - g.A_CONTRACT].name
            if name == "frage":
                return predict(hand, HEARTS, "frage", n, t)[1]
            if name == "herzsolo":
                return predict(hand, HEARTS, "solo", n, t)[1]
            if name.startswith("solo:"):
                return predict(hand, SUITS.index(name[5:]), "solo", n, t)[1]
            return -1.0

        return max(legal, key=lambda a: (chance(a), g.action_to_string(a)))

    def _tout_sure(self, hand: int, trump: int, t: CardTables) -> bool:
        """Seven trumps or more with the Ace, Ten and King, and nothing beside but Aces."""
        if trump < 0:
            return False
        suit = t.suit_masks[trump]
        top = suit & t.aces & hand and suit & t.tens & hand and suit & t.kings & hand
        return (hand & suit).bit_count() >= 7 and bool(top) and not hand & ~suit & ~t.aces

    def _discard(self, obs: TappObservation, t: CardTables, legal: list[int]) -> int:
        g = obs.game
        trump = obs.trump
        tmask = t.suit_masks[trump] if trump >= 0 else 0
        hand = obs.hand
        strength, points, aces = t.strength, t.points, t.aces
        # what each card discarded adds to the cost (keep trumps and Aces; discarded points
        # count for the declarer: bank unguarded Tens and Kings)
        costs = [(100 + strength[c]) if (tmask >> c) & 1 else 50 if (aces >> c) & 1
                 else -(points[c] + 0.1 * strength[c]) for c in range(t.size)]
        others = [s for s in range(4) if s != trump]
        best: list[int] = []
        low = 0.0
        base = g.A_DISCARD
        for a in legal:
            mask = a - base
            total = 0.0
            m = mask
            while m:
                bit = m & -m
                total += costs[bit.bit_length() - 1]
                m ^= bit
            left = hand & ~mask
            voids = 0
            for s in others:
                if not left & t.suit_masks[s]:
                    voids += 1
            cost = total - 4 * voids
            if not best or cost < low:
                best = [a]
                low = cost
            elif cost == low:
                best.append(a)
        if len(best) == 1:
            return best[0]
        return min(best, key=g.action_to_string)

    # ------------------------------------------------------------------ Rufer
    def _call(self, obs: TappObservation, t: CardTables, legal: list[int]) -> int:
        g = obs.game
        if obs.trump >= 0:
            for rank in "ATKQ":
                a = g.N + t.index[SUITS[obs.trump] + rank]
                if a in legal:
                    return a
        aces = [a for a in legal if (t.aces >> (a - g.N)) & 1]
        return aces[0] if aces else legal[0]

    # ------------------------------------------------------------------ card play
    def _play(self, obs: TappObservation, t: CardTables, legal: list[int]) -> int:
        cards = legal
        trump = obs.trump
        trick = obs.trick
        me = obs.seat
        declarer = obs.declarer
        points, strength, suit = t.points, t.strength, t.suit
        if obs.kind == Kind.BETTEL or obs.kind == Kind.RAMSCH:
            return self._play_low(cards, trick, trump, t)
        played = obs.played
        hand = obs.hand
        if not trick:
            return self._lead(cards, hand, trump, me == declarer, played, t)
        best_seat, best = winning(trick, trump, t)
        last = len(trick) == obs.players - 1
        on_table = 0
        for _, c in trick:
            on_table += points[c]
        gone = played | hand
        # The sides: the declarer alone against the defenders (in Rufer the called card's
        # holder is a defender too, rules reference §3.4). Only an opponent still to play can
        # take a trick away from the side that wins it now: for a defender that is the declarer.
        defender = me != declarer
        opponent_behind = not last and (not defender or declarer >= 0 and all(s != declarer for s, _ in trick))
        # against every trick (Rufer, Durch, a Tout) one trick beats the contract, whatever its points
        keen = not defender or obs.kind == Kind.ALL or obs.tout
        winners = [c for c in cards if beats(c, best, trump, t)]
        if defender and best_seat != declarer:  # the partner wins the trick
            if not opponent_behind or not t.higher[best] & ~gone:
                # schmieren: points onto the partner's trick, keeping trumps if possible
                return max(cards, key=lambda c: (points[c] - (30 if suit[c] == trump else 0), -strength[c]))
            if keen:  # take it over with a card the declarer cannot beat
                sure = [c for c in winners if suit[c] != trump and not t.higher[c] & ~gone]
                if sure:
                    return max(sure, key=lambda c: (points[c], -strength[c]))
            return min(cards, key=lambda c: (points[c], suit[c] == trump, strength[c]))
        if winners:
            plain = [c for c in winners if suit[c] != trump]
            if not opponent_behind:
                if plain:  # safe: take the trick with the card worth most
                    return max(plain, key=lambda c: (points[c], -strength[c]))
                if on_table > 0 or keen:
                    return min(winners, key=lambda c: strength[c])
                # a pointless trick is not worth a trump: keep it
            else:
                # an opponent still plays after me: win only with a card that stays on top
                # (a ruff of a side-suit lead counts as holding: over-ruffs are rare)
                if plain:
                    sure_plain = [c for c in plain if not t.higher[c] & ~gone]
                    if sure_plain:
                        return max(sure_plain, key=lambda c: (points[c], -strength[c]))
                    if on_table >= 10 or keen:
                        return min(winners, key=lambda c: (suit[c] == trump, strength[c]))
                elif on_table > 0 or keen:
                    return min(winners, key=lambda c: strength[c])
        return min(cards, key=lambda c: (points[c], suit[c] == trump, strength[c]))

    def _lead(self, cards: list[int], hand: int, trump: int, declarer: bool, played: int,
              t: CardTables) -> int:
        points, strength, suit = t.points, t.strength, t.suit
        gone = played | hand
        trumps = sorted((c for c in cards if suit[c] == trump), key=lambda c: strength[c], reverse=True)
        side = [c for c in cards if suit[c] != trump]
        # the trump ranks of ``ORDER`` not seen (a rank the pack lacks counts as not seen)
        out_trumps = len(ORDER) - (gone & t.suit_masks[trump]).bit_count() if trump >= 0 else 0
        tops = [c for c in side if not t.higher[c] & ~gone]
        if declarer:
            if trumps and out_trumps:
                if not t.higher[trumps[0]] & ~gone:
                    return trumps[0]                       # draw trumps with the best one
                if len(trumps) >= out_trumps or len(trumps) >= 4:
                    return trumps[-1]                      # draw with a low one, keep the top
            if tops:
                return max(tops, key=lambda c: (points[c], t.name_order[c]))  # cash Aces, Tens
            if trumps and not side:
                return trumps[0]
        elif tops:
            return max(tops, key=lambda c: (points[c], t.name_order[c]))
        if side:
            # lead low from the longest side suit, never a bare Ten or King
            length = [0, 0, 0, 0]
            for c in side:
                length[suit[c]] = length[suit[c]] + 1
            return min(side, key=lambda c: (points[c] >= 4, -length[suit[c]] if declarer else length[suit[c]],
                                            points[c], strength[c]))
        return trumps[-1] if trumps else min(cards, key=lambda c: (points[c], strength[c]))

    def _play_low(self, cards: list[int], trick: tuple[tuple[int, int], ...], trump: int, t: CardTables) -> int:
        points, strength = t.points, t.strength
        if trick:
            _, best = winning(trick, trump, t)
            losers = [c for c in cards if not beats(c, best, trump, t)]
            if losers:
                # duck with the highest card that still loses (gets rid of danger cards)
                return max(losers, key=lambda c: (strength[c], points[c]))
            return min(cards, key=lambda c: (points[c], strength[c]))
        return min(cards, key=lambda c: (strength[c], points[c]))

"""World sampling: what ``state.resample(seat, rng)`` of both engines shares.

A *world* is where every card lies now that ``seat`` cannot place: the other hands, the
talon or tapp (the Tippen talon in the order still to come), cards folded, discarded or
exchanged away unseen, an unturned or unseen upcard, plus the few hidden facts the engines
record beside the cards (the Rufer holder and the card given to him, the card a modern
sniffer or knocker took unseen). ``known_mask(seat)`` is the one source of which cards'
places the seat knows; those stay where they are. Two cards are public by identity but not
by place: the called Rufer card after the give (with the declarer, or given back to the
holder) and a public trump card its dealer may have laid away face down (in his hand, folded
cards or discards); the sampler keeps each within those places.

The consistent worlds are the ones in which every hidden card lies in a place of the right
size and no past play would have been illegal from the sampled hand: a player who did not
follow suit was void in it; who did not trump held no trump where he had to; who did not
head the trick held no higher card (``trick_forbidden`` derives this from
``tricks.legal_follows`` exactly). Every such constraint is a per-place *forbidden* mask on
a hand as it is now (hands only shrink during play, and the cards played since are known).

``deal_uniform`` draws uniformly over all consistent deals of a card pool into places:
first by rejection from unconstrained uniform deals (each success is uniform over the
consistent deals), and when that keeps failing by exact counting: places with the same
forbidden mask are merged and the unconstrained ones become one free place; the cards are
grouped by the constrained places that admit them, and a memoised count over "how many cards
of each group are left" gives each place's choice its exact weight (products of binomials).
Both stages draw uniformly, so their mixture is uniform.

What is uniform: the places of the hidden cards now (the talon in order), together with the
hidden facts that change which places are possible (the Rufer holder, with the card given
back to him, which may be the called card itself; the card a modern sniffer or knocker took
unseen): the weight of such a fact is
the number of deals it allows, as a uniformly shuffled deck would give it. Facts that only
the history records (which of a player's cards he drew from the talon, which of a Frage
declarer's cards lay in the tapp, the order of the dealt hands) are drawn uniformly among the
consistent ones afterwards; no rule reads them after they happened. After a Tapp deal the
settlement shows what the tapp was worth: a sampled tapp keeps its card points.

Each engine owns its sampler beside its ``known_mask`` (``tippen.sampling.resample_tippen``,
``tapp.sampling.resample_tapp``, as OpenSpiel keeps ``ResampleFromInfostate`` beside
``KnowsLocation``): the one adapter that reads the engine's internals, it lists the hidden
places and constraints and writes a sampled world into a ``clone()``, so that the result plays
on without a replay. The history fields that no rule reads after the deal (the Tippen ``deck``
and the talon already drawn, the Tapp ``tapp0``) are rebuilt consistently from the sampled
world. This module is the engine-free part they share, and imports no engine.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from math import comb
from typing import TypeVar

from ..cards import cards_in
from .tricks import higher_in_suit

#: (size, forbidden mask) of one place that receives hidden cards
Place = tuple[int, int]

#: rejection tries before the exact sampler takes over
REJECTION_TRIES = 24


# ---------------------------------------------------------------------------- constraints
def trick_forbidden(card: int, led_suit_mask: int, trump_mask: int, winning_card: int,
                    winning_suit_mask: int, must_trump: str = "always", head: bool = False) -> int:
    """The cards a follower cannot have held when he played ``card`` legally.

    Exactly: for a hand ``H`` holding ``card``, ``card`` is in ``tricks.legal_follows(H, …)``
    iff ``H`` holds none of the returned mask (the cases of ``legal_follows`` read backwards).
    """
    bit = 1 << card
    trumped = bool((1 << winning_card) & trump_mask) and not led_suit_mask & trump_mask
    if bit & led_suit_mask:
        if head and not trumped and not bit & higher_in_suit(winning_card, winning_suit_mask):
            return higher_in_suit(winning_card, winning_suit_mask)
        return 0
    forbidden = led_suit_mask
    must = must_trump == "always" or (must_trump == "untrumped" and not trumped)
    if not must:
        return forbidden
    if bit & trump_mask:
        if head and trumped and not bit & higher_in_suit(winning_card, winning_suit_mask):
            forbidden |= higher_in_suit(winning_card, winning_suit_mask)
        return forbidden
    return forbidden | trump_mask


# ---------------------------------------------------------------------------- uniform deals
def cards_mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _compositions(n: int, caps: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every way to take ``n`` cards from groups holding ``caps`` cards each."""
    if not caps:
        if n == 0:
            yield ()
        return
    rest_max = sum(caps[1:])
    for k in range(min(n, caps[0]), max(0, n - rest_max) - 1, -1):
        for rest in _compositions(n - k, caps[1:]):
            yield (k, *rest)


class _Plan:
    """The exact count of deals for one shape of problem, memoised (a bot asks many times).

    Places with the same forbidden mask are merged (a uniform deal into the merged place,
    split at random, is a uniform deal into the parts), and the places that forbid nothing
    come last as one place that takes whatever is left. Cards are grouped by the constrained
    places that admit them; the state of the count is how many cards of each group are left.
    """

    def __init__(self, sizes: tuple[int, ...], admits: tuple[tuple[bool, ...], ...]):
        self.sizes = sizes  # the constrained (merged) places
        self.admits = admits  # per place, per group: may the place take the group's cards
        self.memo: dict[tuple[int, tuple[int, ...]], int] = {}

    def options(self, j: int, left: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], int]]:
        """The ways place ``j`` can take its cards from the groups: (per group, ways)."""
        admits = self.admits[j]
        idx = [t for t in range(len(left)) if admits[t] and left[t]]
        for comp in _compositions(self.sizes[j], [left[t] for t in idx]):
            take = [0] * len(left)
            ways = 1
            for t, k in zip(idx, comp, strict=True):
                take[t] = k
                ways *= comb(left[t], k)
            yield tuple(take), ways

    def count(self, j: int, left: tuple[int, ...]) -> int:
        if j == len(self.sizes):
            return 1  # the free place takes the rest (its size is what is left)
        key = (j, left)
        got = self.memo.get(key)
        if got is None:
            got = 0
            for take, ways in self.options(j, left):
                got += ways * self.count(j + 1, tuple(a - b for a, b in zip(left, take, strict=True)))
            self.memo[key] = got
        return got


_PLANS: dict[tuple[object, ...], _Plan] = {}


def _problem(pool: int, places: Sequence[Place]) -> tuple[_Plan, list[list[int]], list[list[int]], list[int]]:
    """The plan, the cards per group, the original places behind each merged constrained
    place, and the original places merged into the free place."""
    merged: dict[int, list[int]] = {}
    free: list[int] = []
    for j, (size, forbidden) in enumerate(places):
        if not size:
            continue
        if forbidden & pool:
            merged.setdefault(forbidden & pool, []).append(j)
        else:
            free.append(j)
    masks = list(merged)
    groups: dict[tuple[bool, ...], list[int]] = {}
    for c in cards_in(pool):
        groups.setdefault(tuple(not (m >> c) & 1 for m in masks), []).append(c)
    keys = sorted(groups)
    sizes = tuple(sum(places[j][0] for j in merged[m]) for m in masks)
    admits = tuple(tuple(key[i] for key in keys) for i in range(len(masks)))
    shape = (sizes, admits, tuple(len(groups[k]) for k in keys))
    plan = _PLANS.get(shape)
    if plan is None:
        if len(_PLANS) > 256:
            _PLANS.clear()
        plan = _PLANS[shape] = _Plan(sizes, admits)
    return plan, [groups[k] for k in keys], [merged[m] for m in masks], free


def count_deals(pool: int, places: Sequence[Place]) -> int:
    """The number of deals of ``pool`` into ``places`` (sets: order inside a place does not
    count) that put no card where it is forbidden."""
    if sum(size for size, _ in places) != pool.bit_count():
        return 0
    plan, cards, behind, free = _problem(pool, places)
    total = plan.count(0, tuple(len(g) for g in cards))
    # the merged places split their cards in every way; so does the free place
    for parts in [*behind, free]:
        left = sum(places[j][0] for j in parts)
        for j in parts:
            total *= comb(left, places[j][0])
            left -= places[j][0]
    return total


def _split(cards: list[int], parts: list[int], places: Sequence[Place], out: list[int],
           rng: random.Random) -> None:
    rng.shuffle(cards)
    pos = 0
    for j in parts:
        size = places[j][0]
        out[j] = cards_mask(cards[pos:pos + size])
        pos += size


def _deal_exact(pool: int, places: Sequence[Place], rng: random.Random) -> list[int]:
    plan, cards, behind, free = _problem(pool, places)
    left = tuple(len(g) for g in cards)
    remaining = [g[:] for g in cards]
    out = [0] * len(places)
    if plan.count(0, left) == 0:
        raise ValueError("no deal satisfies the constraints (the state contradicts itself)")
    for j in range(len(plan.sizes)):
        r = rng.randrange(plan.count(j, left))
        for take, ways in plan.options(j, left):
            after = tuple(a - b for a, b in zip(left, take, strict=True))
            weight = ways * plan.count(j + 1, after)
            if r < weight:
                break
            r -= weight
        else:  # pragma: no cover - the weights add up to the count
            raise AssertionError("exact sampler: weights do not add up")
        got: list[int] = []
        for t, k in enumerate(take):
            if k:
                chosen = rng.sample(remaining[t], k)
                got.extend(chosen)
                remaining[t] = [c for c in remaining[t] if c not in chosen]
        _split(got, behind[j], places, out, rng)
        left = after
    _split([c for g in remaining for c in g], free, places, out, rng)
    return out


def deal_uniform(pool: int, places: Sequence[Place], rng: random.Random,
                 tries: int = REJECTION_TRIES) -> list[int]:
    """Deal the cards of ``pool`` into ``places`` (``(size, forbidden)``; sizes add up to the
    pool), uniformly over all deals with no card in a place that forbids it. Returns the
    mask each place receives."""
    cards = cards_in(pool)
    if sum(size for size, _ in places) != len(cards):
        raise ValueError(f"{len(cards)} hidden cards for places of {sum(s for s, _ in places)}")
    constrained = any(forbidden & pool for size, forbidden in places if size)
    for _ in range(tries if constrained else 1):
        rng.shuffle(cards)
        out = []
        pos = 0
        for size, forbidden in places:
            m = cards_mask(cards[pos:pos + size])
            if m & forbidden:
                break
            out.append(m)
            pos += size
        else:
            return out
    return _deal_exact(pool, places, rng)


def choose_weighted(weights: Sequence[int], rng: random.Random) -> int:
    """An index drawn with probability proportional to its (big int) weight."""
    r = rng.randrange(sum(weights))
    for i, w in enumerate(weights):
        if r < w:
            return i
        r -= w
    raise AssertionError("unreachable")


def random_subset(cards: int, k: int, rng: random.Random) -> int:
    return cards_mask(rng.sample(cards_in(cards), k))


def shuffle(items: list[int], rng: random.Random) -> None:
    """``rng.shuffle(items)``: the same order from the same state of ``rng``, compiled.

    ``random.Random.shuffle`` is a Fisher–Yates shuffle drawing each swap with ``_randbelow``
    (``getrandbits`` of the bound's bit length, drawn again while not below the bound); this is
    it step for step, without the interpreter's cost per card (a fifth of a simulated Tippen
    deal). A generator of another class (a subclass may draw otherwise) shuffles itself.
    """
    if type(rng) is not random.Random:
        rng.shuffle(items)
        return
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        n = i + 1
        k = n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        items[i], items[j] = items[j], items[i]


def shuffled(cards: int, rng: random.Random) -> list[int]:
    out = cards_in(cards)
    rng.shuffle(out)
    return out


World = TypeVar("World")


def until_accepted(draw: Callable[[], tuple[bool, World]]) -> World:
    """Draw until a draw is accepted (rejection on top of a uniform draw stays uniform)."""
    while True:
        ok, world = draw()
        if ok:
            return world


def plays_by(log: Sequence[tuple[int, int]], num_cards: int, seat: int, after: int = -1) -> int:
    """The cards ``seat`` played (log entries after index ``after``)."""
    m = 0
    for i, (s, a) in enumerate(log):
        if s == seat and a < num_cards and i > after:
            m |= 1 << a
    return m

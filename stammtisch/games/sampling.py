"""World sampling: ``state.resample(seat, rng)`` for both engines.

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

The per-engine functions (``resample_tippen``, ``resample_tapp``) are the one adapter that
reads engine internals: they list the hidden places and constraints and write a sampled world
into a ``clone()``, so that the result plays on without a replay. The history fields that
no rule reads after the deal (the Tippen ``deck`` and the talon already drawn, the Tapp
``tapp0``) are rebuilt consistently from the sampled world.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from math import comb
from typing import TYPE_CHECKING, TypeVar

from ..cards import cards_in
from .tricks import higher_in_suit

if TYPE_CHECKING:
    from .tapp.state import TappState
    from .tippen import TippenState

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
def _mask(cards: Sequence[int]) -> int:
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
        out[j] = _mask(cards[pos:pos + size])
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
            m = _mask(cards[pos:pos + size])
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


def _random_subset(cards: int, k: int, rng: random.Random) -> int:
    return _mask(rng.sample(cards_in(cards), k))


def _shuffled(cards: int, rng: random.Random) -> list[int]:
    out = cards_in(cards)
    rng.shuffle(out)
    return out


World = TypeVar("World")


def _until(draw: Callable[[], tuple[bool, World]]) -> World:
    """Draw until a draw is accepted (rejection on top of a uniform draw stays uniform)."""
    while True:
        ok, world = draw()
        if ok:
            return world


# ---------------------------------------------------------------------------- Tapp
def tapp_voids(state: TappState) -> list[int]:
    """Per seat, the cards its hand cannot hold now (Farbzwang and Trumpfzwang: a seat that
    did not follow was void in the led suit, and if it did not trump either, in trumps)."""
    g = state.game
    voids = [0] * state.n
    trump = state.trump_mask
    lead = -1
    in_trick = 0
    for s, a in state.log:
        if a >= g.N:
            continue
        if in_trick == 0:
            lead = a
        else:
            voids[s] |= trick_forbidden(a, g.suitmask_of[lead], trump, lead, 0, "always", False)
        in_trick = (in_trick + 1) % state.n
    return voids


def _plays_by(log: Sequence[tuple[int, int]], num_cards: int, seat: int, after: int = -1) -> int:
    """The cards ``seat`` played (log entries after index ``after``)."""
    m = 0
    for i, (s, a) in enumerate(log):
        if s == seat and a < num_cards and i > after:
            m |= 1 << a
    return m


def resample_tapp(state: TappState, seat: int | None, rng: random.Random) -> TappState:
    """A Tapp state consistent with what ``seat`` knows, uniform over the consistent worlds."""
    from .tapp.state import Phase

    g = state.game
    n = state.n
    N = g.N
    known = state.known_mask(seat)
    hidden = g.full & ~known
    voids = tapp_voids(state)
    d = state.declarer
    log = state.log
    tapp_place = n  # the tapp is the place after the hands
    sizes = [(state.hands[s] & hidden).bit_count() for s in range(n)] + [(state.tapp & hidden).bit_count()]
    forbidden = [*voids, 0]

    # Rufer: who held the called card, when ``seat`` cannot know (docs/rules-reference.md §3.4)
    c = state.called
    give_index = next((i for i, (s, a) in enumerate(log) if s == d and 2 * N <= a < 3 * N), -1)
    real = state.holder if state.holder >= 0 else tapp_place
    holder_hidden = (c >= 0 and seat != d and seat != state.holder
                     and not (state.called_in_tapp and g.rules.rufer_in_tapp == "none"))
    # After the give the called card lies with the declarer, or (given back) with the holder;
    # only they know which (known_mask). The holder choice is (holder, called card given back).
    called_hidden = c >= 0 and bool((hidden >> c) & 1)
    options: list[tuple[int, bool]] = [(real, False)]
    forced = False
    if holder_hidden:
        # a holder who played the called card shows himself (it was given back to him)
        owner = next((s for s in range(n) if s != d and (_plays_by(log, N, s) >> c) & 1), -1)
        if owner >= 0:
            forced = True
        else:
            holders = [s for s in range(n) if s != d and s != seat]
            if g.rules.rufer_in_tapp == "swap":
                holders.append(tapp_place)
            options = [(h, back) for h in holders for back in ((False, True) if called_hidden else (False,))]
    in_give = state.phase == Phase.GIVE

    def places_for(h: int, back: bool) -> list[Place]:
        sz = sizes[:]
        if in_give and h != real:  # the holder is one card short until the give
            sz[real] += 1
            sz[h] -= 1
        forbid = forbidden[:]
        if called_hidden:  # the called card lies with the declarer, or given back with ``h``
            where = h if back else d
            forbid = [f | (1 << c) if j != where else f for j, f in enumerate(forbid)]
        return list(zip(sz, forbid, strict=True))

    def gift_choices(h: int, back: bool) -> int:
        """How many cards could be the one given back to holder ``h`` (1 before the give, and
        when the called card itself was given back)."""
        if give_index < 0 or back:
            return 1
        if h == tapp_place:
            return state.tapp.bit_count()
        return state.hands[h].bit_count() + _plays_by(log, N, h, give_index).bit_count()

    option_places = [places_for(h, back) for h, back in options]
    weights = ([count_deals(hidden, p) * gift_choices(h, back) if all(sz >= 0 for sz, _ in p) else 0
                for (h, back), p in zip(options, option_places, strict=True)]
               if len(options) > 1 else [1])
    over = state.phase == Phase.OVER
    tapp_points = g.mask_points(state.tapp)

    def draw() -> tuple[bool, tuple[tuple[int, bool], list[int]]]:
        k = choose_weighted(weights, rng) if len(options) > 1 else 0
        dealt = deal_uniform(hidden, option_places[k], rng)
        # After the deal the settlement shows what the tapp was worth: keep its points.
        ok = not over or g.mask_points((state.tapp & known) | dealt[tapp_place]) == tapp_points
        return ok, (options[k], dealt)

    (h, back), dealt = _until(draw)
    w = state.clone()
    w._legal = -1
    for s in range(n):
        w.hands[s] = (state.hands[s] & known) | dealt[s]
    w.tapp = (state.tapp & known) | dealt[tapp_place]
    if holder_hidden and not forced:
        w.holder = h if h != tapp_place else -1
        w.called_in_tapp = h == tapp_place
        if give_index >= 0:  # the card given back: the called one, or any other card the
            # holder has had since
            gets = w.tapp if h == tapp_place else w.hands[h] | _plays_by(log, N, h, give_index)
            w.given = c if back else rng.choice(cards_in(gets & ~(1 << c)))
            w.log[give_index] = (d, 2 * N + w.given)
    if state.picked and seat != d:  # Frage: which of the declarer's cards came from the tapp
        has = w.hands[d] | _plays_by(log, N, d) | (w.tapp if state.phase != Phase.DISCARD else 0)
        w.picked = _random_subset(has, state.picked.bit_count(), rng)
        for i, (s, a) in enumerate(log):
            if s == d and a >= g.A_DISCARD:
                w.log[i] = (d, g.A_DISCARD + w.tapp)
    if w.picked:
        w.tapp0 = w.picked
    elif w.called_in_tapp and g.rules.rufer_in_tapp == "swap":
        w.tapp0 = ((w.tapp & ~(1 << w.given)) if w.given >= 0 else w.tapp) | (1 << c)
    else:
        w.tapp0 = w.tapp
    return w


# ---------------------------------------------------------------------------- Tippen
def tippen_voids(state: TippenState) -> list[int]:
    """Per seat, the cards its hand cannot hold now: every past play must have been legal
    (``tricks.legal_follows`` with the rule set's ``void_must_trump`` and ``head_trick``;
    the 1859 forced leads)."""
    g = state.game
    r = g.rules
    voids = [0] * g.num_players
    tm = state.trump_mask
    led = win = -1
    in_trick = 0
    trick_no = 0
    for s, a in state.log:
        if a >= g.size:
            continue
        if in_trick == 0:
            led, win = g.suit_masks[g.suit_of[a]], a
            if r.forced_leads and trick_no == 0 and state.n_active >= 3 and not (tm >> a) & 1:
                voids[s] |= tm
            if r.forced_leads and trick_no == 1 and a != g.ace_of[state.trump_index]:
                voids[s] |= 1 << g.ace_of[state.trump_index]
        else:
            voids[s] |= trick_forbidden(a, led, tm, win, g.suit_masks[g.suit_of[win]],
                                        r.void_must_trump, r.head_trick)
            if (g.beaters[tm][win] >> a) & 1:
                win = a
        in_trick += 1
        if in_trick == state.n_active:
            in_trick = 0
            trick_no += 1
    return voids


def _resample_undealt(state: TippenState, known: int, rng: random.Random) -> TippenState:
    """Before the deal (Schieben) or after a Hupf und Sprung: the deck order is the world."""
    g = state.game
    deck = list(state.deck)
    free = [i for i, c in enumerate(deck) if not (known >> c) & 1]
    hidden = _mask([deck[i] for i in free])
    places: list[Place] = [(len(free), 0)]
    # A single jump under the double rule shows that the top card was no Ace or Seven.
    top_fixed = (bool(state.jump_cards) and len(state.jump_cards or ()) == 1
                 and g.rules.hupf_und_sprung == "double" and free and free[0] == 0)
    if top_fixed:
        places = [(1, g.ace_or_seven), (len(free) - 1, 0)]
    dealt = deal_uniform(hidden, places, rng)
    order = _shuffled(dealt[0], rng) + (_shuffled(dealt[1], rng) if top_fixed else [])
    for i, c in zip(free, order, strict=True):
        deck[i] = c
    w = state.clone()
    w.deck = tuple(deck)
    return w


def resample_tippen(state: TippenState, seat: int | None, rng: random.Random) -> TippenState:
    """A Tippen state consistent with what ``seat`` knows, uniform over the consistent worlds."""
    from . import tippen as T

    g = state.game
    r = g.rules
    n = g.num_players
    S = g.size
    known = state.known_mask(seat)
    if state.phase == T.SHOVE or state.jump_cards:
        return _resample_undealt(state, known, rng)
    hidden = g.pack.full_mask & ~known
    log = state.log
    voids = tippen_voids(state)
    pos_hands, up, talon_start = g.deal_hands(list(range(S)), state.dealer)
    hupf = r.hupf_und_sprung != "none"

    places: list[Place] = []
    for s in range(n):
        places.append(((state.hands[s] & hidden).bit_count(), voids[s]))
    for s in range(n):
        places.append(((state.folded[s] & hidden).bit_count(), 0))
    discard_entries = [(i, s, a) for i, (s, a) in enumerate(log)
                       if g.DISCARD_BASE <= a < g.WORD_BASE or a >= g.EXCHANGE_BASE]

    def discarded(a: int) -> int:
        return 1 << (a - g.DISCARD_BASE) if a < g.WORD_BASE else a - g.EXCHANGE_BASE

    first_discard = len(places)
    for _, _, a in discard_entries:
        places.append(((discarded(a) & hidden).bit_count(), 0))
    up_place = len(places)
    up_hidden = state.up_state == T.UP_HIDDEN and bool((hidden >> state.upcard) & 1)
    # Hupf und Sprung: the card at the bottom of the deck was no Ace or Seven.
    bottom_rule = g.ace_or_seven if hupf else 0
    places.append((1 if up_hidden else 0, bottom_rule if up == S - 1 else 0))
    rest: list[int] = list(state.talon[state.talon_pos:])
    talon_place = len(places)
    if rest and bottom_rule:
        places.append((len(rest) - 1, 0))
        places.append((1, bottom_rule))
    else:
        places.append((len(rest), 0))
        places.append((0, 0))
    if sum(size for size, _ in places) != hidden.bit_count():
        raise AssertionError(f"resample: {hidden.bit_count()} hidden cards but places for "
                             f"{sum(size for size, _ in places)} ({state!r})")

    d = state.dealer
    secret_take = (state.taken in (T.TAKE_SNIFF_MODERN, T.TAKE_KNOCK)
                   and bool((hidden >> state.trump_card) & 1))
    played_by = [_plays_by(log, S, s) for s in range(n)]
    exchanged = [0] * n
    for _, s, a in discard_entries:
        if a >= g.EXCHANGE_BASE:
            exchanged[s] = (a - g.EXCHANGE_BASE).bit_count()
    trump_suit = g.suit_masks[state.trump_index] if state.trump_index >= 0 else 0
    # A public trump card the dealer may have laid away face down (a 1859 sniffer's discard,
    # a ``dealer-last`` exchange): it lies in his hand or folded cards, or among his discards.
    trump_laid_away = (not secret_take and state.trump_card >= 0
                       and bool((hidden >> state.trump_card) & 1))
    if trump_laid_away:
        dealers = {d, n + d} | {first_discard + k for k, (_, s, _) in enumerate(discard_entries)
                                if s == d}
        places = [(size, f | (1 << state.trump_card) if j not in dealers else f)
                  for j, (size, f) in enumerate(places)]

    def draw() -> tuple[bool, tuple[list[int], int]]:
        dealt = deal_uniform(hidden, places, rng)
        if trump_laid_away:
            # he was dealt or took it, not drew it: if it is in his hand, he drew at most the
            # other cards of his hand
            has = (state.hands[d] & known) | dealt[d] | played_by[d]
            ok = not (has >> state.trump_card) & 1 or has.bit_count() - 1 >= exchanged[d]
            return ok, (dealt, state.trump_card)
        if not secret_take:
            return True, (dealt, state.trump_card)
        # The card the dealer took unseen: any trump he has had since (uniform over pairs).
        t = rng.choice(cards_in(trump_suit))
        has = (state.hands[d] & known) | dealt[d] | played_by[d]
        pool = has | (state.folded[d] & known) | dealt[n + d]
        for k, (_, s, a) in enumerate(discard_entries):
            if s == d:
                pool |= (discarded(a) & known) | dealt[first_discard + k]
        ok = bool((pool >> t) & 1) and not (up == S - 1 and (bottom_rule >> t) & 1)
        if (has >> t) & 1 and has.bit_count() - 1 < exchanged[d]:
            ok = False  # he exchanged every card: the one he took must be among the discards
        return ok, (dealt, t)

    dealt, took = _until(draw)
    w = state.clone()
    for s in range(n):
        w.hands[s] = (state.hands[s] & known) | dealt[s]
        w.folded[s] = (state.folded[s] & known) | dealt[n + s]
    w.dead = 0
    for f in w.folded:
        w.dead |= f
    w.discards = state.discards & known
    for k, (i, s, a) in enumerate(discard_entries):
        m = (discarded(a) & known) | dealt[first_discard + k]
        w.discards |= m
        w.log[i] = (s, g.DISCARD_BASE + m.bit_length() - 1 if a < g.WORD_BASE else g.EXCHANGE_BASE + m)
    if up_hidden:
        w.upcard = dealt[up_place].bit_length() - 1
    if secret_take:
        w.upcard = w.trump_card = took
    remainder = _shuffled(dealt[talon_place], rng) + cards_in(dealt[talon_place + 1])
    _rebuild_deck(w, state, seat, remainder, pos_hands, up, talon_start, rng)
    return w


def _rebuild_deck(w: TippenState, state: TippenState, seat: int | None, remainder: list[int],
                  pos_hands: list[int], up: int, talon_start: int, rng: random.Random) -> None:
    """Give the sampled world a deck and talon it could have been dealt from: each seat's
    dealt hand is what it has had minus what it drew, took or robbed; the talon is the
    exchangers' draws in turn, then the cards still to come."""
    from . import tippen as T

    g = w.game
    S = g.size
    n = g.num_players
    d = w.dealer
    log = w.log
    robber = next((s for s, a in log if a == g.WORD_BASE + T.W_ROB), -1)
    seven = w.upcard if robber >= 0 else -1  # a robber swapped the trump 7 for the upcard
    segments: list[list[int]] = []
    drawn_pos = 0
    initial = []
    have = [w.hands[s] | w.folded[s] | _plays_by(log, S, s) for s in range(n)]
    drawn = [0] * n
    for s, a in log:
        if a >= g.EXCHANGE_BASE:
            k = (a - g.EXCHANGE_BASE).bit_count()
            seg: list[int]
            if s == seat:  # he knows what he drew, in order
                seg = list(state.talon[drawn_pos:drawn_pos + k])
            else:
                kept = w.hands[s] | _plays_by(log, S, s)
                if s == robber:
                    kept = (kept & ~(1 << w.trump_card)) | (1 << seven)
                if s == d and w.trump_card >= 0 and (w.taken != T.TAKE_NONE
                                                     or g.rules.trump_card == "dealer-last"):
                    kept &= ~(1 << w.trump_card)  # dealt or taken, not drawn
                seg = rng.sample(cards_in(kept), k)
            drawn[s] = _mask(seg)
            segments.append(seg)
            drawn_pos += k
        if g.DISCARD_BASE <= a < g.WORD_BASE or a >= g.EXCHANGE_BASE:
            have[s] |= (1 << (a - g.DISCARD_BASE)) if a < g.WORD_BASE else a - g.EXCHANGE_BASE
    for s in range(n):
        m = have[s]
        if s == robber:  # he had the 7 (dealt or drawn), not the upcard
            m = (m & ~(1 << w.trump_card)) | (1 << seven)
        m &= ~drawn[s]
        if s == d and w.taken != T.TAKE_NONE:
            m &= ~(1 << w.trump_card)
        initial.append(m)
    deck = [-1] * S
    first_up = w.trump_card if w.trump_card >= 0 else w.upcard
    deck[up] = first_up
    for s in range(n):
        positions = [p for p in cards_in(pos_hands[s]) if p != up]
        cards = [c for c in cards_in(initial[s]) if c != first_up or up not in cards_in(pos_hands[s])]
        if len(cards) != len(positions):
            raise AssertionError(f"resample: seat {s} would have been dealt {len(cards)} cards, "
                                 f"not {len(positions)} ({state!r})")
        rng.shuffle(cards)
        for p, c in zip(positions, cards, strict=True):
            deck[p] = c
    talon = [c for seg in segments for c in seg] + remainder
    deck[talon_start:] = talon
    if g.rules.hupf_und_sprung != "none" and (g.ace_or_seven >> deck[-1]) & 1 and not remainder:
        # the bottom card was no Ace or Seven: swap within the cards of the same origin
        last = S - 1
        group = (list(range(S - len(segments[-1]), S)) if segments and talon_start < S
                 else [p for s in range(n) if (pos_hands[s] >> last) & 1
                       for p in cards_in(pos_hands[s]) if p != up])
        swap = next((p for p in group if not (g.ace_or_seven >> deck[p]) & 1), None)
        if swap is not None:
            deck[last], deck[swap] = deck[swap], deck[last]
    w.deck = tuple(deck)
    w.talon = tuple(deck[talon_start:])

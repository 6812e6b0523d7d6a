"""World sampling for Tapp: ``TappState.resample`` (the general part and what is uniform:
``games.sampling``).

``resample_tapp`` is the one adapter that reads the Tapp state's internals: it lists the
hidden places (the other hands, the tapp) and their constraints (``tapp_voids``), weighs the
Rufer holder and the card given back to him, and writes a sampled world into a ``clone()``,
rebuilding ``tapp0`` (which no rule reads after the deal) consistently.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ...cards import cards_in
from ..sampling import (
    Place,
    choose_weighted,
    count_deals,
    deal_uniform,
    plays_by,
    random_subset,
    trick_forbidden,
    until_accepted,
)
from .phases import DISCARD, GIVE, OVER

if TYPE_CHECKING:
    from .state import TappState


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
            voids[s] = voids[s] | trick_forbidden(a, g.suitmask_of[lead], trump, lead, 0, "always", False)
        in_trick = (in_trick + 1) % state.n
    return voids


def resample_tapp(state: TappState, seat: int | None, rng: random.Random) -> TappState:
    """A Tapp state consistent with what ``seat`` knows, uniform over the consistent worlds."""
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
        owner = next((s for s in range(n) if s != d and (plays_by(log, N, s) >> c) & 1), -1)
        if owner >= 0:
            forced = True
        else:
            holders = [s for s in range(n) if s != d and s != seat]
            if g.rules.rufer_in_tapp == "swap":
                holders.append(tapp_place)
            options = [(h, back) for h in holders for back in ((False, True) if called_hidden else (False,))]
    in_give = state.phase == GIVE

    def places_for(h: int, back: bool) -> list[Place]:
        sz = sizes[:]
        if in_give and h != real:  # the holder is one card short until the give
            sz[real] = sz[real] + 1
            sz[h] = sz[h] - 1
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
        return state.hands[h].bit_count() + plays_by(log, N, h, give_index).bit_count()

    option_places = [places_for(h, back) for h, back in options]
    weights = ([count_deals(hidden, p) * gift_choices(h, back) if all(sz >= 0 for sz, _ in p) else 0
                for (h, back), p in zip(options, option_places, strict=True)]
               if len(options) > 1 else [1])
    over = state.phase == OVER
    tapp_points = g.mask_points(state.tapp)

    def draw() -> tuple[bool, tuple[tuple[int, bool], list[int]]]:
        k = choose_weighted(weights, rng) if len(options) > 1 else 0
        dealt = deal_uniform(hidden, option_places[k], rng)
        # After the deal the settlement shows what the tapp was worth: keep its points.
        ok = not over or g.mask_points((state.tapp & known) | dealt[tapp_place]) == tapp_points
        return ok, (options[k], dealt)

    (h, back), dealt = until_accepted(draw)
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
            gets = w.tapp if h == tapp_place else w.hands[h] | plays_by(log, N, h, give_index)
            w.given = c if back else rng.choice(cards_in(gets & ~(1 << c)))
            w.log[give_index] = (d, 2 * N + w.given)
    if state.picked and seat != d:  # Frage: which of the declarer's cards came from the tapp
        has = w.hands[d] | plays_by(log, N, d) | (w.tapp if state.phase != DISCARD else 0)
        w.picked = random_subset(has, state.picked.bit_count(), rng)
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

"""World sampling for Tippen: ``TippenState.resample`` (the general part and what is
uniform: ``games.sampling``).

``resample_tippen`` is the one adapter that reads the Tippen state's internals: it lists the
hidden places (other hands, folded cards, discards and exchanges, an unturned upcard, the
talon still to come) and their constraints (``tippen_voids``), draws the card a modern sniffer
or knocker took unseen, and writes a sampled world into a ``clone()``; ``_rebuild_deck`` gives
it a deck and talon it could have been dealt from (history no rule reads after the deal).
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ...cards import cards_in
from ..sampling import Place, cards_mask, deal_uniform, plays_by, shuffled, trick_forbidden, until_accepted
from .phases import SHOVE, TAKE_KNOCK, TAKE_NONE, TAKE_SNIFF_MODERN, UP_HIDDEN, W_ROB

if TYPE_CHECKING:
    from .state import TippenState


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
                voids[s] = voids[s] | tm
            if r.forced_leads and trick_no == 1 and a != g.ace_of[state.trump_index]:
                voids[s] = voids[s] | (1 << g.ace_of[state.trump_index])
        else:
            voids[s] = voids[s] | trick_forbidden(a, led, tm, win, g.suit_masks[g.suit_of[win]],
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
    hidden = cards_mask([deck[i] for i in free])
    places: list[Place] = [(len(free), 0)]
    # A single jump under the double rule shows that the top card was no Ace or Seven.
    top_fixed = (bool(state.jump_cards) and len(state.jump_cards or ()) == 1
                 and g.rules.hupf_und_sprung == "double" and free and free[0] == 0)
    if top_fixed:
        places = [(1, g.ace_or_seven), (len(free) - 1, 0)]
    dealt = deal_uniform(hidden, places, rng)
    order = shuffled(dealt[0], rng) + (shuffled(dealt[1], rng) if top_fixed else [])
    for i, c in zip(free, order, strict=True):
        deck[i] = c
    w = state.clone()
    w.deck = tuple(deck)
    return w


def resample_tippen(state: TippenState, seat: int | None, rng: random.Random, keep: int = 0) -> TippenState:
    """A Tippen state consistent with what ``seat`` knows, uniform over the consistent worlds;
    the cards of ``keep`` stay where they are (as if ``seat`` knew them)."""
    g = state.game
    r = g.rules
    n = g.num_players
    S = g.size
    known = state.known_mask(seat) | keep
    if state.phase == SHOVE or state.jump_cards:
        return _resample_undealt(state, known, rng)
    hidden = g.pack.full_mask & ~known
    log = state.log
    voids = tippen_voids(state)
    pos_hands, up, talon_start = g.deal_hands(tuple(range(S)), state.dealer)
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
    up_hidden = state.up_state == UP_HIDDEN and bool((hidden >> state.upcard) & 1)
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
    secret_take = (state.taken in (TAKE_SNIFF_MODERN, TAKE_KNOCK)
                   and bool((hidden >> state.trump_card) & 1))
    played_by = [plays_by(log, S, s) for s in range(n)]
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

    dealt, took = until_accepted(draw)
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
    remainder = shuffled(dealt[talon_place], rng) + cards_in(dealt[talon_place + 1])
    _rebuild_deck(w, state, seat, remainder, pos_hands, up, talon_start, rng)
    return w


def _rebuild_deck(w: TippenState, state: TippenState, seat: int | None, remainder: list[int],
                  pos_hands: list[int], up: int, talon_start: int, rng: random.Random) -> None:
    """Give the sampled world a deck and talon it could have been dealt from: each seat's
    dealt hand is what it has had minus what it drew, took or robbed; the talon is the
    exchangers' draws in turn, then the cards still to come."""
    g = w.game
    S = g.size
    n = g.num_players
    d = w.dealer
    log = w.log
    robber = next((s for s, a in log if a == g.WORD_BASE + W_ROB), -1)
    seven = w.upcard if robber >= 0 else -1  # a robber swapped the trump 7 for the upcard
    segments: list[list[int]] = []
    drawn_pos = 0
    initial = []
    have = [w.hands[s] | w.folded[s] | plays_by(log, S, s) for s in range(n)]
    drawn = [0] * n
    for s, a in log:
        if a >= g.EXCHANGE_BASE:
            k = (a - g.EXCHANGE_BASE).bit_count()
            seg: list[int]
            if s == seat:  # he knows what he drew, in order
                seg = list(state.talon[drawn_pos:drawn_pos + k])
            else:
                kept = w.hands[s] | plays_by(log, S, s)
                if s == robber:
                    kept = (kept & ~(1 << w.trump_card)) | (1 << seven)
                if s == d and w.trump_card >= 0 and (w.taken != TAKE_NONE
                                                     or g.rules.trump_card == "dealer-last"):
                    kept &= ~(1 << w.trump_card)  # dealt or taken, not drawn
                seg = rng.sample(cards_in(kept), k)
            drawn[s] = cards_mask(seg)
            segments.append(seg)
            drawn_pos += k
        if g.DISCARD_BASE <= a < g.WORD_BASE or a >= g.EXCHANGE_BASE:
            have[s] = have[s] | ((1 << (a - g.DISCARD_BASE)) if a < g.WORD_BASE else a - g.EXCHANGE_BASE)
    for s in range(n):
        m = have[s]
        if s == robber:  # he had the 7 (dealt or drawn), not the upcard
            m = (m & ~(1 << w.trump_card)) | (1 << seven)
        m &= ~drawn[s]
        if s == d and w.taken != TAKE_NONE:
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

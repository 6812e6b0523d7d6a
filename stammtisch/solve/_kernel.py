# mypy: ignore-errors
# (numba code: int64 scalars, intrinsics and dispatchers that mypy cannot type; the kernel is
# checked by tests against the typed Python reference instead)
"""The compiled search kernel (numba, nopython, ``cache=True``): imported only when a solve runs.

Same search as :mod:`stammtisch.solve.reference`, on flat int64 data:

* players are indices ``0 … m-1`` in the order of play (the driver maps them to seats); the
  hands are an int64 array of card masks, changed in place and restored on the way back;
* ``cfg`` holds the scalars of the query (see the ``C_*`` indices); ``pts``, ``suit`` and
  ``rank`` are per-card tables (card points, the card's suit mask, its strength in the suit);
* a zero-window (or any-window) fail-soft alpha-beta over the *future* takings, recursing card
  by card; the value of a trick is added when it completes;
* at every trick start a two-way transposition table keyed on (cards still in the hands,
  leader), holding a lower and an upper bound and the best lead; entries of other queries are
  told apart by a generation number, so the table is never cleared;
* bounds: 0 ≤ future ≤ points (or tricks) still out, checked before anything else; at a
  trick start also the run of highest trumps held by one side (each such card wins its
  trick, so its points are sure for that side: a lower or an upper bound);
* merging: of several cards of one hand that are neighbours in their suit among the cards
  still out (the trick in progress included) and have the same card points, only the highest
  is searched: they win and lose exactly the same tricks;
* move ordering: the table's best lead first, then high cards on lead; when following, cards
  that leave the trick with the mover's side ordered before the others, smearing points onto
  the own side's trick and throwing the cheapest card onto the opponents'.

Follow rules (``_legal``) and trick winners (``_beats``) are ``games.tricks.legal_follows`` and
``games.tricks.beats`` transcribed; ``tests/test_solve_kernel.py`` checks them against the
originals on random inputs.

The drivers ``exact`` (MTD-bi: zero-window searches that bisect the value's interval) and ``probe``
(one zero-window search: "is the future ≥ t?") are what Python calls.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

# cfg indices
C_M, C_TRUMP, C_MAX, C_COUNT, C_TRICKW, C_BONUS, C_MUST, C_HEAD, C_FORCED, C_ACE, C_GEN, C_TTMASK = range(12)
CFG_SIZE = 12
MUST_ALWAYS, MUST_UNTRUMPED, MUST_NEVER = 0, 1, 2
BIG = 1 << 30
MAX_DEPTH = 64
HASH_MULT = -7046029254386353131  # 0x9E3779B97F4A7C15 as int64
ZERO = np.int64(0)
NONE = np.int64(-1)


@njit(cache=True)
def _beats(card: int, best: int, trump: int, suit: np.ndarray) -> bool:
    if (1 << card) & trump:
        return ((1 << best) & trump) == 0 or card > best
    if (1 << best) & trump:
        return False
    return suit[card] == suit[best] and card > best


@njit(cache=True)
def _legal(hand: int, k: int, lead_suit: int, win_card: int, trump: int, suit: np.ndarray, must: int,
           head: int, forced: int, trick_no: int, m: int, ace: int) -> int:
    if k == 0:
        if forced:
            if trick_no == 0 and m >= 3 and hand & trump:
                return hand & trump
            if trick_no == 1 and ace >= 0 and (hand >> ace) & 1:
                return 1 << ace
        return hand
    trumped = ((1 << win_card) & trump) != 0 and (lead_suit & trump) == 0
    follow = hand & lead_suit
    if follow:
        if head and not trumped:
            higher = follow & suit[win_card] & ~((2 << win_card) - 1)
            if higher:
                return higher
        return follow
    trumps = hand & trump
    if trumps and (must == MUST_ALWAYS or (must == MUST_UNTRUMPED and not trumped)):
        if head and trumped:
            over = trumps & suit[win_card] & ~((2 << win_card) - 1)
            if over:
                return over
        return trumps
    return hand


@njit(cache=True)
def legal_mask(hand: int, k: int, lead_suit: int, win_card: int, trump: int, suit: np.ndarray, must: int,
               head: int, forced: int, trick_no: int, m: int, ace: int) -> int:
    """``_legal`` for the tests (a separate entry so the kernel's own stays inlinable)."""
    return _legal(hand, k, lead_suit, win_card, trump, suit, must, head, forced, trick_no, m, ace)


@njit(cache=True)
def beats(card: int, best: int, trump: int, suit: np.ndarray) -> bool:
    return _beats(card, best, trump, suit)


_I = types.int64
_A1 = types.Array(types.int64, 1, "C")
_SEARCH_SIG = _I(_A1, _A1, _A1, _A1, _A1, _A1, types.Array(types.int32, 2, "C"), _A1, types.Array(types.int64, 2, "C"),
                 *([_I] * 13))


# One explicit signature: a recursive function compiled for several argument types (literal
# ints) crashes when loaded from numba's cache (numba issues 6061, 6713).
@njit(_SEARCH_SIG, cache=True)
def _search(hands: np.ndarray, cfg: np.ndarray, pts: np.ndarray, suit: np.ndarray, rank: np.ndarray,
            ttk: np.ndarray, ttv: np.ndarray, stats: np.ndarray, scratch: np.ndarray, depth: int,
            turn: int, k: int, lead_suit: int, win_card: int, win_pl: int, tval: int, tmask: int,
            rempts: int, rem: int, trick_no: int, alpha: int, beta: int) -> int:
    stats[0] += 1
    m = cfg[C_M]
    trick_w = cfg[C_TRICKW]
    bonus = cfg[C_BONUS]
    if k == 0 and rem == 0:
        return 0
    top = rempts + trick_w * rem + bonus
    if top <= alpha:
        return top
    if beta <= 0:
        return 0
    allc = 0
    for i in range(m):
        allc |= hands[i]
    count = cfg[C_COUNT]
    trump = cfg[C_TRUMP]
    if k == 0 and rem == 1:
        # one card each: the last trick plays itself
        best = trailing_zeros(hands[turn])
        wp = turn
        p = turn
        for _ in range(m - 1):
            p += 1
            if p == m:
                p = 0
            c = trailing_zeros(hands[p])
            if _beats(c, best, trump, suit):
                best = c
                wp = p
        if (count >> wp) & 1:
            return rempts + trick_w + bonus
        return 0
    if k == 0 and trump and count == cfg[C_MAX] and bonus == 0:
        # sure tricks: the run of highest trumps still out held by one side wins a trick per card
        max_cards = 0
        for i in range(m):
            if (count >> i) & 1:
                max_cards |= hands[i]
        tr = allc & trump
        c = 63 - leading_zeros(tr) if tr else 0
        if tr == 0:
            pass
        elif (max_cards >> c) & 1:
            if trick_w == 0 or count & (count - 1) == 0:
                sure = 0
                while tr and (max_cards >> c) & 1:
                    sure += pts[c] + trick_w
                    tr ^= 1 << c
                    if tr:
                        c = 63 - leading_zeros(tr)
                if sure >= beta:
                    return sure
        elif trick_w == 0:
            lost = 0
            while tr and not (max_cards >> c) & 1:
                lost += pts[c]
                tr ^= 1 << c
                if tr:
                    c = 63 - leading_zeros(tr)
            if top - lost <= alpha:
                return top - lost
    slot = -1
    tt_move = -1
    key = 0
    if k == 0:
        key = allc | (turn << 58)
        idx = ((key * HASH_MULT) >> 20) & cfg[C_TTMASK]
        gen = cfg[C_GEN]
        for j in range(2):
            s = idx ^ j
            if ttk[s] == key and ttv[s, 3] == gen:
                slot = s
                break
        stats[1] += 1
        if slot >= 0:
            stats[2] += 1
            lo = np.int64(ttv[slot, 0])
            hi = np.int64(ttv[slot, 1])
            tt_move = np.int64(ttv[slot, 2])
            if lo == hi:
                return lo
            if lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
    a_in = alpha
    b_in = beta

    # ---- candidate moves: representatives of equivalent cards, scored, sorted
    hand = hands[turn]
    legal = _legal(hand, k, lead_suit, win_card, trump, suit, cfg[C_MUST], cfg[C_HEAD], cfg[C_FORCED], trick_no,
                   m, cfg[C_ACE])
    out = allc | tmask
    is_max = (cfg[C_MAX] >> turn) & 1
    n = 0
    rest = legal
    while rest:
        low = rest & -rest
        rest ^= low
        c = trailing_zeros(low)
        above = out & suit[c] & ~((2 << c) - 1)
        if above:
            nh = trailing_zeros(above)
            if (legal >> nh) & 1 and pts[nh] == pts[c]:
                continue
        if k == 0:
            # trumps first for the side that holds the most of them is left to the table;
            # here: high cards of long holdings first
            score = rank[c] + pts[c] + 4 * ((trump >> c) & 1) * is_max
            if above == 0:
                score += 20  # the highest card of its suit still out
            if c == tt_move:
                score = 10000
        else:
            wins = _beats(c, win_card, trump, suit)
            new_w = turn if wins else win_pl
            if ((count >> new_w) & 1) == is_max:
                if wins and k + 1 < m:
                    score = 1000 + 8 * pts[c] + rank[c]  # not last: win high, harder to overtake
                else:
                    score = 1000 + 8 * pts[c] - (rank[c] if wins else 0)
            else:
                score = -8 * pts[c] - rank[c]
        # insertion by descending score
        j = n
        while j > 0 and scratch[depth, 2 * (j - 1) + 1] < score:
            scratch[depth, 2 * j] = scratch[depth, 2 * (j - 1)]
            scratch[depth, 2 * j + 1] = scratch[depth, 2 * (j - 1) + 1]
            j -= 1
        scratch[depth, 2 * j] = c
        scratch[depth, 2 * j + 1] = score
        n += 1

    best = -BIG if is_max else BIG
    best_card = -1
    for j in range(n):
        c = scratch[depth, 2 * j]
        bit = 1 << c
        hands[turn] ^= bit
        if k == 0:
            n_lead = suit[c]
            n_wc = c
            n_wp = turn
        else:
            n_lead = lead_suit
            if _beats(c, win_card, trump, suit):
                n_wc = c
                n_wp = turn
            else:
                n_wc = win_card
                n_wp = win_pl
        n_tval = tval + pts[c]
        if k + 1 == m:
            gain = 0
            if (count >> n_wp) & 1:
                gain = n_tval + trick_w
                if rem == 1:
                    gain += bonus
            v = gain + _search(hands, cfg, pts, suit, rank, ttk, ttv, stats, scratch, depth + 1,
                               n_wp, ZERO, ZERO, NONE, NONE, ZERO, ZERO, rempts - n_tval, rem - 1, trick_no + 1,
                               alpha - gain, beta - gain)
        else:
            nxt = turn + 1
            if nxt == m:
                nxt = 0
            v = _search(hands, cfg, pts, suit, rank, ttk, ttv, stats, scratch, depth + 1,
                        nxt, k + 1, n_lead, n_wc, n_wp, n_tval, tmask | bit, rempts, rem, trick_no,
                        alpha, beta)
        hands[turn] ^= bit
        if is_max:
            if v > best:
                best = v
                best_card = c
                if best > alpha:
                    alpha = best
        else:
            if v < best:
                best = v
                best_card = c
                if best < beta:
                    beta = best
        if alpha >= beta:
            break

    if k == 0:
        # look the key up again: deeper searches may have moved it out of its slot
        idx = ((key * HASH_MULT) >> 20) & cfg[C_TTMASK]
        gen = cfg[C_GEN]
        slot = -1
        for j in range(2):
            s = idx ^ j
            if ttk[s] == key and ttv[s, 3] == gen:
                slot = s
                break
        lo = 0
        hi = BIG
        stats[1] += 1
        if slot >= 0:
            stats[2] += 1
            lo = np.int64(ttv[slot, 0])
            hi = np.int64(ttv[slot, 1])
        else:
            # prefer a free or stale slot, else the one holding the smaller subtree
            if ttv[idx, 3] != gen:
                slot = idx
            elif ttv[idx ^ 1, 3] != gen:
                slot = idx ^ 1
            elif ttv[idx, 4] <= ttv[idx ^ 1, 4]:
                slot = idx
            else:
                slot = idx ^ 1
            ttk[slot] = key
            ttv[slot, 3] = gen
            ttv[slot, 4] = rem
        if best <= a_in:
            if best < hi:
                hi = best
        elif best >= b_in:
            if best > lo:
                lo = best
        else:
            lo = best
            hi = best
        ttv[slot, 0] = lo
        ttv[slot, 1] = hi
        ttv[slot, 2] = best_card
    return best


@njit(cache=True)
def probe(hands: np.ndarray, cfg: np.ndarray, pts: np.ndarray, suit: np.ndarray, rank: np.ndarray,
          ttk: np.ndarray, ttv: np.ndarray, stats: np.ndarray, scratch: np.ndarray,
          turn: int, k: int, lead_suit: int, win_card: int, win_pl: int, tval: int, tmask: int,
          rempts: int, rem: int, trick_no: int, alpha: int, beta: int) -> int:
    """One fail-soft search of the future takings in the window (alpha, beta)."""
    return _search(hands, cfg, pts, suit, rank, ttk, ttv, stats, scratch, ZERO, turn, k, lead_suit, win_card,
                   win_pl, tval, tmask, rempts, rem, trick_no, alpha, beta)


@njit(cache=True)
def exact(hands: np.ndarray, cfg: np.ndarray, pts: np.ndarray, suit: np.ndarray, rank: np.ndarray,
          ttk: np.ndarray, ttv: np.ndarray, stats: np.ndarray, scratch: np.ndarray,
          turn: int, k: int, lead_suit: int, win_card: int, win_pl: int, tval: int, tmask: int,
          rempts: int, rem: int, trick_no: int, guess: int) -> int:
    """Zero-window searches until the bounds meet: the exact future. Each search at ``beta``
    halves the interval (bisection, MTD-bi) and its fail-soft value may narrow it further; a
    guess only sets the first window."""
    lower = 0
    upper = rempts + cfg[C_TRICKW] * rem + cfg[C_BONUS]
    beta = guess
    while lower < upper:
        if beta <= lower or beta > upper:
            beta = (lower + upper + 1) // 2
        g = _search(hands, cfg, pts, suit, rank, ttk, ttv, stats, scratch, ZERO, turn, k, lead_suit, win_card,
                    win_pl, tval, tmask, rempts, rem, trick_no, beta - 1, beta)
        if g >= beta:
            lower = g
        else:
            upper = g
        beta = (lower + upper + 1) // 2
    return lower

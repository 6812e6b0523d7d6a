# mypy: ignore-errors
# (numba code: int64 scalars, intrinsics and dispatchers that mypy cannot type; the kernel is
# checked by tests against the typed Python reference instead)
"""The compiled search kernel (numba, nopython, ``cache=True``): imported only when a solve runs.

Same search as :mod:`stammtisch.solve.reference`, on flat int64 data:

* players are indices ``0 … m-1`` in the order of play (the driver maps them to seats);
* all the search's data sits in one int64 work array ``w`` (see the ``W_*`` offsets): the
  scalars of the query (``C_*``), per-card tables (card points, the card's suit mask, its
  strength in the suit), the hands as card masks (changed in place and restored on the way
  back), counters and the move lists per depth. One array instead of nine because numba passes
  every array argument of the recursive call as a struct with a reference count: with nine
  arrays the call alone costs several times what it costs with two, at every node
  (bench/solver.py);
* the transposition table ``tt`` is one int64 array of (key, low-card holders, packed entry,
  spare) quadruples, two-way buckets in one cache line;
* a zero-window (or any-window) fail-soft alpha-beta over the *future* takings, recursing card
  by card; the value of a trick is added when it completes;
* at every trick start a two-way transposition table keyed on (cards still in the hands,
  leader), holding a lower and an upper bound and the best lead; entries of other queries are
  told apart by a generation number, so the table is never cleared (the bounds of one
  zero-window search serve the next). In the key each suit's low cards (no card points,
  below every card with points) count only by their order and holders (``_low_cards_key``):
  positions that differ just in which of them are left have one value and share an entry;
* bounds: 0 ≤ future ≤ points (or tricks) still out, checked before anything else; at a
  trick start also the run of highest trumps held by one side (each such card wins its
  trick, so its points are sure for that side: a lower or an upper bound), and the leader's
  quick tricks (``_quick_takings``: runs of highest cards he can cash one after the other);
* merging: of a run of cards of one hand that are neighbours in their suit among the cards
  still out (the trick in progress included), they win and lose exactly the same tricks in
  any line of play; with the same card points only the highest is searched, with different
  points too once the side that takes this trick is fixed (``_fixed_side``; always so for the
  trick's last card): then the dearest if it goes to the side the mover plays for, else the
  cheapest;
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

# the work array's slots and the table's packing (``_layout``: the solver reads them without numba)
from ._layout import (  # noqa: F401
    BIG,
    C_ACE,
    C_BONUS,
    C_COUNT,
    C_FORCED,
    C_GEN,
    C_HEAD,
    C_M,
    C_MAX,
    C_MUST,
    C_NSUITS,
    C_TRICKW,
    C_TRUMP,
    C_TTMASK,
    C_ZDIGITS,
    CFG_SIZE,
    GEN_MASK,
    GEN_SHIFT,
    HASH_MULT,
    HASH_MULT2,
    MAX_DEPTH,
    MUST_ALWAYS,
    MUST_NEVER,
    MUST_UNTRUMPED,
    SCRATCH_STRIDE,
    TT_STRIDE,
    VALUE_BITS,
    VALUE_MASK,
    W_HANDS,
    W_HIST,
    W_LOWS,
    W_OWNER,
    W_PTS,
    W_RANK,
    W_SCRATCH,
    W_SIZE,
    W_STATS,
    W_SUIT,
)

ZERO = np.int64(0)
NONE = np.int64(-1)


@njit(cache=True)
def _beats(card: int, best: int, trump: int, suit: np.ndarray, so: int) -> bool:
    if (1 << card) & trump:
        return ((1 << best) & trump) == 0 or card > best
    if (1 << best) & trump:
        return False
    return suit[so + card] == suit[so + best] and card > best


@njit(cache=True)
def _legal(hand: int, k: int, lead_suit: int, win_card: int, trump: int, suit: np.ndarray, so: int, must: int,
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
            higher = follow & suit[so + win_card] & ~((2 << win_card) - 1)
            if higher:
                return higher
        return follow
    trumps = hand & trump
    if trumps and (must == MUST_ALWAYS or (must == MUST_UNTRUMPED and not trumped)):
        if head and trumped:
            over = trumps & suit[so + win_card] & ~((2 << win_card) - 1)
            if over:
                return over
        return trumps
    return hand


@njit(cache=True)
def legal_mask(hand: int, k: int, lead_suit: int, win_card: int, trump: int, suit: np.ndarray, must: int,
               head: int, forced: int, trick_no: int, m: int, ace: int) -> int:
    """``_legal`` for the tests (a separate entry so the kernel's own stays inlinable)."""
    return _legal(hand, k, lead_suit, win_card, trump, suit, 0, must, head, forced, trick_no, m, ace)


@njit(cache=True)
def beats(card: int, best: int, trump: int, suit: np.ndarray) -> bool:
    return _beats(card, best, trump, suit, 0)


@njit(cache=True)
def _popcount(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True)
def _quick_takings(w: np.ndarray, m: int, lead: int, trump: int, allc: int, trick_w: int) -> int:
    """Takings the leader's side is sure of at a trick start: the leader cashes, suit by suit,
    his run of highest cards still out. A trump run always wins; a run in another suit wins as
    long as every other player who holds a trump still has a card of the suit to follow with
    (so nobody can ruff, and no partner can take the lead away). Cashing one suit leaves what
    matters for the other suits untouched (whoever has to follow keeps his trumps and his other
    suits; whoever discards holds no trump), so the runs add up."""
    sure = 0
    rest = allc
    own = w[W_HANDS + lead]
    while rest:
        x = w[W_SUIT + trailing_zeros(rest)]
        rest &= ~x
        xs = allc & x
        if not own & xs:
            continue
        limit = 64
        if trump and not (x & trump):
            for i in range(m):
                if i != lead and w[W_HANDS + i] & trump:
                    n = _popcount(w[W_HANDS + i] & x)
                    if n < limit:
                        limit = n
        taken = 0
        while taken < limit and xs:
            c = 63 - leading_zeros(xs)
            if not (own >> c) & 1:
                break
            sure += w[W_PTS + c] + trick_w
            xs ^= 1 << c
            taken += 1
    return sure


@njit(cache=True)
def quick_takings(w: np.ndarray, lead: int) -> int:
    """``_quick_takings`` of the work array's hands, for the tests."""
    m = w[C_M]
    allc = 0
    for i in range(m):
        allc |= w[W_HANDS + i]
    return _quick_takings(w, m, lead, w[C_TRUMP], allc, w[C_TRICKW])


@njit(cache=True)
def _tt_find(tt: np.ndarray, key: int, low_key: int, idx: int, gen: int) -> int:
    for j in range(2):
        s = (idx ^ j) * TT_STRIDE
        if tt[s] == key and tt[s + 1] == low_key and (tt[s + 2] >> GEN_SHIFT) == gen:
            return s
    return -1


@njit(cache=True)
def _low_cards_key(w: np.ndarray, allc: int, m: int) -> tuple[int, int]:
    """The position's low cards up to their ranks among each other: (the cards still in the
    hands with each suit's low cards moved to the top of the suit's low block, the players
    holding those low cards in order). The cards without points at the bottom of a suit only
    matter by their order among each other and who holds them, so positions with the same
    pair have the same value (Tippen's cards and trick goals: every card is such a low card)."""
    canon = allc
    holders = 0
    for s in range(w[C_NSUITS]):
        block = w[W_LOWS + s]
        lows = allc & block
        if lows:
            n = _popcount(lows)
            top = 63 - leading_zeros(block)
            canon = (canon & ~block) | (((1 << n) - 1) << (top - n + 1))
            while lows:
                c = trailing_zeros(lows)
                lows &= lows - 1
                holders = holders * m + w[W_OWNER + c]
    return canon, holders


@njit(cache=True)
def _fixed_side(w: np.ndarray, m: int, turn: int, k: int, c: int, lead_suit: int, win_card: int, win_pl: int,
                trump: int, count: int) -> int:
    """Whether the trick's takings go to the counted side (1) or not (0) once the mover plays
    ``c``, whatever the players after him do; -1 if one of them on the other side can still
    take the trick. (Who cannot beat the winning card cannot beat any card that beats it.)"""
    if k == 0:
        lead = w[W_SUIT + c]
        wc = c
        wp = turn
    else:
        lead = lead_suit
        if _beats(c, win_card, trump, w, W_SUIT):
            wc = c
            wp = turn
        else:
            wc = win_card
            wp = win_pl
    side = (count >> wp) & 1
    higher = ~((2 << wc) - 1)
    p = turn
    for _ in range(m - 1 - k):
        p += 1
        if p == m:
            p = 0
        if ((count >> p) & 1) == side:
            continue
        hp = w[W_HANDS + p]
        follow = hp & lead
        if follow:
            if (lead >> wc) & 1 and follow & higher:
                return -1
        else:
            trumps = hp & trump
            if trumps and (not (trump >> wc) & 1 or trumps & higher):
                return -1
    return side


@njit(cache=True)
def fixed_side(w: np.ndarray, turn: int, k: int, c: int, lead_suit: int, win_card: int, win_pl: int) -> int:
    """``_fixed_side`` on the work array's hands and query, for the tests."""
    return _fixed_side(w, w[C_M], turn, k, c, lead_suit, win_card, win_pl, w[C_TRUMP], w[C_COUNT])


@njit(cache=True)
def low_cards_key(w: np.ndarray) -> tuple[int, int]:
    """``_low_cards_key`` of the work array's hands, for the tests."""
    m = w[C_M]
    allc = 0
    for i in range(m):
        allc |= w[W_HANDS + i]
    return _low_cards_key(w, allc, m)


_I = types.int64
_A1 = types.Array(types.int64, 1, "C")
_SEARCH_SIG = _I(_A1, _A1, *([_I] * 13))


# One explicit signature: a recursive function compiled for several argument types (literal
# ints) crashes when loaded from numba's cache (numba issues 6061, 6713).
@njit(_SEARCH_SIG, cache=True)
def _search(w: np.ndarray, tt: np.ndarray, depth: int, turn: int, k: int, lead_suit: int, win_card: int,
            win_pl: int, tval: int, tmask: int, rempts: int, rem: int, trick_no: int, alpha: int, beta: int) -> int:
    w[W_STATS] += 1
    m = w[C_M]
    trick_w = w[C_TRICKW]
    bonus = w[C_BONUS]
    if k == 0 and rem == 0:
        return 0
    top = rempts + trick_w * rem + bonus
    if top <= alpha:
        return top
    if beta <= 0:
        return 0
    allc = 0
    for i in range(m):
        allc |= w[W_HANDS + i]
    count = w[C_COUNT]
    trump = w[C_TRUMP]
    if k == 0 and rem == 1:
        # one card each: the last trick plays itself
        best = trailing_zeros(w[W_HANDS + turn])
        wp = turn
        p = turn
        for _ in range(m - 1):
            p += 1
            if p == m:
                p = 0
            c = trailing_zeros(w[W_HANDS + p])
            if _beats(c, best, trump, w, W_SUIT):
                best = c
                wp = p
        if (count >> wp) & 1:
            return rempts + trick_w + bonus
        return 0
    tt_move = -1
    key = 0
    low_key = -1
    idx = 0
    gen = w[C_GEN]
    if k == 0:
        if w[C_ZDIGITS] >= m * rem and (w[C_FORCED] == 0 or trick_no >= 2):
            # (forced leads name the trump Ace itself: not on tricks 1 and 2)
            canon, low_key = _low_cards_key(w, allc, m)
            key = canon | (turn << 58)
        else:
            key = allc | (turn << 58)
        idx = (((key ^ (low_key * HASH_MULT2)) * HASH_MULT) >> 20) & w[C_TTMASK]
        slot = _tt_find(tt, key, low_key, idx, gen)
        w[W_STATS + 1] += 1
        if slot >= 0:
            w[W_STATS + 2] += 1
            e = tt[slot + 2]
            lo = e & VALUE_MASK
            hi = (e >> VALUE_BITS) & VALUE_MASK
            tt_move = ((e >> 24) & 127) - 1
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
        if trump and count == w[C_MAX] and bonus == 0:
            # sure tricks: the run of highest trumps still out held by one side wins a trick per card
            max_cards = 0
            for i in range(m):
                if (count >> i) & 1:
                    max_cards |= w[W_HANDS + i]
            tr = allc & trump
            c = 63 - leading_zeros(tr) if tr else 0
            if tr == 0:
                pass
            elif (max_cards >> c) & 1:
                if trick_w == 0 or count & (count - 1) == 0:
                    sure = 0
                    while tr and (max_cards >> c) & 1:
                        sure += w[W_PTS + c] + trick_w
                        tr ^= 1 << c
                        if tr:
                            c = 63 - leading_zeros(tr)
                    if sure >= beta:
                        return sure
            elif trick_w == 0:
                lost = 0
                while tr and not (max_cards >> c) & 1:
                    lost += w[W_PTS + c]
                    tr ^= 1 << c
                    if tr:
                        c = 63 - leading_zeros(tr)
                if top - lost <= alpha:
                    return top - lost
        if count == w[C_MAX] and bonus == 0 and (w[C_FORCED] == 0 or trick_no >= 2):
            sure = _quick_takings(w, m, turn, trump, allc, trick_w)
            if sure:
                if (count >> turn) & 1:
                    if sure >= beta:
                        return sure
                elif top - sure <= alpha:
                    return top - sure
    a_in = alpha
    b_in = beta

    # ---- candidate moves: representatives of equivalent cards, scored, sorted
    hand = w[W_HANDS + turn]
    legal = _legal(hand, k, lead_suit, win_card, trump, w, W_SUIT, w[C_MUST], w[C_HEAD], w[C_FORCED], trick_no,
                   m, w[C_ACE])
    out = allc | tmask
    is_max = (w[C_MAX] >> turn) & 1
    base = W_SCRATCH + depth * SCRATCH_STRIDE
    # runs: cards of the mover that are neighbours among the cards still out win or lose this
    # trick alike and every later trick alike. With equal card points one of them is searched
    # (the highest); with different points too when the side that takes this trick is already
    # fixed (``_fixed_side``): then only the dearest is searched if that side is the one the
    # mover plays for, else the cheapest (swapping two cards of a run in any line of play gives
    # the same winners; the points only move between this trick and a later one)
    forced = w[C_FORCED]
    carry = -1  # the card kept so far of the run in progress
    run_side = -2  # the run's _fixed_side, -2 while not asked
    n = 0
    rest = legal
    while rest:
        low = rest & -rest
        rest ^= low
        c = trailing_zeros(low)
        pc = w[W_PTS + c]
        if carry < 0:
            run_side = -2
        above = out & w[W_SUIT + c] & ~((2 << c) - 1)
        joined = False
        if above:
            nh = trailing_zeros(above)
            if (legal >> nh) & 1:
                if w[W_PTS + nh] == pc:
                    joined = True
                elif forced == 0:
                    if run_side == -2:
                        run_side = _fixed_side(w, m, turn, k, c, lead_suit, win_card, win_pl, trump, count)
                    joined = run_side >= 0
        if carry >= 0 and w[W_PTS + carry] != pc:
            # points differ within the run only across a link made because its side is fixed
            if (w[W_PTS + carry] > pc) == (run_side == is_max):
                c = carry
                pc = w[W_PTS + carry]
        if joined:
            carry = c
            continue
        carry = -1
        rc = w[W_RANK + c]
        if k == 0:
            # high cards of long holdings first; trumps first for the maximizers
            score = rc + pc + 4 * ((trump >> c) & 1) * is_max
            if above == 0:
                score += 20  # the highest card of its suit still out
            score = (score << 24) + w[W_HIST + c]  # ties: the leads that cut off most
            if c == tt_move:
                score = 1 << 62
        else:
            wins = _beats(c, win_card, trump, w, W_SUIT)
            new_w = turn if wins else win_pl
            if ((count >> new_w) & 1) == is_max:
                if wins and k + 1 < m:
                    score = 1000 + 8 * pc + rc  # not last: win high, harder to overtake
                else:
                    score = 1000 + 8 * pc - (rc if wins else 0)
            else:
                score = -8 * pc - rc
        # insertion by descending score
        j = n
        while j > 0 and w[base + 2 * (j - 1) + 1] < score:
            w[base + 2 * j] = w[base + 2 * (j - 1)]
            w[base + 2 * j + 1] = w[base + 2 * (j - 1) + 1]
            j -= 1
        w[base + 2 * j] = c
        w[base + 2 * j + 1] = score
        n += 1

    best = -BIG if is_max else BIG
    best_card = -1
    for j in range(n):
        c = w[base + 2 * j]
        bit = 1 << c
        w[W_HANDS + turn] ^= bit
        if k == 0:
            n_lead = w[W_SUIT + c]
            n_wc = c
            n_wp = turn
        else:
            n_lead = lead_suit
            if _beats(c, win_card, trump, w, W_SUIT):
                n_wc = c
                n_wp = turn
            else:
                n_wc = win_card
                n_wp = win_pl
        n_tval = tval + w[W_PTS + c]
        if k + 1 == m:
            gain = 0
            if (count >> n_wp) & 1:
                gain = n_tval + trick_w
                if rem == 1:
                    gain += bonus
            v = gain + _search(w, tt, depth + 1, n_wp, ZERO, ZERO, NONE, NONE, ZERO, ZERO, rempts - n_tval,
                               rem - 1, trick_no + 1, alpha - gain, beta - gain)
        else:
            nxt = turn + 1
            if nxt == m:
                nxt = 0
            v = _search(w, tt, depth + 1, nxt, k + 1, n_lead, n_wc, n_wp, n_tval, tmask | bit, rempts, rem,
                        trick_no, alpha, beta)
        w[W_HANDS + turn] ^= bit
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
            if k == 0:
                w[W_HIST + c] += rem * rem
            break

    if k == 0:
        # look the key up again: deeper searches may have moved it out of its slot
        slot = _tt_find(tt, key, low_key, idx, gen)
        lo = 0
        hi = VALUE_MASK
        w[W_STATS + 1] += 1
        if slot >= 0:
            w[W_STATS + 2] += 1
            e = tt[slot + 2]
            lo = e & VALUE_MASK
            hi = (e >> VALUE_BITS) & VALUE_MASK
        else:
            # prefer a free or stale slot, else the one holding the smaller subtree
            s0 = idx * TT_STRIDE
            s1 = (idx ^ 1) * TT_STRIDE
            e0 = tt[s0 + 2]
            e1 = tt[s1 + 2]
            if (e0 >> GEN_SHIFT) != gen:
                slot = s0
            elif (e1 >> GEN_SHIFT) != gen:
                slot = s1
            elif ((e0 >> 31) & 31) <= ((e1 >> 31) & 31):
                slot = s0
            else:
                slot = s1
            tt[slot] = key
            tt[slot + 1] = low_key
        if best <= a_in:
            if best < hi:
                hi = best
        elif best >= b_in:
            if best > lo:
                lo = best
        else:
            lo = best
            hi = best
        tt[slot + 2] = lo | (hi << VALUE_BITS) | ((best_card + 1) << 24) | (rem << 31) | (gen << GEN_SHIFT)
    return best


@njit(cache=True)
def probe(w: np.ndarray, tt: np.ndarray, turn: int, k: int, lead_suit: int, win_card: int, win_pl: int, tval: int,
          tmask: int, rempts: int, rem: int, trick_no: int, alpha: int, beta: int) -> int:
    """One fail-soft search of the future takings in the window (alpha, beta)."""
    return _search(w, tt, ZERO, turn, k, lead_suit, win_card, win_pl, tval, tmask, rempts, rem, trick_no, alpha,
                   beta)


@njit(cache=True)
def exact(w: np.ndarray, tt: np.ndarray, turn: int, k: int, lead_suit: int, win_card: int, win_pl: int, tval: int,
          tmask: int, rempts: int, rem: int, trick_no: int, guess: int) -> int:
    """Zero-window searches until the bounds meet: the exact future. Each search at ``beta``
    halves the interval (bisection, MTD-bi) and its fail-soft value may narrow it further; a
    guess only sets the first window."""
    lower = 0
    upper = rempts + w[C_TRICKW] * rem + w[C_BONUS]
    beta = guess
    while lower < upper:
        if beta <= lower or beta > upper:
            beta = (lower + upper + 1) // 2
        g = _search(w, tt, ZERO, turn, k, lead_suit, win_card, win_pl, tval, tmask, rempts, rem, trick_no,
                    beta - 1, beta)
        if g >= beta:
            lower = g
        else:
            upper = g
        beta = (lower + upper + 1) // 2
    return lower

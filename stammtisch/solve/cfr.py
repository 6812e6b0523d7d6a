"""Counterfactual regret minimisation for declare-then-play games: every seat in turn says yes
or no (Tippen's tap or pass), the seats that said yes may then each take one of two private
options (the exchange), and a table of payoffs per deal ends the game.

The chance part of such a game is a *bank*: a finite list of deals, each with every seat's
information bucket and the payoff of every seat for every leaf. The trainer is chance-sampled
Monte Carlo CFR (MCCFR): each iteration draws a batch of deals from the bank and walks the
whole decision tree of those deals at once with numpy (the tree is tiny: ``2**n`` leaves of the
declaring, times ``2**n`` exchange profiles), updating the regrets of every information set
the batch reaches. Averages are weighted linearly in the iteration (linear CFR), which
forgets the poor early strategies faster than the plain average.

Information sets (positions count from the first seat to declare, 0, to the last, ``n-1``):

* declaring: ``(position, earlier declarations as a bit mask, own bucket)``;
* exchange: ``(position, the set of seats that said yes, own bucket)``; a seat does not see the
  others' exchange choices, so the exchange is a simultaneous choice among the active seats.

Saying no always pays 0 (a passer pays nothing and gains nothing), which the exact best
response (``exploitability``) uses. Everything is deterministic given the numpy seed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass
class Bank:
    """The chance part of the abstract game.

    ``buckets[d, p]``: the information bucket of position ``p`` in deal ``d``.
    ``payoff[d, S, e, p]``: what position ``p`` gains when the set ``S`` (bit ``p`` = position
    ``p`` said yes) plays and the active positions took exchange options ``e`` (bit ``p`` =
    option 1). Without an exchange the ``e`` axis has length 1.
    """

    players: int
    num_buckets: int
    buckets: IntArray
    payoff: FloatArray

    @property
    def deals(self) -> int:
        return int(self.buckets.shape[0])

    @property
    def has_exchange(self) -> bool:
        return int(self.payoff.shape[2]) > 1


@dataclass
class Strategy:
    """``tap[p, h, b]``: probability that position ``p`` says yes after the earlier positions'
    declarations ``h`` (a bit mask of ``p`` bits) with bucket ``b``. ``swap[p, S, b]``: the
    probability of exchange option 1 for position ``p`` in the active set ``S``."""

    tap: FloatArray
    swap: FloatArray

    @classmethod
    def uniform(cls, players: int, buckets: int, exchange: bool) -> Strategy:
        n = players
        return cls(np.full((n, 1 << n, buckets), 0.5),
                   np.full((n, 1 << n, buckets), 0.5 if exchange else 0.0))


def _leaf_masks(n: int) -> tuple[IntArray, IntArray]:
    """Per position ``p`` and leaf ``S``: the history ``S``'s first ``p`` bits (what ``p``
    saw) and whether ``p`` said yes in ``S``."""
    leaves = np.arange(1 << n)
    hist = np.stack([leaves & ((1 << p) - 1) for p in range(n)])
    said = np.stack([(leaves >> p) & 1 for p in range(n)])
    return hist, said


@dataclass
class _Walk:
    """The reach and counterfactual quantities of one batch of deals under a strategy."""

    reach_tap: FloatArray  # [B, p, S]: the probability position p's declaration in S has
    ex_value: FloatArray  # [B, S, p, a]: p's value in S with its exchange option a, others mixed


def _walk(bank: Bank, strat: Strategy, deals: IntArray) -> _Walk:
    n = bank.players
    hist, said = _leaf_masks(n)
    b = bank.buckets[deals]  # [B, n]
    reach = np.empty((len(deals), n, 1 << n))
    for p in range(n):
        pt = strat.tap[p][hist[p][None, :], b[:, p][:, None]]  # [B, S]
        reach[:, p, :] = np.where(said[p][None, :] == 1, pt, 1.0 - pt)
    pay = bank.payoff[deals]  # [B, S, E, n]
    E = pay.shape[2]
    if E == 1:
        ex_value = np.repeat(pay[:, :, 0, :, None], 2, axis=3)  # [B, S, n, 2]
        return _Walk(reach, ex_value)
    # exchange option probabilities of each position in each leaf
    leaves = np.arange(1 << n)
    # a lone tapper takes the pot without exchanging: only sets of two or more exchange
    plays = np.array([S.bit_count() >= 2 for S in range(1 << n)])
    q1 = np.empty((len(deals), n, 1 << n))
    for p in range(n):
        q1[:, p, :] = strat.swap[p][leaves[None, :], b[:, p][:, None]] * plays[None, :]
    e = np.arange(E)
    ex_value = np.zeros((len(deals), 1 << n, n, 2))
    for p in range(n):
        # weight of profile e for the others (positions not active in S do not choose: their
        # bit is taken as 0, and profiles with such a bit set weigh nothing)
        w = np.ones((len(deals), 1 << n, E))
        for k in range(n):
            if k == p:
                continue
            bit = (e >> k) & 1  # [E]
            act = ((leaves >> k) & 1)[None, :, None]  # [1, S, 1]
            qk = q1[:, k, :][:, :, None]  # [B, S, 1]
            wk = np.where(act == 1, np.where(bit[None, None, :] == 1, qk, 1.0 - qk),
                          np.where(bit[None, None, :] == 1, 0.0, 1.0))
            w *= wk
        for a in (0, 1):
            sel = ((e >> p) & 1) == a
            ex_value[:, :, p, a] = (w[:, :, sel] * pay[:, :, sel, p]).sum(axis=2)
        ex_value[:, ~plays, p, 1] = ex_value[:, ~plays, p, 0]
    return _Walk(reach, ex_value)


@dataclass
class _Values:
    """Counterfactual values (weighted by the others' reach, summed over the batch)."""

    tap: FloatArray  # [n, H, b]: value of saying yes at (p, h, b) (no is 0)
    swap: FloatArray  # [n, S, b, 2]: value of each exchange option
    seat_value: FloatArray  # [n]: expected value of each position under the strategy, summed


def _values(bank: Bank, strat: Strategy, deals: IntArray, best_swap: bool = False,
            positions: range | None = None) -> tuple[_Values, _Walk]:
    n = bank.players
    w = _walk(bank, strat, deals)
    b = bank.buckets[deals]
    hist, said = _leaf_masks(n)
    B = bank.num_buckets
    H = 1 << n
    tapv = np.zeros((n, H, B))
    swapv = np.zeros((n, H, B, 2))
    seat_value = np.zeros(n)
    total = w.reach_tap.prod(axis=1)  # [B, S]
    for p in positions if positions is not None else range(n):
        others = total / np.where(w.reach_tap[:, p, :] > 0, w.reach_tap[:, p, :], 1.0)
        # where p's own reach is 0 the division above is wrong; recompute those exactly
        zero = w.reach_tap[:, p, :] == 0
        if zero.any():
            prod = np.ones_like(total)
            for k in range(n):
                if k != p:
                    prod *= w.reach_tap[:, k, :]
            others = np.where(zero, prod, others)
        ev = w.ex_value[:, :, p, :]  # [B, S, 2]
        active = said[p] == 1  # [S]
        # exchange values at (p, S, b)
        cf = others[:, :, None] * ev * active[None, :, None]  # [B, S, 2]
        for s in np.nonzero(active)[0]:
            np.add.at(swapv[p, s], b[:, p], cf[:, s, :])
        if best_swap:
            pick = np.argmax(swapv[p], axis=2)  # [S, B]
            chosen = np.take_along_axis(ev, pick.T[b[:, p]][:, :, None], axis=2)[:, :, 0]
        else:
            q = strat.swap[p][np.arange(H)[None, :], b[:, p][:, None]]  # [B, S]
            chosen = q * ev[:, :, 1] + (1 - q) * ev[:, :, 0]
        leaf = others * chosen * active[None, :]  # [B, S]: p's cf value at its yes-leaves
        for s in np.nonzero(active)[0]:
            np.add.at(tapv[p, hist[p][s]], b[:, p], leaf[:, s])
        seat_value[p] = (total * chosen * active[None, :]).sum()
    return _Values(tapv, swapv, seat_value), w


def exploitability(bank: Bank, strat: Strategy) -> dict[str, list[float]]:
    """The exact best response of each position against ``strat`` within the bank: per
    position, its value under ``strat`` and under its best response (the others keep
    ``strat``), per deal. The gain is their difference."""
    deals = np.arange(bank.deals)
    vals, _ = _values(bank, strat, deals)
    br, _ = _values(bank, strat, deals, best_swap=True)
    # best declarations: bottom-up is not needed, because saying no ends the seat's part (0)
    # and saying yes leads only to its exchange, already best (best_swap)
    br_value = np.maximum(br.tap, 0.0).sum(axis=(1, 2))
    D = bank.deals
    value = vals.seat_value / D
    best = br_value / D
    return {"value": [float(x) for x in value], "best_response": [float(x) for x in best],
            "gain": [float(max(0.0, x - y)) for x, y in zip(best, value, strict=True)]}


@dataclass
class Trainer:
    """Chance-sampled MCCFR over a bank (see the module docstring)."""

    bank: Bank
    seed: int = 0
    batch: int = 256
    regret_tap: FloatArray = field(init=False)
    regret_swap: FloatArray = field(init=False)
    avg_tap: FloatArray = field(init=False)
    avg_swap: FloatArray = field(init=False)
    iterations: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        n, B = self.bank.players, self.bank.num_buckets
        H = 1 << n
        self.rng = np.random.default_rng(self.seed)
        self.regret_tap = np.zeros((n, H, B, 2))
        self.regret_swap = np.zeros((n, H, B, 2))
        self.avg_tap = np.zeros((n, H, B, 2))
        self.avg_swap = np.zeros((n, H, B, 2))

    @staticmethod
    def _match(regret: FloatArray) -> FloatArray:
        """Regret matching: the probability of option 1."""
        pos = np.maximum(regret, 0.0)
        s = pos.sum(axis=-1)
        return np.where(s > 0, pos[..., 1] / np.where(s > 0, s, 1.0), 0.5)

    def current(self) -> Strategy:
        return Strategy(self._match(self.regret_tap),
                        self._match(self.regret_swap) if self.bank.has_exchange
                        else np.zeros(self.regret_swap.shape[:3]))

    def average(self) -> Strategy:
        def mean(acc: FloatArray, fallback: FloatArray) -> FloatArray:
            s = acc.sum(axis=-1)
            return np.where(s > 0, acc[..., 1] / np.where(s > 0, s, 1.0), fallback)

        cur = self.current()
        swap = mean(self.avg_swap, cur.swap) if self.bank.has_exchange else cur.swap
        return Strategy(mean(self.avg_tap, cur.tap), swap)

    def step(self) -> None:
        """One iteration: a batch of deals, every position's regrets updated at once."""
        self.iterations += 1
        t = self.iterations
        strat = self.current()
        if self.batch >= self.bank.deals:  # the whole bank: plain (vanilla) CFR
            deals = np.arange(self.bank.deals)
        else:
            deals = self.rng.integers(0, self.bank.deals, size=self.batch)
        vals, walk = _values(self.bank, strat, deals)
        # regrets: yes is worth vals.tap, no 0; the node's value is the mix
        p_tap = strat.tap
        node = p_tap * vals.tap
        self.regret_tap[..., 1] += vals.tap - node
        self.regret_tap[..., 0] += 0.0 - node
        if self.bank.has_exchange:
            q = strat.swap[..., None]
            node_s = (q * vals.swap[..., 1:2] + (1 - q) * vals.swap[..., 0:1])
            self.regret_swap += vals.swap - node_s
        # linear averaging, weighted by the seat's own reach: its reach at (p, h, b) is what
        # the earlier positions' choices do not decide, i.e. its own earlier choices (none:
        # each seat declares once), so the plain strategy weighted by visits is the average
        reach_w = self._own_reach_weights(deals)
        self.avg_tap[..., 1] += t * reach_w * p_tap
        self.avg_tap[..., 0] += t * reach_w * (1 - p_tap)
        if self.bank.has_exchange:
            sw = self._swap_reach_weights(deals, walk)
            self.avg_swap[..., 1] += t * sw * strat.swap
            self.avg_swap[..., 0] += t * sw * (1 - strat.swap)

    def _own_reach_weights(self, deals: IntArray) -> FloatArray:
        """How often the batch visits each declaring information set (a seat's own reach
        there is 1: it has not acted before)."""
        n, B = self.bank.players, self.bank.num_buckets
        out = np.zeros((n, 1 << n, B))
        b = self.bank.buckets[deals]
        for p in range(n):
            out[p] += np.bincount(b[:, p], minlength=B)[None, :]
        return out

    def _swap_reach_weights(self, deals: IntArray, walk: _Walk) -> FloatArray:
        """The seat's own reach of each exchange set: its probability of having said yes."""
        n, B = self.bank.players, self.bank.num_buckets
        hist, said = _leaf_masks(n)
        out = np.zeros((n, 1 << n, B))
        b = self.bank.buckets[deals]
        for p in range(n):
            own = walk.reach_tap[:, p, :] * (said[p] == 1)[None, :]  # [B, S]
            for s in np.nonzero(said[p] == 1)[0]:
                np.add.at(out[p, s], b[:, p], own[:, s])
        return out

    def run(self, iterations: int, checkpoints: tuple[int, ...] = (),
            on_checkpoint: Callable[[int, Strategy], None] | None = None,
            progress: Callable[[int], None] | None = None) -> Strategy:
        for _ in range(iterations):
            self.step()
            if progress is not None:
                progress(1)
            if on_checkpoint is not None and self.iterations in checkpoints:
                on_checkpoint(self.iterations, self.average())
        return self.average()

"""The MCCFR trainer and its exact best response (stammtisch.solve.cfr): against a toy game whose
equilibrium is known by hand, and against a brute-force best response over every pure
strategy, computed by plain enumeration independent of the numpy code."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stammtisch.solve.cfr import Bank, Strategy, Trainer, exploitability


def bluff_bank(pot: float = 1.0) -> Bank:
    """Two seats. Forehand is weak (deal 0) or strong (deal 1), the dealer has one bucket.
    Both play: a strong forehand wins 1 from the dealer, a weak one loses 1 and the dealer
    gains 2. A lone tapper gains the pot. Equilibrium (by indifference): the strong forehand
    taps; the weak one taps half the time (pot 1); the dealer facing a tap taps with
    probability pot / (1 + pot) and always taps after a pass."""
    pay = np.zeros((2, 4, 1, 2))
    for d in range(2):
        pay[d, 0b01, 0, 0] = pot
        pay[d, 0b10, 0, 1] = pot
    pay[0, 0b11, 0] = (-1.0, 2.0)
    pay[1, 0b11, 0] = (1.0, -1.0)
    return Bank(2, 2, np.array([[0, 0], [1, 0]]), pay)


@pytest.mark.parametrize("pot", [1.0, 3.0])
def test_vanilla_cfr_finds_the_known_equilibrium(pot: float) -> None:
    bank = bluff_bank(pot)
    strat = Trainer(bank, seed=1, batch=2).run(4000)
    assert strat.tap[0, 0, 1] == pytest.approx(1.0, abs=0.02)  # strong forehand taps
    # the weak forehand taps so often that the dealer is indifferent: P(weak | tap) = 1/3
    assert strat.tap[0, 0, 0] == pytest.approx(0.5, abs=0.05)
    assert strat.tap[1, 1, 0] == pytest.approx(pot / (1 + pot), abs=0.05)  # dealer after a tap
    assert strat.tap[1, 0, 0] == pytest.approx(1.0, abs=0.02)  # after a pass the pot is his
    assert max(exploitability(bank, strat)["gain"]) < 0.02


def test_sampled_cfr_converges_and_exploitability_falls() -> None:
    bank = bluff_bank(1.0)
    trainer = Trainer(bank, seed=3, batch=1)  # one deal per iteration: chance sampling
    gains: dict[int, float] = {}
    trainer.run(3000, (10, 3000), lambda it, s: gains.__setitem__(it, max(exploitability(bank, s)["gain"])))
    assert gains[3000] < gains[10]
    assert gains[3000] < 0.05


def brute_value(bank: Bank, tap: np.ndarray, swap: np.ndarray, p: int) -> float:
    """Position ``p``'s expected value by plain enumeration of deals, leaves and exchanges."""
    n = bank.players
    E = bank.payoff.shape[2]
    total = 0.0
    for d in range(bank.deals):
        b = bank.buckets[d]
        for S in range(1 << n):
            reach = 1.0
            for q in range(n):
                pt = tap[q, S & ((1 << q) - 1), b[q]]
                reach *= pt if S >> q & 1 else 1 - pt
            if reach == 0:
                continue
            plays = S.bit_count() >= 2  # a lone tapper does not exchange
            for e in range(E):
                if e & ~S or (e and not plays):
                    continue
                w = 1.0
                for k in range(n):
                    if S >> k & 1 and E > 1 and plays:
                        qk = swap[k, S, b[k]]
                        w *= qk if e >> k & 1 else 1 - qk
                total += reach * w * bank.payoff[d, S, e, p]
    return total / bank.deals


def brute_best_response(bank: Bank, strat: Strategy, p: int) -> float:
    """The best value of position ``p`` over every pure strategy of its information sets."""
    n, B = bank.players, bank.num_buckets
    decl = [(h, b) for h in range(1 << p) for b in range(B)]
    swaps = ([(S, b) for S in range(1 << n) if S >> p & 1 and S.bit_count() >= 2 for b in range(B)]
             if bank.has_exchange else [])
    best = -np.inf
    for choice in itertools.product((0.0, 1.0), repeat=len(decl) + len(swaps)):
        tap = strat.tap.copy()
        swap = strat.swap.copy()
        for (h, b), c in zip(decl, choice, strict=False):
            tap[p, h, b] = c
        for (S, b), c in zip(swaps, choice[len(decl):], strict=True):
            swap[p, S, b] = c
        best = max(best, brute_value(bank, tap, swap, p))
    return float(best)


def random_bank(seed: int, n: int, exchange: bool) -> tuple[Bank, Strategy]:
    rng = np.random.default_rng(seed)
    D, B = 4, 2
    E = 1 << n if exchange else 1
    pay = rng.integers(-3, 4, size=(D, 1 << n, E, n)).astype(float)
    for S in range(1 << n):  # passers gain nothing
        for p in range(n):
            if not S >> p & 1:
                pay[:, S, :, p] = 0.0
    bank = Bank(n, B, rng.integers(0, B, size=(D, n)), pay)
    strat = Strategy(rng.random((n, 1 << n, B)), rng.random((n, 1 << n, B)) if exchange
                     else np.zeros((n, 1 << n, B)))
    return bank, strat


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(2, True), (3, False)]))
def test_exact_best_response_matches_brute_force(seed: int, shape: tuple[int, bool]) -> None:
    n, exchange = shape
    bank, strat = random_bank(seed, n, exchange)
    ex = exploitability(bank, strat)
    for p in range(n):
        assert ex["value"][p] == pytest.approx(brute_value(bank, strat.tap, strat.swap, p), abs=1e-9)
        assert ex["best_response"][p] == pytest.approx(brute_best_response(bank, strat, p), abs=1e-9)

"""The numba kernel against the Python reference and against ``games.tricks``; lazy import."""

from __future__ import annotations

import random
import subprocess
import sys
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from stammtisch.cards import PIQUET32, TAPP36, WHIST52, Pack
from stammtisch.games import tricks
from stammtisch.solve import Kind, Solver, position_from_state
from stammtisch.solve.deals import TAPP_CONTRACTS, play_randomly, tapp_state, tippen_state

PACKS = (TAPP36, PIQUET32, WHIST52)
MUST = ("always", "untrumped", "never")


@st.composite
def follow_situations(draw: st.DrawFn) -> tuple[Pack, int, int, int, int, str, bool]:
    pack = draw(st.sampled_from(PACKS))
    hand = draw(st.integers(0, pack.full_mask))
    lead = draw(st.integers(0, pack.size - 1))
    winner = draw(st.integers(0, pack.size - 1))
    trump = draw(st.sampled_from((0, *pack.suit_masks)))
    return pack, hand, lead, winner, trump, draw(st.sampled_from(MUST)), draw(st.booleans())


def suit_table(pack: Pack) -> np.ndarray:
    out = np.zeros(64, dtype=np.int64)
    for c in range(pack.size):
        out[c] = pack.suit_masks[c // pack.ranks_per_suit]
    return out


@settings(max_examples=400, deadline=None)
@given(follow_situations())
def test_kernel_follow_rule_is_tricks_legal_follows(case: tuple[Pack, int, int, int, int, str, bool]) -> None:
    from stammtisch.solve import _kernel

    pack, hand, lead, winner, trump, must, head = case
    suit = suit_table(pack)
    want = tricks.legal_follows(hand, int(suit[lead]), trump, winner, int(suit[winner]), must, head)
    got = _kernel.legal_mask(hand, 1, int(suit[lead]), winner, trump, suit, MUST.index(must), int(head), 0, 5, 4, -1)
    assert got == want


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(PACKS), st.integers(0, 51), st.integers(0, 51), st.integers(0, 4))
def test_kernel_beats_is_tricks_beats(pack: Pack, card: int, best: int, trump_suit: int) -> None:
    from stammtisch.solve import _kernel

    card, best = card % pack.size, best % pack.size
    trump = 0 if trump_suit == 4 else pack.suit_masks[trump_suit]
    want = tricks.beats(card, best, pack.suit_masks, pack.ranks_per_suit, trump)
    assert bool(_kernel.beats(card, best, trump, suit_table(pack))) == want


def random_ending(rng: random.Random) -> Any:
    """A random play-phase state with 2–6 tricks left, of a random Tapp contract or Tippen."""
    while True:
        if rng.random() < 0.75:
            players = rng.choice((3, 4))
            state = tapp_state(rng, rng.choice(TAPP_CONTRACTS), players)
            hand = 11 if players == 3 else 8
            play_randomly(state, rng, hand - rng.randrange(2, 6 if players == 3 else 5))
        else:
            rid, n = rng.choice([("tippen/grupp-1975", 4), ("tippen/dreiblatt-1859", 5), ("tippen/loup-1821", 3)])
            state = tippen_state(rng, rid, n)
            play_randomly(state, rng, rng.randrange(0, 2))
        for _ in range(rng.randrange(3)):
            if not state.is_terminal():
                state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            return state


def answers(solver: Solver) -> tuple[Any, ...]:
    pos = solver.root
    if pos.kind == Kind.POINTS:
        main: Any = (solver.declarer_points(), solver.can_reach(61), solver.can_reach(pos.tapp_points + 30))
    elif pos.kind == Kind.ALL_TRICKS:
        main = solver.all_tricks()
    elif pos.kind == Kind.NO_TRICK:
        main = solver.no_trick()
    elif pos.kind == Kind.RAMSCH:
        main = solver.ramsch()
    else:
        main = solver.guaranteed_tricks()
    return main, solver.contract_move_values()


def test_numba_and_python_agree_on_1000_random_positions() -> None:
    rng = random.Random(2024)
    for _ in range(1000):
        pos = position_from_state(random_ending(rng))
        assert answers(Solver(pos, "numba")) == answers(Solver(pos, "python")), pos


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 120), st.sampled_from(("frage", "solo:S", "herzsolo")))
def test_threshold_query_agrees_with_exact_value(seed: int, target: int, contract: str) -> None:
    rng = random.Random(seed)
    state = tapp_state(rng, contract)
    play_randomly(state, rng, 5)
    pos = position_from_state(state)
    exact = Solver(pos).declarer_points()
    assert Solver(pos).can_reach(target) == (exact >= target)
    values = Solver(pos).contract_move_values()
    # the seat on turn's best card is worth the position's value
    pick = max if pos.turn == pos.declarer else min
    assert pick(values.values()) == exact


def test_importing_the_solver_does_not_import_numba() -> None:
    code = ("import sys, stammtisch.solve, stammtisch.solve.position, stammtisch.solve.solver, stammtisch.cli;"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

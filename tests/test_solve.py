"""Open-hand solvers against a brute-force minimax driven through the engines themselves, on
endings of up to 4 tricks, for every Tapp contract kind and for Tippen; both backends (numba
kernel and the Python reference)."""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from stammtisch.solve import Kind, NotInPlay, Solver, position_from_state
from stammtisch.solve.deals import TAPP_CONTRACTS, play_randomly, tapp_state, tippen_state

BACKENDS = ("numba", "python")


def engine_minimax(state: Any, evaluate: Callable[[Any], int], maximizers: set[int]) -> int:
    """Minimax over the engine's own legal actions and results (no solver code involved)."""
    if state.is_terminal():
        return evaluate(state)
    values = []
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        values.append(engine_minimax(child, evaluate, maximizers))
    return max(values) if state.current_player() in maximizers else min(values)


def engine_move_values(state: Any, evaluate: Callable[[Any], int], maximizers: set[int]) -> dict[int, int]:
    out = {}
    for action in state.legal_actions():
        child = state.clone()
        child.apply(action)
        out[action] = engine_minimax(child, evaluate, maximizers)
    return out


def random_card_keeping_the_deal_alive(rng: random.Random, state: Any) -> int | None:
    """A random legal card after which the deal is not over (Durch and Bettel end early)."""
    actions = state.legal_actions()
    rng.shuffle(actions)
    for action in actions:
        child = state.clone()
        child.apply(action)
        if not child.is_terminal():
            return int(action)
    return None


def ending(rng: random.Random, state: Any, tricks_left: int) -> Any | None:
    """Random cards until ``tricks_left`` tricks remain, then 0–2 cards of the next trick;
    None if the deal could not be kept alive that long."""
    hand_size = len(state.view(state.current_player())["hand"])
    plays = (hand_size - tricks_left) * len(state.view(None)["hand_sizes"]) + rng.randrange(3)
    if state.view(None)["game"] == "tippen":
        plays = (hand_size - tricks_left) * len(state.view(None)["active"]) + rng.randrange(3)
    for _ in range(plays):
        action = random_card_keeping_the_deal_alive(rng, state)
        if action is None:
            return None
        state.apply(action)
    return state


def tapp_endings(contract: str, players: int, count: int, seed: int) -> list[Any]:
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < count:
        state = ending(rng, tapp_state(rng, contract, players), 4 if players == 3 else 3)
        if state is not None:
            out.append(state)
    return out


def tricks_of(state: Any) -> dict[int, int]:
    return {int(s): t for s, t in state.result().summary["tricks"].items()}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("contract", TAPP_CONTRACTS)
def test_tapp_endings_match_engine_minimax(contract: str, players: int, backend: str) -> None:
    for state in tapp_endings(contract, players, 3, seed=zlib.crc32(f"{contract}/{players}".encode())):
        pos = position_from_state(state)
        solver = Solver(pos, backend)
        declarer = pos.declarer
        others = set(pos.seats) - {declarer}
        if pos.kind == Kind.POINTS:
            def points(s: Any) -> int:
                return int(s.result().summary["card_points"]["declarer"])
            best = engine_minimax(state, points, {declarer})
            assert solver.declarer_points() == best
            for target in (best - 1, best, best + 1, 61):
                assert Solver(pos, backend).can_reach(target) == (best >= target)
            assert solver.contract_move_values() == engine_move_values(state, points, {declarer})
        elif pos.kind == Kind.ALL_TRICKS:
            def all_taken(s: Any, declarer: int = declarer) -> int:
                return int(all(t == 0 for seat, t in tricks_of(s).items() if seat != declarer))
            assert int(solver.all_tricks()) == engine_minimax(state, all_taken, {declarer})
            assert solver.contract_move_values() == engine_move_values(state, all_taken, {declarer})
        elif pos.kind == Kind.NO_TRICK:
            def none_taken(s: Any, declarer: int = declarer) -> int:
                return int(tricks_of(s)[declarer] == 0)
            assert int(solver.no_trick()) == engine_minimax(state, none_taken, {declarer})
            assert solver.contract_move_values() == engine_move_values(state, none_taken, {declarer})
        else:
            assert pos.kind == Kind.RAMSCH and not others - set(pos.seats)
            ramsch = solver.ramsch()
            for seat in pos.seats:
                def own(s: Any, seat: int = seat) -> int:
                    return int(s.result().summary["card_points"][str(seat)])
                assert ramsch[seat] == engine_minimax(state, own, set(pos.seats) - {seat})
            mover = pos.turn
            def mover_points(s: Any, mover: int = mover) -> int:
                return int(s.result().summary["card_points"][str(mover)])
            assert solver.contract_move_values() == engine_move_values(state, mover_points,
                                                                       set(pos.seats) - {mover})


TIPPEN_CASES = [("tippen/grupp-1975", 4), ("tippen/grupp-1975", 3), ("tippen/dreiblatt-1859", 5),
                ("tippen/vierblatt-1859", 3), ("tippen/drei-karten-1821", 4), ("tippen/loup-1821", 3)]


def engine_maxn(state: Any) -> tuple[dict[int, int], int]:
    """Max-n through the engine: each player maximizes his own tricks, ties to the lowest card."""
    if state.is_terminal():
        return tricks_of(state), -1
    me = state.current_player()
    best: dict[int, int] | None = None
    best_action = -1
    for action in sorted(state.legal_actions()):
        child = state.clone()
        child.apply(action)
        values, _ = engine_maxn(child)
        if best is None or values[me] > best[me]:
            best, best_action = values, action
    assert best is not None
    return best, best_action


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("ruleset_id", "players"), TIPPEN_CASES)
def test_tippen_endings_match_engine_minimax(ruleset_id: str, players: int, backend: str) -> None:
    rng = random.Random(players * 7 + len(ruleset_id))
    for _ in range(3):
        state = tippen_state(rng, ruleset_id, players)
        if ruleset_id == "tippen/loup-1821":  # 6 tricks: an ending of 3
            state = ending(rng, state, 3)
        if state is None:
            continue
        pos = position_from_state(state)
        solver = Solver(pos, backend)
        guaranteed = solver.guaranteed_tricks()
        for seat in pos.seats:
            def own(s: Any, seat: int = seat) -> int:
                return tricks_of(s)[seat]
            assert guaranteed[seat] == engine_minimax(state, own, {seat})
        mover = pos.turn
        def mover_tricks(s: Any, mover: int = mover) -> int:
            return tricks_of(s)[mover]
        assert solver.contract_move_values() == engine_move_values(state, mover_tricks, {mover})
        values, card = solver.maxn()
        want_values, want_card = engine_maxn(state)
        assert values == {s: want_values[s] for s in pos.seats}
        assert card == want_card


def test_position_follows_the_engine_through_whole_deals() -> None:
    rng = random.Random(3)
    states = [tapp_state(rng, c, p) for c in TAPP_CONTRACTS for p in (3, 4)]
    states += [tippen_state(rng, rid, n) for rid, n in TIPPEN_CASES]
    for state in states:
        while not state.is_terminal():
            pos = position_from_state(state)
            assert pos.legal_cards() == sorted(state.legal_actions())
            card = rng.choice(state.legal_actions())
            state.apply(card)
            if not state.is_terminal():
                assert position_from_state(state) == pos.play(card)


def test_not_in_play_is_refused() -> None:
    state = tapp_state(random.Random(1), "frage")
    play_randomly(state, random.Random(2), 11)
    with pytest.raises(NotInPlay):
        position_from_state(state)


def test_unknown_backend_is_refused() -> None:
    pos = position_from_state(tapp_state(random.Random(1), "frage"))
    with pytest.raises(ValueError, match="backend"):
        Solver(pos, "fortran")


@pytest.mark.parametrize("backend", BACKENDS)
def test_rufer_partnership_side_against_plain_minimax(backend: str) -> None:
    """A side of two seats (declarer and the called card's holder, known to the solver): the
    solver's answers equal an unpruned minimax over the position's own moves."""
    from dataclasses import replace

    from stammtisch.solve import Goal
    from stammtisch.solve.reference import brute_force_value

    for state in tapp_endings("rufer:C", 3, 3, seed=11) + tapp_endings("frage", 3, 3, seed=12):
        pos = position_from_state(state)
        partner = (pos.declarer + 1) % 3
        pos = replace(pos, side=pos.side | 1 << partner, partner=partner)
        solver = Solver(pos, backend)
        points = Goal(pos.side, pos.side, by_points=True)
        tricks = Goal(pos.side, pos.side, by_points=False)
        assert solver.declarer_points() == brute_force_value(pos, points) + pos.tapp_points
        total = pos.tricks_played + pos.tricks_left
        assert solver.all_tricks() == (brute_force_value(pos, tricks) == total)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rufer_goal_counts_the_sides_the_engine_pays(backend: str) -> None:
    """Rufer (rules reference §3.4): the called card's holder hands it over and defends, so the
    solver's side is the declarer alone, and its verdict is the engine's own result with the
    holder among the seats that play against the declarer; the search bot plays for that side."""
    from stammtisch.bots.pimc import _with_declarer

    rng = random.Random(21)
    seen = 0
    while seen < 3:
        state = ending(rng, tapp_state(rng, "rufer:C", 4), 3)
        if state is None or state.holder < 0:
            continue
        seen += 1
        pos = position_from_state(state)
        declarer, holder = pos.declarer, state.holder
        assert pos.side == 1 << declarer and pos.partner == holder
        assert _with_declarer(pos, declarer) and not _with_declarer(pos, holder)

        def won(s: Any) -> int:
            return int(bool(s.won()))

        assert int(Solver(pos, backend).all_tricks()) == engine_minimax(state, won, {declarer})
        # the holder pays like any defender when the declarer takes every trick
        final = state.clone()
        while not final.is_terminal():
            final.apply(final.legal_actions()[0])
        returns = final.returns()
        assert len({returns[s] for s in range(4) if s != declarer}) == 1
        assert (returns[holder] < 0) == bool(final.won())


def test_a_table_of_more_players_than_the_kernel_holds_is_solved_right() -> None:
    """The kernel's work array holds eight hands; Tippen seats up to ten. A nine-player
    Dreiblatt deal whose ninth player holds the pack's first card (where the ninth hand and
    the first card's holder would share a slot) gets the reference's answers on either backend."""
    from stammtisch.solve import _kernel
    from stammtisch.solve.solver import KERNEL_SEATS

    assert _kernel.W_OWNER - _kernel.W_HANDS == KERNEL_SEATS
    rng = random.Random(9)
    checked = 0
    while checked < 3:
        state = tippen_state(rng, "tippen/dreiblatt-1859", 9)
        pos = position_from_state(state)
        if len(pos.seats) <= KERNEL_SEATS or not pos.hands[pos.seats[-1]] & 1:
            continue
        checked += 1
        answers = []
        for backend in BACKENDS:
            solver = Solver(pos, backend)
            answers.append([solver.value(solver.tippen_goal(s), pos) for s in pos.seats])
        assert answers[0] == answers[1]
        assert all(0 <= v <= pos.tricks_left for v in answers[0])

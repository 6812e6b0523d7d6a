"""Work the solver does once for a deal: interchangeable cards solved as one, the best card
found with zero-window searches, the answers and the table shared by every caller of one
position. Each against the plain definitions (every card solved exactly, a new solver)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from stammtisch.games import TableState, new_game
from stammtisch.rules import ruleset
from stammtisch.solve import Kind, Position, Solver, position_from_state
from stammtisch.solve.deals import TAPP_CONTRACTS, play_randomly, tapp_state, tippen_state
from stammtisch.solve.reference import brute_force_value
from stammtisch.solve.solver import equivalent_cards

BACKENDS = ("numba", "python")


def endings(seed: int, count: int, tricks_left: int) -> list[Any]:
    """Random Tapp (every contract) and Tippen states with a few tricks left, 0-2 cards into
    the trick."""
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < count:
        if len(out) % 3 == 2:
            state = tippen_state(rng, rng.choice(("tippen/grupp-1975", "tippen/dreiblatt-1859")))
            play_randomly(state, rng, max(0, len(state.view(state.current_player())["hand"]) - tricks_left))
        else:
            state = tapp_state(rng, rng.choice(TAPP_CONTRACTS), rng.choice((3, 4)))
            play_randomly(state, rng, (10 if len(state.hands) == 3 else 8) - tricks_left)
        for _ in range(rng.randrange(3)):
            if not state.is_terminal():
                state.apply(rng.choice(state.legal_actions()))
        if not state.is_terminal():
            out.append(state)
    return out


def plain_move_values(solver: Solver, pos: Position) -> dict[int, int]:
    goal = solver.contract_goal(pos)
    return {c: solver.value(goal, pos.play(c)) for c in pos.legal_cards()}


def test_equivalent_cards_have_the_same_value_in_every_line() -> None:
    merged = 0
    for state in endings(seed=11, count=120, tricks_left=3):
        pos = position_from_state(state)
        same = equivalent_cards(pos)
        goal = Solver(pos, "python").contract_goal(pos)
        for card, first in same.items():
            if first != card:
                merged += 1
                assert brute_force_value(pos.play(card), goal) == brute_force_value(pos.play(first), goal), pos
    assert merged >= 10  # the endings do have interchangeable cards


def test_a_card_between_in_the_trick_keeps_two_cards_apart() -> None:
    """Two cards of one hand with a card of the trick in progress between them are not one:
    one of them beats it, the other does not."""
    rng = random.Random(5)
    for _ in range(400):
        state = tapp_state(rng, "frage")
        play_randomly(state, rng, rng.randrange(8))
        if state.is_terminal():
            continue
        state.apply(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        pos = position_from_state(state)
        if not pos.trick:
            continue
        for card, first in equivalent_cards(pos).items():
            low, high = min(card, first), max(card, first)
            assert not any(low < t < high for t in pos.trick)


@pytest.mark.parametrize("backend", BACKENDS)
def test_move_values_with_merged_cards_are_every_card_solved(backend: str) -> None:
    for state in endings(seed=23, count=40, tricks_left=4):
        pos = position_from_state(state)
        solver = Solver(pos, backend)
        goal = solver.contract_goal(pos)
        assert solver.move_values(goal, pos) == plain_move_values(Solver(pos, backend), pos)


@pytest.mark.parametrize("backend", BACKENDS)
def test_best_card_is_the_lowest_of_the_best(backend: str) -> None:
    for state in endings(seed=37, count=60, tricks_left=4):
        pos = position_from_state(state)
        goal = Solver(pos, backend).contract_goal(pos)
        maximizing = bool(goal.maximizers >> pos.turn & 1)
        binary = pos.kind in (Kind.ALL_TRICKS, Kind.NO_TRICK)
        plain = Solver(pos, backend)
        if binary:
            total = pos.tricks_played + pos.tricks_left
            values = {c: int(plain.at_least(goal, total, pos.play(c))) for c in pos.legal_cards()}
        else:
            values = plain_move_values(plain, pos)
        best = (max if maximizing else min)(values.values())
        want = next(c for c in pos.legal_cards() if values[c] == best)
        assert Solver(pos, backend).best_card(goal, pos, binary) == want


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_shared_solver_answers_a_repeated_question_without_searching(backend: str) -> None:
    rng = random.Random(3)
    state = play_randomly(tapp_state(rng, "frage"), rng, 6)
    pos = position_from_state(state)
    first = Solver.shared(pos, backend)
    points = first.declarer_points(pos)
    reached = first.can_reach(points, pos)
    nodes = first.nodes
    again = Solver.shared(position_from_state(state.clone()), backend)
    assert again is first
    assert again.declarer_points(pos) == points and again.can_reach(points, pos) == reached
    assert again.can_reach(points + 1, pos) is False  # known from the exact value
    assert again.nodes == nodes
    assert Solver.shared(pos, "python" if backend == "numba" else "numba") is not first


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_judged_card_is_what_every_card_solved_says(backend: str) -> None:
    """The analysis' judgement of a card (best, its value, the better cards) found with
    zero-window searches equals the one read off every legal card's exact value."""
    from stammtisch.analysis.deals import _judge_card, _mover_wants_more

    rng = random.Random(41)
    for state in endings(seed=41, count=40, tricks_left=4):
        pos = position_from_state(state)
        values = Solver(pos, backend).contract_move_values(pos)
        best = (max if _mover_wants_more(pos) else min)(values.values())
        card = rng.choice(pos.legal_cards())
        better = [c for c in pos.legal_cards() if values[c] == best] if values[card] != best else []
        assert _judge_card(Solver(pos, backend), pos, card) == (best, values[card], better)


def test_analysing_loads_neither_scipy_nor_numba_where_it_needs_none() -> None:
    """A Tapp solve through numba's dispatchers (the kernel's library turned off) loads the
    kernel but not scipy (numba's BLAS search); a Tippen deal is small enough for the
    reference search and loads neither."""
    record = Path(__file__).parent / "records" / "rules-2.4-example-3-grupp-1975.json"
    code = ("import random, sys\n"
            "from stammtisch.solve import Solver, position_from_state\n"
            "from stammtisch.solve.deals import tapp_state\n"
            "from stammtisch.analysis.deals import analyze_record\n"
            f"analyze_record({str(record)!r})\n"
            "print('numba' in sys.modules)\n"
            "Solver(position_from_state(tapp_state(random.Random(1), 'frage'))).declarer_points()\n"
            "print('numba' in sys.modules, 'scipy' in sys.modules)\n")
    env = dict(os.environ, STAMMTISCH_KERNEL_LIB="0")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False", "True", "False"]


def discard_deals(seed: int, count: int) -> list[list[Any]]:
    """Three Frage deals, each as the play-phase states after ``count`` different discards (one
    contract: the others' hands are the same, the declarer's differs in the discarded cards)."""
    game = new_game(ruleset("tapp/modern", {"players": 3}))
    rng = random.Random(seed)
    out = []
    while len(out) < 3:
        deck = list(range(game.pack.size))
        rng.shuffle(deck)
        state = game.new_deal(TableState(dealer=0), deck)
        while not state.is_terminal() and state.view(None)["phase"] != "discard":
            names = {state.action_to_string(a): a for a in state.legal_actions()}
            pick = next((names[n] for n in ("play", "contract:frage") if n in names), None)
            state.apply(pick if pick is not None else rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        branches = []
        for action in rng.sample(state.legal_actions(), min(count, len(state.legal_actions()))):
            branch = state.clone()
            branch.apply(action)
            while not branch.is_terminal() and branch.view(None)["phase"] != "play":
                branch.apply(branch.legal_actions()[0])
            if not branch.is_terminal():
                branches.append(branch)
        if len(branches) >= 2:
            out.append(branches)
    return out


def test_solvers_sharing_a_table_generation_answer_as_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Solvers of one contract's different discards and of later positions of one deal share
    their table entries, other deals of the same contract do not; each answers as a solver with
    a table of its own does."""
    from stammtisch.solve import solver as solver_module

    groups = discard_deals(seed=8, count=6)
    positions = [[position_from_state(s) for s in group] for group in groups]
    rng = random.Random(8)
    for group, states in zip(positions, groups, strict=True):
        later = play_randomly(states[0].clone(), rng, 4)
        if not later.is_terminal():
            group.append(position_from_state(later))
    # another deal of the same contract and cards: the declarer's and a defender's dearest
    # cards swapped (the cards without points, which the table's key tells apart, stay)
    for group in list(positions):
        pos = group[0]
        other = next(s for s in pos.seats if s != pos.declarer)
        give, take = (max((c for c in range(64) if pos.hands[s] >> c & 1), key=lambda c: pos.card_points[c])
                      for s in (pos.declarer, other))
        hands = list(pos.hands)
        hands[pos.declarer] ^= (1 << give) | (1 << take)
        hands[other] ^= (1 << give) | (1 << take)
        positions.append([replace(pos, hands=tuple(hands))])

    def answers() -> list[tuple[int, dict[int, int]]]:
        out = []
        for group in positions:
            for pos in group:
                solver = Solver(pos, "numba")
                out.append((solver.declarer_points(pos), solver.contract_move_values(pos)))
        return out

    shared = answers()
    monkeypatch.setattr(solver_module, "_generation_for", lambda shape, hands: solver_module._next_generation())
    assert shared == answers()


def test_a_repeated_analysis_of_a_deal_searches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process keeps its solvers' answers: asked again (the web server's worker after its
    cache let the deal go), a deal's analysis is the same and takes no search at all."""
    from stammtisch.analysis.deals import analyze_record
    from stammtisch.solve import solver as solver_module

    record = Path(__file__).parent / "records" / "rules-3-wt-frage-60.json"
    first = [a.to_json() for a in analyze_record(record)]
    searches: list[int] = []

    def counted(self: Solver, goal: Any, pos: Position, need: int | None) -> int:
        searches.append(1)
        raise AssertionError("searched again")

    monkeypatch.setattr(solver_module.Solver, "_kernel_call", counted)
    monkeypatch.setattr(solver_module.ReferenceSearch, "future", counted)
    assert [a.to_json() for a in analyze_record(record)] == first
    assert not searches


def test_the_generations_kept_per_deal_shape_are_bounded() -> None:
    """A search bot solves many worlds of one deal, each its own: the generations kept for
    sharing stay few however many there were."""
    from stammtisch.solve import solver as solver_module

    rng = random.Random(1)
    for _ in range(3 * solver_module.FAMILY_GENERATIONS):
        state = tapp_state(rng, "frage")
        pos = position_from_state(play_randomly(state, rng, 8))
        Solver(pos, "numba").can_reach(61)
    assert max(len(f) for f in solver_module._FAMILIES.values()) <= solver_module.FAMILY_GENERATIONS

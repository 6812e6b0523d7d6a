"""The numba kernel against the Python reference and against ``games.tricks``; lazy import."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from typing import Any

import numpy as np
from depth import cases
from hypothesis import given, settings
from hypothesis import strategies as st

from stammtisch.cards import PIQUET32, TAPP36, WHIST52, Pack
from stammtisch.games import tricks
from stammtisch.solve import Goal, Kind, Position, Solver, position_from_state
from stammtisch.solve.deals import TAPP_CONTRACTS, play_randomly, tapp_state, tippen_state
from stammtisch.solve.reference import ReferenceSearch

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


def test_numba_and_python_agree_on_random_positions() -> None:
    rng = random.Random(2024)
    for _ in range(cases(300, 3000)):
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


def kernel_work(pos: Position, goal: Goal) -> np.ndarray:
    """The kernel's work array for ``goal`` with the hands of ``pos`` (players in seat order)."""
    from stammtisch.solve import _kernel

    work = np.zeros(_kernel.W_SIZE, dtype=np.int64)
    work[:_kernel.W_HANDS] = Solver(pos)._compile(goal).static
    for i, seat in enumerate(pos.seats):
        work[_kernel.W_HANDS + i] = pos.hands[seat]
        for card in range(64):
            if pos.hands[seat] >> card & 1:
                work[_kernel.W_OWNER + card] = i
    return work


def same_side_goals(pos: Position) -> list[Goal]:
    """The goals on which the kernel uses quick tricks: the maximizers are the counted seats."""
    if pos.kind == Kind.TRICKS:
        return [Goal(1 << s, 1 << s, by_points=False) for s in pos.seats]
    if pos.kind == Kind.RAMSCH:
        return []
    return [Goal(pos.side, pos.side, by_points=True), Goal(pos.side, pos.side, by_points=False)]


def test_quick_tricks_are_sure_takings() -> None:
    """The leader's quick tricks never exceed what his side takes with best play by all: a lower
    bound of the future when he plays for the counted seats, else ``all still out - quick`` is
    an upper bound (checked against the reference search, which has no such bound)."""
    from stammtisch.solve import _kernel

    rng = random.Random(77)
    used = 0
    for _ in range(300):
        pos = position_from_state(random_ending(rng))
        while pos.trick:
            pos = pos.play(rng.choice(pos.legal_cards()))
        if pos.is_over() or (pos.forced_leads and pos.tricks_played < 2):
            continue
        for goal in same_side_goals(pos):
            future = ReferenceSearch(goal).future(pos)
            sure = _kernel.quick_takings(kernel_work(pos, goal), pos.seats.index(pos.leader))
            used += sure > 0
            if goal.counted >> pos.leader & 1:
                assert sure <= future, (pos, goal)
            else:
                assert goal.upper(pos) - sure >= future, (pos, goal)
    assert used >= 50  # the bound is not vacuous on these positions


def trick_winners(pos: Position) -> set[int]:
    """The seats that can win the trick in progress, over every way of finishing it."""
    if not pos.trick:
        return {pos.leader}
    return set().union(*(trick_winners(pos.play(c)) for c in pos.legal_cards()))


def test_fixed_side_means_every_finish_of_the_trick_goes_there() -> None:
    """When the kernel calls a trick's side fixed after a card (the condition for merging runs of
    unequal card points), every legal way the later players can finish the trick gives it to a
    seat of that side."""
    from stammtisch.solve import _kernel

    rng = random.Random(78)
    fixed_early = 0
    for _ in range(300):
        pos = position_from_state(random_ending(rng))
        goal = same_side_goals(pos)[0] if same_side_goals(pos) else Goal(1 << pos.turn, 1 << pos.turn, True)
        work = kernel_work(pos, goal)
        index = {s: i for i, s in enumerate(pos.seats)}
        k = len(pos.trick)
        if k:
            win_card, win_seat = pos.winner_so_far()
            lead_suit, win_pl = pos.suit_mask_of(pos.trick[0]), index[win_seat]
        else:
            win_card, win_pl, lead_suit = -1, -1, 0
        for card in pos.legal_cards():
            side = _kernel.fixed_side(work, index[pos.turn], k, card, lead_suit, win_card, win_pl)
            if side < 0:
                continue
            fixed_early += k + 1 < len(pos.seats)
            after = pos.play(card)
            winners = trick_winners(after) if after.trick else {after.leader}
            assert {goal.counted >> s & 1 for s in winners} == {side}, (pos, card)
    assert fixed_early >= 50  # fixed before the last card, not only by the last card


@settings(max_examples=cases(60, 600), deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(("frage", "solo:C", "solo:S", "herzsolo")),
       st.integers(3, 6))
def test_merging_runs_keeps_point_values(seed: int, contract: str, tricks_left: int) -> None:
    """Point contracts are where runs of unequal card points get merged: the kernel's exact
    declarer points and move values equal the reference search's (no merging, no ordering)."""
    rng = random.Random(seed)
    state = tapp_state(rng, contract)
    play_randomly(state, rng, 11 - tricks_left)
    for _ in range(rng.randrange(3)):
        state.apply(rng.choice(state.legal_actions()))
    pos = position_from_state(state)
    fast, slow = Solver(pos, "numba"), Solver(pos, "python")
    assert fast.declarer_points() == slow.declarer_points()
    assert fast.contract_move_values() == slow.contract_move_values()


def low_blocks(pos: Position, goal: Goal) -> list[list[int]]:
    """Per suit, its lowest cards without card points (for the goal), up to the first with."""
    blocks = []
    for suit in range(len(pos.suit_masks)):
        block = []
        for card in range(suit * pos.ranks_per_suit, (suit + 1) * pos.ranks_per_suit):
            if goal.by_points and pos.card_points[card]:
                break
            block.append(card)
        blocks.append(block)
    return blocks


def test_low_cards_matter_only_by_order_and_holder() -> None:
    """The table key of the kernel merges positions that differ only in which low cards (no card
    points, below every card with points) are left, as long as their order and holders are the
    same: such positions have the same value (checked with the reference search on the position
    whose low cards are moved to the top of their block), and the kernel gives them one key;
    giving one low card to another player changes the key."""
    from dataclasses import replace

    from stammtisch.solve import _kernel

    rng = random.Random(79)
    moved = changed = 0
    for _ in range(150):
        pos = position_from_state(random_ending(rng))
        while pos.trick:
            pos = pos.play(rng.choice(pos.legal_cards()))
        if pos.is_over() or (pos.forced_leads and pos.tricks_played < 2):
            continue
        goal = same_side_goals(pos)[0] if same_side_goals(pos) else Goal(1 << pos.turn, 1 << pos.turn, True)
        hands = list(pos.hands)
        for block in low_blocks(pos, goal):
            left = [c for c in block if pos.remaining >> c & 1]
            for old, new in zip(left, block[len(block) - len(left):], strict=True):
                holder = next(s for s in pos.seats if pos.hands[s] >> old & 1)
                hands[holder] = hands[holder] & ~(1 << old)
                hands[holder] |= 1 << new << 64  # parked above the pack until every card has moved
        hands = [(h & ((1 << 64) - 1)) | (h >> 64) for h in hands]
        top = replace(pos, hands=tuple(hands))
        if top == pos:
            continue
        moved += 1
        assert ReferenceSearch(goal).future(top) == ReferenceSearch(goal).future(pos), pos
        assert _kernel.low_cards_key(kernel_work(top, goal)) == _kernel.low_cards_key(kernel_work(pos, goal))
        # hand one low card to the next player: another position, another key
        lows = [c for block in low_blocks(pos, goal) for c in block if pos.remaining >> c & 1]
        if len(pos.seats) > 1 and lows:
            card = lows[0]
            holder = next(s for s in pos.seats if pos.hands[s] >> card & 1)
            other = pos.seats[(pos.seats.index(holder) + 1) % len(pos.seats)]
            hands = list(pos.hands)
            hands[holder] &= ~(1 << card)
            hands[other] |= 1 << card
            swapped = replace(pos, hands=tuple(hands))
            changed += 1
            assert _kernel.low_cards_key(kernel_work(swapped, goal)) != _kernel.low_cards_key(kernel_work(pos, goal))
    assert moved >= 50 and changed >= 50


def test_the_kernels_library_answers_as_numbas_dispatchers() -> None:
    """The library of native code (``_kernel_lib``) is the kernel's ``exact`` and ``probe``
    compiled once more: on the same work array and table it gives the same values and leaves
    the same table entries behind."""
    from stammtisch.solve import _kernel, _kernel_lib, solver

    library = _kernel_lib.load()
    assert library is not None, "no C compiler here? the library could not be built"
    rng = random.Random(7)
    for _ in range(150):
        pos = position_from_state(random_ending(rng))
        if len(pos.seats) > solver.KERNEL_SEATS:
            continue
        goal = Solver(pos).contract_goal()
        work = kernel_work(pos, goal)
        turn = pos.seats.index(pos.turn)
        k = len(pos.trick)
        if k:
            win_card, win_seat = pos.winner_so_far()
            lead_suit, win_pl = pos.suit_mask_of(pos.trick[0]), pos.seats.index(win_seat)
        else:
            win_card, win_pl, lead_suit = -1, -1, 0
        pts = work[_kernel.W_PTS:_kernel.W_PTS + 64]
        tval = sum(int(pts[c]) for c in pos.trick)
        rempts = tval + sum(int(pts[c]) for c in range(64) if pos.remaining >> c & 1)
        args = (turn, k, lead_suit, win_card, win_pl, tval, sum(1 << c for c in pos.trick), rempts,
                pos.tricks_left, pos.tricks_played)
        tables = [np.zeros(_kernel.TT_STRIDE << 12, dtype=np.int64) for _ in range(2)]
        works = [work.copy(), work.copy()]
        works[0][_kernel.C_TTMASK] = works[1][_kernel.C_TTMASK] = (1 << 12) - 1
        works[0][_kernel.C_GEN] = works[1][_kernel.C_GEN] = 1
        target = rng.randrange(1, 30)
        got = (library.exact(works[0], tables[0], *args, 1), library.probe(works[0], tables[0], *args, target - 1,
                                                                             target))
        want = (_kernel.exact(works[1], tables[1], *args, 1), _kernel.probe(works[1], tables[1], *args, target - 1,
                                                                              target))
        assert got == want, pos
        assert np.array_equal(tables[0], tables[1])


def test_a_solve_with_the_kernels_library_does_not_import_numba() -> None:
    from stammtisch.solve import _kernel_lib

    assert _kernel_lib.load() is not None  # built in this process if it was not there
    code = ("import sys, random; from stammtisch.solve import Solver, position_from_state;"
            "from stammtisch.solve.deals import tapp_state;"
            "print(Solver(position_from_state(tapp_state(random.Random(3), 'frage'))).declarer_points(),"
            " 'numba' in sys.modules)")
    with_lib = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    env = dict(os.environ, STAMMTISCH_KERNEL_LIB="0")
    without = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                             env=env).stdout.split()
    assert with_lib[1] == "False" and without[1] == "True"
    assert with_lib[0] == without[0]


def test_a_failed_build_of_the_kernels_library_is_tried_once(tmp_path: Any, monkeypatch: Any) -> None:
    from stammtisch.solve import _kernel_lib

    tries = []

    def failing_build(folder: Any, name: str) -> Any:
        tries.append(folder)
        raise RuntimeError("no linker today")

    monkeypatch.setattr(_kernel_lib, "_folders", lambda: [tmp_path])
    monkeypatch.setattr(_kernel_lib, "_build", failing_build)
    assert _kernel_lib.load() is None and _kernel_lib.load() is None
    assert tries == [tmp_path]  # the second process (here: call) read the note and did not try
    assert "no linker today" in next(tmp_path.glob("kernel-*.failed")).read_text()


def test_processes_that_start_together_build_the_kernels_library_once(tmp_path: Any, monkeypatch: Any) -> None:
    """Four at once (here threads, each opening the build's lock as a process does): one
    builds, the others wait for it and load its library."""
    from concurrent.futures import ThreadPoolExecutor

    from stammtisch.solve import _kernel_lib

    builds = []

    def slow_build(folder: Any, name: str) -> Any:
        builds.append(name)
        time.sleep(0.3)
        (folder / name).write_bytes(b"")
        return folder / name

    monkeypatch.setattr(_kernel_lib, "_folders", lambda: [tmp_path])
    monkeypatch.setattr(_kernel_lib, "_build", slow_build)
    monkeypatch.setattr(_kernel_lib, "Library", lambda path: path)
    with ThreadPoolExecutor(4) as pool:
        loaded = list(pool.map(lambda _: _kernel_lib.load(), range(4)))
    assert len(builds) == 1
    assert loaded == [tmp_path / builds[0]] * 4

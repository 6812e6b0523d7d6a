"""The plain-Python reference search: readable, slow, and the yardstick for the numba kernel.

A query is a :class:`~stammtisch.solve.model.Goal`: the maximizing seats try to make the
takings of the counted seats large, everybody else small. The search is alpha-beta with
fail-soft values over the *future* takings (what is still to be won from this position on),
so a position reached by different move orders has one value however much was taken on the
way. At the start of every trick it consults a transposition table keyed on the cards still
in the hands and the leader: with the deal fixed, the remaining cards determine every hand.
The table keeps a lower and an upper bound per key. The bound "no more than the points or
tricks still out" cuts hopeless branches at once (it is what makes all-tricks and no-trick
queries fast: the first lost trick ends the line).

Legal moves and trick winners come from ``Position`` and therefore from
``games.tricks`` (the engines' own rules). No move ordering, no merging of equivalent
cards: those are the kernel's optimisations, and the tests compare the two.
"""

from __future__ import annotations

from .model import Goal, Position

INF = 1 << 30


class ReferenceSearch:
    """One query on one deal: a transposition table shared by every position of that deal."""

    def __init__(self, goal: Goal) -> None:
        self.goal = goal
        self.table: dict[tuple[int, int], tuple[int, int]] = {}
        self.nodes = 0

    def future(self, pos: Position, alpha: int = -INF, beta: int = INF) -> int:
        """Fail-soft alpha-beta value of the takings still to come from ``pos``."""
        self.nodes += 1
        goal = self.goal
        if pos.is_over():
            return 0
        top = goal.upper(pos)
        if top <= alpha:
            return top
        if beta <= 0:
            return 0
        key = None
        if not pos.trick:
            key = (pos.remaining, pos.leader)
            low, high = self.table.get(key, (0, top))
            if low == high:
                return low
            if low >= beta:
                return low
            if high <= alpha:
                return high
            alpha, beta = max(alpha, low), min(beta, high)
        maximizing = bool(goal.maximizers >> pos.turn & 1)
        best = -INF if maximizing else INF
        a, b = alpha, beta
        for card in pos.legal_cards():
            child = pos.play_legal(card)
            gain = goal.taken(child) - goal.taken(pos)
            value = gain + self.future(child, a - gain, b - gain)
            if maximizing:
                best = max(best, value)
                a = max(a, best)
            else:
                best = min(best, value)
                b = min(b, best)
            if a >= b:
                break
        if key is not None:
            low, high = self.table.get(key, (0, top))
            if best <= alpha:
                high = min(high, best)
            elif best >= beta:
                low = max(low, best)
            else:
                low = high = best
            self.table[key] = (low, high)
        return best

    def value(self, pos: Position) -> int:
        """The exact takings of the counted seats at the end, with best play by all."""
        return self.goal.taken(pos) + self.future(pos)

    def move_values(self, pos: Position) -> dict[int, int]:
        """The exact final takings after each legal card of the seat on turn."""
        return {card: self.value(pos.play(card)) for card in pos.legal_cards()}


def brute_force_value(pos: Position, goal: Goal) -> int:
    """Plain minimax without any pruning or table (for tests on small endings)."""
    if pos.is_over():
        return goal.taken(pos)
    values = [brute_force_value(pos.play(c), goal) for c in pos.legal_cards()]
    return max(values) if goal.maximizers >> pos.turn & 1 else min(values)

"""Open-hand ("double dummy") queries on a :class:`Position`, on the numba kernel or in Python.

Every query is a :class:`~stammtisch.solve.model.Goal` (who maximizes, whose takings count,
points or tricks) answered by one of two backends with the same answers:

* ``"numba"`` (default): :mod:`stammtisch.solve._kernel`, run on the first solve from its
  compiled library (``_kernel_lib``: numba not imported) or else through numba;
* ``"python"``: :mod:`stammtisch.solve.reference`, the readable reference.

Tapp (``declarer_points``, ``can_reach``, ``all_tricks``, ``no_trick``, ``ramsch``) and Tippen
(``guaranteed_tricks``, ``maxn``) questions are phrased as goals here; ``move_values`` gives
the value of every legal card of the seat on turn, not only the best.

A :class:`Solver` belongs to one deal: its transposition table entries are valid for every
position reached from the position it was made with (the remaining cards then fix the hands),
and are shared by all queries with the same goal. It also remembers every answer it gave (per
goal and position), so a question asked twice is answered once; ``Solver.shared(pos)`` hands
out one solver per position for the whole process, so that the queries of one deal asked from
different places (the judged cards, the decisions before the play, the par, a repeated
request) share the table and the answers.

``equivalent_cards`` merges cards that are interchangeable in every line of play (neighbours
in their suit among the cards still out, held by one hand, worth the same points): one of
them is searched for all.
"""

from __future__ import annotations

import itertools
import math
import mmap
from array import array
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from . import _layout as K
from .model import Goal, Kind, Position
from .reference import ReferenceSearch

BACKENDS = ("numba", "python")
TT_BITS = 20

_generation = itertools.count(1)
#: Generations fit in 27 bits of a table entry (``_kernel.GEN_MASK``); on wrapping the table is cleared.
_GENERATIONS = (1 << 27) - 1


def _next_generation() -> int:
    gen = next(_generation) % _GENERATIONS
    if gen == 0:
        _KernelMemory.get().clear_table()
        _SHARED.clear()  # their generations come round again
        _FAMILIES.clear()
        gen = next(_generation) % _GENERATIONS
    return gen


def _kernel_module() -> Any:
    """The numba kernel, imported on its first use. Numba's CPU target looks for a BLAS when it
    starts by importing all of scipy.linalg (a fifth of a second); the kernel does no linear
    algebra, so unless scipy is loaded already that search is told there is none."""
    import sys

    kernel = sys.modules.get(f"{__package__}._kernel")
    if kernel is not None:
        return kernel
    blocked = "scipy" not in sys.modules
    if blocked:
        sys.modules["scipy"] = None  # type: ignore[assignment]  # an import of it fails at once
    try:
        from . import _kernel
    finally:
        if blocked:
            del sys.modules["scipy"]
    return _kernel


_ENTRIES: list[Any] = []


def _kernel_entries() -> Any:
    """What runs the kernel's ``exact`` and ``probe``: its compiled library (``_kernel_lib``:
    loaded in milliseconds, numba not imported) where it can be had, else numba's dispatchers.
    The same code either way."""
    if not _ENTRIES:
        from . import _kernel_lib

        _ENTRIES.append(_kernel_lib.load() or _kernel_module())
    return _ENTRIES[0]


class _KernelMemory:
    """The kernel's transposition table and work array, allocated once per process: plain
    int64 buffers (importing numpy is a tenth of a second that the kernel's library does not
    need), handed to numba's dispatchers as numpy views of the same memory. The table is an
    anonymous memory map: its pages are zero until the search first writes to them, as with
    ``numpy.zeros`` (an ``array`` of 32 MB would be written out whole)."""

    _instance: _KernelMemory | None = None

    def __init__(self) -> None:
        self.work = _zeros(K.W_SIZE)
        self.clear_table()

    def clear_table(self) -> None:
        """A new table, all zero (generation 0 is never used)."""
        self.table = memoryview(mmap.mmap(-1, 8 * (K.TT_STRIDE << TT_BITS))).cast("q")
        if hasattr(_kernel_entries(), "path"):  # the library: any buffer of int64
            self.args: tuple[Any, Any] = (self.work, self.table)
        else:
            import numpy as np

            self.args = (np.frombuffer(self.work, dtype=np.int64), np.frombuffer(self.table, dtype=np.int64))

    @classmethod
    def get(cls) -> _KernelMemory:
        if cls._instance is None:
            cls._instance = _KernelMemory()
        return cls._instance

    def nodes(self) -> int:
        return int(self.work[K.W_STATS])


def _zeros(n: int) -> array[int]:
    return array("q", bytes(8 * n))


_ZEROS64 = _zeros(64)


#: the static part of the work array per goal and deal shape (``Solver._compile``), bounded
_STATICS: dict[tuple[Any, ...], array[int]] = {}
#: per goal and deal shape (the tapp's points aside): the generations of the table handed out,
#: each with the cards its solvers' hands held, per player (``_generation_for``), bounded
_FAMILIES: dict[tuple[Any, ...], list[tuple[list[int], int]]] = {}
#: generations kept per shape (the latest): a deal's discards need one
FAMILY_GENERATIONS = 16


def _generation_for(shape: tuple[Any, ...], hands: tuple[int, ...]) -> int:
    """The table generation for a solver of the goal and deal shape ``shape`` whose players
    hold ``hands``. A table entry is the future of a trick start, keyed on the cards still in
    the hands and the leader; it depends on nothing else but who holds those cards. So
    solvers whose hands never give one card to two players (another discard of one contract,
    a later position of the same deal) share a generation and each other's entries."""
    family = _FAMILIES.setdefault(shape, [])
    for held, gen in family:
        if all(hand & held[j] == 0 for i, hand in enumerate(hands) for j in range(len(held)) if j != i):
            for i, hand in enumerate(hands):
                held[i] |= hand
            return gen
    gen = _next_generation()
    if len(_FAMILIES) >= 256:
        _FAMILIES.clear()
        family = _FAMILIES.setdefault(shape, [])
    if len(family) >= FAMILY_GENERATIONS:  # the worlds of a search bot: each deal its own
        del family[0]
    family.append((list(hands), gen))
    return gen


@dataclass
class _Compiled:
    """A goal on this deal in the kernel's terms: the part of the work array the goal fixes
    (query scalars, card points, suits, ranks)."""

    static: array[int]


#: players whose hands the kernel's work array holds (``_kernel.W_HANDS`` to ``W_OWNER``)
KERNEL_SEATS = 8

#: cards in the hands up to which the reference search is the quicker backend (``quick_backend``)
#: while the kernel has to be loaded through numba
SMALL_POSITION = 16


def quick_backend(pos: Position, backend: str = "numba") -> str:
    """The backend that answers a position's questions soonest, loading included: ``backend``
    where the kernel's library is at hand (``_kernel_lib``: loaded in a millisecond; quicker
    than the reference even on a Tippen deal of three cards a hand); else the reference search
    for a position with at most ``SMALL_POSITION`` cards in the hands (milliseconds), where
    loading the kernel through numba takes most of a second. Both give the same answers."""
    if backend == "python" or pos.remaining.bit_count() > SMALL_POSITION or _library_at_hand():
        return backend
    return "python"


def _library_at_hand() -> bool:
    """Is the kernel's library built (or already loaded)? Never builds it."""
    if _ENTRIES:
        return hasattr(_ENTRIES[0], "path")
    from . import _kernel_lib

    library = _kernel_lib.load(build=False)
    if library is not None:
        _ENTRIES.append(library)
    return library is not None


#: solvers handed out by ``Solver.shared``, the most recently used last
_SHARED: OrderedDict[tuple[Position, str], Solver] = OrderedDict()
#: solvers ``Solver.shared`` keeps (a deal's analysis makes a few dozen: one per discard solved)
SHARED_SOLVERS = 256


class Solver:
    """Queries on one deal with all cards open (see the module docstring)."""

    def __init__(self, pos: Position, backend: str = "numba") -> None:
        if backend not in BACKENDS:
            raise ValueError(f"unknown solver backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        self.root = pos
        # the kernel's work array holds the hands of KERNEL_SEATS players: a larger table (Tippen
        # has up to ten) is searched by the reference, which has no such bound
        self.backend = backend if len(pos.seats) <= KERNEL_SEATS else "python"
        self._reference: dict[Goal, ReferenceSearch] = {}
        self._compiled: dict[Goal, _Compiled] = {}
        # the answers given: exact final takings, and threshold answers, per goal and position
        self._values: dict[tuple[Goal, Position], int] = {}
        self._reached: dict[tuple[Goal, Position, int], bool] = {}
        # per goal the last exact value found: the next position asked is most often a few
        # cards on, and its value the same (``_value_is``)
        self._last: dict[Goal, int] = {}
        self.nodes = 0

    @classmethod
    def shared(cls, pos: Position, backend: str = "numba") -> Solver:
        """The process's solver for ``pos`` and its successors: the same one for every caller
        that starts from this position (its table and answers carried over), a new one
        for a position not seen lately."""
        key = (pos, backend)
        solver = _SHARED.get(key)
        if solver is None:
            solver = _SHARED[key] = cls(pos, backend)
            while len(_SHARED) > SHARED_SOLVERS:
                _SHARED.popitem(last=False)
        else:
            _SHARED.move_to_end(key)
        return solver

    # ------------------------------------------------------------------ generic queries
    def value(self, goal: Goal, pos: Position | None = None) -> int:
        """The final takings of the counted seats with best play by all (tapp not included)."""
        pos = self.root if pos is None else pos
        known = self._values.get((goal, pos))
        if known is not None:
            return known
        if self.backend == "python":
            search = self._reference_for(goal)
            before = search.nodes
            out = search.value(pos)
            self.nodes += search.nodes - before
        else:
            last = self._last.get(goal)
            if last is not None and self._value_is(goal, last, pos):
                out = last
            else:
                out = goal.taken(pos) + self._kernel_call(goal, pos, None)
            self._last[goal] = out
        self._values[(goal, pos)] = out
        return out

    def _value_is(self, goal: Goal, value: int, pos: Position) -> bool:
        """Is ``value`` the exact value of ``pos``? Two zero-window searches (at least
        ``value``, not ``value + 1``) where the exact search bisects the range of values with
        several; when the answer is no, their bounds stay in the table for it."""
        return self.at_least(goal, value, pos) and not self.at_least(goal, value + 1, pos)

    def at_least(self, goal: Goal, target: int, pos: Position | None = None) -> bool:
        """Can the maximizers make the counted seats' final takings reach ``target``? One
        zero-window search (the threshold query)."""
        pos = self.root if pos is None else pos
        need = target - goal.taken(pos)
        if need <= 0:
            return True
        if need > goal.upper(pos):
            return False
        known = self._values.get((goal, pos))
        if known is not None:
            return known >= target
        key = (goal, pos, need)
        reached = self._reached.get(key)
        if reached is not None:
            return reached
        if self.backend == "python":
            search = self._reference_for(goal)
            before = search.nodes
            out = search.future(pos, need - 1, need) >= need
            self.nodes += search.nodes - before
        else:
            out = self._kernel_call(goal, pos, need) >= need
        self._reached[key] = out
        return out

    def move_values(self, goal: Goal, pos: Position | None = None) -> dict[int, int]:
        """The final takings of the counted seats after each legal card of the seat on turn."""
        pos = self.root if pos is None else pos
        same = equivalent_cards(pos)
        values: dict[int, int] = {}
        for card in pos.legal_cards():
            first = same[card]
            values[card] = values[first] if first != card else self.value(goal, pos.play(card))
        return values

    def best_card(self, goal: Goal, pos: Position | None = None, binary: bool = False) -> int:
        """The lowest legal card of the seat on turn among those with the best value for
        ``goal`` (the maximizers' highest, the others' lowest): ``binary``, by the threshold
        "all the tricks left" (won or lost), else by the exact final takings. Found with
        zero-window searches against the position's own value, which every best card keeps."""
        pos = self.root if pos is None else pos
        cards = pos.legal_cards()
        if len(cards) == 1:
            return cards[0]
        maximizing = bool(goal.maximizers >> pos.turn & 1)
        same = equivalent_cards(pos)
        tested: dict[int, bool] = {}
        if binary:
            total = pos.tricks_played + pos.tricks_left
            for card in cards:
                first = same[card]
                if first not in tested:
                    tested[first] = self.at_least(goal, total, pos.play(card))
                if tested[first] == maximizing:
                    return card
            return cards[0]  # all lost (maximizers) or all won (the others): all alike
        value = self.value(goal, pos)
        for card in cards:
            first = same[card]
            if first not in tested:
                child = pos.play(card)
                # a maximizer's card is worth at most the position's value, the others' at least
                tested[first] = (self.at_least(goal, value, child) if maximizing
                                 else not self.at_least(goal, value + 1, child))
                if tested[first]:
                    self._values.setdefault((goal, child), value)
            if tested[first]:
                return card
        raise AssertionError("no card keeps the position's value")  # minimax: one always does

    # ------------------------------------------------------------------ Tapp
    def points_goal(self) -> Goal:
        return Goal(maximizers=self.root.side, counted=self.root.side, by_points=True)

    def tricks_goal(self) -> Goal:
        return Goal(maximizers=self.root.side, counted=self.root.side, by_points=False)

    def bettel_goal(self) -> Goal:
        others = self.root.seat_mask() & ~self.root.side
        return Goal(maximizers=self.root.side, counted=others, by_points=False)

    def ramsch_goal(self, seat: int) -> Goal:
        return Goal(maximizers=self.root.seat_mask() & ~(1 << seat), counted=1 << seat, by_points=True)

    def declarer_points(self, pos: Position | None = None) -> int:
        """Card points of the declarer's side at the end (the tapp included), best play by all."""
        pos = self.root if pos is None else pos
        return self.value(self.points_goal(), pos) + pos.tapp_points

    def can_reach(self, target: int = 61, pos: Position | None = None) -> bool:
        """Can the declarer's side reach ``target`` card points (the tapp included)?"""
        pos = self.root if pos is None else pos
        return self.at_least(self.points_goal(), target - pos.tapp_points, pos)

    def all_tricks(self, pos: Position | None = None) -> bool:
        """Can the declarer's side take every trick (Durch, Rufer, Tout)?"""
        pos = self.root if pos is None else pos
        return self.at_least(self.tricks_goal(), pos.tricks_played + pos.tricks_left, pos)

    def no_trick(self, pos: Position | None = None) -> bool:
        """Can the declarer avoid taking any trick (Bettel)?"""
        pos = self.root if pos is None else pos
        return self.at_least(self.bettel_goal(), pos.tricks_played + pos.tricks_left, pos)

    def ramsch(self, pos: Position | None = None) -> dict[int, int]:
        """Per seat: the fewest card points he can hold himself to if all others play against
        him (paranoid; the tapp goes to the last trick's winner)."""
        pos = self.root if pos is None else pos
        return {s: self.value(self.ramsch_goal(s), pos) for s in pos.seats}

    # ------------------------------------------------------------------ Tippen
    def tippen_goal(self, seat: int) -> Goal:
        return Goal(maximizers=1 << seat, counted=1 << seat, by_points=False)

    def guaranteed_tricks(self, pos: Position | None = None) -> dict[int, int]:
        """Per active seat: the tricks he takes against all others together (paranoid)."""
        pos = self.root if pos is None else pos
        return {s: self.value(self.tippen_goal(s), pos) for s in pos.seats}

    def maxn(self, pos: Position | None = None) -> tuple[dict[int, int], int]:
        """Max-n: every player maximizes his own tricks; (final tricks per seat, the card the
        seat on turn plays). Ties go to the lowest card."""
        pos = self.root if pos is None else pos
        values, card = _maxn(pos, {})
        return {s: values[i] for i, s in enumerate(pos.seats)}, card

    # ------------------------------------------------------------------ per contract
    def contract_goal(self, pos: Position | None = None) -> Goal:
        """The goal that decides the position's contract, seen from the seat on turn for Ramsch
        and Tippen (everyone for himself)."""
        pos = self.root if pos is None else pos
        if pos.kind == Kind.POINTS:
            return self.points_goal()
        if pos.kind == Kind.ALL_TRICKS:
            return self.tricks_goal()
        if pos.kind == Kind.NO_TRICK:
            return self.bettel_goal()
        if pos.kind == Kind.RAMSCH:
            return self.ramsch_goal(pos.turn)
        return self.tippen_goal(pos.turn)

    def contract_move_values(self, pos: Position | None = None) -> dict[int, int]:
        """The value of each legal card in the contract's own terms: final declarer points
        (tapp included) for point contracts, 1/0 for won/lost in all-tricks and no-trick
        contracts, the mover's own final points (Ramsch, paranoid) or tricks (Tippen)."""
        pos = self.root if pos is None else pos
        goal = self.contract_goal(pos)
        if pos.kind == Kind.POINTS:
            return {c: v + pos.tapp_points for c, v in self.move_values(goal, pos).items()}
        if pos.kind in (Kind.ALL_TRICKS, Kind.NO_TRICK):
            total = pos.tricks_played + pos.tricks_left
            return {c: int(self.at_least(goal, total, pos.play(c))) for c in pos.legal_cards()}
        return self.move_values(goal, pos)

    # ------------------------------------------------------------------ backends
    def _reference_for(self, goal: Goal) -> ReferenceSearch:
        search = self._reference.get(goal)
        if search is None:
            search = self._reference[goal] = ReferenceSearch(goal)
        return search

    def _compile(self, goal: Goal) -> _Compiled:
        compiled = self._compiled.get(goal)
        if compiled is not None:
            return compiled
        root = self.root
        seats = root.seats
        # what the goal fixes depends on these alone: a search of many worlds of one deal (pimc)
        # sets it up once; only the generation of the transposition table is new each time
        key = (goal, seats, root.trump, root.card_points, root.suit_masks, root.ranks_per_suit, root.kind,
               root.tapp_points, root.must_trump, root.head, root.forced_leads)
        # the tapp counts in the search only in Ramsch (the last trick takes it); forced leads
        # depend on the trick's number, which the table's key does not hold
        shape = key[:7] + key[8:] if root.kind != Kind.RAMSCH else key
        hands = tuple(root.hands[s] for s in seats)
        generation = _next_generation() if root.forced_leads else _generation_for(shape, hands)
        known = _STATICS.get(key)
        if known is not None:
            static = known[:]
            static[K.C_GEN] = generation
            compiled = self._compiled[goal] = _Compiled(static)
            return compiled
        if sum(root.card_points) + root.tapp_points + len(root.card_points) > K.VALUE_MASK:
            raise ValueError("the kernel's table holds values below 4096 only")
        static = _zeros(K.W_HANDS)
        static[K.C_M] = len(seats)
        static[K.C_TRUMP] = root.trump
        static[K.C_MAX] = sum(1 << i for i, s in enumerate(seats) if goal.maximizers >> s & 1)
        static[K.C_COUNT] = sum(1 << i for i, s in enumerate(seats) if goal.counted >> s & 1)
        static[K.C_TRICKW] = 0 if goal.by_points else 1
        static[K.C_BONUS] = root.tapp_points if goal.by_points and root.kind == Kind.RAMSCH else 0
        static[K.C_MUST] = ("always", "untrumped", "never").index(root.must_trump)
        static[K.C_HEAD] = int(root.head)
        static[K.C_FORCED] = int(root.forced_leads and root.trump != 0)
        static[K.C_ACE] = root.trump.bit_length() - 1
        static[K.C_GEN] = generation
        static[K.C_TTMASK] = (1 << TT_BITS) - 1
        for c in range(len(root.card_points)):
            static[K.W_PTS + c] = root.card_points[c] if goal.by_points else 0
            static[K.W_SUIT + c] = root.suit_mask_of(c)
            static[K.W_RANK + c] = c % root.ranks_per_suit
        static[K.C_NSUITS] = len(root.suit_masks)
        for i, suit in enumerate(root.suit_masks):
            low = suit & -suit
            while low & suit and not static[K.W_PTS + low.bit_length() - 1]:
                static[K.W_LOWS + i] |= low
                low <<= 1
        # the holders of the low cards are a number in base m: at most this many digits in 62 bits
        static[K.C_ZDIGITS] = int(62 / math.log2(len(seats))) if len(seats) > 1 else 62
        if len(_STATICS) >= 256:
            _STATICS.clear()
        _STATICS[key] = static
        compiled = self._compiled[goal] = _Compiled(static[:])
        return compiled

    def _kernel_call(self, goal: Goal, pos: Position, need: int | None) -> int:
        """The future takings: exact (``need`` None) or one zero-window search at ``need``."""
        kernel = K
        entries: Any = _kernel_entries()  # numba dispatchers or the library's: untyped for mypy
        comp = self._compile(goal)
        mem = _KernelMemory.get()
        work = mem.work
        work[:kernel.W_HANDS] = comp.static
        work[kernel.W_HIST:kernel.W_HIST + 64] = _ZEROS64
        seats = pos.seats
        index = {s: i for i, s in enumerate(seats)}
        for i, s in enumerate(seats):
            work[kernel.W_HANDS + i] = pos.hands[s]
            hand = pos.hands[s]
            while hand:
                low = hand & -hand
                work[kernel.W_OWNER + low.bit_length() - 1] = i
                hand ^= low
        k = len(pos.trick)
        pts = comp.static[kernel.W_PTS:kernel.W_PTS + 64]
        if k:
            win_card, win_seat = pos.winner_so_far()
            lead_suit = pos.suit_mask_of(pos.trick[0])
            win_pl = index[win_seat]
        else:
            win_card, win_pl, lead_suit = -1, -1, 0
        tval = sum(int(pts[c]) for c in pos.trick)
        tmask = sum(1 << c for c in pos.trick)
        remaining = pos.remaining
        rempts = tval + sum(int(pts[c]) for c in range(remaining.bit_length()) if remaining >> c & 1)
        args: tuple[Any, ...] = (*mem.args, index[pos.turn], k, lead_suit, win_card, win_pl, tval, tmask,
                                 rempts, pos.tricks_left, pos.tricks_played)
        before = mem.nodes()
        if need is None:
            # first window: the card points the counted seats hold themselves (a rough guess that
            # beat half of all points still out by a few per cent of nodes on random deals)
            held = sum(int(pts[c]) for s in seats if goal.counted >> s & 1
                       for c in range(pos.hands[s].bit_length()) if pos.hands[s] >> c & 1)
            out = int(entries.exact(*args, max(held, 1) if goal.by_points else pos.tricks_left // 2))
        else:
            out = int(entries.probe(*args, need - 1, need))
        self.nodes += mem.nodes() - before
        return out


def equivalent_cards(pos: Position) -> dict[int, int]:
    """Per legal card of the seat on turn, the lowest legal card that is worth exactly as much
    in every line of play (itself if none): cards of one suit in his hand with no other card
    still out (in a hand or in the trick) between them and with the same card points are
    interchangeable. Not under forced leads, which name the trump Ace itself."""
    cards = pos.legal_cards()
    out = {c: c for c in cards}
    if pos.forced_leads or len(cards) < 2:
        return out
    legal = pos.legal_mask()
    others = pos.remaining & ~pos.hands[pos.turn]
    for c in pos.trick:
        others |= 1 << c
    for lower, upper in zip(cards, cards[1:], strict=False):
        suit = pos.suit_mask_of(lower)
        between = suit & ((1 << upper) - 1) & ~((2 << lower) - 1)
        if (not suit >> upper & 1 or between & others or between & ~legal & pos.hands[pos.turn]
                or pos.card_points[lower] != pos.card_points[upper]):
            continue
        out[upper] = out[lower]
    return out


def _maxn(pos: Position, memo: dict[tuple[int, int], tuple[tuple[int, ...], int]]) -> tuple[tuple[int, ...], int]:
    """Max-n by plain recursion, memoised at trick starts: (final tricks per seat in
    ``pos.seats`` order, the chosen card)."""
    if pos.is_over():
        return tuple(pos.tricks[s] for s in pos.seats), -1
    key = (pos.remaining, pos.leader)
    if not pos.trick and key in memo:
        future, card = memo[key]
        return tuple(pos.tricks[s] + f for s, f in zip(pos.seats, future, strict=True)), card
    me = pos.seats.index(pos.turn)
    best: tuple[int, ...] | None = None
    best_card = -1
    for card in pos.legal_cards():
        values, _ = _maxn(pos.play(card), memo)
        if best is None or values[me] > best[me]:
            best, best_card = values, card
    assert best is not None
    if not pos.trick:
        memo[key] = (tuple(v - pos.tricks[s] for s, v in zip(pos.seats, best, strict=True)), best_card)
    return best, best_card

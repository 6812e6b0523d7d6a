"""Where were points lost? Every card of a recorded deal judged with all cards open.

For each deal of a record: the open-hand value at the start of play, and for every card
played the value before it (the best the player could get with best play by all from there)
and after it (what the card he chose leaves), and the loss between them — in the contract's
own terms: the declarer's card points (Frage, Solo), won 1 / lost 0 (Bettel, Rufer, Durch), the
player's own card points (Ramsch: everyone for himself, the others against him) or his own
tricks (Tippen: paranoid, everyone else against him). A defender's loss is the points the
declarer gains by his card.

This is an open-hand ("double dummy") judgement: a card is a mistake here only if it costs
something when everybody can see every hand; a good player who could not know may still have
chosen it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..record import Record, replay
from ..table import Table
from .model import Kind, Position
from .position import position_from_state
from .solver import Solver


@dataclass
class PlayJudgement:
    seat: int
    action: str
    before: int  # the best value the player could still reach
    after: int  # what the chosen card leaves
    loss: int

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "action": self.action, "before": self.before, "after": self.after,
                "loss": self.loss}


@dataclass
class DealAnalysis:
    deal: int  # 0-based index in the record
    measure: str  # what the values count: declarer-points, won, own-points, own-tricks
    start_value: Any  # an int, or per seat (Ramsch, Tippen)
    plays: list[PlayJudgement] = field(default_factory=list)

    def mistakes(self) -> list[PlayJudgement]:
        """The plays that cost something, the largest first (ties in order of play)."""
        return sorted((p for p in self.plays if p.loss > 0), key=lambda p: -p.loss)

    def to_json(self) -> dict[str, Any]:
        return {"deal": self.deal + 1, "measure": self.measure, "start_value": self.start_value,
                "plays": [p.to_json() for p in self.plays],
                "mistakes": [p.to_json() for p in self.mistakes()]}


def _measure(pos: Position) -> str:
    if pos.kind == Kind.POINTS:
        return "declarer-points"
    if pos.kind in (Kind.ALL_TRICKS, Kind.NO_TRICK):
        return "won"
    if pos.kind == Kind.RAMSCH:
        return "own-points"
    return "own-tricks"


def _start_value(solver: Solver, pos: Position) -> Any:
    if pos.kind == Kind.POINTS:
        return solver.declarer_points(pos)
    if pos.kind == Kind.ALL_TRICKS:
        return int(solver.all_tricks(pos))
    if pos.kind == Kind.NO_TRICK:
        return int(solver.no_trick(pos))
    if pos.kind == Kind.RAMSCH:
        return {str(s): v for s, v in solver.ramsch(pos).items()}
    return {str(s): v for s, v in solver.guaranteed_tricks(pos).items()}


def _mover_wants_more(pos: Position) -> bool:
    """Whether the seat on turn wants the contract's value high (the declarer's side, a
    Tippen player for his tricks) or low (a defender; a Ramsch player for his own points)."""
    if pos.kind == Kind.RAMSCH:
        return False
    if pos.kind in (Kind.POINTS, Kind.ALL_TRICKS, Kind.NO_TRICK):
        return bool((pos.side >> pos.turn) & 1)
    return True


def analyze_record(source: str | Path | Record, deal: int | None = None, backend: str = "numba",
                   progress: Callable[[int], None] | None = None) -> list[DealAnalysis]:
    """Analyse every deal of a record (or only deal number ``deal``, 1-based) that reached the
    play phase. The record is replayed and verified on the way (``record.replay``)."""
    out: list[DealAnalysis] = []
    current: dict[int, tuple[Solver, DealAnalysis]] = {}

    def on_action(table: Table, text: str) -> None:
        index = len(table.deals) - 1
        if deal is not None and index != deal - 1:
            return
        state = table.current_state()
        if state.view(None)["phase"] != "play":
            return
        pos = position_from_state(state)
        entry = current.get(index)
        if entry is None:
            solver = Solver(pos, backend=backend)
            analysis = DealAnalysis(index, _measure(pos), _start_value(solver, pos))
            current[index] = entry = (solver, analysis)
            out.append(analysis)
        solver, analysis = entry
        values = solver.contract_move_values(pos)
        card = state.string_to_action(text)
        best = max(values.values()) if _mover_wants_more(pos) else min(values.values())
        after = values[card]
        analysis.plays.append(PlayJudgement(pos.turn, text, best, after, abs(best - after)))
        if progress is not None:
            progress(len(analysis.plays))

    replay(source, on_action=on_action)
    return out

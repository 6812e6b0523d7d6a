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

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..record import Record, load, replay
from ..sim.batch import Backend, BatchOutcome, Chunk, plan_chunks, run_batch
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
    play phase, in this process. The record is replayed and verified on the way
    (``record.replay``); ``progress`` is called with the plays judged so far in the deal."""
    return _analyze_deals(load(source), _wanted(deal), backend, progress)


def analyze_record_batch(source: str | Path | Record, deal: int | None, batch: Backend,
                         progress: Callable[[int], None] | None = None,
                         backend: str = "numba") -> BatchOutcome[list[DealAnalysis]]:
    """The same analysis cut into chunks of deals and run on ``batch`` (processes or Ray).

    Every worker replays the record (cheap, and it verifies the deals before the ones it
    judges) and solves only the deals of its chunk; solving is what costs. The analyses come
    back in deal order and are the same as ``analyze_record``'s for any number of workers.
    ``progress`` is called with the deals finished so far.
    """
    data = load(source)
    count = len(data["deals"])
    wanted = _wanted(deal)
    if wanted is not None:
        chunks = [c for c in plan_chunks(count, 1, 0) if c.start in wanted]
    else:
        chunk_deals = max(1, -(-count // (4 * batch.workers)))  # a few chunks per worker
        chunks = plan_chunks(count, chunk_deals, 0)
    task = functools.partial(_analyze_chunk, data, backend)
    return run_batch(task, chunks, batch, progress)


def _wanted(deal: int | None) -> range | None:
    return None if deal is None else range(deal - 1, deal)


def _analyze_chunk(data: Record, backend: str, chunk: Chunk) -> list[DealAnalysis]:
    return _analyze_deals(data, range(chunk.start, chunk.start + chunk.size), backend, None)


def _analyze_deals(data: Record, wanted: range | None, backend: str,
                   progress: Callable[[int], None] | None) -> list[DealAnalysis]:
    out: list[DealAnalysis] = []
    current: dict[int, tuple[Solver, DealAnalysis]] = {}
    last = None if wanted is None else wanted.stop

    class _Done(Exception):
        """Raised to stop replaying once the wanted deals are judged."""

    def on_deal(table: Table) -> None:
        if last is not None and len(table.deals) >= last:
            raise _Done

    def on_action(table: Table, text: str) -> None:
        index = len(table.deals) - 1
        if wanted is not None and index not in wanted:
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

    try:
        replay(data, on_deal=on_deal, on_action=on_action)
    except _Done:
        pass
    return out

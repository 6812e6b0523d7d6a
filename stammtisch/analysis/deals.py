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

Beyond the figures of the contract, every mistake carries what it cost in the table's unit
(counters, game points or cents): the rest of the deal is played out with best play after the
best card and after the card played, and the mover's payments compared. The decisions before
the play are judged the same way (``decisions.py``): Tippen's tap or pass and exchange, Tapp's
discard, and the Tapp *par*: every contract the declarer could have named, its open-hand
result and payment. ``analysis_lines`` says it all as catalogue messages.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..record import Record, load, replay
from ..rules import family_of
from ..sim.batch import Backend, BatchOutcome, Chunk, plan_chunks, run_batch
from ..solve.model import Kind, Position
from ..solve.position import position_from_state
from ..solve.solver import Solver, equivalent_cards
from ..table import Table
from .decisions import Recorded, book_choice, judge_decision, master_choice, par, phase, playout_money, solver_for
from .findings import DealAnalysis, DecisionJudgement, PlayJudgement


def _measure(pos: Position) -> str:
    if pos.kind == Kind.POINTS:
        return "declarer-points"
    if pos.kind in (Kind.ALL_TRICKS, Kind.NO_TRICK):
        return "won"
    if pos.kind == Kind.RAMSCH:
        return "own-points"
    return "own-tricks"


def _start_value(solver: Solver, pos: Position) -> Any:
    """The open-hand value of ``pos``: one figure for the declarer's side, or per seat
    (``_per_seat``)."""
    if pos.kind == Kind.POINTS:
        return solver.declarer_points(pos)
    if pos.kind == Kind.ALL_TRICKS:
        return int(solver.all_tricks(pos))
    if pos.kind == Kind.NO_TRICK:
        return int(solver.no_trick(pos))
    if pos.kind == Kind.RAMSCH:
        return {str(s): v for s, v in solver.ramsch(pos).items()}
    return {str(s): v for s, v in solver.guaranteed_tricks(pos).items()}


def _per_seat(pos: Position) -> bool:
    """Whether everyone plays for himself (Ramsch, Tippen): then a value is per seat."""
    return pos.kind not in (Kind.POINTS, Kind.ALL_TRICKS, Kind.NO_TRICK)


def _side(pos: Position) -> str:
    if not _per_seat(pos):
        return "declarer" if pos.side >> pos.turn & 1 else "defender"
    return "own"


def _mover_wants_more(pos: Position) -> bool:
    """Whether the seat on turn wants the contract's value high (the declarer's side, a
    Tippen player for his tricks) or low (a defender; a Ramsch player for his own points)."""
    if pos.kind == Kind.RAMSCH:
        return False
    if not _per_seat(pos):
        return bool((pos.side >> pos.turn) & 1)
    return True


#: what ``analyze_record`` judges: everything, only the cards played (the quick part, with the
#: open-hand value at the start), or only the decisions before the play and the par
PARTS = ("all", "play", "before")


def analyze_record(source: str | Path | Record, deal: int | None = None, backend: str = "numba",
                   progress: Callable[[int], None] | None = None,
                   all_discards: bool = False, part: str = "all") -> list[DealAnalysis]:
    """Analyse every deal of a record (or only deal number ``deal``, 1-based) that reached the
    play phase, in this process. The record is replayed and verified on the way
    (``record.replay``); ``progress`` is called with the plays judged so far in the deal.
    ``all_discards``: solve every Frage discard, not the bounded set (``decisions.DISCARD_LIMIT``).
    ``part`` (``PARTS``): "play" leaves the decisions and the par out, "before" the cards
    (``with_decisions`` joins the two)."""
    if part not in PARTS:
        raise ValueError(f"unknown part {part!r}; one of {', '.join(PARTS)}")
    return _analyze_deals(load(source), _wanted(deal), backend, progress, all_discards, part)


def with_decisions(play: DealAnalysis, before: DealAnalysis) -> DealAnalysis:
    """A deal's whole analysis from its two parts (``analyze_record``'s "play" and "before")."""
    return replace(play, decisions=before.decisions, par=before.par, decisions_pending=False)


#: records of at most this many deals are analysed in this process, without worker processes
INLINE_DEALS = 3


def analyze_record_batch(source: str | Path | Record, deal: int | None, batch: Backend,
                         progress: Callable[[int], None] | None = None,
                         backend: str = "numba", all_discards: bool = False) -> BatchOutcome[list[DealAnalysis]]:
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
    if batch.kind == "processes" and (len(chunks) <= 1 or count <= INLINE_DEALS
                                      or family_of(data["ruleset"]) == "tippen"):
        # starting the workers would cost more than they save: one chunk runs on one core
        # anyway, a Tippen deal takes milliseconds, and a worker's start (its imports) costs
        # about what a Tapp deal's analysis does
        batch = Backend("inline", 1, retries=batch.retries)
    task = functools.partial(_analyze_chunk, data, backend, all_discards)
    return run_batch(task, chunks, batch, progress)


def _wanted(deal: int | None) -> range | None:
    return None if deal is None else range(deal - 1, deal)


def _analyze_chunk(data: Record, backend: str, all_discards: bool, chunk: Chunk) -> list[DealAnalysis]:
    return _analyze_deals(data, range(chunk.start, chunk.start + chunk.size), backend, None, all_discards)


def _unit(table: Table) -> str:
    from ..sim.simulate import unit_of

    return unit_of(table.rules)


def _judge_decisions(game: str, before: list[tuple[Any, Recorded]], all_discards: bool,
                     declarer: int | None) -> tuple[list[DecisionJudgement], dict[str, Any] | None]:
    """The decisions before the play (``before``: the state each was made in and the action);
    a Tippen tap or pass also as the book has it (``book_choice``), the Tapp declarer's first
    bid as the Master would have made it (``master_choice``), each from the seat's view."""
    out: list[DecisionJudgement] = []
    later = [r for _, r in before]
    for i, (state, (_seat, text)) in enumerate(before):
        kind = phase(state)
        if game == "tapp" and kind != "discard":
            continue  # the contract choice is judged by the par
        judged = judge_decision(state, text, later[i + 1:], all_discards, kind)
        if kind == "declare":
            judged.book = book_choice(state)
        out.append(judged)
    found = None
    if game == "tapp" and declarer is not None:
        first = next((i for i, (_, (seat, _t)) in enumerate(before) if seat == declarer), None)
        if first is not None:
            found = par(before[first][0], later[first + 1:], all_discards)
            master = master_choice(before[first][0])
            if master is not None:
                found.update(master=master, bid=before[first][1][1])
    return out, found


def _analyze_deals(data: Record, wanted: range | None, backend: str,
                   progress: Callable[[int], None] | None, all_discards: bool = False,
                   part: str = "all") -> list[DealAnalysis]:
    out: list[DealAnalysis] = []
    current: dict[int, tuple[Solver, DealAnalysis]] = {}
    before: dict[int, list[tuple[Any, Recorded]]] = {}  # per deal: the decisions before the play
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
        state: Any = table.current_state()
        if state.view(None)["phase"] != "play":
            before.setdefault(index, []).append((state.clone(), (state.current_player(), text)))
            return
        pos = position_from_state(state)
        entry = current.get(index)
        if entry is None:
            solver = solver_for(pos, backend)
            declarer = pos.declarer if pos.declarer >= 0 else None
            analysis = DealAnalysis(index, _measure(pos), _start_value(solver, pos), game=pos.game,
                                    unit=_unit(table), declarer=declarer,
                                    contract=getattr(state, "contract_string", lambda: None)(),
                                    decisions_pending=part == "play")
            decided = before.pop(index, [])
            if part != "play":
                analysis.decisions, analysis.par = _judge_decisions(pos.game, decided, all_discards, declarer)
            current[index] = entry = (solver, analysis)
            out.append(analysis)
        if part == "before":
            return
        solver, analysis = entry
        card = state.string_to_action(text)
        best, after, better = _judge_card(solver, pos, card)
        judgement = PlayJudgement(pos.turn, text, best, after, abs(best - after), pos.tricks_played + 1,
                                  side=_side(pos),
                                  values=_start_value(solver, pos.play(card)) if _per_seat(pos) else None)
        if judgement.loss:
            judgement.better = [state.action_to_string(c) for c in better]
            judgement.money_best = _money_after(state, better[0], pos.turn, solver)
            judgement.money_played = _money_after(state, card, pos.turn, solver)
        analysis.plays.append(judgement)
        if progress is not None:
            progress(len(analysis.plays))

    try:
        replay(data, on_deal=on_deal, on_action=on_action)
    except _Done:
        pass
    return out


def _judge_card(solver: Solver, pos: Position, card: int) -> tuple[int, int, list[int]]:
    """The card ``card`` of the seat on turn in the contract's terms
    (``Solver.contract_move_values``): (the best value of any legal card, the card's value, and
    when it is less good the legal cards that keep the best). Zero-window searches against the
    position's own value tell a card that keeps it; a card is solved exactly only when it
    does not."""
    goal = solver.contract_goal(pos)
    wants_more = _mover_wants_more(pos)
    if pos.kind in (Kind.ALL_TRICKS, Kind.NO_TRICK):
        total = pos.tricks_played + pos.tricks_left
        best = int(solver.at_least(goal, total, pos))

        def value_of(c: int) -> int:
            return int(solver.at_least(goal, total, pos.play(c)))

        def keeps(c: int) -> bool:
            return value_of(c) == best
    else:
        bonus = pos.tapp_points if pos.kind == Kind.POINTS else 0
        best = solver.value(goal, pos) + bonus

        def value_of(c: int) -> int:
            return solver.value(goal, pos.play(c)) + bonus

        def keeps(c: int) -> bool:
            # the mover's cards are worth at most the position's value if he wants more, else at least
            child = pos.play(c)
            if wants_more:
                return solver.at_least(goal, best - bonus, child)
            return not solver.at_least(goal, best - bonus + 1, child)
    if keeps(card):
        return best, best, []
    same = equivalent_cards(pos)
    kept: dict[int, bool] = {}
    for c in pos.legal_cards():
        if same[c] not in kept:
            kept[same[c]] = keeps(c)
    return best, value_of(card), [c for c in pos.legal_cards() if kept[same[c]]]


def _money_after(state: Any, card: int, seat: int, solver: Solver) -> int:
    """What the deal pays ``seat`` when ``card`` is played now and best play follows."""
    branch = state.clone()
    branch.apply(card)
    return playout_money(branch, seat, solver)
